/* test_topo_parts.c - the NVIDIA part table and what the builder infers from it
 * for partial vendor files (issue #19): plausible rows, lookups, and one finding
 * per inferred value. */
#include "topo_test_util.h"
#include "tt_topo.h"

static int count_code(const tt_topo *t, const char *code)
{
    int n = 0;
    for (int i = 0; i < t->assumed.n; i++)
        n += !strcmp(t->assumed.items[i].code, code);
    return n;
}

static void test_table_plausible(void **state)
{
    (void)state;
    assert_true(tt_gpu_part_count() >= 10);
    for (int i = 0; i < tt_gpu_part_count(); i++) {
        const tt_gpu_part *p = tt_gpu_part_at(i);
        assert_non_null(p->name);
        assert_non_null(p->source);
        assert_true(strlen(p->source) > 10);
        assert_true(p->sm >= 70 && p->sm <= 120);
        assert_true(p->pcie_gen >= 3 && p->pcie_gen <= 6);
        if (p->board == TT_BOARD_NONE) {
            assert_int_equal(p->links, 0);
        } else {
            assert_true(p->nvlink_gen >= 2 && p->nvlink_gen <= 5);
            assert_true(p->links >= 6 && p->links <= 18);
            /* nominal per-link, per-direction rate: 25 GB/s up to NVLink 4, 50 GB/s for NVLink 5 */
            assert_true(p->link_gbps == (p->nvlink_gen >= 5 ? 50.0 : 25.0));
        }
        if (p->mesh4_links)
            assert_int_equal(p->mesh4_links * 3, p->links);
        /* device ids unique */
        for (int j = 0; j < i; j++)
            assert_int_not_equal(tt_gpu_part_at(j)->device_id, p->device_id);
    }
    assert_null(tt_gpu_part_at(-1));
    assert_null(tt_gpu_part_at(tt_gpu_part_count()));
}

static void test_lookup(void **state)
{
    (void)state;
    const tt_gpu_part *h = tt_gpu_part_by_id(0x2330);
    assert_non_null(h);
    assert_string_equal(h->name, "H100-SXM");
    assert_int_equal(h->links, 18);
    assert_int_equal(h->board, TT_BOARD_NVSWITCH);
    /* H100 SXM5: 18 x 25 GB/s x 2 directions = 900 GB/s (data sheet) */
    assert_true(h->links * h->link_gbps * 2 == 900.0);
    const tt_gpu_part *b = tt_gpu_part_by_id(0x2901);
    assert_non_null(b);
    assert_true(b->links * b->link_gbps * 2 == 1800.0);
    const tt_gpu_part *a = tt_gpu_part_by_id(0x20b2);
    assert_true(a->links * a->link_gbps * 2 == 600.0);
    assert_int_equal(tt_gpu_part_by_id(0x2331)->board, TT_BOARD_BRIDGE);
    assert_null(tt_gpu_part_by_id(0xffff));
    assert_ptr_equal(tt_gpu_part_by_name("h100 sxm"), h);
    assert_ptr_equal(tt_gpu_part_by_name("H100_SXM5"), h);
    assert_ptr_equal(tt_gpu_part_by_name("B200"), b);
    assert_string_equal(tt_gpu_part_by_name("a100-sxm4")->name, "A100-SXM");
    assert_null(tt_gpu_part_by_name("H999"));
    assert_null(tt_gpu_part_by_name(""));
    assert_null(tt_gpu_part_by_name(NULL));
    assert_string_equal(tt_board_kind_name(TT_BOARD_NVSWITCH), "nvswitch");
}

