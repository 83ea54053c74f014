/*
 * test_tune_nccl.c - mode "nccl": channel search and NCCL's cost model against the worked
 * examples of the reference (nccl-tuning.md section 8): 1 x 8 H100 and 4 x 8 H100 with one
 * 400 Gb/s NIC per GPU, AllReduce at 8 B, 64 KiB, 1 MiB, 64 MiB, 1 GiB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_tune.h"
#include "tune_testtopo.h"

static tt_tune_ctx *make_ctx(tt_topo *t, int nodes, tt_model_kind m)
{
    tt_cluster c;
    assert_int_equal(tt_cluster_from_topo(t, &c), TT_OK);
    c.nodes = nodes;
    tt_tune_ctx *ctx = NULL;
    assert_int_equal(tt_tune_ctx_new(t, &c, m, NULL, &ctx), TT_OK);
    return ctx;
}

/* 1x8: ring 6 x 60 found first (370.8/60 = 6), 50 -> 7x50 = 350 worse, 40/30 tie -> kept 60;
 * dup (60 >= 50) -> 12 x 30.  Tree: min = max = 12, 40*12 = 480 > 370.8*8/7 -> 30 fits.
 * NVLS: 9*40 = 360 <= 370.8 -> 8 heads at 40, bwInter raised to 60.  comm = 2*12 = 24. */
static void test_channels_1x8(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = make_ctx(t, 1, TT_MODEL_NCCL);
    const tt_tune_channels *ch = tt_tune_ctx_channels(ctx);
    assert_int_equal(ch->ring.nchannels, 12);
    assert_float_equal(ch->ring.bw_intra, 30.0, 1e-9);
    assert_int_equal(ch->ring.type_intra, TT_PATH_NVL);
    assert_int_equal(ch->tree.nchannels, 12);
    assert_float_equal(ch->tree.bw_intra, 30.0, 1e-9);
    assert_int_equal(ch->tree.pattern, TT_PATTERN_BALANCED_TREE);
    assert_int_equal(ch->nvls.nchannels, 8);
    assert_float_equal(ch->nvls.bw_intra, 40.0, 1e-9);
    assert_float_equal(ch->nvls.bw_inter, 60.0, 1e-9);
    assert_int_equal(ch->comm_channels, 24);
    assert_int_equal(ch->nvls_channels, 16);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

/* 4x8: GPU->NET = min(PCIe 48, NIC 50) = 48; 8 channels (one per NIC; PCIe full) x 48 =
 * 384 >= 370.8 stops; no dup (ccMin 90 > 80, 48 < 50, 8 > 4).  Tree: one GPU per NIC at PIX
 * -> pattern TREE, 8 x 48.  NVLS: 40 -> 8 heads, bwInter raised to 48.  comm = 16. */
static void test_channels_4x8(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = make_ctx(t, 4, TT_MODEL_NCCL);
    const tt_tune_channels *ch = tt_tune_ctx_channels(ctx);
    assert_int_equal(ch->ring.nchannels, 8);
    assert_float_equal(ch->ring.bw_inter, 48.0, 1e-9);
    assert_int_equal(ch->ring.type_inter, TT_PATH_PIX);
    assert_int_equal(ch->tree.nchannels, 8);
    assert_float_equal(ch->tree.bw_inter, 48.0, 1e-9);
    assert_int_equal(ch->tree.pattern, TT_PATTERN_TREE);
    assert_int_equal(ch->nvls.nchannels, 8);
    assert_float_equal(ch->nvls.bw_intra, 40.0, 1e-9);
    assert_float_equal(ch->nvls.bw_inter, 48.0, 1e-9);
    assert_int_equal(ch->comm_channels, 16);
    assert_float_equal(ch->node_net_bw, 8 * 48.0, 1e-9);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

typedef struct { tt_algo a; tt_proto p; double t[5]; } row;
static const uint64_t SZ[5] = {8, 65536, 1 << 20, 64ULL << 20, 1ULL << 30};

static void check_rows(tt_tune_ctx *ctx, const row *rows, int n)
{
    for (int i = 0; i < n; i++)
        for (int s = 0; s < 5; s++) {
            tt_tune_estimate e;
            assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, rows[i].a, rows[i].p, SZ[s], &e), TT_OK);
            assert_true(e.enabled);
            /* the reference prints 2 decimals; float32 as NCCL, tolerance 0.011 us */
            if (!(e.time_us > rows[i].t[s] - 0.011 && e.time_us < rows[i].t[s] + 0.011))
                fail_msg("%s/%s at %llu B: %.3f us, reference %.2f", tt_algo_name(rows[i].a),
                         tt_proto_name(rows[i].p), (unsigned long long)SZ[s], e.time_us, rows[i].t[s]);
        }
}

/* Reference table 8(a).  E.g. 1 MiB ring/LL: busBw min(141, 360*0.5) = 141, algBw
 * 141*8/14 = 80.571, lat 6.6 + 14*0.6 = 15.0 -> 15.0 + 1048576/80571 = 28.01. */
