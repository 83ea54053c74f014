/*
 * cli_validate_internal.h - what the files of topo-exec --validate share: the plan of every size
 * (cli_validate.c, over tune's tt_validate_* planning), its reports (cli_validate_report.c, over
 * tune's verdicts), the glue to the library's measurement of candidates (cli_validate_run.c, over
 * exec's tt_sweep_candidates*, tt_comm_agree) with host ranks, and GPU ranks (cli_validate_gpu.c).
 */
#ifndef TT_CLI_VALIDATE_INTERNAL_H
#define TT_CLI_VALIDATE_INTERNAL_H

#include "cli_exec.h"
#include "cli_validate.h"
#include "tt_tune.h"

enum { VX_OK = 0, VX_RUNTIME = 1, VX_USAGE = 2, VX_WRONG_RESULTS = 7 };
/* verdicts, candidates and sizes are tune's (tt_tune.h, tune/tune_validate.c, tune_verdict.c) */
enum { V_SKIP = TT_VERDICT_SKIP, V_RIGHT = TT_VERDICT_RIGHT, V_NOISE = TT_VERDICT_NOISE, V_WRONG = TT_VERDICT_WRONG,
       V_ONLY = TT_VERDICT_ONLY };

#define VMAXC TT_VALIDATE_MAXC /* candidates per size: the choice + at most 7 runner-ups */

typedef tt_validate_cand vcand; /* algo, proto, channels, ran_channels, pred_us, t[2], busbw[2], algbw[2], wrong[2] */
typedef tt_validate_size vsize; /* bytes, count, nc, c[VMAXC], note, verdict, best, loss */

/* engine: which candidates exist, which apply (resolved by the executor itself) */
typedef struct {
    int gpu;
    tt_comm *comm;       /* host ranks: a communicator to resolve plans on (else NULL) */
    tt_gpu_comm *g;      /* GPU ranks (else NULL) */
} vengine;

typedef struct {
    const tt_cli_validate_opts *v;
    const tt_cli_sweep *s;
    int nranks;
    const char *transport;
    char table_desc[600];
    char model_desc[600];
    int ranked;          /* runner-ups ordered by prediction */
    int host_channels_note;
    char setup[300];     /* a header line about the ranks (GPU process ranks: hosts, transports) */
    vsize *sz;
    int nsz;
    /* run state */
    int print;           /* this process prints (rank 0) */
    int failed;          /* the measurement failed: err says why */
    char err[1200];
    int tty;
} vctx;

/* planning (cli_validate.c); collectives are named by topo-exec's -t names (tt_cli_coll_name) */
/* Plan every size: the table's choice and its runner-ups (an exit code, message printed). */
int vld_plan_sizes(vctx *x, const vengine *e);

/* verdicts (tt_validate_judge_size with the margin) and output (cli_validate_report.c) */
void vld_judge_size(const vctx *x, vsize *z);
void vld_print_header(const vctx *x);
void vld_print_size(const vctx *x, const vsize *z);
/* Summary, JSON (-J) and the exit code, after the measurements (x->print: this process prints). */
int vld_finish(vctx *x, int rc, const char *start);

/* measurements (cli_validate_run.c) */
void vld_start_time(char *b, size_t n);   /* "YYYY-MM-DD HH:MM:SS" UTC, for -J */
/* The library's sweep options of the run (the plan is each candidate's). */
tt_sweep_opts vld_sweep_opts(const tt_cli_sweep *s);
/* Every size: its candidates in x->v->rounds interleaved rounds (tt_sweep_candidates on engine e,
 * or e NULL: tt_sweep_candidates_host on the nlocal host ranks comms), kept in x->sz, judged and
 * printed (x->print) per size.  VX_OK, or VX_RUNTIME with x->failed and x->err set. */
int vld_measure(vctx *x, tt_sweep_engine *e, tt_comm **comms, int nlocal, size_t chunk_bytes);
/* Process ranks, before anything is timed: every rank's exit code so far (rc) and plan fingerprint
 * compared over c (tt_comm_agree, collective); returns the agreed code, messages naming the rank
 * that refused or whose plan differs from rank 0's.  Every rank must call it, also after a
 * failure. */
int vld_agree(const vctx *x, tt_comm *c, int rc);

#endif
