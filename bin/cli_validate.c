/*
 * cli_validate.c - topo-exec --validate: was the tuning table's choice right on this machine?
 * This file: options, and the executor's side of the plan of every size (exec:
 * tt_exec_runnable_plans, tt_exec_plan_check) handed to tune, which loads and checks the table,
 * ranks the candidates by the model and picks the choice with its runner-ups
 * (tt_validate_prepare, tune/tune_validate_prepare.c, tune_validate.c); cli_validate_run.c runs
 * tune's loop (tt_validate_measure, verdicts and report in tune) with exec's tt_sweep_candidates
 * measuring the candidates.
 *
 * For every size of the sweep the table's choice (algorithm, protocol, channels) and its nearest
 * runner-ups (the next candidates by the model's predicted time that this engine can run) are
 * measured back to back, like a normal sweep row (same warm-up, iterations, both placements,
 * result checks), so that all candidates of one size see the same machine state.  A candidate's
 * time is the faster placement (as topo-tune's measurement readers take it).  Verdict per size:
 *   RIGHT          the choice was the fastest measured candidate;
 *   within noise   slower than the fastest by at most the margin (default 5%);
 *   WRONG by X%    slower by more (X = choice / fastest - 1).
 * Consecutive wrong sizes with the same choice form a range to fix.  Exit 3 when a size is
 * wrong (after 1 runtime failure and 7 wrong results), 2 for bad input, 0 otherwise.
 *
 * The table is topo-tune's JSON table (--table) or computed here from the topotune model
 * (--topo, --calibration) over the candidates this engine runs.  Host ranks: ring, tree,
 * halving-doubling (power-of-two ranks), hierarchical; simple protocol, one channel.  GPU ranks:
 * what exec's capability table lists per collective (AllReduce: ring and tree; AllGather,
 * ReduceScatter, Broadcast, Reduce: ring), plus hierarchical AllReduce where process ranks span
 * hosts (tt_gpu_comm_algos), with its protocols (simple, LL, LL128), each asked per size whether
 * it runs here (LL128 only between ranks of one GPU or over NVLink, never on net pairs).  A GPU
 * table's nodes must be the hosts the ranks span.  Every rank derives the same
 * candidates from the same inputs; a fingerprint of the plan (tt_validate_fingerprint) is compared
 * across ranks (tt_comm_agree) before anything is timed, and the executor's collective headers (which carry the algorithm) catch
 * any later disagreement.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_validate_internal.h"
#include "tt_tune.h"

/* ---------------------------------------------------------------- options */
void tt_cli_validate_defaults(tt_cli_validate_opts *v)
{
    memset(v, 0, sizeof *v);
    /* ENGINEERING CHOICE: 5% is about the run-to-run spread of a quiet host or GPU sweep at
     * bandwidth-bound sizes (docs/log/2026-11-29-exec-vs-mpi-loaded.md); topo-tune
     * --judge-choices uses the same default tolerance.  Raise it on a busy or oversubscribed
     * machine. */
    v->margin = 0.05;
    /* ENGINEERING CHOICE: the two nearest runner-ups catch a wrong crossover (the neighbour in
     * the model's ranking is what wins when the model is off) at 3x the time of one sweep. */
    v->runners_up = 2;
    v->rounds = 1;
}

int tt_cli_validate_option(tt_cli_validate_opts *v, const char *name, const char *value)
{
    if (!strcmp(name, "--validate-margin")) {
        char *end = NULL;
        double d = value ? strtod(value, &end) : NAN;
        if (!value || end == value || *end || !(d >= 0 && d <= 10000))
            return tt_cli_bad("%s '%s' must be a percentage in 0..10000", name, value ? value : "");
        v->margin = d / 100;
        return 0;
    }
    long long n;
    if (!strcmp(name, "--validate-rounds")) {
        if (tt_cli_int_option(name, value, 1, 100, &n)) return TT_CLI_EXIT_ERROR;
        v->rounds = (int)n;
        return 0;
    }
    if (tt_cli_int_option(name, value, 0, TT_VALIDATE_MAXC - 1, &n)) return TT_CLI_EXIT_ERROR;
    v->runners_up = (int)n;
    return 0;
}

/* ---------------------------------------------------------------- candidates (exec's answers) */
typedef struct {
    vctx *x;
    const vengine *e;
} vplan;

/* every (algorithm, protocol) the executor runs for this collective at this count (exec's
 * capability table; GPU ranks: this communicator's algorithms, tt_gpu_comm_algos) */
static int engine_candidates(void *user, size_t count, tt_validate_cand *out, int max)
{
    const vplan *p = user;
    tt_plan req[VMAXC], eff[VMAXC];
    int n = tt_exec_runnable_plans(p->e->comm, p->e->g, p->x->s->coll, count, p->x->s->dtype, req, eff,
                                   max < VMAXC ? max : VMAXC);
    for (int k = 0; k < n; k++)
        out[k] = (tt_validate_cand){.algo = req[k].algo, .proto = req[k].proto, .channels = req[k].channels,
                         .ran_channels = eff[k].channels};
    return n;
}

/* the table's choice with the channels this engine runs, then exec's answer for it */
static int choice_runs(void *user, size_t count, tt_validate_cand *c, char *why, size_t wl)
{
    const vplan *p = user;
    if (!p->e->gpu) {
        if (c->channels > 1) p->x->r.host_channels_note = 1;
        c->channels = 1; /* host transports run one channel (tt_exec.h) */
    } else if (c->channels > tt_gpu_comm_max_channels(p->e->g)) {
        c->channels = tt_gpu_comm_max_channels(p->e->g);
    }
    tt_plan req = {c->algo, c->proto, c->channels, 0}, eff;
    if (tt_exec_plan_check(p->e->comm, p->e->g, p->x->s->coll, count, p->x->s->dtype, &req, &eff) != TT_OK) {
        snprintf(why, wl, "%s", tt_error_message());
        return 0;
    }
    c->ran_channels = eff.channels;
    return 1;
}

int vld_plan_sizes(vctx *x, const vengine *e)
{
    vplan vp = {x, e};
    tt_validate_engine ve = {engine_candidates, choice_runs, &vp};
    tt_status st = tt_validate_prepare(&x->r, x->v->table, tt_setting("TOPOTUNE_CALIBRATION") /* --calibration */,
                                       e->gpu, e->gpu ? tt_gpu_comm_hosts(e->g) : 0, tt_dtype_size(x->s->dtype), &ve);
    if (st == TT_OK) return VX_OK;
    /* a table or model that did not load: the library's message; the run does not fit: a usage error */
    return st == TT_ERR_MISMATCH ? tt_cli_bad("%s", tt_error_message()) : tt_cli_fail(st);
}
