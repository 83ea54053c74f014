/*
 * cli_validate_run.c - topo-exec --validate on host ranks (threads or one rank per process) and
 * on GPU ranks: every candidate of a size measured back to back, as a sweep row is measured.
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

static void fail_x(vctx *x, const char *msg)
{
    pthread_mutex_lock(&x->mu);
    if (!x->failed) {
        x->failed = 1;
        snprintf(x->err, sizeof x->err, "%s", msg);
    }
    pthread_mutex_unlock(&x->mu);
}

/* ---------------------------------------------------------------- host ranks */
/* The library's sweep options for one candidate (tt_sweep_one measures it as a sweep row). */
static tt_sweep_opts cand_opts(const tt_cli_sweep *s, const vcand *c, size_t chunk_bytes)
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
    tt_sweep_opts o = cand_opts(s, out, chunk_bytes);
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
    const tt_cli_sweep *s = x->s;
    int me = tt_comm_rank(c);
    size_t maxcount = 0;
    for (int i = 0; i < x->nsz; i++)
        if (x->sz[i].count > maxcount) maxcount = x->sz[i].count;
    tt_sweep_engine e;
    memset(&e, 0, sizeof e);
    vcand none;
    memset(&none, 0, sizeof none);
    tt_sweep_opts bo = cand_opts(s, &none, s->chunk_bytes);
    if (tt_sweep_engine_host(&e, c) != TT_OK || tt_sweep_prepare(&e, &bo, maxcount) != TT_OK) {
        fail_x(x, tt_error_message());
        h->rc = VX_RUNTIME;
        goto out;
    }
    /* every rank must validate the same plan: compare fingerprints before timing anything */
    int64_t hv[2] = {vld_plan_hash(x), -vld_plan_hash(x)};
    tt_comm_set_plan(c, &plan_default);
    tt_status st = tt_allreduce(hv, hv, 2, TT_INT64, TT_MAX, c);
    if (st == TT_OK) st = tt_comm_wait(c);
    if (st != TT_OK) {
        fail_x(x, tt_error_message());
        h->rc = VX_RUNTIME;
        goto out;
    }
    if (hv[0] != -hv[1]) {
        char m[300];
        snprintf(m, sizeof m, "rank %d: the ranks derived different candidates to validate; give every rank the same "
                              "--table/--topo/--calibration and sweep options", me);
        fail_x(x, m);
        h->rc = VX_USAGE;
        goto out;
    }
    for (int i = 0; i < x->nsz; i++) { /* every rank runs the same sequence; a failure ends it below */
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
                if ((st = measure(&e, s, z, s->chunk_bytes, &r)) != TT_OK) {
                    fail_x(x, tt_error_message());
                    h->rc = VX_RUNTIME;
                    goto out;
                }
                if (h->store) keep_best(&z->c[k], &r, round == 0);
            }
        if (h->store) vld_judge_size(x, z);
        if (me == 0) {
            if (x->tty) fprintf(stderr, "\r\033[K");
            vld_print_size(x, z);
        }
    }
out:
    tt_sweep_engine_release(&e);
    tt_comm_set_plan(c, &plan_default);
    return NULL;
}

static void start_time(char *b, size_t n)
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
    start_time(start, sizeof start);
    vengine e = {0, comms[0], NULL};
    int me0 = tt_comm_rank(comms[0]) == 0;
    int rc = vld_plan_sizes(&x, &e);
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

/* ---------------------------------------------------------------- GPU ranks */
/* A candidate on GPU ranks runs as topo-exec's GPU sweep measures a row (the library's GPU
 * engine): warm-up and timed calls of the collective (-t: every collective the GPU executor
 * runs, with -r for the rooted ones), then a check on fresh inputs; the chunk is the GPU
 * executor's default, as -g runs.  The candidates are the (algorithm, protocol) pairs the
 * capability table lists for that collective (cli_validate.c, engine_candidates). */

