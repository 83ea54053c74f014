/*
 * cli_validate_internal.h - what the files of topo-exec --validate share: the plan of every size
 * (cli_validate.c, over tune's tt_validate_* planning) and the adapter from tune's validation run
 * (tt_validate_measure, its report: tune/tune_validate_run.c, tune_validate_report.c) to exec's
 * measurement of candidates (tt_sweep_candidates*, tt_comm_agree) with host ranks
 * (cli_validate_run.c) and GPU ranks (cli_validate_gpu.c).
 */
#ifndef TT_CLI_VALIDATE_INTERNAL_H
#define TT_CLI_VALIDATE_INTERNAL_H

#include "cli_exec.h"
#include "cli_validate.h"
#include "tt_tune.h"

enum { VX_OK = 0, VX_RUNTIME = 1, VX_USAGE = 2 };
#define VMAXC TT_VALIDATE_MAXC /* candidates per size: the choice + at most 7 runner-ups */

/* engine: which candidates exist, which apply (resolved by the executor itself) */
typedef struct {
    int gpu;
    tt_comm *comm;       /* host ranks: a communicator to resolve plans on (else NULL) */
    tt_gpu_comm *g;      /* GPU ranks (else NULL) */
} vengine;

typedef struct {
    tt_validate_run r;   /* tune's run: the sweep, the plan of every size, the outcome */
    const tt_cli_validate_opts *v;
    const tt_cli_sweep *s;
    int print;           /* this process prints (rank 0) */
    int tty;             /* progress lines on stderr */
} vctx;

/* The run of these options on nranks ranks (tune's tt_validate_run, start time set). */
void vld_init(vctx *x, const tt_cli_validate_opts *v, const tt_cli_sweep *s, int nranks, const char *transport,
              int print);
/* Plan every size: the table's choice and its runner-ups (an exit code, message printed;
 * cli_validate.c). */
int vld_plan_sizes(vctx *x, const vengine *e);
/* The library's sweep options of the run (the plan is each candidate's). */
tt_sweep_opts vld_sweep_opts(const tt_cli_sweep *s);
void vld_print_header(const vctx *x);
/* Every size measured (tt_sweep_candidates on engine e, or e NULL: tt_sweep_candidates_host on
 * the nlocal host ranks comms) and judged by tune's loop, printed (x->print) as judged.  VX_OK,
 * or VX_RUNTIME with x->r.failed and x->r.err set. */
int vld_measure(vctx *x, tt_sweep_engine *e, tt_comm **comms, int nlocal, size_t chunk_bytes);
/* Process ranks, before anything is timed: every rank's exit code so far (rc) and plan fingerprint
 * compared over c (tt_comm_agree, collective); returns the agreed code, messages naming the rank
 * that refused or whose plan differs from rank 0's.  Every rank must call it, also after a
 * failure. */
int vld_agree(const vctx *x, tt_comm *c, int rc);
/* Summary, JSON (-J) and the exit code, after the measurements (x->print: this process prints). */
int vld_finish(vctx *x, int rc);

#endif
