/* test_scan_hwloc.c - the offline twin: an `lstopo --of xml` file of a
 * machine (tests/fixtures/hwloc/, made by lstopo on the fake sysfs trees)
 * gives the same XML shape as the sysfs replay of that machine; hgx8's
 * NVLinkBandwidth matrix becomes <nvlink>/<nvswitch> elements. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt_topo.h"

static char g_tmp[256];

static const char *root_dir(void)
{
    const char *r = getenv("TOPOTUNE_ROOT");
    return r ? r : ".";
}

static tt_xml_doc *scan_sysfs(const char *name)
{
    char path[512], cmd[1400];
    tt_scan_options o;
    tt_xml_doc *d = NULL;
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    if (access(path, F_OK) != 0) {
        snprintf(cmd, sizeof cmd, "bash '%s/tests/fixtures/sysfs/make-fake-sysfs.sh' %s '%s'",
                 root_dir(), name, path);
        if (system(cmd) != 0)
            fail_msg("cannot build fake machine %s", name);
    }
    tt_scan_options_default(&o);
    o.sysfs_root = path;
    if (tt_topo_scan(&o, &d) != TT_OK)
        fail_msg("sysfs scan of %s: %s", name, tt_error_message());
    return d;
}

static tt_xml_doc *scan_hwloc(const char *name, tt_scan_report *rep)
{
    char path[512];
    tt_scan_options o;
    tt_xml_doc *d = NULL;
    snprintf(path, sizeof path, "%s/tests/fixtures/hwloc/%s.xml", root_dir(), name);
    tt_scan_options_default(&o);
    o.hwloc_xml = path;
    if (tt_topo_scan_report(&o, &d, rep) != TT_OK)
        fail_msg("hwloc scan of %s: %s", name, tt_error_message());
    return d;
}

/* Attributes both sources know; a value present on one side must be equal
 * on the other (absent on both is fine, absent on one side is a mismatch
 * unless listed as hwloc-blind). */
static const char *keys[] = {"busid", "class", "vendor", "device", "subsystem_vendor",
                             "subsystem_device", "hostbridge", "numaid", "affinity", "arch",
                             "familyid", "modelid", "name", "port", "guid", "node_guid", "dev",
                             "ifname", NULL};

static int skip_child(const tt_xml_node *n)
{
    return !strcmp(n->name, "unknown") || !strcmp(n->name, "gpu") || !strcmp(n->name, "nvswitch");
}

static void same_shape(const tt_xml_node *a, const tt_xml_node *b, const char *ignore_attr)
{
    int i, j, k;
    if (strcmp(a->name, b->name))
        fail_msg("<%s> vs <%s>", a->name, b->name);
    for (k = 0; keys[k]; k++) {
        const char *va = tt_xml_get(a, keys[k]), *vb = tt_xml_get(b, keys[k]);
        if (ignore_attr && !strcmp(keys[k], ignore_attr))
            continue;
        if ((va == NULL) != (vb == NULL) || (va && strcmp(va, vb)))
            fail_msg("<%s busid=%s name=%s> attribute %s: sysfs '%s' vs hwloc '%s'", a->name,
                     tt_xml_get(a, "busid") ? tt_xml_get(a, "busid") : "-",
                     tt_xml_get(a, "name") ? tt_xml_get(a, "name") : "-", keys[k], va ? va : "(none)",
                     vb ? vb : "(none)");
    }
    for (i = 0, j = 0;; i++, j++) {
        while (i < a->nchildren && skip_child(a->children[i]))
            i++;
        while (j < b->nchildren && skip_child(b->children[j]))
            j++;
        if (i >= a->nchildren || j >= b->nchildren) {
            if (i < a->nchildren || j < b->nchildren)
                fail_msg("<%s %s>: child count differs (sysfs has %s)", a->name,
                         tt_xml_get(a, "busid") ? tt_xml_get(a, "busid") : "", i < a->nchildren ? "more" : "fewer");
            return;
        }
        same_shape(a->children[i], b->children[j], ignore_attr);
    }
}

static void twin(const char *name)
{
    tt_xml_doc *s = scan_sysfs(name), *h = scan_hwloc(name, NULL);
    same_shape(s->root, h->root, NULL);
    assert_string_equal(tt_xml_get(h->root, "hostname"), tt_xml_get(s->root, "hostname"));
    tt_xml_doc_free(s);
    tt_xml_doc_free(h);
}

static void test_twin_pcie4(void **st) { (void)st; twin("pcie4"); }
static void test_twin_nogpu(void **st) { (void)st; twin("nogpu"); }

static void test_twin_hgx8(void **st)
{
    tt_scan_report r;
    tt_xml_doc *s = scan_sysfs("hgx8"), *h = scan_hwloc("hgx8", &r);
    (void)st;
    same_shape(s->root, h->root, NULL);
    /* hwloc keeps no link speeds: unknown, never invented */
    assert_string_equal(tt_xml_get(tt_xml_find(h->root, "pci", "busid", "0000:18:00.0"), "link_speed"), "");
    assert_non_null(tt_xml_find(h->root, "unknown", "attr", "link_speed"));
    assert_string_equal(r.probes[0].name, "hwloc");
    assert_int_equal(r.probes[0].state, TT_PROBE_PARTIAL);
    tt_xml_doc_free(s);
    tt_xml_doc_free(h);
    tt_scan_report_free(&r);
}

