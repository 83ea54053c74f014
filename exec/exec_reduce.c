/* exec_reduce.c - element-wise reduction kernels for every type and op.
 *
 * Loads and stores go through memcpy so that buffers may sit at any address
 * (the compiler turns them into plain moves).  half and bfloat16 are
 * computed in float and rounded back to nearest-even after every step. */
#include "tt_exec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#define HOT __attribute__((optimize("O3")))
#else
#define HOT
#endif

static inline float h2f(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do { man <<= 1; e++; } while (!(man & 0x400u));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

float tt_half_to_float(uint16_t h) { return h2f(h); }

static inline uint16_t f2h(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf / nan */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
    if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow to inf */
        return (uint16_t)(sign | 0x7c00u);
    int exp = (int)(absx >> 23) - 127;
    if (exp < -14) { /* subnormal half (or zero) */
        if (exp < -25)
            return sign;
        uint32_t man = (absx & 0x7fffffu) | 0x800000u;
        int shift = -exp - 14 + 13; /* 14..24 */
        uint32_t q = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t q = ((uint32_t)(exp + 15) << 10) | ((absx >> 13) & 0x3ffu);
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1)))
        q++; /* may carry into the exponent, which is the right result */
    return (uint16_t)(sign | q);
}

uint16_t tt_float_to_half(float f) { return f2h(f); }

