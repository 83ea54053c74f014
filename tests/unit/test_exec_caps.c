/* test_exec_caps.c - the executor's capability query (exec/exec_caps.c):
 * what tools ask before they build candidate plans, and the same words the
 * collectives refuse with; the algorithm registry (common/common_algos.c)
 * against the host schedules (exec/exec_algos.c) and the model's default plan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exec_internal.h"
#include "support_exec.h"
#include "tt_exec.h"
#include "tune_internal.h"

static void test_host(void **state)
{
    (void)state;
    tt_algo a[8];
    tt_proto p[4];
    char why[320];
    assert_int_equal(tt_exec_algos(TT_EXEC_HOST, TT_COLL_ALLREDUCE, 4, a, 8), 5);
    assert_int_equal(a[0], TT_ALGO_TREE);
    assert_int_equal(a[1], TT_ALGO_RING);
    assert_int_equal(a[2], TT_ALGO_RHD);
    assert_int_equal(a[3], TT_ALGO_RD);
    assert_int_equal(a[4], TT_ALGO_HIER);
    assert_int_equal(tt_exec_algos(TT_EXEC_HOST, TT_COLL_ALLREDUCE, 6, NULL, 0), 3); /* no rhd, no rd */
    assert_true(tt_exec_supports(TT_EXEC_HOST, TT_COLL_ALLREDUCE, TT_ALGO_RD, TT_PROTO_SIMPLE, 2, why, sizeof why));
    assert_false(tt_exec_supports(TT_EXEC_HOST, TT_COLL_ALLREDUCE, TT_ALGO_RD, TT_PROTO_DEFAULT, 3, why, sizeof why));
    assert_string_equal(why, "algorithm recursive-doubling was requested for AllReduce on 3 ranks but cannot apply "
                             "(recursive-doubling needs a power-of-two rank count); available: tree, ring, hierarchical");
    assert_false(tt_exec_supports(TT_EXEC_HOST, TT_COLL_ALLGATHER, TT_ALGO_RD, TT_PROTO_DEFAULT, 4, why, sizeof why));
    assert_int_equal(tt_exec_algos(TT_EXEC_HOST, TT_COLL_ALLGATHER, 4, a, 8), 1);
    assert_int_equal(a[0], TT_ALGO_RING);
    assert_int_equal(tt_exec_protos(TT_EXEC_HOST, p, 4), 1);
    assert_int_equal(p[0], TT_PROTO_SIMPLE);
    assert_int_equal(tt_exec_max_channels(TT_EXEC_HOST), 1);
    assert_true(tt_exec_supports(TT_EXEC_HOST, TT_COLL_ALLREDUCE, TT_ALGO_RHD, TT_PROTO_SIMPLE, 8, why, sizeof why));
    assert_true(tt_exec_supports(TT_EXEC_HOST, TT_COLL_REDUCE, TT_ALGO_DEFAULT, TT_PROTO_DEFAULT, 3, NULL, 0));
    assert_false(tt_exec_supports(TT_EXEC_HOST, TT_COLL_ALLREDUCE, TT_ALGO_RHD, TT_PROTO_DEFAULT, 6, why, sizeof why));
    assert_string_equal(why, "algorithm halving-doubling was requested for AllReduce on 6 ranks but cannot apply "
                             "(halving-doubling needs a power-of-two rank count); available: tree, ring, hierarchical");
    assert_false(tt_exec_supports(TT_EXEC_HOST, TT_COLL_ALLGATHER, TT_ALGO_TREE, TT_PROTO_DEFAULT, 4, why, sizeof why));
    assert_non_null(strstr(why, "available: ring"));
    assert_false(tt_exec_supports(TT_EXEC_HOST, TT_COLL_ALLREDUCE, TT_ALGO_NVLS, TT_PROTO_DEFAULT, 4, why, sizeof why));
    assert_false(tt_exec_supports(TT_EXEC_HOST, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 4, why, sizeof why));
    assert_non_null(strstr(why, "protocol ll was requested but the host transports run only simple"));
    assert_false(tt_exec_supports((tt_exec_mode)7, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 4, why, sizeof why));
}

