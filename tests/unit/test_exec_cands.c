/* test_exec_cands.c - candidates side by side (exec_measure_cands.c): on a scripted engine the
 * interleaved order, the fold of rounds to the fastest time per placement (with its bandwidths)
 * and to the most wrong elements, the per-size and progress callbacks, a failure stopping the run
 * with its message and leaving what was measured; on 3 host ranks as threads every candidate of
 * every size measured and checked, callbacks on rank 0 only, the first failure of a rank (a plan
 * the ranks cannot run) with its message; the agreement of ranks on a code and a fingerprint
 * (tt_comm_agree); which candidates host ranks run (tt_exec_runnable_plans, tt_exec_plan_check);
 * bad arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tt_exec.h"

#define NR 3

/* ---------------------------------------------------------------- a scripted engine */
#define MAXCALLS 256
typedef struct {
    int ncalls;                  /* time() calls */
    int fail_at;                 /* time() call that fails (0 = none) */
    size_t count[MAXCALLS];      /* what each call measured */
    tt_algo algo[MAXCALLS];
    int place[MAXCALLS];
    int prepared;
} script;

/* The time of one call: depends on the call (so on its round) in a way the test recomputes, not
 * on anything the library sees; 1..97 us. */
static double script_us(int call) { return 1.0 + (double)((call * 37 + 11) % 97); }
/* wrong elements: the tree's in-place check finds some in one of three measurements */
static long long script_wrong(int call, tt_algo a, int place)
{
    return a == TT_ALGO_TREE && place == 1 && (call / 2) % 3 == 1;
}

static tt_status s_prepare(tt_sweep_engine *e, const tt_sweep_opts *o, size_t max_count)
{
    (void)o;
    ((script *)e->self)->prepared = (int)max_count;
    return TT_OK;
}

static tt_status s_time(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, int in_place, double *sec)
{
    script *s = e->self;
    int k = ++s->ncalls;
    if (k == s->fail_at) return tt_error_set(TT_ERR_TIMEOUT, "rank 1: scripted failure at call %d", k);
    if (k <= MAXCALLS) {
        s->count[k - 1] = count;
        s->algo[k - 1] = o->plan.algo;
        s->place[k - 1] = in_place;
    }
    *sec = script_us(k) * 1e-6;
    return TT_OK;
}

static tt_status s_check(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, int in_place, long long *wrong)
{
    (void)count;
    script *s = e->self;
    *wrong = 3 * script_wrong(s->ncalls, o->plan.algo, in_place);
    return TT_OK;
}

static tt_sweep_engine script_engine(script *s)
{
    tt_sweep_engine e;
    memset(&e, 0, sizeof e);
    memset(s, 0, sizeof *s);
    e.name = "script";
    e.nranks = 2;
    e.rank = 0;
    e.self = s;
    e.prepare = s_prepare;
    e.time = s_time;
    e.check = s_check;
    return e;
}

typedef struct {
    int nsize, sizes[8];         /* on_size: the sizes in the order they came */
    int nprogress, bad_order;    /* progress: calls, and ones out of the interleaved order */
    int next_size, next_cand, next_round;
    const tt_sweep_cand_size *sz;
    int ncand_of[8];
    int rounds;
} calls;

static void on_size(void *user, int size, const tt_sweep_cand_size *z)
{
    calls *c = user;
    if (z != &c->sz[size]) c->bad_order++;
    if (c->nsize < 8) c->sizes[c->nsize++] = size;
}

/* expects size by size: round 0 of every candidate, then round 1, ... */
static void on_progress(void *user, int size, int nsizes, int cand, int round)
{
    calls *c = user;
    (void)nsizes;
    while (c->next_size < 8 && c->ncand_of[c->next_size] == 0) c->next_size++;
    if (size != c->next_size || cand != c->next_cand || round != c->next_round) c->bad_order++;
    c->nprogress++;
    if (++c->next_cand == c->ncand_of[c->next_size]) {
        c->next_cand = 0;
        if (++c->next_round == c->rounds) c->next_round = 0, c->next_size++;
    }
}

