/* test_validate.c - tt_topo_validate names every problem with code, line,
 * place and severity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_topo.h"

/* A clean 2-GPU + 1-NIC topology; tests patch it line by line. */
#define L1 "<system version=\"1\">\n"
#define L2 "  <cpu numaid=\"0\" affinity=\"0000ffff\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"
#define L3 "    <pci busid=\"0000:15:00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
#define L4 "      <pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
#define L5 "        <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">\n"
#define L6 "          <nvlink target=\"0000:2a:00.0\" count=\"18\" tclass=\"0x030200\"/>\n"
#define L7 "        </gpu>\n      </pci>\n"
#define L8 "      <pci busid=\"0000:2a:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
#define L9 "        <gpu dev=\"1\" sm=\"90\" rank=\"1\" gdr=\"1\"/>\n      </pci>\n"
#define L11 "      <pci busid=\"0000:19:00.0\" class=\"0x020700\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
#define L12 "        <nic><net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" port=\"1\" guid=\"0xa088c20300f1e000\" gdr=\"1\"/></nic>\n"
#define TAIL "      </pci>\n    </pci>\n  </cpu>\n</system>\n"
/* line numbers: L7 and L9 hold two lines each */
#define CLEAN L1 L2 L3 L4 L5 L6 L7 L8 L9 L11 L12 TAIL

typedef struct {
    tt_findings f;
    tt_xml_doc *doc;
} run_t;

static void lint(run_t *r, const char *xml)
{
    tt_findings_init(&r->f);
    r->doc = NULL;
    assert_int_equal(tt_xml_read_buffer(xml, strlen(xml), "t.xml", NULL, &r->doc), TT_OK);
    assert_int_equal(tt_topo_validate(r->doc, &r->f), TT_OK);
}

static void done(run_t *r)
{
    tt_findings_free(&r->f);
    tt_xml_doc_free(r->doc);
}

static void dump(const run_t *r)
{
    int i;
    for (i = 0; i < r->f.n; i++)
        print_message("  %d %s %s: %s\n", r->f.items[i].line, r->f.items[i].code,
                      r->f.items[i].where, r->f.items[i].message);
}

/* The finding with this code at this line, or NULL. */
static const tt_finding *get(const run_t *r, const char *code, int line)
{
    int i;
    for (i = 0; i < r->f.n; i++)
        if (!strcmp(r->f.items[i].code, code) && r->f.items[i].line == line)
            return &r->f.items[i];
    dump(r);
    return NULL;
}

static int count_code(const run_t *r, const char *code)
{
    int i, n = 0;
    for (i = 0; i < r->f.n; i++)
        n += !strcmp(r->f.items[i].code, code);
    return n;
}

static void test_clean(void **state)
{
    run_t r;
    (void)state;
    lint(&r, CLEAN);
    if (r.f.n)
        dump(&r);
    assert_int_equal(r.f.n, 0);
    assert_int_equal(tt_findings_max_severity(&r.f), -1);
    done(&r);
}

static void test_root(void **state)
{
    run_t r;
    const tt_finding *x;
    (void)state;
    lint(&r, "<topology version=\"2.0\">\n<object type=\"Machine\"/>\n</topology>\n");
    assert_int_equal(r.f.n, 1);
    x = get(&r, "bad-root", 1);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_ERROR);
    assert_non_null(strstr(x->message, "hwloc"));
    done(&r);

    lint(&r, "<system>\n</system>\n");
    x = get(&r, "missing-attribute", 1);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_ERROR);
    assert_string_equal(x->where, "system");
    done(&r);

    lint(&r, "<system version=\"2\">\n</system>\n");
    x = get(&r, "unsupported-version", 1);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_ERROR);
    assert_non_null(strstr(x->message, "version=\"2\""));
    done(&r);

    lint(&r, "<system version=\"1\" tt_version=\"7\">\n</system>\n");
    assert_non_null(get(&r, "unsupported-version", 1));
    done(&r);
}

