/* test_exec_reduce.c - reduction kernels: every type x op against values
 * computed by hand, half/bfloat16 rounding (nearest-even, subnormals,
 * overflow, NaN), avg on integers (truncation), unaligned buffers, names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "support_exec.h"
#include "tt_exec.h"

static double get(const void *buf, tt_dtype t, size_t i)
{
    const unsigned char *p = (const unsigned char *)buf + i * tt_dtype_size(t);
    switch (t) {
    case TT_INT8: { int8_t x; memcpy(&x, p, 1); return x; }
    case TT_UINT8: { uint8_t x; memcpy(&x, p, 1); return x; }
    case TT_INT32: { int32_t x; memcpy(&x, p, 4); return x; }
    case TT_UINT32: { uint32_t x; memcpy(&x, p, 4); return x; }
    case TT_INT64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
    case TT_UINT64: { uint64_t x; memcpy(&x, p, 8); return (double)x; }
    case TT_HALF: { uint16_t x; memcpy(&x, p, 2); return tt_half_to_float(x); }
    case TT_BFLOAT16: { uint16_t x; memcpy(&x, p, 2); return tt_bf16_to_float(x); }
    case TT_FLOAT: { float x; memcpy(&x, p, 4); return x; }
    default: { double x; memcpy(&x, p, 8); return x; }
    }
}

static void test_every_type_and_op(void **state)
{
    /* a = {3, 5, 2, 7}, b = {4, 1, 6, 7} */
    static const long a[] = {3, 5, 2, 7}, b[] = {4, 1, 6, 7};
    static const double want[TT_NREDOPS][4] = {
        {7, 6, 8, 14}, {12, 5, 12, 49}, {3, 1, 2, 7}, {4, 5, 6, 7}, {7, 6, 8, 14}};
    for (int t = 0; t < TT_NDTYPES; t++)
        for (int op = 0; op < TT_NREDOPS; op++) {
            unsigned char x[64 + 1], y[64 + 3];
            unsigned char *px = x + 1, *py = y + 3; /* unaligned on purpose */
            for (size_t i = 0; i < 4; i++) {
                sx_set(px, (tt_dtype)t, i, a[i]);
                sx_set(py, (tt_dtype)t, i, b[i]);
            }
            assert_int_equal(tt_reduce(px, py, 4, (tt_dtype)t, (tt_redop)op), TT_OK);
            for (size_t i = 0; i < 4; i++)
                if (get(px, (tt_dtype)t, i) != want[op][i])
                    fail_msg("%s %s [%zu]: got %g want %g", tt_dtype_name((tt_dtype)t),
                             tt_redop_name((tt_redop)op), i, get(px, (tt_dtype)t, i), want[op][i]);
        }
}

static void test_signed_and_wrap(void **state)
{
    int8_t a[3] = {-5, 100, -128}, b[3] = {3, 100, -1};
    assert_int_equal(tt_reduce(a, b, 3, TT_INT8, TT_SUM), TT_OK);
    assert_int_equal(a[0], -2);
    assert_int_equal(a[1], (int8_t)200 /* wraps */);
    assert_int_equal(a[2], 127);
    int32_t m[2] = {-7, 5}, n[2] = {3, -9};
    assert_int_equal(tt_reduce(m, n, 2, TT_INT32, TT_MIN), TT_OK);
    assert_int_equal(m[0], -7);
    assert_int_equal(m[1], -9);
    uint64_t u[1] = {UINT64_MAX}, v[1] = {2};
    assert_int_equal(tt_reduce(u, v, 1, TT_UINT64, TT_SUM), TT_OK);
    assert_true(u[0] == 1);
}

static void test_avg_integers_truncate(void **state)
{
    int32_t s[3] = {-7, 7, 9};
    assert_int_equal(tt_reduce_finish_avg(s, 3, TT_INT32, 2), TT_OK);
    assert_int_equal(s[0], -3); /* C division truncates toward zero */
    assert_int_equal(s[1], 3);
    assert_int_equal(s[2], 4);
    float f[1] = {7};
    assert_int_equal(tt_reduce_finish_avg(f, 1, TT_FLOAT, 2), TT_OK);
    assert_true(f[0] == 3.5f);
    uint16_t h = tt_float_to_half(3.0f);
    assert_int_equal(tt_reduce_finish_avg(&h, 1, TT_HALF, 4), TT_OK);
    assert_true(tt_half_to_float(h) == 0.75f);
    assert_int_equal(tt_reduce_finish_avg(f, 1, TT_FLOAT, 0), TT_ERR_INVALID);
}

