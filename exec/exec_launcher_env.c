/* exec_launcher_env.c - which launcher started this process: the rank / size variable pair it set
 * (torchrun, Open MPI, MPICH/Hydra PMI, Slurm).  Read by tt_comm_init_env (exec_comm.c), the Slurm
 * rendezvous (exec_slurm.c) and the tools. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_exec.h"

int tt_env_rank_vars(const char **rank_var, const char **size_var)
{
    /* torchrun's names, else what the launcher set (Open MPI's mpirun, MPICH/Hydra's PMI,
     * Slurm's srun) - no MPI library needed */
    static const char *const pairs[][2] = {{"RANK", "WORLD_SIZE"},
                                           {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                           {"PMI_RANK", "PMI_SIZE"},
                                           {"SLURM_PROCID", "SLURM_NTASKS"}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (tt_setting(pairs[i][0]) && tt_setting(pairs[i][1])) {
            if (rank_var) *rank_var = pairs[i][0];
            if (size_var) *size_var = pairs[i][1];
            return 1;
        }
    return 0;
}

/* ---- job identity (issue #16 item 2, issue #32 item 6) ----
 * Every launcher's part that is set, joined: a job of one launcher inside another (torchrun under srun)
 * is told apart from an earlier run of either.  The restart counts make a restarted job (torchrun keeps
 * TORCHELASTIC_RUN_ID across restarts, Slurm keeps SLURM_JOB_ID across a requeue) another job than
 * the one it replaces: a leftover of the earlier attempt is refused. */
/* text += printf(fmt, ...), truncated at n */
static void id_add(char *text, size_t n, const char *fmt, ...)
{
    size_t len = strlen(text);
    va_list ap;
    va_start(ap, fmt);
    if (len + 1 < n)
        vsnprintf(text + len, n - len, fmt, ap);
    va_end(ap);
}

static const char *set_value(const char *name)
{
    const char *v = tt_setting(name);
    return v && *v ? v : NULL;
}

int tt_job_identity(char *text, size_t n)
{
    if (!text || !n)
        return 0;
    text[0] = '\0';
    const char *v = set_value("TOPOTUNE_JOB_ID");
    if (v) { /* the user's own: alone, so that it overrides every launcher's */
        snprintf(text, n, "TOPOTUNE_JOB_ID=%s", v);
        return 1;
    }
    int strong = 0; /* a launcher's job id, not only a restart count */
    if ((v = set_value("SLURM_JOB_ID"))) {
        const char *step = set_value("SLURM_STEP_ID");
        if (!step) step = set_value("SLURM_STEPID");
        const char *requeue = set_value("SLURM_RESTART_COUNT");
        id_add(text, n, "SLURM_JOB_ID=%s%s%s", v, step ? "." : "", step ? step : "");
        if (requeue && strcmp(requeue, "0")) id_add(text, n, " (requeue %s)", requeue);
        strong = 1;
    }
    /* torchrun's default --rdzv-id is "none": no identity, but its restart count still tells attempts apart */
    const char *run = set_value("TORCHELASTIC_RUN_ID"), *restart = set_value("TORCHELASTIC_RESTART_COUNT");
    if (run && strcmp(run, "none")) {
        id_add(text, n, "%sTORCHELASTIC_RUN_ID=%s", text[0] ? " " : "", run);
        strong = 1;
    }
    if (restart && run && strcmp(run, "none"))
        id_add(text, n, " (restart %s)", restart);
    else if (restart)
        id_add(text, n, "%sTORCHELASTIC_RESTART_COUNT=%s", text[0] ? " " : "", restart);
    if ((v = set_value("OMPI_MCA_ess_base_jobid")) || (v = set_value("PMIX_NAMESPACE"))) {
        id_add(text, n, "%s%s=%s", text[0] ? " " : "",
               set_value("OMPI_MCA_ess_base_jobid") ? "OMPI_MCA_ess_base_jobid" : "PMIX_NAMESPACE", v);
        strong = 1;
    }
    return strong;
}
