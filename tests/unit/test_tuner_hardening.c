/*
 * test_tuner_hardening.c - the NCCL tuner plugin's table reading, hardened (issue #32, items 1-4):
 * read once per process, regular files only (a FIFO and "-" are refused at once), big tables in
 * n log n time or refused by the reader's limits, \u0000, invalid UTF-8, a byte order mark and an
 * empty file.  dlopens the built .so like test_tune_plugin.c; a refused table is a warning and
 * NCCL's choice, never a failed init.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *name;
    int (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, void *logf, void *nvl, void *consts);
    int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps, float **table, int numAlgo,
                       int numProto, int regBuff, int *nChannels);
    int (*finalize)(void *ctx);
} v6_t;

static char logbuf[65536];
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static void test_logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    (void)level; (void)flags; (void)file; (void)line;
    pthread_mutex_lock(&log_lock);
    size_t l = strlen(logbuf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(logbuf + l, sizeof logbuf - l, fmt, ap);
    va_end(ap);
    l = strlen(logbuf);
    if (l + 1 < sizeof logbuf) { logbuf[l] = '\n'; logbuf[l + 1] = 0; }
    pthread_mutex_unlock(&log_lock);
}

static void *so;
static const v6_t *p6;
static char dir[64];

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("BUILD");
    char path[512];
    snprintf(path, sizeof path, "%s/lib/libnccl-tuner-topotune.so", b && *b ? b : "build");
    so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so) { fprintf(stderr, "dlopen %s: %s\n", path, dlerror()); return -1; }
    p6 = dlsym(so, "ncclTunerPlugin_v6");
    snprintf(dir, sizeof dir, "/tmp/topotune-hard-XXXXXX");
    if (!p6 || !mkdtemp(dir)) return -1;
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    unsetenv("TOPOTUNE_TUNER_FALLBACK");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
    if (so) dlclose(so);
    return 0;
}

static const char *file_in(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static void put(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* one communicator init (8 ranks on 1 node) with TOPOTUNE_TUNER_TABLE=path; the log in logbuf;
 * returns the seconds it took and whether a rule was chosen (a 1 MiB allreduce set to 0.0) */
static double init_with(const char *path, int *tuned)
{
    setenv("TOPOTUNE_TUNER_TABLE", path, 1);
    logbuf[0] = 0;
    void *ctx = NULL;
    double t0 = now();
    assert_int_equal(p6->init(&ctx, 1, 8, 1, (void *)test_logger, NULL, NULL), 0);
    double dt = now() - t0;
    float t[21];
    for (int i = 0; i < 21; i++) t[i] = 100.0f;
    int nch = 0;
    assert_int_equal(p6->getCollInfo(ctx, 4, 1 << 20, 1, (float **)t, 7, 3, 0, &nch), 0);
    int z = 0;
    for (int i = 0; i < 21; i++) z += t[i] == 0.0f;
    if (tuned) *tuned = z;
    assert_int_equal(p6->finalize(ctx), 0);
    return dt;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *q = hay; (q = strstr(q, needle)); q += strlen(needle)) n++;
    return n;
}

#define TABLE_HEAD "{\"schema\":\"topotune-tuning-table\",\"version\":1,\"model\":\"test\",\"nodes\":1,\"ranks\":8,"
#define ENTRY(coll) "{\"collective\":\"" coll "\",\"min_bytes\":0,\"max_bytes\":1048576,\"algorithm\":\"ring\",\"protocol\":\"ll\"}"

static void test_read_once(void **state)
{
    (void)state;
    const char *path = file_in("once.json");
    const char *txt = TABLE_HEAD "\"entries\":[" ENTRY("allreduce") "]}\n";
    put(path, txt, strlen(txt));
    int tuned = 0;
    init_with(path, &tuned);
    assert_int_equal(tuned, 1);
    assert_int_equal(count(logbuf, "topotune tuner: read "), 1);
    /* the same file again: taken from the process's cache, not read */
    init_with(path, &tuned);
    assert_int_equal(tuned, 1);
    assert_int_equal(count(logbuf, "topotune tuner: read "), 0);
    assert_non_null(strstr(logbuf, "rules from"));
    /* a new file under the same name (another inode and size): read again */
    const char *txt2 = TABLE_HEAD "\"entries\":[" ENTRY("allreduce") "," ENTRY("broadcast") "]}\n";
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    put(tmp, txt2, strlen(txt2));
    assert_int_equal(rename(tmp, path), 0);
    init_with(path, &tuned);
    assert_int_equal(count(logbuf, "topotune tuner: read "), 1);
    assert_non_null(strstr(logbuf, ": 2 rules"));
}

static void *init_thread(void *arg)
{
    void *ctx = NULL;
    long rc = p6->init(&ctx, 1, 8, 1, (void *)test_logger, NULL, NULL);
    if (!rc) rc = p6->finalize(ctx);
    (void)arg;
    return (void *)rc;
}

