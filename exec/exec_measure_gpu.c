/*
 * exec_measure_gpu.c - the measuring engine of GPU ranks (docs/exec.md, "Measuring"): one
 * engine drives every local rank of a tt_gpu_comm (thread mode: all ranks; process mode: this
 * process's rank, times averaged and #wrong summed over the host communicator).  AllReduce
 * only.  Inputs are filled once per rank (seed 12345); in place starts from a copy of them; the
 * check runs on restored inputs.  The launcher is topotune's tt_gpu_allreduce, or NCCL
 * (exec_measure_nccl.c).
 */
#include <stdlib.h>
#include <string.h>

#include "exec_measure_internal.h"

#define GPU_MEASURE_MAX_RANKS 64
static const uint64_t gpu_seed = 12345;

typedef struct {
    tt_gpu_comm *g;
    tt_comm *hc;
    int nloc;
    void *sb[GPU_MEASURE_MAX_RANKS], *rb[GPU_MEASURE_MAX_RANKS];
    unsigned char *h, *want, *got;
    size_t cap;                /* prepared count, for inputs of this type and op */
    tt_dtype dtype;
    tt_redop op;
    exec_measure_launcher l;
} gpu_eng;

/* topotune's own kernels */
static tt_status tt_launch(void *ctx, tt_gpu_comm *g, const void *const *src, void *const *dst, size_t count,
                           const tt_sweep_opts *o)
{
    (void)ctx;
    return tt_gpu_allreduce(g, src, dst, count, o->dtype, o->op, &o->plan);
}
static tt_status tt_sync(void *ctx, tt_gpu_comm *g)
{
    (void)ctx;
    return tt_gpu_comm_sync(g);
}

static void gpu_free_bufs(gpu_eng *x)
{
    for (int i = 0; i < x->nloc; i++) {
        int r = tt_gpu_comm_local_rank(x->g, i);
        if (x->sb[i]) tt_gpu_free(x->g, r, x->sb[i]);
        if (x->rb[i]) tt_gpu_free(x->g, r, x->rb[i]);
        x->sb[i] = x->rb[i] = NULL;
    }
    free(x->h);
    free(x->want);
    free(x->got);
    x->h = x->want = x->got = NULL;
    x->cap = 0;
}

static tt_status gpu_prepare(tt_sweep_engine *e, const tt_sweep_opts *o, size_t maxcount)
{
    gpu_eng *x = e->self;
    size_t es = tt_dtype_size(o->dtype);
    if (x->cap && x->cap >= maxcount && x->dtype == o->dtype && x->op == o->op) return TT_OK; /* prepared already */
    gpu_free_bufs(x);
    x->h = malloc(maxcount * es + 16);
    x->want = malloc(maxcount * es + 16);
    x->got = malloc(maxcount * es + 16);
    if (!x->h || !x->want || !x->got)
        return tt_error_set(TT_ERR_NOMEM, "out of host memory for %zu-byte buffers", maxcount * es);
    tt_status st;
    for (int i = 0; i < x->nloc; i++) {
        int r = tt_gpu_comm_local_rank(x->g, i);
        if ((st = tt_gpu_alloc(x->g, r, maxcount * es + 16, &x->sb[i])) != TT_OK ||
            (st = tt_gpu_alloc(x->g, r, maxcount * es + 16, &x->rb[i])) != TT_OK)
            return st;
    }
    for (int i = 0; i < x->nloc; i++) {
        tt_verify_fill(x->h, maxcount, o->dtype, o->op, tt_gpu_comm_local_rank(x->g, i), gpu_seed, 0);
        if ((st = tt_gpu_memcpy(x->sb[i], x->h, maxcount * es)) != TT_OK) return st;
    }
    x->cap = maxcount;
    x->dtype = o->dtype;
    x->op = o->op;
    return TT_OK;
}

static tt_status gpu_resolve(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, tt_plan *eff)
{
    gpu_eng *x = e->self;
    return tt_gpu_comm_resolve_plan(x->g, o->coll, count, o->dtype, &o->plan, eff);
}

static void gpu_bufs(gpu_eng *x, int in_place, const void **src, void **dst)
{
    for (int i = 0; i < x->nloc; i++) {
        dst[i] = x->rb[i];
        src[i] = in_place ? x->rb[i] : x->sb[i];
    }
}

/* process mode: combine a value over the processes */
static tt_status gpu_combine(gpu_eng *x, int me, void *v, tt_dtype t)
{
    if (!x->hc) return TT_OK;
    unsigned char sum[8];
    tt_status st = tt_allreduce(v, sum, 1, t, TT_SUM, x->hc);
    if (st == TT_OK) st = tt_comm_wait(x->hc);
    if (st != TT_OK) return tt_error_prefix(st, "rank %d", me);
    memcpy(v, sum, tt_dtype_size(t));
    return TT_OK;
}

