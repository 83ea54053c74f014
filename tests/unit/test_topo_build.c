/* test_topo_build.c - topology XML -> typed graph: fixtures, fallbacks, malformed input. */
#include "topo_test_util.h"

static int count_links(const tt_topo *t, int a, tt_link_type type)
{
    int c = 0;
    for (int i = 0; i < t->nodes[a].nlinks; i++)
        c += t->nodes[a].links[i].type == type;
    return c;
}

static const tt_link *link_to(const tt_topo *t, int a, int b, tt_link_type type)
{
    for (int i = 0; i < t->nodes[a].nlinks; i++)
        if (t->nodes[a].links[i].peer == b && t->nodes[a].links[i].type == type)
            return &t->nodes[a].links[i];
    return NULL;
}

static void test_hgx_graph(void **state)
{
    tt_xml_doc *doc;
    tt_topo *t = tu_load("hgx-h100-8gpu.xml", NULL, &doc);
    assert_int_equal(t->ntype[TT_NODE_GPU], 8);
    assert_int_equal(t->ntype[TT_NODE_NVS], 1);
    assert_int_equal(t->ntype[TT_NODE_NET], 8);
    assert_int_equal(t->ntype[TT_NODE_NIC], 8);
    assert_int_equal(t->ntype[TT_NODE_CPU], 2);
    assert_int_equal(t->ntype[TT_NODE_PCI], 4);
    int nvs = tu_node(t, TT_NODE_NVS, 0);
    for (int g = 0; g < 8; g++) {
        int gi = tu_node(t, TT_NODE_GPU, g);
        const tt_link *l = link_to(t, gi, nvs, TT_LINK_NVL);
        assert_non_null(l);
        assert_bw(l->bw, 370.8); /* 4+5+5+4 = 18 links x 20.6 */
        assert_non_null(link_to(t, nvs, gi, TT_LINK_NVL));
        assert_int_equal(t->nodes[gi].u.gpu.dev, g);
        assert_int_equal(t->nodes[gi].u.gpu.sm, 90);
        assert_int_equal(t->nodes[gi].u.gpu.gdr, 1);
        assert_int_equal(count_links(t, gi, TT_LINK_PCI), 1);
    }
    int c0 = tu_node(t, TT_NODE_CPU, 0), c1 = tu_node(t, TT_NODE_CPU, 1);
    const tt_link *sys = link_to(t, c0, c1, TT_LINK_SYS);
    assert_non_null(sys);
    assert_bw(sys->bw, 22.0); /* Sapphire Rapids */
    assert_non_null(link_to(t, c1, c0, TT_LINK_SYS));
    assert_int_equal(t->nodes[c0].u.cpu.numaid, 0);
    assert_int_equal(t->nodes[c1].u.cpu.model, 143);
    assert_string_equal(t->nodes[c0].u.cpu.vendor, "GenuineIntel");
    assert_true(strlen(t->nodes[c1].u.cpu.affinity) > 0);
    int n0 = tu_net(t, "mlx5_0");
    assert_bw(t->nodes[n0].u.net.speed_mbps, 400000);
    assert_int_equal(t->nodes[n0].u.net.gdr, 1);
    assert_true(t->nodes[n0].u.net.guid != 0);
    assert_int_equal(t->nodes[n0].nlinks, 1);
    assert_bw(t->nodes[n0].links[0].bw, 50.0);
    /* lookups */
    int g0 = tu_node(t, TT_NODE_GPU, 0);
    assert_int_equal(tt_topo_find_busid(t, "0000:0C:00.0"), g0);
    assert_int_equal(tt_topo_find_busid(t, "0c:00.0"), g0);
    assert_int_equal(tt_topo_find_busid(t, "0000:77:00.0"), -1);
    assert_int_equal(tt_topo_find_net(t, "mlx5_9"), -1);
    assert_int_equal(tt_topo_node_index(t, TT_NODE_GPU, 8), -1);
    assert_int_equal(tt_topo_local_cpu(t, g0), c0);
    assert_int_equal(tt_topo_local_cpu(t, tu_node(t, TT_NODE_GPU, 7)), c1);
    assert_int_equal(tt_topo_local_cpu(t, c1), c1);
    assert_int_equal(tt_topo_local_cpu(t, -1), -1);
    assert_ptr_equal(t->nodes[g0].xml->name, t->nodes[g0].xml->name);
    assert_true(t->nodes[g0].line > 0);
    /* PCIe Gen5 x16 */
    const tt_link *pl = &t->nodes[g0].links[0];
    assert_int_equal(pl->type, TT_LINK_PCI);
    assert_bw(pl->bw, 48.0);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_vendor_partial(void **state)
{
    tt_xml_doc *doc;
    tt_topo *t = tu_load("vendor-partial.xml", NULL, &doc);
    assert_int_equal(t->ntype[TT_NODE_GPU], 8);
    assert_int_equal(t->ntype[TT_NODE_NIC], 4);
    /* issue #19: one assumed port per NIC known by PCI class only, each with its finding;
     * no device ids, no part named: the GPU interconnect is unknown (one warning) */
    assert_int_equal(t->ntype[TT_NODE_NET], 4);
    assert_int_equal(t->ntype[TT_NODE_PCI], 4);
    assert_int_equal(t->gpu_fabric_unknown, 8);
    int ninf = 0, nunk = 0;
    for (int i = 0; i < t->assumed.n; i++) {
        ninf += !strcmp(t->assumed.items[i].code, "inferred-net");
        nunk += !strcmp(t->assumed.items[i].code, "gpu-interconnect-unknown");
    }
    assert_int_equal(ninf, 4);
    assert_int_equal(nunk, 1);
    for (int g = 0; g < 8; g++) {
        const tt_node *n = &t->nodes[tu_node(t, TT_NODE_GPU, g)];
        assert_int_equal(n->u.gpu.sm, 0);
        assert_int_equal(n->u.gpu.dev, -1);
        assert_int_equal(n->u.gpu.gdr, -1);
    }
    /* fake switch bus id kept as a PCI node */
    int sw = tt_topo_find_busid(t, "ffff:ff:01.0");
    assert_true(sw >= 0);
    assert_int_equal(t->nodes[sw].type, TT_NODE_PCI);
    /* "16 GT/s" x16 = Gen4 24 GB/s; empty speed and width -> Gen3 x16 = 12 */
    int g0 = tt_topo_find_busid(t, "0001:00:00.0");
    int g7 = tt_topo_find_busid(t, "000e:00:00.0");
    assert_bw(t->nodes[g0].links[0].bw, 24.0);
    assert_bw(t->nodes[g7].links[0].bw, 12.0);
    /* the IB HCA became a NIC */
    assert_int_equal(t->nodes[tt_topo_find_busid(t, "0101:00:00.0")].type, TT_NODE_NIC);
    /* AMD: inter-socket 16 GB/s */
    int c0 = tu_node(t, TT_NODE_CPU, 0), c1 = tu_node(t, TT_NODE_CPU, 1);
    assert_bw(link_to(t, c0, c1, TT_LINK_SYS)->bw, 16.0);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_vm_dump(void **state)
{
    tt_xml_doc *doc;
    tt_topo *t = tu_load("nccl-dump-h100-vm.xml", NULL, &doc);
    assert_int_equal(t->ntype[TT_NODE_GPU], 1);
    assert_int_equal(t->ntype[TT_NODE_CPU], 1);
    assert_int_equal(t->ntype[TT_NODE_NIC], 1);
    int c = tu_node(t, TT_NODE_CPU, 0), g = tu_node(t, TT_NODE_GPU, 0);
    int e = tu_net(t, "eth0");
    assert_int_equal(t->nodes[c].u.cpu.numaid, -1);
    assert_int_equal(t->nodes[e].u.net.gdr, 0);
    assert_bw(t->nodes[e].u.net.speed_mbps, 10000);
    /* link_width 0 -> x16 fallback with the given Gen5 speed */
    assert_bw(link_to(t, g, c, TT_LINK_PCI)->bw, 48.0);
    /* the non-PCI NIC hangs off the CPU at LOC bandwidth */
    int nic = tu_node(t, TT_NODE_NIC, 0);
    assert_string_equal(t->nodes[nic].busid, "");
    assert_bw(link_to(t, nic, c, TT_LINK_PCI)->bw, TT_LOC_BW);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_xgmi(void **state)
{
    tt_xml_doc *doc;
    tt_topo *t = tu_load("rccl-xgmi-4gpu.xml", NULL, &doc);
    assert_int_equal(t->ntype[TT_NODE_GPU], 4);
    assert_int_equal(t->ntype[TT_NODE_NVS], 0);
    int g0 = tu_node(t, TT_NODE_GPU, 0), g1 = tu_node(t, TT_NODE_GPU, 1);
    int g2 = tu_node(t, TT_NODE_GPU, 2);
    const tt_link *l = link_to(t, g0, g1, TT_LINK_NVL);
    assert_non_null(l);
    assert_int_equal(l->xgmi, 1);
    /* each side lists the other: counted once per direction, not twice */
    assert_bw(l->bw, 2 * tt_xgmi_bw_per_link());
    assert_bw(link_to(t, g1, g0, TT_LINK_NVL)->bw, 2 * tt_xgmi_bw_per_link());
    assert_bw(link_to(t, g0, g2, TT_LINK_NVL)->bw, tt_xgmi_bw_per_link());
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

/* ---------- malformed input ---------- */

static void expect_error(const char *text, tt_status want, const char *const *needles)
{
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    tt_status st = tu_build_text(text, NULL, &t, &doc);
    if (st != want)
        fail_msg("status %s, expected %s (%s)", tt_status_name(st), tt_status_name(want),
                 tt_error_message());
    assert_null(t);
    for (int i = 0; needles[i]; i++)
        if (!strstr(tt_error_message(), needles[i]))
            fail_msg("message '%s' lacks '%s'", tt_error_message(), needles[i]);
    tt_xml_doc_free(doc);
}

#define GPU_PCI(bus, body)                                                                   \
    "<pci busid=\"" bus "\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">" \
    "<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">" body "</gpu></pci>\n"

static void test_malformed(void **state)
{
    expect_error("<system version=\"1\">\n<cpu numaid=\"zero\" arch=\"x86_64\"/>\n</system>\n",
                 TT_ERR_PARSE,
                 (const char *const[]){"t.xml:2:", "<cpu>", "'numaid'", "zero", NULL});
    expect_error("<system version=\"1\">\n<cpu numaid=\"0\">\n"
                 GPU_PCI("0000:01:00.0", "<nvlink target=\"0000:02:00.0\" count=\"2\" "
                         "tclass=\"0x030200\"/>") "</cpu>\n</system>\n",
                 TT_ERR_INVALID,
                 (const char *const[]){"t.xml:3:", "<nvlink>", "'target'", "0000:02:00.0", NULL});
    expect_error("<system version=\"1\">\n<cpu numaid=\"0\">\n"
                 "<pci busid=\"0000:01:00.0\" class=\"0x060400\"/>\n"
                 "<pci busid=\"0000:01:00.0\" class=\"0x020000\"/>\n</cpu>\n</system>\n",
                 TT_ERR_INVALID,
                 (const char *const[]){"t.xml:4:", "'busid'", "duplicate", "line 3", NULL});
    expect_error("<system version=\"1\">\n<cpu numaid=\"0\">\n"
                 GPU_PCI("0000:01:00.0", "<nvlink target=\"0000:e1:00.0\" count=\"-3\" "
                         "tclass=\"0x068000\"/>") "</cpu>\n</system>\n",
                 TT_ERR_INVALID, (const char *const[]){"t.xml:3:", "'count'", "-3", NULL});
    expect_error("<system version=\"1\">\n<cpu numaid=\"0\">\n"
                 "<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_width=\"x16\"/>\n"
                 "</cpu>\n</system>\n",
                 TT_ERR_PARSE, (const char *const[]){"t.xml:3:", "<pci>", "'link_width'", NULL});
    expect_error("<system version=\"1\">\n<cpu numaid=\"0\">\n"
                 "<pci busid=\"0000:01:00.0\" class=\"GPU\"/>\n</cpu>\n</system>\n",
                 TT_ERR_PARSE, (const char *const[]){"t.xml:3:", "'class'", NULL});
    expect_error("<system version=\"1\">\n<cpu numaid=\"0\">\n"
                 "<pci busid=\"0000:01:00.0\" class=\"0x020000\"><nic><net name=\"ib0\" dev=\"0\" "
                 "speed=\"fast\"/></nic></pci>\n</cpu>\n</system>\n",
                 TT_ERR_PARSE, (const char *const[]){"t.xml:3:", "<net>", "'speed'", NULL});
    expect_error("<system version=\"1\">\n<cpu numaid=\"0\">\n"
                 "<pci busid=\"bus one\" class=\"0x060400\"/>\n</cpu>\n</system>\n",
                 TT_ERR_PARSE, (const char *const[]){"t.xml:3:", "'busid'", "bus one", NULL});
    /* an <nvlink> to the GPU itself is read as NCCL reads it, with a warning (#19):
     * test_topo_amd.c test_nvlink_self */
    expect_error("<system version=\"1\">\n<cpu numaid=\"0\">\n"
                 GPU_PCI("0000:01:00.0", "<c2c bw=\"-5\" count=\"2\"/>") "</cpu>\n</system>\n",
                 TT_ERR_INVALID, (const char *const[]){"t.xml:3:", "<c2c>", "'bw'", NULL});
    expect_error("<topology/>\n", TT_ERR_INVALID, (const char *const[]){"<topology>", NULL});
    expect_error("<system version=\"one\"/>\n", TT_ERR_PARSE,
                 (const char *const[]){"'version'", NULL});
    expect_error("<system><cpu host_hash=\"0xnothex\" numaid=\"0\"/></system>\n", TT_ERR_PARSE,
                 (const char *const[]){"'host_hash'", NULL});
}

/* Elements in unexpected places are ignored, never a crash. */
static void test_odd_shapes(void **state)
{
    static const char *const texts[] = {
        "<system/>",
        "<system version=\"1\"><nvlink target=\"0000:01:00.0\" count=\"2\"/><pci busid=\"0000:01:00.0\"/>"
        "<net name=\"x\"/><gpu dev=\"0\"/></system>",
        "<system><cpu><nvlink count=\"4\"/><gpu sm=\"90\"/><net name=\"a\"/><cpu numaid=\"3\"/></cpu></system>",
        "<system><cpu numaid=\"0\"><pci><pci><pci/></pci></pci></cpu></system>",
        "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" class=\"0x030200\"><net name=\"n\"/>"
        "<pci busid=\"0000:02:00.0\"/><nic/></pci></cpu></system>",
        "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" class=\"0x020000\"><gpu sm=\"80\"/></pci>"
        "</cpu></system>",
        "<system><cpu numaid=\"0\"><nic><net/><net name=\"e1\"/><pci busid=\"0000:03:00.0\"/></nic>"
        "</cpu><cpu numaid=\"0\"/></system>",
        "<system><cpu numaid=\"0\"><pci busid=\"0000:05:00.0\" class=\"0x068000\"><pci busid=\"0000:06:00.0\"/>"
        "</pci><pci busid=\"0000:07:00.0\" class=\"0x030200\"><gpu><nvlink count=\"0\"/><nvlink/>"
        "<c2c/><xgmi count=\"0\"/></gpu></pci><pci busid=\"0000:08:00.0\"><pcilink target=\"0000:99:00.0\"/>"
        "<pcilink/></pci></cpu></system>",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        tt_xml_doc *doc = NULL;
        tt_topo *t = NULL;
        tt_status st = tu_build_text(texts[i], NULL, &t, &doc);
        if (st != TT_OK)
            fail_msg("case %zu: %s", i, tt_error_message());
        for (int a = 0; a < t->nnodes; a++)
            for (int b = 0; b < t->nnodes; b++) {
                const tt_path *p = tt_topo_path(t, a, b);
                assert_non_null(p);
                if (p->nhops >= 0) {
                    assert_int_equal(p->route[0], a);
                    assert_int_equal(p->route[p->nhops], b);
                }
            }
        tt_topo_free(t);
        tt_xml_doc_free(doc);
    }
    /* a <pci> with both a <gpu> and a <nic> is contradictory */
    {
        tt_xml_doc *doc = NULL;
        tt_topo *t = NULL;
        assert_int_equal(tu_build_text("<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\"><gpu/><nic/>"
                                       "</pci></cpu></system>", NULL, &t, &doc), TT_ERR_INVALID);
        tt_xml_doc_free(doc);
    }
    /* the shape with a repeated <cpu numaid=0> merged into one CPU node */
    {
        tt_xml_doc *doc = NULL;
        tt_topo *t = NULL;
        assert_int_equal(tu_build_text(texts[6], NULL, &t, &doc), TT_OK);
        assert_int_equal(t->ntype[TT_NODE_CPU], 1);
        assert_int_equal(t->ntype[TT_NODE_NET], 2);
        tt_topo_free(t);
        tt_xml_doc_free(doc);
    }
    assert_int_equal(tt_topo_from_xml(NULL, NULL, NULL), TT_ERR_INVALID);
    tt_topo_free(NULL);
}

static void test_limits(void **state)
{
    tt_strbuf sb;
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    tt_strbuf_init(&sb);
    tt_strbuf_append(&sb, "<system><cpu numaid=\"0\">\n");
    for (int i = 0; i <= TT_TOPO_MAX_TYPE_NODES; i++)
        tt_strbuf_printf(&sb, "<pci busid=\"%04x:%02x:00.0\" class=\"0x030200\"/>\n", i >> 8, i & 0xff);
    tt_strbuf_append(&sb, "</cpu></system>\n");
    assert_int_equal(tt_strbuf_status(&sb), TT_OK);
    assert_int_equal(tu_build_text(sb.data, NULL, &t, &doc), TT_ERR_LIMIT);
    assert_null(t);
    assert_non_null(strstr(tt_error_message(), "4096"));
    assert_non_null(strstr(tt_error_message(), "t.xml:"));
    tt_xml_doc_free(doc);
    tt_strbuf_free(&sb);

    doc = NULL;
    assert_int_equal(tu_build_text("<system><cpu numaid=\"0\">" GPU_PCI("0000:01:00.0",
                     "<nvlink count=\"100000\"/>") "</cpu></system>", NULL, &t, &doc), TT_ERR_INVALID);
    tt_xml_doc_free(doc);
}

/* Different host_hash = different hosts: no SYS link between their CPUs. */
static void test_multi_host(void **state)
{
    const char *text =
        "<system version=\"1\">\n"
        "<cpu host_hash=\"0x1111\" numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">"
        GPU_PCI("0000:01:00.0", "<nvlink target=\"fffffff:ff:ff.0\" count=\"18\" tclass=\"0x068000\"/>")
        "</cpu>\n"
        "<cpu host_hash=\"0x1111\" numaid=\"1\" arch=\"x86_64\" vendor=\"AuthenticAMD\"/>\n"
        "<cpu host_hash=\"0x2222\" numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">"
        GPU_PCI("0000:01:00.1", "<nvlink target=\"fffffff:ff:ff.0\" count=\"18\" tclass=\"0x068000\"/>")
        "</cpu>\n</system>\n";
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    assert_int_equal(tu_build_text(text, NULL, &t, &doc), TT_OK);
    assert_int_equal(t->ntype[TT_NODE_CPU], 3);
    int a0 = tu_node(t, TT_NODE_CPU, 0), a1 = tu_node(t, TT_NODE_CPU, 1);
    int b0 = tu_node(t, TT_NODE_CPU, 2);
    assert_non_null(link_to(t, a0, a1, TT_LINK_SYS));
    assert_null(link_to(t, a0, b0, TT_LINK_SYS));
    assert_null(link_to(t, a1, b0, TT_LINK_SYS));
    assert_int_equal(t->nodes[a0].host, 0);
    assert_int_equal(t->nodes[b0].host, 1);
    int g0 = tu_node(t, TT_NODE_GPU, 0), g1 = tu_node(t, TT_NODE_GPU, 1);
    assert_int_equal(t->nodes[g1].host, 1);
    /* the one shared NVSwitch node joins the hosts (MNNVL) */
    assert_int_equal(t->ntype[TT_NODE_NVS], 1);
    assert_int_equal(tu_path(t, g0, g1)->type, TT_PATH_NVL);
    assert_int_equal(tu_path(t, a0, b0)->type, TT_PATH_DIS);
    assert_int_equal(tu_path(t, a0, b0)->nhops, -1);
    assert_int_equal(tt_topo_local_cpu(t, g1), b0);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

/* Broadcom Gen5 two-level switch: the inner switches are flattened away. */
static void test_bcm_flatten(void **state)
{
#define SW(bus, sub) "<pci busid=\"" bus "\" class=\"0x060400\" vendor=\"0x1000\" device=\"0xc030\" " \
                     "subsystem_vendor=\"0x1000\" subsystem_device=\"" sub "\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">"
#define GPU(bus, dev) "<pci busid=\"" bus "\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">" \
                      "<gpu dev=\"" dev "\" sm=\"90\" rank=\"" dev "\" gdr=\"1\"/></pci>"
    /* parent subsystem: Broadcom's own (flattened) / an OEM's (left alone, as NCCL) */
    static const char *const subven[2] = {"0x1000", "0x1d49"};
    for (int k = 0; k < 2; k++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "<system version=\"1\"><cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" "
                 "familyid=\"6\" modelid=\"143\">"
                 "<pci busid=\"0000:10:00.0\" class=\"0x060400\" vendor=\"0x1000\" device=\"0xc030\" "
                 "subsystem_vendor=\"%s\" subsystem_device=\"0x0100\" link_speed=\"32.0 GT/s PCIe\" "
                 "link_width=\"16\">"
                 SW("0000:11:00.0", "0x1100") GPU("0000:12:00.0", "0") "</pci>"
                 SW("0000:21:00.0", "0x1100") GPU("0000:22:00.0", "1") "</pci>"
                 "</pci></cpu></system>", subven[k]);
        tt_xml_doc *doc = NULL;
        tt_topo *t = NULL;
        assert_int_equal(tu_build_text(text, NULL, &t, &doc), TT_OK);
        int g0 = tu_node(t, TT_NODE_GPU, 0), g1 = tu_node(t, TT_NODE_GPU, 1);
        if (k == 0) {
            assert_int_equal(t->ntype[TT_NODE_PCI], 1);
            assert_int_equal(tt_topo_find_busid(t, "0000:11:00.0"), -1);
            int top = tt_topo_find_busid(t, "0000:10:00.0");
            assert_int_equal(t->nodes[top].id, 0);
            assert_non_null(link_to(t, g0, top, TT_LINK_PCI));
            assert_int_equal(tu_path(t, g0, g1)->type, TT_PATH_PIX);
            assert_int_equal(tu_path(t, g0, g1)->nhops, 2);
        } else {
            assert_int_equal(t->ntype[TT_NODE_PCI], 3);
            assert_int_equal(tu_path(t, g0, g1)->type, TT_PATH_PXB);
        }
        tt_topo_free(t);
        tt_xml_doc_free(doc);
    }
}

static void test_c2c_and_cpu_nvlink(void **state)
{
    const char *text =
        "<system version=\"1\"><cpu numaid=\"0\" arch=\"arm64\">"
        GPU_PCI("0009:01:00.0", "<c2c bw=\"44712\" count=\"5\"/><nvlink count=\"2\" tclass=\"0x068001\"/>")
        "</cpu><cpu numaid=\"1\" arch=\"arm64\"/></system>";
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    assert_int_equal(tu_build_text(text, NULL, &t, &doc), TT_OK);
    int g = tu_node(t, TT_NODE_GPU, 0), c = tu_node(t, TT_NODE_CPU, 0);
    assert_bw(link_to(t, g, c, TT_LINK_C2C)->bw, 223.56);
    assert_bw(link_to(t, c, g, TT_LINK_C2C)->bw, 223.56);
    assert_bw(link_to(t, g, c, TT_LINK_NVL)->bw, 41.2);
    assert_bw(link_to(t, c, tu_node(t, TT_NODE_CPU, 1), TT_LINK_SYS)->bw, 6.0);
    assert_int_equal(t->ntype[TT_NODE_NVS], 0);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

/* Class decides, as NCCL; a <gpu> child only names a GPU when the class allows it. */
static void test_class_rules(void **state)
{
    const char *text =
        "<system version=\"1\"><cpu numaid=\"0\">"
        "<pci busid=\"0000:01:00.0\" class=\"0x120000\"><gpu dev=\"0\" sm=\"94\"/></pci>"
        "<pci busid=\"0000:02:00.0\"><gpu dev=\"1\" sm=\"90\"/></pci>"
        "<pci busid=\"0000:03:00.0\" class=\"0x060400\"><gpu dev=\"2\"/>"
        "<pci busid=\"0000:04:00.0\" class=\"0x030000\"/></pci>"
        "<pci busid=\"0000:05:00.0\" class=\"0x120000\"/>"
        "<pci busid=\"0000:06:00.0\" class=\"0x010802\"><nic><net name=\"n\" dev=\"0\"/></nic></pci>"
        "</cpu></system>";
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    assert_int_equal(tu_build_text(text, NULL, &t, &doc), TT_OK);
    assert_int_equal(t->nodes[tt_topo_find_busid(t, "0000:01:00.0")].type, TT_NODE_GPU);
    assert_int_equal(t->nodes[tt_topo_find_busid(t, "0000:01:00.0")].u.gpu.sm, 94);
    assert_int_equal(t->nodes[tt_topo_find_busid(t, "0000:02:00.0")].type, TT_NODE_GPU);
    assert_int_equal(t->nodes[tt_topo_find_busid(t, "0000:03:00.0")].type, TT_NODE_PCI);
    assert_int_equal(t->nodes[tt_topo_find_busid(t, "0000:04:00.0")].type, TT_NODE_GPU);
    assert_int_equal(t->nodes[tt_topo_find_busid(t, "0000:05:00.0")].type, TT_NODE_PCI);
    assert_int_equal(t->nodes[tt_topo_find_busid(t, "0000:06:00.0")].type, TT_NODE_NIC);
    assert_int_equal(t->ntype[TT_NODE_GPU], 3);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

/* Two ports of one NIC; two sockets of an unknown x86 vendor. */
static void test_ports_and_unknown_cpu(void **state)
{
    const char *text =
        "<system version=\"1\">"
        "<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"HygonGenuine\" familyid=\"24\" modelid=\"1\">"
        "<pci busid=\"0000:41:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
        "<nic><net name=\"mlx5_0\" dev=\"0\" port=\"1\" speed=\"100000\"/>"
        "<net name=\"mlx5_1\" dev=\"1\" port=\"2\" speed=\"0\"/></nic></pci></cpu>"
        "<cpu numaid=\"1\" arch=\"x86_64\" vendor=\"HygonGenuine\" familyid=\"24\" modelid=\"1\"/>"
        "</system>";
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    assert_int_equal(tu_build_text(text, NULL, &t, &doc), TT_OK);
    int nic = tt_topo_find_busid(t, "0000:41:00.0");
    int a = tu_net(t, "mlx5_0"), b = tu_net(t, "mlx5_1");
    assert_int_equal(t->nodes[nic].u.nic.ports, 2);
    assert_int_equal(t->nodes[b].u.net.port, 2);
    assert_bw(t->nodes[b].u.net.speed_mbps, 10000); /* speed 0 -> NCCL's 10 Gb/s */
    assert_bw(link_to(t, nic, a, TT_LINK_NET)->bw, 12.5);
    const tt_path *p = tu_path(t, a, b);
    assert_int_equal(p->type, TT_PATH_LOC);
    assert_int_equal(p->nhops, 2);
    assert_bw(p->bw, 1.25);
    int c0 = tu_node(t, TT_NODE_CPU, 0), c1 = tu_node(t, TT_NODE_CPU, 1);
    assert_bw(link_to(t, c0, c1, TT_LINK_SYS)->bw, TT_INTER_CPU_BW_UNKNOWN);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hgx_graph),
        cmocka_unit_test(test_vendor_partial),
        cmocka_unit_test(test_vm_dump),
        cmocka_unit_test(test_xgmi),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_odd_shapes),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_multi_host),
        cmocka_unit_test(test_bcm_flatten),
        cmocka_unit_test(test_c2c_and_cpu_nvlink),
        cmocka_unit_test(test_class_rules),
        cmocka_unit_test(test_ports_and_unknown_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
