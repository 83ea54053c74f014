/* test_xml_read.c - reading real and hand-written topology files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_xml.h"

static const char *fixture(const char *rel)
{
    static char path[4096];
    const char *root = getenv("TOPOTUNE_ROOT");
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", root ? root : ".", rel);
    return path;
}

static tt_xml_doc *parse_ok(const char *text)
{
    tt_xml_doc *d = NULL;
    tt_status s = tt_xml_read_buffer(text, strlen(text), "t.xml", NULL, &d);
    if (s != TT_OK)
        fail_msg("parse failed: %s", tt_error_message());
    assert_non_null(d);
    return d;
}

static void test_nccl_fixture(void **state)
{
    tt_xml_doc *d = NULL;
    tt_xml_node *r, *cpu, *pci, *gpu, *nic, *net;
    long long v;
    (void)state;
    assert_int_equal(tt_xml_read_file(fixture("nccl-dump-h100-vm.xml"), NULL, &d), TT_OK);
    assert_non_null(strstr(d->source, "nccl-dump-h100-vm.xml"));
    r = d->root;
    assert_string_equal(r->name, "system");
    assert_int_equal(r->line, 1);
    assert_string_equal(tt_xml_get(r, "version"), "1");
    assert_int_equal(tt_xml_count(r), 6);
    cpu = tt_xml_first_child(r, "cpu");
    assert_int_equal(cpu->line, 2);
    assert_int_equal(cpu->nattrs, 6);
    assert_string_equal(cpu->attrs[0].name, "host_hash");
    assert_string_equal(cpu->attrs[0].value, "0xbce489576da22d6");
    assert_string_equal(cpu->attrs[5].name, "modelid");
    assert_int_equal(tt_xml_get_ll(d, cpu, "numaid", &v), TT_OK);
    assert_int_equal(v, -1);
    pci = tt_xml_first_child(cpu, "pci");
    assert_int_equal(pci->line, 3);
    assert_int_equal(pci->nattrs, 8);
    assert_string_equal(tt_xml_get(pci, "link_speed"), "32.0 GT/s PCIe");
    assert_string_equal(tt_xml_get(pci, "link_width"), "0");
    gpu = tt_xml_first_child(pci, NULL);
    assert_string_equal(gpu->name, "gpu");
    assert_int_equal(gpu->line, 4);
    assert_int_equal(gpu->nchildren, 0);
    assert_int_equal(tt_xml_get_ll(d, gpu, "sm", &v), TT_OK);
    assert_int_equal(v, 90);
    nic = tt_xml_next_sibling(pci, NULL);
    assert_string_equal(nic->name, "nic");
    assert_int_equal(nic->line, 6);
    assert_int_equal(nic->nattrs, 0);
    net = tt_xml_first_child(nic, "net");
    assert_int_equal(net->line, 7);
    assert_string_equal(tt_xml_get(net, "name"), "eth0");
    assert_string_equal(tt_xml_get(net, "maxconn"), "65536");
    assert_ptr_equal(tt_xml_find(r, "net", "guid", "0x0"), net);
    tt_xml_doc_free(d);
}

static void test_prolog_tabs_quotes(void **state)
{
    tt_xml_doc *d;
    (void)state;
    d = parse_ok("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<!-- a comment -->\n"
                 "<system version='1'>\n"
                 "\t<cpu\tnumaid='0'\tarch=\"x86_64\" vendor='Genuine\"Intel'>\n"
                 "\t\t<!-- inside -->\n"
                 "\t\t<pci busid='0000:01:00.0'/>\n"
                 "\t</cpu>\n"
                 "</system>\n");
    assert_string_equal(d->root->name, "system");
    assert_int_equal(d->root->line, 3);
    assert_string_equal(tt_xml_get(d->root, "version"), "1");
    tt_xml_node *cpu = d->root->children[0];
    assert_int_equal(cpu->line, 4);
    assert_string_equal(tt_xml_get(cpu, "vendor"), "Genuine\"Intel");
    assert_string_equal(tt_xml_get(cpu, "arch"), "x86_64");
    assert_int_equal(cpu->nchildren, 1); /* comment dropped */
    assert_int_equal(cpu->children[0]->line, 6);
    tt_xml_doc_free(d);

    /* CRLF line ends and a UTF-8 BOM */
    d = parse_ok("\xEF\xBB\xBF<system version=\"1\">\r\n  <cpu numaid=\"0\"/>\r\n</system>\r\n");
    assert_int_equal(d->root->children[0]->line, 2);
    tt_xml_doc_free(d);
}

static void test_escapes_and_text(void **state)
{
    tt_xml_doc *d;
    (void)state;
    d = parse_ok("<system name=\"a&amp;b &lt;&gt; &quot;&apos; &#65;&#x42;\">\n"
                 "  some text that is ignored\n"
                 "  <cpu/><![CDATA[ more ]]>\n"
                 "  <?pi ignored?>\n"
                 "</system>");
    assert_string_equal(tt_xml_get(d->root, "name"), "a&b <> \"' AB");
    assert_int_equal(d->root->nchildren, 1);
    assert_string_equal(d->root->children[0]->name, "cpu");
    tt_xml_doc_free(d);
}

