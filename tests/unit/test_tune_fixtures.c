/*
 * test_tune_fixtures.c - channel search and models on the topology fixtures, read through
 * the XML reader and the graph builder (tests/fixtures/ *.xml).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_topo.h"
#include "tt_tune.h"
#include "tt_xml.h"

typedef struct {
    tt_xml_doc *doc;
    tt_topo *topo;
    tt_tune_ctx *ctx;
} fx;

static void load(fx *f, const char *name, int nodes, tt_model_kind m)
{
    const char *root = getenv("TOPOTUNE_ROOT");
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", root && *root ? root : ".", name);
    memset(f, 0, sizeof(*f));
    if (tt_xml_read_file(path, NULL, &f->doc) != TT_OK) fail_msg("%s", tt_error_message());
    if (tt_topo_from_xml(f->doc, NULL, &f->topo) != TT_OK) fail_msg("%s", tt_error_message());
    tt_cluster c;
    assert_int_equal(tt_cluster_from_topo(f->topo, &c), TT_OK);
    c.nodes = nodes;
    if (tt_tune_ctx_new(f->topo, &c, m, NULL, &f->ctx) != TT_OK) fail_msg("%s", tt_error_message());
}

static void unload(fx *f)
{
    tt_tune_ctx_free(f->ctx);
    tt_topo_free(f->topo);
    tt_xml_doc_free(f->doc);
}

static double t_us(fx *f, tt_algo a, tt_proto p, uint64_t b)
{
    tt_tune_estimate e;
    assert_int_equal(tt_tune_eval(f->ctx, TT_COLL_ALLREDUCE, a, p, b, &e), TT_OK);
    assert_true(e.enabled);
    return e.time_us;
}

/* HGX H100 fixture, one node: the reference's 1 x 8 graphs and times */
static void test_hgx_1node(void **state)
{
    (void)state;
    fx f;
    load(&f, "hgx-h100-8gpu.xml", 1, TT_MODEL_NCCL);
    const tt_tune_channels *ch = tt_tune_ctx_channels(f.ctx);
    assert_int_equal(ch->ring.nchannels, 12);
    assert_float_equal(ch->ring.bw_intra, 30, 1e-9);
    assert_int_equal(ch->ring.type_intra, TT_PATH_NVL);
    assert_int_equal(ch->tree.nchannels, 12);
    assert_float_equal(ch->tree.bw_intra, 30, 1e-9);
    assert_int_equal(ch->nvls.nchannels, 8);
    assert_float_equal(ch->nvls.bw_inter, 60, 1e-9);
    assert_float_equal(t_us(&f, TT_ALGO_RING, TT_PROTO_LL, 1 << 20), 28.01, 0.006);
    assert_float_equal(t_us(&f, TT_ALGO_NVLS, TT_PROTO_SIMPLE, 64 << 20), 271.72, 0.006);
    unload(&f);
}

/* 4 nodes: 8 NICs at PIX (two GPUs and two NICs per PCIe switch): ring 8 x 48 (PCIe 48 <
 * NIC 50), tree 8 x 48 BALANCED (a second GPU at PIX per NIC), NVLS 8 x 40/48 */
static void test_hgx_4nodes(void **state)
{
    (void)state;
    fx f;
    load(&f, "hgx-h100-8gpu.xml", 4, TT_MODEL_NCCL);
    const tt_tune_channels *ch = tt_tune_ctx_channels(f.ctx);
    assert_int_equal(ch->ring.nchannels, 8);
    assert_float_equal(ch->ring.bw_inter, 48, 1e-9);
    assert_int_equal(ch->ring.type_inter, TT_PATH_PIX);
    assert_int_equal(ch->tree.nchannels, 8);
    assert_float_equal(ch->tree.bw_inter, 48, 1e-9);
    assert_int_equal(ch->tree.pattern, TT_PATTERN_BALANCED_TREE);
    assert_int_equal(ch->nvls.nchannels, 8);
    assert_float_equal(ch->nvls.bw_intra, 40, 1e-9);
    assert_float_equal(ch->nvls.bw_inter, 48, 1e-9);
    assert_int_equal(ch->comm_channels, 16);
    /* ring numbers do not depend on the tree pattern: reference 8(b) */
    assert_float_equal(t_us(&f, TT_ALGO_RING, TT_PROTO_LL128, 64 << 20), 587.26, 0.006);
    assert_float_equal(t_us(&f, TT_ALGO_NVLS_TREE, TT_PROTO_SIMPLE, 1ULL << 30), 5823.92, 0.006);
    /* balanced tree: no x0.85 -> tree/LL 64 KiB = 35.2 + 65536/(1000*10.2*0.6) = 45.91 */
    assert_float_equal(t_us(&f, TT_ALGO_TREE, TT_PROTO_LL, 65536), 35.2 + 65536 / (1000 * 10.2 * 0.6), 0.006);
    unload(&f);
}