/* ---- the algorithm registry (common_algos.c) against the dispatch table (exec_algos.c) and the
 * model (tune_model_exec.c) ---- */

/* every row is the row of its id, named, and lists its executors' algorithms in one order */
static void test_registry_rows(void **state)
{
    (void)state;
    for (int run = 0; run < TT_RUN_COUNT; run++) {
        int seen[TT_ALGO_COUNT + 1] = {0};
        for (int a = 0; a < TT_ALGO_COUNT; a++) {
            const tt_algo_info *r = tt_algo_info_of((tt_algo)a);
            assert_non_null(r);
            assert_int_equal(r->algo, a);
            assert_true(r->name && r->name[0] && r->label && r->label[0]);
            const tt_algo_run *x = &r->run[run];
            assert_int_equal(x->colls & ~(unsigned)TT_COLLS_ALL, 0);
            if (!x->colls) {
                assert_int_equal(x->order, 0);
                continue;
            }
            assert_in_range(x->order, 1, TT_ALGO_COUNT);
            if (seen[x->order])
                fail_msg("run %d: %s and %s share list place %d", run, tt_algo_name((tt_algo)(seen[x->order] - 1)),
                         r->name, x->order);
            seen[x->order] = a + 1;
        }
    }
    assert_null(tt_algo_info_of(TT_ALGO_DEFAULT));
    assert_null(tt_algo_info_of(TT_ALGO_COUNT));
}

/* A rank count the row runs on (the smallest of 3, 4, 8 that the rank-count condition admits). */
static int ranks_for(tt_algo a, tt_coll c)
{
    static const int ns[] = {3, 4, 8};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
        if (tt_algo_runs(a, TT_RUN_HOST, c, ns[i]))
            return ns[i];
    return 0;
}

/* Run (a, c) on n thread ranks with the plan forcing a; 0 when every rank's result is right. */
static size_t run_forced(tt_algo a, tt_coll c, int n)
{
    enum { COUNT = 1001 };
    const tt_dtype t = TT_INT32;
    const tt_redop op = TT_SUM;
    const int root = 1;
    size_t es = tt_dtype_size(t), in = c == TT_COLL_REDUCESCATTER ? (size_t)COUNT * n : COUNT;
    size_t out = c == TT_COLL_ALLGATHER ? (size_t)COUNT * n : COUNT;
    tt_comm *w[8];
    unsigned char *sb[8], *rb[8], *exp = malloc(out * es);
    assert_int_equal(tt_comm_init_threads(n, w), TT_OK);
    tt_plan plan = TT_PLAN_DEFAULT, eff;
    plan.algo = a;
    for (int r = 0; r < n; r++) {
        tt_comm_set_timeout(w[r], 5000);
        tt_comm_set_plan(w[r], &plan);
        sb[r] = malloc(in * es);
        rb[r] = calloc(out, es);
        sx_fill(sb[r], r, in, t, op, 0);
    }
    /* the plan runs as asked: no other algorithm in its place */
    if (tt_comm_resolve_plan(w[0], c, COUNT, t, &eff) != TT_OK)
        fail_msg("%s %s on %d ranks: %s", tt_algo_label(a), tt_coll_label(c), n, tt_error_message());
    assert_int_equal(eff.algo, a);
    tt_group_start();
    for (int r = 0; r < n; r++) {
        tt_status st;
        switch (c) {
        case TT_COLL_ALLREDUCE: st = tt_allreduce(sb[r], rb[r], COUNT, t, op, w[r]); break;
        case TT_COLL_REDUCESCATTER: st = tt_reducescatter(sb[r], rb[r], COUNT, t, op, w[r]); break;
        case TT_COLL_ALLGATHER: st = tt_allgather(sb[r], rb[r], COUNT, t, w[r]); break;
        case TT_COLL_BROADCAST: st = tt_broadcast(sb[r], rb[r], COUNT, t, root, w[r]); break;
        default: st = tt_reduce_coll(sb[r], rb[r], COUNT, t, op, root, w[r]); break;
        }
        if (st != TT_OK)
            fail_msg("issue: %s", tt_error_message());
    }
    assert_int_equal(tt_group_end(), TT_OK);
    for (int r = 0; r < n; r++)
        if (tt_comm_wait(w[r]) != TT_OK)
            fail_msg("%s %s on %d ranks: %s", tt_algo_label(a), tt_coll_label(c), n, tt_error_message());
    size_t wrong = 0;
    for (int r = 0; r < n; r++) {
        if (c == TT_COLL_REDUCE && r != root)
            continue;
        if (c == TT_COLL_ALLGATHER)
            for (int q = 0; q < n; q++)
                sx_fill(exp + (size_t)q * COUNT * es, q, COUNT, t, op, 0);
        else if (c == TT_COLL_BROADCAST)
            sx_fill(exp, root, COUNT, t, op, 0);
        else
            sx_expected_reduce(exp, n, COUNT, t, op, c == TT_COLL_REDUCESCATTER ? (size_t)r * COUNT : 0);
        wrong += memcmp(rb[r], exp, out * es) != 0;
    }
    for (int r = 0; r < n; r++) {
        assert_int_equal(tt_comm_destroy(w[r]), TT_OK);
        free(sb[r]);
        free(rb[r]);
    }
    free(exp);
    return wrong;
}

