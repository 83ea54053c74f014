/* common_names.c - names and parsers of the collective vocabulary shared by tune/ and exec/ (the
 * algorithms' names come from the registry, common_algos.c). */
#include "tt_common.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *const coll_names[TT_COLL_COUNT] = {"broadcast", "reduce", "allgather",
                                                      "reducescatter", "allreduce"};
static const char *const coll_labels[TT_COLL_COUNT] = {"Broadcast", "Reduce", "AllGather",
                                                       "ReduceScatter", "AllReduce"};
static const char *const proto_names[TT_PROTO_COUNT] = {"ll", "ll128", "simple"};

const char *tt_coll_name(tt_coll c) { return (unsigned)c < TT_COLL_COUNT ? coll_names[c] : "?"; }
const char *tt_coll_label(tt_coll c) { return (unsigned)c < TT_COLL_COUNT ? coll_labels[c] : "?"; }

const char *tt_algo_name(tt_algo a)
{
    return a == TT_ALGO_DEFAULT ? "default" : (unsigned)a < TT_ALGO_COUNT ? tt_algo_info_of(a)->name : "?";
}

const char *tt_algo_label(tt_algo a)
{
    return a == TT_ALGO_DEFAULT ? "default" : (unsigned)a < TT_ALGO_COUNT ? tt_algo_info_of(a)->label : "?";
}

const char *tt_proto_name(tt_proto p)
{
    return p == TT_PROTO_DEFAULT ? "default" : (unsigned)p < TT_PROTO_COUNT ? proto_names[p] : "?";
}

/* lower-case, drop '_', '-' and ' ' */
static void squash(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; s && *s && n + 1 < cap; s++) {
        if (*s == '_' || *s == '-' || *s == ' ')
            continue;
        out[n++] = (char)tolower((unsigned char)*s);
    }
    out[n] = 0;
}

/* Match `s` against the squashed forms of names[0..n) and labels[0..n). */
static int match(const char *s, const char *const *names, const char *const *labels, int n)
{
    char b[64], c[64];
    squash(s, b, sizeof b);
    if (!b[0])
        return -2;
    if (!strcmp(b, "default"))
        return -1;
    for (int i = 0; i < n; i++) {
        squash(names[i], c, sizeof c);
        if (!strcmp(b, c))
            return i;
        if (labels) {
            squash(labels[i], c, sizeof c);
            if (!strcmp(b, c))
                return i;
        }
    }
    return -2;
}

tt_status tt_coll_parse(const char *s, tt_coll *out)
{
    int v = match(s, coll_names, coll_labels, TT_COLL_COUNT);
    if (v < 0)
        return tt_error_set(TT_ERR_INVALID,
                            "unknown collective '%s' (valid: allreduce, allgather, reducescatter, "
                            "broadcast, reduce; also all_reduce, AllReduce, ...)",
                            s ? s : "");
    *out = (tt_coll)v;
    return TT_OK;
}

tt_status tt_algo_parse(const char *s, tt_algo *out)
{
    const char *names[TT_ALGO_COUNT], *labels[TT_ALGO_COUNT];
    for (int i = 0; i < TT_ALGO_COUNT; i++) {
        names[i] = tt_algo_name((tt_algo)i);
        labels[i] = tt_algo_label((tt_algo)i);
    }
    int v = match(s, names, labels, TT_ALGO_COUNT);
    if (v == -2) {
        /* the valid names from the registry: "rhd (halving-doubling)" where the label differs */
        char valid[512];
        size_t k = 0;
        valid[0] = '\0';
        for (int i = 0; i < TT_ALGO_COUNT && k < sizeof valid; i++)
            k += (size_t)snprintf(valid + k, sizeof valid - k, "%s%s%s%s, ", names[i],
                                  strcmp(names[i], labels[i]) ? " (" : "", strcmp(names[i], labels[i]) ? labels[i] : "",
                                  strcmp(names[i], labels[i]) ? ")" : "");
        return tt_error_set(TT_ERR_INVALID, "unknown algorithm '%s' (valid: %sdefault)", s ? s : "", valid);
    }
    *out = (tt_algo)v;
    return TT_OK;
}

tt_status tt_proto_parse(const char *s, tt_proto *out)
{
    int v = match(s, proto_names, NULL, TT_PROTO_COUNT);
    if (v == -2)
        return tt_error_set(TT_ERR_INVALID, "unknown protocol '%s' (valid: ll, ll128, simple, default)",
                            s ? s : "");
    *out = (tt_proto)v;
    return TT_OK;
}

double tt_busbw_factor(tt_coll coll, int n)
{
    if (n <= 1) return coll == TT_COLL_BROADCAST || coll == TT_COLL_REDUCE ? 1.0 : 0.0;
    switch (coll) {
    case TT_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case TT_COLL_ALLGATHER:
    case TT_COLL_REDUCESCATTER: return (double)(n - 1) / n;
    default: return 1.0;
    }
}
