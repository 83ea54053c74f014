/* test_exec_test_hooks.c - the library's test hooks (exec/exec_test_hooks.h) are on in the test
 * programs (tests/unit/support_test_hooks.c) and read the test-only variables there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "exec_test_hooks.h"

static void test_stall_rank_hook(void **st)
{
    (void)st;
    assert_non_null(exec_test_hook.stall_rank);
    unsetenv("TOPOTUNE_GPU_TEST_STALL_RANK");
    assert_int_equal(exec_test_stall_rank(4), -1);
    setenv("TOPOTUNE_GPU_TEST_STALL_RANK", "2", 1);
    assert_int_equal(exec_test_stall_rank(4), 2);
    assert_int_equal(exec_test_stall_rank(2), -1); /* not a rank of that communicator */
    exec_test_hooks saved = exec_test_hook;
    exec_test_hook.stall_rank = NULL; /* as in every program but the tests */
    assert_int_equal(exec_test_stall_rank(4), -1);
    exec_test_hook = saved;
    unsetenv("TOPOTUNE_GPU_TEST_STALL_RANK");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stall_rank_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
