/*
 * test_tune_fabric.c - the network between the nodes: read off topologies of each kind (the
 * fixtures and small XML documents in NCCL's dialect), given with tt_cluster_overrides, and what
 * the default model does with it (a slower fabric, a slower small-size prediction); more NICs
 * asked than a file holds build what was asked for, fewer take one per PCIe switch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_topo.h"
#include "tt_tune.h"
#include "tt_xml.h"

typedef struct {
    tt_xml_doc *doc;
    tt_topo *topo;
} topo_fx;

static void load_file(topo_fx *f, const char *name)
{
    const char *root = getenv("TOPOTUNE_ROOT");
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", root && *root ? root : ".", name);
    memset(f, 0, sizeof(*f));
    if (tt_xml_read_file(path, NULL, &f->doc) != TT_OK) fail_msg("%s", tt_error_message());
    if (tt_topo_from_xml(f->doc, NULL, &f->topo) != TT_OK) fail_msg("%s", tt_error_message());
}

/* one GPU and one NIC port in NCCL's dialect: vendor, net name, gdr, maxconn, link layer */
static void load_nic_drv(topo_fx *f, const char *vendor, const char *name, int gdr, int maxconn, const char *ll,
                         const char *driver)
{
    char xml[2048], lla[128] = "";
    if (ll) snprintf(lla, sizeof lla, " link_layer=\"%s\"", ll);
    if (driver) snprintf(lla + strlen(lla), sizeof lla - strlen(lla), " driver=\"%s\"", driver);
    snprintf(xml, sizeof xml,
             "<system version=\"1\">\n"
             " <cpu numaid=\"0\" affinity=\"ff\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
             "  <pci busid=\"0000:18:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\" subsystem_vendor=\"0x10de\""
             " subsystem_device=\"0x16c1\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
             "   <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/>\n"
             "  </pci>\n"
             "  <pci busid=\"0000:19:00.0\" class=\"0x020000\" vendor=\"%s\" device=\"0x0001\" subsystem_vendor=\"%s\""
             " subsystem_device=\"0x0001\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
             "   <nic>\n"
             "    <net name=\"%s\" dev=\"0\" speed=\"100000\" port=\"1\" latency=\"0\" guid=\"0x1\" maxconn=\"%d\" gdr=\"%d\"%s/>\n"
             "   </nic>\n"
             "  </pci>\n"
             " </cpu>\n"
             "</system>\n",
             vendor, vendor, name, maxconn, gdr, lla);
    memset(f, 0, sizeof(*f));
    if (tt_xml_read_buffer(xml, strlen(xml), "nic.xml", NULL, &f->doc) != TT_OK) fail_msg("%s", tt_error_message());
    if (tt_topo_from_xml(f->doc, NULL, &f->topo) != TT_OK) fail_msg("%s", tt_error_message());
}

static void load_nic(topo_fx *f, const char *vendor, const char *name, int gdr, int maxconn, const char *ll)
{
    load_nic_drv(f, vendor, name, gdr, maxconn, ll, NULL);
}

static void unload(topo_fx *f)
{
    tt_topo_free(f->topo);
    tt_xml_doc_free(f->doc);
}

static void check_fabric(topo_fx *f, tt_fabric want, tt_fabric_origin origin, const char *why_has)
{
    tt_cluster c;
    assert_int_equal(tt_cluster_from_topo(f->topo, &c), TT_OK);
    if (c.fabric != want || c.fabric_origin != origin)
        fail_msg("fabric %s (%s: %s), wanted %s (%s)", tt_fabric_name(c.fabric), tt_fabric_origin_name(c.fabric_origin),
                 c.fabric_why, tt_fabric_name(want), tt_fabric_origin_name(origin));
    if (!strstr(c.fabric_why, why_has)) fail_msg("'%s' does not say '%s'", c.fabric_why, why_has);
}

static void test_detect_fixtures(void **state)
{
    (void)state;
    topo_fx f;
    /* NCCL's dialect does not record the link layer: a verbs device is taken as InfiniBand, said so */
    load_file(&f, "hgx-h100-8gpu.xml");
    check_fabric(&f, TT_FABRIC_IB, TT_FABRIC_ASSUMED, "taken as InfiniBand");
    check_fabric(&f, TT_FABRIC_IB, TT_FABRIC_ASSUMED, "8 of 8 ports");
    unload(&f);
    /* our link_layer extension says Ethernet: RoCE */
    load_file(&f, "hgx-h100-8gpu-roce.xml");
    check_fabric(&f, TT_FABRIC_ROCE, TT_FABRIC_DETECTED, "Ethernet link layer");
    unload(&f);
    /* a VM's NCCL dump: one virtio NIC without GPUDirect, NCCL's socket transport */
    load_file(&f, "nccl-dump-h100-vm.xml");
    check_fabric(&f, TT_FABRIC_SOCKET, TT_FABRIC_DETECTED, "socket");
    unload(&f);
    /* no NIC at all: assumed, and the message says why */
    load_file(&f, "nvl72-sm100.xml");
    check_fabric(&f, TT_FABRIC_IB, TT_FABRIC_ASSUMED, "no NET port");
    unload(&f);
}