static void test_hgx8_nvlinks(void **st)
{
    tt_xml_doc *h = scan_hwloc("hgx8", NULL);
    const char *gpus[8] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:4c:00.0",
                           "0000:9a:00.0", "0000:ac:00.0", "0000:ba:00.0", "0000:cc:00.0"};
    const char *sw[4] = {"0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"};
    const char *cnt[4] = {"4", "5", "5", "4"}, *links[4] = {"32", "40", "40", "32"};
    int i, k, n;
    tt_xml_node *x;
    (void)st;
    for (i = 0; i < 8; i++) {
        tt_xml_node *g = tt_xml_first_child(tt_xml_find(h->root, "pci", "busid", gpus[i]), "gpu");
        char dev[4];
        assert_non_null(g);
        snprintf(dev, sizeof dev, "%d", i);
        assert_string_equal(tt_xml_get(g, "dev"), dev);
        assert_string_equal(tt_xml_get(g, "name"), "NVIDIA H100 80GB HBM3");
        assert_non_null(tt_xml_find(g, "unknown", "attr", "sm"));
        for (n = 0, x = tt_xml_first_child(g, "nvlink"); x; x = tt_xml_next_sibling(x, "nvlink"))
            n++;
        assert_int_equal(n, 4);
        for (k = 0; k < 4; k++) {
            x = tt_xml_find(g, "nvlink", "target", sw[k]);
            assert_non_null(x);
            assert_string_equal(tt_xml_get(x, "count"), cnt[k]);
            assert_string_equal(tt_xml_get(x, "tclass"), "0x068000");
        }
    }
    for (k = 0; k < 4; k++) {
        x = tt_xml_find(h->root, "nvswitch", "busid", sw[k]);
        assert_non_null(x);
        assert_string_equal(tt_xml_get(x, "visible"), "1");
        assert_string_equal(tt_xml_get(x, "links"), links[k]);
    }
    /* how count was derived is recorded */
    x = tt_xml_find(h->root, "unknown", "attr", "nvlink.count");
    assert_non_null(x);
    assert_non_null(strstr(tt_xml_get(x, "reason"), "25000"));
    tt_xml_doc_free(h);
}

static void test_twin_vm_numa(void **st)
{
    /* hwloc cannot say numa_node -1: with one NUMA node the devices hang
     * from node 0; everything else matches */
    tt_xml_doc *s = scan_sysfs("vm"), *h = scan_hwloc("vm", NULL);
    tt_xml_node *sg = tt_xml_find(s->root, "pci", "busid", "0000:00:06.0");
    tt_xml_node *hg = tt_xml_find(h->root, "pci", "busid", "0000:00:06.0");
    (void)st;
    assert_string_equal(tt_xml_get(sg->parent, "numaid"), "-1");
    assert_string_equal(tt_xml_get(hg->parent, "numaid"), "0");
    same_shape(sg, hg, NULL);
    same_shape(tt_xml_find(s->root, "pci", "busid", "0000:00:03.0"),
               tt_xml_find(h->root, "pci", "busid", "0000:00:03.0"), NULL);
    assert_int_equal(sg->parent->nchildren - 2, hg->parent->nchildren); /* sysfs: + 2 unknowns */
    assert_non_null(tt_xml_find(h->root, "unknown", "attr", "numa_node"));
    tt_xml_doc_free(s);
    tt_xml_doc_free(h);
}

static void test_bad_hwloc_xml(void **st)
{
    char bad[600];
    FILE *f;
    tt_scan_options o;
    tt_xml_doc *d = NULL;
    (void)st;
    snprintf(bad, sizeof bad, "%s/bad.xml", g_tmp);
    f = fopen(bad, "w");
    assert_non_null(f);
    fputs("<topology><object type=\"Machine\"", f);
    fclose(f);
    tt_scan_options_default(&o);
    o.hwloc_xml = bad;
    assert_int_not_equal(tt_topo_scan(&o, &d), TT_OK);
    assert_null(d);
    assert_non_null(strstr(tt_error_message(), "bad.xml"));
    o.hwloc_xml = "/nonexistent/lstopo.xml";
    assert_int_equal(tt_topo_scan(&o, &d), TT_ERR_IO);
    assert_non_null(strstr(tt_error_message(), "/nonexistent/lstopo.xml"));
}

static int setup(void **st)
{
    (void)st;
    snprintf(g_tmp, sizeof g_tmp, "%s/topotune-hwloc.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_tmp))
        return -1;
    setenv("TOPOTUNE_DEBUG", "NONE", 1);
    setenv("HWLOC_XML_VERBOSE", "0", 1);
    tt_log_reinit();
    return 0;
}

static int teardown(void **st)
{
    char cmd[400];
    (void)st;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twin_pcie4),   cmocka_unit_test(test_twin_nogpu),
        cmocka_unit_test(test_twin_hgx8),    cmocka_unit_test(test_hgx8_nvlinks),
        cmocka_unit_test(test_twin_vm_numa), cmocka_unit_test(test_bad_hwloc_xml),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