static void test_half_rounding(void **state)
{
    assert_int_equal(tt_float_to_half(1.0f), 0x3c00);
    assert_int_equal(tt_float_to_half(-2.0f), 0xc000);
    /* 1 + 2^-11 is exactly half-way between 1 and 1+2^-10: ties to even */
    assert_int_equal(tt_float_to_half(1.0f + ldexpf(1, -11)), 0x3c00);
    assert_int_equal(tt_float_to_half(1.0f + 3 * ldexpf(1, -11)), 0x3c02);
    assert_int_equal(tt_float_to_half(1.0f + ldexpf(1, -11) + ldexpf(1, -20)), 0x3c01);
    assert_int_equal(tt_float_to_half(65504.0f), 0x7bff);
    assert_int_equal(tt_float_to_half(65519.0f), 0x7bff);
    assert_int_equal(tt_float_to_half(65520.0f), 0x7c00); /* rounds to inf */
    assert_int_equal(tt_float_to_half(ldexpf(1, -24)), 0x0001); /* smallest subnormal */
    assert_int_equal(tt_float_to_half(ldexpf(1, -25)), 0x0000); /* tie to even -> 0 */
    assert_int_equal(tt_float_to_half(ldexpf(3, -25)), 0x0002);
    assert_int_equal(tt_float_to_half(ldexpf(1, -14)), 0x0400); /* smallest normal */
    assert_int_equal(tt_float_to_half(INFINITY), 0x7c00);
    assert_true((tt_float_to_half(NAN) & 0x7c00) == 0x7c00 && (tt_float_to_half(NAN) & 0x3ff));
    /* round trip of every half value that is not NaN */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
            continue;
        assert_int_equal(tt_float_to_half(tt_half_to_float((uint16_t)h)), h);
    }
    assert_true(tt_half_to_float(0x0001) == ldexpf(1, -24));
    /* sum of halves rounds once per step: 2048 + 1 = 2048 (even), 2048 + 3 = 2052 */
    uint16_t a = tt_float_to_half(2048), b = tt_float_to_half(1);
    assert_int_equal(tt_reduce(&a, &b, 1, TT_HALF, TT_SUM), TT_OK);
    assert_true(tt_half_to_float(a) == 2048.0f);
    b = tt_float_to_half(3);
    assert_int_equal(tt_reduce(&a, &b, 1, TT_HALF, TT_SUM), TT_OK);
    assert_true(tt_half_to_float(a) == 2052.0f);
}

/* The vector half path (F16C where the CPU has it) against an element-wise
 * oracle built from the scalar converters, on every kind of value: normals,
 * subnormals, zeros of both signs, infinities, NaNs, overflowing sums. */
static void test_half_vector_matches_scalar(void **state)
{
    enum { N = 1003 }; /* 125 vectors of 8 and a tail of 3 */
    uint16_t a[N], b[N], d[N];
    uint32_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 1103515245u + 12345u;
        a[i] = (uint16_t)(x >> 8);
        x = x * 1103515245u + 12345u;
        b[i] = (uint16_t)(x >> 8);
    }
    a[0] = 0x7c00; b[0] = 0xfc00;  /* inf + -inf = NaN */
    a[1] = 0x7bff; b[1] = 0x7bff;  /* overflow to inf */
    a[2] = 0x0001; b[2] = 0x8001;  /* subnormals */
    a[3] = 0x8000; b[3] = 0x0000;  /* -0, +0 */
    a[4] = 0x7e00; b[4] = 0x3c00;  /* NaN operand */
    a[5] = 0x3c00; b[5] = 0x7e01;
    for (int op = 0; op < TT_NREDOPS; op++) {
        memcpy(d, a, sizeof d);
        assert_int_equal(tt_reduce(d, b, N, TT_HALF, (tt_redop)op), TT_OK);
        for (int i = 0; i < N; i++) {
            float fa = tt_half_to_float(a[i]), fb = tt_half_to_float(b[i]), r;
            if (op == TT_PROD) r = fa * fb;
            else if (op == TT_MIN) r = fa != fa ? fa : fb != fb ? fb : (fb < fa ? fb : fa);
            else if (op == TT_MAX) r = fa != fa ? fa : fb != fb ? fb : (fb > fa ? fb : fa);
            else r = fa + fb;
            uint16_t want = tt_float_to_half(r);
            int want_nan = (want & 0x7c00) == 0x7c00 && (want & 0x3ff);
            int got_nan = (d[i] & 0x7c00) == 0x7c00 && (d[i] & 0x3ff);
            if (want_nan || got_nan) {
                if (want_nan != got_nan)
                    fail_msg("op %s [%d]: %04x op %04x = %04x, want %04x", tt_redop_name((tt_redop)op), i, a[i], b[i], d[i], want);
            } else if (d[i] != want) {
                fail_msg("op %s [%d]: %04x op %04x = %04x, want %04x", tt_redop_name((tt_redop)op), i, a[i], b[i], d[i], want);
            }
        }
    }
}

