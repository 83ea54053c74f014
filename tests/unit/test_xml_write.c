/* test_xml_write.c - native and NCCL writers: layout, escaping, byte
 * stability, NCCL filtering and NCCL limits, atomic file output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tt_xml.h"

static const char *fixture(const char *rel)
{
    static char path[4096];
    const char *root = getenv("TOPOTUNE_ROOT");
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", root ? root : ".", rel);
    return path;
}

static char *slurp(const char *path, size_t *len)
{
    char *b = NULL;
    if (tt_read_file(path, 0, &b, len) != TT_OK)
        fail_msg("cannot read %s: %s", path, tt_error_message());
    return b;
}

static tt_xml_doc *read_text(const char *text)
{
    tt_xml_doc *d = NULL;
    if (tt_xml_read_buffer(text, strlen(text), "w.xml", NULL, &d) != TT_OK)
        fail_msg("parse failed: %s", tt_error_message());
    return d;
}

static char *write_doc(const tt_xml_doc *d, tt_xml_dialect dia)
{
    char *out = NULL;
    size_t len = 0;
    if (tt_xml_write_buffer(d, dia, &out, &len) != TT_OK)
        fail_msg("write failed: %s", tt_error_message());
    assert_int_equal(strlen(out), len);
    return out;
}

/* write(read(text)) then check write(read(that)) is byte-identical */
static char *stable_write(const char *text, tt_xml_dialect dia)
{
    tt_xml_doc *d = read_text(text), *d2;
    char *w1 = write_doc(d, dia), *w2;
    d2 = read_text(w1);
    w2 = write_doc(d2, dia);
    assert_string_equal(w1, w2);
    free(w2);
    tt_xml_doc_free(d2);
    tt_xml_doc_free(d);
    return w1;
}

static void test_native_fixture_identity(void **state)
{
    const char *files[] = {"nccl-dump-h100-vm.xml", "good/native-extensions.xml"};
    (void)state;
    for (int i = 0; i < 2; i++) {
        size_t len;
        char *orig = slurp(fixture(files[i]), &len);
        /* both fixtures are already in canonical layout */
        char *w = stable_write(orig, TT_XML_NATIVE);
        assert_string_equal(w, orig);
        free(w);
        free(orig);
    }
}

static void test_native_canonical_layout(void **state)
{
    char *w;
    (void)state;
    w = stable_write("<?xml version='1.0'?>\n<!-- c -->\n<system version='1'>\t<cpu\tnumaid='0'"
                     " arch=\"x86_64\"><pci busid='a'><gpu dev='0'><nvlink target='x' count='2'/>"
                     "</gpu></pci><nic></nic></cpu>\r\n</system>",
                     TT_XML_NATIVE);
    assert_string_equal(w, "<system version=\"1\">\n"
                           "  <cpu numaid=\"0\" arch=\"x86_64\">\n"
                           "    <pci busid=\"a\">\n"
                           "      <gpu dev=\"0\">\n"
                           "        <nvlink target=\"x\" count=\"2\"/>\n"
                           "      </gpu>\n"
                           "    </pci>\n"
                           "    <nic/>\n"
                           "  </cpu>\n"
                           "</system>\n");
    free(w);
}

static void test_native_escaping(void **state)
{
    tt_xml_doc *d = tt_xml_doc_new("system", NULL), *d2;
    const char *nasty = "a&b<c>d\"e'f\tg\nh\ri \xc3\xa9";
    char *w;
    (void)state;
    tt_xml_set(d->root, "v", nasty);
    w = write_doc(d, TT_XML_NATIVE);
    assert_string_equal(w, "<system v=\"a&amp;b&lt;c&gt;d&quot;e'f&#9;g&#10;h&#13;i \xc3\xa9\"/>\n");
    d2 = read_text(w);
    assert_string_equal(tt_xml_get(d2->root, "v"), nasty);
    free(w);
    tt_xml_doc_free(d2);
    free(stable_write("<s a=\"&#9;x&#10;&amp;\"/>", TT_XML_NATIVE));

    /* things XML cannot carry are refused, naming the element */
    tt_xml_set(d->root, "v", "bell\a");
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NATIVE, &w, NULL), TT_ERR_INVALID);
    assert_null(w);
    assert_non_null(strstr(tt_error_message(), "<system> attribute 'v'"));
    tt_xml_set(d->root, "v", "bad \xff utf8");
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NATIVE, &w, NULL), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "UTF-8"));
    tt_xml_set(d->root, "v", "ok");
    tt_xml_set(d->root, "1bad", "x");
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NATIVE, &w, NULL), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "'1bad'"));
    tt_xml_unset(d->root, "1bad");
    tt_xml_append(d->root, tt_xml_node_new("a b"));
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NATIVE, &w, NULL), TT_ERR_INVALID);
    tt_xml_doc_free(d);

    /* no root */
    d = tt_xml_doc_new(NULL, "empty");
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NATIVE, &w, NULL), TT_ERR_INVALID);
    tt_xml_doc_free(d);
}

