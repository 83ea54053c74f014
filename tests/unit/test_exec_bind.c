/* test_exec_bind.c - where host ranks' workers run (exec/exec_bind.c, TOPOTUNE_HOST_BIND):
 * a core per rank by default where the mask has the cores, "none" never; "cpu" and "core" give
 * every local rank a CPU of its own from the process's mask ("core": one hardware thread of every core before a second of any); more ranks than CPUs
 * are not bound; a wrong value fails the communicator with the variable named; bound ranks still
 * reduce exactly. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_exec.h"

static int ncpus(cpu_set_t *set)
{
    CPU_ZERO(set);
    if (sched_getaffinity(0, sizeof *set, set) != 0) return 0;
    return CPU_COUNT(set);
}

static int core_of(int cpu)
{
    char p[96];
    snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
    FILE *f = fopen(p, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

static void init_n(int n, tt_comm **c, tt_status want)
{
    assert_int_equal(tt_comm_init_threads(n, c), want);
}

static void destroy_n(int n, tt_comm **c)
{
    for (int r = 0; r < n; r++) assert_int_equal(tt_comm_destroy(c[r]), TT_OK);
}

/* default (auto): bound to distinct cores when this process's mask has a core per rank, else not
 * bound with the reason in the note; none: never bound */
static void test_default_and_none(void **state)
{
    (void)state;
    unsetenv("TOPOTUNE_HOST_BIND");
    cpu_set_t set;
    int m = ncpus(&set), cores = 0, seen[CPU_SETSIZE];
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set)) continue;
        int k = core_of(cpu), dup = 0;
        for (int q = 0; q < cores && k >= 0; q++) dup |= seen[q] == k;
        if (!dup) seen[cores++] = k;
    }
    tt_comm *c[2];
    init_n(2, c, TT_OK);
    if (m >= 2 && cores >= 2) {
        assert_true(tt_comm_bound_cpu(c[0]) >= 0 && tt_comm_bound_cpu(c[1]) >= 0);
        assert_int_not_equal(core_of(tt_comm_bound_cpu(c[0])), core_of(tt_comm_bound_cpu(c[1])));
        assert_non_null(strstr(tt_comm_bind_note(c[0]), "default: a core per rank"));
    } else {
        assert_int_equal(tt_comm_bound_cpu(c[0]), -1);
        assert_non_null(strstr(tt_comm_bind_note(c[0]), "default: 2 ranks on this host"));
    }
    destroy_n(2, c);
    setenv("TOPOTUNE_HOST_BIND", "none", 1);
    init_n(2, c, TT_OK);
    assert_int_equal(tt_comm_bound_cpu(c[0]), -1);
    assert_int_equal(tt_comm_bound_cpu(c[1]), -1);
    assert_string_equal(tt_comm_bind_note(c[0]), "TOPOTUNE_HOST_BIND=none");
    destroy_n(2, c);
    unsetenv("TOPOTUNE_HOST_BIND");
    assert_int_equal(tt_comm_bound_cpu(NULL), -1);
    assert_string_equal(tt_comm_bind_note(NULL), "");
}

/* every rank gets its own CPU of the mask, and the collective is still exact */
static void bound_distinct(const char *policy)
{
    cpu_set_t set;
    int m = ncpus(&set);
    if (m < 1) skip();
    int n = m < 4 ? m : 4;
    setenv("TOPOTUNE_HOST_BIND", policy, 1);
    tt_comm *c[4];
    init_n(n, c, TT_OK);
    for (int r = 0; r < n; r++) {
        int cpu = tt_comm_bound_cpu(c[r]);
        assert_true(cpu >= 0 && CPU_ISSET(cpu, &set));
        for (int q = 0; q < r; q++) assert_int_not_equal(cpu, tt_comm_bound_cpu(c[q]));
    }
    float *buf[4];
    for (int r = 0; r < n; r++) {
        buf[r] = malloc(1000 * sizeof(float));
        assert_non_null(buf[r]);
        for (int i = 0; i < 1000; i++) buf[r][i] = (float)(r + 1);
        assert_int_equal(tt_allreduce(buf[r], buf[r], 1000, TT_FLOAT, TT_SUM, c[r]), TT_OK);
    }
    for (int r = 0; r < n; r++) {
        assert_int_equal(tt_comm_wait(c[r]), TT_OK);
        for (int i = 0; i < 1000; i++) assert_true(buf[r][i] == (float)(n * (n + 1) / 2));
        free(buf[r]);
    }
    if (!strcmp(policy, "core")) {
        /* the first ranks sit on distinct cores as long as there are cores (when sysfs says) */
        int cores[4], nc = 0;
        for (int r = 0; r < n; r++) {
            int k = core_of(tt_comm_bound_cpu(c[r])), seen = 0;
            if (k < 0) break;
            for (int q = 0; q < nc; q++) seen |= cores[q] == k;
            if (!seen) cores[nc++] = k;
            else {
                /* a second thread of a core only once every core of the mask has a rank */
                int allcores = 1;
                for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
                    if (!CPU_ISSET(cpu, &set)) continue;
                    int kk = core_of(cpu), in = 0;
                    for (int q = 0; q < nc; q++) in |= cores[q] == kk;
                    allcores &= in;
                }
                assert_true(allcores);
            }
        }
    }
    destroy_n(n, c);
    unsetenv("TOPOTUNE_HOST_BIND");
}

static void test_cpu(void **state)
{
    (void)state;
    bound_distinct("cpu");
}

static void test_core(void **state)
{
    (void)state;
    bound_distinct("core");
}

/* more ranks than CPUs: left to the scheduler */
static void test_oversubscribed(void **state)
{
    (void)state;
    cpu_set_t set;
    int m = ncpus(&set);
    if (m < 1 || m + 1 > 64) skip();
    setenv("TOPOTUNE_HOST_BIND", "cpu", 1);
    tt_comm *c[64];
    init_n(m + 1, c, TT_OK);
    for (int r = 0; r <= m; r++) assert_int_equal(tt_comm_bound_cpu(c[r]), -1);
    destroy_n(m + 1, c);
    unsetenv("TOPOTUNE_HOST_BIND");
}

static void test_bad_value(void **state)
{
    (void)state;
    setenv("TOPOTUNE_HOST_BIND", "numa", 1);
    tt_comm *c[2];
    init_n(2, c, TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "TOPOTUNE_HOST_BIND='numa': use auto, core, cpu or none"));
    unsetenv("TOPOTUNE_HOST_BIND");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_and_none),
        cmocka_unit_test(test_cpu),
        cmocka_unit_test(test_core),
        cmocka_unit_test(test_oversubscribed),
        cmocka_unit_test(test_bad_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
