/*
 * test_tune_plugin.c - the NCCL tuner plugin: dlopen the built .so, find the exported
 * ncclTunerPlugin_v6/_v5/_v4, call init/getCollInfo with a fake cost table.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <unistd.h>

#include "tt_tune.h"
#include "tune_testtopo.h"

typedef int (*logger_t)(int, unsigned long, const char *, int, const char *, ...);
typedef struct {
    const char *name;
    int (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, void *logf, void *nvl, void *consts);
    int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps, float **table, int numAlgo,
                       int numProto, int regBuff, int *nChannels);
    int (*finalize)(void *ctx);
    int (*getChunkSize)(void *ctx, int collType, size_t nBytes, int algo, int proto, int nChannels, size_t *chunk);
} v6_t;
typedef struct {
    const char *name;
    int (*init)(size_t nRanks, size_t nNodes, void *logf, void **ctx);
    int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps, float **table, int numAlgo,
                       int numProto, int regBuff, int *nChannels);
    int (*destroy)(void *ctx);
} v4_t;

static char logbuf[8192];
static void test_logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    (void)level; (void)flags; (void)file; (void)line;
    size_t l = strlen(logbuf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(logbuf + l, sizeof logbuf - l, fmt, ap);
    va_end(ap);
    l = strlen(logbuf);
    if (l + 1 < sizeof logbuf) { logbuf[l] = '\n'; logbuf[l + 1] = 0; }
}

static void *so;
static char tabpath[256];

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("BUILD");
    char path[512];
    snprintf(path, sizeof path, "%s/lib/libnccl-tuner-topotune.so", b && *b ? b : "build");
    so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so) { fprintf(stderr, "dlopen %s: %s\n", path, dlerror()); return -1; }
    /* a real table: NCCL model, 1 x 8 H100 (ring/LL 24 ch at 1 MiB, NVLS from 2 MiB) */
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_cluster c;
    if (tt_cluster_from_topo(t, &c) != TT_OK) return -1;
    tt_tune_ctx *ctx;
    if (tt_tune_ctx_new(t, &c, TT_MODEL_NCCL, NULL, &ctx) != TT_OK) return -1;
    tt_tune_table tab;
    if (tt_tune_table_build(ctx, 1u << TT_COLL_ALLREDUCE, 8, 1ULL << 30, 1, &tab) != TT_OK) return -1;
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_tune_write_json(ctx, &tab, &sb);
    snprintf(tabpath, sizeof tabpath, "/tmp/topotune-plugin-%d.json", (int)getpid());
    if (tt_write_file_atomic(tabpath, sb.data, sb.len) != TT_OK) return -1;
    tt_strbuf_free(&sb);
    tt_tune_table_free(&tab);
    tt_tune_ctx_free(ctx);
    tb_free(t);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(tabpath);
    if (so) dlclose(so);
    return 0;
}

static void fill(float *t, float v) { for (int i = 0; i < 21; i++) t[i] = v; }
#define CELL(t, a, p) ((t)[(a) * 3 + (p)])

