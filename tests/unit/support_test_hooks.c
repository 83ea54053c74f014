/*
 * support_test_hooks.c - the library's test hooks turned on (exec/exec_test_hooks.h): linked into
 * every test program, never into the tools or the library, so the test-only variables are read
 * here and nowhere else.
 *   TOPOTUNE_GPU_TEST_STALL_RANK=R   rank R of a GPU communicator skips every collective
 */
#include <stdlib.h>

#include "exec_test_hooks.h"
#include "tt_common.h"

static int stall_rank_from_env(int n)
{
    const char *s = getenv("TOPOTUNE_GPU_TEST_STALL_RANK");
    long long v;
    if (s && *s && tt_parse_ll(s, &v) == TT_OK && v >= 0 && v < n)
        return (int)v;
    return -1;
}

__attribute__((constructor)) static void test_hooks_on(void)
{
    exec_test_hook.stall_rank = stall_rank_from_env;
}