static void test_plain_doctype_ok(void **state)
{
    tt_xml_doc *d;
    (void)state;
    d = parse_ok("<!DOCTYPE system>\n<system version=\"1\"/>\n");
    assert_string_equal(d->root->name, "system");
    tt_xml_doc_free(d);
}

static void test_parse_errors_one_line(void **state)
{
    const char *cases[][2] = {
        {"<system>\n<cpu>\n</system>\n", "t.xml:3: "},
        {"<system a=\"1\" a=\"2\"/>", "t.xml:1: "},
        {"<system>\n\n<cpu a=1/></system>", "t.xml:3: "},
        {"<system/>\n<second/>", "t.xml:2: "},
        {"<system>&undefined;</system>", "t.xml:1: "},
        {"<system a=\"&nope;\"/>", "t.xml:1: "},
        {"<system>\n<cpu a=\"x\"\n", "t.xml:"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_xml_doc *d = (tt_xml_doc *)1;
        tt_status s = tt_xml_read_buffer(cases[i][0], strlen(cases[i][0]), "t.xml", NULL, &d);
        const char *m = tt_error_message();
        if (s != TT_ERR_PARSE)
            fail_msg("case %zu: status %d (%s)", i, s, m);
        assert_null(d);
        if (strncmp(m, cases[i][1], strlen(cases[i][1])))
            fail_msg("case %zu: message '%s' does not start with '%s'", i, m, cases[i][1]);
        assert_null(strchr(m, '\n'));
        assert_true(strlen(m) > strlen(cases[i][1]) + 3);
    }
}

static void test_entity_references(void **state)
{
    const char *cases[] = {"<system>\n&undefined;</system>", "<system\n a=\"x&nope;\"/>",
                           "<!DOCTYPE system [\n %pe; ]><system/>", "<system a=\"&amp;&#x26;\">&lt;&#60;</system>"};
    tt_xml_doc *d = NULL;
    (void)state;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tt_xml_read_buffer(cases[i], strlen(cases[i]), "e.xml", NULL, &d), TT_ERR_PARSE);
        assert_null(d);
        assert_non_null(strstr(tt_error_message(), "e.xml:2: "));
        assert_non_null(strstr(tt_error_message(), "entity declarations are not allowed"));
    }
    assert_non_null(strstr(tt_error_message(), "'%pe;'"));
    /* predefined entities and character references are fine */
    assert_int_equal(tt_xml_read_buffer(cases[3], strlen(cases[3]), "e.xml", NULL, &d), TT_OK);
    assert_string_equal(tt_xml_get(d->root, "a"), "&&");
    tt_xml_doc_free(d);
}

static void test_limits(void **state)
{
    tt_xml_limits lim;
    tt_xml_doc *d = NULL;
    const char *three = "<a>\n<b>\n<c/>\n</b>\n</a>\n";
    (void)state;
    tt_xml_limits_default(&lim);
    assert_int_equal(lim.max_bytes, 16u << 20);
    assert_int_equal(lim.max_depth, 64);
    assert_int_equal(lim.max_nodes, 100000);

    lim.max_depth = 3;
    assert_int_equal(tt_xml_read_buffer(three, strlen(three), "t.xml", &lim, &d), TT_OK);
    tt_xml_doc_free(d);
    lim.max_depth = 2;
    assert_int_equal(tt_xml_read_buffer(three, strlen(three), "t.xml", &lim, &d), TT_ERR_LIMIT);
    assert_null(d);
    assert_non_null(strstr(tt_error_message(), "t.xml:3: "));
    assert_non_null(strstr(tt_error_message(), "<c>"));

    tt_xml_limits_default(&lim);
    lim.max_nodes = 3;
    assert_int_equal(tt_xml_read_buffer(three, strlen(three), "t.xml", &lim, &d), TT_OK);
    tt_xml_doc_free(d);
    lim.max_nodes = 2;
    assert_int_equal(tt_xml_read_buffer(three, strlen(three), "t.xml", &lim, &d), TT_ERR_LIMIT);
    assert_non_null(strstr(tt_error_message(), "t.xml:3: "));
    assert_non_null(strstr(tt_error_message(), "2 elements"));

    tt_xml_limits_default(&lim);
    lim.max_bytes = 10;
    assert_int_equal(tt_xml_read_buffer(three, strlen(three), "t.xml", &lim, &d), TT_ERR_LIMIT);
    assert_non_null(strstr(tt_error_message(), "t.xml"));
    lim.max_bytes = strlen(three);
    assert_int_equal(tt_xml_read_buffer(three, strlen(three), "t.xml", &lim, &d), TT_OK);
    tt_xml_doc_free(d);
}

static void test_missing_file(void **state)
{
    tt_xml_doc *d = NULL;
    (void)state;
    assert_int_equal(tt_xml_read_file("/nonexistent/dir/topo.xml", NULL, &d), TT_ERR_IO);
    assert_null(d);
    assert_non_null(strstr(tt_error_message(), "/nonexistent/dir/topo.xml"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nccl_fixture),
        cmocka_unit_test(test_prolog_tabs_quotes),
        cmocka_unit_test(test_escapes_and_text),
        cmocka_unit_test(test_plain_doctype_ok),
        cmocka_unit_test(test_parse_errors_one_line),
        cmocka_unit_test(test_entity_references),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