/* communicators created on several threads at once: one read, every one tuned */
static void test_threads(void **state)
{
    (void)state;
    const char *path = file_in("threads.json");
    const char *txt = TABLE_HEAD "\"entries\":[" ENTRY("allreduce") "," ENTRY("allgather") "]}\n";
    put(path, txt, strlen(txt));
    setenv("TOPOTUNE_TUNER_TABLE", path, 1);
    logbuf[0] = 0;
    pthread_t th[8];
    for (int i = 0; i < 8; i++) assert_int_equal(pthread_create(&th[i], NULL, init_thread, NULL), 0);
    for (int i = 0; i < 8; i++) {
        void *rc = (void *)1;
        assert_int_equal(pthread_join(th[i], &rc), 0);
        assert_null(rc);
    }
    assert_int_equal(count(logbuf, "topotune tuner: read "), 1);
    assert_int_equal(count(logbuf, "2 rules from"), 8);
}

static void test_fifo_and_stdin(void **state)
{
    (void)state;
    const char *fifo = file_in("fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int tuned = 1;
    double dt = init_with(fifo, &tuned); /* no writer: opening must not wait */
    assert_true(dt < 10.0);
    assert_int_equal(tuned, 0);
    assert_non_null(strstr(logbuf, "is a FIFO; a tuner table must be a regular file; keeping NCCL's choices"));
    init_with("-", &tuned);
    assert_int_equal(tuned, 0);
    assert_non_null(strstr(logbuf, "'-' (standard input) is not accepted"));
    init_with(dir, &tuned);
    assert_non_null(strstr(logbuf, "is a directory"));
}

static void test_strings(void **state)
{
    (void)state;
    int tuned = 1;
    /* \u0000 inside a name: refused, not cut at the NUL */
    const char *nul = TABLE_HEAD "\"entries\":[" ENTRY("allreduce\\u0000garbage") "]}\n";
    put(file_in("nul.json"), nul, strlen(nul));
    init_with(file_in("nul.json"), &tuned);
    assert_int_equal(tuned, 0);
    assert_non_null(strstr(logbuf, "nul.json:1: not valid JSON: a \\u0000 escape (NUL) inside a string"));
    /* invalid UTF-8 (a lone continuation byte, then an overlong '/'): refused with its offset */
    const char *bad = TABLE_HEAD "\"model\x80\":1,\"entries\":[]}";
    put(file_in("utf8.json"), bad, strlen(bad));
    init_with(file_in("utf8.json"), &tuned);
    assert_int_equal(tuned, 0);
    char want[128];
    snprintf(want, sizeof want, "utf8.json:1: not valid JSON: invalid UTF-8 in a string (byte offset %d)",
             (int)(strchr(bad, '\x80') - bad));
    assert_non_null(strstr(logbuf, want));
    const char *over = TABLE_HEAD "\"entries\":[],\"x\":\"\xC0\xAF\"}";
    put(file_in("overlong.json"), over, strlen(over));
    init_with(file_in("overlong.json"), &tuned);
    assert_non_null(strstr(logbuf, "invalid UTF-8 in a string"));
    /* valid UTF-8 (2, 3 and 4 bytes) and escapes still pass */
    const char *good = "{\"schema\":\"topotune-tuning-table\",\"version\":1,\"model\":\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\\u00e9\","
                       "\"nodes\":1,\"ranks\":8,\"entries\":[" ENTRY("allreduce") "]}";
    put(file_in("good.json"), good, strlen(good));
    init_with(file_in("good.json"), &tuned);
    assert_int_equal(tuned, 1);
    /* a UTF-8 byte order mark: skipped, then read as JSON (not as CSV) */
    char bom[1024];
    snprintf(bom, sizeof bom, "\xEF\xBB\xBF%s", TABLE_HEAD "\"entries\":[" ENTRY("allreduce") "]}\n");
    put(file_in("bom.json"), bom, strlen(bom));
    init_with(file_in("bom.json"), &tuned);
    assert_int_equal(tuned, 1);
    assert_non_null(strstr(logbuf, "(model test)"));
    const char *bomcsv = "\xEF\xBB\xBF" "allreduce,0,1048576,ring,ll,-1,1,8\n";
    put(file_in("bom.csv"), bomcsv, strlen(bomcsv));
    init_with(file_in("bom.csv"), &tuned);
    assert_int_equal(tuned, 1);
    /* empty and blank files */
    put(file_in("empty.json"), "", 0);
    init_with(file_in("empty.json"), &tuned);
    assert_int_equal(tuned, 0);
    assert_non_null(strstr(logbuf, "empty.json: is empty; keeping NCCL's choices"));
    put(file_in("blank.csv"), "\xEF\xBB\xBF \n\n", 6);
    init_with(file_in("blank.csv"), &tuned);
    assert_non_null(strstr(logbuf, "blank.csv: is empty (only white space)"));
}

/* a generated file of `n` pieces: head, n x piece(i), tail */
static void gen(const char *path, const char *head, const char *tail, int n, int (*piece)(char *, size_t, int))
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(head, f);
    char buf[512];
    for (int i = 0; i < n; i++) {
        piece(buf, sizeof buf, i);
        fputs(buf, f);
    }
    fputs(tail, f);
    assert_int_equal(fclose(f), 0);
}