static void test_nccl_filtering(void **state)
{
    size_t len;
    tt_xml_doc *d = NULL;
    char *w, *expect;
    (void)state;
    assert_int_equal(tt_xml_read_file(fixture("good/native-extensions.xml"), NULL, &d), TT_OK);
    w = write_doc(d, TT_XML_NCCL);
    expect = slurp(fixture("good/native-extensions.nccl.xml"), &len);
    assert_string_equal(w, expect);
    /* spot checks that do not depend on the golden file */
    assert_null(strstr(w, "keep="));
    assert_null(strstr(w, "tt_version"));
    assert_null(strstr(w, "hostname"));
    assert_null(strstr(w, "cur_link"));
    assert_null(strstr(w, "uuid="));
    assert_null(strstr(w, "<p2p"));
    assert_null(strstr(w, "<unknown"));
    assert_null(strstr(w, "<nvswitch"));
    assert_null(strstr(w, "<finding"));
    assert_null(strstr(w, "link_layer"));
    assert_null(strstr(w, "version=\"4\""));
    assert_null(strchr(w, '\t'));
    assert_null(strstr(w, "<?xml"));
    assert_non_null(strstr(w, "<xgmi target=\"0000:2a:00.0\" count=\"2\" tclass=\"0x030200\"/>"));
    assert_non_null(strstr(w, "<pcilink target=\"0000:97:00.0\"/>"));
    assert_non_null(strstr(w, "<c2c bw=\"44712\" count=\"5\"/>"));
    assert_non_null(strstr(w, "<system version=\"1\">\n"));
    /* the NCCL output is itself stable and unchanged by another pass */
    char *again = stable_write(w, TT_XML_NCCL);
    assert_string_equal(again, w);
    free(again);
    /* the source tree was not modified by filtering */
    assert_non_null(tt_xml_find(d->root, "nvswitch", NULL, NULL));
    assert_string_equal(tt_xml_get(d->root->children[0], "keep"), "1");
    free(expect);
    free(w);
    tt_xml_doc_free(d);

    /* NCCL fixture passes through unchanged */
    expect = slurp(fixture("nccl-dump-h100-vm.xml"), &len);
    w = stable_write(expect, TT_XML_NCCL);
    assert_string_equal(w, expect);
    free(w);
    free(expect);

    /* misplaced known elements are dropped with their subtree */
    w = stable_write("<system version=\"1\"><gpu dev=\"0\"/><cpu><net name=\"x\"/><nic><net name=\"y\"/></nic>"
                     "<ext><pci busid=\"z\"/></ext></cpu></system>",
                     TT_XML_NCCL);
    assert_string_equal(w, "<system version=\"1\">\n  <cpu>\n    <nic>\n      <net name=\"y\"/>\n    </nic>\n"
                           "  </cpu>\n</system>\n");
    free(w);
}