static void test_times_1x8(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = make_ctx(t, 1, TT_MODEL_NCCL);
    static const row rows[] = {
        {TT_ALGO_TREE, TT_PROTO_LL, {15.20, 17.71, 63.32, 1555.14, 24654.20}},
        {TT_ALGO_TREE, TT_PROTO_LL128, {31.50, 32.35, 45.07, 610.42, 8368.00}},
        {TT_ALGO_TREE, TT_PROTO_SIMPLE, {64.40, 65.06, 77.06, 570.96, 6548.35}},
        {TT_ALGO_RING, TT_PROTO_LL, {15.00, 15.81, 28.01, 847.91, 13341.58}},
        {TT_ALGO_RING, TT_PROTO_LL128, {40.60, 40.95, 46.14, 395.19, 5714.05}},
        {TT_ALGO_RING, TT_PROTO_SIMPLE, {56.00, 56.32, 61.10, 382.22, 5275.58}},
        {TT_ALGO_NVLS, TT_PROTO_SIMPLE, {25.00, 25.24, 28.86, 271.72, 3972.58}},
    };
    check_rows(ctx, rows, 7);
    /* choices: ring/LL up to 1 MiB, NVLS at 64 MiB and 1 GiB; switch at ~1,144,836 B */
    tt_algo a; tt_proto p; tt_tune_estimate e;
    const tt_algo ca[5] = {TT_ALGO_RING, TT_ALGO_RING, TT_ALGO_RING, TT_ALGO_NVLS, TT_ALGO_NVLS};
    const tt_proto cp[5] = {TT_PROTO_LL, TT_PROTO_LL, TT_PROTO_LL, TT_PROTO_SIMPLE, TT_PROTO_SIMPLE};
    const int cch[5] = {1, 2, 24, 16, 16}; /* launch: 1 ch x 3 warps, 2 ch, 24 ch, NVLS 16 */
    for (int s = 0; s < 5; s++) {
        assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, SZ[s], 1, &a, &p, &e), TT_OK);
        assert_int_equal(a, ca[s]);
        assert_int_equal(p, cp[s]);
        assert_int_equal(e.channels, cch[s]);
    }
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 1144000, 1, &a, &p, &e), TT_OK);
    assert_int_equal(a, TT_ALGO_RING);
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 1146000, 1, &a, &p, &e), TT_OK);
    assert_int_equal(a, TT_ALGO_NVLS);
    /* reference switch point: ring/LL -> NVLS at 1,144,836 B */
    uint64_t x;
    assert_int_equal(tt_tune_crossover(ctx, TT_COLL_ALLREDUCE, 1 << 20, 2 << 20, 1, &x), TT_OK);
    assert_int_equal(x, 1144836);
    /* disabled: NVLS tree on one node, collnet, PAT for allreduce */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS_TREE, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    assert_non_null(strstr(e.reason, "single node"));
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_COLLNET_DIRECT, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_BROADCAST, TT_ALGO_TREE, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

/* Reference table 8(b).  E.g. 64 KiB tree/LL: busBw min(min(384*.92, 8*36)/3.8, 20.4)*.85
 * = 17.34, algBw 8.67, lat 6.8 + 2*(7*0.6 + 2*5.0) = 35.2; correction .6 at logSize 10:
 * 35.2 + 65536/(1000*8.67*0.6) = 47.80.  1 GiB ring/simple: lat 282.8*1.4 (plateau). */
