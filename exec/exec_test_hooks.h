/*
 * exec_test_hooks.h - the library's test hooks: function pointers that are NULL in every program
 * (exec_test_hooks.c).  tests/unit/support_test_hooks.c, linked into the test programs only,
 * points them at functions that read the test-only variables (TOPOTUNE_GPU_TEST_STALL_RANK), so
 * no tool and no library user ever reads those.  C and C++.
 */
#ifndef EXEC_TEST_HOOKS_H
#define EXEC_TEST_HOOKS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    /* the rank of an n-rank GPU communicator that skips every collective, so that its peers hit
     * the deadline (test_stuck_rank_times_out); -1: none */
    int (*stall_rank)(int n);
} exec_test_hooks;

extern exec_test_hooks exec_test_hook; /* all NULL: no hook */

/* exec_test_hook.stall_rank(n), or -1 without the hook */
int exec_test_stall_rank(int n);

#ifdef __cplusplus
}
#endif
#endif
