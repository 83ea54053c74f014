/*
 * test_tune_topotune.c - mode "topotune": numbers from the formulas (hand-computed below),
 * channel choice, enable rules, calibration file.
 * Built-in constants used: NVL alpha 0.7 us eff 0.95; NET alpha 4.0 eff 0.92; LL base 5.0,
 * step 0, eff 0.5, 6 GB/s/channel; Simple base 6.5, step 2.0, eff 1, 44 GB/s/channel;
 * 0.02 us per channel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_tune.h"
#include "tune_testtopo.h"

static tt_tune_ctx *mk(tt_topo *t, int nodes, const tt_model_params *p)
{
    tt_cluster c;
    assert_int_equal(tt_cluster_from_topo(t, &c), TT_OK);
    c.nodes = nodes;
    tt_tune_ctx *ctx = NULL;
    assert_int_equal(tt_tune_ctx_new(t, &c, TT_MODEL_TOPOTUNE, p, &ctx), TT_OK);
    return ctx;
}

static void test_ring_1x8(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = mk(t, 1, NULL);
    tt_tune_estimate e;
    /* ring/LL 8 B, 1 channel: 5.0 + 0.02 + 14 steps * 0.7 = 14.82 us latency;
     * bandwidth 1.75 * 8 B / min(342*0.5, 1*6 GB/s) = 14/6000 us -> 14.8223 */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 8, &e), TT_OK);
    assert_true(e.enabled);
    assert_int_equal(e.channels, 1);
    assert_float_equal(e.lat_us, 14.82, 1e-9);
    assert_float_equal(e.time_us, 14.82 + 14.0 / 6000.0, 1e-9);
    /* ring/simple 1 GiB: intra bw 12 ch * 30 * 0.95 = 342 GB/s; 8 channels * 44 = 352 >= 342
     * so 8 channels suffice: lat 6.5 + 8*0.02 + 14*(0.7+2.0) = 44.46;
     * bw part 2*7/8 * 2^30 / 342000 = 5494.293 -> 5538.75 */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_int_equal(e.channels, 8);
    assert_float_equal(e.lat_us, 44.46, 1e-9);
    assert_float_equal(e.time_us, 44.46 + 1.75 * 1073741824.0 / 342000.0, 1e-6);
    /* algbw/busbw: nccl-tests definitions */
    assert_float_equal(e.algbw, 1073741824.0 / (e.time_us * 1e3), 1e-9);
    assert_float_equal(e.busbw, e.algbw * 2 * 7 / 8.0, 1e-9);
    /* recursive doubling 8 B: 3 intra steps: 5.02 + 3*0.7 = 7.12; bw 3 * 8 / 6000 */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RD, TT_PROTO_LL, 8, &e), TT_OK);
    assert_float_equal(e.time_us, 7.12 + 24.0 / 6000.0, 1e-9);
    /* allgather ring/simple 1 GiB: (n-1)/n * S at 342 GB/s, 7 steps */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLGATHER, TT_ALGO_RING, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_float_equal(e.time_us, 6.5 + 8 * 0.02 + 7 * 2.7 + 0.875 * 1073741824.0 / 342000.0, 1e-6);
    assert_float_equal(e.busbw, e.algbw * 7 / 8.0, 1e-9);
    /* the fastest at 8 B is recursive doubling, at 1 GiB NVLS */
    tt_algo a;
    tt_proto p;
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 8, 0, &a, &p, &e), TT_OK);
    assert_int_equal(a, TT_ALGO_RD);
    assert_int_equal(p, TT_PROTO_LL);
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 1ULL << 30, 0, &a, &p, &e), TT_OK);
    assert_int_equal(a, TT_ALGO_NVLS);
    /* NCCL-only excludes rd */
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 8, 1, &a, &p, &e), TT_OK);
    assert_true(a < TT_ALGO_NCCL_COUNT);
    /* disabled with reasons */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_HIER, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    assert_non_null(strstr(e.reason, "several nodes"));
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_BROADCAST, TT_ALGO_RHD, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS, TT_PROTO_LL, 8, &e), TT_OK);
    assert_false(e.enabled);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

static void test_hier_4x8(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = mk(t, 4, NULL);
    tt_tune_estimate e;
    /* intra bw 8 ch * 48 * 0.95 = 364.8; node net 8 * min(48, 50) * 0.92 = 353.28.
     * 16 channels (cap 704): lat 6.5 + 0.32 + 14*2.7 + 6*(4+2) = 80.62;
     * bw 2*(7/8 * S/364.8e3 + 3/4 * S/353.28e3) */
    double S = 1073741824.0;
    double want = 80.62 + 2 * (0.875 * S / 364800.0 + 0.75 * S / 353280.0);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_HIER, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_true(e.enabled);
    assert_int_equal(e.channels, 16);
    assert_float_equal(e.time_us, want, 1e-6);
    /* ring LL 8 B on 4 nodes: 62 steps, 6 on the network: 5.02 + 56*0.7 + 6*4.0 = 68.22 */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 8, &e), TT_OK);
    assert_float_equal(e.lat_us, 68.22, 1e-9);
    /* NVLS single-node algorithm is off on several nodes, nvls_tree on */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS_TREE, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_true(e.enabled);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