/* Every problem of one file is named, not only the first. */
static void test_keeps_going(void **state)
{
    static const char xml[] =
        L1
        "  <cpu numaid=\"0\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n"  /* 2: no arch */
        L3
        "      <pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"x16\">\n" /* 4 */
        L5
        "          <nvlink target=\"0000:77:00.0\" count=\"18\" tclass=\"0x030200\"/>\n"  /* 6 */
        L7
        "      <pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n" /* 9 */
        L9
        "      <pci busid=\"00:19:00.0\" class=\"0x020700\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n" /* 12 */
        "        <nic><net name=\"mlx5_0\" dev=\"0\" speed=\"-1\" port=\"1\" guid=\"0x1\" gdr=\"1\"/></nic>\n" /* 13 */
        TAIL;
    run_t r;
    const tt_finding *x;
    (void)state;
    lint(&r, xml);
    x = get(&r, "missing-attribute", 2);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_ERROR);
    assert_string_equal(x->where, "cpu numaid=0");
    assert_non_null(strstr(x->message, "'arch'"));
    x = get(&r, "bad-number", 4);
    assert_non_null(x);
    assert_string_equal(x->where, "pci 0000:18:00.0");
    assert_non_null(strstr(x->message, "link_width=\"x16\""));
    x = get(&r, "nvlink-target-missing", 6);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_ERROR);
    assert_string_equal(x->where, "gpu dev=0 nvlink 0000:77:00.0");
    x = get(&r, "duplicate-busid", 9);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "line 4"));
    x = get(&r, "bad-busid", 12);
    assert_non_null(x);
    x = get(&r, "implausible-value", 13);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_WARN);
    assert_string_equal(x->where, "net mlx5_0");
    assert_int_equal(tt_findings_max_severity(&r.f), TT_SEV_ERROR);
    x = get(&r, "missing-attribute", 2); /* affinity: info only */
    assert_non_null(x);
    assert_int_equal(r.f.n, 7);
    done(&r);
}

static void test_cpu_rules(void **state)
{
    run_t r;
    const tt_finding *x;
    (void)state;
    /* Intel needs familyid/modelid, AMD does not; ARM needs no vendor */
    lint(&r, L1 "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\"/>\n"
                "  <cpu numaid=\"1\" arch=\"x86_64\" vendor=\"AuthenticAMD\"/>\n"
                "  <cpu numaid=\"2\" arch=\"arm64\"/>\n"
                "  <cpu numaid=\"3\" arch=\"x86_64\"/>\n"
                "  <cpu numaid=\"3\" arch=\"x86_64\" vendor=\"HygonGenuine\"/>\n"
                "  <cpu numaid=\"-1\" arch=\"sparc\" affinity=\"zz\"/>\n"
                "</system>\n");
    {
        int i, errs2 = 0, errs3 = 0, errs4 = 0, errs5 = 0;
        for (i = 0; i < r.f.n; i++) {
            const tt_finding *it = &r.f.items[i];
            if (it->severity != TT_SEV_ERROR)
                continue;
            errs2 += it->line == 2;
            errs3 += it->line == 3;
            errs4 += it->line == 4;
            errs5 += it->line == 5;
        }
        assert_int_equal(errs2, 2); /* familyid, modelid */
        assert_int_equal(errs3, 0);
        assert_int_equal(errs4, 0);
        assert_int_equal(errs5, 1); /* vendor */
    }
    x = get(&r, "unknown-value", 6);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "HygonGenuine"));
    x = get(&r, "duplicate-id", 6);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "line 5"));
    assert_non_null(get(&r, "unknown-numa", 7));
    assert_non_null(get(&r, "unknown-value", 7));
    assert_non_null(get(&r, "bad-affinity", 7));
    done(&r);
}

static void test_pci_rules(void **state)
{
    run_t r;
    const tt_finding *x;
    (void)state;
    lint(&r, L1 L2
             "    <pci busid=\"0000:15:00.0\" link_speed=\"32.0 GT/s PCIe\">\n"                   /* 3: bridge */
             "      <pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"\"/>\n" /* 4 */
             "      <pci busid=\"0000:1A:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s\" link_width=\"12\"/>\n" /* 5 */
             "      <pci busid=\"0000:1b:00.0\"/>\n"                                                /* 6 */
             "      <pci busid=\"0000:1c:00.0\" class=\"0x030200\" link_speed=\"2.5 GT/s PCIe\" link_width=\"1\"/>\n" /* 7 */
             "    </pci>\n  </cpu>\n</system>\n");
    /* bridge without class and width: NCCL fails */
    x = get(&r, "missing-attribute", 3);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_ERROR);
    assert_int_equal(count_code(&r, "missing-attribute"), 2 + 3); /* + leaf 6: class, width, speed */
    x = get(&r, "unknown-link-width", 4);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_WARN);
    assert_non_null(strstr(x->message, "x16"));
    x = get(&r, "unknown-link-speed", 4);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "Gen3"));
    assert_non_null(get(&r, "missing-element", 4)); /* GPU without <gpu> */
    x = get(&r, "unknown-link-speed", 5);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "16.0 GT/s"));
    x = get(&r, "implausible-value", 5);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "link_width=12"));
    assert_non_null(get(&r, "busid-case", 5));
    x = get(&r, "missing-attribute", 6);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_WARN); /* leaf: filled from sysfs at run time */
    assert_non_null(strstr(x->message, "run time"));
    x = get(&r, "slow-link", 7);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "0.19 GB/s"));
    done(&r);
}

