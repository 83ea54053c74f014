/* test_exec_measure.c - the measuring module (exec_measure*.c): the host sweep on thread ranks
 * for every collective (rows, sizes, busbw factors, exact checks, callbacks only on rank 0),
 * one row per plan (tt_sweep_one), bad options; on a GPU (else skipped with the reason) the GPU
 * engine's sweep and the GPU communicator's plan table (fallback, NO_CHANNELS). */
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

typedef struct {
    tt_sweep_row rows[16];
    int nrows, nprogress, calls_off_rank0;
} sink;

static __thread int my_rank;

static void on_row(void *user, const tt_sweep_row *r)
{
    sink *s = user;
    if (my_rank != 0) s->calls_off_rank0++;
    if (s->nrows < 16) s->rows[s->nrows++] = *r;
}

static void on_progress(void *user, int index, int nsizes, uint64_t bytes, int in_place)
{
    (void)index; (void)nsizes; (void)bytes; (void)in_place;
    sink *s = user;
    if (my_rank != 0) s->calls_off_rank0++;
    s->nprogress++;
}

typedef struct {
    tt_comm *c;
    const tt_sweep_opts *o;
    tt_status st;
} rank_arg;

static void *rank_main(void *p)
{
    rank_arg *a = p;
    my_rank = tt_comm_rank(a->c);
    tt_sweep_engine e;
    a->st = tt_sweep_engine_host(&e, a->c);
    if (a->st == TT_OK) a->st = tt_sweep_run(&e, a->o);
    tt_sweep_engine_release(&e);
    return NULL;
}

static void sweep_threads(tt_comm **c, const tt_sweep_opts *o)
{
    pthread_t th[NR];
    rank_arg a[NR];
    for (int r = 0; r < NR; r++) {
        a[r] = (rank_arg){c[r], o, TT_OK};
        pthread_create(&th[r], NULL, rank_main, &a[r]);
    }
    for (int r = 0; r < NR; r++) {
        pthread_join(th[r], NULL);
        assert_int_equal(a[r].st, TT_OK);
    }
}

static tt_sweep_opts base_opts(void)
{
    tt_sweep_opts o;
    memset(&o, 0, sizeof o);
    o.coll = TT_COLL_ALLREDUCE;
    o.dtype = TT_FLOAT;
    o.op = TT_SUM;
    o.minb = 96;
    o.maxb = 96 * 64;
    o.factor = 8;
    o.iters = 2;
    o.warmup = 1;
    o.agg = 2;
    o.check = 2;
    o.plan = TT_PLAN_DEFAULT;
    return o;
}

static void test_host_sweep_every_collective(void **state)
{
    (void)state;
    tt_comm *c[NR];
    assert_int_equal(tt_comm_init_threads(NR, c), TT_OK);
    for (int coll = 0; coll < TT_COLL_COUNT; coll++) {
        sink s;
        memset(&s, 0, sizeof s);
        tt_sweep_opts o = base_opts();
        o.coll = (tt_coll)coll;
        o.root = 2;
        o.op = coll == TT_COLL_ALLREDUCE ? TT_AVG : TT_SUM;
        o.on_row = on_row;
        o.progress = on_progress;
        o.user = &s;
        assert_int_equal(tt_sweep_nsizes(&o), 3);
        sweep_threads(c, &o);
        assert_int_equal(s.nrows, 3);
        assert_int_equal(s.nprogress, 6); /* two placements per size */
        assert_int_equal(s.calls_off_rank0, 0);
        int per_rank = coll == TT_COLL_ALLGATHER || coll == TT_COLL_REDUCESCATTER;
        double bus = coll == TT_COLL_ALLREDUCE ? 2.0 * (NR - 1) / NR : per_rank ? (double)(NR - 1) / NR : 1.0;
        for (int i = 0; i < 3; i++) {
            const tt_sweep_row *r = &s.rows[i];
            uint64_t size = 96ull << (3 * i);
            assert_int_equal(r->index, i);
            assert_int_equal(r->count, tt_sweep_count(&o, NR, size));
            assert_int_equal(r->bytes, r->count * 4 * (per_rank ? NR : 1));
            assert_true(r->plan_known);
            for (int p = 0; p < 2; p++) {
                assert_int_equal(r->wrong[p], 0);
                assert_true(r->time_us[p] > 0);
                assert_true(r->algbw[p] > 0);
                double want = r->algbw[p] * bus;
                assert_true(r->busbw[p] > want * 0.999999 && r->busbw[p] < want * 1.000001);
            }
        }
    }
    for (int r = 0; r < NR; r++) assert_int_equal(tt_comm_destroy(c[r]), TT_OK);
}

