/* test_xml_hostile.c - hostile and broken inputs: every one must fail fast
 * with a one-line "file:line: ..." message, leak no file content, touch no
 * network, print nothing to stderr, and work from several threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tt_xml.h"

/* Generous bound for "fails quickly" on a loaded 2-core box, times
 * TOPOTUNE_TEST_SLOWDOWN when set (scripts/dev/valgrind-tests.sh sets 50: memcheck
 * runs code 20-50x slower; the bound still catches a quadratic blow-up). */
#define QUICK_S (2.0 * quick_factor())

static double quick_factor(void)
{
    const char *e = getenv("TOPOTUNE_TEST_SLOWDOWN");
    double f = e ? atof(e) : 1.0;
    return f >= 1.0 ? f : 1.0;
}

static const char *fixture(const char *rel)
{
    static __thread char path[4096];
    const char *root = getenv("TOPOTUNE_ROOT");
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", root ? root : ".", rel);
    return path;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Copy `shape` to `out`, replacing each "@@" with `value`. */
static void subst(char *out, size_t cap, const char *shape, const char *value)
{
    size_t n = 0, vl = strlen(value);
    for (; *shape; shape++) {
        if (shape[0] == '@' && shape[1] == '@') {
            assert_true(n + vl < cap);
            memcpy(out + n, value, vl);
            n += vl;
            shape++;
        } else {
            assert_true(n + 1 < cap);
            out[n++] = *shape;
        }
    }
    out[n] = '\0';
}

/* Read a bad fixture; check status, elapsed time, file name, "name:line:"
 * prefix and a substring of the message. */
static void expect_bad_file(const char *rel, tt_status want, int line, const char *needle)
{
    tt_xml_doc *d = (tt_xml_doc *)1;
    double t0 = now_s();
    tt_status s = tt_xml_read_file(fixture(rel), NULL, &d);
    double dt = now_s() - t0;
    const char *m = tt_error_message();
    char prefix[4200];
    if (s != want)
        fail_msg("%s: status %s, wanted %s (%s)", rel, tt_status_name(s), tt_status_name(want), m);
    assert_null(d);
    if (dt > QUICK_S)
        fail_msg("%s: took %.2f s", rel, dt);
    if (line > 0)
        snprintf(prefix, sizeof prefix, "%s:%d: ", fixture(rel), line);
    else
        snprintf(prefix, sizeof prefix, "%s:", fixture(rel));
    if (strncmp(m, prefix, strlen(prefix)))
        fail_msg("%s: message '%s' does not start with '%s'", rel, m, prefix);
    if (needle && !strstr(m, needle))
        fail_msg("%s: message '%s' lacks '%s'", rel, m, needle);
    assert_null(strchr(m, '\n'));
}

static void test_billion_laughs(void **state)
{
    (void)state;
    expect_bad_file("bad/billion-laughs.xml", TT_ERR_PARSE, 3, "entity declarations are not allowed");
}

static void test_xxe_file(void **state)
{
    (void)state;
    expect_bad_file("bad/xxe-file.xml", TT_ERR_PARSE, 3, "entity declarations are not allowed");
    assert_null(strstr(tt_error_message(), "root:"));
}

/* An external entity naming a file of ours with a marker: refused, and the
 * marker appears neither in the message nor in a TRACE-level log. */
static void test_xxe_no_leak(void **state)
{
    char dir[] = "/tmp/tt-xxe-XXXXXX", secret[128], logf[128], doc[1024];
    const char *marker = "TOPOTUNE-SECRET-7f3a9c";
    const char *shapes[] = {
        "<!DOCTYPE system [<!ENTITY x SYSTEM \"file://@@\">]>\n<system name=\"&x;\">&x;</system>\n",
        "<!DOCTYPE system [<!ENTITY % p SYSTEM \"file://@@\"> %p;]>\n<system/>\n",
        "<!DOCTYPE system SYSTEM \"file://@@\">\n<system/>\n",
        "<!DOCTYPE system [<!ENTITY x SYSTEM \"@@\">]>\n<system>&x;</system>\n",
    };
    FILE *f;
    char *log = NULL;
    size_t loglen = 0;
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(secret, sizeof secret, "%s/secret.txt", dir);
    snprintf(logf, sizeof logf, "%s/log.txt", dir);
    f = fopen(secret, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", marker);
    fclose(f);
    setenv("TOPOTUNE_DEBUG", "TRACE", 1);
    setenv("TOPOTUNE_DEBUG_FILE", logf, 1);
    tt_log_reinit();
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        tt_xml_doc *d = (tt_xml_doc *)1;
        subst(doc, sizeof doc, shapes[i], secret);
        assert_int_not_equal(tt_xml_read_buffer(doc, strlen(doc), "xxe.xml", NULL, &d), TT_OK);
        assert_null(d);
        assert_non_null(strstr(tt_error_message(), "xxe.xml:"));
        assert_null(strstr(tt_error_message(), marker));
    }
    unsetenv("TOPOTUNE_DEBUG");
    unsetenv("TOPOTUNE_DEBUG_FILE");
    tt_log_reinit();
    assert_int_equal(tt_read_file(logf, 0, &log, &loglen), TT_OK);
    assert_true(loglen > 0); /* the log did record the refusals */
    assert_null(strstr(log, marker));
    free(log);
    unlink(logf);
    unlink(secret);
    rmdir(dir);
}

static void test_xxe_http_fixture(void **state)
{
    (void)state;
    expect_bad_file("bad/xxe-http.xml", TT_ERR_PARSE, 2, "not allowed");
}

/* Listen on 127.0.0.1:<ephemeral>, feed documents pointing every kind of
 * external reference at it, and check that no connection ever arrived. */
static void test_xxe_http_no_network(void **state)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    int ls, port;
    char doc[1024];
    const char *shapes[] = {
        "<!DOCTYPE system SYSTEM \"http://127.0.0.1:@@/t.dtd\">\n<system/>\n",
        "<!DOCTYPE system PUBLIC \"-//x//y\" \"http://127.0.0.1:@@/t.dtd\">\n<system/>\n",
        "<!DOCTYPE system [\n<!ENTITY % r SYSTEM \"http://127.0.0.1:@@/e.dtd\">\n%r;\n]>\n<system/>\n",
        "<!DOCTYPE system [\n<!ENTITY x SYSTEM \"http://127.0.0.1:@@/s\">\n]>\n<system a=\"&x;\">&x;</system>\n",
        "<system xmlns:xi=\"http://www.w3.org/2001/XInclude\"><xi:include href=\"http://127.0.0.1:@@/x\"/></system>\n",
    };
    (void)state;
    ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    assert_true(ls >= 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(ls, 8), 0);
    assert_int_equal(getsockname(ls, (struct sockaddr *)&sa, &sl), 0);
    port = ntohs(sa.sin_port);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        tt_xml_doc *d = NULL;
        struct pollfd pfd = {.fd = ls, .events = POLLIN};
        double t0 = now_s();
        tt_status s;
        char portstr[16];
        snprintf(portstr, sizeof portstr, "%d", port);
        subst(doc, sizeof doc, shapes[i], portstr);
        s = tt_xml_read_buffer(doc, strlen(doc), "net.xml", NULL, &d);
        assert_true(now_s() - t0 < QUICK_S);
        if (i < 4) {
            assert_int_equal(s, TT_ERR_PARSE);
            assert_null(d);
            assert_non_null(strstr(tt_error_message(), "net.xml:"));
        } else {
            /* XInclude is not processed: just an element with an href */
            assert_int_equal(s, TT_OK);
            assert_string_equal(d->root->children[0]->name, "xi:include");
            assert_int_equal(d->root->children[0]->nchildren, 0);
            tt_xml_doc_free(d);
        }
        assert_int_equal(poll(&pfd, 1, 20), 0); /* nobody connected */
        assert_true(accept(ls, NULL, NULL) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    }
    close(ls);
}

