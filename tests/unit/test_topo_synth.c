/*
 * test_topo_synth.c - synthetic topologies (topo_synth.c: the host stand-in of topo-exec
 * --validate, the generated NVSwitch domain of topo-tune --bench) and the native document of
 * topo-dump (topo_native.c: tt_version/tt_source, unknown-notes, idempotence).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tt_topo.h"
#include "tt_xml.h"

static char *write_native(const tt_xml_doc *d)
{
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NATIVE, &buf, &len), TT_OK);
    assert_int_equal(strlen(buf), len);
    return buf;
}

/* the text bin/cli_validate.c printed for 2 ranks before the stand-in moved to topo/ */
static const char host2[] =
    "<system version=\"1\">\n"
    "  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
    "    <pci busid=\"0000:11:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x26b9\" subsystem_vendor=\"0x10de\" "
    "subsystem_device=\"0x1851\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <gpu dev=\"0\" sm=\"89\" rank=\"0\" gdr=\"1\"/>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:12:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x26b9\" subsystem_vendor=\"0x10de\" "
    "subsystem_device=\"0x1851\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <gpu dev=\"1\" sm=\"89\" rank=\"1\" gdr=\"1\"/>\n"
    "    </pci>\n"
    "  </cpu>\n"
    "</system>\n";

static void test_host_standin(void **state)
{
    (void)state;
    tt_xml_doc *d = NULL;
    assert_int_equal(tt_topo_synth_host(2, &d), TT_OK);
    assert_string_equal(d->source, TT_TOPO_SYNTH_HOST_SOURCE);
    char *x = write_native(d);
    assert_string_equal(x, host2);
    free(x);
    tt_xml_doc_free(d);

    /* 8 ranks: 8 PCIe GPUs under one CPU, ranks 0..7, bus ids 0x11.. */
    assert_int_equal(tt_topo_synth_host(8, &d), TT_OK);
    tt_topo *t = NULL;
    assert_int_equal(tt_topo_from_xml(d, NULL, &t), TT_OK);
    assert_int_equal(t->ntype[TT_NODE_GPU], 8);
    assert_int_equal(t->ntype[TT_NODE_CPU], 1);
    assert_int_equal(t->ntype[TT_NODE_NVS], 0);
    for (int r = 0; r < 8; r++) {
        int i = tt_topo_node_index(t, TT_NODE_GPU, r);
        assert_true(i >= 0);
        assert_int_equal(t->nodes[i].u.gpu.rank, r);
        assert_int_equal(t->nodes[i].u.gpu.sm, 89);
    }
    assert_true(tt_topo_find_busid(t, "0000:18:00.0") >= 0);
    tt_topo_free(t);
    tt_xml_doc_free(d);

    d = (tt_xml_doc *)1;
    assert_int_equal(tt_topo_synth_host(0, &d), TT_ERR_INVALID);
    assert_null(d);
}

static void test_nvl72(void **state)
{
    (void)state;
    /* byte for byte the fixture the old printf generator wrote */
    const char *root = getenv("TOPOTUNE_ROOT");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/nvl72-sm100.xml", root && *root ? root : ".");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char want[1 << 16];
    size_t n = fread(want, 1, sizeof want - 1, f);
    fclose(f);
    want[n] = '\0';
    tt_xml_doc *d = NULL;
    assert_int_equal(tt_topo_synth_nvl72(72, &d), TT_OK);
    assert_string_equal(d->source, TT_TOPO_SYNTH_NVL72_SOURCE);
    char *x = write_native(d);
    assert_string_equal(x, want);
    free(x);

    tt_topo *t = NULL;
    assert_int_equal(tt_topo_from_xml(d, NULL, &t), TT_OK);
    assert_int_equal(t->ntype[TT_NODE_GPU], 72);
    assert_int_equal(t->ntype[TT_NODE_CPU], 18);
    assert_int_equal(t->ntype[TT_NODE_NVS], 1);
    int g71 = tt_topo_node_index(t, TT_NODE_GPU, 71);
    assert_int_equal(t->nodes[g71].u.gpu.rank, 71);
    assert_int_equal(t->nodes[g71].u.gpu.sm, 100);
    tt_topo_free(t);
    tt_xml_doc_free(d);

    /* 5 GPUs: two CPUs (4 + 1) */
    assert_int_equal(tt_topo_synth_nvl72(5, &d), TT_OK);
    assert_int_equal(tt_topo_from_xml(d, NULL, &t), TT_OK);
    assert_int_equal(t->ntype[TT_NODE_GPU], 5);
    assert_int_equal(t->ntype[TT_NODE_CPU], 2);
    tt_topo_free(t);
    tt_xml_doc_free(d);
    assert_int_equal(tt_topo_synth_nvl72(TT_TOPO_MAX_TYPE_NODES + 1, &d), TT_ERR_INVALID);
    assert_null(d);
}

static void test_native(void **state)
{
    (void)state;
    static const char in[] = "<system version=\"1\">\n"
                             "  <cpu numaid=\"-1\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
                             "    <pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"0\">\n"
                             "      <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/>\n"
                             "    </pci>\n"
                             "  </cpu>\n"
                             "</system>\n";
    tt_xml_doc *d = NULL, *n1 = NULL, *n2 = NULL;
    assert_int_equal(tt_xml_read_buffer(in, sizeof in - 1, "native-test", NULL, &d), TT_OK);
    assert_int_equal(tt_topo_to_native(d, &n1), TT_OK);
    assert_string_equal(tt_xml_get(n1->root, "tt_version"), "1");
    assert_string_equal(tt_xml_get(n1->root, "tt_source"), "nccl");
    /* the input is not touched */
    assert_null(tt_xml_get(d->root, "tt_version"));
    const tt_xml_node *cpu = tt_xml_first_child(n1->root, "cpu");
    const tt_xml_node *u = tt_xml_first_child(cpu, NULL);
    assert_string_equal(u->name, "unknown");
    assert_string_equal(tt_xml_get(u, "attr"), "numaid");
    const tt_xml_node *pci = tt_xml_first_child(cpu, "pci");
    int nu = 0, width = 0, speed = 0;
    for (u = tt_xml_first_child(pci, "unknown"); u; u = tt_xml_next_sibling(u, "unknown")) {
        nu++;
        width |= !strcmp(tt_xml_get(u, "attr"), "link_width");
        speed |= !strcmp(tt_xml_get(u, "attr"), "link_speed");
    }
    assert_int_equal(nu, 2);
    assert_true(width && speed);
    /* idempotent: converting the native doc again changes nothing */
    assert_int_equal(tt_topo_to_native(n1, &n2), TT_OK);
    char *a = write_native(n1), *b = write_native(n2);
    assert_string_equal(a, b);
    free(a);
    free(b);
    tt_xml_doc_free(n2);
    tt_xml_doc_free(n1);
    tt_xml_doc_free(d);
    assert_int_equal(tt_topo_to_native(NULL, &n1), TT_ERR_INVALID);
    assert_null(n1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_standin),
        cmocka_unit_test(test_nvl72),
        cmocka_unit_test(test_native),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