int tt_cli_validate_gpu(const tt_cli_validate_opts *v, const tt_cli_sweep *s, int ngpus)
{
    char cw[256];
    /* the command line first (the same answer with or without a GPU), then what this build and
     * machine can run */
    if (ngpus > 64) return tt_cli_bad("-g %d: at most 64 GPU ranks", ngpus);
    if ((s->coll == TT_COLL_BROADCAST || s->coll == TT_COLL_REDUCE) && (s->root < 0 || s->root >= ngpus))
        return tt_cli_bad("-g %d --validate -t %s -r %d: root must be below the number of GPU ranks (%d)", ngpus,
                          vld_coll_name(s->coll), s->root, ngpus);
    if (!tt_exec_supports(TT_EXEC_GPU, s->coll, TT_ALGO_DEFAULT, TT_PROTO_DEFAULT, 0, cw, sizeof cw))
        return tt_cli_bad("-g %d --validate -t %s: %s; use --host N", ngpus, vld_coll_name(s->coll), cw);
    char why[256];
    if (!tt_gpu_available(why, sizeof why))
        return tt_cli_bad("-g %d --validate: %s; use --host N for host ranks", ngpus, why);
    vctx x;
    memset(&x, 0, sizeof x);
    x.v = v;
    x.s = s;
    x.nranks = ngpus;
    x.transport = "gpu";
    pthread_mutex_init(&x.mu, NULL);
    char start[64];
    start_time(start, sizeof start);
    tt_gpu_comm *g = NULL;
    tt_sweep_engine se;
    memset(&se, 0, sizeof se);
    int rc;
    if (tt_gpu_comm_init(&g, ngpus, NULL) != TT_OK) {
        tt_cli_bad("%s", tt_error_message());
        pthread_mutex_destroy(&x.mu);
        return VX_RUNTIME;
    }
    vengine e = {1, NULL, g};
    rc = vld_plan_sizes(&x, &e);
    if (rc) goto out;
    size_t es = tt_dtype_size(s->dtype), maxcount = 0;
    for (int i = 0; i < x.nsz; i++)
        if (x.sz[i].count > maxcount) maxcount = x.sz[i].count;
    vcand none;
    memset(&none, 0, sizeof none);
    tt_sweep_opts bo = cand_opts(s, &none, 0);
    tt_status st = tt_sweep_engine_gpu(&se, g, NULL);
    if (st == TT_OK) st = tt_sweep_prepare(&se, &bo, maxcount);
    if (st != TT_OK) {
        /* host memory is a usage matter (smaller -e), device memory a runtime failure */
        if (st == TT_ERR_NOMEM && !strncmp(tt_error_message(), "out of host memory", 18)) {
            rc = tt_cli_bad("out of host memory for %zu-byte buffers", maxcount * es);
        } else {
            tt_cli_bad("%s", tt_error_message());
            rc = VX_RUNTIME;
        }
        goto out;
    }
    if (tt_gpu_comm_is_virtual(g))
        printf("# VIRTUAL RANKS: %d ranks share GPU(s): the verdicts are about this setup, not about %d GPUs\n",
               ngpus, ngpus);
    vld_print_header(&x);
    for (int i = 0; i < x.nsz && !x.failed; i++) {
        vsize *z = &x.sz[i];
        for (int round = 0; round < v->rounds && !x.failed; round++)
            for (int k = 0; k < z->nc && !x.failed; k++) {
                vcand r = z->c[k];
                if (measure(&se, s, z, 0, &r) != TT_OK) fail_x(&x, tt_error_message());
                else keep_best(&z->c[k], &r, round == 0);
            }
        if (x.failed) break;
        vld_judge_size(&x, z);
        vld_print_size(&x, z);
    }
    if (x.failed) tt_cli_bad("%s", x.err);
    rc = vld_finish(&x, VX_OK, start, 1);
out:
    tt_sweep_engine_release(&se);
    tt_gpu_comm_destroy(g);
    free(x.sz);
    pthread_mutex_destroy(&x.mu);
    return rc;
}
