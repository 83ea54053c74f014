/*
 * cli_validate.h - topo-exec --validate (bin/cli_validate.c): per size of the sweep, run the
 * tuning table's choice and its nearest runner-ups back to back and say whether the choice was
 * right.  See docs/cli-topo-exec.md ("--validate") and docs/calibration.md section 7.
 */
#ifndef TT_CLI_VALIDATE_H
#define TT_CLI_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "tt_common.h"
#include "tt_exec.h"

/* Exit code of --validate when the table's choice lost by more than the margin at some size
 * (0 = right everywhere, 1 runtime failure, 2 bad input, 7 wrong results take precedence). */
#define TT_CLI_EXIT_TABLE_WRONG 3

typedef struct {
    int on;             /* --validate */
    const char *table;  /* --table FILE (topo-tune -f json); NULL = computed from the model */
    const char *topo;   /* --topo FILE; NULL = built-in host stand-in / live scan (GPU ranks) */
    double margin;      /* --validate-margin, as a fraction (default 0.05) */
    int runners_up;     /* --validate-runners-up (default 2) */
    int rounds;         /* --validate-rounds: the candidates of a size are measured this many times,
                           interleaved; each keeps its fastest (default 1) */
} tt_cli_validate_opts;

/* The sweep options of topo-exec that --validate measures with. */
typedef struct {
    tt_coll coll;
    tt_dtype dtype;
    tt_redop op;
    int root;
    uint64_t minb, maxb, stepb;
    long long factor;
    int iters, warmup, agg, check;
    size_t chunk_bytes;
    int progress;
    const char *json;   /* -J */
    int argc;
    char **argv;
} tt_cli_sweep;

void tt_cli_validate_defaults(tt_cli_validate_opts *v);
/* --validate-margin PCT / --validate-runners-up N / --validate-rounds N: 0, or a message and
 * TT_CLI_EXIT_ERROR. */
int tt_cli_validate_option(tt_cli_validate_opts *v, const char *name, const char *value);
/* Host ranks: nlocal communicators of this process (threads), or one (one rank per process).
 * Returns the exit code. */
int tt_cli_validate_host(const tt_cli_validate_opts *v, const tt_cli_sweep *s, tt_comm **comms, int nlocal);
/* GPU ranks: the same judgement with the candidates the GPU communicator runs.  host NULL: -g N
 * ranks in this process; else one GPU rank per process of `host` (ngpus 1), every process calls
 * it with the same options, rank 0 prints.  Returns the exit code. */
int tt_cli_validate_gpu(const tt_cli_validate_opts *v, const tt_cli_sweep *s, int ngpus, tt_comm *host);
/* What GPU ranks need before anything starts (before a rendezvous: no process waits for one that
 * refuses): at most 64, the root below nranks (<= 0: not known yet), a collective the GPU executor
 * runs, a usable GPU.  0, or the usage exit code after a message saying why. */
int tt_cli_validate_gpu_check(const tt_cli_validate_opts *v, const tt_cli_sweep *s, int ngpus, int nranks);

#endif
