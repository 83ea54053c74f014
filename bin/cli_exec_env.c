/*
 * cli_exec_env.c - the executor's environment variables, checked before anything runs (issue #16 item 7):
 * a typo or an impossible value is a usage error (exit 2) naming the variable, not a silent default
 * nor a failure deep inside a collective.  The library keeps its own fallbacks for programs that embed
 * it; topo-exec refuses first.  Ranges are those the library accepts (exec/exec_coll.c, exec_comm.c,
 * exec_xfer.c, exec_ib_setup.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_exec.h"

typedef enum { ENV_SIZE, ENV_SIZE_POW2, ENV_INT } env_kind;

static const struct {
    const char *name;
    env_kind kind;
    long long lo, hi;
    const char *what;
} env_vars[] = {
    {"TOPOTUNE_CHUNK_BYTES", ENV_SIZE, 64, 1LL << 30, "a pipeline chunk size 64..1G (K/M/G suffixes)"},
    {"TOPOTUNE_SHM_RING_BYTES", ENV_SIZE_POW2, 4096, 1LL << 30, "a power of two 4K..1G"},
    {"TOPOTUNE_IB_RING_BYTES", ENV_SIZE_POW2, 4096, 1LL << 30, "a power of two 4K..1G"},
    {"TOPOTUNE_TIMEOUT_MS", ENV_INT, 1, 86400000LL, "milliseconds 1..86400000"},
    {"TOPOTUNE_SPIN_US", ENV_INT, 0, 10000000LL, "microseconds 0..10000000"},
    {"TOPOTUNE_THREAD_NODES", ENV_INT, 1, 1024, "a node count 1..1024 (at most --host)"},
    {"TOPOTUNE_IB_GID_INDEX", ENV_INT, 0, 255, "a GID index 0..255"},
    {"TOPOTUNE_GPU_EMULATE_HOSTS", ENV_INT, 1, 1024, "an emulated host count 1..1024 (at most the process ranks)"},
};

int tt_cli_exec_check_env(void)
{
    for (size_t i = 0; i < sizeof env_vars / sizeof *env_vars; i++) {
        const char *s = getenv(env_vars[i].name);
        if (!s || !*s)
            continue;
        int bad;
        if (env_vars[i].kind == ENV_INT) {
            long long v;
            bad = tt_parse_ll(s, &v) != TT_OK || v < env_vars[i].lo || v > env_vars[i].hi;
        } else {
            uint64_t v;
            bad = tt_parse_size(s, &v) != TT_OK || v < (uint64_t)env_vars[i].lo || v > (uint64_t)env_vars[i].hi ||
                  (env_vars[i].kind == ENV_SIZE_POW2 && (v & (v - 1)));
        }
        if (bad)
            return tt_cli_bad("%s='%.80s': must be %s (unset it for the default)", env_vars[i].name, s,
                              env_vars[i].what);
    }
    const char *b = getenv("TOPOTUNE_HOST_BIND"); /* exec/exec_bind.c */
    if (b && *b && strcmp(b, "none") && strcmp(b, "core") && strcmp(b, "cpu"))
        return tt_cli_bad("TOPOTUNE_HOST_BIND='%.80s': must be none, core or cpu (unset it for the default)", b);
    return 0;
}