static tt_status gpu_time(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, int in_place, double *sec)
{
    gpu_eng *x = e->self;
    if (o->coll != TT_COLL_ALLREDUCE)
        return tt_error_set(TT_ERR_UNSUPPORTED, "the GPU executor runs AllReduce only; %s was requested "
                                                "(use --host for the other collectives)", tt_coll_label(o->coll));
    if (count > x->cap) return tt_error_set(TT_ERR_INVALID, "measure: %zu elements but buffers for %zu", count, x->cap);
    size_t es = tt_dtype_size(o->dtype);
    const void *src[GPU_MEASURE_MAX_RANKS];
    void *dst[GPU_MEASURE_MAX_RANKS];
    gpu_bufs(x, in_place, src, dst);
    tt_status st;
    if (in_place)
        for (int i = 0; i < x->nloc; i++)
            if ((st = tt_gpu_memcpy(x->rb[i], x->sb[i], count * es)) != TT_OK) return st;
    for (int it = 0; it < o->warmup; it++)
        if ((st = x->l.launch(x->l.ctx, x->g, src, dst, count, o)) != TT_OK) return st;
    if ((st = x->l.sync(x->l.ctx, x->g)) != TT_OK) return st;
    double t0 = tt_now_s();
    for (int it = 0; it < o->iters; it++)
        for (int a = 0; a < o->agg; a++)
            if ((st = x->l.launch(x->l.ctx, x->g, src, dst, count, o)) != TT_OK) return st;
    if ((st = x->l.sync(x->l.ctx, x->g)) != TT_OK) return st;
    double s = (tt_now_s() - t0) / ((double)o->iters * o->agg);
    if ((st = gpu_combine(x, e->rank, &s, TT_DOUBLE)) != TT_OK) return st;
    *sec = x->hc ? s / e->nranks : s; /* average over the processes (nccl-tests' default) */
    return TT_OK;
}

static tt_status gpu_check(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, int in_place,
                           long long *wrong)
{
    gpu_eng *x = e->self;
    size_t es = tt_dtype_size(o->dtype);
    const void *src[GPU_MEASURE_MAX_RANKS];
    void *dst[GPU_MEASURE_MAX_RANKS];
    gpu_bufs(x, in_place, src, dst);
    tt_status st;
    /* a fresh run on restored inputs */
    for (int i = 0; i < x->nloc; i++) {
        if ((st = tt_gpu_memset(x->rb[i], 0xEE, count * es)) != TT_OK) return st;
        if (in_place && (st = tt_gpu_memcpy(x->rb[i], x->sb[i], count * es)) != TT_OK) return st;
    }
    if ((st = x->l.launch(x->l.ctx, x->g, src, dst, count, o)) != TT_OK ||
        (st = x->l.sync(x->l.ctx, x->g)) != TT_OK)
        return st;
    tt_verify_expected(x->want, count, o->dtype, o->op, e->nranks, gpu_seed, 0);
    int64_t w = 0;
    for (int i = 0; i < x->nloc; i++) {
        if ((st = tt_gpu_memcpy(x->got, x->rb[i], count * es)) != TT_OK) return st;
        w += (int64_t)tt_verify_count_wrong(x->got, x->want, count, o->dtype);
    }
    if ((st = gpu_combine(x, e->rank, &w, TT_INT64)) != TT_OK) return st; /* wrong elements of every process */
    *wrong = w;
    return TT_OK;
}

static void gpu_release(tt_sweep_engine *e)
{
    gpu_eng *x = e->self;
    if (!x) return;
    gpu_free_bufs(x);
    if (x->l.release) x->l.release(x->l.ctx);
    free(x);
    e->self = NULL;
}

tt_status exec_measure_engine_gpu_with(tt_sweep_engine *e, tt_gpu_comm *g, tt_comm *host,
                                       const exec_measure_launcher *l)
{
    if (!e || !g) return tt_error_set(TT_ERR_INVALID, "tt_sweep_engine_gpu: NULL argument");
    memset(e, 0, sizeof *e);
    if (tt_gpu_comm_nlocal(g) > GPU_MEASURE_MAX_RANKS)
        return tt_error_set(TT_ERR_LIMIT, "measure: %d GPU ranks in this process; at most %d",
                            tt_gpu_comm_nlocal(g), GPU_MEASURE_MAX_RANKS);
    gpu_eng *x = calloc(1, sizeof *x);
    if (!x) return tt_error_set(TT_ERR_NOMEM, "measure: out of memory");
    x->g = g;
    x->hc = host;
    x->nloc = tt_gpu_comm_nlocal(g);
    if (l) x->l = *l;
    else x->l = (exec_measure_launcher){"gpu", tt_launch, tt_sync, NULL, NULL};
    e->name = x->l.name;
    e->nranks = tt_gpu_comm_nranks(g);
    e->rank = host ? tt_comm_rank(host) : 0;
    e->self = x;
    e->prepare = gpu_prepare;
    e->resolve = l ? NULL : gpu_resolve;
    e->time = gpu_time;
    e->check = gpu_check;
    e->release = gpu_release;
    return TT_OK;
}

tt_status tt_sweep_engine_gpu(tt_sweep_engine *e, tt_gpu_comm *g, tt_comm *host)
{
    return exec_measure_engine_gpu_with(e, g, host, NULL);
}