static inline float b2f(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

float tt_bf16_to_float(uint16_t b) { return b2f(b); }

static inline uint16_t f2b(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t lsb = (x >> 16) & 1u;
    uint32_t r = (x + 0x7fffu + lsb) >> 16;
    uint32_t qnan = (x >> 16) | 0x40u;
    return (uint16_t)(((x & 0x7fffffffu) > 0x7f800000u) ? qnan : r); /* NaN stays NaN */
}

uint16_t tt_float_to_bf16(float f) { return f2b(f); }

size_t tt_dtype_size(tt_dtype t)
{
    static const size_t sz[TT_NDTYPES] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
    return (unsigned)t < TT_NDTYPES ? sz[t] : 0;
}

#define OP_SUM(a, b) ((a) + (b))
#define OP_PROD(a, b) ((a) * (b))
#define OP_MIN(a, b) ((b) < (a) ? (b) : (a))
#define OP_MAX(a, b) ((b) > (a) ? (b) : (a))

/* Integers wrap like unsigned arithmetic (no signed-overflow UB).  Aligned
 * buffers take a plain typed loop the compiler vectorises (dst and src must
 * not partially overlap; dst == src is fine); unaligned ones go through
 * memcpy per element. */
#define INT_LOOP(T, U, EXPR)                                                   \
    if ((((uintptr_t)dst | (uintptr_t)src) % _Alignof(T)) == 0) {              \
        T *restrict d = dst;                                                   \
        const T *restrict s = src;                                             \
        for (size_t i = 0; i < count; i++) {                                   \
            T a = d[i], b = s[i];                                              \
            d[i] = EXPR;                                                       \
        }                                                                      \
    } else                                                                     \
    do {                                                                       \
        unsigned char *d = dst;                                                \
        const unsigned char *s = src;                                          \
        for (size_t i = 0; i < count; i++) {                                   \
            T a, b;                                                            \
            memcpy(&a, d + i * sizeof(T), sizeof(T));                          \
            memcpy(&b, s + i * sizeof(T), sizeof(T));                          \
            T r = EXPR;                                                        \
            memcpy(d + i * sizeof(T), &r, sizeof(T));                          \
        }                                                                      \
    } while (0)

#define INT_REDUCE(T, U)                                                       \
    switch (op) {                                                              \
    case TT_SUM: case TT_AVG: INT_LOOP(T, U, (T)((U)a + (U)b)); break;          \
    case TT_PROD: INT_LOOP(T, U, (T)((U)a * (U)b)); break;                      \
    case TT_MIN: INT_LOOP(T, U, OP_MIN(a, b)); break;                           \
    case TT_MAX: INT_LOOP(T, U, OP_MAX(a, b)); break;                           \
    default: break;                                                            \
    }

/* min/max on floats: NaN propagates (a NaN operand wins). */
#define FMIN(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : OP_MIN(a, b))
#define FMAX(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : OP_MAX(a, b))

#define FLT_REDUCE(T)                                                          \
    switch (op) {                                                              \
    case TT_SUM: case TT_AVG: INT_LOOP(T, T, a + b); break;                     \
    case TT_PROD: INT_LOOP(T, T, a * b); break;                                 \
    case TT_MIN: INT_LOOP(T, T, FMIN(a, b)); break;                             \
    case TT_MAX: INT_LOOP(T, T, FMAX(a, b)); break;                             \
    default: break;                                                            \
    }

#define H16_LOOP(TOF, FROMF, EXPR)                                             \
    do {                                                                       \
        unsigned char *d = dst;                                                \
        const unsigned char *s = src;                                          \
        for (size_t i = 0; i < count; i++) {                                   \
            uint16_t ha, hb;                                                   \
            memcpy(&ha, d + 2 * i, 2);                                         \
            memcpy(&hb, s + 2 * i, 2);                                         \
            float a = TOF(ha), b = TOF(hb);                                    \
            uint16_t r = FROMF(EXPR);                                          \
            memcpy(d + 2 * i, &r, 2);                                          \
        }                                                                      \
    } while (0)

#define H16_REDUCE(TOF, FROMF)                                                 \
    switch (op) {                                                              \
    case TT_SUM: case TT_AVG: H16_LOOP(TOF, FROMF, a + b); break;               \
    case TT_PROD: H16_LOOP(TOF, FROMF, a * b); break;                           \
    case TT_MIN: H16_LOOP(TOF, FROMF, FMIN(a, b)); break;                       \
    case TT_MAX: H16_LOOP(TOF, FROMF, FMAX(a, b)); break;                       \
    default: break;                                                            \
    }

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* half with the F16C conversion instructions, 8 lanes at a time.  The same
 * arithmetic as the scalar path (convert exactly, one float operation, round
 * to nearest-even; NaN rules of FMIN/FMAX), so results are bit-identical -
 * test_exec_reduce compares both on every kind of value. */
__attribute__((target("avx,f16c"))) static size_t half_reduce_f16c(unsigned char *d, const unsigned char *s,
                                                                     size_t count, tt_redop op)
{
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 a = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(d + 2 * i)));
        __m256 b = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(s + 2 * i)));
        __m256 r;
        if (op == TT_PROD) {
            r = _mm256_mul_ps(a, b);
        } else if (op == TT_MIN || op == TT_MAX) {
            __m256 pick_b = op == TT_MIN ? _mm256_cmp_ps(b, a, _CMP_LT_OQ) : _mm256_cmp_ps(b, a, _CMP_GT_OQ);
            r = _mm256_blendv_ps(a, b, pick_b);
            r = _mm256_blendv_ps(r, b, _mm256_cmp_ps(b, b, _CMP_UNORD_Q)); /* b NaN -> b */
            r = _mm256_blendv_ps(r, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q)); /* a NaN -> a */
        } else {
            r = _mm256_add_ps(a, b);
        }
        _mm_storeu_si128((__m128i *)(void *)(d + 2 * i),
                         _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    return i;
}
#define HAVE_F16C_PATH 1
#endif

