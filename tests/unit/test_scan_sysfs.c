/* test_scan_sysfs.c - the live scan replayed on fake sysfs trees
 * (tests/fixtures/sysfs/make-fake-sysfs.sh): an 8-GPU NVSwitch server, a
 * 4-GPU PCIe box with a link trained at x8, a VM with a flat bus and
 * numa_node -1, a machine without GPU; plus bad roots and the live scan of
 * this machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topo_scan_internal.h"
#include "tt_topo.h"

static char g_tmp[256];

static const char *root_dir(void)
{
    const char *r = getenv("TOPOTUNE_ROOT");
    return r ? r : ".";
}

static const char *machine(const char *name)
{
    static char path[512];
    char cmd[1400];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    if (access(path, F_OK) != 0) {
        snprintf(cmd, sizeof cmd, "bash '%s/tests/fixtures/sysfs/make-fake-sysfs.sh' %s '%s'",
                 root_dir(), name, path);
        if (system(cmd) != 0)
            fail_msg("cannot build fake machine %s", name);
    }
    return path;
}

static tt_xml_doc *scan_fake(const char *name, tt_scan_report *rep)
{
    tt_scan_options o;
    tt_xml_doc *d = NULL;
    tt_scan_options_default(&o);
    o.sysfs_root = machine(name);
    if (tt_topo_scan_report(&o, &d, rep) != TT_OK)
        fail_msg("scan of %s failed: %s", name, tt_error_message());
    assert_non_null(d);
    return d;
}

static const char *attr(const tt_xml_node *n, const char *a)
{
    const char *v;
    assert_non_null(n);
    v = tt_xml_get(n, a);
    if (!v)
        fail_msg("<%s> has no attribute %s", n->name, a);
    return v;
}

static tt_xml_node *pci(tt_xml_doc *d, const char *busid)
{
    return tt_xml_find(d->root, "pci", "busid", busid);
}

static int count(const tt_xml_node *top, const char *name, const char *a, const char *v)
{
    const tt_xml_node *x;
    int n = 0;
    for (x = top; x; x = tt_xml_walk_next(top, x))
        if (!strcmp(x->name, name) && (!a || (tt_xml_get(x, a) && !strcmp(tt_xml_get(x, a), v))))
            n++;
    return n;
}

/* <unknown attr=a> directly under n */
static int has_unknown(const tt_xml_node *n, const char *a)
{
    tt_xml_node *u;
    for (u = tt_xml_first_child(n, "unknown"); u; u = tt_xml_next_sibling(u, "unknown"))
        if (!strcmp(tt_xml_get(u, "attr"), a))
            return 1;
    return 0;
}

static const tt_scan_probe *probe(const tt_scan_report *r, const char *name)
{
    int i;
    for (i = 0; i < r->nprobes; i++)
        if (!strcmp(r->probes[i].name, name))
            return &r->probes[i];
    fail_msg("no probe %s in report", name);
    return NULL;
}