static tt_sweep_opts sweep_opts(void)
{
    tt_sweep_opts o;
    memset(&o, 0, sizeof o);
    o.coll = TT_COLL_ALLREDUCE;
    o.dtype = TT_FLOAT;
    o.op = TT_SUM;
    o.iters = 2;
    o.warmup = 1;
    o.agg = 1;
    o.check = 1;
    o.plan = TT_PLAN_DEFAULT;
    return o;
}

static tt_plan plan_of(tt_algo a)
{
    tt_plan p = TT_PLAN_DEFAULT;
    p.algo = a;
    p.proto = TT_PROTO_SIMPLE;
    p.channels = 1;
    return p;
}

/* two sizes' candidates: ring, tree | tree, ring, last */
static void five_cands(tt_sweep_cand c[5], tt_algo last)
{
    memset(c, 0, 5 * sizeof *c);
    c[0].plan = plan_of(TT_ALGO_RING);
    c[1].plan = plan_of(TT_ALGO_TREE);
    c[2].plan = plan_of(TT_ALGO_TREE);
    c[3].plan = plan_of(TT_ALGO_RING);
    c[4].plan = plan_of(last);
}

/* the callbacks' record for sizes sz (each size's candidate count taken from it), rounds rounds */
static calls calls_for(tt_sweep_cand_size *sz, int nsz, int rounds)
{
    calls cb;
    memset(&cb, 0, sizeof cb);
    cb.sz = sz;
    for (int i = 0; i < nsz && i < 8; i++) cb.ncand_of[i] = sz[i].ncand;
    cb.rounds = rounds;
    return cb;
}

/* sizes 0 and 2 with 2 and 3 candidates, size 1 skipped (no candidate) */
static void three_sizes(tt_sweep_cand_size sz[3], tt_sweep_cand c[5])
{
    five_cands(c, TT_ALGO_RHD);
    sz[0] = (tt_sweep_cand_size){1024, 256, 2, &c[0]};
    sz[1] = (tt_sweep_cand_size){2048, 512, 0, NULL};
    sz[2] = (tt_sweep_cand_size){4096, 1024, 3, &c[2]};
}

static void test_script_rounds_fold_to_fastest(void **state)
{
    (void)state;
    script s;
    tt_sweep_engine e = script_engine(&s);
    tt_sweep_cand_size sz[3];
    tt_sweep_cand c[5];
    three_sizes(sz, c);
    c[4].wrong[0] = 99; /* cleared before measuring */
    const int rounds = 3;
    calls cb = calls_for(sz, 3, rounds);
    tt_sweep_cands_opts o = {sweep_opts(), rounds, on_progress, on_size, &cb};
    assert_int_equal(tt_sweep_candidates(&e, &o, sz, 3), TT_OK);
    assert_int_equal(s.prepared, 1024); /* the largest count with candidates */
    /* two placements per candidate and round: (2 + 3) x 3 x 2 calls */
    assert_int_equal(s.ncalls, 5 * rounds * 2);
    assert_int_equal(cb.nprogress, 5 * rounds);
    assert_int_equal(cb.bad_order, 0);
    assert_int_equal(cb.nsize, 3); /* every size, the skipped one too, in order */
    for (int i = 0; i < 3; i++) assert_int_equal(cb.sizes[i], i);
    /* recompute from the script: the calls of candidate k of size i, round r, placement p */
    int call = 0;
    for (int i = 0; i < 3; i++) {
        double best[5][2];
        long long worst[5][2];
        for (int r = 0; r < rounds; r++)
            for (int k = 0; k < sz[i].ncand; k++)
                for (int p = 0; p < 2; p++) {
                    call++;
                    assert_int_equal(s.count[call - 1], sz[i].count);
                    assert_int_equal(s.algo[call - 1], sz[i].cand[k].plan.algo);
                    assert_int_equal(s.place[call - 1], p);
                    double us = script_us(call);
                    long long w = 3 * script_wrong(call, sz[i].cand[k].plan.algo, p);
                    if (r == 0 || us < best[k][p]) best[k][p] = us;
                    if (r == 0 || w > worst[k][p]) worst[k][p] = w;
                }
        for (int k = 0; k < sz[i].ncand; k++)
            for (int p = 0; p < 2; p++) {
                const tt_sweep_cand *m = &sz[i].cand[k];
                assert_true(m->time_us[p] > best[k][p] * 0.999999 && m->time_us[p] < best[k][p] * 1.000001);
                /* AllReduce on 2 ranks: algbw = bytes / time, busbw = algbw x 2 (n-1) / n */
                double algbw = (double)sz[i].count * 4 / 1e9 / (best[k][p] * 1e-6);
                assert_true(m->algbw[p] > algbw * 0.999999 && m->algbw[p] < algbw * 1.000001);
                assert_true(m->busbw[p] > m->algbw[p] * 0.999999 && m->busbw[p] < m->algbw[p] * 1.000001);
                assert_int_equal(m->wrong[p], worst[k][p]);
            }
    }
    /* the script's wrong results are somewhere: the fold did not hide them all */
    long long anywrong = 0;
    for (int k = 0; k < 5; k++) anywrong += c[k].wrong[1];
    assert_true(anywrong > 0);
    assert_int_equal(c[4].wrong[0], 0);
}