static void test_links(void **state)
{
    run_t r;
    const tt_finding *x;
    (void)state;
    lint(&r, L1 L2 L3 L4
             "        <gpu dev=\"0\" sm=\"9\" rank=\"0\" gdr=\"2\">\n"                                  /* 5 */
             "          <nvlink target=\"fffffff:ff:ff.0\" count=\"12\" tclass=\"0x068000\"/>\n"         /* 6 */
             "          <nvlink target=\"0000:2a:00.0\" count=\"0\" tclass=\"0x030200\"/>\n"              /* 7 */
             "          <nvlink count=\"8\" tclass=\"0x030200\"/>\n"                                     /* 8 */
             "          <nvlink target=\"0000:2a:00.0\" count=\"1\" tclass=\"0x050000\"/>\n"              /* 9 */
             "          <c2c count=\"5\" bw=\"0\"/>\n"                                                    /* 10 */
             "          <c2c count=\"5\"/>\n"                                                             /* 11 */
             "          <foo/>\n"                                                                      /* 12 */
             "        </gpu>\n      </pci>\n"
             "      <pci busid=\"0000:2a:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n" /* 15 */
             "        <gpu/>\n" /* 16 */
             "        <pcilink target=\"0000:99:00.0\"/>\n" /* 17 */
             "      </pci>\n    </pci>\n  </cpu>\n</system>\n");
    assert_non_null(get(&r, "implausible-value", 5)); /* sm 9 */
    x = get(&r, "implausible-value", 7);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_WARN);
    x = get(&r, "missing-attribute", 8);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_ERROR);
    assert_non_null(strstr(x->message, "'target'"));
    assert_non_null(get(&r, "unknown-value", 9));
    x = get(&r, "implausible-value", 10);
    assert_non_null(x);
    assert_int_equal(x->severity, TT_SEV_ERROR);
    x = get(&r, "missing-attribute", 11);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "'bw'"));
    x = get(&r, "ignored-element", 12);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "<foo> inside <gpu>"));
    /* NVLink total 12+0+8+1 > 18 */
    x = get(&r, "implausible-value", 5);
    assert_non_null(x);
    assert_int_equal(count_code(&r, "implausible-value"), 5); /* sm, gdr, total, count=0, bw=0 */
    /* <gpu/> with nothing: 4 warnings that NCCL fills them */
    {
        int i, w = 0;
        for (i = 0; i < r.f.n; i++)
            w += r.f.items[i].line == 16 && r.f.items[i].severity == TT_SEV_WARN &&
                 !strcmp(r.f.items[i].code, "missing-attribute");
        assert_int_equal(w, 4);
    }
    x = get(&r, "pcilink-target-missing", 17);
    assert_non_null(x);
    done(&r);
}

static void test_limits(void **state)
{
    run_t r;
    tt_strbuf sb;
    const tt_finding *x;
    int i;
    (void)state;

    /* 300 leaf devices: more elements than NCCL holds */
    tt_strbuf_init(&sb);
    tt_strbuf_append(&sb, L1 L2);
    for (i = 0; i < 300; i++)
        tt_strbuf_printf(&sb,
                         "    <pci busid=\"0000:%02x:%02x.%d\" class=\"0x010802\" "
                         "link_speed=\"16.0 GT/s PCIe\" link_width=\"4\"/>\n",
                         1 + i / 64, (i % 64) / 2, i % 2);
    tt_strbuf_append(&sb, "  </cpu>\n</system>\n");
    lint(&r, sb.data);
    x = get(&r, "too-many-elements", 1);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "302 elements"));
    assert_int_equal(x->severity, TT_SEV_WARN);
    assert_int_equal(r.f.n, 1);
    done(&r);
    tt_strbuf_free(&sb);

    /* 17 attributes in an NCCL file; a 300-character value */
    tt_strbuf_init(&sb);
    tt_strbuf_append(&sb, L1 L2 L3 L4 L5 L6 L7 L8 L9 L11);
    tt_strbuf_append(&sb, "        <nic><net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" port=\"1\" guid=\"0x1\" "
                          "gdr=\"1\" latency=\"0\" maxconn=\"1\" net=\"1\" coll=\"0\" gin=\"0\" rma=\"0\" "
                          "rail=\"0\" plane=\"0\" keep=\"1\" a=\"1\" b=\"");
    for (i = 0; i < 300; i++)
        tt_strbuf_append(&sb, "x");
    tt_strbuf_append(&sb, "\"/></nic>\n" TAIL);
    lint(&r, sb.data);
    x = get(&r, "too-many-attributes", 13);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "17 attributes"));
    x = get(&r, "value-too-long", 13);
    assert_non_null(x);
    assert_non_null(strstr(x->message, "'b' is 300 characters"));
    done(&r);
    tt_strbuf_free(&sb);
}

