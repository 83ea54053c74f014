/* test_views.c - JSON, DOT and matrix views of a built graph. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cJSON.h>

#include "tt_topo.h"

/* 2 NUMA nodes; CPU0: switch 10 (GPU0, mlx5_0), GPU1 at the root (same
 * host bridge as switch 10), eth0 at the root (other host bridge);
 * CPU1: switch 80 -> switch 81 -> GPU2, switch 80 -> mlx5_1.
 * GPU0 <-> GPU1: 4 NVLinks (sm 80: 20 GB/s each). */
static const char small_xml[] =
    "<system version=\"1\">\n"
    "  <cpu numaid=\"0\" affinity=\"0000ffff\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
    "    <pci busid=\"0000:10:00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\" hostbridge=\"0000:00\">\n"
    "      <pci busid=\"0000:11:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "        <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\">\n"
    "          <nvlink target=\"0000:20:00.0\" count=\"4\" tclass=\"0x030200\"/>\n"
    "        </gpu>\n"
    "      </pci>\n"
    "      <pci busid=\"0000:12:00.0\" class=\"0x020700\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "        <nic>\n"
    "          <net name=\"mlx5_0\" dev=\"0\" speed=\"200000\" port=\"1\" latency=\"0\" guid=\"0x1\" maxconn=\"131072\" gdr=\"1\"/>\n"
    "        </nic>\n"
    "      </pci>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:20:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\" hostbridge=\"0000:00\">\n"
    "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\">\n"
    "        <nvlink target=\"0000:11:00.0\" count=\"4\" tclass=\"0x030200\"/>\n"
    "      </gpu>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:40:00.0\" class=\"0x020000\" link_speed=\"8.0 GT/s PCIe\" link_width=\"8\" hostbridge=\"0000:40\">\n"
    "      <nic>\n"
    "        <net name=\"eth0\" dev=\"2\" speed=\"100000\" port=\"1\" latency=\"0\" guid=\"0x3\" maxconn=\"65536\" gdr=\"0\"/>\n"
    "      </nic>\n"
    "    </pci>\n"
    "  </cpu>\n"
    "  <cpu numaid=\"1\" affinity=\"ffff0000\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
    "    <pci busid=\"0000:80:00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <pci busid=\"0000:81:00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
    "        <pci busid=\"0000:82:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "          <gpu dev=\"2\" sm=\"80\" rank=\"2\" gdr=\"1\"/>\n"
    "        </pci>\n"
    "      </pci>\n"
    "      <pci busid=\"0000:83:00.0\" class=\"0x020700\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "        <nic>\n"
    "          <net name=\"mlx5_1\" dev=\"1\" speed=\"200000\" port=\"1\" latency=\"0\" guid=\"0x2\" maxconn=\"131072\" gdr=\"1\"/>\n"
    "        </nic>\n"
    "      </pci>\n"
    "    </pci>\n"
    "  </cpu>\n"
    "</system>\n";

typedef struct {
    tt_xml_doc *doc;
    tt_topo *t;
} fixture;

static int setup(void **state)
{
    static fixture fx;
    if (tt_xml_read_buffer(small_xml, strlen(small_xml), "small.xml", NULL, &fx.doc) != TT_OK)
        return -1;
    if (tt_topo_from_xml(fx.doc, NULL, &fx.t) != TT_OK)
        return -1;
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    tt_topo_free(fx->t);
    tt_xml_doc_free(fx->doc);
    return 0;
}

static const cJSON *find_path(const cJSON *paths, const char *from, const char *to)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, paths)
    {
        if (!strcmp(cJSON_GetObjectItem(p, "from")->valuestring, from) &&
            !strcmp(cJSON_GetObjectItem(p, "to")->valuestring, to))
            return p;
    }
    return NULL;
}

