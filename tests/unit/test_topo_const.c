/* test_topo_const.c - bandwidth constants and type names of the topology model. */
#include "topo_test_util.h"

static void test_pci_bw(void **state)
{
    static const struct { const char *speed; double x16; } gens[] = {
        {"2.5 GT/s PCIe", 3.0}, {"5.0 GT/s PCIe", 6.0}, {"8.0 GT/s PCIe", 12.0},
        {"16.0 GT/s PCIe", 24.0}, {"32.0 GT/s PCIe", 48.0}, {"64.0 GT/s PCIe", 96.0},
    };
    int known = -1;
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++) {
        assert_bw(tt_pci_bw(gens[i].speed, 16, &known), gens[i].x16);
        assert_int_equal(known, 1);
    }
    /* kernel <= 5.6 spelling, and narrower links scale with the lanes */
    assert_bw(tt_pci_bw("16 GT/s", 16, &known), 24.0);
    assert_int_equal(known, 1);
    assert_bw(tt_pci_bw("32.0 GT/s PCIe", 8, &known), 24.0);
    assert_bw(tt_pci_bw("8 GT/s", 4, &known), 3.0);
    /* NCCL's fallbacks: unknown speed -> Gen3, width 0 -> x16 */
    assert_bw(tt_pci_bw("", 16, &known), 12.0);
    assert_int_equal(known, 0);
    assert_bw(tt_pci_bw(NULL, 8, &known), 6.0);
    assert_int_equal(known, 0);
    assert_bw(tt_pci_bw("Unknown", 16, &known), 12.0);
    assert_int_equal(known, 0);
    assert_bw(tt_pci_bw("7 GT/s", 16, &known), 12.0);
    assert_int_equal(known, 0);
    assert_bw(tt_pci_bw("32.0 GT/s PCIe", 0, &known), 48.0);
    assert_int_equal(known, 0);
    assert_bw(tt_pci_bw("", 0, NULL), 12.0);
}

static void test_nvlink_bw(void **state)
{
    assert_bw(18 * tt_nvlink_bw_per_link(90), 370.8); /* H100 */
    assert_bw(18 * tt_nvlink_bw_per_link(100), 721.8); /* B200 */
    assert_bw(12 * tt_nvlink_bw_per_link(80), 240.0); /* A100 */
    assert_bw(6 * tt_nvlink_bw_per_link(70), 120.0);  /* V100 */
    assert_bw(tt_nvlink_bw_per_link(86), 12.0);
    assert_bw(tt_nvlink_bw_per_link(89), 20.0);
    assert_bw(tt_nvlink_bw_per_link(60), 18.0);
    assert_bw(tt_nvlink_bw_per_link(0), 20.0);
    assert_bw(tt_nvlink_bw_per_link(120), 40.1);
    assert_true(tt_xgmi_bw_per_link() > 0);
}

static void test_net_bw(void **state)
{
    assert_bw(tt_net_bw(400000), 50.0);
    assert_bw(tt_net_bw(200000), 25.0);
    assert_bw(tt_net_bw(100000), 12.5);
    assert_bw(tt_net_bw(0), 1.25);
    assert_bw(tt_net_bw(-1), 1.25);
}

static void test_inter_cpu_bw(void **state)
{
    assert_bw(tt_inter_cpu_bw("x86_64", "GenuineIntel", 6, 0xCF), 40.0); /* EMR */
    assert_bw(tt_inter_cpu_bw("x86_64", "GenuineIntel", 6, 207), 40.0);
    assert_bw(tt_inter_cpu_bw("x86_64", "GenuineIntel", 6, 143), 22.0);  /* SPR */
    assert_bw(tt_inter_cpu_bw("x86_64", "GenuineIntel", 6, 0x6A), 10.0); /* ICX */
    assert_bw(tt_inter_cpu_bw("x86_64", "GenuineIntel", 6, 0x55), 10.0); /* SKX */
    assert_bw(tt_inter_cpu_bw("x86_64", "GenuineIntel", 6, 0x4F), 6.0);  /* BDW */
    assert_bw(tt_inter_cpu_bw("x86_64", "GenuineIntel", 19, 1), 6.0);
    assert_bw(tt_inter_cpu_bw("x86_64", "AuthenticAMD", 25, 1), 16.0);
    assert_bw(tt_inter_cpu_bw("x86_64", "CentaurHauls", 7, 0x5B), 9.0);
    assert_bw(tt_inter_cpu_bw("x86_64", "  Shanghai  ", 7, 0x5B), 9.0);
    assert_bw(tt_inter_cpu_bw("x86_64", "  Shanghai  ", 7, 0x3B), 6.0);
    assert_bw(tt_inter_cpu_bw("ppc64", "", -1, -1), 32.0);
    assert_bw(tt_inter_cpu_bw("arm64", "", -1, -1), 6.0);
    /* unknown vendor: our conservative value, not NCCL's 5000 */
    assert_bw(tt_inter_cpu_bw("x86_64", "HygonGenuine", 24, 1), TT_INTER_CPU_BW_UNKNOWN);
    assert_bw(tt_inter_cpu_bw(NULL, NULL, -1, -1), TT_INTER_CPU_BW_UNKNOWN);
    assert_true(TT_INTER_CPU_BW_UNKNOWN < 100);
}

static void test_names(void **state)
{
    tt_path_type p;
    assert_string_equal(tt_node_type_name(TT_NODE_GPU), "GPU");
    assert_string_equal(tt_node_type_name(TT_NODE_NET), "NET");
    assert_string_equal(tt_node_type_name(TT_NODE_NTYPES), "?");
    assert_string_equal(tt_link_type_name(TT_LINK_C2C), "C2C");
    assert_string_equal(tt_link_type_name(TT_LINK_SYS), "SYS");
    assert_string_equal(tt_link_type_name((tt_link_type)7), "?");
    for (int i = TT_PATH_LOC; i <= TT_PATH_DIS; i++) {
        assert_int_equal(tt_path_type_parse(tt_path_type_name((tt_path_type)i), &p), TT_OK);
        assert_int_equal(p, i);
    }
    assert_string_equal(tt_path_type_name(TT_PATH_PXN), "PXN");
    assert_string_equal(tt_path_type_name((tt_path_type)99), "?");
    assert_int_equal(tt_path_type_parse("phb", &p), TT_OK);
    assert_int_equal(p, TT_PATH_PHB);
    assert_int_equal(tt_path_type_parse("NVLINK", &p), TT_ERR_PARSE);
    assert_non_null(strstr(tt_error_message(), "NVLINK"));
    assert_int_equal(tt_path_type_parse(NULL, &p), TT_ERR_INVALID);
}

static void test_options_default(void **state)
{
    tt_topo_options o;
    memset(&o, 0x5a, sizeof o);
    tt_topo_options_default(&o);
    assert_int_equal(o.p2p_level, TT_PATH_PXB);
    assert_int_equal(o.gdr_level, TT_PATH_PXB);
    assert_int_equal(o.pxn, 1);
    assert_int_equal(o.nvb, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pci_bw),
        cmocka_unit_test(test_nvlink_bw),
        cmocka_unit_test(test_net_bw),
        cmocka_unit_test(test_inter_cpu_bw),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_options_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