static void test_nccl_drops_nvswitch_functions(void **state)
{
    (void)state;
    const char *in = "<system version=\"1\">\n"
                     "  <cpu numaid=\"0\" arch=\"x86_64\">\n"
                     "    <pci busid=\"0000:03:00.0\" class=\"0x060400\" link_speed=\"\" link_width=\"16\">\n"
                     "      <pci busid=\"0000:05:00.0\" class=\"0x068000\" link_speed=\"\" link_width=\"2\"/>\n"
                     "      <pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\"/>\n"
                     "    </pci>\n"
                     "  </cpu>\n"
                     "</system>\n";
    tt_xml_doc *d = NULL;
    assert_int_equal(tt_xml_read_buffer(in, strlen(in), "nvs.xml", NULL, &d), TT_OK);
    char *nccl = write_doc(d, TT_XML_NCCL);
    char *native = write_doc(d, TT_XML_NATIVE);
    assert_null(strstr(nccl, "0000:05:00.0"));     /* NVSwitch management function left out */
    assert_non_null(strstr(nccl, "0000:18:00.0")); /* its sibling GPU kept */
    assert_non_null(strstr(native, "0000:05:00.0"));
    free(nccl);
    free(native);
    tt_xml_doc_free(d);
}

static void test_nccl_knows(void **state)
{
    (void)state;
    assert_true(tt_xml_nccl_knows(NULL, "system", NULL));
    assert_true(tt_xml_nccl_knows(NULL, "system", "version"));
    assert_false(tt_xml_nccl_knows(NULL, "system", "tt_version"));
    assert_true(tt_xml_nccl_knows("system", "cpu", "affinity"));
    assert_false(tt_xml_nccl_knows("pci", "cpu", NULL));
    assert_true(tt_xml_nccl_knows("pci", "pci", "link_width"));
    assert_false(tt_xml_nccl_knows("pci", "pci", "max_link_width"));
    assert_true(tt_xml_nccl_knows("cpu", "nic", NULL));
    assert_true(tt_xml_nccl_knows("pci", "nic", NULL));
    assert_false(tt_xml_nccl_knows("system", "nic", NULL));
    assert_true(tt_xml_nccl_knows("gpu", "xgmi", "tclass"));
    assert_true(tt_xml_nccl_knows("gpu", "c2c", "bw"));
    assert_false(tt_xml_nccl_knows("gpu", "p2p", NULL));
    assert_true(tt_xml_nccl_knows("nic", "net", "plane"));
    assert_true(tt_xml_nccl_knows("nic", "net", "gin"));
    assert_false(tt_xml_nccl_knows("nic", "net", "ifname"));
    assert_false(tt_xml_nccl_knows("pci", "gpu", "keep"));
    assert_false(tt_xml_nccl_knows("system", "nvswitch", NULL));
    assert_false(tt_xml_nccl_knows(NULL, NULL, NULL));
}

/* Builds <system version=1><cpu .../></system> for the limit tests. */
static tt_xml_doc *limit_doc(tt_xml_node **cpu)
{
    tt_xml_doc *d = tt_xml_doc_new("system", "lim.xml");
    tt_xml_set(d->root, "version", "1");
    *cpu = tt_xml_node_new("cpu");
    tt_xml_append(d->root, *cpu);
    return d;
}

static void expect_limit(tt_xml_doc *d, const char *needle1, const char *needle2)
{
    char *w = (char *)1;
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NCCL, &w, NULL), TT_ERR_LIMIT);
    assert_null(w);
    if (!strstr(tt_error_message(), needle1) || (needle2 && !strstr(tt_error_message(), needle2)))
        fail_msg("message '%s' lacks '%s' / '%s'", tt_error_message(), needle1, needle2 ? needle2 : "");
    /* the native dialect has none of these limits */
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NATIVE, &w, NULL), TT_OK);
    free(w);
}

