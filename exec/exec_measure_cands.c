/*
 * exec_measure_cands.c - candidates side by side (docs/exec.md, "Measuring candidates"): every
 * candidate plan of every size measured as a sweep row (tt_sweep_one), in interleaved rounds so
 * that the candidates of one size see the same machine state, each keeping its fastest time per
 * placement; the host-rank variant with one thread per local communicator; and the agreement of
 * process ranks on an exit code and a fingerprint before anything is timed (tt_comm_agree); and
 * which candidates a communicator runs at a size (tt_exec_plan_check, tt_exec_runnable_plans).
 * topo-exec --validate measures through it (bin/cli_validate*.c); nothing here prints.
 */
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"
#include "exec_measure_internal.h"

static const tt_plan plan_default = TT_PLAN_DEFAULT;

/* ---------------------------------------------------------------- which candidates run here */
tt_status tt_exec_plan_check(tt_comm *c, const tt_gpu_comm *g, tt_coll coll, size_t count, tt_dtype dt,
                             const tt_plan *req, tt_plan *eff)
{
    if (!req || !eff || (!c) == (!g))
        return tt_error_set(TT_ERR_INVALID, "tt_exec_plan_check: a plan and one communicator (host or GPU)");
    tt_status st;
    if (g) {
        st = tt_gpu_comm_resolve_plan(g, coll, count, dt, req, eff);
    } else { /* the communicator's own plan is put back */
        tt_plan was = c->plan;
        tt_comm_set_plan(c, req);
        st = tt_comm_resolve_plan(c, coll, count, dt, eff);
        c->plan = was;
    }
    if (st != TT_OK) return st;
    if (req->algo != TT_ALGO_DEFAULT && eff->algo != req->algo) /* e.g. hierarchical on one host */
        return tt_error_set(TT_ERR_UNSUPPORTED,
                            "algorithm %s reduces to %s on these ranks (one host, or one rank per host)",
                            tt_algo_label(req->algo), tt_algo_label(eff->algo));
    return TT_OK;
}

int tt_exec_runnable_plans(tt_comm *c, const tt_gpu_comm *g, tt_coll coll, size_t count, tt_dtype dt, tt_plan *req,
                           tt_plan *eff, int max)
{
    if ((!c) == (!g)) return 0;
    tt_exec_mode mode = g ? TT_EXEC_GPU : TT_EXEC_HOST;
    tt_algo algos[TT_ALGO_COUNT];
    tt_proto protos[TT_PROTO_COUNT];
    int na = g ? tt_gpu_comm_algos(g, coll, algos, TT_ALGO_COUNT)
               : tt_exec_algos(mode, coll, tt_comm_nranks(c), algos, TT_ALGO_COUNT);
    int np = tt_exec_protos(mode, protos, TT_PROTO_COUNT);
    if (na > TT_ALGO_COUNT) na = TT_ALGO_COUNT;
    if (np > TT_PROTO_COUNT) np = TT_PROTO_COUNT;
    int n = 0;
    for (int a = 0; a < na; a++)
        for (int p = 0; p < np && n < max; p++) {
            /* host transports run one channel; GPU ranks: the executor's count for the size */
            tt_plan r = {algos[a], protos[p], g ? 0 : 1, 0}, e;
            if (tt_exec_plan_check(c, g, coll, count, dt, &r, &e) != TT_OK) continue;
            if (req) req[n] = r;
            if (eff) eff[n] = e;
            n++;
        }
    return n;
}

/* Fold one round into the candidate: the fastest time per placement counts (noise only ever
 * adds time), with the bandwidths at that time; wrong results are never hidden (the most of
 * any round). */
static void keep_best(tt_sweep_cand *dst, const tt_sweep_row *r, int first)
{
    for (int p = 0; p < 2; p++) {
        if (first || (r->time_us[p] > 0 && (dst->time_us[p] <= 0 || r->time_us[p] < dst->time_us[p]))) {
            dst->time_us[p] = r->time_us[p];
            dst->algbw[p] = r->algbw[p];
            dst->busbw[p] = r->busbw[p];
        }
        if (first || r->wrong[p] > dst->wrong[p]) dst->wrong[p] = r->wrong[p];
    }
}

static tt_status check_args(const tt_sweep_cands_opts *o, const tt_sweep_cand_size *sz, int nsz)
{
    if (!o || (nsz > 0 && !sz) || nsz < 0)
        return tt_error_set(TT_ERR_INVALID, "tt_sweep_candidates: NULL options or sizes");
    if (o->rounds < 1 || o->sweep.iters < 1 || o->sweep.agg < 1)
        return tt_error_set(TT_ERR_INVALID, "tt_sweep_candidates: %d round(s) of %d iteration(s) x %d", o->rounds,
                            o->sweep.iters, o->sweep.agg);
    for (int i = 0; i < nsz; i++)
        if (sz[i].ncand < 0 || (sz[i].ncand > 0 && !sz[i].cand))
            return tt_error_set(TT_ERR_INVALID, "tt_sweep_candidates: size %d (%llu bytes): %d candidate(s), no array",
                                i, (unsigned long long)sz[i].bytes, sz[i].ncand);
    return TT_OK;
}

