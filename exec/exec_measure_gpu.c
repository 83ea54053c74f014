/*
 * exec_measure_gpu.c - the measuring engine of GPU ranks (docs/exec.md, "Measuring"): one
 * engine drives every local rank of a tt_gpu_comm (thread mode: all ranks; process mode: this
 * process's rank, times averaged and #wrong summed over the host communicator).  Every
 * collective (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce) with nccl-tests' in-place
 * layouts, as the host engine (exec_measure_host.c).  Inputs are filled once per rank (seed
 * 12345); in place starts from a copy of them; the check runs on restored inputs and compares
 * with the host engine's expected values (tt_verify_*).  The launcher is topotune's
 * tt_gpu_collective, or NCCL (exec_measure_nccl.c, AllReduce only).
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
    size_t cap;                /* prepared count, for inputs of this type, op and collective */
    tt_dtype dtype;
    tt_redop op;
    tt_coll coll;
    exec_measure_launcher l;
} gpu_eng;

/* topotune's own kernels */
static tt_status tt_launch(void *ctx, tt_gpu_comm *g, const void *const *src, void *const *dst, size_t count,
                           const tt_sweep_opts *o)
{
    (void)ctx;
    return tt_gpu_collective(g, o->coll, src, dst, count, o->dtype, o->op, o->root, &o->plan);
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

/* elements of one rank's input / output for the collective's count */
static size_t in_elems(const tt_sweep_opts *o, int n, size_t count)
{
    return o->coll == TT_COLL_REDUCESCATTER ? count * (size_t)n : count;
}
static size_t out_elems(const tt_sweep_opts *o, int n, size_t count)
{
    return o->coll == TT_COLL_ALLGATHER ? count * (size_t)n : count;
}

static tt_status gpu_prepare(tt_sweep_engine *e, const tt_sweep_opts *o, size_t maxcount)
{
    gpu_eng *x = e->self;
    size_t es = tt_dtype_size(o->dtype);
    if (x->cap && x->cap >= maxcount && x->dtype == o->dtype && x->op == o->op && x->coll == o->coll)
        return TT_OK; /* prepared already */
    gpu_free_bufs(x);
    size_t in_max = in_elems(o, e->nranks, maxcount), out_max = out_elems(o, e->nranks, maxcount);
    /* the receive buffer also holds the in-place layouts (the whole input of ReduceScatter) */
    size_t big = (in_max > out_max ? in_max : out_max) * es + 16;
    x->h = malloc(in_max * es + 16);
    x->want = malloc(out_max * es + 16);
    x->got = malloc(out_max * es + 16);
    if (!x->h || !x->want || !x->got)
        return tt_error_set(TT_ERR_NOMEM, "out of host memory for %zu-byte buffers", big);
    tt_status st;
    for (int i = 0; i < x->nloc; i++) {
        int r = tt_gpu_comm_local_rank(x->g, i);
        if ((st = tt_gpu_alloc(x->g, r, big, &x->sb[i])) != TT_OK || (st = tt_gpu_alloc(x->g, r, big, &x->rb[i])) != TT_OK)
            return st;
    }
    for (int i = 0; i < x->nloc; i++) {
        tt_verify_fill(x->h, in_max, o->dtype, o->op, tt_gpu_comm_local_rank(x->g, i), gpu_seed, 0);
        if ((st = tt_gpu_memcpy(x->sb[i], x->h, in_max * es)) != TT_OK) return st;
    }
    x->cap = maxcount;
    x->dtype = o->dtype;
    x->op = o->op;
    x->coll = o->coll;
    return TT_OK;
}

static tt_status gpu_resolve(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, tt_plan *eff)
{
    gpu_eng *x = e->self;
    return tt_gpu_comm_resolve_plan(x->g, o->coll, count, o->dtype, &o->plan, eff);
}

/* send/receive buffers of a placement; in place, the receive buffer holds both in nccl-tests'
 * layouts (ReduceScatter: output = block `rank` of the input; AllGather: input = block `rank`
 * of the output) */
static void gpu_bufs(gpu_eng *x, const tt_sweep_opts *o, size_t count, int in_place, const void **src, void **dst)
{
    size_t es = tt_dtype_size(o->dtype);
    for (int i = 0; i < x->nloc; i++) {
        size_t me_off = (size_t)tt_gpu_comm_local_rank(x->g, i) * count * es;
        unsigned char *rb = x->rb[i];
        dst[i] = rb;
        src[i] = x->sb[i];
        if (!in_place) continue;
        src[i] = rb;
        if (o->coll == TT_COLL_REDUCESCATTER) dst[i] = rb + me_off;
        else if (o->coll == TT_COLL_ALLGATHER) src[i] = rb + me_off;
    }
}

/* in place: put the inputs where the collective reads them (src of gpu_bufs) */
static tt_status gpu_restore(gpu_eng *x, const tt_sweep_opts *o, int n, size_t count, const void **src)
{
    size_t es = tt_dtype_size(o->dtype);
    tt_status st;
    for (int i = 0; i < x->nloc; i++)
        if ((st = tt_gpu_memcpy((void *)src[i], x->sb[i], in_elems(o, n, count) * es)) != TT_OK) return st;
    return TT_OK;
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
    if (count > x->cap) return tt_error_set(TT_ERR_INVALID, "measure: %zu elements but buffers for %zu", count, x->cap);
    const void *src[GPU_MEASURE_MAX_RANKS];
    void *dst[GPU_MEASURE_MAX_RANKS];
    gpu_bufs(x, o, count, in_place, src, dst);
    tt_status st;
    if (in_place && (st = gpu_restore(x, o, e->nranks, count, src)) != TT_OK) return st;
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
    int n = e->nranks;
    size_t nin = in_elems(o, n, count), nout = out_elems(o, n, count);
    const void *src[GPU_MEASURE_MAX_RANKS];
    void *dst[GPU_MEASURE_MAX_RANKS];
    gpu_bufs(x, o, count, in_place, src, dst);
    tt_status st;
    /* a fresh run on restored inputs */
    for (int i = 0; i < x->nloc; i++)
        if ((st = tt_gpu_memset(x->rb[i], 0xEE, (nin > nout ? nin : nout) * es)) != TT_OK) return st;
    if (in_place && (st = gpu_restore(x, o, n, count, src)) != TT_OK) return st;
    if ((st = x->l.launch(x->l.ctx, x->g, src, dst, count, o)) != TT_OK ||
        (st = x->l.sync(x->l.ctx, x->g)) != TT_OK)
        return st;
    /* expected values as the host engine computes them (exec_measure_host.c, host_check) */
    int64_t w = 0;
    for (int i = 0; i < x->nloc; i++) {
        int me = tt_gpu_comm_local_rank(x->g, i);
        /* the same for every rank but ReduceScatter's (block `me`) and Reduce's (root only) */
        int per_rank = o->coll == TT_COLL_REDUCESCATTER || o->coll == TT_COLL_REDUCE;
        if (i == 0 || per_rank) switch (o->coll) {
        case TT_COLL_ALLREDUCE: st = tt_verify_expected(x->want, count, o->dtype, o->op, n, gpu_seed, 0); break;
        case TT_COLL_REDUCESCATTER:
            st = tt_verify_expected(x->want, count, o->dtype, o->op, n, gpu_seed, (size_t)me * count);
            break;
        case TT_COLL_ALLGATHER:
            for (int q = 0; q < n; q++)
                tt_verify_fill(x->want + (size_t)q * count * es, count, o->dtype, o->op, q, gpu_seed, 0);
            break;
        case TT_COLL_BROADCAST: tt_verify_fill(x->want, count, o->dtype, o->op, o->root, gpu_seed, 0); break;
        default:
            if (me == o->root) st = tt_verify_expected(x->want, count, o->dtype, o->op, n, gpu_seed, 0);
            break;
        }
        if (st != TT_OK) return st;
        if (o->coll == TT_COLL_REDUCE && me != o->root) continue; /* only the root has a result */
        if ((st = tt_gpu_memcpy(x->got, dst[i], nout * es)) != TT_OK) return st;
        w += (int64_t)tt_verify_count_wrong(x->got, x->want, nout, o->dtype);
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