/* no check above check_max; an explicit plan per row (what --validate does per candidate) */
static void *one_main(void *p)
{
    rank_arg *a = p;
    my_rank = tt_comm_rank(a->c);
    tt_sweep_engine e;
    a->st = tt_sweep_engine_host(&e, a->c);
    tt_sweep_opts o = *a->o;
    if (a->st == TT_OK) a->st = tt_sweep_prepare(&e, &o, 1024);
    for (int k = 0; k < 2 && a->st == TT_OK; k++) {
        o.plan.algo = k ? TT_ALGO_TREE : TT_ALGO_RING;
        tt_sweep_row r;
        r.index = k;
        a->st = tt_sweep_one(&e, &o, 1024, 4096, &r);
        if (a->st == TT_OK && (r.plan.algo != o.plan.algo || r.wrong[0] != -1 || r.wrong[1] != -1 || r.index != k))
            a->st = TT_ERR_INTERNAL;
    }
    tt_sweep_engine_release(&e);
    return NULL;
}

static void test_host_one_row_per_plan(void **state)
{
    (void)state;
    tt_comm *c[NR];
    assert_int_equal(tt_comm_init_threads(NR, c), TT_OK);
    tt_sweep_opts o = base_opts();
    o.check_max = 1024; /* 4096 bytes: not checked */
    pthread_t th[NR];
    rank_arg a[NR];
    for (int r = 0; r < NR; r++) {
        a[r] = (rank_arg){c[r], &o, TT_OK};
        pthread_create(&th[r], NULL, one_main, &a[r]);
    }
    for (int r = 0; r < NR; r++) {
        pthread_join(th[r], NULL);
        assert_int_equal(a[r].st, TT_OK);
    }
    for (int r = 0; r < NR; r++) assert_int_equal(tt_comm_destroy(c[r]), TT_OK);
}

static void test_bad_options(void **state)
{
    (void)state;
    tt_comm *c[1];
    assert_int_equal(tt_comm_init_threads(1, c), TT_OK);
    tt_sweep_engine e;
    assert_int_equal(tt_sweep_engine_host(&e, c[0]), TT_OK);
    tt_sweep_opts o = base_opts();
    o.maxb = 8; /* below minb */
    assert_int_equal(tt_sweep_run(&e, &o), TT_ERR_INVALID);
    o = base_opts();
    o.iters = 0;
    assert_int_equal(tt_sweep_run(&e, &o), TT_ERR_INVALID);
    assert_int_equal(tt_sweep_run(NULL, &o), TT_ERR_INVALID);
    tt_sweep_engine_release(&e);
    assert_int_equal(tt_sweep_engine_host(&e, NULL), TT_ERR_INVALID);
    assert_int_equal(tt_comm_destroy(c[0]), TT_OK);
}

/* ---- GPU ranks (skipped without a usable GPU) ---- */
static char g_why[256];

static tt_gpu_comm *gpu_or_skip(int nranks)
{
    if (!tt_gpu_available(g_why, sizeof g_why)) {
        printf("# SKIP no GPU: %s\n", g_why);
        return NULL;
    }
    tt_gpu_comm *g = NULL;
    assert_int_equal(tt_gpu_comm_init(&g, nranks, NULL), TT_OK);
    return g;
}

static void test_gpu_sweep(void **state)
{
    (void)state;
    tt_gpu_comm *g = gpu_or_skip(2);
    if (!g) {
        skip();
        return;
    }
    sink s;
    memset(&s, 0, sizeof s);
    tt_sweep_opts o = base_opts();
    o.minb = 1024;
    o.maxb = 1 << 20;
    o.factor = 32;
    o.on_row = on_row;
    o.user = &s;
    my_rank = 0;
    tt_sweep_engine e;
    assert_int_equal(tt_sweep_engine_gpu(&e, g, NULL), TT_OK);
    assert_int_equal(tt_sweep_run(&e, &o), TT_OK);
    tt_sweep_engine_release(&e);
    assert_int_equal(s.nrows, 3);
    for (int i = 0; i < s.nrows; i++) {
        assert_true(s.rows[i].plan_known);
        for (int p = 0; p < 2; p++) {
            assert_int_equal(s.rows[i].wrong[p], 0);
            assert_true(s.rows[i].time_us[p] > 0);
        }
    }
    /* the other collectives run on GPU ranks too, checked exactly */
    tt_coll others[] = {TT_COLL_ALLGATHER, TT_COLL_REDUCESCATTER, TT_COLL_BROADCAST, TT_COLL_REDUCE};
    for (int c = 0; c < 4; c++) {
        memset(&s, 0, sizeof s);
        o.coll = others[c];
        o.root = 1;
        assert_int_equal(tt_sweep_engine_gpu(&e, g, NULL), TT_OK);
        if (tt_sweep_run(&e, &o) != TT_OK) fail_msg("%s: %s", tt_coll_label(o.coll), tt_error_message());
        tt_sweep_engine_release(&e);
        assert_int_equal(s.nrows, 3);
        for (int i = 0; i < s.nrows; i++)
            for (int p = 0; p < 2; p++) assert_int_equal(s.rows[i].wrong[p], 0);
    }
    assert_int_equal(tt_gpu_comm_destroy(g), TT_OK);
}