static int member(char *b, size_t cap, int i) { return snprintf(b, cap, "\"m%d\":%d,", i, i); }
static int table(char *b, size_t cap, int i)
{
    return snprintf(b, cap, "%s{\"schema\":\"topotune-tuning-table\",\"version\":1,\"nodes\":%d,\"ranks\":%d,\"entries\":["
                    ENTRY("allreduce") "]}", i ? "," : "", 1 + i / 1000, 8 * (1 + i / 1000) + i % 1000);
}
static int csvrow(char *b, size_t cap, int i)
{
    return snprintf(b, cap, "allreduce,0,1048576,ring,ll,-1,%d,%d\n", 1 + i / 1000, 8 * (1 + i / 1000) + i % 1000);
}

static void test_big_tables(void **state)
{
    (void)state;
    int tuned;
    /* 60000 members in one object (duplicates checked by sorting): read in well under 10 s */
    gen(file_in("members.json"), TABLE_HEAD, "\"entries\":[" ENTRY("allreduce") "]}", 60000, member);
    double dt = init_with(file_in("members.json"), &tuned);
    assert_int_equal(tuned, 1);
    assert_true(dt < 10.0);
    /* a repeat among them is still found (the first repeat in file order) */
    gen(file_in("dupmember.json"), TABLE_HEAD "\"m59999\":0,", "\"entries\":[]}", 60000, member);
    init_with(file_in("dupmember.json"), &tuned);
    assert_non_null(strstr(logbuf, "a member name appears twice in one object (\"m59999\")"));
    /* 160000 members: over the reader's limit, refused at once */
    gen(file_in("members160k.json"), TABLE_HEAD, "\"entries\":[]}", 160000, member);
    dt = init_with(file_in("members160k.json"), &tuned);
    assert_true(dt < 10.0);
    assert_non_null(strstr(logbuf, "an object with more than 65536 members (the reader's limit)"));
    /* a set of 60000 tables (shapes checked by sorting): read in well under 10 s; a second init
     * takes it from the cache */
    const char *sethead = "{\"schema\":\"topotune-tuning-table-set\",\"version\":1,\"tables\":[";
    gen(file_in("set.json"), sethead, "]}", 60000, table);
    dt = init_with(file_in("set.json"), &tuned);
    assert_true(dt < 10.0);
    assert_int_equal(count(logbuf, "topotune tuner: read "), 1);
    assert_int_equal(tuned, 1); /* tables[0] is 8 ranks on 1 node */
    dt = init_with(file_in("set.json"), &tuned);
    assert_int_equal(count(logbuf, "topotune tuner: read "), 0);
    assert_int_equal(tuned, 1);
    /* 80000 tables: over the limit */
    gen(file_in("set80k.json"), sethead, "]}", 80000, table);
    dt = init_with(file_in("set80k.json"), &tuned);
    assert_true(dt < 10.0);
    assert_non_null(strstr(logbuf, "80000 tables in the set; the reader's limit is 65536"));
    /* a repeated shape in a big set: the later table named, with the first */
    gen(file_in("setdup.json"), sethead, ",{\"schema\":\"topotune-tuning-table\",\"version\":1,\"nodes\":2,\"ranks\":16,"
        "\"entries\":[]}]}", 20000, table);
    init_with(file_in("setdup.json"), &tuned);
    assert_non_null(strstr(logbuf, "tables[20000] is for 16 ranks on 2 node(s), like tables[1000]"));
    /* a CSV of 80000 shapes: read, and the missing shape's message lists them in n log n */
    gen(file_in("shapes.csv"), "", "", 80000, csvrow);
    setenv("TOPOTUNE_TUNER_TABLE", file_in("shapes.csv"), 1);
    logbuf[0] = 0;
    void *ctx = NULL;
    double t0 = now();
    assert_int_equal(p6->init(&ctx, 1, 3, 1, (void *)test_logger, NULL, NULL), 0);
    assert_true(now() - t0 < 10.0);
    assert_non_null(strstr(logbuf, "has no table for 3 ranks on 1 nodes (it has 8x1, 9x1, 10x1,"));
    assert_int_equal(p6->finalize(ctx), 0);
    dt = init_with(file_in("shapes.csv"), &tuned);
    assert_int_equal(tuned, 1);
    assert_int_equal(count(logbuf, "topotune tuner: read "), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_once),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_fifo_and_stdin),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_big_tables),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