static void test_detect_kinds(void **state)
{
    (void)state;
    topo_fx f;
    load_nic(&f, "0x15b3", "mlx5_0", 1, 131072, "InfiniBand");
    check_fabric(&f, TT_FABRIC_IB, TT_FABRIC_DETECTED, "link layer InfiniBand");
    unload(&f);
    load_nic(&f, "0x15b3", "mlx5_0", 1, 131072, "Ethernet");
    check_fabric(&f, TT_FABRIC_ROCE, TT_FABRIC_DETECTED, "RoCE");
    unload(&f);
    load_nic(&f, "0x14e4", "bnxt_re0", 1, 65536, NULL); /* an RDMA-over-Ethernet-only device */
    check_fabric(&f, TT_FABRIC_ROCE, TT_FABRIC_DETECTED, "RDMA-over-Ethernet");
    unload(&f);
    load_nic(&f, "0x1d0f", "ofi0", 1, 65536, NULL); /* AWS EFA: the Amazon PCI vendor alone tells it */
    check_fabric(&f, TT_FABRIC_EFA, TT_FABRIC_DETECTED, "Amazon");
    unload(&f);
    load_nic(&f, "0x0000", "rdmap16s27", 1, 65536, NULL); /* an EFA device name without vendor */
    check_fabric(&f, TT_FABRIC_EFA, TT_FABRIC_DETECTED, "EFA device name");
    unload(&f);
    load_nic(&f, "0x1ae0", "eth1", 1, 65536, NULL); /* Google gVNIC moving GPU memory: GPUDirect-TCPX */
    check_fabric(&f, TT_FABRIC_TCPX, TT_FABRIC_DETECTED, "GPUDirect-TCPX");
    unload(&f);
    load_nic(&f, "0x1ae0", "eth0", 0, 65536, NULL); /* the same NIC without GPUDirect: sockets */
    check_fabric(&f, TT_FABRIC_SOCKET, TT_FABRIC_DETECTED, "without GPUDirect");
    unload(&f);
    load_nic(&f, "0x8086", "ens5", 0, 65536, NULL);
    check_fabric(&f, TT_FABRIC_SOCKET, TT_FABRIC_DETECTED, "socket");
    unload(&f);
    /* the kernel driver a live scan records tells it whatever the device is called */
    load_nic_drv(&f, "0x0000", "dev0", 1, 65536, NULL, "efa");
    check_fabric(&f, TT_FABRIC_EFA, TT_FABRIC_DETECTED, "driver efa");
    unload(&f);
    load_nic_drv(&f, "0x0000", "dev0", 1, 65536, NULL, "gve");
    check_fabric(&f, TT_FABRIC_TCPX, TT_FABRIC_DETECTED, "driver gve");
    unload(&f);
    load_nic_drv(&f, "0x0000", "dev0", 0, 65536, NULL, "ena");
    check_fabric(&f, TT_FABRIC_SOCKET, TT_FABRIC_DETECTED, "driver ena");
    unload(&f);
}

static void test_parse_and_override(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        tt_fabric f;
    } ok[] = {{"ib", TT_FABRIC_IB},    {"InfiniBand", TT_FABRIC_IB}, {"roce", TT_FABRIC_ROCE}, {"EFA", TT_FABRIC_EFA},
              {"tcpx", TT_FABRIC_TCPX}, {"tcpxo", TT_FABRIC_TCPX},    {"socket", TT_FABRIC_SOCKET}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        tt_fabric f = TT_FABRIC_COUNT;
        assert_int_equal(tt_fabric_parse(ok[i].s, &f), TT_OK);
        assert_int_equal(f, ok[i].f);
    }
    tt_fabric f;
    assert_int_equal(tt_fabric_parse("omnipath", &f), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "'omnipath'"));
    assert_int_equal(tt_fabric_parse(NULL, &f), TT_ERR_INVALID);
    /* --fabric wins over what the file shows, and is said to be given */
    topo_fx fx;
    load_file(&fx, "hgx-h100-8gpu-roce.xml");
    tt_cluster_overrides ov = TT_CLUSTER_OVERRIDES_NONE;
    ov.fabric = TT_FABRIC_EFA;
    tt_cluster c;
    assert_int_equal(tt_cluster_for_topo(fx.topo, 2, &ov, &c), TT_OK);
    assert_int_equal(c.fabric, TT_FABRIC_EFA);
    assert_int_equal(c.fabric_origin, TT_FABRIC_GIVEN);
    unload(&fx);
}