static void test_hgx8_tree(void **st)
{
    tt_scan_report r;
    tt_xml_doc *d = scan_fake("hgx8", &r);
    tt_xml_node *cpu0, *cpu1, *g, *sw;
    const char *gpus[8] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:4c:00.0",
                           "0000:9a:00.0", "0000:ac:00.0", "0000:ba:00.0", "0000:cc:00.0"};
    int i;
    (void)st;

    assert_string_equal(attr(d->root, "version"), "1");
    assert_string_equal(attr(d->root, "hostname"), "fake-hgx8");
    assert_int_equal(count(d->root, "cpu", NULL, NULL), 2);
    cpu0 = tt_xml_find(d->root, "cpu", "numaid", "0");
    cpu1 = tt_xml_find(d->root, "cpu", "numaid", "1");
    assert_string_equal(attr(cpu0, "affinity"), "000000ff");
    assert_string_equal(attr(cpu1, "familyid"), "6");
    assert_string_equal(attr(cpu1, "modelid"), "143");
    assert_string_equal(attr(cpu1, "vendor"), "GenuineIntel");
    assert_string_equal(attr(cpu1, "arch"), "x86_64");

    /* 8 GPUs, each under its switch upstream port; root/downstream ports skipped */
    for (i = 0; i < 8; i++) {
        g = pci(d, gpus[i]);
        assert_non_null(g);
        assert_string_equal(attr(g, "class"), "0x030200");
        assert_string_equal(attr(g->parent, "class"), "0x060400");
        assert_string_equal(attr(g->parent->parent, "numaid"), i < 4 ? "0" : "1");
        assert_true(has_unknown(g, "gpu")); /* NVML/CUDA off on a fake root */
        assert_null(tt_xml_first_child(g, "gpu"));
    }
    assert_string_equal(attr(pci(d, "0000:9a:00.0"), "local_cpulist"), "8-15");
    assert_null(tt_xml_get(pci(d, "0000:9a:00.0"), "local_cpus"));
    sw = pci(d, "0000:15:00.0");
    assert_string_equal(attr(sw, "hostbridge"), "pci0000:14");
    assert_string_equal(attr(sw, "vendor"), "0x1000");
    assert_string_equal(attr(sw, "device"), "0xc030");
    assert_ptr_equal(pci(d, "0000:18:00.0")->parent, sw);
    assert_null(pci(d, "0000:14:01.0")); /* root port */
    assert_null(pci(d, "0000:16:00.0")); /* downstream port */
    assert_null(pci(d, "0000:02:00.0")); /* BMC VGA (ASPEED) */
    assert_null(pci(d, "0000:00:1d.0")); /* NVMe */
    /* children ordered by busid as NCCL writes them */
    assert_string_equal(attr(sw->children[0], "busid"), "0000:18:00.0");
    assert_string_equal(attr(sw->children[3], "busid"), "0000:2a:00.0");

    /* 4 NVSwitches behind their own switch, numa 0 */
    assert_int_equal(count(d->root, "pci", "class", "0x068000"), 4);
    assert_string_equal(attr(pci(d, "0000:05:00.0")->parent, "busid"), "0000:03:00.0");
    assert_string_equal(attr(pci(d, "0000:05:00.0"), "link_width"), "2");

    /* 8 IB NDR ports, one per NIC, GPUDirect through nvidia_peermem */
    assert_int_equal(count(d->root, "net", NULL, NULL), 8);
    for (i = 0; i < 8; i++) {
        char name[16], dev[8];
        tt_xml_node *n;
        snprintf(name, sizeof name, "mlx5_%d", i);
        snprintf(dev, sizeof dev, "%d", i);
        n = tt_xml_find(d->root, "net", "name", name);
        assert_non_null(n);
        assert_string_equal(attr(n, "dev"), dev);
        assert_string_equal(attr(n, "speed"), "400000");
        assert_string_equal(attr(n, "port"), "1");
        assert_string_equal(attr(n, "state"), "ACTIVE");
        assert_string_equal(attr(n, "link_layer"), "InfiniBand");
        assert_string_equal(attr(n, "gdr"), "1");
        assert_string_equal(attr(n, "gdr_via"), "nvidia_peermem");
        assert_true(has_unknown(n, "mtu")); /* needs libibverbs */
        assert_string_equal(n->parent->name, "nic");
        assert_string_equal(attr(n->parent->parent, "class"), "0x020700");
    }
    assert_string_equal(attr(tt_xml_find(d->root, "net", "name", "mlx5_0"), "guid"), "0xa088c20300f1e000");
    assert_string_equal(attr(tt_xml_find(d->root, "net", "name", "mlx5_0"), "ifname"), "ibp19s0");

    assert_int_equal(probe(&r, "sysfs")->state, TT_PROBE_OK);
    assert_int_equal(probe(&r, "gdr")->state, TT_PROBE_OK);
    assert_int_equal(probe(&r, "nvml")->state, TT_PROBE_OFF);
    assert_int_equal(probe(&r, "ibv")->state, TT_PROBE_OFF);
    assert_int_equal(r.nunknown, count(d->root, "unknown", NULL, NULL));
    tt_xml_doc_free(d);
    tt_scan_report_free(&r);
}

static void test_hgx8_nccl_dialect(void **st)
{
    tt_xml_doc *d = scan_fake("hgx8", NULL), *back = NULL;
    char *out = NULL, *out2 = NULL;
    size_t len, len2;
    (void)st;
    /* native: round trip is byte-stable */
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NATIVE, &out, &len), TT_OK);
    assert_int_equal(tt_xml_read_buffer(out, len, "scan.xml", NULL, &back), TT_OK);
    assert_int_equal(tt_xml_write_buffer(back, TT_XML_NATIVE, &out2, &len2), TT_OK);
    assert_string_equal(out, out2);
    free(out);
    free(out2);
    tt_xml_doc_free(back);
    /* NCCL: accepted within NCCL's limits, our extensions filtered out */
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NCCL, &out, &len), TT_OK);
    assert_null(strstr(out, "<unknown"));
    assert_null(strstr(out, "cur_link_width"));
    assert_non_null(strstr(out, "<pci busid=\"0000:18:00.0\" class=\"0x030200\""));
    free(out);
    tt_xml_doc_free(d);
}