static void test_times_4x8(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = make_ctx(t, 4, TT_MODEL_NCCL);
    static const row rows[] = {
        {TT_ALGO_TREE, TT_PROTO_LL, {35.20, 47.80, 277.09, 7775.55, 123880.85}},
        {TT_ALGO_TREE, TT_PROTO_LL128, {65.50, 66.61, 83.22, 821.74, 10955.38}},
        {TT_ALGO_TREE, TT_PROTO_SIMPLE, {120.40, 121.29, 137.53, 805.74, 8892.80}},
        {TT_ALGO_RING, TT_PROTO_LL, {78.80, 85.02, 178.39, 6452.50, 102057.96}},
        {TT_ALGO_RING, TT_PROTO_LL128, {144.40, 144.83, 151.32, 587.26, 7230.15}},
        {TT_ALGO_RING, TT_PROTO_SIMPLE, {282.80, 396.25, 401.21, 734.52, 5813.56}},
        {TT_ALGO_NVLS_TREE, TT_PROTO_SIMPLE, {108.60, 108.95, 114.18, 465.81, 5823.92}},
    };
    check_rows(ctx, rows, 7);
    tt_algo a; tt_proto p; tt_tune_estimate e;
    const tt_algo ca[5] = {TT_ALGO_TREE, TT_ALGO_TREE, TT_ALGO_TREE, TT_ALGO_NVLS_TREE, TT_ALGO_RING};
    const tt_proto cp[5] = {TT_PROTO_LL, TT_PROTO_LL, TT_PROTO_LL128, TT_PROTO_SIMPLE, TT_PROTO_SIMPLE};
    for (int s = 0; s < 5; s++) {
        assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, SZ[s], 1, &a, &p, &e), TT_OK);
        assert_int_equal(a, ca[s]);
        assert_int_equal(p, cp[s]);
    }
    /* switch points of the reference: 141,737 -> tree/LL128; 4 MiB back to tree/LL128
     * (correction steps .6 -> .8); 1,036,398,460 -> ring/simple */
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 141000, 1, &a, &p, &e), TT_OK);
    assert_int_equal(p, TT_PROTO_LL);
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 142500, 1, &a, &p, &e), TT_OK);
    assert_int_equal(p, TT_PROTO_LL128);
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 4194304, 1, &a, &p, &e), TT_OK);
    assert_int_equal(a, TT_ALGO_TREE);
    assert_int_equal(p, TT_PROTO_LL128);
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 1036000000, 1, &a, &p, &e), TT_OK);
    assert_int_equal(a, TT_ALGO_NVLS_TREE);
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 1037000000, 1, &a, &p, &e), TT_OK);
    assert_int_equal(a, TT_ALGO_RING);
    /* exact switch points by bisection (reference: 141,737; 3,721,771; 4,194,304 back to
     * tree/LL128 where the correction factor steps .6 -> .8; 5,860,213; 1,036,398,460).
     * NCCL's float arithmetic moves the last one by < 1e-5 relative. */
    uint64_t x;
    assert_int_equal(tt_tune_crossover(ctx, TT_COLL_ALLREDUCE, 131072, 262144, 1, &x), TT_OK);
    assert_true(x >= 141727 && x <= 141747);
    /* 2 MiB and 4 MiB are both tree/LL128: no change seen over the whole interval */
    assert_int_equal(tt_tune_crossover(ctx, TT_COLL_ALLREDUCE, 2 << 20, 4 << 20, 1, &x), TT_OK);
    assert_int_equal(x, 0);
    /* float32 times (as NCCL) differ by ~1e-6 relative from the reference's bisection */
    assert_int_equal(tt_tune_crossover(ctx, TT_COLL_ALLREDUCE, 2 << 20, 3800000, 1, &x), TT_OK);
    assert_true(x >= 3721761 && x <= 3721781);
    assert_int_equal(tt_tune_crossover(ctx, TT_COLL_ALLREDUCE, 3800000, 4 << 20, 1, &x), TT_OK);
    assert_int_equal(x, 4194304);
    assert_int_equal(tt_tune_crossover(ctx, TT_COLL_ALLREDUCE, 4 << 20, 8 << 20, 1, &x), TT_OK);
    assert_true(x >= 5860203 && x <= 5860223);
    assert_int_equal(tt_tune_crossover(ctx, TT_COLL_ALLREDUCE, 512 << 20, 1ULL << 30, 1, &x), TT_OK);
    assert_true(x > 1036398460 - 10364 && x < 1036398460 + 10364);
    assert_int_equal(tt_tune_crossover(ctx, TT_COLL_ALLREDUCE, 8, 64, 1, &x), TT_OK);
    assert_int_equal(x, 0); /* tree/LL throughout */
    /* NVLS itself off on several nodes */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

/* AMD host sensitivity (reference): llMaxBw 19.0, netOverhead 2.0 -> ring LL latency
 * 6.6 + 56*2.0 + 6*2.7 = 134.8, simple 8.4 + 56*6 + 6*14 = 428.4. */
static void test_amd_host(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].type == TT_NODE_CPU) snprintf(t->nodes[i].u.cpu.vendor, 32, "AuthenticAMD");
    tt_tune_ctx *ctx = make_ctx(t, 4, TT_MODEL_NCCL);
    tt_tune_estimate e;
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 8, &e), TT_OK);
    assert_float_equal(e.lat_us, 134.8, 1e-3);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_float_equal(e.lat_us, 428.4, 1e-3);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 1 << 20, &e), TT_OK);
    /* busBw = 19.0 -> algBw 19*32/62 = 9.806 GB/s */
    assert_float_equal(e.bw_GBps, 19.0 * 32 / 62, 1e-3);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

/* PCIe-only box (sm80, no NVLink): LL128 off (GPU-GPU path not NVLink), PCI latencies. */
static void test_pcie_box(void **state)
{
    (void)state;
    tt_topo *t = tb_pcie4();
    tt_tune_ctx *ctx = make_ctx(t, 1, TT_MODEL_NCCL);
    const tt_tune_channels *ch = tt_tune_ctx_channels(ctx);
    assert_true(ch->ring.type_intra >= TT_PATH_PIX);
    assert_false(ch->nvls_support);
    tt_tune_estimate e;
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL128, 8, &e), TT_OK);
    assert_false(e.enabled);
    assert_non_null(strstr(e.reason, "LL128"));
    /* ring LL latency with PCI hw latency: 6.6 + 6 steps * 1.0 */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 8, &e), TT_OK);
    assert_float_equal(e.lat_us, 6.6 + 6 * 1.0, 1e-4);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_channels_1x8), cmocka_unit_test(test_channels_4x8),
        cmocka_unit_test(test_times_1x8),    cmocka_unit_test(test_times_4x8),
        cmocka_unit_test(test_amd_host),     cmocka_unit_test(test_pcie_box),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