static void test_calibration(void **state)
{
    (void)state;
    tt_model_params p;
    tt_model_params_default(&p);
    const char *js = "{\"schema\":\"topotune-calibration\",\"version\":1,"
                     "\"links\":{\"NVL\":{\"alpha_us\":1.0,\"beta_GBps\":200}},"
                     "\"protocols\":{\"LL\":{\"base_us\":4.0}}}";
    assert_int_equal(tt_model_params_parse(js, "cal.json", &p), TT_OK);
    assert_float_equal(p.link[TT_LCLASS_NVL].alpha_us, 1.0, 0);
    assert_string_equal(p.source, "cal.json");
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = mk(t, 1, &p);
    tt_tune_estimate e;
    /* 4.0 + 0.02 + 14 * 1.0 = 18.02; beta 200 overrides 342 for the bandwidth part */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 8, &e), TT_OK);
    assert_float_equal(e.lat_us, 18.02, 1e-9);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_float_equal(e.time_us - e.lat_us, 1.75 * 1073741824.0 / 200000.0, 1e-6);
    tt_tune_ctx_free(ctx);
    tb_free(t);
    /* errors name the member */
    struct { const char *js, *needle; tt_status st; } bad[] = {
        {"{\"schema\":\"x\",\"version\":1}", "schema", TT_ERR_PARSE},
        {"{\"schema\":\"topotune-calibration\",\"version\":2}", "version", TT_ERR_PARSE},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"linkz\":{}}", "linkz", TT_ERR_PARSE},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"links\":{\"XYZ\":{}}}", "links.XYZ", TT_ERR_PARSE},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"links\":{\"NET\":{\"alpha_us\":\"3\"}}}", "links.NET.alpha_us", TT_ERR_PARSE},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"links\":{\"NET\":{\"efficiency\":1.5}}}", "efficiency=1.5", TT_ERR_INVALID},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"protocols\":{\"LL256\":{}}}", "LL256", TT_ERR_PARSE},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"protocols\":{\"Simple\":{\"speed\":1}}}", "speed", TT_ERR_PARSE},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"max_channels\":2.5}", "max_channels", TT_ERR_INVALID},
        {"{not json", "not valid JSON", TT_ERR_PARSE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tt_model_params q;
        tt_model_params_default(&q);
        tt_status st = tt_model_params_parse(bad[i].js, "cal.json", &q);
        assert_int_equal(st, bad[i].st);
        if (!strstr(tt_error_message(), bad[i].needle)) fail_msg("'%s' lacks '%s'", tt_error_message(), bad[i].needle);
        assert_non_null(strstr(tt_error_message(), "cal.json"));
    }
}

/* cluster validation messages */
static void test_cluster_errors(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_cluster c, d;
    assert_int_equal(tt_cluster_from_topo(t, &c), TT_OK);
    assert_int_equal(c.topo_gpus, 8);
    assert_int_equal(c.nics_per_node, 8);
    assert_float_equal(c.nic_gbps, 400, 1e-9);
    assert_int_equal(c.min_sm, 90);
    assert_true(c.nvswitch);
    d = c; d.nodes = 0;
    assert_int_equal(tt_cluster_validate(&d), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "nodes=0"));
    d = c; d.gpus_per_node = 9;
    assert_int_equal(tt_cluster_validate(&d), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "only 8 GPUs"));
    d = c; d.nic_gbps = 0;
    assert_int_equal(tt_cluster_validate(&d), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "NIC speed"));
    d = c; d.nodes = 2; d.nics_per_node = 0;
    assert_int_equal(tt_cluster_validate(&d), TT_ERR_INVALID);
    d = c; d.rails = 9;
    assert_int_equal(tt_cluster_validate(&d), TT_ERR_INVALID);
    tb_free(t);
    tt_topo *e = tb_new();
    assert_int_equal(tt_cluster_from_topo(e, &c), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "no GPU"));
    tb_free(e);
}

/* synthetic NICs when the topology has none: 2 nodes x 8 GPUs, 8 x 400G NICs assumed on
 * each GPU's switch -> same ring as the NIC-per-GPU fixture (8 x 48). */
static void test_synthetic_nics(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 0);
    tt_cluster c;
    assert_int_equal(tt_cluster_from_topo(t, &c), TT_OK);
    assert_int_equal(c.nics_per_node, 0);
    c.nodes = 2;
    c.nics_per_node = 8;
    c.nic_gbps = 400;
    c.rails = 8;
    tt_tune_channels ch;
    assert_int_equal(tt_tune_channels_compute(t, &c, &ch), TT_OK);
    assert_int_equal(ch.ring.nchannels, 8);
    assert_float_equal(ch.ring.bw_inter, 48.0, 1e-9);
    assert_float_equal(ch.node_net_bw, 384.0, 1e-9);
    /* 200G NICs: port 25 GB/s bounds the path -> inter speed 24 (sm90 table) */
    c.nic_gbps = 200;
    assert_int_equal(tt_tune_channels_compute(t, &c, &ch), TT_OK);
    assert_float_equal(ch.ring.bw_inter, 24.0, 1e-9);
    assert_float_equal(ch.node_net_bw, 200.0, 1e-9);
    tb_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_1x8),       cmocka_unit_test(test_hier_4x8),
        cmocka_unit_test(test_calibration),    cmocka_unit_test(test_cluster_errors),
        cmocka_unit_test(test_synthetic_nics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
