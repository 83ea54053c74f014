/* test_topo_paths.c - all-pairs paths: classes, bandwidths, routes, post-processing. */
#include "topo_test_util.h"

static void check_route(const tt_topo *t, int a, int b)
{
    const tt_path *p = tu_path(t, a, b);
    if (p->nhops < 0) {
        assert_int_equal(p->type, TT_PATH_DIS);
        assert_true(p->bw == 0);
        assert_null(p->route);
        return;
    }
    assert_non_null(p->route);
    assert_int_equal(p->route[0], a);
    assert_int_equal(p->route[p->nhops], b);
    /* every hop is a link of the graph and the bandwidth is the bottleneck */
    double bw = a == b ? TT_LOC_BW : 1e300;
    for (int k = 0; k < p->nhops; k++) {
        const tt_node *n = &t->nodes[p->route[k]];
        double best = -1;
        for (int l = 0; l < n->nlinks; l++)
            if (n->links[l].peer == p->route[k + 1] && n->links[l].bw > best)
                best = n->links[l].bw;
        if (best < 0)
            fail_msg("route %s->%s hop %d: no link %s->%s", t->nodes[a].name, t->nodes[b].name, k,
                     n->name, t->nodes[p->route[k + 1]].name);
        if (best < bw)
            bw = best;
    }
    if (p->bw > bw + 1e-9)
        fail_msg("path %s->%s bw %g above its bottleneck %g", t->nodes[a].name, t->nodes[b].name,
                 p->bw, bw);
}

static void check_all_routes(const tt_topo *t)
{
    for (int a = 0; a < t->nnodes; a++)
        for (int b = 0; b < t->nnodes; b++)
            check_route(t, a, b);
}

