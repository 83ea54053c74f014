/* exec_verify.c - verifiable inputs and expected results (see tt_exec.h). */
#include "tt_exec.h"

#include <stdlib.h>
#include <string.h>

static long value(uint64_t seed, int rank, size_t i, tt_dtype t, tt_redop op)
{
    uint64_t h = seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)(unsigned)rank << 40) ^ (uint64_t)i;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    if (op == TT_PROD)
        return 1 + (long)(h & 1);
    int is_unsigned = t == TT_UINT8 || t == TT_UINT32 || t == TT_UINT64;
    return is_unsigned ? (long)(h % 17) : (long)(h % 17) - 8;
}

static void put(unsigned char *p, tt_dtype t, long v)
{
    switch (t) {
    case TT_INT8: case TT_UINT8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case TT_INT32: case TT_UINT32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case TT_INT64: case TT_UINT64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
    case TT_HALF: { uint16_t x = tt_float_to_half((float)v); memcpy(p, &x, 2); break; }
    case TT_BFLOAT16: { uint16_t x = tt_float_to_bf16((float)v); memcpy(p, &x, 2); break; }
    case TT_FLOAT: { float x = (float)v; memcpy(p, &x, 4); break; }
    case TT_DOUBLE: { double x = (double)v; memcpy(p, &x, 8); break; }
    default: break;
    }
}

void tt_verify_fill(void *buf, size_t count, tt_dtype t, tt_redop op, int rank, uint64_t seed,
                    size_t index0)
{
    size_t es = tt_dtype_size(t);
    unsigned char *p = buf;
    for (size_t i = 0; i < count; i++)
        put(p + i * es, t, value(seed, rank, index0 + i, t, op));
}

tt_status tt_verify_expected(void *out, size_t count, tt_dtype t, tt_redop op, int nranks,
                             uint64_t seed, size_t index0)
{
    size_t es = tt_dtype_size(t);
    if (!es || nranks < 1)
        return tt_error_set(TT_ERR_INVALID, "verify: bad type or rank count");
    tt_verify_fill(out, count, t, op, 0, seed, index0);
    if (nranks == 1 || count == 0)
        return TT_OK;
    /* in blocks, so that the temporary stays small */
    size_t blk = 65536;
    unsigned char *tmp = malloc(blk * es);
    if (!tmp)
        return tt_error_set(TT_ERR_NOMEM, "verify");
    for (size_t at = 0; at < count; at += blk) {
        size_t n = count - at < blk ? count - at : blk;
        for (int r = 1; r < nranks; r++) {
            tt_verify_fill(tmp, n, t, op, r, seed, index0 + at);
            tt_reduce((unsigned char *)out + at * es, tmp, n, t, op);
        }
    }
    free(tmp);
    if (op == TT_AVG)
        return tt_reduce_finish_avg(out, count, t, nranks);
    return TT_OK;
}

size_t tt_verify_count_wrong(const void *got, const void *want, size_t count, tt_dtype t)
{
    size_t es = tt_dtype_size(t), wrong = 0;
    const unsigned char *a = got, *b = want;
    if (!memcmp(a, b, count * es))
        return 0;
    for (size_t i = 0; i < count; i++)
        wrong += memcmp(a + i * es, b + i * es, es) != 0;
    return wrong;
}