HOT tt_status tt_reduce(void *dst, const void *src, size_t count, tt_dtype t, tt_redop op)
{
    if ((unsigned)op >= TT_NREDOPS)
        return tt_error_set(TT_ERR_INVALID, "reduce: unknown reduction op %d", (int)op);
    if (count && (!dst || !src))
        return tt_error_set(TT_ERR_INVALID, "reduce: NULL buffer");
    switch (t) {
    case TT_INT8: INT_REDUCE(int8_t, uint8_t); break;
    case TT_UINT8: INT_REDUCE(uint8_t, uint32_t); break;
    case TT_INT32: INT_REDUCE(int32_t, uint32_t); break;
    case TT_UINT32: INT_REDUCE(uint32_t, uint32_t); break;
    case TT_INT64: INT_REDUCE(int64_t, uint64_t); break;
    case TT_UINT64: INT_REDUCE(uint64_t, uint64_t); break;
    case TT_HALF: {
#ifdef HAVE_F16C_PATH
        /* TOPOTUNE_NO_F16C=1 forces the portable path (tests compare both) */
        static _Atomic int use = -1; /* decided once; racing first calls agree */
        if (use < 0)
            use = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c") && !tt_setting("TOPOTUNE_NO_F16C");
        if (use) {
            size_t done = half_reduce_f16c(dst, src, count, op);
            dst = (unsigned char *)dst + 2 * done;
            src = (const unsigned char *)src + 2 * done;
            count -= done;
        }
#endif
        H16_REDUCE(h2f, f2h);
        break;
    }
    case TT_BFLOAT16: H16_REDUCE(b2f, f2b); break;
    case TT_FLOAT: FLT_REDUCE(float); break;
    case TT_DOUBLE: FLT_REDUCE(double); break;
    default:
        return tt_error_set(TT_ERR_INVALID, "reduce: unknown data type %d", (int)t);
    }
    return TT_OK;
}

#define DIV_LOOP(T, EXPR)                                                      \
    do {                                                                       \
        unsigned char *d = buf;                                                \
        for (size_t i = 0; i < count; i++) {                                   \
            T a;                                                               \
            memcpy(&a, d + i * sizeof(T), sizeof(T));                          \
            T r = EXPR;                                                        \
            memcpy(d + i * sizeof(T), &r, sizeof(T));                          \
        }                                                                      \
    } while (0)

tt_status tt_reduce_finish_avg(void *buf, size_t count, tt_dtype t, int divisor)
{
    if (divisor <= 0)
        return tt_error_set(TT_ERR_INVALID, "avg: divisor %d must be positive", divisor);
    if (divisor == 1)
        return TT_OK;
    switch (t) {
    case TT_INT8: DIV_LOOP(int8_t, (int8_t)(a / divisor)); break;
    case TT_UINT8: DIV_LOOP(uint8_t, (uint8_t)(a / (unsigned)divisor)); break;
    case TT_INT32: DIV_LOOP(int32_t, (int32_t)(a / divisor)); break;
    case TT_UINT32: DIV_LOOP(uint32_t, a / (uint32_t)divisor); break;
    case TT_INT64: DIV_LOOP(int64_t, a / divisor); break;
    case TT_UINT64: DIV_LOOP(uint64_t, a / (uint64_t)divisor); break;
    case TT_FLOAT: DIV_LOOP(float, a / (float)divisor); break;
    case TT_DOUBLE: DIV_LOOP(double, a / (double)divisor); break;
    case TT_HALF: {
        unsigned char *d = buf;
        for (size_t i = 0; i < count; i++) {
            uint16_t h;
            memcpy(&h, d + 2 * i, 2);
            h = tt_float_to_half(tt_half_to_float(h) / (float)divisor);
            memcpy(d + 2 * i, &h, 2);
        }
        break;
    }
    case TT_BFLOAT16: {
        unsigned char *d = buf;
        for (size_t i = 0; i < count; i++) {
            uint16_t h;
            memcpy(&h, d + 2 * i, 2);
            h = tt_float_to_bf16(tt_bf16_to_float(h) / (float)divisor);
            memcpy(d + 2 * i, &h, 2);
        }
        break;
    }
    default:
        return tt_error_set(TT_ERR_INVALID, "avg: unknown data type %d", (int)t);
    }
    return TT_OK;
}