static void test_pcie4_downtrained(void **st)
{
    tt_xml_doc *d = scan_fake("pcie4", NULL);
    tt_xml_node *g3 = pci(d, "0000:03:00.0"), *g1 = pci(d, "0000:01:00.0"), *nic, *cpu;
    (void)st;
    assert_int_equal(count(d->root, "pci", "class", "0x030000"), 4);
    /* NCCL's link_width is the maximum; ours records what the link trained at */
    assert_string_equal(attr(g3, "link_width"), "16");
    assert_string_equal(attr(g3, "max_link_width"), "16");
    assert_string_equal(attr(g3, "cur_link_width"), "8");
    assert_string_equal(attr(g3, "cur_link_speed"), "16.0 GT/s PCIe");
    assert_string_equal(attr(g1, "cur_link_width"), "16");
    /* GPUs on root ports hang from the cpu directly */
    cpu = tt_xml_find(d->root, "cpu", "numaid", "0");
    assert_ptr_equal(g1->parent, cpu);
    assert_string_equal(attr(g1, "hostbridge"), "pci0000:00");
    /* AMD family 25 -> NCCL's 175 */
    assert_string_equal(attr(cpu, "vendor"), "AuthenticAMD");
    assert_string_equal(attr(cpu, "familyid"), "175");
    /* a x16 NIC in a x8 slot: NCCL's min rule gives 8 */
    nic = pci(d, "0000:41:00.0");
    assert_string_equal(attr(nic, "link_width"), "8");
    assert_string_equal(attr(nic, "max_link_width"), "16");
    assert_string_equal(attr(tt_xml_find(d->root, "net", "name", "enp65s0f0"), "speed"), "25000");
    assert_string_equal(attr(tt_xml_find(d->root, "net", "name", "enp65s0f0"), "gdr"), "0");
    assert_string_equal(attr(tt_xml_find(d->root, "net", "name", "enp65s0f0"), "mtu"), "1500");
    tt_xml_doc_free(d);
}

static void test_vm_flat_numa_unknown(void **st)
{
    tt_xml_doc *d = scan_fake("vm", NULL);
    tt_xml_node *g = pci(d, "0000:00:06.0"), *cpu, *eth;
    (void)st;
    assert_non_null(g);
    cpu = g->parent;
    assert_string_equal(cpu->name, "cpu");
    assert_string_equal(attr(cpu, "numaid"), "-1");
    assert_null(tt_xml_get(cpu, "affinity"));
    assert_true(has_unknown(cpu, "affinity"));
    assert_true(has_unknown(cpu, "numaid"));
    assert_string_equal(attr(g, "numa_node"), "-1");
    /* on the root bus: no upstream port, the device's own maximum */
    assert_string_equal(attr(g, "link_width"), "16");
    assert_string_equal(attr(g, "link_speed"), "32.0 GT/s PCIe");
    assert_string_equal(attr(g, "hostbridge"), "pci0000:00");
    /* virtio NIC: under its virtio-net PCI function, speed unknown */
    eth = tt_xml_find(d->root, "net", "name", "eth0");
    assert_non_null(eth);
    assert_string_equal(attr(eth->parent->parent, "busid"), "0000:00:03.0");
    assert_null(tt_xml_get(eth, "speed"));
    assert_true(has_unknown(eth, "speed"));
    assert_true(has_unknown(eth->parent->parent, "link_width"));
    /* present but empty, as NCCL writes an unreadable value: NCCL loads the file */
    assert_string_equal(attr(eth->parent->parent, "link_width"), "");
    assert_string_equal(attr(eth->parent->parent, "link_speed"), "");
    assert_null(pci(d, "0000:00:01.0")); /* emulated VGA: not a CUDA GPU */
    /* NUMA node 0 is still reported, with its CPUs */
    assert_string_equal(attr(tt_xml_find(d->root, "cpu", "numaid", "0"), "affinity"), "0000000f");
    tt_xml_doc_free(d);
}