/* every (algorithm, collective) of a host row has a schedule, and it runs and gives the right
 * result on host ranks */
static void test_host_rows_have_schedules(void **state)
{
    (void)state;
    int rows = 0;
    for (int a = 0; a < TT_ALGO_COUNT; a++)
        for (int c = 0; c < TT_COLL_COUNT; c++) {
            if (!(tt_algo_info_of((tt_algo)a)->run[TT_RUN_HOST].colls & TT_COLL_BIT(c)))
                continue;
            rows++;
            if (!exec_algo_schedule((tt_algo)a, (tt_coll)c))
                fail_msg("the registry's host row %s runs %s but exec_algos.c has no schedule for it",
                         tt_algo_name((tt_algo)a), tt_coll_label((tt_coll)c));
            int n = ranks_for((tt_algo)a, (tt_coll)c);
            assert_int_not_equal(n, 0);
            size_t wrong = run_forced((tt_algo)a, (tt_coll)c, n);
            if (wrong)
                fail_msg("%s %s on %d ranks: %zu ranks with a wrong result", tt_algo_label((tt_algo)a),
                         tt_coll_label((tt_coll)c), n, wrong);
        }
    assert_int_equal(rows, 9); /* ring x 5 collectives, AllReduce tree, rhd, rd, hier */
}

/* every schedule of the dispatch table has its registry row (ids outside the enum: none) */
static void test_schedules_have_rows(void **state)
{
    (void)state;
    for (int a = -2; a < TT_ALGO_COUNT + 2; a++)
        for (int c = -1; c <= TT_COLL_COUNT; c++) {
            if (!exec_algo_schedule((tt_algo)a, (tt_coll)c))
                continue;
            if (!tt_algo_runs((tt_algo)a, TT_RUN_HOST, (tt_coll)c, 0))
                fail_msg("exec_algos.c has a schedule for algorithm %d (%s) %s without a host row in the registry",
                         a, tt_algo_name((tt_algo)a), tt_coll_label((tt_coll)c));
        }
}

/* every registry row has its line of cost hooks (tune_algos.c), and the executor-shaped model has
 * host AllReduce terms exactly for the algorithms host ranks run as AllReduce */