static void test_v6_applies_table(void **state)
{
    (void)state;
    const v6_t *p = dlsym(so, "ncclTunerPlugin_v6");
    assert_non_null(p);
    assert_string_equal(p->name, "topotune");
    assert_non_null(dlsym(so, "ncclTunerPlugin_v5"));
    setenv("TOPOTUNE_TUNER_TABLE", tabpath, 1);
    logbuf[0] = 0;
    void *ctx = NULL;
    assert_int_equal(p->init(&ctx, 42, 8, 1, (void *)test_logger, NULL, NULL), 0);
    assert_non_null(strstr(logbuf, "rules from"));
    float t[21];
    int nch = 0;
    /* 1 MiB allreduce (collType 4): ring/LL with 24 channels */
    fill(t, 100.0f);
    assert_int_equal(p->getCollInfo(ctx, 4, 1 << 20, 1, (float **)t, 7, 3, 0, &nch), 0);
    assert_float_equal(CELL(t, TT_ALGO_RING, TT_PROTO_LL), 0.0, 0);
    assert_int_equal(nch, 24);
    int zeros = 0;
    for (int i = 0; i < 21; i++) zeros += t[i] == 0.0f;
    assert_int_equal(zeros, 1);
    /* 4 MiB: the table says NVLS; NCCL marked NVLS unsupported (-1): never enabled */
    fill(t, 100.0f);
    CELL(t, TT_ALGO_NVLS, TT_PROTO_SIMPLE) = -1.0f;
    nch = 0;
    assert_int_equal(p->getCollInfo(ctx, 4, 4 << 20, 1, (float **)t, 7, 3, 0, &nch), 0);
    assert_float_equal(CELL(t, TT_ALGO_NVLS, TT_PROTO_SIMPLE), -1.0, 0);
    for (int i = 0; i < 21; i++) if (i != TT_ALGO_NVLS * 3 + TT_PROTO_SIMPLE) assert_float_equal(t[i], 100.0, 0);
    assert_int_equal(nch, 0);
    /* same size, NVLS supported: chosen with 16 channels */
    fill(t, 100.0f);
    assert_int_equal(p->getCollInfo(ctx, 4, 4 << 20, 1, (float **)t, 7, 3, 0, &nch), 0);
    assert_float_equal(CELL(t, TT_ALGO_NVLS, TT_PROTO_SIMPLE), 0.0, 0);
    assert_int_equal(nch, 16);
    /* a collective the table does not cover (broadcast): untouched */
    fill(t, 100.0f);
    nch = 0;
    assert_int_equal(p->getCollInfo(ctx, 0, 1 << 20, 1, (float **)t, 7, 3, 0, &nch), 0);
    for (int i = 0; i < 21; i++) assert_float_equal(t[i], 100.0, 0);
    assert_int_equal(nch, 0);
    size_t chunk = 12345;
    assert_int_equal(p->getChunkSize(ctx, 4, 1 << 20, 1, 0, 24, &chunk), 0);
    assert_int_equal(chunk, 12345);
    assert_int_equal(p->finalize(ctx), 0);
}

static void test_mismatch_and_unset(void **state)
{
    (void)state;
    const v6_t *p = dlsym(so, "ncclTunerPlugin_v6");
    assert_non_null(p);
    setenv("TOPOTUNE_TUNER_TABLE", tabpath, 1);
    logbuf[0] = 0;
    void *ctx = NULL;
    /* communicator of 16 ranks on 2 nodes: a shape the table lacks, reported, table not used */
    assert_int_equal(p->init(&ctx, 1, 16, 2, (void *)test_logger, NULL, NULL), 0);
    assert_non_null(strstr(logbuf, "has no table for 16 ranks on 2 nodes (it has 8x1); NCCL decides"));
    float t[21];
    int nch = 0;
    fill(t, 100.0f);
    assert_int_equal(p->getCollInfo(ctx, 4, 1 << 20, 1, (float **)t, 7, 3, 0, &nch), 0);
    for (int i = 0; i < 21; i++) assert_float_equal(t[i], 100.0, 0);
    assert_int_equal(p->finalize(ctx), 0);
    /* broken file (rewritten: a new size, so the plugin's per-process cache reads it again):
     * warning, no failure */
    FILE *f = fopen(tabpath, "w");
    assert_non_null(f);
    fputs("{{{{", f);
    fclose(f);
    logbuf[0] = 0;
    assert_int_equal(p->init(&ctx, 1, 8, 1, (void *)test_logger, NULL, NULL), 0);
    assert_non_null(strstr(logbuf, "not valid JSON"));
    assert_int_equal(p->finalize(ctx), 0);
    /* unset: inactive */
    unsetenv("TOPOTUNE_TUNER_TABLE");
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    logbuf[0] = 0;
    assert_int_equal(p->init(&ctx, 1, 8, 1, (void *)test_logger, NULL, NULL), 0);
    assert_non_null(strstr(logbuf, "neither TOPOTUNE_TUNER_TABLE nor NCCL_TUNER_CONFIG_FILE is set"));
    assert_int_equal(p->finalize(ctx), 0);
    /* v4 entry point works the same way */
    const v4_t *p4 = dlsym(so, "ncclTunerPlugin_v4");
    assert_non_null(p4);
    assert_int_equal(p4->init(8, 1, (void *)test_logger, &ctx), 0);
    assert_int_equal(p4->destroy(ctx), 0);
}