static void test_nogpu(void **st)
{
    tt_scan_report r;
    tt_xml_doc *d = scan_fake("nogpu", &r);
    tt_xml_node *n;
    (void)st;
    assert_int_equal(count(d->root, "cpu", NULL, NULL), 2);
    assert_int_equal(count(d->root, "gpu", NULL, NULL), 0);
    assert_int_equal(count(d->root, "unknown", "attr", "gpu"), 0);
    n = tt_xml_find(d->root, "net", "name", "ens1f0np0");
    assert_non_null(n);
    assert_string_equal(attr(n, "speed"), "100000");
    assert_string_equal(attr(n, "mtu"), "9000");
    assert_string_equal(attr(n, "state"), "up");
    /* the NIC's switch-less root port is skipped: pci under cpu 1 */
    assert_string_equal(attr(n->parent->parent->parent, "numaid"), "1");
    assert_null(tt_xml_find(d->root, "net", "name", "lo"));
    assert_int_equal(probe(&r, "sysfs")->state, TT_PROBE_OK);
    tt_xml_doc_free(d);
    tt_scan_report_free(&r);
}

/* the exclusion list: names from the probe table, unknown names refused */
static void test_exclude(void **st)
{
    tt_scan_options o;
    tt_scan_report r;
    tt_xml_doc *d = NULL;
    int i;
    (void)st;
    for (i = 0; tt_scan_probe_name(i); i++)
        ;
    assert_int_equal(i, scan_probe_count());
    /* the run order: every probe after the probes its `after` names; independent ones in table order */
    const char *want[] = {"sysfs", "gdr", "hwloc", "nvml", "cuda", "ibv"};
    for (i = 0; i < 6; i++) assert_string_equal(tt_scan_probe_name(i), want[i]);
    int order[16];
    assert_int_equal(scan_probe_order(order), TT_OK);
    for (i = 0; i < scan_probe_count(); i++)
        for (int j = i + 1; j < scan_probe_count(); j++) /* nothing later is one it needs */
            assert_null(strstr(scan_probe_table[order[i]].after, scan_probe_table[order[j]].name));
    tt_scan_options_default(&o);
    o.sysfs_root = machine("nogpu");
    o.exclude = " gdr ,sysfs";
    assert_int_equal(tt_topo_scan_report(&o, &d, &r), TT_OK);
    assert_int_equal(probe(&r, "sysfs")->state, TT_PROBE_OFF);
    assert_string_equal(probe(&r, "gdr")->note, "disabled by option");
    assert_int_equal(count(d->root, "cpu", NULL, NULL), 0);
    tt_xml_doc_free(d);
    tt_scan_report_free(&r);
    d = NULL;
    o.exclude = "sysfs,lspci";
    assert_int_equal(tt_topo_scan_report(&o, &d, &r), TT_ERR_INVALID);
    assert_null(d);
    assert_non_null(strstr(tt_error_message(), "unknown probe 'lspci' (valid: sysfs, gdr, hwloc, nvml, cuda, ibv)"));
}

static void test_bad_and_empty_roots(void **st)
{
    tt_scan_options o;
    tt_scan_report r;
    tt_xml_doc *d = NULL;
    char empty[600];
    (void)st;
    tt_scan_options_default(&o);
    o.sysfs_root = "/nonexistent/topotune-root";
    assert_int_equal(tt_topo_scan(&o, &d), TT_ERR_IO);
    assert_null(d);
    assert_non_null(strstr(tt_error_message(), "/nonexistent/topotune-root"));

    /* an empty root: no crash, no invention, everything recorded */
    snprintf(empty, sizeof empty, "%s/empty", g_tmp);
    mkdir(empty, 0755);
    o.sysfs_root = empty;
    assert_int_equal(tt_topo_scan_report(&o, &d, &r), TT_OK);
    assert_int_equal(count(d->root, "pci", NULL, NULL), 0);
    assert_int_equal(count(d->root, "cpu", NULL, NULL), 1);
    assert_int_equal(probe(&r, "sysfs")->state, TT_PROBE_FAILED);
    assert_true(has_unknown(d->root, "numa"));
    assert_null(tt_xml_get(tt_xml_first_child(d->root, "cpu"), "arch"));
    tt_xml_doc_free(d);
    tt_scan_report_free(&r);

    /* env variable selects the root when the option does not */
    setenv("TOPOTUNE_SYSFS_ROOT", machine("nogpu"), 1);
    o.sysfs_root = NULL;
    assert_int_equal(tt_topo_scan(&o, &d), TT_OK);
    assert_string_equal(attr(d->root, "hostname"), "fake-nogpu");
    unsetenv("TOPOTUNE_SYSFS_ROOT");
    tt_xml_doc_free(d);
}

