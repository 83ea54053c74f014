/*
 * cli_exec_set.c - what topo-exec sets for itself: options that are settings (tt_setting_set),
 * NCCL's variables for a real NCCL (setenv: NCCL's interface, not ours), the log of both that -J's
 * "env" list keeps, and whether the prediction columns are on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_exec.h"
#include "cli_predict.h"

int tt_cli_exec_has_pred(void)
{
    static int cached = -1;
    if (cached < 0)
        cached = topo_exec_predict_enabled();
    return cached;
}

/* What topo-exec set itself, in order: options that are settings (tt_setting_set) and NCCL's
 * variables for NCCL (setenv).  -J's "env" lists them as if they were in the environment, at the
 * place setenv would have put them (replaced in place, or appended in the order they were set). */
static struct {
    const char *name;
    int added; /* not in the environment before: listed after it */
} set_log[16];
static int nset_log;

static int set_log_find(const char *name, size_t n)
{
    for (int i = 0; i < nset_log; i++)
        if (strlen(set_log[i].name) == n && !strncmp(set_log[i].name, name, n))
            return i;
    return -1;
}

static void set_log_note(const char *name)
{
    if (set_log_find(name, strlen(name)) >= 0 || nset_log == (int)(sizeof set_log / sizeof *set_log))
        return;
    set_log[nset_log].name = name;
    set_log[nset_log].added = getenv(name) == NULL;
    nset_log++;
}

void tt_cli_exec_set(const char *name, const char *value)
{
    set_log_note(name);
    tt_setting_set(name, value);
}

void tt_cli_exec_setenv_nccl(const char *name, const char *value)
{
    set_log_note(name);
    setenv(name, value, 1);
}

/* "NAME=value" of a variable topo-exec set (nothing when it is unset) */
static void add_env_entry(char **out, int *n, const char *name)
{
    const char *v = tt_setting(name);
    if (!v)
        return;
    size_t len = strlen(name) + strlen(v) + 2;
    if ((out[*n] = malloc(len)))
        snprintf(out[(*n)++], len, "%s=%s", name, v);
}

/* the variables that shape a run (nccl-tests keeps the whole environment; we keep these), with
 * what topo-exec set in place (set_log); *n entries, each and the array to free */
char **tt_cli_exec_env_entries(int *n)
{
    extern char **environ;
    static const char *const keep[] = {"NCCL_", "TOPOTUNE_", "SLURM_", "MASTER_", "RANK=", "WORLD_SIZE=",
                                       "LOCAL_RANK=", "OMPI_COMM_WORLD_", "PMI_", "CUDA_VISIBLE_DEVICES="};
    int cap = nset_log + 1;
    for (char **e = environ; e && *e; e++) cap++;
    char **out = calloc((size_t)cap, sizeof *out);
    *n = 0;
    for (char **e = environ; out && e && *e; e++) {
        size_t nl = strcspn(*e, "=");
        int li = set_log_find(*e, nl);
        if (li >= 0 && set_log[li].added)
            continue; /* set by topo-exec: in the order it set them, below */
        if (li >= 0) { /* a setting of the environment that an option replaced (or unset) */
            add_env_entry(out, n, set_log[li].name);
            continue;
        }
        if (!strncmp(*e, "TOPOTUNE_JOB_SECRET=", 20)) { /* the job secret is never written (exec_auth.c) */
            out[(*n)++] = tt_strdup("TOPOTUNE_JOB_SECRET=(set; not recorded)");
            continue;
        }
        for (size_t k = 0; k < sizeof keep / sizeof *keep; k++)
            if (!strncmp(*e, keep[k], strlen(keep[k]))) {
                out[(*n)++] = tt_strdup(*e);
                break;
            }
    }
    for (int i = 0; out && i < nset_log; i++)
        if (set_log[i].added)
            add_env_entry(out, n, set_log[i].name);
    return out;
}