static void test_json(void **state)
{
    fixture *fx = *state;
    tt_strbuf sb;
    cJSON *j, *nodes, *links, *paths, *n;
    const cJSON *p;
    int nlinks = 0, i;

    tt_strbuf_init(&sb);
    assert_int_equal(tt_topo_write_json(fx->t, &sb), TT_OK);
    assert_null(strchr(sb.data, '\t'));
    j = cJSON_Parse(sb.data);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "schema")->valuestring, "topotune-topology");
    assert_int_equal(cJSON_GetObjectItem(j, "version")->valueint, 1);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "options"), "p2p_level")->valuestring,
                        "PXB");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "options"), "pxn")));
    nodes = cJSON_GetObjectItem(j, "nodes");
    links = cJSON_GetObjectItem(j, "links");
    paths = cJSON_GetObjectItem(j, "paths");
    assert_int_equal(cJSON_GetArraySize(nodes), fx->t->nnodes);
    assert_int_equal(cJSON_GetArraySize(nodes), 14);
    for (i = 0; i < fx->t->nnodes; i++)
        nlinks += fx->t->nodes[i].nlinks;
    assert_int_equal(cJSON_GetArraySize(links), nlinks);
    /* GPU->GPU (3*2) + GPU->NET (3*3) + NET->GPU (3*3) */
    assert_int_equal(cJSON_GetArraySize(paths), 24);

    n = cJSON_GetArrayItem(nodes, tt_topo_node_index(fx->t, TT_NODE_GPU, 2));
    assert_string_equal(cJSON_GetObjectItem(n, "type")->valuestring, "GPU");
    assert_string_equal(cJSON_GetObjectItem(n, "name")->valuestring, "GPU2");
    assert_string_equal(cJSON_GetObjectItem(n, "busid")->valuestring, "0000:82:00.0");
    assert_int_equal(cJSON_GetObjectItem(n, "line")->valueint, 29); /* the <gpu> element */
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "attributes"), "sm")->valueint, 80);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "attributes"), "rank")->valueint, 2);

    n = cJSON_GetArrayItem(nodes, tt_topo_find_busid(fx->t, "0000:80:00.0"));
    assert_string_equal(cJSON_GetObjectItem(n, "type")->valuestring, "PCI");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "attributes"), "class")->valuestring,
                        "0x060400");

    p = find_path(paths, "GPU0", "GPU1");
    assert_non_null(p);
    assert_string_equal(cJSON_GetObjectItem(p, "type")->valuestring, "NVL");
    assert_true(cJSON_GetObjectItem(p, "bw")->valuedouble == 80.0);
    assert_int_equal(cJSON_GetObjectItem(p, "hops")->valueint, 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(p, "route")), 2);

    p = find_path(paths, "GPU2", "mlx5_1");
    assert_non_null(p);
    assert_string_equal(cJSON_GetObjectItem(p, "type")->valuestring, "PXB");
    assert_true(cJSON_GetObjectItem(p, "bw")->valuedouble == 24.0);
    assert_int_equal(cJSON_GetObjectItem(p, "hops")->valueint, 4); /* GPU2 sw81 sw80 NIC mlx5_1 */
    p = find_path(paths, "mlx5_1", "GPU2");
    assert_non_null(p);
    assert_string_equal(cJSON_GetObjectItem(p, "type")->valuestring, "PXB");
    assert_null(find_path(paths, "GPU0", "GPU0"));
    cJSON_Delete(j);
    tt_strbuf_free(&sb);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    const char *p = hay;
    while ((p = strstr(p, needle))) {
        n++;
        p += strlen(needle);
    }
    return n;
}

static void test_dot(void **state)
{
    fixture *fx = *state;
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    assert_int_equal(tt_topo_write_dot(fx->t, &sb), TT_OK);
    assert_int_equal(strncmp(sb.data, "graph topology {\n", 17), 0);
    assert_string_equal(sb.data + sb.len - 2, "}\n");
    assert_int_equal(count(sb.data, "subgraph cluster_cpu"), 2);
    assert_non_null(strstr(sb.data, "label=\"CPU1 (NUMA 1)\""));
    /* one edge per linked pair: 13 tree links + 1 SYS */
    assert_int_equal(count(sb.data, " -- "), 14);
    assert_int_equal(count(sb.data, "label=\"NVL 80.0\""), 1);
    assert_int_equal(count(sb.data, "label=\"SYS 22.0\""), 1);
    assert_int_equal(count(sb.data, "label=\"NET 25.0\""), 2);
    assert_int_equal(count(sb.data, "label=\"PCI 6.0\""), 1);
    assert_int_equal(count(sb.data, "shape=box,"), 3); /* GPUs */
    tt_strbuf_free(&sb);
}