static void test_truncated(void **state)
{
    (void)state;
    expect_bad_file("bad/truncated.xml", TT_ERR_PARSE, 0, NULL);
    /* the message carries a real line number */
    const char *m = tt_error_message();
    const char *p = strstr(m, "truncated.xml:");
    assert_non_null(p);
    assert_true(p[strlen("truncated.xml:")] >= '1' && p[strlen("truncated.xml:")] <= '9');
}

static void test_not_xml(void **state)
{
    (void)state;
    expect_bad_file("bad/not-xml.txt", TT_ERR_PARSE, 1, NULL);
}

static void test_empty(void **state)
{
    tt_xml_doc *d = NULL;
    (void)state;
    expect_bad_file("bad/empty.xml", TT_ERR_PARSE, 1, "document is empty");
    assert_int_equal(tt_xml_read_buffer(" \n\t\r\n ", 6, "ws.xml", NULL, &d), TT_ERR_PARSE);
    assert_string_equal(tt_error_message(), "ws.xml:1: document is empty");
    assert_int_equal(tt_xml_read_buffer("", 0, "e.xml", NULL, &d), TT_ERR_PARSE);
    assert_string_equal(tt_error_message(), "e.xml:1: document is empty");
    assert_int_equal(tt_xml_read_buffer("<!-- only a comment -->\n", 24, "c.xml", NULL, &d), TT_ERR_PARSE);
    assert_non_null(strstr(tt_error_message(), "c.xml:"));
}