/* generated NVL72 (topo-tune --gen-nvswitch-domain 72): 72 SM100 GPUs, 18 x 40.1 = 721.8.
 * Ring: 90 -> 8 ch = 720 (80/60/45 tie, 40/90 < 0.49 stops); dup -> 16 x 45.
 * Tree: 16 ch, 45*16 = 720 <= 721.8*72/71 -> 16 x 45.  NVLS: (k+1)*s <= 721.8, k <= 32:
 * 20 GB/s gives 35 -> 32 heads; bwInter raised to the top speed 90.  Runtime 32. */
static void test_nvl72(void **state)
{
    (void)state;
    fx f;
    load(&f, "nvl72-sm100.xml", 1, TT_MODEL_NCCL);
    const tt_tune_channels *ch = tt_tune_ctx_channels(f.ctx);
    assert_int_equal(tt_tune_ctx_nranks(f.ctx), 72);
    assert_int_equal(ch->ring.nchannels, 16);
    assert_float_equal(ch->ring.bw_intra, 45, 1e-9);
    assert_int_equal(ch->tree.nchannels, 16);
    assert_float_equal(ch->tree.bw_intra, 45, 1e-9);
    assert_int_equal(ch->nvls.nchannels, 32);
    assert_float_equal(ch->nvls.bw_intra, 20, 1e-9);
    assert_float_equal(ch->nvls.bw_inter, 90, 1e-9);
    assert_int_equal(ch->comm_channels, 32);
    assert_int_equal(ch->nvls_channels, 24);
    /* Blackwell single node: llMaxBw 282 -> ring LL busBw min(282, 16*45*0.5 = 360) = 282 */
    tt_tune_estimate e;
    assert_int_equal(tt_tune_eval(f.ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL, 1 << 20, &e), TT_OK);
    assert_float_equal(e.bw_GBps, 282.0 * 72 / 142, 1e-3);
    unload(&f);
}

/* VM dump: 1 GPU, 10 GbE without GDR; two nodes: one channel at 1.2 GB/s through the CPU */
static void test_vm(void **state)
{
    (void)state;
    fx f;
    load(&f, "nccl-dump-h100-vm.xml", 2, TT_MODEL_NCCL);
    const tt_tune_channels *ch = tt_tune_ctx_channels(f.ctx);
    assert_int_equal(ch->ring.nchannels, 1);
    assert_float_equal(ch->ring.bw_inter, 1.2, 1e-9);
    assert_true(ch->ring.type_inter >= TT_PATH_PHB);
    const tt_cluster *c = tt_tune_ctx_cluster(f.ctx);
    assert_false(c->numa_known);
    assert_float_equal(c->nic_gbps, 10, 1e-9);
    /* LL128 off (no NVLink path inside the node, NIC beyond PXN) */
    tt_tune_estimate e;
    assert_int_equal(tt_tune_eval(f.ctx, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_LL128, 8, &e), TT_OK);
    assert_false(e.enabled);
    unload(&f);
}

/* PCIe box: GPU pairs across the CPU; LL128 off; every collective gets a table */
static void test_pcie(void **state)
{
    (void)state;
    fx f;
    load(&f, "pcie-4gpu.xml", 1, TT_MODEL_TOPOTUNE);
    const tt_tune_channels *ch = tt_tune_ctx_channels(f.ctx);
    assert_true(ch->ring.type_intra >= TT_PATH_PIX);
    assert_false(ch->nvls_support);
    tt_tune_table tab;
    assert_int_equal(tt_tune_table_build(f.ctx, 31, 8, 1ULL << 34, 0, &tab), TT_OK);
    for (int i = 0; i < tab.n; i++) assert_int_not_equal(tab.entries[i].proto, TT_PROTO_LL128);
    tt_tune_table_free(&tab);
    unload(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hgx_1node), cmocka_unit_test(test_hgx_4nodes), cmocka_unit_test(test_nvl72),
        cmocka_unit_test(test_vm),        cmocka_unit_test(test_pcie),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
