/*
 * exec_measure_host.c - the measuring engine of host ranks (docs/exec.md, "Measuring"): one
 * engine per rank over its tt_comm (a thread of tt_comm_init_threads or a process), buffers of
 * the largest size, nccl-tests' in-place layouts, timing averaged over the ranks and an exact
 * check summed over them; and the runner of every local host rank (exec_host_ranks: a thread per
 * communicator, the first failure kept) under tt_sweep_run_host and tt_sweep_candidates_host.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h" /* exec_ops_reserve */
#include "exec_measure_internal.h"

typedef struct {
    tt_comm *c;
    unsigned char *sbuf, *rbuf, *exp;
    size_t cap; /* prepared count (for this type size and collective) */
    size_t es;
    tt_coll coll;
    double *it_mine, *it_all[2]; /* -I: this rank's iteration times, every rank's per placement */
    int it_cap;                  /* iterations they hold */
} host_eng;

static tt_status host_issue(tt_comm *c, const tt_sweep_opts *o, void *sb, void *rb, size_t count)
{
    switch (o->coll) {
    case TT_COLL_ALLREDUCE: return tt_allreduce(sb, rb, count, o->dtype, o->op, c);
    case TT_COLL_REDUCESCATTER: return tt_reducescatter(sb, rb, count, o->dtype, o->op, c);
    case TT_COLL_ALLGATHER: return tt_allgather(sb, rb, count, o->dtype, c);
    case TT_COLL_BROADCAST: return tt_broadcast(sb, rb, count, o->dtype, o->root, c);
    default: return tt_reduce_coll(sb, rb, count, o->dtype, o->op, o->root, c);
    }
}

static tt_status host_wait(tt_comm *c, tt_status st) { return st == TT_OK ? tt_comm_wait(c) : st; }

static tt_status host_prepare(tt_sweep_engine *e, const tt_sweep_opts *o, size_t maxcount)
{
    host_eng *h = e->self;
    int n = e->nranks;
    size_t es = tt_dtype_size(o->dtype);
    size_t in_max = o->coll == TT_COLL_REDUCESCATTER ? maxcount * n : maxcount;
    size_t out_max = o->coll == TT_COLL_ALLGATHER ? maxcount * n : maxcount;
    size_t big = (in_max > out_max ? in_max : out_max) * es + 64;
    if (h->cap >= maxcount && h->es == es && h->coll == o->coll) return TT_OK; /* prepared already */
    free(h->sbuf);
    free(h->rbuf);
    free(h->exp);
    h->sbuf = calloc(1, big);
    h->rbuf = calloc(1, big);
    h->exp = malloc(out_max * es + 64);
    h->cap = 0;
    if (!h->sbuf || !h->rbuf || !h->exp)
        return tt_error_set(TT_ERR_NOMEM, "rank %d: cannot allocate 3 buffers of %zu bytes (reduce -e)", e->rank, big);
    h->cap = maxcount;
    h->es = es;
    h->coll = o->coll;
    /* the ops a timing loop keeps queued, allocated and touched now: their first use inside the
     * first timed loop cost page faults there (8 B AllReduce, 2 processes: 0.43 us in the first
     * cycle against 0.38 us in later ones) */
    exec_ops_reserve(h->c, EXEC_MAX_QUEUED + 64);
    return TT_OK;
}

/* send/receive buffers of a placement (nccl-tests' in-place layouts) */
static void host_bufs(const host_eng *h, const tt_sweep_opts *o, int me, size_t count, int in_place,
                      unsigned char **sb, unsigned char **rb)
{
    size_t es = tt_dtype_size(o->dtype);
    *sb = h->sbuf;
    *rb = h->rbuf;
    if (!in_place) return;
    if (o->coll == TT_COLL_REDUCESCATTER) {
        *rb = h->sbuf + (size_t)me * count * es;
    } else if (o->coll == TT_COLL_ALLGATHER) {
        *rb = h->sbuf;
        *sb = h->sbuf + (size_t)me * count * es;
    } else {
        *rb = h->sbuf;
    }
}

