/*
 * test_tune_topotune.c - mode "topotune": numbers from the formulas (hand-computed below with the
 * constants of known_params, not the fitted built-in ones), channel choice, enable rules,
 * calibration file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
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

/* the constants the formulas below are worked with (not the built-in ones: those are fitted and move) */
static void known_params(tt_model_params *p)
{
    tt_model_params_default(p);
    p->link[TT_LCLASS_NVL].alpha_us = 0.7;
    p->proto[TT_PROTO_LL] = (tt_proto_params){5.0, 0.0, 0.5, 6.0, 32768};
    p->proto[TT_PROTO_LL128] = (tt_proto_params){6.0, 0.5, 120.0 / 128.0, 36.7, 576000};
    p->proto[TT_PROTO_SIMPLE] = (tt_proto_params){6.5, 2.0, 1.0, 44.0, 524288};
    p->nccl[TT_PROTO_LL] = (tt_nccl_proto_params){5.0, 0.0, 0};
    p->nccl[TT_PROTO_LL128] = (tt_nccl_proto_params){6.0, 0.5, 0};
    p->nccl[TT_PROTO_SIMPLE] = (tt_nccl_proto_params){6.5, 2.0, 0};
    p->nccl_pipeline_cap = 0;
    p->fabric[TT_FABRIC_IB] = (tt_fabric_params){{4.0, 5.0, 14.0}, 0.9, 1.0};
    p->nvls_alpha_us = 6.0;
    p->channel_us = 0.02;
}

/* one node: NCCL's algorithms take NCCL's bandwidths (ring 12 x 30 GB/s, its protocol factors), the
 * latency our hops, channels NCCL's launch rule */
static void test_ring_1x8(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_model_params kp;
    known_params(&kp);
    tt_tune_ctx *ctx = mk(t, 1, &kp);
    tt_tune_estimate e;
    /* ring/LL 8 B: 5.0 + 14 steps * 0.7 = 14.8 us; NCCL launches 1 of the 12 graph channels at 8 B, so
     * the bandwidth is 1/12 of NCCL's ring LL algbw min(141, 360 * 0.5) * 8/14 */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 8, &e), TT_OK);
    assert_true(e.enabled);
    assert_int_equal(e.channels, 1);
    assert_float_equal(e.lat_us, 14.8, 1e-9);
    double ll = 141.0 * 8 / 14;
    assert_float_equal(e.time_us, 14.8 + 8.0 / (1000.0 * ll / 12), 1e-4);
    /* ring/simple 1 GiB: 6.5 + 14 * (0.7 + 2.0) = 44.3; 12 x 30 = 360 GB/s bus -> 205.71 algbw */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_float_equal(e.lat_us, 44.3, 1e-9);
    assert_float_equal(e.time_us, 44.3 + 1073741824.0 / (360.0 * 8 / 14 * 1000), 1e-2);
    assert_float_equal(e.algbw, 1073741824.0 / (e.time_us * 1e3), 1e-9);
    assert_float_equal(e.busbw, e.algbw * 2 * 7 / 8.0, 1e-9);
    /* NVLS 1 GiB: 6.5 + 2 * 6.0; NCCL's NVLS bus 8 x min(40 * 0.85 * 7/8 * 2, 60) = 476 */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_float_equal(e.lat_us, 18.5, 1e-9);
    assert_float_equal(e.time_us, 18.5 + 1073741824.0 / (476.0 * 8 / 14 * 1000), 0.05);
    /* the pipeline term of medium sizes: min(2 sqrt(pipeline * 12 us * S / B), cap * 12 us) on NVLS, none on rings */
    tt_model_params pp = kp;
    pp.nccl[TT_PROTO_SIMPLE].pipeline = 1.0;
    pp.nccl_pipeline_cap = 3.0;
    tt_tune_ctx *cp = mk(t, 1, &pp);
    tt_tune_estimate f;
    assert_int_equal(tt_tune_eval(cp, TT_COLL_ALLREDUCE, TT_ALGO_NVLS, TT_PROTO_SIMPLE, 1ULL << 22, &f), TT_OK);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS, TT_PROTO_SIMPLE, 1ULL << 22, &e), TT_OK);
    double tb = e.time_us - e.lat_us;
    assert_float_equal(f.time_us - e.time_us, fmin(2 * sqrt(12.0 * tb), 36.0), 1e-6);
    assert_int_equal(tt_tune_eval(cp, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 1ULL << 22, &f), TT_OK);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 1ULL << 22, &e), TT_OK);
    assert_float_equal(f.time_us, e.time_us, 1e-9);
    tt_tune_ctx_free(cp);
    /* recursive doubling 8 B (topotune's own): 3 intra steps: 5.02 + 3*0.7 = 7.12; bw 3 * 8 / 6000 */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RD, TT_PROTO_LL, 8, &e), TT_OK);
    assert_float_equal(e.time_us, 7.12 + 24.0 / 6000.0, 1e-9);
    /* the fastest NCCL can run at 1 GiB is NVLS; NCCL-only excludes rd */
    tt_algo a;
    tt_proto p;
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 1ULL << 30, 1, &a, &p, &e), TT_OK);
    assert_int_equal(a, TT_ALGO_NVLS);
    assert_int_equal(tt_tune_best(ctx, TT_COLL_ALLREDUCE, 8, 1, &a, &p, &e), TT_OK);
    assert_true(a < TT_ALGO_NCCL_COUNT);
    /* disabled with reasons (NCCL's own rules for NCCL's algorithms) */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_HIER, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    assert_non_null(strstr(e.reason, "several nodes"));
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_BROADCAST, TT_ALGO_RHD, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS, TT_PROTO_LL, 8, &e), TT_OK);
    assert_false(e.enabled);
    assert_non_null(strstr(e.reason, "simple"));
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS_TREE, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