static void test_arm_cpuinfo(void **st)
{
    char dir[600], cmd[1600];
    tt_scan_options o;
    tt_xml_doc *d = NULL;
    tt_xml_node *cpu;
    (void)st;
    snprintf(dir, sizeof dir, "%s/arm", g_tmp);
    snprintf(cmd, sizeof cmd,
             "bash '%s/tests/fixtures/sysfs/make-fake-sysfs.sh' nogpu '%s' && "
             "printf 'processor\\t: 0\\nBogoMIPS\\t: 2000.00\\nCPU implementer\\t: 0x41\\n"
             "CPU part\\t: 0xd4f\\n' > '%s/proc/cpuinfo'",
             root_dir(), dir, dir);
    assert_int_equal(system(cmd), 0);
    tt_scan_options_default(&o);
    o.sysfs_root = dir;
    assert_int_equal(tt_topo_scan(&o, &d), TT_OK);
    cpu = tt_xml_find(d->root, "cpu", "numaid", "1");
    assert_string_equal(attr(cpu, "arch"), "arm64");
    assert_null(tt_xml_get(cpu, "vendor")); /* NCCL has no vendor on ARM */
    assert_null(tt_xml_get(cpu, "familyid"));
    tt_xml_doc_free(d);
}

static void test_live_scan(void **st)
{
    tt_scan_report r;
    tt_xml_doc *d = NULL;
    tt_strbuf sb;
    (void)st;
    unsetenv("TOPOTUNE_SYSFS_ROOT");
    assert_int_equal(tt_topo_scan_report(NULL, &d, &r), TT_OK);
    assert_string_equal(attr(d->root, "tt_source"), "live");
    assert_true(count(d->root, "cpu", NULL, NULL) >= 1);
    assert_int_equal(r.nprobes, 6);
    if (probe(&r, "nvml")->state == TT_PROBE_UNAVAILABLE && probe(&r, "cuda")->state != TT_PROBE_OK)
        assert_int_equal(count(d->root, "gpu", NULL, NULL), 0);
    tt_strbuf_init(&sb);
    assert_int_equal(tt_scan_report_write_text(&r, &sb), TT_OK);
    assert_non_null(strstr(sb.data, "scan: sysfs"));
    tt_strbuf_free(&sb);
    tt_strbuf_init(&sb);
    assert_int_equal(tt_scan_report_write_json(&r, &sb), TT_OK);
    assert_non_null(strstr(sb.data, "\"name\": \"nvml\""));
    tt_strbuf_free(&sb);
    tt_scan_report_free(&r);
    {
        /* the same machine through hwloc alone (sysfs probe off): the tree
         * hwloc builds has the devices the sysfs walk found */
        tt_scan_options o;
        tt_xml_doc *h = NULL;
        const tt_xml_node *x;
        tt_scan_options_default(&o);
        o.exclude = "sysfs,nvml,cuda,ibv";
        assert_int_equal(tt_topo_scan_report(&o, &h, &r), TT_OK);
        assert_int_equal(probe(&r, "sysfs")->state, TT_PROBE_OFF);
        assert_true(probe(&r, "hwloc")->state == TT_PROBE_OK || probe(&r, "hwloc")->state == TT_PROBE_PARTIAL);
        assert_true(count(h->root, "cpu", NULL, NULL) >= 1);
        for (x = d->root; x; x = tt_xml_walk_next(d->root, x))
            if (!strcmp(x->name, "pci") && tt_xml_first_child(x, "nic"))
                assert_non_null(tt_xml_find(h->root, "pci", "busid", tt_xml_get(x, "busid")));
        tt_xml_doc_free(h);
        tt_scan_report_free(&r);
    }
    tt_xml_doc_free(d);
}

static int setup(void **st)
{
    (void)st;
    snprintf(g_tmp, sizeof g_tmp, "%s/topotune-scan.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
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
        cmocka_unit_test(test_hgx8_tree),
        cmocka_unit_test(test_hgx8_nccl_dialect),
        cmocka_unit_test(test_pcie4_downtrained),
        cmocka_unit_test(test_vm_flat_numa_unknown),
        cmocka_unit_test(test_nogpu),
        cmocka_unit_test(test_exclude),
        cmocka_unit_test(test_bad_and_empty_roots),
        cmocka_unit_test(test_arm_cpuinfo),
        cmocka_unit_test(test_live_scan),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