static tt_status host_resolve(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, tt_plan *eff)
{
    host_eng *h = e->self;
    tt_comm_set_plan(h->c, &o->plan);
    return tt_comm_resolve_plan(h->c, o->coll, count, o->dtype, eff);
}

static tt_status host_time_across(tt_sweep_engine *e, const tt_sweep_opts *o, double s, double *sec);
static tt_status host_time_iters(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, int in_place,
                                 unsigned char *sb, unsigned char *rb, double *sec);

static tt_status host_time(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, int in_place, double *sec)
{
    host_eng *h = e->self;
    tt_comm *c = h->c;
    int n = e->nranks, me = e->rank;
    if (count > h->cap) return tt_error_set(TT_ERR_INVALID, "measure: %zu elements but buffers for %zu", count, h->cap);
    tt_comm_set_plan(c, &o->plan);
    unsigned char *sb, *rb;
    host_bufs(h, o, me, count, in_place, &sb, &rb);
    size_t in_elems = o->coll == TT_COLL_REDUCESCATTER ? count * n : count;
    tt_verify_fill(sb, in_elems, o->dtype, o->op, me, 0, 0);
    tt_status st;
    for (int w = 0; w < o->warmup; w++)
        if ((st = host_wait(c, host_issue(c, o, sb, rb, count))) != TT_OK) return st;
    if (o->per_iter)
        return host_time_iters(e, o, count, in_place, sb, rb, sec);
    double t0 = tt_now_s();
    for (int it = 0; it < o->iters; it++) {
        tt_group_start();
        st = TT_OK;
        for (int a = 0; a < o->agg && st == TT_OK; a++) st = host_issue(c, o, sb, rb, count);
        tt_group_end();
        if (st != TT_OK) return st;
    }
    if ((st = tt_comm_wait(c)) != TT_OK) return st;
    double s = (tt_now_s() - t0) / ((double)o->iters * o->agg);
    return host_time_across(e, o, s, sec);
}

/* nccl-tests' -I: each iteration timed on its own (its agg operations, then a wait), the times of every
 * rank gathered for rank 0's row (e->iter_us); the time per operation the mean of the iterations */
static tt_status host_time_iters(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, int in_place,
                                 unsigned char *sb, unsigned char *rb, double *sec)
{
    host_eng *h = e->self;
    tt_comm *c = h->c;
    tt_status st;
    if (h->it_cap < o->iters) {
        free(h->it_mine);
        free(h->it_all[0]);
        free(h->it_all[1]);
        h->it_mine = calloc((size_t)o->iters, sizeof(double));
        h->it_all[0] = calloc((size_t)o->iters * (size_t)e->nranks, sizeof(double));
        h->it_all[1] = calloc((size_t)o->iters * (size_t)e->nranks, sizeof(double));
        h->it_cap = h->it_mine && h->it_all[0] && h->it_all[1] ? o->iters : 0;
        if (!h->it_cap) return tt_error_set(TT_ERR_NOMEM, "rank %d: no memory for %d iteration times", e->rank, o->iters);
    }
    double sum = 0;
    for (int it = 0; it < o->iters; it++) {
        double t0 = tt_now_s();
        tt_group_start();
        st = TT_OK;
        for (int a = 0; a < o->agg && st == TT_OK; a++) st = host_issue(c, o, sb, rb, count);
        tt_group_end();
        if (st != TT_OK || (st = tt_comm_wait(c)) != TT_OK) return st;
        h->it_mine[it] = (tt_now_s() - t0) / o->agg * 1e6;
        sum += h->it_mine[it];
    }
    /* every rank's row: each writes its own into zeros, a sum gathers them (an AllReduce, as the time
     * across ranks below: the collective every plan runs) */
    double *all = h->it_all[in_place ? 1 : 0];
    size_t ni = (size_t)o->iters;
    memset(all, 0, ni * (size_t)e->nranks * sizeof *all);
    memcpy(all + (size_t)e->rank * ni, h->it_mine, ni * sizeof *all);
    if ((st = host_wait(c, tt_allreduce(all, all, ni * (size_t)e->nranks, TT_DOUBLE, TT_SUM, c))) != TT_OK) return st;
    e->iter_us[in_place ? 1 : 0] = all;
    e->iter_ranks = e->nranks;
    return host_time_across(e, o, sum / o->iters / 1e6, sec);
}