static void clear_results(tt_sweep_cand_size *sz, int nsz)
{
    for (int i = 0; i < nsz; i++)
        for (int k = 0; k < sz[i].ncand; k++) {
            tt_sweep_cand *c = &sz[i].cand[k];
            for (int p = 0; p < 2; p++) {
                c->time_us[p] = c->algbw[p] = c->busbw[p] = 0;
                c->wrong[p] = -1;
            }
        }
}

static size_t max_count(const tt_sweep_cand_size *sz, int nsz)
{
    size_t m = 0;
    for (int i = 0; i < nsz; i++)
        if (sz[i].ncand > 0 && sz[i].count > m) m = sz[i].count;
    return m;
}

/* every rank runs the same sequence; store: this rank keeps the results (and calls on_size) */
static tt_status measure_all(tt_sweep_engine *e, const tt_sweep_cands_opts *co, tt_sweep_cand_size *sz, int nsz,
                             int store)
{
    tt_sweep_opts o = co->sweep;
    o.progress = NULL;
    o.on_row = NULL;
    tt_status st = tt_sweep_prepare(e, &o, max_count(sz, nsz)); /* a no-op when prepared already */
    if (st != TT_OK) return st;
    for (int i = 0; i < nsz; i++) {
        tt_sweep_cand_size *z = &sz[i];
        for (int round = 0; round < co->rounds; round++)
            for (int k = 0; k < z->ncand; k++) {
                if (co->progress && e->rank == 0) co->progress(co->user, i, nsz, k, round);
                o.plan = z->cand[k].plan;
                tt_sweep_row row;
                row.index = i;
                if ((st = tt_sweep_one(e, &o, z->count, z->bytes, &row)) != TT_OK) return st;
                if (store) keep_best(&z->cand[k], &row, round == 0);
            }
        if (store && co->on_size) co->on_size(co->user, i, z);
    }
    return TT_OK;
}

tt_status tt_sweep_candidates(tt_sweep_engine *e, const tt_sweep_cands_opts *o, tt_sweep_cand_size *sz, int nsz)
{
    tt_status st = check_args(o, sz, nsz);
    if (st != TT_OK) return st;
    if (!e || !e->time) return tt_error_set(TT_ERR_INVALID, "tt_sweep_candidates: NULL engine");
    clear_results(sz, nsz);
    return measure_all(e, o, sz, nsz, 1);
}

/* ---------------------------------------------------------------- host ranks as threads */
typedef struct {
    const tt_sweep_cands_opts *o;
    tt_sweep_cand_size *sz;
    int nsz;
} cands_arg;

static tt_status cands_rank(tt_comm *c, int keep, void *user)
{
    cands_arg *a = user;
    tt_sweep_engine e;
    tt_status st = tt_sweep_engine_host(&e, c);
    if (st == TT_OK) st = measure_all(&e, a->o, a->sz, a->nsz, keep);
    tt_sweep_engine_release(&e);
    tt_comm_set_plan(c, &plan_default);
    return st;
}

tt_status tt_sweep_candidates_host(tt_comm **comms, int n, const tt_sweep_cands_opts *o, tt_sweep_cand_size *sz,
                                   int nsz)
{
    tt_status st = check_args(o, sz, nsz);
    if (st != TT_OK) return st;
    clear_results(sz, nsz);
    cands_arg a = {o, sz, nsz};
    return exec_host_ranks(comms, n, cands_rank, &a);
}

/* ---------------------------------------------------------------- process ranks */
tt_status tt_comm_agree(tt_comm *c, int code, int64_t fingerprint, int *who, int *who_code)
{
    *who = -1;
    *who_code = 0;
    if (!c) return tt_error_set(TT_ERR_INVALID, "tt_comm_agree: NULL communicator");
    int n = tt_comm_nranks(c);
    int64_t mine[2] = {code, fingerprint};
    int64_t *all = calloc((size_t)n * 2, sizeof *all);
    if (!all) return tt_error_set(TT_ERR_NOMEM, "out of memory comparing the plans of %d ranks", n);
    tt_comm_set_plan(c, &plan_default);
    tt_status st = tt_allgather(mine, all, 2, TT_INT64, c);
    if (st == TT_OK) st = tt_comm_wait(c);
    if (st != TT_OK) {
        free(all);
        return tt_error_prefix(st, "comparing the plans of the ranks");
    }
    for (int r = 0; r < n && *who < 0; r++)
        if (all[2 * r]) { /* that rank refused */
            *who = r;
            *who_code = (int)all[2 * r];
        }
    for (int r = 1; r < n && *who < 0; r++)
        if (all[2 * r + 1] != all[1]) *who = r; /* its fingerprint differs from rank 0's */
    free(all);
    return TT_OK;
}