/* A table from measurements (tests/fixtures/measurements/gpu-h200x2, our executor's forced
 * sweeps beside NCCL's own choice): forced sizes set their cell, sizes left to NCCL and sizes
 * outside the measured span are untouched, and no channel count is imposed. */
static void test_measured_table(void **state)
{
    (void)state;
    const char *root = getenv("TOPOTUNE_ROOT");
    static const char *files[] = {"ring-ll", "ring-simple", "tree-ll", "tree-simple", "nccl-default"};
    tt_measure_set ms = {0};
    for (int i = 0; i < 5; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/fixtures/measurements/gpu-h200x2/sweep-%s.txt", root && *root ? root : ".",
                 files[i]);
        if (tt_measure_load(path, NULL, &ms) != TT_OK) fail_msg("%s", tt_error_message());
    }
    tt_measured_table mt;
    if (tt_tune_measured_build(&ms, 0.03, 1, &mt) != TT_OK) fail_msg("%s", tt_error_message());
    assert_int_equal(mt.n, 16);
    assert_int_equal(mt.nranks, 2);
    /* 8 B: tree/ll 11.54 vs ring/ll 11.35 us: ring/ll, far under NCCL's 19.20 us */
    assert_true(mt.rows[0].forced && mt.rows[0].algo == TT_ALGO_RING && mt.rows[0].proto == TT_PROTO_LL);
    /* 512 KiB: NCCL's own choice (17.34 us) beats every candidate: left to NCCL */
    assert_true(mt.rows[8].bytes == 524288 && !mt.rows[8].forced);
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    assert_int_equal(tt_measured_write_json(&mt, "test", &sb), TT_OK);
    char path[256];
    snprintf(path, sizeof path, "/tmp/topotune-plugin-meas-%d.json", (int)getpid());
    assert_int_equal(tt_write_file_atomic(path, sb.data, sb.len), TT_OK);
    const v6_t *p = dlsym(so, "ncclTunerPlugin_v6");
    setenv("TOPOTUNE_TUNER_TABLE", path, 1);
    logbuf[0] = 0;
    void *ctx = NULL;
    assert_int_equal(p->init(&ctx, 7, 2, 1, (void *)test_logger, NULL, NULL), 0);
    assert_non_null(strstr(logbuf, "rules from"));
    float t[21];
    int nch = 0;
    fill(t, 100.0f);
    assert_int_equal(p->getCollInfo(ctx, 4, 8, 1, (float **)t, 7, 3, 0, &nch), 0);
    assert_float_equal(CELL(t, TT_ALGO_RING, TT_PROTO_LL), 0.0, 0);
    assert_int_equal(nch, 0);
    fill(t, 100.0f);
    assert_int_equal(p->getCollInfo(ctx, 4, 524288, 1, (float **)t, 7, 3, 0, &nch), 0);
    for (int i = 0; i < 21; i++) assert_float_equal(t[i], 100.0, 0);
    fill(t, 100.0f); /* above the largest measured size */
    assert_int_equal(p->getCollInfo(ctx, 4, 16ULL << 30, 1, (float **)t, 7, 3, 0, &nch), 0);
    for (int i = 0; i < 21; i++) assert_float_equal(t[i], 100.0, 0);
    assert_int_equal(p->finalize(ctx), 0);
    unlink(path);
    tt_strbuf_free(&sb);
    tt_measured_table_free(&mt);
    tt_measure_set_free(&ms);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v6_applies_table),
        cmocka_unit_test(test_mismatch_and_unset),
        cmocka_unit_test(test_measured_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