static void test_rows_have_cost_hooks(void **state)
{
    (void)state;
    for (int a = 0; a < TT_ALGO_COUNT; a++) {
        const tune_algo_cost *h = tune_algo_cost_of((tt_algo)a);
        if (!h)
            fail_msg("tune_algos.c has no line for %s", tt_algo_name((tt_algo)a));
        int runs = tt_algo_runs((tt_algo)a, TT_RUN_HOST, TT_COLL_ALLREDUCE, 0);
        if (runs != (h->host_allreduce != NULL))
            fail_msg("%s: host ranks %s AllReduce but tune_algos.c %s host terms", tt_algo_name((tt_algo)a),
                     runs ? "run" : "do not run", h->host_allreduce ? "has" : "has no");
    }
    assert_null(tune_algo_cost_of(TT_ALGO_DEFAULT));
}

/* The default plan: the host executor's resolution, the model's default for a host row without a
 * recorded plan, and the GPU rule as docs/gpu-executor.md states it (the GPU executor cannot run
 * here; it calls the same tt_algo_default / tt_proto_default) */
static void test_default_rules_agree(void **state)
{
    (void)state;
    static const uint64_t sizes[] = {4, 4096, 65536, 65540, 1 << 20};
    static tt_model_params p;
    tt_model_params_default(&p);
    for (int n = 1; n <= 9; n++) {
        tt_comm *w[9];
        assert_int_equal(tt_comm_init_threads(n, w), TT_OK);
        for (int c = 0; c < TT_COLL_COUNT; c++)
            for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
                tt_plan eff;
                assert_int_equal(tt_comm_resolve_plan(w[0], (tt_coll)c, sizes[i] / 4, TT_INT32, &eff), TT_OK);
                for (int kind = TT_RANKS_HOST; kind < TT_RANKS_KIND_COUNT; kind++) {
                    tt_measurement m;
                    memset(&m, 0, sizeof m);
                    m.coll = (tt_coll)c;
                    m.bytes = sizes[i];
                    m.nranks = n;
                    m.algo = m.proto = -1;
                    m.exec_kind = kind;
                    double f[TT_EXEC_NPARAM];
                    char why[200];
                    int algo = -2, proto = -2;
                    tune_exec_terms(&p, &m, f, &proto, &algo, why, sizeof why);
                    int small = sizes[i] <= 65536;
                    if (kind == TT_RANKS_HOST) {
                        if (algo != eff.algo || proto != eff.proto)
                            fail_msg("%s %llu bytes on %d host ranks: the executor runs %s/%s, the model assumes %s/%s",
                                     tt_coll_label((tt_coll)c), (unsigned long long)sizes[i], n,
                                     tt_algo_name(eff.algo), tt_proto_name(eff.proto), tt_algo_name((tt_algo)algo),
                                     tt_proto_name((tt_proto)proto));
                    } else {
                        int want = c == TT_COLL_ALLREDUCE && small && n > 2 ? TT_ALGO_TREE : TT_ALGO_RING;
                        if (algo != want || proto != (small ? TT_PROTO_LL : TT_PROTO_SIMPLE))
                            fail_msg("%s %llu bytes on %d GPU ranks: the model assumes %s/%s",
                                     tt_coll_label((tt_coll)c), (unsigned long long)sizes[i], n,
                                     tt_algo_name((tt_algo)algo), tt_proto_name((tt_proto)proto));
                    }
                }
            }
        for (int r = 0; r < n; r++)
            assert_int_equal(tt_comm_destroy(w[r]), TT_OK);
    }
}

