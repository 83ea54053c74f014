/*
 * tune_measure_row.c - the rows of a measurement set and what every reader of tune_measure*.c shares:
 * storage, the faster placement, algorithm and collective names as the tools print them, element sizes.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_measure_internal.h"

void tt_measure_set_free(tt_measure_set *set)
{
    if (!set) return;
    free(set->m);
    memset(set, 0, sizeof(*set));
}

tt_status tm_push(tt_measure_set *set, const tt_measurement *m)
{
    if (set->n == set->cap) {
        int nc = set->cap ? set->cap * 2 : 64;
        tt_measurement *p = realloc(set->m, (size_t)nc * sizeof(*p));
        if (!p) return tt_error_set(TT_ERR_NOMEM, "out of memory reading measurements");
        set->m = p;
        set->cap = nc;
    }
    set->m[set->n++] = *m;
    return TT_OK;
}

void tm_finish_times(tt_measurement *m)
{
    double a = m->time_oop_us, b = m->time_ip_us;
    m->time_us = a > 0 && (b <= 0 || a <= b) ? a : b;
}

const char *tt_measure_cand_name(const tt_measurement *m, char *b, size_t n)
{
    snprintf(b, n, "%s/%s", m->algo >= 0 ? tt_algo_name((tt_algo)m->algo) : m->exec_kind > 0 ? "default" : "nccl",
             m->proto >= 0 ? tt_proto_name((tt_proto)m->proto) : "any");
    return b;
}

tt_status tt_measure_algo_parse(const char *s, tt_algo *out)
{
    if (s && !strcasecmp(s, "halving-doubling")) { *out = TT_ALGO_RHD; return TT_OK; }
    if (s && !strcasecmp(s, "hierarchical")) { *out = TT_ALGO_HIER; return TT_OK; }
    if (s && !strcasecmp(s, "recursive-doubling")) { *out = TT_ALGO_RD; return TT_OK; }
    return tt_algo_parse(s, out);
}

/* "all_reduce_perf", "/path/build/all_reduce_perf_mpi", "all_reduce" -> collective */
tt_status tm_coll_from_prog(const char *prog, tt_coll *out)
{
    const char *b = strrchr(prog, '/');
    b = b ? b + 1 : prog;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", b);
    char *p = strstr(buf, "_perf");
    if (p) *p = 0;
    for (char *q = buf; *q; q++)
        if (isspace((unsigned char)*q)) { *q = 0; break; }
    return tt_coll_parse(buf, out);
}

/* nccl-tests -d names (and aliases) -> bytes per element; 0 = unknown */
int tm_type_size(const char *t)
{
    static const struct { const char *n; int s; } tab[] = {
        {"int8", 1}, {"uint8", 1}, {"char", 1}, {"int32", 4}, {"uint32", 4}, {"int", 4}, {"int64", 8},
        {"uint64", 8}, {"half", 2}, {"float16", 2}, {"fp16", 2}, {"bfloat16", 2}, {"bf16", 2},
        {"float", 4}, {"float32", 4}, {"double", 8}, {"float64", 8}, {"f8e4m3", 1}, {"f8e5m2", 1}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (!strcasecmp(t, tab[i].n)) return tab[i].s;
    return 0;
}
