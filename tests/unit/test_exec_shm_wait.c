/* test_exec_shm_wait.c - the idle-wait policy and the pre-faulted shared-memory
 * rings (exec/exec_spin.c, exec/exec_transport_shm.c):
 *  - more ranks on this host than CPUs: waits do not busy-poll at all;
 *  - process ranks' shared-memory segments are fully mapped after setup
 *    (MAP_POPULATE), so the first collective takes no page faults on them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"
#include "tt_exec.h"

static void test_spin_budget(void **state)
{
    (void)state;
    unsetenv("TOPOTUNE_SPIN_US");
    int cpus = exec_cpu_count();
    assert_true(cpus >= 1);
    int n = cpus + 1 > 64 ? 0 : cpus + 1;
    if (n) { /* oversubscribed: no spinning */
        tt_comm *c[65];
        assert_int_equal(tt_comm_init_threads(n, c), TT_OK);
        assert_int_equal(exec_local_ranks(c[0]), n);
        assert_int_equal(exec_spin_budget_us(c[0]), 0);
        float x[2] = {1, 2};
        for (int r = 0; r < n; r++) /* and collectives still complete (yielding, not spinning) */
            assert_int_equal(tt_allreduce(x, x, 0, TT_FLOAT, TT_SUM, c[r]), TT_OK);
        for (int r = 0; r < n; r++)
            assert_int_equal(tt_comm_wait(c[r]), TT_OK);
        for (int r = 0; r < n; r++)
            assert_int_equal(tt_comm_destroy(c[r]), TT_OK);
    }
    tt_comm *one;
    assert_int_equal(tt_comm_init_threads(1, &one), TT_OK);
    assert_int_equal(exec_spin_budget_us(one), EXEC_SPIN_US); /* fewer ranks than CPUs: the default spin */
    assert_int_equal(tt_comm_destroy(one), TT_OK);
}

typedef struct {
    tt_unique_id id;
    int rank;
    tt_comm *c;
    tt_status st;
} prank;

static void *init_rank(void *p)
{
    prank *a = p;
    a->st = tt_comm_init_rank(&a->c, 2, &a->id, a->rank);
    return NULL;
}

static void *destroy_rank(void *p)
{
    prank *a = p;
    a->st = tt_comm_destroy(a->c);
    return NULL;
}

/* Sum of Size and Rss (kB) of this process's mappings of topotune's shm segments. */
static int shm_mappings(long *size_kb, long *rss_kb)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0, n = 0;
    *size_kb = *rss_kb = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        long v;
        unsigned long lo, hi;
        char perm[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3) { /* a mapping's header line */
            in = strstr(line, "/dev/shm/tt-") != NULL;
            n += in;
        } else if (in && sscanf(line, "Size: %ld kB", &v) == 1) {
            *size_kb += v;
        } else if (in && sscanf(line, "Rss: %ld kB", &v) == 1) {
            *rss_kb += v;
        }
    }
    fclose(f);
    return n;
}

static void test_segments_prefaulted(void **state)
{
    (void)state;
    setenv("TOPOTUNE_TRANSPORT", "shm", 1);
    prank a[2];
    pthread_t t[2];
    assert_int_equal(tt_get_unique_id(&a[0].id, "127.0.0.1"), TT_OK);
    a[1].id = a[0].id;
    for (int r = 0; r < 2; r++) {
        a[r].rank = r;
        pthread_create(&t[r], NULL, init_rank, &a[r]);
    }
    for (int r = 0; r < 2; r++)
        pthread_join(t[r], NULL);
    for (int r = 0; r < 2; r++)
        if (a[r].st != TT_OK)
            fail_msg("rank %d: %s", r, tt_error_message());
    long size, rss;
    int n = shm_mappings(&size, &rss);
    /* both ranks live in this process: the creator's and the opener's mapping of one segment */
    if (n != 2 || size < 2048 || rss < size)
        fail_msg("%d shm mappings, %ld kB, %ld kB resident before any collective (want 2, all resident)", n, size, rss);
    for (int r = 0; r < 2; r++)
        pthread_create(&t[r], NULL, destroy_rank, &a[r]);
    for (int r = 0; r < 2; r++)
        pthread_join(t[r], NULL);
    for (int r = 0; r < 2; r++)
        assert_int_equal(a[r].st, TT_OK);
    unsetenv("TOPOTUNE_TRANSPORT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spin_budget),
        cmocka_unit_test(test_segments_prefaulted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
