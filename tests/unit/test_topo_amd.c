/* test_topo_amd.c - RCCL's dialect: AMD GPU generations, xGMI bandwidth per link,
 * the model's class instead of RCCL's sm, NIC speeds in another unit (#19). */
#include "topo_test_util.h"

static const tt_link *link_to(const tt_topo *t, int a, int b)
{
    for (int i = 0; i < t->nodes[a].nlinks; i++)
        if (t->nodes[a].links[i].peer == b && t->nodes[a].links[i].type == TT_LINK_NVL)
            return &t->nodes[a].links[i];
    return NULL;
}

static void test_generations(void **state)
{
    tt_amd_model m;
    (void)state;
    assert_int_equal(tt_amd_gpu_model("gfx942", 0, &m), 1);
    assert_bw(m.xgmi_gbps, 64.0);
    assert_int_equal(m.cc, 90);
    assert_string_equal(m.from, "gcn");
    assert_int_equal(tt_amd_gpu_model("gfx90a:sramecc+:xnack-", 0, &m), 1);
    assert_bw(m.xgmi_gbps, 50.0);
    assert_int_equal(m.cc, 80);
    assert_int_equal(tt_amd_gpu_model("gfx908", 0, &m), 1);
    assert_bw(m.xgmi_gbps, 46.0);
    /* no gcn: the PCI device id (MI300X 0x74a1, MI250X 0x7408) */
    assert_int_equal(tt_amd_gpu_model(NULL, 0x74a1, &m), 1);
    assert_bw(m.xgmi_gbps, 64.0);
    assert_string_equal(m.from, "pci device id");
    assert_int_equal(tt_amd_gpu_model("", 0x7408, &m), 1);
    assert_bw(m.xgmi_gbps, 50.0);
    /* older RCCL writes HIP's gcnArch number: 906, 908, 910 (gfx90a), 940-942 (#33) */
    assert_int_equal(tt_amd_gpu_model("906", 0, &m), 1);
    assert_bw(m.xgmi_gbps, 50.0);
    assert_int_equal(m.cc, 70);
    assert_string_equal(m.from, "gcn");
    assert_int_equal(tt_amd_gpu_model("gfx906:sramecc+:xnack-", 0, &m), 1);
    assert_int_equal(m.cc, 70);
    assert_int_equal(tt_amd_gpu_model("908", 0, &m), 1);
    assert_bw(m.xgmi_gbps, 46.0);
    assert_int_equal(tt_amd_gpu_model("910", 0, &m), 1);
    assert_bw(m.xgmi_gbps, 50.0);
    assert_int_equal(m.cc, 80);
    assert_int_equal(tt_amd_gpu_model("90a", 0, &m), 1);
    assert_bw(m.xgmi_gbps, 50.0);
    assert_int_equal(tt_amd_gpu_model("GFX90A", 0, &m), 1);
    for (int k = 0; k < 3; k++) {
        const char *mi300[] = {"940", "941", "942"};
        assert_int_equal(tt_amd_gpu_model(mi300[k], 0, &m), 1);
        assert_bw(m.xgmi_gbps, 64.0);
        assert_int_equal(m.cc, 90);
    }
    assert_int_equal(tt_amd_gpu_model("", 0x66a1, &m), 1); /* MI50 by device id */
    assert_int_equal(m.cc, 70);
    /* a number that is no generation, and a prefix of one, stay unknown */
    assert_int_equal(tt_amd_gpu_model("907", 0, &m), 0);
    assert_int_equal(tt_amd_gpu_model("gfx94", 0, &m), 0);
    /* unknown: the default, said so */
    assert_int_equal(tt_amd_gpu_model("gfx1201", 0x7551, &m), 0);
    assert_bw(m.xgmi_gbps, tt_xgmi_bw_per_link());
    assert_string_equal(m.from, "default");
}

