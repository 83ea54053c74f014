/* test_topo_check.c - health findings (tt_topo_check) on the fake sysfs
 * machines and on hand-written native docs with every kind of fault. */
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

static tt_xml_doc *scan_fake(const char *name, const char *tweak)
{
    char path[512], cmd[2000];
    tt_scan_options o;
    tt_xml_doc *d = NULL;
    const char *r = getenv("TOPOTUNE_ROOT");
    snprintf(path, sizeof path, "%s/%s%s", g_tmp, name, tweak ? "-t" : "");
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && bash '%s/tests/fixtures/sysfs/make-fake-sysfs.sh' %s '%s'%s%s",
             path, r ? r : ".", name, path, tweak ? " && cd '" : "", tweak ? path : "");
    if (tweak) {
        strncat(cmd, "' && ", sizeof cmd - strlen(cmd) - 1);
        strncat(cmd, tweak, sizeof cmd - strlen(cmd) - 1);
    }
    if (system(cmd) != 0)
        fail_msg("cannot build fake machine: %s", cmd);
    tt_scan_options_default(&o);
    o.sysfs_root = path;
    if (tt_topo_scan(&o, &d) != TT_OK)
        fail_msg("scan: %s", tt_error_message());
    return d;
}

static int has(const tt_findings *f, const char *code, const char *where_part, tt_severity sev)
{
    int i;
    for (i = 0; i < f->n; i++)
        if (!strcmp(f->items[i].code, code) && f->items[i].severity == sev &&
            (!where_part || strstr(f->items[i].where, where_part)))
            return 1;
    return 0;
}

static void dump(const tt_findings *f)
{
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_findings_write_text(f, "t", &sb);
    if (sb.data)
        fprintf(stderr, "%s", sb.data);
    tt_strbuf_free(&sb);
}

static void test_pcie4(void **st)
{
    tt_xml_doc *d = scan_fake("pcie4", NULL);
    tt_findings f;
    (void)st;
    tt_findings_init(&f);
    assert_int_equal(tt_topo_check(d, &f), TT_OK);
    dump(&f);
    assert_true(has(&f, "pcie-downtrained", "0000:03:00.0", TT_SEV_WARN));
    assert_false(has(&f, "pcie-downtrained", "0000:01:00.0", TT_SEV_WARN));
    assert_true(has(&f, "pcie-slot-limited", "0000:41:00.0", TT_SEV_INFO));
    assert_false(has(&f, "gpu-nic-numa", NULL, TT_SEV_WARN));
    assert_false(has(&f, "no-numa", NULL, TT_SEV_WARN));
    assert_int_equal(tt_findings_max_severity(&f), TT_SEV_WARN);
    tt_findings_free(&f);
    tt_xml_doc_free(d);
}

static void test_hgx8_clean_then_port_down(void **st)
{
    tt_xml_doc *d = scan_fake("hgx8", NULL);
    tt_findings f;
    (void)st;
    tt_findings_init(&f);
    assert_int_equal(tt_topo_check(d, &f), TT_OK);
    dump(&f);
    assert_true(tt_findings_max_severity(&f) <= TT_SEV_INFO);
    tt_findings_free(&f);
    tt_xml_doc_free(d);

    d = scan_fake("hgx8", "echo '1: DOWN' > sys/class/infiniband/mlx5_7/ports/1/state");
    tt_findings_init(&f);
    assert_int_equal(tt_topo_check(d, &f), TT_OK);
    assert_true(has(&f, "ib-port-not-active", "mlx5_7", TT_SEV_ERROR));
    assert_false(has(&f, "ib-port-not-active", "mlx5_6", TT_SEV_ERROR));
    assert_int_equal(tt_findings_max_severity(&f), TT_SEV_ERROR);
    tt_findings_free(&f);
    tt_xml_doc_free(d);
}

static void test_vm_no_numa(void **st)
{
    tt_xml_doc *d = scan_fake("vm", NULL);
    tt_findings f;
    tt_strbuf sb;
    (void)st;
    tt_findings_init(&f);
    assert_int_equal(tt_topo_check(d, &f), TT_OK);
    assert_true(has(&f, "no-numa", NULL, TT_SEV_WARN));
    assert_true(has(&f, "scan-unknown", NULL, TT_SEV_INFO));
    tt_strbuf_init(&sb);
    assert_int_equal(tt_findings_write_json(&f, "vm", &sb), TT_OK);
    assert_non_null(strstr(sb.data, "\"no-numa\""));
    tt_strbuf_free(&sb);
    tt_findings_free(&f);
    tt_xml_doc_free(d);
}

