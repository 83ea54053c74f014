/*
 * common_stats.c - small statistics shared by the modules (medians of measurements and errors).
 */
#include <stdlib.h>

#include "tt_common.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double tt_median(double *v, size_t n)
{
    if (!v || n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
