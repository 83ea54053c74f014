/* test_common_parse.c - strict number parsing in common/ (tt_parse_ll,
 * tt_parse_double, tt_parse_size), including the regressions found by
 * fuzzing (docs/reliability.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tt_common.h"

static void size_ok(const char *s, uint64_t want)
{
    uint64_t v = 0;
    tt_status st = tt_parse_size(s, &v);
    if (st != TT_OK)
        print_error("'%s': %s\n", s, tt_error_message());
    assert_int_equal(st, TT_OK);
    assert_true(v == want);
}

static void size_bad(const char *s, const char *msg_part)
{
    uint64_t v = 12345;
    assert_int_equal(tt_parse_size(s, &v), TT_ERR_PARSE);
    assert_true(v == 12345); /* output untouched on failure */
    assert_non_null(strstr(tt_error_message(), msg_part));
}

static void test_size_suffixes(void **st)
{
    (void)st;
    size_ok("0", 0);
    size_ok("8", 8);
    size_ok("64K", 65536);
    size_ok("64k", 65536);
    size_ok("64KiB", 65536);
    size_ok("64KB", 65536);
    size_ok("1M", 1 << 20);
    size_ok("2G", 2ull << 30);
    size_ok("16G", 16ull << 30);
    size_ok("4T", 4ull << 40);
    size_ok("10B", 10);
    size_ok("0x100", 256);
    size_ok("1.5G", 3ull << 29);
    size_ok("0.5K", 512);
    size_ok("1e3", 1000);
    size_ok(" 12", 12);
    size_bad("", "empty");
    size_bad("abc", "not a size");
    size_bad("1Q", "unknown suffix");
    size_bad("5i", "unknown suffix");
    size_bad("-1", "negative");
    size_bad("-0", "negative");
    size_bad("nan", "not a size");
    size_bad("inf", "not a size");
}

/* Fuzzing found (fuzz_parse_num): sizes went through a double, so integers
 * above 2^53 were rounded ("9223372036854775807" -> 9223372036854775808) and
 * fractions of a byte were truncated ("0.3" -> 0). */
static void test_size_exact_integers(void **st)
{
    (void)st;
    size_ok("9007199254740993", 9007199254740993ull);
    size_ok("9223372036854775807", 9223372036854775807ull);
    size_ok("18446744073709551615", UINT64_MAX);
    size_ok("0xffffffffffffffff", UINT64_MAX);
    size_ok("16777215T", 16777215ull << 40);
}

static void test_size_overflow_and_fractions(void **st)
{
    (void)st;
    size_bad("18446744073709551616", "too large");
    size_bad("16777216T", "too large");
    size_bad("1e30", "too large");
    size_bad("0.3", "whole number of bytes");
    size_bad("1.9", "whole number of bytes");
    size_bad("0.0001K", "whole number of bytes");
}

static void test_ll_and_double(void **st)
{
    long long v;
    double d;
    (void)st;
    assert_int_equal(tt_parse_ll("42", &v), TT_OK);
    assert_int_equal(v, 42);
    assert_int_equal(tt_parse_ll("-0x10", &v), TT_OK);
    assert_int_equal(v, -16);
    assert_int_equal(tt_parse_ll("9223372036854775808", &v), TT_ERR_PARSE);
    assert_non_null(strstr(tt_error_message(), "out of range"));
    assert_int_equal(tt_parse_ll("12x", &v), TT_ERR_PARSE);
    assert_int_equal(tt_parse_ll("", &v), TT_ERR_PARSE);
    assert_int_equal(tt_parse_double("2.5", &d), TT_OK);
    assert_true(d == 2.5);
    assert_int_equal(tt_parse_double("1e400", &d), TT_ERR_PARSE);
    assert_int_equal(tt_parse_double("nan", &d), TT_ERR_PARSE);
    assert_int_equal(tt_parse_double("inf", &d), TT_ERR_PARSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_suffixes),
        cmocka_unit_test(test_size_exact_integers),
        cmocka_unit_test(test_size_overflow_and_fractions),
        cmocka_unit_test(test_ll_and_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