static void test_matrix(void **state)
{
    fixture *fx = *state;
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    assert_int_equal(tt_topo_write_matrix(fx->t, &sb), TT_OK);
    /* GPU0-GPU1 NVLink x4; GPU0-mlx5_0 one switch; GPU1-mlx5_0 crosses the
     * CPU through one host bridge (PHB); eth0 has its own host bridge
     * (NODE); GPU2-mlx5_1 two switches (PXB); other socket SYS. */
    assert_non_null(strstr(sb.data,
        "        GPU0    GPU1    GPU2    NIC0    NIC1    NIC2    CPU Affinity  NUMA Affinity  GPU NUMA ID\n"
        "GPU0    X       NV4     SYS     PIX     NODE    SYS     0-15          0              N/A\n"
        "GPU1    NV4     X       SYS     PHB     NODE    SYS     0-15          0              N/A\n"
        "GPU2    SYS     SYS     X       SYS     SYS     PXB     16-31         1              N/A\n"
        "NIC0    PIX     PHB     SYS     X       NODE    SYS\n"
        "NIC1    NODE    NODE    SYS     NODE    X       SYS\n"
        "NIC2    SYS     SYS     PXB     SYS     SYS     X\n"));
    assert_non_null(strstr(sb.data, "\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: eth0\n  NIC2: mlx5_1\n"));
    assert_non_null(strstr(sb.data, "\nLegend:\n"));
    tt_strbuf_free(&sb);
}

