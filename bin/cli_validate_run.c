/*
 * cli_validate_run.c - topo-exec --validate's measurements: every candidate of a size measured
 * back to back (interleaved rounds), as a sweep row is measured, on any engine (vld_measure_sizes);
 * the plan agreement of process ranks (vld_agree); host ranks (threads or one rank per process).
 * GPU ranks: cli_validate_gpu.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_validate_internal.h"

static const tt_plan plan_default = TT_PLAN_DEFAULT;

/* Fold one round's measurement into the candidate: the fastest time per placement counts (noise
 * only ever adds time), wrong results are never hidden. */
static void keep_best(vcand *dst, const vcand *r, int first)
{
    for (int p = 0; p < 2; p++) {
        if (first || (r->t[p] > 0 && (dst->t[p] <= 0 || r->t[p] < dst->t[p]))) {
            dst->t[p] = r->t[p];
            dst->algbw[p] = r->algbw[p];
            dst->busbw[p] = r->busbw[p];
        }
        if (first || r->wrong[p] > dst->wrong[p]) dst->wrong[p] = r->wrong[p];
    }
}

void vld_fail(vctx *x, const char *msg)
{
    pthread_mutex_lock(&x->mu);
    if (!x->failed) {
        x->failed = 1;
        snprintf(x->err, sizeof x->err, "%s", msg);
    }
    pthread_mutex_unlock(&x->mu);
}

/* ---------------------------------------------------------------- any engine */
tt_sweep_opts vld_sweep_opts(const tt_cli_sweep *s, const vcand *c, size_t chunk_bytes)
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
    o.plan = (tt_plan){c->algo, c->proto, c->channels, chunk_bytes};
    return o;
}

/* One candidate at one size, both placements, exactly as topo-exec's sweep measures a row. */
static tt_status measure(tt_sweep_engine *e, const tt_cli_sweep *s, const vsize *z, size_t chunk_bytes, vcand *out)
{
    tt_sweep_opts o = vld_sweep_opts(s, out, chunk_bytes);
    tt_sweep_row row;
    row.index = 0;
    tt_status st = tt_sweep_one(e, &o, z->count, z->bytes, &row);
    if (st != TT_OK) return st;
    for (int p = 0; p < 2; p++) {
        out->t[p] = row.time_us[p];
        out->algbw[p] = row.algbw[p];
        out->busbw[p] = row.busbw[p];
        out->wrong[p] = row.wrong[p];
    }
    return TT_OK;
}

int vld_measure_sizes(vctx *x, tt_sweep_engine *e, size_t chunk_bytes, int me, int store)
{
    for (int i = 0; i < x->nsz; i++) { /* every rank runs the same sequence; a failure ends it */
        vsize *z = &x->sz[i];
        for (int round = 0; round < x->v->rounds; round++)
            for (int k = 0; k < z->nc; k++) {
                vcand r = z->c[k];
                if (x->tty && me == 0) {
                    char cn[64];
                    vld_cand_name(cn, sizeof cn, &r);
                    fprintf(stderr, "\r\033[K# validate %d/%d: %llu bytes, %s ...", i + 1, x->nsz,
                            (unsigned long long)z->bytes, cn);
                    fflush(stderr);
                }
                if (measure(e, x->s, z, chunk_bytes, &r) != TT_OK) {
                    vld_fail(x, tt_error_message());
                    if (x->tty && me == 0) fprintf(stderr, "\r\033[K");
                    return VX_RUNTIME;
                }
                if (store) keep_best(&z->c[k], &r, round == 0);
            }
        if (store) vld_judge_size(x, z);
        if (me == 0) {
            if (x->tty) fprintf(stderr, "\r\033[K");
            vld_print_size(x, z);
        }
    }
    return VX_OK;
}