static void test_script_failure_keeps_what_ran(void **state)
{
    (void)state;
    script s;
    tt_sweep_engine e = script_engine(&s);
    tt_sweep_cand_size sz[3];
    tt_sweep_cand c[5];
    three_sizes(sz, c);
    for (int k = 0; k < 5; k++) c[k].time_us[0] = c[k].time_us[1] = 1234; /* stale: cleared */
    s.fail_at = 2 * 2 * 2 + 3; /* size 0 done (2 rounds x 2 candidates x 2), then size 2's candidate 1 */
    calls cb = calls_for(sz, 3, 2);
    tt_sweep_cands_opts o = {sweep_opts(), 2, on_progress, on_size, &cb};
    tt_error_clear();
    assert_int_equal(tt_sweep_candidates(&e, &o, sz, 3), TT_ERR_TIMEOUT);
    assert_string_equal(tt_error_message(), "rank 1: scripted failure at call 11");
    assert_int_equal(s.ncalls, 11); /* stopped at the failure */
    assert_int_equal(cb.nsize, 2);  /* sizes 0 and 1 were done, size 2 not */
    for (int k = 0; k < 2; k++) assert_true(c[k].time_us[0] > 0 && c[k].time_us[1] > 0);
    assert_true(c[2].time_us[0] > 0 && c[2].time_us[1] > 0); /* size 2, round 0, candidate 0 ran */
    for (int k = 3; k < 5; k++) {
        assert_true(c[k].time_us[0] == 0 && c[k].time_us[1] == 0);
        assert_int_equal(c[k].wrong[0], -1);
    }
}

static void test_bad_arguments(void **state)
{
    (void)state;
    script s;
    tt_sweep_engine e = script_engine(&s);
    tt_sweep_cand_size sz[3];
    tt_sweep_cand c[5];
    three_sizes(sz, c);
    tt_sweep_cands_opts o = {sweep_opts(), 0, NULL, NULL, NULL};
    assert_int_equal(tt_sweep_candidates(&e, &o, sz, 3), TT_ERR_INVALID); /* 0 rounds */
    assert_non_null(strstr(tt_error_message(), "0 round(s)"));
    o.rounds = 1;
    assert_int_equal(tt_sweep_candidates(NULL, &o, sz, 3), TT_ERR_INVALID);
    assert_int_equal(tt_sweep_candidates(&e, NULL, sz, 3), TT_ERR_INVALID);
    sz[2].cand = NULL;
    assert_int_equal(tt_sweep_candidates(&e, &o, sz, 3), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "4096 bytes"));
    assert_int_equal(s.ncalls, 0); /* nothing ran */
    assert_int_equal(tt_sweep_candidates_host(NULL, 1, &o, sz, 1), TT_ERR_INVALID);
    tt_comm *none[2] = {NULL, NULL};
    assert_int_equal(tt_sweep_candidates_host(none, 2, &o, sz, 1), TT_ERR_INVALID);
    /* no size at all: nothing to do */
    assert_int_equal(tt_sweep_candidates(&e, &o, NULL, 0), TT_OK);
}

