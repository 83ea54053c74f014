/* exec_names.c - names of data types and reduction ops and their parsers
 * (case-insensitive, NCCL and nccl-tests spellings); collective names are shared
 * (common/common_names.c). */
#include "tt_exec.h"

#include <string.h>
#include <strings.h>

static const char *const dtype_names[TT_NDTYPES] = {
    "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "bfloat16", "float", "double"};
static const char *const redop_names[TT_NREDOPS] = {"sum", "prod", "min", "max", "avg"};

const char *tt_dtype_name(tt_dtype t) { return (unsigned)t < TT_NDTYPES ? dtype_names[t] : "?"; }
const char *tt_redop_name(tt_redop op) { return (unsigned)op < TT_NREDOPS ? redop_names[op] : "?"; }

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
