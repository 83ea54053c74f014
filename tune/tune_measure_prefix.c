/*
 * tune_measure_prefix.c - launcher prefixes in front of every line of a text table.
 *
 *   Open MPI --tag-output          "[1,0]<stdout>:text" (<stderr>, <stddiag> alike); Open MPI 5
 *                                  (PRRTE) puts one space after the colon: "[1,0]<stdout>: text"
 *   srun -l / --label, mpirun -l   "0: text" (srun pads the label: " 0: text" with 10+ tasks)
 *   Intel MPI / MPICH -prepend-rank "[0] text"
 *   pdsh (and clush, ...)          "host: text"
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_measure_internal.h"

static void copy_n(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap) n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

const char *tm_prefix_strip(const char *s, tm_prefix *p)
{
    memset(p, 0, sizeof *p);
    p->kind = TM_PFX_NONE;
    p->num = -1;
    if (s[0] == '[') {
        /* "[job,rank]<stdout>:" or "[rank] " */
        const char *a = s + 1, *q = a;
        while (isdigit((unsigned char)*q)) q++;
        if (q > a && *q == ',') {
            const char *b = q + 1, *r = b;
            while (isdigit((unsigned char)*r)) r++;
            if (r > b && *r == ']') {
                const char *t = r + 1;
                if (*t == '<') {
                    const char *e = strchr(t, '>');
                    if (!e || e[1] != ':') return s;
                    t = e + 2;
                } else if (*t == ':') {
                    t++;
                } else {
                    return s;
                }
                if (*t == ' ') t++; /* Open MPI 5 / PRRTE */
                p->kind = TM_PFX_OMPI;
                copy_n(p->group, sizeof p->group, a, (size_t)(q - a));
                copy_n(p->member, sizeof p->member, b, (size_t)(r - b));
                p->num = strtol(p->member, NULL, 10);
                return t;
            }
            return s;
        }
        if (q > a && *q == ']' && (q[1] == ' ' || q[1] == '\t')) {
            p->kind = TM_PFX_BRACKET;
            copy_n(p->member, sizeof p->member, a, (size_t)(q - a));
            p->num = strtol(p->member, NULL, 10);
            return q + 2;
        }
        return s;
    }
    /* "N: " (label), "host: " */
    const char *a = s;
    while (*a == ' ') a++;
    const char *q = a;
    int digits = 1, letters = 0;
    while (isalnum((unsigned char)*q) || *q == '.' || *q == '-' || *q == '_') {
        if (!isdigit((unsigned char)*q)) digits = 0;
        if (isalpha((unsigned char)*q)) letters = 1;
        q++;
    }
    if (q == a || *q != ':' || !(q[1] == ' ' || q[1] == '\t' || q[1] == 0 || q[1] == '\r')) return s;
    if (digits) {
        p->kind = TM_PFX_LABEL;
        copy_n(p->member, sizeof p->member, a, (size_t)(q - a));
        p->num = strtol(p->member, NULL, 10);
    } else if (letters && a == s && *a != '-' && *a != '.') {
        p->kind = TM_PFX_HOST;
        copy_n(p->member, sizeof p->member, a, (size_t)(q - a));
    } else {
        return s;
    }
    return q[1] ? q + 2 : q + 1;
}
