/*
 * test_tune_hosts.c - the sanity gate (tune_sanity.c) and clusters of different hosts
 * (topo_cluster.c, tune_hosts.c): per-host files made from the HGX fixture with one thing
 * changed each (a GPU at x8, a NIC port down, a GPU missing).
 */
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
#include "tt_topo.h"
#include "tt_tune.h"
#include "tt_tune.h"
#include "tt_xml.h"

static char dir[256];

static char *slurp(const char *name)
{
    const char *root = getenv("TOPOTUNE_ROOT");
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", root && *root ? root : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

/* replace every `from` by `to` (to may be "") */
static char *subst(const char *s, const char *from, const char *to)
{
    size_t lf = strlen(from), lt = strlen(to), n = 0;
    for (const char *p = strstr(s, from); p; p = strstr(p + lf, from)) n++;
    char *o = malloc(strlen(s) + n * lt + 1), *w = o;
    const char *p = s, *q;
    while ((q = strstr(p, from))) {
        memcpy(w, p, (size_t)(q - p));
        w += q - p;
        memcpy(w, to, lt);
        w += lt;
        p = q + lf;
    }
    strcpy(w, p);
    return o;
}

/* drop every line containing `needle` */
static char *drop_lines(const char *s, const char *needle)
{
    char *o = malloc(strlen(s) + 1), *w = o;
    const char *p = s;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p + 1) : strlen(p);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(l < sizeof line - 1 ? l : sizeof line - 1), p);
        if (!strstr(line, needle)) {
            memcpy(w, p, l);
            w += l;
        }
        p += l;
    }
    *w = 0;
    return o;
}

static const char *put(const char *name, const char *text)
{
    static char paths[16][512];
    static int k;
    char *path = paths[k++ % 16];
    snprintf(path, 512, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* findings of the sanity gate for a topology text and cluster shape */
static int sanity(const char *xml, int nodes, tt_findings *out)
{
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    tt_tune_ctx *ctx = NULL;
    tt_cluster c;
    if (tt_xml_read_buffer(xml, strlen(xml), "test.xml", NULL, &doc) != TT_OK) fail_msg("%s", tt_error_message());
    if (tt_topo_from_xml(doc, NULL, &t) != TT_OK) fail_msg("%s", tt_error_message());
    assert_int_equal(tt_cluster_for_topo(t, nodes, NULL, &c), TT_OK);
    if (nodes > 1 && c.nics_per_node == 0) {
        c.nics_per_node = 1;
        c.nic_gbps = 400;
        c.rails = 1;
    }
    if (tt_tune_ctx_new(t, &c, TT_MODEL_TOPOTUNE, NULL, &ctx) != TT_OK) fail_msg("%s", tt_error_message());
    tt_findings_init(out);
    assert_int_equal(tt_tune_sanity_check(ctx, out), TT_OK);
    tt_tune_ctx_free(ctx);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
    return out->n;
}

static int has_code(const tt_findings *f, const char *code)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->items[i].code, code)) return 1;
    return 0;
}

static void test_sanity_silent_on_good_files(void **state)
{
    (void)state;
    static const char *good[] = {"hgx-h100-8gpu.xml", "pcie-4gpu.xml", "nvl72-sm100.xml", "rccl-xgmi-4gpu.xml",
                                 "nccl-dump-h100-vm.xml"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        char *x = slurp(good[i]);
        tt_findings f;
        for (int nodes = 1; nodes <= 4; nodes *= 2) {
            if (sanity(x, nodes, &f) != 0) fail_msg("%s x%d: %s", good[i], nodes, f.items[0].message);
            tt_findings_free(&f);
        }
        free(x);
    }
}

static void test_sanity_fires(void **state)
{
    (void)state;
    tt_findings f;
    char *hgx = slurp("hgx-h100-8gpu.xml");
    /* NVLink parts without NVLinks */
    char *nonvl = drop_lines(hgx, "<nvlink ");
    assert_true(sanity(nonvl, 1, &f) >= 1);
    assert_true(has_code(&f, "nvlink-missing"));
    assert_non_null(strstr(f.items[0].message, "fix:"));
    tt_findings_free(&f);
    /* and at PCIe Gen1 x1: below 1 GB/s */
    char *tiny = subst(nonvl, "link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"", "link_speed=\"2.5 GT/s PCIe\" link_width=\"1\"");
    sanity(tiny, 1, &f);
    assert_true(has_code(&f, "busbw-absurd"));
    tt_findings_free(&f);
    /* the vendor's partial file: GPUs of unknown model */
    char *vp = slurp("vendor-partial.xml");
    sanity(vp, 1, &f);
    assert_true(has_code(&f, "gpu-unknown"));
    tt_findings_free(&f);
    free(vp);
    free(tiny);
    free(nonvl);
    free(hgx);
}