static void test_gpu(void **state)
{
    (void)state;
    tt_algo a[8];
    tt_proto p[4];
    char why[320];
    /* per communicator: without one, nothing (either build) */
    assert_int_equal(tt_gpu_comm_algos(NULL, TT_COLL_ALLREDUCE, a, 8), 0);
    assert_int_equal(tt_gpu_comm_hosts(NULL), 0);
#ifdef TT_HAVE_CUDA
    assert_int_equal(tt_exec_algos(TT_EXEC_GPU, TT_COLL_ALLREDUCE, 4, a, 8), 2);
    assert_int_equal(a[0], TT_ALGO_RING);
    assert_int_equal(a[1], TT_ALGO_TREE);
    assert_int_equal(tt_exec_protos(TT_EXEC_GPU, p, 4), 3);
    assert_int_equal(p[0], TT_PROTO_SIMPLE);
    assert_int_equal(p[1], TT_PROTO_LL);
    assert_int_equal(p[2], TT_PROTO_LL128);
    /* the other collectives: ring only (Broadcast / Reduce as a chain along the ring) */
    for (int c = 0; c < TT_COLL_COUNT; c++) {
        if (c == TT_COLL_ALLREDUCE) continue;
        assert_int_equal(tt_exec_algos(TT_EXEC_GPU, (tt_coll)c, 4, a, 8), 1);
        assert_int_equal(a[0], TT_ALGO_RING);
        assert_true(tt_exec_supports(TT_EXEC_GPU, (tt_coll)c, TT_ALGO_DEFAULT, TT_PROTO_LL, 3, why, sizeof why));
        assert_true(tt_exec_supports(TT_EXEC_GPU, (tt_coll)c, TT_ALGO_RING, TT_PROTO_SIMPLE, 3, why, sizeof why));
        /* LL128 runs the same ring steps (the communicator still checks its pairs) */
        assert_true(tt_exec_supports(TT_EXEC_GPU, (tt_coll)c, TT_ALGO_RING, TT_PROTO_LL128, 3, why, sizeof why));
        assert_false(tt_exec_supports(TT_EXEC_GPU, (tt_coll)c, TT_ALGO_TREE, TT_PROTO_DEFAULT, 3, why, sizeof why));
        assert_non_null(strstr(why, "available: ring"));
    }
    assert_false(tt_exec_supports(TT_EXEC_GPU, TT_COLL_ALLREDUCE, TT_ALGO_RHD, TT_PROTO_DEFAULT, 2, why, sizeof why));
    assert_non_null(strstr(why, "available: ring, tree"));
    /* LL128: in the table for both AllReduce algorithms; which pairs may run it is the GPU
     * communicator's decision (tt_gpu_comm_resolve_plan, tested in test_exec_gpu.c) */
    assert_true(tt_exec_supports(TT_EXEC_GPU, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL128, 2, why, sizeof why));
    assert_true(tt_exec_supports(TT_EXEC_GPU, TT_COLL_ALLREDUCE, TT_ALGO_TREE, TT_PROTO_LL128, 4, why, sizeof why));
    /* the host transports still refuse it, naming it a GPU protocol */
    assert_false(tt_exec_supports(TT_EXEC_HOST, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL128, 2, why, sizeof why));
    assert_non_null(strstr(why, "GPU protocols"));
    assert_true(tt_exec_supports(TT_EXEC_GPU, TT_COLL_ALLREDUCE, TT_ALGO_TREE, TT_PROTO_LL, 2, why, sizeof why));
    assert_int_equal(tt_exec_max_channels(TT_EXEC_GPU), 0);
#else
    assert_int_equal(tt_exec_algos(TT_EXEC_GPU, TT_COLL_ALLREDUCE, 4, a, 8), 0);
    assert_int_equal(tt_exec_protos(TT_EXEC_GPU, p, 4), 0);
    assert_false(tt_exec_supports(TT_EXEC_GPU, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 2, why, sizeof why));
    assert_non_null(strstr(why, "no CUDA support"));
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host),
        cmocka_unit_test(test_registry_rows),
        cmocka_unit_test(test_host_rows_have_schedules),
        cmocka_unit_test(test_schedules_have_rows),
        cmocka_unit_test(test_rows_have_cost_hooks),
        cmocka_unit_test(test_default_rules_agree),
        cmocka_unit_test(test_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