static void test_net_units(void **state)
{
    const char *u;
    (void)state;
    assert_bw(tt_net_speed_mbps(400000, &u), 400000);
    assert_string_equal(u, "Mb/s");
    assert_bw(tt_net_speed_mbps(200000000, &u), 200000); /* Slingshot cxi via libfabric */
    assert_string_equal(u, "kb/s");
    assert_bw(tt_net_speed_mbps(400e9, &u), 400000);
    assert_string_equal(u, "b/s");
    assert_true(tt_net_speed_mbps(9e14, &u) < 0);
    assert_null(u);
}

static void test_mi300x(void **state)
{
    tt_xml_doc *doc;
    (void)state;
    tt_topo *t = tu_load("rccl-mi300x-8gpu.xml", NULL, &doc);
    assert_int_equal(t->ntype[TT_NODE_GPU], 8);
    assert_int_equal(t->ntype[TT_NODE_NET], 8);
    assert_int_equal(t->ntype[TT_NODE_NVS], 0);
    for (int i = 0; i < 8; i++) {
        int g = tu_node(t, TT_NODE_GPU, i), links = 0;
        assert_int_equal(t->nodes[g].u.gpu.amd, 1);
        assert_int_equal(t->nodes[g].u.gpu.sm, 94);
        assert_int_equal(t->nodes[g].u.gpu.cc, 90);
        assert_string_equal(t->nodes[g].u.gpu.gcn, "gfx942");
        for (int j = 0; j < 8; j++) {
            const tt_link *l = j == i ? NULL : link_to(t, g, tu_node(t, TT_NODE_GPU, j));
            if (j == i)
                continue;
            assert_non_null(l);
            assert_int_equal(l->xgmi, 1);
            assert_bw(l->bw, 64.0);
            links++;
        }
        assert_int_equal(links, 7);
    }
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_mi250x_cxi(void **state)
{
    tt_xml_doc *doc;
    (void)state;
    tt_topo *t = tu_load("rccl-mi250x-8gcd-cxi.xml", NULL, &doc);
    assert_int_equal(t->ntype[TT_NODE_GPU], 8);
    assert_int_equal(t->ntype[TT_NODE_NET], 4);
    assert_int_equal(t->ntype[TT_NODE_CPU], 4);
    int g0 = tu_node(t, TT_NODE_GPU, 0), g1 = tu_node(t, TT_NODE_GPU, 1);
    int g2 = tu_node(t, TT_NODE_GPU, 2), g4 = tu_node(t, TT_NODE_GPU, 4);
    assert_bw(link_to(t, g0, g1)->bw, 4 * 50.0); /* the two GCDs of one MI250X */
    assert_bw(link_to(t, g1, g2)->bw, 2 * 50.0);
    assert_bw(link_to(t, g0, g4)->bw, 50.0);
    assert_null(link_to(t, g0, g2));
    assert_int_equal(t->nodes[g0].u.gpu.cc, 80);
    int net = tt_topo_find_net(t, "cxi0");
    assert_true(net >= 0);
    assert_bw(t->nodes[net].u.net.speed_mbps, 200000); /* 200000000 kb/s */
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_nvlink_self(void **state)
{
    tt_xml_doc *doc;
    (void)state;
    tt_topo *t = tu_load("nccl-nvlink-self.xml", NULL, &doc);
    int g0 = tu_node(t, TT_NODE_GPU, 0), g1 = tu_node(t, TT_NODE_GPU, 1);
    assert_null(link_to(t, g0, g0));
    assert_non_null(link_to(t, g1, g0));
    assert_non_null(link_to(t, g0, g1)); /* the way back from the peer's element */
    assert_int_equal(t->nodes[g0].u.gpu.amd, 0);
    assert_int_equal(t->nodes[g0].u.gpu.cc, 80);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generations),
        cmocka_unit_test(test_net_units),
        cmocka_unit_test(test_mi300x),
        cmocka_unit_test(test_mi250x_cxi),
        cmocka_unit_test(test_nvlink_self),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
