/* support_exec.c - helpers for the executor tests: deterministic exact
 * inputs and host-side expected results. */
#include "support_exec.h"

#include <stdlib.h>
#include <string.h>

void sx_set(void *buf, tt_dtype t, size_t i, long v)
{
    unsigned char *p = (unsigned char *)buf + i * tt_dtype_size(t);
    switch (t) {
    case TT_INT8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
    case TT_UINT8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case TT_INT32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    case TT_UINT32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case TT_INT64: { int64_t x = v; memcpy(p, &x, 8); break; }
    case TT_UINT64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
    case TT_HALF: { uint16_t x = tt_float_to_half((float)v); memcpy(p, &x, 2); break; }
    case TT_BFLOAT16: { uint16_t x = tt_float_to_bf16((float)v); memcpy(p, &x, 2); break; }
    case TT_FLOAT: { float x = (float)v; memcpy(p, &x, 4); break; }
    case TT_DOUBLE: { double x = (double)v; memcpy(p, &x, 8); break; }
    default: break;
    }
}

long sx_value(int rank, size_t i, tt_dtype t, tt_redop op)
{
    unsigned h = (unsigned)(rank * 2654435761u) ^ (unsigned)(i * 40503u + 17u);
    h ^= h >> 13;
    if (op == TT_PROD)
        return 1 + (long)(h % 2); /* 1 or 2: products stay exact */
    int is_unsigned = t == TT_UINT8 || t == TT_UINT32 || t == TT_UINT64;
    return is_unsigned ? (long)(h % 17) : (long)(h % 17) - 8;
}

void sx_fill(void *buf, int rank, size_t n, tt_dtype t, tt_redop op, size_t index0)
{
    for (size_t i = 0; i < n; i++)
        sx_set(buf, t, i, sx_value(rank, index0 + i, t, op));
}

void sx_expected_reduce(void *out, int nranks, size_t n, tt_dtype t, tt_redop op, size_t index0)
{
    size_t es = tt_dtype_size(t);
    void *tmp = malloc(n * es + 1);
    sx_fill(out, 0, n, t, op, index0);
    for (int r = 1; r < nranks; r++) {
        sx_fill(tmp, r, n, t, op, index0);
        tt_reduce(out, tmp, n, t, op);
    }
    if (op == TT_AVG)
        tt_reduce_finish_avg(out, n, t, nranks);
    free(tmp);
}
