/*
 * exec_measure.c - the one measuring sweep (docs/exec.md, "Measuring"): sizes, both placements,
 * nccl-tests' algbw/busbw, exact checks, rows to a callback.  The engines (host ranks, GPU
 * ranks, NCCL) are exec_measure_host.c, exec_measure_gpu.c and exec_measure_nccl.c.
 */
#include <string.h>

#include "exec_measure_internal.h"

static int per_rank(tt_coll c) { return c == TT_COLL_ALLGATHER || c == TT_COLL_REDUCESCATTER; }

size_t tt_sweep_count(const tt_sweep_opts *o, int nranks, uint64_t bytes)
{
    size_t es = tt_dtype_size(o->dtype);
    if (!per_rank(o->coll)) return (size_t)(bytes / es);
    /* nccl-tests' sizes: each rank's part a multiple of 16 bytes (its -b/-e rows match ours) */
    size_t c = (size_t)(bytes / es / (uint64_t)nranks);
    return es < 16 ? c & ~(16 / es - 1) : c;
}

static uint64_t next_size(const tt_sweep_opts *o, uint64_t s)
{
    return o->factor > 1 ? s * (uint64_t)o->factor : s + o->stepb;
}

int tt_sweep_nsizes(const tt_sweep_opts *o)
{
    int n = 0;
    for (uint64_t s = o->minb; s <= o->maxb; s = next_size(o, s)) {
        n++;
        if (o->factor <= 1 && o->stepb == 0) break;
    }
    return n;
}

tt_status tt_sweep_prepare(tt_sweep_engine *e, const tt_sweep_opts *o, size_t max_count)
{
    if (!e || !o || !e->prepare) return tt_error_set(TT_ERR_INVALID, "tt_sweep_prepare: NULL engine or options");
    return e->prepare(e, o, max_count);
}

tt_status tt_sweep_one(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, uint64_t bytes,
                         tt_sweep_row *row)
{
    int n = e->nranks;
    size_t es = tt_dtype_size(o->dtype);
    double alg_mult, bus;
    /* nccl-tests' bandwidths: algbw = bytes x alg_mult / time, busbw = algbw x bus */
    alg_mult = per_rank(o->coll) ? n : 1;
    bus = tt_busbw_factor(o->coll, n);
    int index = row->index;
    memset(row, 0, sizeof *row);
    row->index = index;
    row->count = count;
    row->bytes = (uint64_t)count * es * (per_rank(o->coll) ? (uint64_t)n : 1);
    row->plan = o->plan;
    tt_status st;
    /* a plan that cannot apply is not fatal here: the collective itself then fails saying why */
    if (e->resolve && e->resolve(e, o, count, &row->plan) == TT_OK) row->plan_known = 1;
    else row->plan = o->plan;
    for (int place = 0; place < 2; place++) {
        if (o->progress && e->rank == 0)
            o->progress(o->user, row->index, tt_sweep_nsizes(o), row->bytes, place);
        double sec = 0;
        if ((st = e->time(e, o, count, place, &sec)) != TT_OK) return st;
        if (o->per_iter && e->iter_us[place]) {
            row->iter_us[place] = e->iter_us[place];
            row->iter_ranks = e->iter_ranks;
            row->iter_n = o->iters;
        }
        long long wrong = -1;
        if (o->check > 0 && (!o->check_max || bytes <= o->check_max) &&
            (st = e->check(e, o, count, place, &wrong)) != TT_OK)
            return st;
        row->time_us[place] = sec * 1e6;
        row->algbw[place] = sec > 0 ? (double)count * es * alg_mult / 1e9 / sec : 0;
        row->busbw[place] = row->algbw[place] * bus;
        row->wrong[place] = wrong;
    }
    return TT_OK;
}

tt_status tt_sweep_run(tt_sweep_engine *e, const tt_sweep_opts *o)
{
    if (!e || !o || !e->time || !e->check)
        return tt_error_set(TT_ERR_INVALID, "tt_sweep_run: NULL engine or options");
    if (o->minb == 0 || o->maxb < o->minb || o->iters < 1 || o->agg < 1)
        return tt_error_set(TT_ERR_INVALID, "tt_sweep_run: sizes %llu..%llu, %d iteration(s) x %d",
                            (unsigned long long)o->minb, (unsigned long long)o->maxb, o->iters, o->agg);
    tt_status st = tt_sweep_prepare(e, o, tt_sweep_count(o, e->nranks, o->maxb));
    if (st != TT_OK) return st;
    int idx = 0;
    for (uint64_t size = o->minb; size <= o->maxb; size = next_size(o, size), idx++) {
        tt_sweep_row r;
        r.index = idx;
        if ((st = tt_sweep_one(e, o, tt_sweep_count(o, e->nranks, size), size, &r)) != TT_OK) return st;
        if (e->rank == 0 && o->on_row) o->on_row(o->user, &r);
        if (o->factor <= 1 && o->stepb == 0) break;
    }
    return TT_OK;
}

void tt_sweep_engine_release(tt_sweep_engine *e)
{
    if (e && e->release) e->release(e);
    if (e) memset(e, 0, sizeof *e);
}