/* ---------------------------------------------------------------- host ranks as threads */
static void test_host_threads_every_candidate(void **state)
{
    (void)state;
    tt_comm *comm[NR];
    assert_int_equal(tt_comm_init_threads(NR, comm), TT_OK);
    tt_sweep_cand c[5];
    five_cands(c, TT_ALGO_HIER);
    tt_sweep_opts so = sweep_opts();
    so.coll = TT_COLL_ALLREDUCE;
    tt_sweep_cand_size sz[2] = {{0, 0, 2, &c[0]}, {0, 0, 3, &c[2]}};
    for (int i = 0; i < 2; i++) {
        sz[i].count = tt_sweep_count(&so, NR, 1024u << (4 * i));
        sz[i].bytes = (uint64_t)sz[i].count * 4;
    }
    calls cb = calls_for(sz, 2, 2);
    tt_sweep_cands_opts o = {so, 2, on_progress, on_size, &cb};
    assert_int_equal(tt_sweep_candidates_host(comm, NR, &o, sz, 2), TT_OK);
    assert_int_equal(cb.nsize, 2);          /* one rank keeps the results */
    assert_int_equal(cb.nprogress, 5 * 2); /* rank 0 only: once per candidate and round */
    assert_int_equal(cb.bad_order, 0);
    double bus = 2.0 * (NR - 1) / NR;
    for (int k = 0; k < 5; k++)
        for (int p = 0; p < 2; p++) {
            assert_true(c[k].time_us[p] > 0);
            assert_int_equal(c[k].wrong[p], 0); /* checked, exact */
            assert_true(c[k].busbw[p] > c[k].algbw[p] * bus * 0.999999 &&
                        c[k].busbw[p] < c[k].algbw[p] * bus * 1.000001);
        }
    for (int r = 0; r < NR; r++) assert_int_equal(tt_comm_destroy(comm[r]), TT_OK);
}

/* a plan no rank can run: every rank fails the same way, the first message comes back */
static void test_host_threads_failure_message(void **state)
{
    (void)state;
    tt_comm *comm[NR];
    assert_int_equal(tt_comm_init_threads(NR, comm), TT_OK);
    tt_sweep_cand c[2];
    memset(c, 0, sizeof c);
    c[0].plan = plan_of(TT_ALGO_RING);
    c[1].plan = plan_of(TT_ALGO_RHD); /* halving-doubling needs a power-of-two rank count */
    tt_sweep_opts so = sweep_opts();
    tt_sweep_cand_size sz[1] = {{1024, 256, 2, c}};
    tt_sweep_cands_opts o = {so, 1, NULL, NULL, NULL};
    tt_error_clear();
    tt_status st = tt_sweep_candidates_host(comm, NR, &o, sz, 1);
    assert_int_equal(st, TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "power-of-two"));
    assert_true(c[0].time_us[0] > 0 && c[0].time_us[1] > 0); /* the ring ran before it */
    assert_true(c[1].time_us[0] == 0 && c[1].wrong[0] == -1);
    for (int r = 0; r < NR; r++) tt_comm_destroy(comm[r]);
}

/* the whole sweep on host ranks as threads, through the same runner: rank 0's rows, exact results;
 * a plan no rank can run comes back with its reason */
static void count_row(void *user, const tt_sweep_row *r)
{
    int *n = user;
    if (r->wrong[0] == 0 && r->wrong[1] == 0 && r->time_us[0] > 0 && r->time_us[1] > 0) (*n)++;
}