/* several nodes: the network caps what crosses it at the fabric's efficiency, the 2-node trees and
 * NVLS trees send each byte across once (not a ring's 2(n-1)/n), network hops cost the fabric's */
static void test_multinode(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_model_params kp;
    known_params(&kp);
    tt_tune_ctx *ctx = mk(t, 4, &kp);
    tt_tune_estimate e;
    double S = 1073741824.0;
    /* 4 x 8 ring/simple 1 GiB: NCCL's 8 x 48 = 384 GB/s bus (198.19 algbw) against the network: 8 NICs of
     * min(48, 50) = 384 GB/s per node at 90 %, 2(n-1)/n = 62/32 of the data leaves each node: 178.37;
     * latency 6.5 + 56 * 2.7 + 6 * 14 */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_float_equal(e.lat_us, 6.5 + 56 * 2.7 + 6 * 14.0, 1e-9);
    assert_float_equal(e.time_us, e.lat_us + S / (384.0 * 0.9 * 32 / 62 * 1000), 1e-3);
    /* ring LL 8 B on 4 nodes: 5.0 + 56*0.7 + 6*4.0 */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 8, &e), TT_OK);
    assert_float_equal(e.lat_us, 5.0 + 56 * 0.7 + 6 * 4.0, 1e-9);
    /* NVLS single-node algorithm is off on several nodes, nvls_tree on */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS, TT_PROTO_SIMPLE, 8, &e), TT_OK);
    assert_false(e.enabled);
    tt_tune_ctx_free(ctx);
    /* 2 x 8 NVLS tree 1 GiB: inside the node the node's own NVLS graph (8 x 40: 476 GB/s bus) capped per
     * channel as NCCL (57.7 x 8 = 461.6), 16/30 of it algbw = 246.2; the network would carry 384 * 0.9 per
     * node (each byte leaves a node once on 2 nodes); latency 6.5 + 2 * 6.0 + 2 hops of 14 */
    ctx = mk(t, 2, &kp);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_NVLS_TREE, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_true(e.enabled);
    assert_float_equal(e.lat_us, 6.5 + 12.0 + 28.0, 1e-9);
    assert_float_equal(e.time_us, e.lat_us + S / (461.6 * 16 / 30 * 1000), 0.5);
    /* a slow fabric caps it instead: 15 % of the ports' speed */
    tt_model_params slow = kp;
    slow.fabric[TT_FABRIC_IB].efficiency = 0.15;
    tt_tune_ctx *cs = mk(t, 2, &slow);
    assert_int_equal(tt_tune_eval(cs, TT_COLL_ALLREDUCE, TT_ALGO_NVLS_TREE, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_float_equal(e.time_us, e.lat_us + S / (384.0 * 0.15 * 1000), 0.5);
    /* the tree on 2 nodes: the chain inside the node runs at half of what a GPU moves (12 x 30 = 360 / 2),
     * above NCCL's per-channel tree caps; the network carries each byte once */
    assert_int_equal(tt_tune_eval(cs, TT_COLL_ALLREDUCE, TT_ALGO_TREE, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_float_equal(e.time_us, e.lat_us + S / (384.0 * 0.15 * 1000), 0.5);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_TREE, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_float_equal(e.time_us, e.lat_us + S / (180.0 * 1000), 0.5);
    tt_tune_ctx_free(cs);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

static void test_hier_4x8(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_model_params kp;
    known_params(&kp);
    kp.link[TT_LCLASS_NET] = (tt_link_params){4.0, 0, 0.92};
    tt_tune_ctx *ctx = mk(t, 4, &kp);
    tt_tune_estimate e;
    /* topotune's own hierarchical algorithm keeps its textbook schedule: intra bw 8 ch * 48 * 0.95 =
     * 364.8; node net 8 * min(48, 50) * 0.92 = 353.28.  16 channels (cap 704): lat 6.5 + 0.32 + 14*2.7 +
     * 6*(4+2) = 80.62; bw 2*(7/8 * S/364.8e3 + 3/4 * S/353.28e3) */
    double S = 1073741824.0;
    double want = 80.62 + 2 * (0.875 * S / 364800.0 + 0.75 * S / 353280.0);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_HIER, TT_PROTO_SIMPLE, 1ULL << 30, &e), TT_OK);
    assert_true(e.enabled);
    assert_int_equal(e.channels, 16);
    assert_float_equal(e.time_us, want, 1e-6);
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
    /* NCCL's ring: its own launch + 14 * (1.0 + its step); topotune's rd: 4.0 + 3 * 1.0 + channel costs */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 8, &e), TT_OK);
    assert_float_equal(e.lat_us, p.nccl[TT_PROTO_LL].base_us + 14 * (1.0 + p.nccl[TT_PROTO_LL].step_us), 1e-9);
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RD, TT_PROTO_LL, 8, &e), TT_OK);
    assert_float_equal(e.lat_us, 4.0 + e.channels * p.channel_us + 3 * 1.0, 1e-9);
    /* topotune's own algorithms: beta 200 overrides 342 for the bandwidth part: 3 steps of 8 MiB */
    assert_int_equal(tt_tune_eval(ctx, TT_COLL_ALLREDUCE, TT_ALGO_RD, TT_PROTO_SIMPLE, 1ULL << 23, &e), TT_OK);
    assert_float_equal(e.time_us - e.lat_us, 3 * 8388608.0 / 200000.0, 1e-6);
    /* fabrics, the pipeline and the group launch are calibration members too */
    js = "{\"schema\":\"topotune-calibration\",\"version\":1,\"fabrics\":{\"efa\":{\"hop_LL_us\":30,"
         "\"efficiency\":0.7,\"hop_scale_pre_sm90\":2}},\"nccl\":{\"Simple\":{\"pipeline\":0.5,"
         "\"base_us\":3},\"pipeline_cap\":2},\"group_launch_us\":3}";
    assert_int_equal(tt_model_params_parse(js, "cal2.json", &p), TT_OK);
    assert_float_equal(p.fabric[TT_FABRIC_EFA].hop_us[TT_PROTO_LL], 30, 0);
    assert_float_equal(p.fabric[TT_FABRIC_EFA].efficiency, 0.7, 0);
    assert_float_equal(p.fabric[TT_FABRIC_EFA].hop_scale_pre_sm90, 2, 0);
    assert_float_equal(p.nccl[TT_PROTO_SIMPLE].pipeline, 0.5, 0);
    assert_float_equal(p.nccl[TT_PROTO_SIMPLE].base_us, 3, 0);
    assert_float_equal(p.nccl_pipeline_cap, 2, 0);
    assert_float_equal(p.group_launch_us, 3, 0);
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
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"fabrics\":{\"myrinet\":{}}}", "fabrics.myrinet", TT_ERR_PARSE},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"nccl\":{\"LL\":{\"chunk_bytes\":1}}}", "nccl.LL: unknown member 'chunk_bytes'", TT_ERR_PARSE},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"nccl\":{\"LL9\":{}}}", "nccl.LL9", TT_ERR_PARSE},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"fabrics\":{\"ib\":{\"efficiency\":2}}}", "efficiency=2", TT_ERR_INVALID},
        {"{\"schema\":\"topotune-calibration\",\"version\":1,\"fabrics\":{\"ib\":{\"hop\":2}}}", "unknown member 'hop'", TT_ERR_PARSE},
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
        cmocka_unit_test(test_ring_1x8),       cmocka_unit_test(test_multinode),  cmocka_unit_test(test_hier_4x8),
        cmocka_unit_test(test_calibration),    cmocka_unit_test(test_cluster_errors),
        cmocka_unit_test(test_synthetic_nics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
