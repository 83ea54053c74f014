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
static tt_status issue(tt_comm *c, const tt_cli_sweep *s, void *sb, void *rb, size_t count)
{
    switch (s->coll) {
    case TT_COLL_ALLREDUCE: return tt_allreduce(sb, rb, count, s->dtype, s->op, c);
    case TT_COLL_REDUCESCATTER: return tt_reducescatter(sb, rb, count, s->dtype, s->op, c);
    case TT_COLL_ALLGATHER: return tt_allgather(sb, rb, count, s->dtype, c);
    case TT_COLL_BROADCAST: return tt_broadcast(sb, rb, count, s->dtype, s->root, c);
    default: return tt_reduce_coll(sb, rb, count, s->dtype, s->op, s->root, c);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define HCHECK(expr)                                                                                                  \
    do {                                                                                                              \
        tt_status st_ = (expr);                                                                                       \
        if (st_ == TT_OK) st_ = tt_comm_wait(c);                                                                      \
        if (st_ != TT_OK) return st_;                                                                                 \
    } while (0)

/* One candidate at one size, both placements, exactly as topo-exec's sweep measures a row. */
static tt_status host_measure(tt_comm *c, const tt_cli_sweep *s, size_t count, unsigned char *sbuf,
                              unsigned char *rbuf, unsigned char *exp, vcand *out)
{
    int n = tt_comm_nranks(c), me = tt_comm_rank(c);
    size_t es = tt_dtype_size(s->dtype);
    double alg_mult = 1, bus = 1;
    switch (s->coll) {
    case TT_COLL_ALLREDUCE: bus = 2.0 * (n - 1) / n; break;
    case TT_COLL_REDUCESCATTER:
    case TT_COLL_ALLGATHER: alg_mult = n; bus = (double)(n - 1) / n; break;
    default: break;
    }
    for (int place = 0; place < 2; place++) {
        unsigned char *sb = sbuf, *rb = rbuf;
        size_t in_elems = s->coll == TT_COLL_REDUCESCATTER ? count * n : count;
        size_t out_elems = s->coll == TT_COLL_ALLGATHER ? count * n : count;
        if (place == 1) {
            if (s->coll == TT_COLL_REDUCESCATTER) rb = sbuf + (size_t)me * count * es;
            else if (s->coll == TT_COLL_ALLGATHER) {
                rb = sbuf;
                sb = sbuf + (size_t)me * count * es;
            } else rb = sbuf;
        }
        tt_verify_fill(sb, in_elems, s->dtype, s->op, me, 0, 0);
        for (int w = 0; w < s->warmup; w++) HCHECK(issue(c, s, sb, rb, count));
        double t0 = now_s();
        for (int it = 0; it < s->iters; it++) {
            tt_group_start();
            tt_status st = TT_OK;
            for (int a = 0; a < s->agg && st == TT_OK; a++) st = issue(c, s, sb, rb, count);
            tt_group_end();
            if (st != TT_OK) return st;
        }
        HCHECK(TT_OK);
        double sec = (now_s() - t0) / ((double)s->iters * s->agg);
        HCHECK(tt_allreduce(&sec, &sec, 1, TT_DOUBLE, TT_SUM, c));
        sec /= n;
        long long wrong = -1;
        if (s->check > 0) {
            wrong = 0;
            for (int k = 0; k < s->check && wrong == 0; k++) {
                uint64_t seed = (uint64_t)k + 1;
                tt_verify_fill(sb, in_elems, s->dtype, s->op, me, seed, 0);
                HCHECK(issue(c, s, sb, rb, count));
                switch (s->coll) {
                case TT_COLL_ALLREDUCE: tt_verify_expected(exp, count, s->dtype, s->op, n, seed, 0); break;
                case TT_COLL_REDUCESCATTER:
                    tt_verify_expected(exp, count, s->dtype, s->op, n, seed, (size_t)me * count);
                    break;
                case TT_COLL_ALLGATHER:
                    for (int q = 0; q < n; q++)
                        tt_verify_fill(exp + (size_t)q * count * es, count, s->dtype, s->op, q, seed, 0);
                    break;
                case TT_COLL_BROADCAST: tt_verify_fill(exp, count, s->dtype, s->op, s->root, seed, 0); break;
                default:
                    if (me == s->root) tt_verify_expected(exp, count, s->dtype, s->op, n, seed, 0);
                    break;
                }
                int64_t w64 = 0;
                if (s->coll != TT_COLL_REDUCE || me == s->root)
                    w64 = (int64_t)tt_verify_count_wrong(rb, exp, out_elems, s->dtype);
                HCHECK(tt_allreduce(&w64, &w64, 1, TT_INT64, TT_SUM, c));
                wrong = w64;
            }
        }
        out->t[place] = sec * 1e6;
        out->algbw[place] = sec > 0 ? (double)count * es * alg_mult / 1e9 / sec : 0;
        out->busbw[place] = out->algbw[place] * bus;
        out->wrong[place] = wrong;
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
    int n = tt_comm_nranks(c), me = tt_comm_rank(c);
    size_t es = tt_dtype_size(s->dtype);
    size_t maxcount = 0;
    for (int i = 0; i < x->nsz; i++)
        if (x->sz[i].count > maxcount) maxcount = x->sz[i].count;
    size_t in_max = s->coll == TT_COLL_REDUCESCATTER ? maxcount * n : maxcount;
    size_t out_max = s->coll == TT_COLL_ALLGATHER ? maxcount * n : maxcount;
    size_t big = (in_max > out_max ? in_max : out_max) * es + 64;
    unsigned char *sbuf = calloc(1, big), *rbuf = calloc(1, big), *exp = malloc(out_max * es + 64);
    if (!sbuf || !rbuf || !exp) {
        char m[200];
        snprintf(m, sizeof m, "rank %d: cannot allocate 3 buffers of %zu bytes (reduce -e)", me, big);
        fail_x(x, m);
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
                tt_plan plan = {r.algo, r.proto, r.channels, s->chunk_bytes};
                tt_comm_set_plan(c, &plan);
                if (x->tty && me == 0) {
                    char cn[64];
                    vld_cand_name(cn, sizeof cn, &r);
                    fprintf(stderr, "\r\033[K# validate %d/%d: %llu bytes, %s ...", i + 1, x->nsz,
                            (unsigned long long)z->bytes, cn);
                    fflush(stderr);
                }
                if ((st = host_measure(c, s, z->count, sbuf, rbuf, exp, &r)) != TT_OK) {
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
    tt_comm_set_plan(c, &plan_default);
    free(sbuf);
    free(rbuf);
    free(exp);
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
/* One candidate at one size on GPU ranks, as topo-exec's GPU sweep measures a row (bin/cli_gpu.c):
 * warm-up and timed AllReduces of the whole batch, then a check on fresh inputs. */
static tt_status gpu_measure(tt_gpu_comm *g, const tt_cli_sweep *s, size_t count, void **sb, void **rb,
                             unsigned char *want, unsigned char *got, vcand *out)
{
    int n = tt_gpu_comm_nranks(g);
    size_t es = tt_dtype_size(s->dtype);
    tt_plan plan = {out->algo, out->proto, out->channels, 0}; /* chunk: the GPU executor's default, as -g runs */
    const uint64_t seed = 12345;
    tt_status st;
    for (int ip = 0; ip < 2; ip++) {
        const void *src[64];
        void *dst[64];
        for (int r = 0; r < n; r++) {
            dst[r] = rb[r];
            src[r] = ip ? rb[r] : sb[r];
            if (ip && (st = tt_gpu_memcpy(rb[r], sb[r], count * es)) != TT_OK) return st;
        }
        for (int it = 0; it < s->warmup; it++)
            if ((st = tt_gpu_allreduce(g, src, dst, count, s->dtype, s->op, &plan)) != TT_OK) return st;
        if ((st = tt_gpu_comm_sync(g)) != TT_OK) return st;
        double t0 = now_s();
        for (int it = 0; it < s->iters; it++)
            for (int a = 0; a < s->agg; a++)
                if ((st = tt_gpu_allreduce(g, src, dst, count, s->dtype, s->op, &plan)) != TT_OK) return st;
        if ((st = tt_gpu_comm_sync(g)) != TT_OK) return st;
        double sec = (now_s() - t0) / ((double)s->iters * s->agg);
        out->t[ip] = sec * 1e6;
        out->algbw[ip] = sec > 0 ? (double)count * es / 1e9 / sec : 0;
        out->busbw[ip] = out->algbw[ip] * 2.0 * (n - 1) / n;
        out->wrong[ip] = -1;
        if (s->check > 0) {
            for (int r = 0; r < n; r++) {
                if ((st = tt_gpu_memset(rb[r], 0xEE, count * es)) != TT_OK) return st;
                if (ip && (st = tt_gpu_memcpy(rb[r], sb[r], count * es)) != TT_OK) return st;
            }
            if ((st = tt_gpu_allreduce(g, src, dst, count, s->dtype, s->op, &plan)) != TT_OK ||
                (st = tt_gpu_comm_sync(g)) != TT_OK)
                return st;
            tt_verify_expected(want, count, s->dtype, s->op, n, seed, 0);
            out->wrong[ip] = 0;
            for (int r = 0; r < n; r++) {
                if ((st = tt_gpu_memcpy(got, rb[r], count * es)) != TT_OK) return st;
                out->wrong[ip] += (long long)tt_verify_count_wrong(got, want, count, s->dtype);
            }
        }
    }
    return TT_OK;
}

int tt_cli_validate_gpu(const tt_cli_validate_opts *v, const tt_cli_sweep *s, int ngpus)
{
    if (s->coll != TT_COLL_ALLREDUCE)
        return tt_cli_bad("-g %d --validate: GPU ranks run all_reduce only; use --host N for %s", ngpus,
                          vld_coll_name(s->coll));
    if (ngpus > 64) return tt_cli_bad("-g %d: at most 64 GPU ranks", ngpus);
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
    void *sb[64] = {0}, *rb[64] = {0};
    unsigned char *h = NULL, *want = NULL, *got = NULL;
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
    h = malloc(maxcount * es + 16);
    want = malloc(maxcount * es + 16);
    got = malloc(maxcount * es + 16);
    if (!h || !want || !got) {
        rc = tt_cli_bad("out of host memory for %zu-byte buffers", maxcount * es);
        goto out;
    }
    for (int r = 0; r < ngpus; r++) {
        if (tt_gpu_alloc(g, r, maxcount * es + 16, &sb[r]) != TT_OK ||
            tt_gpu_alloc(g, r, maxcount * es + 16, &rb[r]) != TT_OK) {
            tt_cli_bad("%s", tt_error_message());
            rc = VX_RUNTIME;
            goto out;
        }
        tt_verify_fill(h, maxcount, s->dtype, s->op, r, 12345, 0);
        if (tt_gpu_memcpy(sb[r], h, maxcount * es) != TT_OK) {
            tt_cli_bad("%s", tt_error_message());
            rc = VX_RUNTIME;
            goto out;
        }
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
                if (gpu_measure(g, s, z->count, sb, rb, want, got, &r) != TT_OK) fail_x(&x, tt_error_message());
                else keep_best(&z->c[k], &r, round == 0);
            }
        if (x.failed) break;
        vld_judge_size(&x, z);
        vld_print_size(&x, z);
    }
    if (x.failed) tt_cli_bad("%s", x.err);
    rc = vld_finish(&x, VX_OK, start, 1);
out:
    for (int r = 0; r < ngpus; r++) {
        if (sb[r]) tt_gpu_free(g, r, sb[r]);
        if (rb[r]) tt_gpu_free(g, r, rb[r]);
    }
    free(h);
    free(want);
    free(got);
    tt_gpu_comm_destroy(g);
    free(x.sz);
    pthread_mutex_destroy(&x.mu);
    return rc;
}