/* ---------------------------------------------------------------- process ranks */
int vld_agree(vctx *x, tt_comm *c, int rc)
{
    int me = tt_comm_rank(c), n = tt_comm_nranks(c);
    int64_t mine[2] = {rc, vld_plan_hash(x)};
    int64_t *all = calloc((size_t)n * 2, sizeof *all);
    if (!all) {
        tt_cli_bad("rank %d: out of memory comparing the plans of %d ranks", me, n);
        return VX_RUNTIME;
    }
    tt_comm_set_plan(c, &plan_default);
    tt_status st = tt_allgather(mine, all, 2, TT_INT64, c);
    if (st == TT_OK) st = tt_comm_wait(c);
    if (st != TT_OK) {
        tt_cli_bad("rank %d: comparing the plans of the ranks: %s", me, tt_error_message());
        free(all);
        return VX_RUNTIME;
    }
    int out = VX_OK;
    for (int r = 0; r < n && !out; r++)
        if (all[2 * r]) { /* that rank refused: its message is its own */
            out = (int)all[2 * r];
            if (me == 0 && r != 0)
                tt_cli_bad("nothing measured: rank %d refused to validate (exit %d; its message is on its standard "
                           "error)", r, out);
        }
    for (int r = 1; r < n && !out; r++)
        if (all[2 * r + 1] != all[1]) {
            if (me == 0 || me == r)
                tt_cli_bad("rank %d: the ranks derived different candidates to validate (rank %d's plan differs from "
                           "rank 0's); give every rank the same --table/--topo/--calibration and sweep options", r, r);
            out = VX_USAGE;
        }
    free(all);
    return out;
}

/* ---------------------------------------------------------------- host ranks */
typedef struct {
    vctx *x;
    tt_comm *c;
    int store; /* this rank records the results */
    int rc;
} hrank;

static void *host_rank(void *p)
{
    hrank *h = p;
    vctx *x = h->x;
    tt_comm *c = h->c;
    size_t maxcount = 0;
    for (int i = 0; i < x->nsz; i++)
        if (x->sz[i].count > maxcount) maxcount = x->sz[i].count;
    tt_sweep_engine e;
    memset(&e, 0, sizeof e);
    vcand none;
    memset(&none, 0, sizeof none);
    tt_sweep_opts bo = vld_sweep_opts(x->s, &none, x->s->chunk_bytes);
    if (tt_sweep_engine_host(&e, c) != TT_OK || tt_sweep_prepare(&e, &bo, maxcount) != TT_OK) {
        vld_fail(x, tt_error_message());
        h->rc = VX_RUNTIME;
    } else {
        h->rc = vld_measure_sizes(x, &e, x->s->chunk_bytes, tt_comm_rank(c), h->store);
    }
    tt_sweep_engine_release(&e);
    tt_comm_set_plan(c, &plan_default);
    return NULL;
}

void vld_start_time(char *b, size_t n)
{
    time_t t = time(NULL);
    struct tm tmv;
    strftime(b, n, "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tmv));
}

int tt_cli_validate_host(const tt_cli_validate_opts *v, const tt_cli_sweep *s, tt_comm **comms, int nlocal)
{
    vctx x;
    memset(&x, 0, sizeof x);
    x.v = v;
    x.s = s;
    x.nranks = tt_comm_nranks(comms[0]);
    x.transport = tt_comm_transport(comms[0]);
    pthread_mutex_init(&x.mu, NULL);
    char start[64];
    vld_start_time(start, sizeof start);
    vengine e = {0, comms[0], NULL};
    int me0 = tt_comm_rank(comms[0]) == 0;
    int rc = vld_plan_sizes(&x, &e);
    if (nlocal == 1) rc = vld_agree(&x, comms[0], rc); /* process ranks: every rank the same plan */
    if (rc) goto out;
    x.tty = s->progress && me0 && isatty(2);
    if (me0) vld_print_header(&x);
    if (nlocal == 1) {
        hrank h = {&x, comms[0], 1, 0};
        host_rank(&h);
        rc = h.rc;
    } else {
        pthread_t *th = calloc((size_t)nlocal, sizeof *th);
        hrank *hr = calloc((size_t)nlocal, sizeof *hr);
        if (!th || !hr) {
            free(th);
            free(hr);
            rc = tt_cli_bad("out of memory");
            goto out;
        }
        for (int r = 0; r < nlocal; r++) {
            hr[r] = (hrank){&x, comms[r], tt_comm_rank(comms[r]) == 0, 0};
            pthread_create(&th[r], NULL, host_rank, &hr[r]);
        }
        for (int r = 0; r < nlocal; r++) {
            pthread_join(th[r], NULL);
            if (hr[r].rc && (!rc || hr[r].rc == VX_USAGE)) rc = hr[r].rc;
        }
        free(th);
        free(hr);
    }
    if (x.failed) tt_cli_bad("%s", x.err);
    rc = vld_finish(&x, rc, start, me0);
out:
    free(x.sz);
    pthread_mutex_destroy(&x.mu);
    return rc;
}
