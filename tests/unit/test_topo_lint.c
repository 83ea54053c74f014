/*
 * test_topo_lint.c - what the tools check of a document before they use it (topo_lint.c):
 * lint plus build, the <system> root check, the cluster root, vendor-file fusion from a path;
 * and the small helpers the front ends print with: findings per severity, the part names, a
 * host set from several files and how many of its hosts differ.
 */
#include "topo_test_util.h"

static void test_validate_build(void **state)
{
    (void)state;
    tt_xml_doc *doc = NULL;
    tt_topo *t = tu_load("hgx-h100-8gpu.xml", NULL, &doc);
    tt_findings f;
    tt_findings_init(&f);
    assert_int_equal(tt_topo_validate_build(doc, NULL, &f), TT_OK);
    assert_true(tt_findings_max_severity(&f) < TT_SEV_ERROR);
    tt_findings_free(&f);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
    /* a partial vendor file with a part: the builder's assumptions become findings */
    tt_topo_options o;
    tt_topo_options_default(&o);
    o.gpu_part = "H100-SXM";
    assert_int_equal(tt_xml_read_file(tu_fixture("vendor-partial.xml"), NULL, &doc), TT_OK);
    tt_findings_init(&f);
    assert_int_equal(tt_topo_validate_build(doc, &o, &f), TT_OK);
    assert_true(f.n > 0);
    tt_findings_free(&f);
    tt_xml_doc_free(doc);
}

static void test_require_system(void **state)
{
    (void)state;
    tt_xml_doc *doc = NULL;
    const char *x = "<cluster version=\"1\"><system version=\"1\"/></cluster>";
    assert_int_equal(tt_xml_read_buffer(x, strlen(x), "c.xml", NULL, &doc), TT_OK);
    assert_true(tt_topo_doc_is_cluster(doc));
    assert_int_equal(tt_topo_require_system(doc, "c.xml"), TT_ERR_PARSE);
    assert_non_null(strstr(tt_error_message(), "c.xml:1: root element is <cluster>, not <system>"));
    tt_xml_doc_free(doc);
    tt_topo *t = tu_load("pcie-4gpu.xml", NULL, &doc);
    assert_false(tt_topo_doc_is_cluster(doc));
    assert_int_equal(tt_topo_require_system(doc, "p.xml"), TT_OK);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_fuse_file(void **state)
{
    (void)state;
    tt_xml_doc *scan = NULL, *out = NULL;
    tt_topo *t = tu_load("hgx-h100-8gpu.xml", NULL, &scan);
    int matched = -1;
    assert_int_equal(tt_topo_fuse_file(tu_fixture("hgx-h100-8gpu.xml"), scan, &out, &matched), TT_OK);
    assert_non_null(out);
    assert_true(matched > 0);
    tt_xml_doc_free(out);
    out = NULL;
    assert_int_not_equal(tt_topo_fuse_file(tu_fixture("no-such-file.xml"), scan, &out, &matched), TT_OK);
    assert_null(out);
    tt_topo_free(t);
    tt_xml_doc_free(scan);
}

static void test_findings_count_and_parts(void **state)
{
    (void)state;
    tt_findings f;
    tt_findings_init(&f);
    assert_int_equal(tt_findings_count(&f, TT_SEV_WARN), 0);
    tt_findings_add(&f, TT_SEV_WARN, "a", 0, "", "one");
    tt_findings_add(&f, TT_SEV_ERROR, "b", 0, "", "two");
    tt_findings_add(&f, TT_SEV_WARN, "c", 0, "", "three");
    assert_int_equal(tt_findings_count(&f, TT_SEV_WARN), 2);
    assert_int_equal(tt_findings_count(&f, TT_SEV_ERROR), 1);
    assert_int_equal(tt_findings_count(&f, TT_SEV_INFO), 0);
    tt_findings_free(&f);
    char list[400];
    tt_gpu_part_names(list, sizeof list);
    assert_non_null(strstr(list, "H100-SXM"));
    assert_null(strstr(list, "H100-SXM, H100-SXM,")); /* each name once */
    char tiny[8];
    tt_gpu_part_names(tiny, sizeof tiny);
    assert_true(strlen(tiny) < sizeof tiny);
}

static void test_hostset_files(void **state)
{
    (void)state;
    static char p[3][1024];
    const char *names[] = {"hgx-h100-8gpu.xml", "hgx-h100-8gpu-roce.xml", "hgx-a100-8gpu.xml"};
    const char *files[3];
    for (int i = 0; i < 3; i++) files[i] = strcpy(p[i], tu_fixture(names[i]));
    tt_hostset hs;
    tt_findings d;
    tt_hostset_init(&hs);
    tt_findings_init(&d);
    if (tt_hostset_add_files(&hs, files, 3) != TT_OK) fail_msg("%s", tt_error_message());
    assert_int_equal(hs.n, 3);
    if (tt_hostset_compare(&hs, &d) != TT_OK) fail_msg("%s", tt_error_message());
    int ndiff = -1;
    assert_int_equal(tt_hostset_count_differing(&hs, &d, &ndiff), TT_OK);
    int flags[3], sum = 0;
    tt_hostset_differing(&hs, &d, flags);
    for (int i = 0; i < 3; i++) sum += flags[i];
    assert_int_equal(ndiff, sum);
    assert_true(ndiff >= 1);
    tt_findings_free(&d);
    tt_hostset_free(&hs);
    tt_hostset_init(&hs);
    files[1] = "/nonexistent/x.xml";
    assert_int_not_equal(tt_hostset_add_files(&hs, files, 3), TT_OK);
    tt_hostset_free(&hs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_build),
        cmocka_unit_test(test_require_system),
        cmocka_unit_test(test_fuse_file),
        cmocka_unit_test(test_findings_count_and_parts),
        cmocka_unit_test(test_hostset_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
