/*
 * exec_test_hooks.h - the library's test hooks: function pointers that are NULL in every program
 * (exec_test_hooks.c).  tests/unit/support_test_hooks.c, linked into the test programs only,
 * points them at functions that read the test-only variables (TOPOTUNE_GPU_TEST_STALL_RANK), so
 * no tool and no library user ever reads those.  C and C++.
 */
#ifndef EXEC_TEST_HOOKS_H
#define EXEC_TEST_HOOKS_H

#include <stddef.h>

#include "exec_gpu_health.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    /* the rank of an n-rank GPU communicator that skips every collective, so that its peers hit
     * the deadline (test_stuck_rank_times_out); -1: none */
    int (*stall_rank)(int n);
    /* the lower rank of a process pair, after creating its shared-memory segment `name` of len bytes, may
     * rewrite the name it offers (n bytes of room) or change the segment: a hostile peer
     * (test_exec_shm_names) */
    void (*shm_offer)(char *name, size_t n, size_t len);
    /* what CUDA says about the GPUs, staged (test_exec_gpu_health): 1 when *s was filled, 0 to ask CUDA */
    int (*cuda_probe)(exec_gpu_cuda_state *s);
} exec_test_hooks;

extern exec_test_hooks exec_test_hook; /* all NULL: no hook */

/* exec_test_hook.stall_rank(n), or -1 without the hook */
int exec_test_stall_rank(int n);
/* exec_test_hook.shm_offer(name, n, len), or nothing without the hook */
void exec_test_shm_offer(char *name, size_t n, size_t len);
/* exec_test_hook.cuda_probe(s), or 0 without the hook */
int exec_test_cuda_probe(exec_gpu_cuda_state *s);

#ifdef __cplusplus
}
#endif
#endif