static void test_matrix_vm(void **state)
{
    static const char vm[] =
        "<system version=\"1\">\n"
        "  <cpu numaid=\"-1\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"207\">\n"
        "    <pci busid=\"0000:00:06.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"0\">\n"
        "      <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/>\n"
        "    </pci>\n"
        "    <pci busid=\"0000:00:07.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
        "      <gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"1\"><nvlink target=\"fffffff:ff:ff.0\" count=\"18\" tclass=\"0x068000\"/></gpu>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "</system>\n";
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    tt_strbuf sb;
    (void)state;
    assert_int_equal(tt_xml_read_buffer(vm, strlen(vm), "vm.xml", NULL, &doc), TT_OK);
    assert_int_equal(tt_topo_from_xml(doc, NULL, &t), TT_OK);
    tt_strbuf_init(&sb);
    assert_int_equal(tt_topo_write_matrix(t, &sb), TT_OK);
    assert_non_null(strstr(sb.data,
        "        GPU0    GPU1    CPU Affinity  NUMA Affinity  GPU NUMA ID\n"
        "GPU0    X       NODE    N/A           N/A            N/A\n"
        "GPU1    NODE    X       N/A           N/A            N/A\n"));
    assert_null(strstr(sb.data, "NIC Legend"));
    assert_null(strstr(sb.data, "affinity from the driver"));
    tt_strbuf_free(&sb);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

/* A live scan of a VM: the <cpu> has no NUMA node, the <gpu> carries the
 * driver's view (source nvml): shown and footnoted; a sysfs-known node wins
 * over the GPU's attributes; a malformed value stays out of the columns. */
static void test_matrix_vm_driver_affinity(void **state)
{
    static const char vm[] =
        "<system version=\"1\">\n"
        "  <cpu numaid=\"0\" affinity=\"000000ff\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"207\">\n"
        "    <pci busid=\"0000:00:05.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\" numa_node=\"0\">\n"
        "      <gpu dev=\"2\" sm=\"90\" rank=\"2\" gdr=\"1\" cpu_affinity=\"0-15\" cpu_affinity_source=\"nvml\" numa_affinity=\"1\" numa_affinity_source=\"nvml\"/>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "  <cpu numaid=\"-1\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"207\">\n"
        "    <pci busid=\"0000:00:06.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\" numa_node=\"-1\">\n"
        "      <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\" cpu_affinity=\"0-15\" cpu_affinity_source=\"nvml\" numa_affinity=\"0\" numa_affinity_source=\"nvml\"/>\n"
        "    </pci>\n"
        "    <pci busid=\"0000:00:07.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
        "      <gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"1\" cpu_affinity=\"0-15 ; rm\" numa_affinity=\"0\" numa_affinity_source=\"sysfs\" gpu_numa_id=\"4\"/>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "</system>\n";
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    tt_strbuf sb;
    (void)state;
    assert_int_equal(tt_xml_read_buffer(vm, strlen(vm), "vm.xml", NULL, &doc), TT_OK);
    assert_int_equal(tt_topo_from_xml(doc, NULL, &t), TT_OK);
    tt_strbuf_init(&sb);
    assert_int_equal(tt_topo_write_matrix(t, &sb), TT_OK);
    /* GPUs in PCI order: 00:05.0 (node 0 known), 00:06.0 (NVML), 00:07.0 */
    assert_non_null(strstr(sb.data,
        "        GPU0    GPU1    GPU2    CPU Affinity  NUMA Affinity  GPU NUMA ID\n"
        "GPU0    X       SYS     SYS     0-7           0              N/A\n"
        "GPU1    SYS     X       NODE    0-15          0              N/A\n"
        "GPU2    SYS     NODE    X       N/A           0              4\n"
        "\n"
        "GPU1: CPU/NUMA affinity from the driver (NVML): sysfs numa_node is -1\n"
        "\nLegend:\n"));
    assert_null(strstr(sb.data, "GPU0: CPU/NUMA"));
    assert_null(strstr(sb.data, "GPU2: CPU/NUMA"));
    tt_strbuf_free(&sb);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

/* GPU0 -NVL- GPU1 -NVL- GPU2 (GPU0-GPU2 is NVB); GPU0 and GPU2 also have C2C
 * to the CPU, so NCCL classes their path to the CPU-attached NIC P2C: the
 * matrix shows the PCI relation under it (NODE). */
static void test_matrix_nvb_p2c(void **state)
{
    static const char xml[] =
        "<system version=\"1\">\n"
        "  <cpu numaid=\"0\" affinity=\"0000ffff\" arch=\"arm64\">\n"
        "    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
        "      <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">\n"
        "        <nvlink target=\"0000:02:00.0\" count=\"6\" tclass=\"0x030200\"/>\n"
        "        <c2c count=\"10\" bw=\"45000\"/>\n"
        "      </gpu>\n"
        "    </pci>\n"
        "    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
        "      <gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"1\">\n"
        "        <nvlink target=\"0000:01:00.0\" count=\"6\" tclass=\"0x030200\"/>\n"
        "        <nvlink target=\"0000:03:00.0\" count=\"6\" tclass=\"0x030200\"/>\n"
        "      </gpu>\n"
        "    </pci>\n"
        "    <pci busid=\"0000:03:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
        "      <gpu dev=\"2\" sm=\"90\" rank=\"2\" gdr=\"1\">\n"
        "        <nvlink target=\"0000:02:00.0\" count=\"6\" tclass=\"0x030200\"/>\n"
        "        <c2c count=\"10\" bw=\"45000\"/>\n"
        "      </gpu>\n"
        "    </pci>\n"
        "    <pci busid=\"0000:04:00.0\" class=\"0x020700\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
        "      <nic><net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" port=\"1\" guid=\"0x1\" gdr=\"1\"/></nic>\n"
        "    </pci>\n"
        "  </cpu>\n"
        "</system>\n";
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    tt_strbuf sb;
    const tt_path *p;
    (void)state;
    assert_int_equal(tt_xml_read_buffer(xml, strlen(xml), "nvb.xml", NULL, &doc), TT_OK);
    assert_int_equal(tt_topo_from_xml(doc, NULL, &t), TT_OK);
    p = tt_topo_path(t, tt_topo_node_index(t, TT_NODE_GPU, 0), tt_topo_node_index(t, TT_NODE_GPU, 2));
    assert_non_null(p);
    assert_int_equal(p->type, TT_PATH_NVB);
    p = tt_topo_path(t, tt_topo_node_index(t, TT_NODE_GPU, 0), tt_topo_node_index(t, TT_NODE_NET, 0));
    assert_non_null(p);
    assert_int_equal(p->type, TT_PATH_P2C);
    tt_strbuf_init(&sb);
    assert_int_equal(tt_topo_write_matrix(t, &sb), TT_OK);
    assert_non_null(strstr(sb.data,
        "        GPU0    GPU1    GPU2    NIC0    CPU Affinity  NUMA Affinity  GPU NUMA ID\n"
        "GPU0    X       NV6     NVB     NODE    0-15          0              N/A\n"
        "GPU1    NV6     X       NV6     NODE    0-15          0              N/A\n"
        "GPU2    NVB     NV6     X       NODE    0-15          0              N/A\n"
        "NIC0    NODE    NODE    NODE    X\n"));
    tt_strbuf_free(&sb);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_null_args(void **state)
{
    tt_strbuf sb;
    (void)state;
    tt_strbuf_init(&sb);
    assert_int_equal(tt_topo_write_json(NULL, &sb), TT_ERR_INVALID);
    assert_int_equal(tt_topo_write_dot(NULL, &sb), TT_ERR_INVALID);
    assert_int_equal(tt_topo_write_matrix(NULL, &sb), TT_ERR_INVALID);
    tt_strbuf_free(&sb);
}

/* the format table: the text formats topo-dump offers come out of the one table, each the same
 * as its writer; an unknown name is refused listing the known ones */
static void test_format_table(void **state)
{
    fixture *fx = *state;
    const char *want[] = {"native", "nccl", "json", "dot", "matrix"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int found = 0;
        for (int i = 0; tt_topo_format_at(i); i++)
            if (!strcmp(tt_topo_format_at(i)->name, want[k])) found = 1;
        assert_true(found);
        tt_strbuf out;
        tt_strbuf_init(&out);
        assert_int_equal(tt_topo_format_write(want[k], fx->doc, fx->t, &out), TT_OK);
        assert_non_null(out.data);
        assert_true(out.len > 0 && strlen(out.data) == out.len);
        tt_strbuf_free(&out);
    }
    tt_strbuf m, d, sb;
    tt_strbuf_init(&m);
    tt_strbuf_init(&d);
    tt_strbuf_init(&sb);
    assert_int_equal(tt_topo_format_write("matrix", fx->doc, fx->t, &m), TT_OK);
    assert_int_equal(tt_topo_write_matrix(fx->t, &sb), TT_OK);
    assert_string_equal(m.data, sb.data);
    assert_int_equal(tt_topo_format_write("nccl", fx->doc, fx->t, &d), TT_OK);
    assert_non_null(strstr(d.data, "<system"));
    tt_strbuf_free(&m);
    tt_strbuf_free(&d);
    tt_strbuf_free(&sb);
    tt_strbuf x;
    tt_strbuf_init(&x);
    assert_int_equal(tt_topo_format_write("pdf", fx->doc, fx->t, &x), TT_ERR_INVALID);
    assert_int_equal(x.len, 0);
    tt_strbuf_free(&x);
    assert_non_null(strstr(tt_error_message(), "one of: native, nccl"));
    assert_null(tt_topo_format_at(5));
    assert_null(tt_topo_format_at(-1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),       cmocka_unit_test(test_dot),
        cmocka_unit_test(test_matrix),     cmocka_unit_test(test_matrix_vm),
        cmocka_unit_test(test_matrix_vm_driver_affinity),
        cmocka_unit_test(test_matrix_nvb_p2c), cmocka_unit_test(test_null_args),
        cmocka_unit_test(test_format_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
