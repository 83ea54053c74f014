/*
 * exec_test_hooks.c - the library's test hooks (exec_test_hooks.h), off in every program: the
 * tests' support_test_hooks.c turns them on, so no production code reads the test-only variables.
 */
#include "exec_test_hooks.h"

#include <stddef.h>

exec_test_hooks exec_test_hook;

int exec_test_stall_rank(int n)
{
    return exec_test_hook.stall_rank ? exec_test_hook.stall_rank(n) : -1;
}

void exec_test_shm_offer(char *name, size_t n, size_t len)
{
    if (exec_test_hook.shm_offer)
        exec_test_hook.shm_offer(name, n, len);
}

int exec_test_cuda_probe(exec_gpu_cuda_state *s)
{
    return exec_test_hook.cuda_probe ? exec_test_hook.cuda_probe(s) : 0;
}