static void test_mismatched(void **state)
{
    (void)state;
    expect_bad_file("bad/mismatched-tags.xml", TT_ERR_PARSE, 5, "mismatch");
}

static void test_deep_file(void **state)
{
    tt_xml_limits lim;
    tt_xml_doc *d = NULL;
    tt_xml_node *n;
    (void)state;
    /* 201 levels (system + 200 pci) against the default limit of 64: the
     * 65th level (line 65) is refused */
    expect_bad_file("bad/deep-nesting.xml", TT_ERR_LIMIT, 65, "64 levels");
    /* the limit is ours: raised, the same file parses */
    tt_xml_limits_default(&lim);
    lim.max_depth = 250;
    assert_int_equal(tt_xml_read_file(fixture("bad/deep-nesting.xml"), &lim, &d), TT_OK);
    for (n = d->root; n->nchildren; n = n->children[0])
        ;
    assert_int_equal(tt_xml_depth(n), 200);
    tt_xml_doc_free(d);
}

static char *repeat(const char *a, int na, const char *b, int nb, const char *c, size_t *len)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *s = malloc(la * na + lb * nb + lc + 1), *p = s;
    assert_non_null(s);
    for (int i = 0; i < na; i++, p += la)
        memcpy(p, a, la);
    for (int i = 0; i < nb; i++, p += lb)
        memcpy(p, b, lb);
    memcpy(p, c, lc + 1);
    *len = (size_t)(p - s) + lc;
    return s;
}

static void test_deep_memory(void **state)
{
    tt_xml_limits lim;
    tt_xml_doc *d = NULL;
    size_t len;
    double t0;
    char *s = repeat("<a>\n", 100000, "</a>", 100000, "\n", &len);
    (void)state;
    t0 = now_s();
    assert_int_equal(tt_xml_read_buffer(s, len, "deep.xml", NULL, &d), TT_ERR_LIMIT);
    assert_true(now_s() - t0 < QUICK_S);
    assert_null(d);
    assert_string_equal(tt_error_message(),
                        "deep.xml:65: element <a> is nested deeper than the limit of 64 levels");
    /* even with our limit lifted, libxml2's own cap (no XML_PARSE_HUGE) stops it */
    tt_xml_limits_default(&lim);
    lim.max_depth = 1000000;
    t0 = now_s();
    assert_int_not_equal(tt_xml_read_buffer(s, len, "deep.xml", &lim, &d), TT_OK);
    assert_true(now_s() - t0 < QUICK_S);
    assert_null(d);
    assert_non_null(strstr(tt_error_message(), "deep.xml:"));
    free(s);
}

static void test_too_many_nodes(void **state)
{
    tt_xml_doc *d = NULL;
    size_t len;
    double t0;
    /* root + 100000 children = 100001 elements, one per line */
    char *s = repeat("<r>\n", 1, "<a/>\n", 100000, "</r>\n", &len);
    (void)state;
    t0 = now_s();
    assert_int_equal(tt_xml_read_buffer(s, len, "wide.xml", NULL, &d), TT_ERR_LIMIT);
    assert_true(now_s() - t0 < QUICK_S);
    assert_null(d);
    assert_string_equal(tt_error_message(),
                        "wide.xml:100001: element <a> is beyond the limit of 100000 elements per document");
    /* one less is accepted */
    memcpy(s + len - 10, "</r>\n", 6);
    assert_int_equal(tt_xml_read_buffer(s, len - 5, "wide.xml", NULL, &d), TT_OK);
    assert_int_equal(tt_xml_count(d->root), 100000);
    /* line numbers above 65535 survive (XML_PARSE_BIG_LINES) */
    assert_int_equal(d->root->children[99998]->line, 100000);
    tt_xml_doc_free(d);
    free(s);
}

/* A non-fatal libxml2 error (parsing goes on) followed by a flood of
 * elements: the first error is reported and the limits still hold. */
static void test_error_then_flood(void **state)
{
    tt_xml_limits lim;
    tt_xml_doc *d = NULL;
    size_t len;
    char *s = repeat("<r><p:x/>\n", 1, "<a/>\n", 50000, "</r>\n", &len);
    double t0 = now_s();
    (void)state;
    tt_xml_limits_default(&lim);
    lim.max_nodes = 1000;
    assert_int_equal(tt_xml_read_buffer(s, len, "ns.xml", &lim, &d), TT_ERR_PARSE);
    assert_true(now_s() - t0 < QUICK_S);
    assert_null(d);
    assert_non_null(strstr(tt_error_message(), "ns.xml:1: Namespace prefix p"));
    free(s);
}

