/* test_exec_job_identity.c - the job identity of the TCP rendezvous (tt_job_identity, issue #32 item 6):
 * TOPOTUNE_JOB_ID alone, every launcher's part joined, the restart counts that tell a restarted job from
 * its previous attempt, and "no id" (also with only torchrun's restart count). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tt_exec.h"

static const char *const vars[] = {"TOPOTUNE_JOB_ID", "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_STEPID",
                                   "SLURM_RESTART_COUNT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
                                   "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"};

static int clear(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
    return 0;
}

static void expect_id(int found, const char *text)
{
    char got[256];
    assert_int_equal(tt_job_identity(got, sizeof got), found);
    assert_string_equal(got, text);
}

static void test_none(void **state)
{
    (void)state;
    expect_id(0, "");
    setenv("TORCHELASTIC_RUN_ID", "none", 1); /* torchrun's default --rdzv-id */
    expect_id(0, "");
    setenv("TORCHELASTIC_RESTART_COUNT", "2", 1); /* only a restart count: still no job id */
    expect_id(0, "TORCHELASTIC_RESTART_COUNT=2");
    setenv("SLURM_JOB_ID", "", 1); /* empty: unset */
    expect_id(0, "TORCHELASTIC_RESTART_COUNT=2");
}

static void test_launchers(void **state)
{
    (void)state;
    setenv("SLURM_JOB_ID", "111", 1);
    expect_id(1, "SLURM_JOB_ID=111");
    setenv("SLURM_STEPID", "4", 1);
    expect_id(1, "SLURM_JOB_ID=111.4");
    setenv("SLURM_STEP_ID", "3", 1);
    expect_id(1, "SLURM_JOB_ID=111.3");
    setenv("SLURM_RESTART_COUNT", "0", 1);
    expect_id(1, "SLURM_JOB_ID=111.3");
    setenv("SLURM_RESTART_COUNT", "2", 1); /* a requeued job is another job than its first run */
    expect_id(1, "SLURM_JOB_ID=111.3 (requeue 2)");
    clear(NULL);
    setenv("TORCHELASTIC_RUN_ID", "trainjob", 1);
    setenv("TORCHELASTIC_RESTART_COUNT", "0", 1);
    expect_id(1, "TORCHELASTIC_RUN_ID=trainjob (restart 0)");
    setenv("TORCHELASTIC_RESTART_COUNT", "1", 1);
    expect_id(1, "TORCHELASTIC_RUN_ID=trainjob (restart 1)");
    setenv("SLURM_JOB_ID", "7", 1); /* torchrun inside a Slurm step: both parts */
    setenv("SLURM_STEP_ID", "0", 1);
    expect_id(1, "SLURM_JOB_ID=7.0 TORCHELASTIC_RUN_ID=trainjob (restart 1)");
    clear(NULL);
    setenv("PMIX_NAMESPACE", "prterun-host-123@1", 1);
    expect_id(1, "PMIX_NAMESPACE=prterun-host-123@1");
    setenv("OMPI_MCA_ess_base_jobid", "42", 1);
    expect_id(1, "OMPI_MCA_ess_base_jobid=42");
    setenv("TOPOTUNE_JOB_ID", "mine", 1); /* the user's own overrides every launcher's */
    expect_id(1, "TOPOTUNE_JOB_ID=mine");
}

static void test_truncated(void **state)
{
    (void)state;
    setenv("TORCHELASTIC_RUN_ID", "a-very-long-run-id-that-does-not-fit", 1);
    setenv("TORCHELASTIC_RESTART_COUNT", "3", 1);
    char small[16];
    assert_int_equal(tt_job_identity(small, sizeof small), 1);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_int_equal(tt_job_identity(NULL, 8), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_none, clear),
        cmocka_unit_test_setup(test_launchers, clear),
        cmocka_unit_test_setup(test_truncated, clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