static void test_nccl_limit_attrs(void **state)
{
    tt_xml_node *cpu, *net, *nic;
    tt_xml_doc *d = limit_doc(&cpu);
    const char *names[] = {"name", "dev", "speed", "port", "latency", "guid", "maxconn", "gdr",
                           "net", "gin", "rma", "coll", "rail", "plane"};
    char *w;
    (void)state;
    nic = tt_xml_node_new("nic");
    net = tt_xml_node_new("net");
    tt_xml_append(cpu, nic);
    tt_xml_append(nic, net);
    net->line = 42;
    /* all 14 attributes NCCL knows for <net> + 20 extensions: only the
     * known ones count, so this is within the limit */
    for (int i = 0; i < 14; i++)
        tt_xml_set(net, names[i], "1");
    for (int i = 0; i < 20; i++) {
        char an[16];
        snprintf(an, sizeof an, "ext%d", i);
        tt_xml_set(net, an, "1");
    }
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NCCL, &w, NULL), TT_OK);
    free(w);

    /* No element NCCL knows has more than 14 attributes, so a tree built
     * with tt_xml_set cannot reach 17 known ones.  The check still guards
     * hand-edited nodes: give <net> 17 attribute slots with known names. */
    while (net->nattrs > 0)
        tt_xml_unset(net, net->attrs[0].name);
    for (int i = 0; i < 17; i++) {
        char an[16];
        snprintf(an, sizeof an, "s%d", i);
        tt_xml_set(net, an, "1");
    }
    assert_int_equal(net->nattrs, 17);
    for (int i = 0; i < 17; i++) {
        free(net->attrs[i].name);
        net->attrs[i].name = tt_strdup(names[i % 14]);
    }
    expect_limit(d, "lim.xml:42: NCCL dialect: <net>", "16 attributes");
    /* exactly 16 is accepted */
    free(net->attrs[16].name);
    free(net->attrs[16].value);
    net->nattrs = 16;
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NCCL, &w, NULL), TT_OK);
    free(w);
    tt_xml_doc_free(d);
}

static void test_nccl_limit_value_len(void **state)
{
    tt_xml_node *cpu;
    tt_xml_doc *d = limit_doc(&cpu);
    char v[300];
    char *w;
    (void)state;
    memset(v, 'f', sizeof v);
    v[255] = '\0';
    tt_xml_set(cpu, "affinity", v);
    tt_xml_set(cpu, "tt_note", "extension values may be longer: dropped anyway"); /* dropped */
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NCCL, &w, NULL), TT_OK);
    assert_non_null(strstr(w, v));
    free(w);
    v[255] = 'f';
    v[256] = '\0';
    tt_xml_set(cpu, "affinity", v);
    expect_limit(d, "NCCL dialect: <cpu> attribute 'affinity'", "256 characters");
    tt_xml_doc_free(d);
}

static void test_nccl_limit_nodes(void **state)
{
    tt_xml_node *cpu;
    tt_xml_doc *d = limit_doc(&cpu);
    char *w;
    tt_xml_node *last = NULL;
    (void)state;
    /* system + cpu + 254 pci = 256 elements: accepted */
    for (int i = 0; i < 254; i++) {
        last = tt_xml_node_new("pci");
        tt_xml_setf(last, "busid", "0000:%02x:00.0", i);
        tt_xml_append(cpu, last);
    }
    /* extension elements do not count */
    for (int i = 0; i < 50; i++)
        tt_xml_append(d->root, tt_xml_node_new("nvswitch"));
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NCCL, &w, NULL), TT_OK);
    free(w);
    /* 257 */
    last = tt_xml_node_new("pci");
    last->line = 300;
    tt_xml_append(cpu, last);
    expect_limit(d, "lim.xml:300: NCCL dialect: element <pci> is element number 257", "256");
    tt_xml_doc_free(d);
}

static void test_nccl_limit_bad_chars(void **state)
{
    const char *bad[] = {"Genuine\"Intel", "it's", "a<b", "a>b", "a&b", "tab\there", "new\nline"};
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tt_xml_node *cpu;
        tt_xml_doc *d = limit_doc(&cpu);
        cpu->line = 7;
        tt_xml_set(cpu, "vendor", bad[i]);
        expect_limit(d, "lim.xml:7: NCCL dialect: <cpu> attribute 'vendor'", "cannot read");
        /* the same value in a dropped extension attribute is fine */
        tt_xml_unset(cpu, "vendor");
        tt_xml_set(cpu, "tt_vendor", bad[i]);
        char *w;
        assert_int_equal(tt_xml_write_buffer(d, TT_XML_NCCL, &w, NULL), TT_OK);
        free(w);
        tt_xml_doc_free(d);
    }
}

static void test_nccl_root(void **state)
{
    tt_xml_doc *d = read_text("<graphs version=\"1\"/>");
    char *w;
    (void)state;
    assert_int_equal(tt_xml_write_buffer(d, TT_XML_NCCL, &w, NULL), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "<graphs>"));
    tt_xml_doc_free(d);
}

