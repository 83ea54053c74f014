/* test_exec_slurm.c - Slurm's compressed host lists (tt_hostlist_nth) and the rendezvous of a
 * Slurm step without MASTER_ADDR (tt_env_slurm_step, tt_slurm_master): expansion with leading
 * zeros, several [] groups, counts, malformed lists refused, the port's sources. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_exec.h"

static void expect_hosts(const char *list, const char *const *want, int n)
{
    int count = -7;
    char h[64];
    assert_int_equal(tt_hostlist_nth(list, -1, NULL, 0, &count), TT_OK);
    assert_int_equal(count, n);
    for (int i = 0; i < n; i++) {
        count = -7;
        assert_int_equal(tt_hostlist_nth(list, i, h, sizeof h, &count), TT_OK);
        assert_string_equal(h, want[i]);
        assert_int_equal(count, n);
    }
    assert_int_equal(tt_hostlist_nth(list, n, h, sizeof h, NULL), TT_ERR_INVALID);
}

static void test_expand(void **state)
{
    (void)state;
    static const char *const a[] = {"node01", "node02", "node03", "node07", "gpu5"};
    expect_hosts("node[01-03,07],gpu5", a, 5);
    static const char *const b[] = {"localhost"};
    expect_hosts("localhost", b, 1);
    static const char *const c[] = {"r1-n8", "r1-n9", "r1-n10", "r2-n8", "r2-n9", "r2-n10"};
    expect_hosts("r[1-2]-n[8-10]", c, 6);
    static const char *const d[] = {"a", "b9", "c.ib"};
    expect_hosts("a,b[9],c.ib", d, 3);
    static const char *const e[] = {"n098", "n099", "n100", "x"};
    expect_hosts("n[098-100],x", e, 4);
}

static void test_malformed(void **state)
{
    (void)state;
    char h[64];
    const char *bad[] = {"", "node[01-03", "node]1", "node[]", "node[3-1]", "node[a-b]", "a,,b", "a,", "n[1-]",
                         "n[1;2]", "n[1-99999999]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tt_status st = tt_hostlist_nth(bad[i], 0, h, sizeof h, NULL);
        if (st == TT_OK) fail_msg("'%s' accepted as '%s'", bad[i], h);
    }
    assert_int_equal(tt_hostlist_nth("averyveryverylonghostname", 0, h, 8, NULL), TT_ERR_LIMIT);
}

static void test_master(void **state)
{
    (void)state;
    char hp[300];
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    unsetenv("MASTER_PORT");
    unsetenv("TOPOTUNE_MASTER_PORT");
    setenv("SLURM_PROCID", "1", 1);
    setenv("SLURM_NTASKS", "2", 1);
    unsetenv("SLURM_STEP_NODELIST");
    unsetenv("SLURM_JOB_NODELIST");
    unsetenv("SLURM_NODELIST");
    assert_int_equal(tt_env_slurm_step(), 0); /* no node list: not enough for a rendezvous */
    assert_int_equal(tt_slurm_master(hp, sizeof hp), TT_ERR_INVALID);
    setenv("SLURM_STEP_NODELIST", "gpu[07-08]", 1);
    setenv("SLURM_JOB_ID", "1234", 1);
    setenv("SLURM_STEP_ID", "3", 1);
    assert_int_equal(tt_env_slurm_step(), 1);
    assert_int_equal(tt_slurm_master(hp, sizeof hp), TT_OK);
    char want[64];
    snprintf(want, sizeof want, "gpu07:%d", 12000 + (1234 * 8 + 3) % 20000);
    assert_string_equal(hp, want);
    setenv("MASTER_PORT", "29501", 1);
    assert_int_equal(tt_slurm_master(hp, sizeof hp), TT_OK);
    assert_string_equal(hp, "gpu07:29501");
    setenv("TOPOTUNE_MASTER_PORT", "4000", 1);
    assert_int_equal(tt_slurm_master(hp, sizeof hp), TT_OK);
    assert_string_equal(hp, "gpu07:4000");
    setenv("TOPOTUNE_MASTER_PORT", "70000", 1);
    assert_int_equal(tt_slurm_master(hp, sizeof hp), TT_ERR_INVALID);
    /* torchrun's variables win over Slurm's: then MASTER_ADDR is needed as before */
    setenv("RANK", "0", 1);
    setenv("WORLD_SIZE", "2", 1);
    assert_int_equal(tt_env_slurm_step(), 0);
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_master),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
