/*
 * tune_model_exec_rd.c - the executor-shaped model's rows for the host executor's recursive
 * doubling AllReduce (exec/exec_algo_rd.c) and the host executor's default AllReduce choice
 * (exec/exec_coll.c), kept apart from tune_model_exec.c (hooked in there by one line each).
 */
#include <math.h>
#include <stdio.h>

#include "tune_internal.h"

#define HOST_CHUNK (512.0 * 1024) /* EXEC_DEFAULT_CHUNK */
#define SMALL_MAX (64.0 * 1024)   /* EXEC_TREE_MAX_BYTES */

int tune_exec_host_default_algo(int nranks, double bytes)
{
    if (bytes > SMALL_MAX) return TT_ALGO_RING;
    if (nranks > 0 && !(nranks & (nranks - 1))) return TT_ALGO_RD;
    return nranks > 2 ? TT_ALGO_TREE : TT_ALGO_RING;
}

/* log2(n) steps, each swapping the whole vector in chunks with one partner: one synchronised
 * exchange per chunk and step; per byte and step a send copies into the shared ring (read +
 * write), a receive copies out (2) and the reduce reads 2 and writes 1: 7 accesses on every rank. */
int tune_exec_terms_rd(int n, double S, double f[TT_EXEC_NPARAM], char *why, size_t wl)
{
    if (n < 1 || (n & (n - 1))) {
        snprintf(why, wl, "recursive doubling needs a power-of-two rank count");
        return -1;
    }
    int levels = 0;
    while ((1 << levels) < n) levels++;
    double k = ceil(S / HOST_CHUNK - 1e-9);
    if (k < 1) k = 1;
    f[1] = levels * k;
    f[3] = 7.0 * levels * S;
    f[4] = n * f[3];
    return 0;
}