static void test_host_threads_sweep(void **state)
{
    (void)state;
    tt_comm *comm[NR];
    assert_int_equal(tt_comm_init_threads(NR, comm), TT_OK);
    tt_sweep_opts so = sweep_opts();
    so.minb = 1024;
    so.maxb = 16384;
    so.factor = 4; /* 1, 4, 16 KiB */
    int rows = 0;
    so.on_row = count_row;
    so.user = &rows;
    assert_int_equal(tt_sweep_run_host(comm, NR, &so), TT_OK);
    assert_int_equal(rows, 3);
    so.plan = plan_of(TT_ALGO_RHD); /* 3 ranks: not a power of two */
    assert_int_equal(tt_sweep_run_host(comm, NR, &so), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "power-of-two"));
    assert_int_equal(tt_sweep_run_host(comm, 0, &so), TT_ERR_INVALID);
    for (int r = 0; r < NR; r++) assert_int_equal(tt_comm_destroy(comm[r]), TT_OK);
}

/* ---------------------------------------------------------------- agreement */
typedef struct {
    tt_comm *c;
    int code;
    int64_t fp;
    tt_status st;
    int who, who_code;
} agree_arg;

static void *agree_main(void *p)
{
    agree_arg *a = p;
    a->st = tt_comm_agree(a->c, a->code, a->fp, &a->who, &a->who_code);
    return NULL;
}

static void agree_all(tt_comm **comm, const int code[NR], const int64_t fp[NR], agree_arg out[NR])
{
    pthread_t th[NR];
    for (int r = 0; r < NR; r++) {
        out[r] = (agree_arg){comm[r], code[r], fp[r], TT_ERR_INTERNAL, -2, -2};
        pthread_create(&th[r], NULL, agree_main, &out[r]);
    }
    for (int r = 0; r < NR; r++) pthread_join(th[r], NULL);
}

static void test_agree(void **state)
{
    (void)state;
    tt_comm *comm[NR];
    assert_int_equal(tt_comm_init_threads(NR, comm), TT_OK);
    agree_arg a[NR];
    /* all ready, one plan */
    agree_all(comm, (int[NR]){0, 0, 0}, (int64_t[NR]){42, 42, 42}, a);
    for (int r = 0; r < NR; r++) {
        assert_int_equal(a[r].st, TT_OK);
        assert_int_equal(a[r].who, -1);
        assert_int_equal(a[r].who_code, 0);
    }
    /* rank 2's plan differs: every rank names it */
    agree_all(comm, (int[NR]){0, 0, 0}, (int64_t[NR]){42, 42, 43}, a);
    for (int r = 0; r < NR; r++) {
        assert_int_equal(a[r].st, TT_OK);
        assert_int_equal(a[r].who, 2);
        assert_int_equal(a[r].who_code, 0);
    }
    /* rank 1 refused (its code), rank 2 differs too: the refusal is named */
    agree_all(comm, (int[NR]){0, 5, 0}, (int64_t[NR]){42, 7, 43}, a);
    for (int r = 0; r < NR; r++) {
        assert_int_equal(a[r].st, TT_OK);
        assert_int_equal(a[r].who, 1);
        assert_int_equal(a[r].who_code, 5);
    }
    /* rank 0 itself refused */
    agree_all(comm, (int[NR]){2, 0, 0}, (int64_t[NR]){42, 42, 42}, a);
    for (int r = 0; r < NR; r++) {
        assert_int_equal(a[r].who, 0);
        assert_int_equal(a[r].who_code, 2);
    }
    int who, code;
    assert_int_equal(tt_comm_agree(NULL, 0, 0, &who, &code), TT_ERR_INVALID);
    for (int r = 0; r < NR; r++) assert_int_equal(tt_comm_destroy(comm[r]), TT_OK);
}

