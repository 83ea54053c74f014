/*
 * cli_validate_run.c - topo-exec --validate's measurements, through the library: the candidates of
 * every size go to exec's tt_sweep_candidates (any engine) or tt_sweep_candidates_host (host
 * ranks, threads or one per process), which measure them in interleaved rounds and keep each
 * one's fastest; this file hands them over, prints the progress line and each size as it is
 * done, and names the rank that refused or planned differently (tt_comm_agree, tune's
 * tt_validate_fingerprint).  Host ranks: tt_cli_validate_host; GPU ranks: cli_validate_gpu.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_validate_internal.h"

void vld_start_time(char *b, size_t n)
{
    time_t t = time(NULL);
    struct tm tmv;
    strftime(b, n, "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tmv));
}

tt_sweep_opts vld_sweep_opts(const tt_cli_sweep *s)
{
    tt_sweep_opts o;
    memset(&o, 0, sizeof o);
    o.coll = s->coll;
    o.dtype = s->dtype;
    o.op = s->op;
    o.root = s->root;
    o.minb = s->minb;
    o.maxb = s->maxb;
    o.stepb = s->stepb;
    o.factor = s->factor;
    o.iters = s->iters;
    o.warmup = s->warmup;
    o.agg = s->agg;
    o.check = s->check;
    o.plan = TT_PLAN_DEFAULT;
    return o;
}

/* ---------------------------------------------------------------- measurements */
/* the measured numbers of one size back into tune's candidates */
static void take_results(vsize *z, const tt_sweep_cand_size *m)
{
    for (int k = 0; k < m->ncand; k++)
        for (int p = 0; p < 2; p++) {
            z->c[k].t[p] = m->cand[k].time_us[p];
            z->c[k].algbw[p] = m->cand[k].algbw[p];
            z->c[k].busbw[p] = m->cand[k].busbw[p];
            z->c[k].wrong[p] = m->cand[k].wrong[p];
        }
}

static void on_progress(void *user, int i, int nsz, int k, int round)
{
    const vctx *x = user;
    (void)round;
    if (!x->tty) return;
    char cn[64];
    tt_validate_cand_name(cn, sizeof cn, &x->sz[i].c[k]);
    fprintf(stderr, "\r\033[K# validate %d/%d: %llu bytes, %s ...", i + 1, nsz, (unsigned long long)x->sz[i].bytes, cn);
    fflush(stderr);
}

static void on_size(void *user, int i, const tt_sweep_cand_size *m)
{
    vctx *x = user;
    take_results(&x->sz[i], m);
    vld_judge_size(x, &x->sz[i]);
    if (!x->print) return;
    if (x->tty) fprintf(stderr, "\r\033[K");
    vld_print_size(x, &x->sz[i]);
}

int vld_measure(vctx *x, tt_sweep_engine *e, tt_comm **comms, int nlocal, size_t chunk_bytes)
{
    tt_sweep_cand_size *m = calloc((size_t)(x->nsz ? x->nsz : 1), sizeof *m);
    tt_sweep_cand *c = calloc((size_t)(x->nsz ? x->nsz : 1) * VMAXC, sizeof *c);
    if (!m || !c) {
        free(m);
        free(c);
        x->failed = 1;
        snprintf(x->err, sizeof x->err, "out of memory");
        return VX_RUNTIME;
    }
    for (int i = 0; i < x->nsz; i++) {
        const vsize *z = &x->sz[i];
        m[i] = (tt_sweep_cand_size){z->bytes, z->count, z->nc, &c[(size_t)i * VMAXC]};
        for (int k = 0; k < z->nc; k++)
            m[i].cand[k].plan = (tt_plan){z->c[k].algo, z->c[k].proto, z->c[k].channels, chunk_bytes};
    }
    tt_sweep_cands_opts co = {vld_sweep_opts(x->s), x->v->rounds, on_progress, on_size, x};
    tt_status st = e ? tt_sweep_candidates(e, &co, m, x->nsz) : tt_sweep_candidates_host(comms, nlocal, &co, m, x->nsz);
    int rc = VX_OK;
    if (st != TT_OK) { /* what was measured before the failure still goes to -J */
        x->failed = 1;
        snprintf(x->err, sizeof x->err, "%s", tt_error_message());
        if (x->tty) fprintf(stderr, "\r\033[K");
        for (int i = 0; i < x->nsz; i++) take_results(&x->sz[i], &m[i]);
        rc = VX_RUNTIME;
    }
    free(m);
    free(c);
    return rc;
}

/* ---------------------------------------------------------------- process ranks */
int vld_agree(const vctx *x, tt_comm *c, int rc)
{
    const tt_cli_sweep *s = x->s;
    const long long settings[] = {s->coll, s->dtype, s->op, s->root, s->iters, s->warmup, s->agg, s->check,
                                  x->v->rounds};
    int me = tt_comm_rank(c), who, code;
    int64_t fp = tt_validate_fingerprint(x->sz, x->nsz, settings, (int)(sizeof settings / sizeof *settings));
    if (tt_comm_agree(c, rc, fp, &who, &code) != TT_OK) {
        tt_cli_bad("rank %d: %s", me, tt_error_message());
        return VX_RUNTIME;
    }
    if (who < 0) return VX_OK;
    if (code) { /* that rank refused: its message is its own */
        if (me == 0 && who != 0)
            tt_cli_bad("nothing measured: rank %d refused to validate (exit %d; its message is on its standard error)",
                       who, code);
        return code;
    }
    if (me == 0 || me == who)
        tt_cli_bad("rank %d: the ranks derived different candidates to validate (rank %d's plan differs from rank 0's); "
                   "give every rank the same --table/--topo/--calibration and sweep options", who, who);
    return VX_USAGE;
}

/* ---------------------------------------------------------------- host ranks */
int tt_cli_validate_host(const tt_cli_validate_opts *v, const tt_cli_sweep *s, tt_comm **comms, int nlocal)
{
    vctx x;
    memset(&x, 0, sizeof x);
    x.v = v;
    x.s = s;
    x.nranks = tt_comm_nranks(comms[0]);
    x.transport = tt_comm_transport(comms[0]);
    x.print = tt_comm_rank(comms[0]) == 0;
    char start[64];
    vld_start_time(start, sizeof start);
    vengine e = {0, comms[0], NULL};
    int rc = vld_plan_sizes(&x, &e);
    if (nlocal == 1) rc = vld_agree(&x, comms[0], rc); /* process ranks: every rank the same plan */
    if (!rc) {
        x.tty = s->progress && x.print && isatty(2);
        if (x.print) vld_print_header(&x);
        rc = vld_measure(&x, NULL, comms, nlocal, s->chunk_bytes);
        if (x.failed) tt_cli_bad("%s", x.err);
        rc = vld_finish(&x, rc, start);
    }
    free(x.sz);
    return rc;
}