static void test_nvlink_part(void **state)
{
    (void)state;
    assert_int_equal(tt_tune_nvlink_part(90, 0x2330, 0), 1); /* H100 SXM */
    assert_int_equal(tt_tune_nvlink_part(89, 0x26b9, 0), 0); /* L40S */
    assert_int_equal(tt_tune_nvlink_part(90, 0x2331, 0), 0); /* H100 PCIe */
    assert_int_equal(tt_tune_nvlink_part(90, 0, 0), 1);      /* arch only */
    assert_int_equal(tt_tune_nvlink_part(89, 0, 0), 0);
    assert_int_equal(tt_tune_nvlink_part(90, 0x740c, 1), 0); /* AMD */
}

/* a healthy host and three degraded ones */
static void make_hosts(const char **a, const char **b, const char **c, const char **d, const char **e)
{
    char *hgx = slurp("hgx-h100-8gpu.xml");
    *a = put("a.xml", hgx);
    *b = put("b.xml", hgx);
    /* GPU 3 (0000:55:00.0) at x8 */
    const char *g3 = "<pci busid=\"0000:55:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\" "
                     "subsystem_vendor=\"0x10de\" subsystem_device=\"0x16c1\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">";
    char *g3x8 = strdup(g3);
    memcpy(strstr(g3x8, "link_width=\"16\""), "link_width=\"8\" ", 15);
    char *cx = subst(hgx, g3, g3x8);
    *c = put("c.xml", cx);
    char *dx = subst(hgx, "<net name=\"mlx5_2\"", "<net state=\"DOWN\" name=\"mlx5_2\"");
    *d = put("d.xml", dx);
    /* GPU 7 gone: its whole <pci> element */
    char *ex = strdup(hgx);
    char *g7 = strstr(ex, "<gpu dev=\"7\"");
    assert_non_null(g7);
    char *start = g7;
    while (start > ex && strncmp(start, "<pci ", 5)) start--;
    char *end = strstr(g7, "</pci>") + strlen("</pci>");
    memmove(start, end, strlen(end) + 1);
    char *ex2 = strdup(ex);
    *e = put("e.xml", ex2);
    free(ex2);
    free(ex);
    free(dx);
    free(cx);
    free(g3x8);
    free(hgx);
}

static int said(const tt_findings *f, const char *host, const char *text)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->items[i].where, host) && strstr(f->items[i].message, text)) return 1;
    return 0;
}

static void test_hosts_differ_and_slowest(void **state)
{
    (void)state;
    const char *a, *b, *c, *d, *e;
    make_hosts(&a, &b, &c, &d, &e);
    tt_hostset hs;
    tt_hostset_init(&hs);
    const char *files[] = {a, b, c, d};
    for (int i = 0; i < 4; i++)
        if (tt_hostset_add_file(&hs, files[i]) != TT_OK) fail_msg("%s", tt_error_message());
    assert_int_equal(hs.n, 4);
    assert_int_equal(hs.hosts[3].down, 1);
    assert_string_equal(hs.hosts[3].down_names, "mlx5_2");
    assert_int_equal(hs.hosts[3].topo->ntype[TT_NODE_NET], 7);
    tt_findings f;
    tt_findings_init(&f);
    assert_int_equal(tt_hostset_compare(&hs, &f), TT_OK);
    assert_true(said(&f, "c.xml", "GPU 3 PCIe link 32.0 GT/s PCIe x8 (majority 32.0 GT/s PCIe x16)"));
    assert_true(said(&f, "d.xml", "NIC mlx5_2 state DOWN"));
    for (int i = 0; i < f.n; i++) assert_true(strcmp(f.items[i].where, "a.xml") && strcmp(f.items[i].where, "b.xml"));
    int flags[4];
    tt_hostset_differing(&hs, &f, flags);
    assert_int_equal(flags[0] + flags[1] + flags[2] + flags[3], 2);
    tt_findings_free(&f);

    /* the slowest host is a degraded one, and it is slower than the healthy cluster */
    tt_slowest_host s;
    assert_int_equal(tt_tune_slowest_host(&hs, 0, NULL, TT_MODEL_TOPOTUNE, NULL, &s), TT_OK);
    assert_true(s.chosen == 2 || s.chosen == 3);
    assert_int_equal(s.cluster.nodes, 4);
    assert_true(s.busbw[s.chosen] < 0.95 * s.busbw[0]);
    assert_true(s.busbw[2] < s.busbw[0] && s.busbw[3] < s.busbw[0]);
    assert_true(s.busbw[0] == s.busbw[1]);
    assert_non_null(strstr(s.why, hs.hosts[s.chosen].name));
    tt_slowest_host_free(&s);
    /* -g above a host's GPUs: refused naming it */
    tt_hostset_free(&hs);
    tt_hostset_init(&hs);
    assert_int_equal(tt_hostset_add_file(&hs, a), TT_OK);
    assert_int_equal(tt_hostset_add_file(&hs, e), TT_OK);
    assert_int_equal(hs.hosts[1].gpus, 7);
    tt_findings_init(&f);
    assert_int_equal(tt_hostset_compare(&hs, &f), TT_OK);
    assert_true(said(&f, "e.xml", "7 GPUs"));
    tt_findings_free(&f);
    tt_cluster_overrides ov = TT_CLUSTER_OVERRIDES_NONE;
    ov.gpus_per_node = 8;
    assert_int_equal(tt_tune_slowest_host(&hs, 0, &ov, TT_MODEL_TOPOTUNE, NULL, &s), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "e.xml"));
    assert_int_equal(tt_tune_slowest_host(&hs, 0, NULL, TT_MODEL_TOPOTUNE, NULL, &s), TT_OK);
    assert_int_equal(s.cluster.gpus_per_node, 7);
    tt_slowest_host_free(&s);
    tt_hostset_free(&hs);
}