/* ---------------------------------------------------------------- which candidates run here */
static void test_runnable_plans_host(void **state)
{
    (void)state;
    tt_comm *comm[NR];
    assert_int_equal(tt_comm_init_threads(NR, comm), TT_OK);
    tt_plan mine = plan_of(TT_ALGO_TREE);
    tt_comm_set_plan(comm[0], &mine);
    for (int coll = 0; coll < TT_COLL_COUNT; coll++) {
        tt_plan req[16], eff[16];
        int n = tt_exec_runnable_plans(comm[0], NULL, (tt_coll)coll, 1024, TT_FLOAT, req, eff, 16);
        assert_true(n >= 1); /* the ring runs every collective */
        /* exactly the capability table's pairs that run as asked, in its order */
        tt_algo algos[TT_ALGO_COUNT];
        tt_proto protos[TT_PROTO_COUNT];
        int na = tt_exec_algos(TT_EXEC_HOST, (tt_coll)coll, NR, algos, TT_ALGO_COUNT);
        int np = tt_exec_protos(TT_EXEC_HOST, protos, TT_PROTO_COUNT);
        int k = 0;
        for (int a = 0; a < na; a++)
            for (int p = 0; p < np; p++) {
                tt_plan r = {algos[a], protos[p], 1, 0}, e;
                tt_status st = tt_exec_plan_check(comm[0], NULL, (tt_coll)coll, 1024, TT_FLOAT, &r, &e);
                if (st != TT_OK) {
                    assert_true(tt_error_message()[0] != 0); /* refused saying why */
                    continue;
                }
                assert_true(k < n);
                assert_int_equal(req[k].algo, algos[a]);
                assert_int_equal(req[k].proto, protos[p]);
                assert_int_equal(eff[k].algo, algos[a]);
                assert_int_equal(eff[k].channels, 1);
                k++;
            }
        assert_int_equal(k, n);
        assert_int_equal(tt_exec_runnable_plans(comm[0], NULL, (tt_coll)coll, 1024, TT_FLOAT, NULL, NULL, 1), 1);
    }
    /* 3 ranks: halving-doubling refused */
    tt_plan e, r = plan_of(TT_ALGO_RHD);
    assert_int_equal(tt_exec_plan_check(comm[0], NULL, TT_COLL_ALLREDUCE, 1024, TT_FLOAT, &r, &e), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "power-of-two"));
    /* a plan that passes runs as asked (another algorithm would be refused: "reduces to") */
    r = plan_of(TT_ALGO_HIER);
    if (tt_exec_plan_check(comm[0], NULL, TT_COLL_ALLREDUCE, 1024, TT_FLOAT, &r, &e) == TT_OK)
        assert_int_equal(e.algo, TT_ALGO_HIER);
    /* LL is a GPU protocol */
    r = plan_of(TT_ALGO_RING);
    r.proto = TT_PROTO_LL;
    assert_int_not_equal(tt_exec_plan_check(comm[0], NULL, TT_COLL_ALLREDUCE, 1024, TT_FLOAT, &r, &e), TT_OK);
    /* the communicator's own plan is left as it was */
    assert_int_equal(tt_comm_resolve_plan(comm[0], TT_COLL_ALLREDUCE, 1024, TT_FLOAT, &e), TT_OK);
    assert_int_equal(e.algo, TT_ALGO_TREE);
    /* one communicator, not none or two */
    r = plan_of(TT_ALGO_RING);
    assert_int_equal(tt_exec_plan_check(NULL, NULL, TT_COLL_ALLREDUCE, 1024, TT_FLOAT, &r, &e), TT_ERR_INVALID);
    assert_int_equal(tt_exec_runnable_plans(NULL, NULL, TT_COLL_ALLREDUCE, 1024, TT_FLOAT, NULL, NULL, 8), 0);
    for (int q = 0; q < NR; q++) assert_int_equal(tt_comm_destroy(comm[q]), TT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_script_rounds_fold_to_fastest),
        cmocka_unit_test(test_script_failure_keeps_what_ran),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_host_threads_every_candidate),
        cmocka_unit_test(test_host_threads_failure_message),
        cmocka_unit_test(test_host_threads_sweep),
        cmocka_unit_test(test_agree),
        cmocka_unit_test(test_runnable_plans_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