/* this rank's seconds per operation across ranks as nccl-tests' -a: the average (default), rank 0's (a
 * sum of zeros and it), min, max */
static tt_status host_time_across(tt_sweep_engine *e, const tt_sweep_opts *o, double s, double *sec)
{
    host_eng *h = e->self;
    tt_comm *c = h->c;
    int n = e->nranks, me = e->rank;
    tt_status st;
    tt_redop rop = o->time_of == TT_SWEEP_TIME_MIN ? TT_MIN : o->time_of == TT_SWEEP_TIME_MAX ? TT_MAX : TT_SUM;
    if (o->time_of == TT_SWEEP_TIME_RANK0 && me != 0) s = 0;
    if ((st = host_wait(c, tt_allreduce(&s, &s, 1, TT_DOUBLE, rop, c))) != TT_OK) return st;
    *sec = o->time_of == TT_SWEEP_TIME_AVG ? s / n : s;
    return TT_OK;
}

static tt_status host_check(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, int in_place,
                            long long *wrong)
{
    host_eng *h = e->self;
    tt_comm *c = h->c;
    int n = e->nranks, me = e->rank;
    size_t es = tt_dtype_size(o->dtype);
    unsigned char *sb, *rb, *exp = h->exp;
    host_bufs(h, o, me, count, in_place, &sb, &rb);
    size_t in_elems = o->coll == TT_COLL_REDUCESCATTER ? count * n : count;
    size_t out_elems = o->coll == TT_COLL_ALLGATHER ? count * n : count;
    tt_status st;
    *wrong = 0;
    for (int k = 0; k < o->check && *wrong == 0; k++) {
        uint64_t seed = (uint64_t)k + 1;
        tt_verify_fill(sb, in_elems, o->dtype, o->op, me, seed, 0);
        if ((st = host_wait(c, host_issue(c, o, sb, rb, count))) != TT_OK) return st;
        switch (o->coll) {
        case TT_COLL_ALLREDUCE: tt_verify_expected(exp, count, o->dtype, o->op, n, seed, 0); break;
        case TT_COLL_REDUCESCATTER: tt_verify_expected(exp, count, o->dtype, o->op, n, seed, (size_t)me * count); break;
        case TT_COLL_ALLGATHER:
            for (int q = 0; q < n; q++) tt_verify_fill(exp + (size_t)q * count * es, count, o->dtype, o->op, q, seed, 0);
            break;
        case TT_COLL_BROADCAST: tt_verify_fill(exp, count, o->dtype, o->op, o->root, seed, 0); break;
        default:
            if (me == o->root) tt_verify_expected(exp, count, o->dtype, o->op, n, seed, 0);
            break;
        }
        int64_t w64 = 0;
        if (o->coll != TT_COLL_REDUCE || me == o->root) w64 = (int64_t)tt_verify_count_wrong(rb, exp, out_elems, o->dtype);
        if ((st = host_wait(c, tt_allreduce(&w64, &w64, 1, TT_INT64, TT_SUM, c))) != TT_OK) return st;
        *wrong = w64;
    }
    return TT_OK;
}

static void host_release(tt_sweep_engine *e)
{
    host_eng *h = e->self;
    if (!h) return;
    free(h->sbuf);
    free(h->rbuf);
    free(h->exp);
    free(h->it_mine);
    free(h->it_all[0]);
    free(h->it_all[1]);
    free(h);
    e->self = NULL;
}