static void test_bf16_rounding(void **state)
{
    assert_int_equal(tt_float_to_bf16(1.0f), 0x3f80);
    assert_int_equal(tt_float_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);     /* tie -> even */
    assert_int_equal(tt_float_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82); /* tie -> even (up) */
    assert_int_equal(tt_float_to_bf16(1.0f + ldexpf(1, -8) + ldexpf(1, -20)), 0x3f81);
    assert_true(isnan(tt_bf16_to_float(tt_float_to_bf16(NAN))));
    assert_int_equal(tt_float_to_bf16(INFINITY), 0x7f80);
    assert_int_equal(tt_float_to_bf16(3.4e38f), 0x7f80); /* above the largest bf16: inf */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7f80) == 0x7f80 && (h & 0x7f))
            continue;
        assert_int_equal(tt_float_to_bf16(tt_bf16_to_float((uint16_t)h)), h);
    }
    uint16_t a = tt_float_to_bf16(256), b = tt_float_to_bf16(1);
    assert_int_equal(tt_reduce(&a, &b, 1, TT_BFLOAT16, TT_SUM), TT_OK);
    assert_true(tt_bf16_to_float(a) == 256.0f); /* 257 is not representable: ties to even */
}

static void test_nan_minmax(void **state)
{
    float a[2] = {NAN, 1}, b[2] = {1, NAN};
    assert_int_equal(tt_reduce(a, b, 2, TT_FLOAT, TT_MAX), TT_OK);
    assert_true(isnan(a[0]) && isnan(a[1]));
}

static void test_names_and_errors(void **state)
{
    tt_dtype t;
    tt_redop op;
    tt_coll c;
    tt_algo a;
    tt_proto p;
    assert_int_equal(tt_dtype_parse("bf16", &t), TT_OK);
    assert_int_equal(t, TT_BFLOAT16);
    assert_int_equal(tt_dtype_parse("float8", &t), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "valid: int8"));
    assert_int_equal(tt_redop_parse("AVG", &op), TT_OK);
    assert_int_equal(op, TT_AVG);
    assert_int_equal(tt_coll_parse("all_gather", &c), TT_OK);
    assert_int_equal(c, TT_COLL_ALLGATHER);
    assert_int_equal(tt_algo_parse("Ring", &a), TT_OK);
    assert_int_equal(a, TT_ALGO_RING);
    assert_int_equal(tt_algo_parse("halving-doubling", &a), TT_OK);
    assert_int_equal(a, TT_ALGO_RHD);
    assert_int_equal(tt_algo_parse("nvls", &a), TT_OK); /* a name of the shared vocabulary; */
    assert_int_equal(a, TT_ALGO_NVLS);                  /* the executor refuses it when planning */
    assert_int_equal(tt_algo_parse("warp", &a), TT_ERR_INVALID);
    assert_int_equal(tt_proto_parse("LL128", &p), TT_OK);
    assert_int_equal(p, TT_PROTO_LL128);
    assert_string_equal(tt_dtype_name(TT_HALF), "half");
    assert_int_equal(tt_dtype_size(TT_BFLOAT16), 2);
    assert_int_equal(tt_reduce(NULL, NULL, 1, TT_FLOAT, TT_SUM), TT_ERR_INVALID);
    assert_int_equal(tt_reduce(a == a ? (void *)&t : NULL, &t, 1, TT_FLOAT, (tt_redop)9), TT_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_and_op),
        cmocka_unit_test(test_signed_and_wrap),
        cmocka_unit_test(test_avg_integers_truncate),
        cmocka_unit_test(test_half_rounding),
        cmocka_unit_test(test_half_vector_matches_scalar),
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_nan_minmax),
        cmocka_unit_test(test_names_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