static double small_time(const tt_topo *t, tt_fabric fab, int nodes)
{
    tt_cluster_overrides ov = TT_CLUSTER_OVERRIDES_NONE;
    ov.fabric = fab;
    tt_cluster c;
    assert_int_equal(tt_cluster_for_topo(t, nodes, &ov, &c), TT_OK);
    tt_tune_ctx *ctx = NULL;
    assert_int_equal(tt_tune_ctx_new(t, &c, TT_MODEL_TOPOTUNE, NULL, &ctx), TT_OK);
    tt_expect_row r;
    assert_int_equal(tt_expect_row_compute(ctx, TT_COLL_ALLREDUCE, 8, NULL, &r), TT_OK);
    tt_tune_ctx_free(ctx);
    return r.pred_us;
}

/* the fabric sets the multi-node latency floor (the 2-node small-size time is not one figure
 * for every network); one node does not depend on it */
static void test_fabric_latency(void **state)
{
    (void)state;
    topo_fx f;
    load_file(&f, "hgx-h100-8gpu.xml");
    double ib = small_time(f.topo, TT_FABRIC_IB, 2), roce = small_time(f.topo, TT_FABRIC_ROCE, 2);
    double efa = small_time(f.topo, TT_FABRIC_EFA, 2), tcpx = small_time(f.topo, TT_FABRIC_TCPX, 2);
    if (!(ib < efa && ib < tcpx && roce < efa && efa < tcpx))
        fail_msg("8 B on 2 nodes: ib %.1f roce %.1f efa %.1f tcpx %.1f us", ib, roce, efa, tcpx);
    assert_true(small_time(f.topo, TT_FABRIC_IB, 1) == small_time(f.topo, TT_FABRIC_EFA, 1));
    /* more nodes, deeper trees: the floor grows */
    assert_true(small_time(f.topo, TT_FABRIC_IB, 16) > ib);
    unload(&f);
}

static tt_tune_channels graphs(const tt_topo *t, int nodes, int nics, double gbps)
{
    tt_cluster_overrides ov = TT_CLUSTER_OVERRIDES_NONE;
    ov.nics_per_node = nics;
    ov.nic_gbps = gbps;
    tt_cluster c;
    assert_int_equal(tt_cluster_for_topo(t, nodes, &ov, &c), TT_OK);
    tt_tune_channels ch;
    assert_int_equal(tt_tune_channels_compute(t, &c, &ch), TT_OK);
    return ch;
}

/* -k above the file's NICs builds the NICs asked for next to the GPUs (p5: 32 x 100 Gb/s), never a
 * far path; -k below takes one NIC per PCIe switch (p4d: 4 NICs for 8 GPUs) */
static void test_nic_count(void **state)
{
    (void)state;
    topo_fx f;
    load_file(&f, "hgx-h100-8gpu.xml");
    tt_tune_channels ch = graphs(f.topo, 2, 32, 100);
    assert_true(ch.ring.found);
    assert_true(ch.ring.type_inter <= TT_PATH_PXB);
    assert_true(ch.node_net_bw > 390 && ch.node_net_bw <= 400.0 + 1e-9); /* 32 x 12.5 GB/s */
    ch = graphs(f.topo, 2, 16, 200);
    assert_true(ch.ring.type_inter <= TT_PATH_PXB);
    assert_true(ch.node_net_bw > 390);
    ch = graphs(f.topo, 2, 4, 100);
    assert_int_equal(ch.ring.nchannels, 4); /* one channel per NIC, every NIC near its GPUs */
    assert_true(ch.ring.type_inter <= TT_PATH_PXB);
    assert_true(ch.node_net_bw > 47 && ch.node_net_bw <= 50.0 + 1e-9);
    unload(&f);
    load_file(&f, "hgx-a100-8gpu.xml");
    ch = graphs(f.topo, 4, 16, 100);
    assert_true(ch.ring.type_inter <= TT_PATH_PXB);
    assert_true(ch.ring.nchannels * ch.ring.bw_inter >= 0.9 * ch.node_net_bw);
    unload(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect_fixtures), cmocka_unit_test(test_detect_kinds),
        cmocka_unit_test(test_parse_and_override), cmocka_unit_test(test_fabric_latency),
        cmocka_unit_test(test_nic_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