tt_status tt_sweep_engine_host(tt_sweep_engine *e, tt_comm *comm)
{
    if (!e || !comm) return tt_error_set(TT_ERR_INVALID, "tt_sweep_engine_host: NULL argument");
    memset(e, 0, sizeof *e);
    host_eng *h = calloc(1, sizeof *h);
    if (!h) return tt_error_set(TT_ERR_NOMEM, "measure: out of memory");
    h->c = comm;
    e->name = "host";
    e->nranks = tt_comm_nranks(comm);
    e->rank = tt_comm_rank(comm);
    e->self = h;
    e->prepare = host_prepare;
    e->resolve = host_resolve;
    e->time = host_time;
    e->check = host_check;
    e->release = host_release;
    return TT_OK;
}

/* ---------------------------------------------------------------- every local rank */
typedef struct {
    pthread_mutex_t mu;
    tt_status st; /* the first failure of any rank */
    char msg[1024];
} first_fail;

typedef struct {
    tt_comm *c;
    int keep;
    exec_rank_fn fn;
    void *user;
    first_fail *f;
} rank_arg;

static void fail_first(first_fail *f, tt_status st, const char *msg)
{
    pthread_mutex_lock(&f->mu);
    if (f->st == TT_OK) {
        f->st = st;
        snprintf(f->msg, sizeof f->msg, "%s", msg);
    }
    pthread_mutex_unlock(&f->mu);
}

static void *rank_main(void *p)
{
    rank_arg *a = p;
    tt_status st = a->fn(a->c, a->keep, a->user);
    if (st != TT_OK) fail_first(a->f, st, tt_error_message());
    return NULL;
}

tt_status exec_host_ranks(tt_comm **comms, int n, exec_rank_fn fn, void *user)
{
    if (!comms || n < 1) return tt_error_set(TT_ERR_INVALID, "host ranks: no communicator");
    for (int r = 0; r < n; r++)
        if (!comms[r]) return tt_error_set(TT_ERR_INVALID, "host ranks: communicator %d is NULL", r);
    first_fail f;
    memset(&f, 0, sizeof f);
    pthread_mutex_init(&f.mu, NULL);
    rank_arg *a = calloc((size_t)n, sizeof *a);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    int *started = calloc((size_t)n, sizeof *started);
    if (!a || !th || !started) {
        free(a);
        free(th);
        free(started);
        pthread_mutex_destroy(&f.mu);
        return tt_error_set(TT_ERR_NOMEM, "out of memory starting %d host rank(s)", n);
    }
    for (int r = 0; r < n; r++) a[r] = (rank_arg){comms[r], r == 0, fn, user, &f};
    if (n == 1) {
        rank_main(&a[0]);
    } else {
        for (int r = 0; r < n; r++) {
            started[r] = pthread_create(&th[r], NULL, rank_main, &a[r]) == 0;
            if (!started[r]) { /* the ranks already running fail at their deadline, naming this one */
                fail_first(&f, TT_ERR_SYSTEM, "cannot start a host rank thread");
                break;
            }
        }
        for (int r = 0; r < n; r++)
            if (started[r]) pthread_join(th[r], NULL);
    }
    tt_status st = f.st;
    if (st != TT_OK) tt_error_set(st, "%s", f.msg);
    free(a);
    free(th);
    free(started);
    pthread_mutex_destroy(&f.mu);
    return st;
}

static tt_status sweep_rank(tt_comm *c, int keep, void *user)
{
    (void)keep;
    const tt_sweep_opts *o = user;
    tt_sweep_engine e;
    tt_status st = tt_sweep_engine_host(&e, c);
    if (st != TT_OK) return st;
    st = tt_sweep_run(&e, o);
    tt_sweep_engine_release(&e);
    return st;
}

tt_status tt_sweep_run_host(tt_comm **comms, int n, const tt_sweep_opts *o)
{
    if (!o) return tt_error_set(TT_ERR_INVALID, "tt_sweep_run_host: NULL options");
    return exec_host_ranks(comms, n, sweep_rank, (void *)o);
}