static void test_native_attrs_not_counted(void **state)
{
    /* topotune's own attributes (dropped by the NCCL writer) do not count
     * toward NCCL's 16 in a native file; <unknown> notes are ours */
    static const char xml[] =
        "<system version=\"1\" tt_version=\"1\" tt_source=\"scan\">\n"
        "  <cpu numaid=\"-1\" affinity=\"\" arch=\"arm64\" tt_a=\"1\" tt_b=\"1\" tt_c=\"1\" tt_d=\"1\" "
        "tt_e=\"1\" tt_f=\"1\" tt_g=\"1\" tt_h=\"1\" tt_i=\"1\" tt_j=\"1\" tt_k=\"1\" tt_l=\"1\" tt_m=\"1\" "
        "tt_n=\"1\">\n"
        "    <unknown attr=\"numaid\" reason=\"x\"/>\n"
        "  </cpu>\n"
        "  <nvswitch busid=\"0000:05:00.0\" visible=\"0\" links=\"16\"/>\n"
        "  <findings><finding code=\"x\"/></findings>\n"
        "</system>\n";
    run_t r;
    (void)state;
    lint(&r, xml);
    assert_int_equal(count_code(&r, "too-many-attributes"), 0);
    assert_int_equal(count_code(&r, "ignored-element"), 0);
    assert_non_null(get(&r, "unknown-numa", 2));
    assert_int_equal(r.f.n, 1);
    done(&r);

    /* the same elements in an NCCL file: NCCL ignores them */
    lint(&r, "<system version=\"1\">\n  <nvswitch busid=\"0000:05:00.0\"/>\n</system>\n");
    assert_non_null(get(&r, "ignored-element", 2));
    done(&r);
}

/* GPU rank attributes: duplicates and ranks out of range are findings (issue #16 item 9) */
static void test_gpu_ranks(void **state)
{
    run_t r;
    int i;
    (void)state;
    static const char *const bad[] = {"0", "5", "-1"};
    static const char *const code[] = {"duplicate-id", "rank-range", "rank-range"};
    for (i = 0; i < 3; i++) {
        char xml[4096], l9[160];
        snprintf(l9, sizeof l9, "        <gpu dev=\"1\" sm=\"90\" rank=\"%s\" gdr=\"1\"/>\n      </pci>\n", bad[i]);
        snprintf(xml, sizeof xml, "%s%s%s%s%s%s%s%s%s%s%s%s", L1, L2, L3, L4, L5, L6, L7, L8, l9, L11, L12, TAIL);
        lint(&r, xml);
        if (count_code(&r, code[i]) != 1)
            dump(&r);
        assert_int_equal(count_code(&r, code[i]), 1);
        done(&r);
    }
    lint(&r, CLEAN);
    assert_int_equal(count_code(&r, "rank-range"), 0);
    assert_int_equal(count_code(&r, "duplicate-id"), 0);
    done(&r);
}

static void test_args(void **state)
{
    tt_findings f;
    (void)state;
    tt_findings_init(&f);
    assert_int_equal(tt_topo_validate(NULL, &f), TT_ERR_INVALID);
    tt_findings_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean),      cmocka_unit_test(test_root),
        cmocka_unit_test(test_keeps_going), cmocka_unit_test(test_cpu_rules),
        cmocka_unit_test(test_pci_rules),  cmocka_unit_test(test_links),
        cmocka_unit_test(test_limits),     cmocka_unit_test(test_native_attrs_not_counted),
        cmocka_unit_test(test_args),       cmocka_unit_test(test_gpu_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