static void test_h100_inferred(void **state)
{
    (void)state;
    tt_xml_doc *doc;
    tt_topo *t = tu_load("vendor/h100-sxm-partial.xml", NULL, &doc);
    assert_int_equal(t->ntype[TT_NODE_GPU], 8);
    assert_int_equal(t->ntype[TT_NODE_NIC], 8);
    assert_int_equal(t->ntype[TT_NODE_NET], 8);
    assert_int_equal(t->ntype[TT_NODE_NVS], 1);
    assert_int_equal(t->gpu_fabric_unknown, 0);
    assert_int_equal(count_code(t, "inferred-nvlink"), 8);
    assert_int_equal(count_code(t, "inferred-nvswitch"), 1);
    assert_int_equal(count_code(t, "inferred-net"), 8);
    int g0 = tt_topo_node_index(t, TT_NODE_GPU, 0), g7 = tt_topo_node_index(t, TT_NODE_GPU, 7);
    assert_int_equal(t->nodes[g0].u.gpu.sm, 90);
    const tt_path *p = tt_topo_path(t, g0, g7);
    assert_int_equal(p->type, TT_PATH_NVL);
    assert_true(p->bw > 18 * 20.0); /* 18 links at NCCL's sm90 20.6 GB/s */
    int n0 = tt_topo_find_net(t, "ib-0000:19:00.0"), n1 = tt_topo_find_net(t, "ib-0000:2b:00.0");
    assert_true(n0 >= 0 && n1 >= 0);
    assert_int_equal(tt_topo_path(t, g0, n0)->type, TT_PATH_PIX);
    assert_int_equal(tt_topo_path(t, g0, n1)->type, TT_PATH_PXB);
    assert_true(t->nodes[n0].u.net.speed_mbps == 400000);
    assert_null(t->nodes[n0].xml); /* synthesised */
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_part_option(void **state)
{
    (void)state;
    tt_xml_doc *doc;
    tt_topo_options o;
    tt_topo_options_default(&o);
    o.gpu_part = "H200-SXM";
    tt_topo *t = tu_load("vendor-partial.xml", &o, &doc);
    assert_int_equal(t->gpu_fabric_unknown, 0);
    assert_int_equal(count_code(t, "inferred-nvlink"), 8);
    assert_int_equal(count_code(t, "gpu-interconnect-unknown"), 0);
    int found = 0;
    for (int i = 0; i < t->assumed.n; i++)
        found += strstr(t->assumed.items[i].message, "part given by option (H200-SXM)") != NULL;
    assert_int_equal(found, 8);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
    /* an unknown part is an error naming the known ones */
    o.gpu_part = "X1";
    tt_topo *bad = NULL;
    assert_int_equal(tu_build_text("<system version=\"1\"><cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\">"
                                   "<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"\"/>"
                                   "</cpu></system>", &o, &bad, &doc),
                     TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "H100-SXM"));
    tt_xml_doc_free(doc);
}

static void test_mesh_bridge_unknown(void **state)
{
    (void)state;
    tt_xml_doc *doc;
    tt_topo *t = tu_load("vendor/a100-sxm4-eth-partial.xml", NULL, &doc);
    assert_int_equal(t->ntype[TT_NODE_NVS], 0);
    int g0 = tt_topo_node_index(t, TT_NODE_GPU, 0), g3 = tt_topo_node_index(t, TT_NODE_GPU, 3);
    assert_int_equal(tt_topo_path(t, g0, g3)->type, TT_PATH_NVL);
    assert_int_equal(count_code(t, "inferred-nvlink"), 4);
    assert_int_equal(count_code(t, "inferred-net"), 2);
    assert_true(t->nodes[tt_topo_find_net(t, "eth-0000:42:00.0")].u.net.speed_mbps == 200000);
    tt_topo_free(t);
    tt_xml_doc_free(doc);

    t = tu_load("vendor/h100-pcie-partial.xml", NULL, &doc);
    assert_int_equal(t->gpu_fabric_unknown, 2);
    assert_int_equal(count_code(t, "gpu-interconnect-unknown"), 1);
    assert_int_equal(count_code(t, "inferred-sm"), 2);
    g0 = tt_topo_node_index(t, TT_NODE_GPU, 0);
    assert_int_equal(tt_topo_path(t, g0, tt_topo_node_index(t, TT_NODE_GPU, 1))->type, TT_PATH_PIX);
    tt_topo_free(t);
    tt_xml_doc_free(doc);

    /* a file with <gpu> elements is NCCL's own detection: nothing inferred */
    t = tu_load("hgx-h100-8gpu.xml", NULL, &doc);
    assert_int_equal(t->assumed.n, 0);
    assert_int_equal(t->gpu_fabric_unknown, 0);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_plausible),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_h100_inferred),
        cmocka_unit_test(test_part_option),
        cmocka_unit_test(test_mesh_bridge_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
