/* test_exec_caps.c - the executor's capability query (exec/exec_caps.c):
 * what tools ask before they build candidate plans, and the same words the
 * collectives refuse with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "tt_exec.h"

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

/* the host query agrees with what a communicator actually does */
static void test_host_agrees_with_comm(void **state)
{
    (void)state;
    tt_comm *c[3];
    assert_int_equal(tt_comm_init_threads(3, c), TT_OK);
    for (int coll = 0; coll < TT_COLL_COUNT; coll++)
        for (int a = 0; a < TT_ALGO_COUNT; a++) {
            tt_plan req = TT_PLAN_DEFAULT, eff;
            char why[320];
            req.algo = (tt_algo)a;
            tt_comm_set_plan(c[0], &req);
            int ok = tt_comm_resolve_plan(c[0], (tt_coll)coll, 100, TT_INT32, &eff) == TT_OK;
            int q = tt_exec_supports(TT_EXEC_HOST, (tt_coll)coll, (tt_algo)a, TT_PROTO_DEFAULT, 3, why, sizeof why);
            assert_int_equal(ok, q);
            if (!ok)
                assert_string_equal(tt_error_message(), why);
        }
    for (int r = 0; r < 3; r++)
        assert_int_equal(tt_comm_destroy(c[r]), TT_OK);
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
        cmocka_unit_test(test_host_agrees_with_comm),
        cmocka_unit_test(test_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