static void test_write_file_atomic(void **state)
{
    char dir[] = "/tmp/tt-xml-write-XXXXXX", path[256], bad[300];
    tt_xml_doc *d, *d2 = NULL;
    size_t len;
    char *b;
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.xml", dir);
    d = read_text("<system version=\"1\"><cpu numaid=\"0\" tt_x=\"1\"/></system>");
    assert_int_equal(tt_xml_write_file(d, TT_XML_NATIVE, path), TT_OK);
    assert_int_equal(tt_xml_read_file(path, NULL, &d2), TT_OK);
    assert_string_equal(tt_xml_get(d2->root->children[0], "tt_x"), "1");
    tt_xml_doc_free(d2);
    /* a refused NCCL write leaves the old file as it was */
    tt_xml_set(d->root->children[0], "vendor", "x\"y");
    assert_int_equal(tt_xml_write_file(d, TT_XML_NCCL, path), TT_ERR_LIMIT);
    b = slurp(path, &len);
    assert_string_equal(b, "<system version=\"1\">\n  <cpu numaid=\"0\" tt_x=\"1\"/>\n</system>\n");
    free(b);
    tt_xml_unset(d->root->children[0], "vendor");
    assert_int_equal(tt_xml_write_file(d, TT_XML_NCCL, path), TT_OK);
    b = slurp(path, &len);
    assert_string_equal(b, "<system version=\"1\">\n  <cpu numaid=\"0\"/>\n</system>\n");
    free(b);
    /* "-" and NULL write to standard output */
    {
        char outp[300];
        int fd, saved;
        snprintf(outp, sizeof outp, "%s/stdout.txt", dir);
        fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        fflush(stdout);
        saved = dup(1);
        dup2(fd, 1);
        assert_int_equal(tt_xml_write_file(d, TT_XML_NCCL, "-"), TT_OK);
        assert_int_equal(tt_xml_write_file(d, TT_XML_NCCL, NULL), TT_OK);
        fflush(stdout);
        dup2(saved, 1);
        close(saved);
        close(fd);
        b = slurp(outp, &len);
        assert_string_equal(b, "<system version=\"1\">\n  <cpu numaid=\"0\"/>\n</system>\n"
                               "<system version=\"1\">\n  <cpu numaid=\"0\"/>\n</system>\n");
        free(b);
        unlink(outp);
    }
    /* unwritable place */
    snprintf(bad, sizeof bad, "%s/no/such/dir/out.xml", dir);
    assert_int_equal(tt_xml_write_file(d, TT_XML_NATIVE, bad), TT_ERR_IO);
    assert_non_null(strstr(tt_error_message(), "no/such/dir"));
    tt_xml_doc_free(d);
    unlink(path);
    assert_int_equal(rmdir(dir), 0); /* no temp files left behind */
}

/* ------------------------------------------------------------------
 * Property test: random trees (names from NCCL's and our vocabulary,
 * values with characters that need escaping, UTF-8) survive
 * write -> read -> write byte-identically, and read back to the same tree.
 */
static uint32_t rng_state;

static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (rng_state >> 8) % n;
}

static const char *pick_name(void)
{
    static const char *names[] = {"system", "cpu", "pci", "gpu", "nvlink", "c2c", "xgmi", "nic", "net",
                                  "pcilink", "p2p", "unknown", "nvswitch", "findings", "finding", "x-y.z"};
    return names[rnd(sizeof names / sizeof names[0])];
}

static const char *pick_attr(void)
{
    static const char *attrs[] = {"version", "busid", "class", "link_speed", "dev", "rank", "target",
                                  "count", "name", "speed", "keep", "tt_version", "uuid", "down",
                                  "message", "a_b", "numaid", "affinity"};
    return attrs[rnd(sizeof attrs / sizeof attrs[0])];
}

static void random_value(char *v, size_t cap)
{
    static const char *pieces[] = {"a", "Z", "0", "7", " ", ".", ":", "/", "&", "<", ">", "\"", "'", "\t",
                                   "\n", "\r", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "&amp;", "]]>"};
    size_t n = 0, k = rnd(12);
    v[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        const char *p = pieces[rnd(sizeof pieces / sizeof pieces[0])];
        if (n + strlen(p) + 1 >= cap)
            break;
        strcpy(v + n, p);
        n += strlen(p);
    }
}

