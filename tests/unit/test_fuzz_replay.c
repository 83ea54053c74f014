/* test_fuzz_replay.c - replay every committed fuzz input without libFuzzer.
 *
 * Each fuzz target in tests/fuzz/ is compiled into this program (gcc, the
 * normal library) with its entry point renamed, and run over its seed corpus
 * (tests/fuzz/corpus/<target>/) and over the minimized crash inputs found by
 * fuzzing (tests/fuzz/regressions/<target>/).  A target aborts when one of
 * its invariants breaks, so a regression fails `make check`.  The tests also
 * assert that each seed corpus is there, so the replay cannot silently run
 * over nothing.  See docs/reliability.md.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#define LLVMFuzzerTestOneInput tt_fuzz_xml_read_one
#include "../fuzz/fuzz_xml_read.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput tt_fuzz_topo_build_one
#include "../fuzz/fuzz_topo_build.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput tt_fuzz_tune_table_one
#include "../fuzz/fuzz_tune_table.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput tt_fuzz_measure_one
#include "../fuzz/fuzz_measure.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput tt_fuzz_parse_num_one
#include "../fuzz/fuzz_parse_num.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput tt_fuzz_scan_hwloc_one
#include "../fuzz/fuzz_scan_hwloc.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput tt_fuzz_plugin_table_one
#include "../fuzz/fuzz_plugin_table.c"
#undef LLVMFuzzerTestOneInput

typedef int (*fuzz_fn)(const uint8_t *, size_t);

static char *replay_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Run fn over every file of root/tests/fuzz/<kind>/<target>; count them. */
static int replay_dir(fuzz_fn fn, const char *kind, const char *target)
{
    const char *root = getenv("TOPOTUNE_ROOT");
    char dir[4096], path[4096 + 256];
    struct dirent *e;
    DIR *d;
    int n = 0;
    snprintf(dir, sizeof dir, "%s/tests/fuzz/%s/%s", root ? root : ".", kind, target);
    d = opendir(dir);
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        size_t len;
        char *buf;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        buf = replay_read(path, &len);
        print_message("replay %s\n", path);
        fn((const uint8_t *)buf, len);
        free(buf);
        n++;
    }
    closedir(d);
    return n;
}

/* min_regressions: the inputs committed under tests/fuzz/regressions/<target>; fewer found (a wrong
 * TOPOTUNE_ROOT, a renamed folder) fails instead of passing on nothing replayed */
static void replay_target(fuzz_fn fn, const char *target, int min_seeds, int min_regressions)
{
    int seeds = replay_dir(fn, "corpus", target);
    int regressions = replay_dir(fn, "regressions", target);
    print_message("%s: %d seeds, %d regression inputs replayed\n", target, seeds, regressions);
    if (seeds < min_seeds || regressions < min_regressions)
        print_message("%s: expected at least %d seeds and %d regression inputs (TOPOTUNE_ROOT=%s)\n", target,
                      min_seeds, min_regressions, getenv("TOPOTUNE_ROOT") ? getenv("TOPOTUNE_ROOT") : "(unset: .)");
    assert_true(seeds >= min_seeds);
    assert_true(regressions >= min_regressions);
}

static void test_replay_xml_read(void **s)
{
    (void)s;
    replay_target(tt_fuzz_xml_read_one, "fuzz_xml_read", 10, 1);
}

static void test_replay_topo_build(void **s)
{
    (void)s;
    replay_target(tt_fuzz_topo_build_one, "fuzz_topo_build", 5, 0);
}

static void test_replay_tune_table(void **s)
{
    (void)s;
    replay_target(tt_fuzz_tune_table_one, "fuzz_tune_table", 4, 2);
}

static void test_replay_measure(void **s)
{
    (void)s;
    replay_target(tt_fuzz_measure_one, "fuzz_measure", 3, 0);
}

static void test_replay_parse_num(void **s)
{
    (void)s;
    replay_target(tt_fuzz_parse_num_one, "fuzz_parse_num", 10, 2);
}

static void test_replay_scan_hwloc(void **s)
{
    (void)s;
    replay_target(tt_fuzz_scan_hwloc_one, "fuzz_scan_hwloc", 3, 0);
}

static void test_replay_plugin_table(void **s)
{
    (void)s;
    replay_target(tt_fuzz_plugin_table_one, "fuzz_plugin_table", 7, 0);
}

/* Growing text buffer for the generated inputs below. */
typedef struct {
    char *b;
    size_t n, cap;
} gen_buf;

static void gen_put(gen_buf *g, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int w = vsnprintf(g->b + g->n, g->cap - g->n, fmt, ap);
        va_end(ap);
        assert_true(w >= 0);
        if (g->n + (size_t)w < g->cap) {
            g->n += (size_t)w;
            return;
        }
        g->cap = g->cap ? g->cap * 2 : 1 << 20;
        g->b = realloc(g->b, g->cap);
        assert_non_null(g->b);
    }
}

/* The plugin reader's time budget on big inputs (issue #32 item 1), made here rather than committed
 * (1-4 MB each; scripts/dev/fuzz-plugin-seeds.py --big writes the same as files): an object of 60000
 * members, a table set of 20000 shapes and a CSV of 80000 shapes.  The reader before the fix (963c8d1) took
 * 5.8-11.8 s, 2.4-3.0 s and 2.9 s on them on the 2-vCPU dev VM (2026-12-06; budgets 0.20, 0.17 and 0.81 s):
 * the target aborts, this test fails.  The reader now: 10-30 ms each. */
static void test_replay_plugin_table_big(void **s)
{
    (void)s;
    gen_buf g = {0};
    gen_put(&g, "%c{\"schema\":\"topotune-tuning-table\",\"version\":1,\"nodes\":1,\"ranks\":8,\"entries\":[]", 0);
    for (int i = 0; i < 60000; i++)
        gen_put(&g, ",\"k%d\":%d", i, i);
    gen_put(&g, "}");
    tt_fuzz_plugin_table_one((const uint8_t *)g.b, g.n);
    g.n = 0;
    gen_put(&g, "%c{\"schema\":\"topotune-tuning-table-set\",\"version\":1,\"tables\":[", 0);
    for (int i = 0; i < 20000; i++)
        gen_put(&g, "%s{\"nodes\":%d,\"ranks\":%d,\"entries\":[]}", i ? "," : "", 1 + i / 1000,
                (1 + i / 1000) * (1 + i % 1000));
    gen_put(&g, "]}");
    tt_fuzz_plugin_table_one((const uint8_t *)g.b, g.n);
    g.n = 0;
    gen_put(&g, "%c", 1);
    for (int i = 0; i < 80000; i++)
        gen_put(&g, "allreduce,0,1099511627776,ring,simple,-1,%d,%d\n", 1 + i / 1000, (1 + i / 1000) * (1 + i % 1000));
    tt_fuzz_plugin_table_one((const uint8_t *)g.b, g.n);
    free(g.b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_xml_read),
        cmocka_unit_test(test_replay_topo_build),
        cmocka_unit_test(test_replay_tune_table),
        cmocka_unit_test(test_replay_measure),
        cmocka_unit_test(test_replay_parse_num),
        cmocka_unit_test(test_replay_scan_hwloc),
        cmocka_unit_test(test_replay_plugin_table),
        cmocka_unit_test(test_replay_plugin_table_big),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
