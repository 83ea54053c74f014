/* exec_names.c - names of types, ops, collectives, algorithms, protocols
 * and their parsers (case-insensitive, NCCL and nccl-tests spellings). */
#include "tt_exec.h"

#include <string.h>
#include <strings.h>

static const char *const dtype_names[TT_NDTYPES] = {
    "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "bfloat16", "float", "double"};
static const char *const redop_names[TT_NREDOPS] = {"sum", "prod", "min", "max", "avg"};
static const char *const coll_names[TT_NCOLLS] = {"AllReduce", "ReduceScatter", "AllGather",
                                                   "Broadcast", "Reduce"};
static const char *const algo_names[TT_NALGOS] = {"ring", "tree", "halving-doubling", "hierarchical"};
static const char *const proto_names[TT_NPROTOS] = {"simple", "ll", "ll128"};

const char *tt_dtype_name(tt_dtype t) { return (unsigned)t < TT_NDTYPES ? dtype_names[t] : "?"; }
const char *tt_redop_name(tt_redop op) { return (unsigned)op < TT_NREDOPS ? redop_names[op] : "?"; }
const char *tt_coll_name(tt_coll c) { return (unsigned)c < TT_NCOLLS ? coll_names[c] : "?"; }
const char *tt_algo_name(tt_algo a)
{
    return a == TT_ALGO_DEFAULT ? "default" : (unsigned)a < TT_NALGOS ? algo_names[a] : "?";
}
const char *tt_proto_name(tt_proto p)
{
    return p == TT_PROTO_DEFAULT ? "default" : (unsigned)p < TT_NPROTOS ? proto_names[p] : "?";
}

struct alias { const char *name; int value; };

static tt_status lookup(const char *what, const char *s, const struct alias *a, int *out)
{
    char list[256] = "";
    if (s) {
        for (int i = 0; a[i].name; i++)
            if (!strcasecmp(s, a[i].name)) {
                *out = a[i].value;
                return TT_OK;
            }
    }
    for (int i = 0; a[i].name; i++) {
        if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, a[i].name, sizeof list - strlen(list) - 1);
    }
    return tt_error_set(TT_ERR_INVALID, "unknown %s '%s' (valid: %s)", what, s ? s : "(null)", list);
}

tt_status tt_dtype_parse(const char *s, tt_dtype *out)
{
    static const struct alias a[] = {
        {"int8", TT_INT8}, {"uint8", TT_UINT8}, {"int32", TT_INT32}, {"uint32", TT_UINT32},
        {"int64", TT_INT64}, {"uint64", TT_UINT64}, {"half", TT_HALF}, {"float16", TT_HALF},
        {"fp16", TT_HALF}, {"bfloat16", TT_BFLOAT16}, {"bf16", TT_BFLOAT16}, {"float", TT_FLOAT},
        {"float32", TT_FLOAT}, {"fp32", TT_FLOAT}, {"double", TT_DOUBLE}, {"float64", TT_DOUBLE},
        {"int", TT_INT32}, {NULL, 0}};
    int v;
    tt_status st = lookup("data type", s, a, &v);
    if (st == TT_OK) *out = (tt_dtype)v;
    return st;
}

tt_status tt_redop_parse(const char *s, tt_redop *out)
{
    static const struct alias a[] = {{"sum", TT_SUM}, {"prod", TT_PROD}, {"min", TT_MIN},
                                     {"max", TT_MAX}, {"avg", TT_AVG}, {NULL, 0}};
    int v;
    tt_status st = lookup("reduction op", s, a, &v);
    if (st == TT_OK) *out = (tt_redop)v;
    return st;
}

tt_status tt_coll_parse(const char *s, tt_coll *out)
{
    static const struct alias a[] = {
        {"all_reduce", TT_ALLREDUCE}, {"allreduce", TT_ALLREDUCE},
        {"reduce_scatter", TT_REDUCESCATTER}, {"reducescatter", TT_REDUCESCATTER},
        {"all_gather", TT_ALLGATHER}, {"allgather", TT_ALLGATHER},
        {"broadcast", TT_BROADCAST}, {"reduce", TT_REDUCE}, {NULL, 0}};
    int v;
    tt_status st = lookup("collective", s, a, &v);
    if (st == TT_OK) *out = (tt_coll)v;
    return st;
}

tt_status tt_algo_parse(const char *s, tt_algo *out)
{
    static const struct alias a[] = {
        {"ring", TT_ALGO_RING}, {"tree", TT_ALGO_TREE}, {"halving-doubling", TT_ALGO_RHD},
        {"rhd", TT_ALGO_RHD}, {"hierarchical", TT_ALGO_HIER}, {"default", TT_ALGO_DEFAULT},
        {NULL, 0}};
    int v;
    tt_status st = lookup("algorithm", s, a, &v);
    if (st == TT_OK) *out = (tt_algo)v;
    return st;
}

tt_status tt_proto_parse(const char *s, tt_proto *out)
{
    static const struct alias a[] = {{"simple", TT_PROTO_SIMPLE}, {"ll", TT_PROTO_LL},
                                     {"ll128", TT_PROTO_LL128}, {"default", TT_PROTO_DEFAULT},
                                     {NULL, 0}};
    int v;
    tt_status st = lookup("protocol", s, a, &v);
    if (st == TT_OK) *out = (tt_proto)v;
    return st;
}