static void test_nogpu_clean(void **st)
{
    tt_xml_doc *d = scan_fake("nogpu", NULL);
    tt_findings f;
    (void)st;
    tt_findings_init(&f);
    assert_int_equal(tt_topo_check(d, &f), TT_OK);
    dump(&f);
    assert_true(tt_findings_max_severity(&f) < TT_SEV_WARN);
    tt_findings_free(&f);
    tt_xml_doc_free(d);
}

static const char *faulty =
    "<system version=\"1\" tt_version=\"1\">\n"
    "  <cpu numaid=\"0\" affinity=\"0000ffff\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
    "    <pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">\n"
    "        <nvlink target=\"0000:05:00.0\" count=\"18\" tclass=\"0x068000\" down=\"0\"/>\n"
    "        <p2p target=\"0000:2a:00.0\" read=\"0\" write=\"1\" access=\"1\"/>\n"
    "      </gpu>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:2a:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"0\">\n"
    "        <nvlink target=\"0000:05:00.0\" count=\"16\" tclass=\"0x068000\" down=\"2\"/>\n"
    "        <p2p target=\"0000:18:00.0\" read=\"0\" write=\"1\" access=\"1\"/>\n"
    "      </gpu>\n"
    "    </pci>\n"
    "  </cpu>\n"
    "  <cpu numaid=\"1\" affinity=\"ffff0000\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
    "    <pci busid=\"0000:99:00.0\" class=\"0x020000\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <nic>\n"
    "        <net name=\"mlx5_0\" dev=\"0\" port=\"1\" speed=\"200000\" link_layer=\"Ethernet\" state=\"ACTIVE\" mtu=\"1024\" node_guid=\"0x1\" gdr=\"0\"/>\n"
    "        <net name=\"mlx5_1\" dev=\"1\" port=\"1\" speed=\"200000\" link_layer=\"InfiniBand\" state=\"INIT\" mtu=\"4096\" node_guid=\"0x2\" gdr=\"0\"/>\n"
    "      </nic>\n"
    "    </pci>\n"
    "  </cpu>\n"
    "</system>\n";

static void test_every_fault(void **st)
{
    tt_xml_doc *d = NULL;
    tt_findings f;
    int i, p2p = 0;
    (void)st;
    assert_int_equal(tt_xml_read_buffer(faulty, strlen(faulty), "faulty.xml", NULL, &d), TT_OK);
    tt_findings_init(&f);
    assert_int_equal(tt_topo_check(d, &f), TT_OK);
    dump(&f);
    assert_true(has(&f, "gpu-nic-numa", "0000:18:00.0", TT_SEV_WARN));
    assert_true(has(&f, "gpu-nic-numa", "0000:2a:00.0", TT_SEV_WARN));
    assert_true(has(&f, "nvlink-down", "0000:2a:00.0", TT_SEV_ERROR));
    assert_true(has(&f, "nvlink-unequal", "0000:2a:00.0", TT_SEV_WARN));
    assert_false(has(&f, "nvlink-unequal", "0000:18:00.0", TT_SEV_WARN));
    assert_true(has(&f, "ib-port-not-active", "mlx5_1", TT_SEV_ERROR));
    assert_true(has(&f, "mtu-small", "mlx5_0", TT_SEV_WARN));
    assert_false(has(&f, "mtu-small", "mlx5_1", TT_SEV_WARN));
    assert_true(has(&f, "gdr-unavailable", "system", TT_SEV_WARN));
    assert_true(has(&f, "gdr-unavailable", "0000:2a:00.0", TT_SEV_WARN));
    for (i = 0; i < f.n; i++)
        p2p += !strcmp(f.items[i].code, "p2p-unavailable");
    assert_int_equal(p2p, 1); /* one finding per pair */
    for (i = 0; i < f.n; i++)
        if (!strcmp(f.items[i].code, "nvlink-down"))
            assert_int_equal(f.items[i].line, 11);
    tt_findings_free(&f);
    tt_xml_doc_free(d);
}

static int setup(void **st)
{
    (void)st;
    snprintf(g_tmp, sizeof g_tmp, "%s/topotune-check.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_tmp))
        return -1;
    setenv("TOPOTUNE_DEBUG", "NONE", 1);
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
        cmocka_unit_test(test_pcie4),      cmocka_unit_test(test_hgx8_clean_then_port_down),
        cmocka_unit_test(test_vm_no_numa), cmocka_unit_test(test_nogpu_clean),
        cmocka_unit_test(test_every_fault),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