static void test_merge_and_hostile(void **state)
{
    (void)state;
    const char *a, *b, *c, *d, *e;
    make_hosts(&a, &b, &c, &d, &e);
    const char *files[] = {a, c, d};
    tt_xml_doc *m = NULL;
    assert_int_equal(tt_hostset_merge_files(files, 3, &m), TT_OK);
    assert_string_equal(m->root->name, "cluster");
    assert_int_equal(m->root->nchildren, 3);
    assert_string_equal(tt_xml_get(m->root->children[1], "host"), "c");
    char path[512];
    snprintf(path, sizeof path, "%s/cluster.xml", dir);
    assert_int_equal(tt_xml_write_file(m, TT_XML_NATIVE, path), TT_OK);
    tt_xml_doc_free(m);
    tt_hostset hs;
    tt_hostset_init(&hs);
    assert_int_equal(tt_hostset_add_file(&hs, path), TT_OK);
    assert_int_equal(hs.n, 3);
    assert_string_equal(hs.hosts[2].name, "d");
    tt_findings f;
    tt_findings_init(&f);
    assert_int_equal(tt_hostset_compare(&hs, &f), TT_OK);
    assert_true(said(&f, "c", "x8"));
    tt_findings_free(&f);
    /* the same host twice */
    assert_int_equal(tt_hostset_add_file(&hs, path), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "given twice"));
    tt_hostset_free(&hs);
    const char *dup[] = {a, a};
    assert_int_equal(tt_hostset_merge_files(dup, 2, &m), TT_ERR_INVALID);

    /* unreadable, not a topology, AMD with NVIDIA */
    tt_hostset_init(&hs);
    char missing[512];
    snprintf(missing, sizeof missing, "%s/nothere.xml", dir);
    assert_int_not_equal(tt_hostset_add_file(&hs, missing), TT_OK);
    assert_non_null(strstr(tt_error_message(), "nothere.xml"));
    /* a root that is neither <system> nor <cluster> (here an empty hwloc root, which the hwloc
     * reader refuses): an error naming the file */
    const char *odd = put("odd.xml", "<topology/>\n");
    assert_int_not_equal(tt_hostset_add_file(&hs, odd), TT_OK);
    assert_non_null(strstr(tt_error_message(), "odd.xml"));
    char *rccl = slurp("rccl-xgmi-4gpu.xml");
    const char *r = put("amd.xml", rccl);
    free(rccl);
    assert_int_equal(tt_hostset_add_file(&hs, a), TT_OK);
    assert_int_equal(tt_hostset_add_file(&hs, r), TT_OK);
    tt_findings_init(&f);
    assert_int_equal(tt_hostset_compare(&hs, &f), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "amd.xml"));
    assert_non_null(strstr(tt_error_message(), "AMD"));
    tt_findings_free(&f);
    tt_hostset_free(&hs);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/tt-hosts-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sanity_silent_on_good_files),
        cmocka_unit_test(test_sanity_fires),
        cmocka_unit_test(test_nvlink_part),
        cmocka_unit_test(test_hosts_differ_and_slowest),
        cmocka_unit_test(test_merge_and_hostile),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
