/* test_common_settings.c - the settings module (common/common_settings.c): one row per
 * TOPOTUNE_* variable, values set for this process without touching the environment, and the
 * up-front check with one message naming the variable and what it accepts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_common.h"

static void test_table_rows(void **st)
{
    (void)st;
    size_t n = 0;
    const tt_setting_info *t = tt_settings_table(&n);
    assert_true(n >= 30);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(strncmp(t[i].name, "TOPOTUNE_", 9), 0);
        assert_non_null(t[i].accepted);
        assert_non_null(t[i].def);
        assert_non_null(t[i].owner);
        assert_ptr_equal(tt_setting_lookup(t[i].name), &t[i]);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(t[i].name, t[j].name);
        if (t[i].type == TT_SETTING_INT || t[i].type == TT_SETTING_SIZE || t[i].type == TT_SETTING_SIZE_POW2)
            assert_true(t[i].lo <= t[i].hi);
    }
    assert_null(tt_setting_lookup("TOPOTUNE_NO_SUCH_THING"));
}

static void test_set_overrides_environment(void **st)
{
    (void)st;
    setenv("TOPOTUNE_SPIN_US", "7", 1);
    assert_string_equal(tt_setting("TOPOTUNE_SPIN_US"), "7");
    assert_int_equal(tt_setting_set("TOPOTUNE_SPIN_US", "9"), TT_OK);
    assert_string_equal(tt_setting("TOPOTUNE_SPIN_US"), "9");
    assert_string_equal(getenv("TOPOTUNE_SPIN_US"), "7"); /* the environment is left alone */
    assert_int_equal(tt_setting_set("TOPOTUNE_SPIN_US", NULL), TT_OK);
    assert_null(tt_setting("TOPOTUNE_SPIN_US")); /* unset for this process, whatever the environment says */
    assert_int_equal(tt_setting_set("TOPOTUNE_NOT_A_SETTING", "1"), TT_ERR_INVALID);
    assert_string_equal(tt_setting("PATH"), getenv("PATH")); /* other programs' variables: read through */
    unsetenv("TOPOTUNE_SPIN_US");
}

static void check_bad(const char *name, const char *value, const char *msg)
{
    assert_int_equal(tt_setting_set(name, value), TT_OK);
    assert_int_equal(tt_settings_check(), TT_ERR_INVALID);
    if (strcmp(tt_error_message(), msg))
        print_error("got '%s'\nwant '%s'\n", tt_error_message(), msg);
    assert_string_equal(tt_error_message(), msg);
    assert_int_equal(tt_setting_set(name, NULL), TT_OK);
}

static void test_check_messages(void **st)
{
    (void)st;
    /* the rows checked here are unset for this process first (whatever the environment holds) */
    size_t n;
    const tt_setting_info *t = tt_settings_table(&n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tt_setting_set(t[i].name, NULL), TT_OK);
    assert_int_equal(tt_settings_check(), TT_OK);
    check_bad("TOPOTUNE_TIMEOUT_MS", "0",
              "TOPOTUNE_TIMEOUT_MS='0': must be milliseconds 1..86400000 (unset it for the default)");
    check_bad("TOPOTUNE_TIMEOUT_MS", "10s",
              "TOPOTUNE_TIMEOUT_MS='10s': must be milliseconds 1..86400000 (unset it for the default)");
    check_bad("TOPOTUNE_CHUNK_BYTES", "2G",
              "TOPOTUNE_CHUNK_BYTES='2G': must be a pipeline chunk size 64..1G (K/M/G suffixes) (unset it for the default)");
    check_bad("TOPOTUNE_SHM_RING_BYTES", "12K",
              "TOPOTUNE_SHM_RING_BYTES='12K': must be a power of two 4K..1G (unset it for the default)");
    check_bad("TOPOTUNE_HOST_BIND", "socket",
              "TOPOTUNE_HOST_BIND='socket': must be auto, core, cpu or none (unset it for the default)");
    check_bad("TOPOTUNE_HOST_BIND", "or",
              "TOPOTUNE_HOST_BIND='or': must be auto, core, cpu or none (unset it for the default)");
    check_bad("TOPOTUNE_HOST_BIND", "none, core",
              "TOPOTUNE_HOST_BIND='none, core': must be auto, core, cpu or none (unset it for the default)");
    const char *good[][2] = {{"TOPOTUNE_HOST_BIND", "core"}, {"TOPOTUNE_HOST_BIND", "cpu"}, {"TOPOTUNE_HOST_BIND", "auto"},
                             {"TOPOTUNE_SHM_RING_BYTES", "64K"}, {"TOPOTUNE_TIMEOUT_MS", "86400000"},
                             {"TOPOTUNE_SPIN_US", "0"}, {"TOPOTUNE_DEBUG", "anything: parsed by its owner"}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        assert_int_equal(tt_setting_set(good[i][0], good[i][1]), TT_OK);
        assert_int_equal(tt_settings_check(), TT_OK);
        assert_int_equal(tt_setting_set(good[i][0], NULL), TT_OK);
    }
    assert_int_equal(tt_setting_set("TOPOTUNE_HOST_BIND", ""), TT_OK); /* empty: the default */
    assert_int_equal(tt_settings_check(), TT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_rows),
        cmocka_unit_test(test_set_overrides_environment),
        cmocka_unit_test(test_check_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