static void test_hgx_paths(void **state)
{
    tt_xml_doc *doc;
    tt_topo *t = tu_load("hgx-h100-8gpu.xml", NULL, &doc);
    int g0 = tu_node(t, TT_NODE_GPU, 0), g2 = tu_node(t, TT_NODE_GPU, 2);
    int g4 = tu_node(t, TT_NODE_GPU, 4), g7 = tu_node(t, TT_NODE_GPU, 7);
    int n0 = tu_net(t, "mlx5_0"), n2 = tu_net(t, "mlx5_2"), n4 = tu_net(t, "mlx5_4");
    const tt_path *p;

    p = tu_path(t, g0, g7);
    assert_int_equal(p->type, TT_PATH_NVL);
    assert_bw(p->bw, 370.8);
    assert_int_equal(p->nhops, 2); /* via the NVSwitch */
    assert_int_equal(p->route[1], tu_node(t, TT_NODE_NVS, 0));
    p = tu_path(t, g0, g0);
    assert_int_equal(p->type, TT_PATH_LOC);
    assert_int_equal(p->nhops, 0);

    p = tu_path(t, g0, n0);
    assert_int_equal(p->type, TT_PATH_PIX);
    assert_bw(p->bw, 48.0);
    assert_int_equal(p->nhops, 3); /* GPU - switch - NIC - NET */

    /* NIC under the other switch of the same socket: PXN through its GPU */
    p = tu_path(t, g0, n2);
    assert_int_equal(p->type, TT_PATH_PXN);
    assert_bw(p->bw, 48.0);
    assert_true(tu_route_has(p, g2));
    /* the way back is not PXN (GPU -> NET direction only) */
    assert_int_equal(tu_path(t, n2, g0)->type, TT_PATH_PHB);
    /* NIC on the other socket: PXN too */
    p = tu_path(t, g0, n4);
    assert_int_equal(p->type, TT_PATH_PXN);
    assert_true(tu_route_has(p, g4));
    assert_int_equal(tu_path(t, n4, g0)->type, TT_PATH_SYS);
    assert_bw(tu_path(t, n4, g0)->bw, 22.0);
    /* CPU <-> CPU */
    p = tu_path(t, tu_node(t, TT_NODE_CPU, 0), tu_node(t, TT_NODE_CPU, 1));
    assert_int_equal(p->type, TT_PATH_SYS);
    assert_bw(p->bw, 22.0);
    check_all_routes(t);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_hgx_no_pxn(void **state)
{
    tt_topo_options o;
    tt_xml_doc *doc;
    tt_topo_options_default(&o);
    o.pxn = 0;
    tt_topo *t = tu_load("hgx-h100-8gpu.xml", &o, &doc);
    int g0 = tu_node(t, TT_NODE_GPU, 0);
    const tt_path *p = tu_path(t, g0, tu_net(t, "mlx5_2"));
    assert_int_equal(p->type, TT_PATH_PHB);
    assert_bw(p->bw, 48.0);
    assert_true(tu_route_has(p, tu_node(t, TT_NODE_CPU, 0)));
    for (int k = 0; k <= p->nhops; k++) /* never through another GPU's PCIe */
        assert_true(p->route[k] == g0 || t->nodes[p->route[k]].type != TT_NODE_GPU);
    p = tu_path(t, g0, tu_net(t, "mlx5_4"));
    assert_int_equal(p->type, TT_PATH_SYS);
    assert_bw(p->bw, 22.0);
    assert_int_equal(tu_path(t, g0, tu_net(t, "mlx5_1"))->type, TT_PATH_PIX);

    /* recomputing with other options in place */
    t->opts.pxn = 1;
    assert_int_equal(tt_topo_compute_paths(t), TT_OK);
    assert_int_equal(tu_path(t, g0, tu_net(t, "mlx5_4"))->type, TT_PATH_PXN);
    check_all_routes(t);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

/* A NIC without GPUDirect: GPU traffic to it goes through the CPU. */
static void test_hgx_gdr_off(void **state)
{
    tt_xml_doc *doc;
    tt_topo *t = tu_load("hgx-h100-8gpu.xml", NULL, &doc);
    tt_topo_free(t);
    tt_xml_node *net = tt_xml_find(doc->root, "net", "name", "mlx5_0");
    assert_non_null(net);
    assert_int_equal(tt_xml_set(net, "gdr", "0"), TT_OK);
    assert_int_equal(tt_topo_from_xml(doc, NULL, &t), TT_OK);
    int g0 = tu_node(t, TT_NODE_GPU, 0), g2 = tu_node(t, TT_NODE_GPU, 2);
    int n0 = tu_net(t, "mlx5_0"), c0 = tu_node(t, TT_NODE_CPU, 0);
    const tt_path *p = tu_path(t, g0, n0);
    assert_int_equal(p->type, TT_PATH_PHB);
    assert_true(tu_route_has(p, c0));
    assert_bw(p->bw, 48.0);
    p = tu_path(t, n0, g0);
    assert_int_equal(p->type, TT_PATH_PHB);
    assert_true(tu_route_has(p, c0));
    /* no PXN relay for a NIC without GPUDirect */
    assert_int_equal(tu_path(t, g2, n0)->type, TT_PATH_PHB);
    /* other NICs unaffected */
    assert_int_equal(tu_path(t, g0, tu_net(t, "mlx5_1"))->type, TT_PATH_PIX);
    check_all_routes(t);
    tt_topo_free(t);

    /* gdr_level PIX: a PXB distance would be too far; PIX stays */
    tt_topo_options o;
    tt_topo_options_default(&o);
    o.gdr_level = TT_PATH_LOC;
    assert_int_equal(tt_topo_from_xml(doc, &o, &t), TT_OK);
    assert_int_equal(tu_path(t, tu_node(t, TT_NODE_GPU, 1), tu_net(t, "mlx5_1"))->type, TT_PATH_PHB);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_pcie_box(void **state)
{
    tt_xml_doc *doc;
    tt_topo *t = tu_load("pcie-4gpu.xml", NULL, &doc);
    int g[4];
    for (int i = 0; i < 4; i++)
        g[i] = tu_node(t, TT_NODE_GPU, i);
    int net = tu_net(t, "mlx5_0"), c0 = tu_node(t, TT_NODE_CPU, 0);
    const tt_path *p = tu_path(t, g[0], g[1]);
    assert_int_equal(p->type, TT_PATH_PIX);
    assert_bw(p->bw, 24.0);
    assert_int_equal(p->nhops, 2);
    p = tu_path(t, g[2], g[3]);
    assert_int_equal(p->type, TT_PATH_PIX);
    p = tu_path(t, g[0], g[2]);
    assert_int_equal(p->type, TT_PATH_PHB);
    assert_bw(p->bw, 24.0);
    assert_int_equal(p->nhops, 4);
    assert_true(tu_route_has(p, c0));
    p = tu_path(t, g[3], net);
    assert_int_equal(p->type, TT_PATH_PHB);
    assert_bw(p->bw, 24.0); /* Gen4 x16 bottleneck below the 200G port (25 GB/s) */
    check_all_routes(t);
    tt_topo_free(t);

    /* P2P level LOC: even same-switch GPUs go through the CPU */
    tt_topo_options o;
    tt_topo_options_default(&o);
    o.p2p_level = TT_PATH_LOC;
    t = NULL;
    assert_int_equal(tt_topo_from_xml(doc, &o, &t), TT_OK);
    p = tu_path(t, tu_node(t, TT_NODE_GPU, 0), tu_node(t, TT_NODE_GPU, 1));
    assert_int_equal(p->type, TT_PATH_PHB);
    assert_int_equal(p->nhops, 4);
    assert_true(tu_route_has(p, tu_node(t, TT_NODE_CPU, 0)));
    check_all_routes(t);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_vm_and_vendor(void **state)
{
    tt_xml_doc *doc;
    tt_topo *t = tu_load("nccl-dump-h100-vm.xml", NULL, &doc);
    int g = tu_node(t, TT_NODE_GPU, 0), e = tu_net(t, "eth0");
    const tt_path *p = tu_path(t, g, e);
    assert_int_equal(p->type, TT_PATH_PHB);
    assert_bw(p->bw, 1.25);
    assert_int_equal(tu_path(t, e, g)->type, TT_PATH_PHB);
    check_all_routes(t);
    tt_topo_free(t);
    tt_xml_doc_free(doc);

    t = tu_load("vendor-partial.xml", NULL, &doc);
    int g0 = tt_topo_find_busid(t, "0001:00:00.0"), g1 = tt_topo_find_busid(t, "0002:00:00.0");
    int g2 = tt_topo_find_busid(t, "0003:00:00.0"), g4 = tt_topo_find_busid(t, "000b:00:00.0");
    int g7 = tt_topo_find_busid(t, "000e:00:00.0"), g6 = tt_topo_find_busid(t, "000d:00:00.0");
    assert_int_equal(tu_path(t, g0, g1)->type, TT_PATH_PIX);
    assert_int_equal(tu_path(t, g0, g2)->type, TT_PATH_PHB);
    p = tu_path(t, g0, g4);
    assert_int_equal(p->type, TT_PATH_SYS);
    assert_bw(p->bw, 16.0);
    p = tu_path(t, g6, g7);
    assert_int_equal(p->type, TT_PATH_PIX);
    assert_bw(p->bw, 12.0); /* the GPU without link info: Gen3 x16 */
    int hca = tt_topo_find_busid(t, "0101:00:00.0");
    assert_int_equal(tu_path(t, g0, hca)->type, TT_PATH_PIX);
    check_all_routes(t);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_xgmi_paths(void **state)
{
    tt_xml_doc *doc;
    tt_topo *t = tu_load("rccl-xgmi-4gpu.xml", NULL, &doc);
    int g0 = tu_node(t, TT_NODE_GPU, 0), g1 = tu_node(t, TT_NODE_GPU, 1);
    int g3 = tu_node(t, TT_NODE_GPU, 3);
    const tt_path *p = tu_path(t, g0, g1);
    assert_int_equal(p->type, TT_PATH_NVL);
    assert_int_equal(p->nhops, 1);
    assert_bw(p->bw, 2 * tt_xgmi_bw_per_link());
    assert_int_equal(t->nodes[g0].links[1].xgmi, 1);
    p = tu_path(t, g0, g3);
    assert_int_equal(p->type, TT_PATH_NVL);
    assert_int_equal(p->nhops, 1);
    check_all_routes(t);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

/* GPU0 = GPU1 = GPU2 chain of NVLinks: GPU0 -> GPU2 is NVB through GPU1. */
static void test_nvb(void **state)
{
#define GPUX(bus, dev, links) "<pci busid=\"" bus "\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" " \
    "link_width=\"16\"><gpu dev=\"" dev "\" sm=\"80\" rank=\"" dev "\" gdr=\"1\">" links "</gpu></pci>"
#define NVL(bus, n) "<nvlink target=\"" bus "\" count=\"" n "\" tclass=\"0x030200\"/>"
    const char *text =
        "<system version=\"1\"><cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">"
        "<pci busid=\"0000:10:00.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
        GPUX("0000:11:00.0", "0", NVL("0000:12:00.0", "4"))
        GPUX("0000:12:00.0", "1", NVL("0000:11:00.0", "4") NVL("0000:13:00.0", "2"))
        GPUX("0000:13:00.0", "2", NVL("0000:12:00.0", "2"))
        "</pci>"
        "<pci busid=\"0000:20:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
        "<nic><net name=\"eth1\" dev=\"0\" speed=\"100000\" gdr=\"1\"/></nic></pci>"
        "</cpu></system>";
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    tt_topo_options o;
    tt_topo_options_default(&o);
    o.pxn = 0;
    assert_int_equal(tu_build_text(text, &o, &t, &doc), TT_OK);
    int g0 = tu_node(t, TT_NODE_GPU, 0), g1 = tu_node(t, TT_NODE_GPU, 1);
    int g2 = tu_node(t, TT_NODE_GPU, 2);
    const tt_path *p = tu_path(t, g0, g1);
    assert_int_equal(p->type, TT_PATH_NVL);
    assert_bw(p->bw, 80.0);
    p = tu_path(t, g0, g2);
    assert_int_equal(p->type, TT_PATH_NVB);
    assert_bw(p->bw, 40.0);
    assert_int_equal(p->nhops, 2);
    assert_int_equal(p->route[1], g1);
    /* a GPU is never crossed over its PCIe: GPU0 -> NIC goes up through the CPU */
    p = tu_path(t, g0, tu_net(t, "eth1"));
    assert_int_equal(p->type, TT_PATH_PHB);
    assert_false(tu_route_has(p, g1));
    check_all_routes(t);
    tt_topo_free(t);
    tt_xml_doc_free(doc);

    o.nvb = 0;
    assert_int_equal(tu_build_text(text, &o, &t, &doc), TT_OK);
    p = tu_path(t, tu_node(t, TT_NODE_GPU, 0), tu_node(t, TT_NODE_GPU, 2));
    assert_int_equal(p->type, TT_PATH_PIX);
    assert_bw(p->bw, 24.0);
    check_all_routes(t);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

/* Grace-Hopper style: GPU - C2C - CPU - PCIe - NIC is P2C. */
static void test_p2c(void **state)
{
    const char *text =
        "<system version=\"1\"><cpu numaid=\"0\" arch=\"arm64\">"
        "<pci busid=\"0009:01:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">"
        "<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"><c2c bw=\"44712\" count=\"10\"/></gpu></pci>"
        "<pci busid=\"0000:01:00.0\" class=\"0x020700\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">"
        "<nic><net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" gdr=\"1\"/></nic></pci>"
        "</cpu></system>";
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    assert_int_equal(tu_build_text(text, NULL, &t, &doc), TT_OK);
    int g = tu_node(t, TT_NODE_GPU, 0), c = tu_node(t, TT_NODE_CPU, 0);
    int n = tu_net(t, "mlx5_0");
    assert_int_equal(tu_path(t, g, c)->type, TT_PATH_C2C);
    assert_bw(tu_path(t, g, c)->bw, 447.12);
    const tt_path *p = tu_path(t, g, n);
    assert_int_equal(p->type, TT_PATH_P2C);
    assert_bw(p->bw, 48.0);
    assert_true(tu_route_has(p, c));
    assert_int_equal(tu_path(t, n, g)->type, TT_PATH_P2C);
    check_all_routes(t);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_bad_calls(void **state)
{
    assert_null(tt_topo_path(NULL, 0, 0));
    assert_int_equal(tt_topo_compute_paths(NULL), TT_ERR_INVALID);
    tt_xml_doc *doc;
    tt_topo *t = tu_load("pcie-4gpu.xml", NULL, &doc);
    assert_null(tt_topo_path(t, -1, 0));
    assert_null(tt_topo_path(t, 0, t->nnodes));
    /* local CPU also answers before paths exist (fewest links) */
    int g3 = tu_node(t, TT_NODE_GPU, 3), c0 = tu_node(t, TT_NODE_CPU, 0);
    tt_path *saved = t->paths;
    t->paths = NULL;
    assert_int_equal(tt_topo_local_cpu(t, g3), c0);
    assert_int_equal(tt_topo_local_cpu(t, tu_net(t, "mlx5_0")), c0);
    t->paths = saved;
    assert_int_equal(tt_topo_local_cpu(t, g3), c0);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
    /* an empty system has no nodes and no paths */
    assert_int_equal(tu_build_text("<system version=\"1\"/>", NULL, &t, &doc), TT_OK);
    assert_int_equal(t->nnodes, 0);
    assert_null(tt_topo_path(t, 0, 0));
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hgx_paths),
        cmocka_unit_test(test_hgx_no_pxn),
        cmocka_unit_test(test_hgx_gdr_off),
        cmocka_unit_test(test_pcie_box),
        cmocka_unit_test(test_vm_and_vendor),
        cmocka_unit_test(test_xgmi_paths),
        cmocka_unit_test(test_nvb),
        cmocka_unit_test(test_p2c),
        cmocka_unit_test(test_bad_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