static tt_xml_doc *random_doc(void)
{
    tt_xml_doc *d = tt_xml_doc_new("system", "rand");
    tt_xml_node *all[300];
    int n = 1, want = 1 + (int)rnd(120);
    all[0] = d->root;
    while (n < want) {
        tt_xml_node *p = all[rnd((uint32_t)n)], *c;
        if (tt_xml_depth(p) >= 12)
            continue;
        c = tt_xml_node_new(pick_name());
        assert_int_equal(tt_xml_append(p, c), TT_OK);
        all[n++] = c;
    }
    for (int i = 0; i < n; i++) {
        int na = (int)rnd(6);
        for (int j = 0; j < na; j++) {
            char v[128];
            random_value(v, sizeof v);
            assert_int_equal(tt_xml_set(all[i], pick_attr(), v), TT_OK);
        }
    }
    return d;
}

static void assert_same_tree(const tt_xml_node *a, const tt_xml_node *b)
{
    const tt_xml_node *x = a, *y = b;
    for (; x && y; x = tt_xml_walk_next(a, x), y = tt_xml_walk_next(b, y)) {
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->nattrs, y->nattrs);
        assert_int_equal(x->nchildren, y->nchildren);
        for (int i = 0; i < x->nattrs; i++) {
            assert_string_equal(x->attrs[i].name, y->attrs[i].name);
            assert_string_equal(x->attrs[i].value, y->attrs[i].value);
        }
    }
    assert_null(x);
    assert_null(y);
}

static void test_random_round_trips(void **state)
{
    int nccl_ok = 0, nccl_refused = 0;
    (void)state;
    rng_state = 12345;
    for (int iter = 0; iter < 300; iter++) {
        tt_xml_doc *d = random_doc(), *r = NULL;
        char *w1 = write_doc(d, TT_XML_NATIVE), *w2, *n1 = NULL;
        tt_status s;
        if (tt_xml_read_buffer(w1, strlen(w1), "w1", NULL, &r) != TT_OK)
            fail_msg("iteration %d: native output does not re-read: %s\n%s", iter, tt_error_message(), w1);
        assert_same_tree(d->root, r->root);
        w2 = write_doc(r, TT_XML_NATIVE);
        assert_string_equal(w1, w2);
        free(w2);
        tt_xml_doc_free(r);

        s = tt_xml_write_buffer(d, TT_XML_NCCL, &n1, NULL);
        if (s == TT_ERR_LIMIT) {
            nccl_refused++;
        } else {
            assert_int_equal(s, TT_OK);
            nccl_ok++;
            assert_null(strchr(n1, '\t'));
            assert_null(strstr(n1, "&"));
            assert_null(strstr(n1, " keep="));
            assert_int_equal(tt_xml_read_buffer(n1, strlen(n1), "n1", NULL, &r), TT_OK);
            for (tt_xml_node *x = r->root; x; x = tt_xml_walk_next(r->root, x)) {
                assert_true(tt_xml_nccl_knows(x->parent ? x->parent->name : NULL, x->name, NULL));
                for (int i = 0; i < x->nattrs; i++)
                    assert_true(tt_xml_nccl_knows(NULL, x->name, x->attrs[i].name));
            }
            w2 = write_doc(r, TT_XML_NCCL);
            assert_string_equal(n1, w2);
            free(w2);
            tt_xml_doc_free(r);
        }
        free(n1);
        free(w1);
        tt_xml_doc_free(d);
    }
    /* both outcomes were exercised */
    assert_true(nccl_ok > 10);
    assert_true(nccl_refused > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_native_fixture_identity),
        cmocka_unit_test(test_native_canonical_layout),
        cmocka_unit_test(test_native_escaping),
        cmocka_unit_test(test_nccl_filtering),
        cmocka_unit_test(test_nccl_drops_nvswitch_functions),
        cmocka_unit_test(test_nccl_knows),
        cmocka_unit_test(test_nccl_limit_attrs),
        cmocka_unit_test(test_nccl_limit_value_len),
        cmocka_unit_test(test_nccl_limit_nodes),
        cmocka_unit_test(test_nccl_limit_bad_chars),
        cmocka_unit_test(test_nccl_root),
        cmocka_unit_test(test_write_file_atomic),
        cmocka_unit_test(test_random_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