static void test_gpu_plan_table(void **state)
{
    (void)state;
    tt_gpu_comm *g = gpu_or_skip(3);
    if (!g) {
        tt_tune_entry one = {.coll = TT_COLL_ALLREDUCE, .min_bytes = 0, .max_bytes = 100, .algo = TT_ALGO_RING,
                             .proto = TT_PROTO_SIMPLE};
        /* NULL communicator (CUDA build) or no CUDA at all (stub): an error either way */
        assert_int_not_equal(tt_gpu_comm_set_plan_table(NULL, &one, 1, 0), TT_OK);
        assert_int_equal(tt_gpu_comm_plan_table_fallbacks(NULL), 0);
        skip();
        return;
    }
    tt_tune_entry rules[3] = {
        {.coll = TT_COLL_ALLREDUCE, .min_bytes = 0, .max_bytes = 4096, .algo = TT_ALGO_RING, .proto = TT_PROTO_SIMPLE,
         .channels = 2},
        {.coll = TT_COLL_ALLREDUCE, .min_bytes = 4097, .max_bytes = 1u << 20, .algo = TT_ALGO_NVLS,
         .proto = TT_PROTO_SIMPLE},
        {.coll = TT_COLL_ALLREDUCE, .min_bytes = (1u << 20) + 1, .max_bytes = 1u << 24, .algo = TT_ALGO_RING,
         .proto = TT_PROTO_LL128},
    };
    tt_plan eff;
    assert_int_equal(tt_gpu_comm_set_plan_table(g, rules, 3, 0), TT_OK);
    assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 256, TT_FLOAT, NULL, &eff), TT_OK);
    assert_true(eff.algo == TT_ALGO_RING && eff.proto == TT_PROTO_SIMPLE && eff.channels == 2);
    /* NVLS: refused naming the rule */
    assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 2048, TT_FLOAT, NULL, &eff), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "plan table rule for AllReduce 4097..1048576 bytes (nvls/simple)"));
    /* LL128: runs between ranks of one GPU and NVLink peers, refused naming the rule elsewhere */
    const char *l01 = tt_gpu_comm_link(g, 0, 1);
    tt_status s128 = tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 1 << 20, TT_FLOAT, NULL, &eff);
    if (strstr(l01, "same GPU") || strstr(l01, "NVLink")) {
        assert_int_equal(s128, TT_OK);
        assert_int_equal(eff.proto, TT_PROTO_LL128);
    } else {
        assert_int_equal(s128, TT_ERR_UNSUPPORTED);
        assert_non_null(strstr(tt_error_message(), "(ring/ll128)"));
    }
    /* an explicit plan wins */
    tt_plan p = TT_PLAN_DEFAULT;
    p.algo = TT_ALGO_TREE;
    assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 256, TT_FLOAT, &p, &eff), TT_OK);
    assert_int_equal(eff.algo, TT_ALGO_TREE);
    /* fallback and no channels: the executor's own plan, counted per call */
    assert_int_equal(tt_gpu_comm_set_plan_table(g, rules, 3, TT_PLAN_TABLE_FALLBACK | TT_PLAN_TABLE_NO_CHANNELS),
                     TT_OK);
    tt_plan dflt;
    assert_int_equal(tt_gpu_comm_set_plan_table(g, NULL, 0, 0), TT_OK);
    assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 256, TT_FLOAT, NULL, &dflt), TT_OK);
    assert_int_equal(tt_gpu_comm_set_plan_table(g, rules, 3, TT_PLAN_TABLE_FALLBACK | TT_PLAN_TABLE_NO_CHANNELS),
                     TT_OK);
    assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 256, TT_FLOAT, NULL, &eff), TT_OK);
    assert_int_equal(eff.channels, dflt.channels);
    unsigned long fb0 = tt_gpu_comm_plan_table_fallbacks(g);
    assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 2048, TT_FLOAT, NULL, &eff), TT_OK);
    assert_int_not_equal(eff.algo, TT_ALGO_NVLS);
    assert_int_equal(tt_gpu_comm_plan_table_fallbacks(g), fb0 + 1);
    /* bad rules */
    tt_tune_entry bad = {.coll = TT_COLL_ALLREDUCE, .min_bytes = 10, .max_bytes = 5, .algo = TT_ALGO_RING,
                         .proto = TT_PROTO_SIMPLE};
    assert_int_equal(tt_gpu_comm_set_plan_table(g, &bad, 1, 0), TT_ERR_INVALID);
    assert_int_equal(tt_gpu_comm_destroy(g), TT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_sweep_every_collective),
        cmocka_unit_test(test_host_one_row_per_plan),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_gpu_sweep),
        cmocka_unit_test(test_gpu_plan_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