static void test_oversize(void **state)
{
    char path[] = "/tmp/tt-xml-big-XXXXXX";
    tt_xml_limits lim;
    tt_xml_doc *d = NULL;
    size_t len;
    char *s = repeat("<system>\n", 1, "  <cpu numaid=\"0\"/>\n", 100, "</system>\n", &len);
    int fd = mkstemp(path);
    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, s, len), (ssize_t)len);
    close(fd);
    tt_xml_limits_default(&lim);
    lim.max_bytes = 1000; /* file is ~2 KiB */
    assert_int_equal(tt_xml_read_file(path, &lim, &d), TT_ERR_LIMIT);
    assert_null(d);
    assert_non_null(strstr(tt_error_message(), path));
    assert_non_null(strstr(tt_error_message(), "1000-byte limit"));
    assert_int_equal(tt_xml_read_buffer(s, len, "big.xml", &lim, &d), TT_ERR_LIMIT);
    assert_non_null(strstr(tt_error_message(), "big.xml"));
    lim.max_bytes = len;
    assert_int_equal(tt_xml_read_file(path, &lim, &d), TT_OK);
    assert_int_equal(tt_xml_count(d->root), 101);
    tt_xml_doc_free(d);
    unlink(path);
    free(s);
}

/* libxml2 must never write to stderr, whatever the input. */
static void test_silent_stderr(void **state)
{
    const char *bad[] = {"bad/billion-laughs.xml", "bad/xxe-file.xml", "bad/xxe-http.xml",
                         "bad/truncated.xml", "bad/not-xml.txt", "bad/mismatched-tags.xml",
                         "bad/empty.xml", "bad/deep-nesting.xml"};
    const char *bufs[] = {"<a b='1' b='2'/>", "<a>&#0;</a>", "<a:b/>", "<a>\xff</a>",
                          "<!DOCTYPE a [ %pe; ]><a/>", "<a xmlns:p='rel/uri'/>", "<a>]]></a>"};
    char path[] = "/tmp/tt-xml-stderr-XXXXXX";
    int fd = mkstemp(path), saved;
    char *out = NULL;
    size_t len = 0;
    (void)state;
    assert_true(fd >= 0);
    fflush(stderr);
    saved = dup(2);
    dup2(fd, 2);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tt_xml_doc *d = NULL;
        tt_xml_read_file(fixture(bad[i]), NULL, &d);
        tt_xml_doc_free(d);
    }
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        tt_xml_doc *d = NULL;
        tt_xml_read_buffer(bufs[i], strlen(bufs[i]), "b.xml", NULL, &d);
        tt_xml_doc_free(d);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    assert_int_equal(tt_read_file(path, 0, &out, &len), TT_OK);
    if (len)
        fail_msg("stderr got: %s", out);
    free(out);
    unlink(path);
}

/* Several threads parse good and hostile files at once. */
static void *parse_worker(void *arg)
{
    long bad = 0;
    (void)arg;
    for (int i = 0; i < 30; i++) {
        tt_xml_doc *d = NULL;
        if (tt_xml_read_file(fixture("nccl-dump-h100-vm.xml"), NULL, &d) != TT_OK ||
            tt_xml_count(d->root) != 6)
            bad++;
        tt_xml_doc_free(d);
        d = NULL;
        if (tt_xml_read_file(fixture("bad/billion-laughs.xml"), NULL, &d) != TT_ERR_PARSE || d ||
            !strstr(tt_error_message(), "billion-laughs.xml:3: entity declarations"))
            bad++;
        if (tt_xml_read_file(fixture("bad/mismatched-tags.xml"), NULL, &d) != TT_ERR_PARSE ||
            !strstr(tt_error_message(), "mismatched-tags.xml:5: "))
            bad++;
    }
    return (void *)bad;
}

static void test_threads(void **state)
{
    pthread_t th[4];
    (void)state;
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, parse_worker, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        assert_int_equal((long)r, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test(test_xxe_file),
        cmocka_unit_test(test_xxe_no_leak),
        cmocka_unit_test(test_xxe_http_fixture),
        cmocka_unit_test(test_xxe_http_no_network),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_not_xml),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_mismatched),
        cmocka_unit_test(test_deep_file),
        cmocka_unit_test(test_deep_memory),
        cmocka_unit_test(test_too_many_nodes),
        cmocka_unit_test(test_error_then_flood),
        cmocka_unit_test(test_oversize),
        cmocka_unit_test(test_silent_stderr),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
