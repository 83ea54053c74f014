/*
 * test_tune_write.c - what topo-tune's front end asks of tune/ in one call each: the output of a
 * context in every format (tune_write.c), a table set's writer, shapes parsing, loading several
 * measurement files, the calibration report and the --expect rows and text (tune_calib_text.c),
 * and the table-build bench (tune_bench.c).
 */
#include "topo_test_util.h"

#include <stdint.h>
#include <unistd.h>

#include "tt_tune.h"

typedef struct {
    tt_xml_doc *doc;
    tt_topo *t;
    tt_cluster c;
    tt_tune_ctx *ctx;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    fx->t = tu_load("hgx-h100-8gpu.xml", NULL, &fx->doc);
    tt_cluster_overrides ov = TT_CLUSTER_OVERRIDES_NONE;
    if (tt_cluster_for_topo(fx->t, 1, &ov, &fx->c) != TT_OK) return -1;
    if (tt_tune_ctx_new(fx->t, &fx->c, TT_MODEL_TOPOTUNE, NULL, &fx->ctx) != TT_OK) return -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    tt_tune_ctx_free(fx->ctx);
    tt_topo_free(fx->t);
    tt_xml_doc_free(fx->doc);
    free(fx);
    return 0;
}

static tt_tune_write_opts opts(tt_tune_format f)
{
    tt_tune_write_opts o = {f, (1u << TT_COLL_COUNT) - 1, 1024, 1 << 20, 1, -1, 0, 0}; /* nccl_only: CSV */
    return o;
}

/* every format of tt_tune_write_output is the writer it names */
static void test_write_output(void **state)
{
    fixture *fx = *state;
    tt_tune_write_opts o = opts(TT_TUNE_FMT_TABLE);
    tt_tune_table tab;
    tt_status bst = tt_tune_table_build(fx->ctx, o.colls, o.min_size, o.max_size, 1, &tab);
    if (bst != TT_OK) fail_msg("%s", tt_error_message());
    tt_strbuf a, b;
    for (int f = TT_TUNE_FMT_TABLE; f <= TT_TUNE_FMT_ENV; f++) {
        tt_strbuf_init(&a);
        tt_strbuf_init(&b);
        o.format = (tt_tune_format)f;
        if (tt_tune_write_output(fx->t, fx->ctx, &o, NULL, &a) != TT_OK) fail_msg("%s", tt_error_message());
        tt_status st = f == TT_TUNE_FMT_TABLE  ? tt_tune_write_text(fx->ctx, &tab, &b)
                       : f == TT_TUNE_FMT_JSON ? tt_tune_write_json(fx->ctx, &tab, &b)
                       : f == TT_TUNE_FMT_CSV  ? tt_tune_write_csv(fx->ctx, &tab, &b)
                                               : tt_tune_write_env(fx->t, fx->ctx, &b);
        assert_int_equal(st, TT_OK);
        assert_string_equal(a.data, b.data);
        tt_strbuf_free(&a);
        tt_strbuf_free(&b);
    }
    tt_tune_table_free(&tab);
    /* --explain, with the sanity warnings after the candidates */
    tt_findings w;
    tt_findings_init(&w);
    tt_findings_add(&w, TT_SEV_WARN, "test-code", 0, "", "a test warning");
    tt_tune_json_extra x = {NULL, NULL, NULL, &w};
    o.explain = 1;
    o.explain_bytes = 1 << 20;
    tt_strbuf_init(&a);
    assert_int_equal(tt_tune_write_output(fx->t, fx->ctx, &o, &x, &a), TT_OK);
    assert_non_null(strstr(a.data, "sanity checks (the prediction may be wrong):\n  warning test-code: a test warning\n"));
    tt_strbuf_free(&a);
    tt_findings_free(&w);
}

static void test_shapes_and_set(void **state)
{
    fixture *fx = *state;
    tt_tune_shape *sh = NULL;
    int n = 0;
    assert_int_equal(tt_tune_shapes_parse("2x1,4x1,16x2", &sh, &n), TT_OK);
    assert_int_equal(n, 3);
    assert_int_equal(sh[2].nranks, 16);
    assert_int_equal(sh[2].nnodes, 2);
    tt_tune_set_opts so = {TT_MODEL_TOPOTUNE, NULL, 1u << TT_COLL_ALLREDUCE, 1024, 1 << 20, 1, -1};
    tt_tune_set set;
    assert_int_equal(tt_tune_set_build(fx->t, &fx->c, sh, n, &so, &set), TT_OK);
    tt_strbuf a, b;
    tt_strbuf_init(&a);
    tt_strbuf_init(&b);
    assert_int_equal(tt_tune_set_write(&set, TT_TUNE_FMT_CSV, &a), TT_OK);
    assert_int_equal(tt_tune_set_write_csv(&set, &b), TT_OK);
    assert_string_equal(a.data, b.data);
    tt_strbuf_free(&a);
    tt_strbuf_free(&b);
    tt_tune_set_free(&set);
    free(sh);
    const char *bad[] = {"", ",2x1", "2x1,", "2x1,,4x1", "2y1", "0x1", "2x0", "x", "2x1,abc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sh = (tt_tune_shape *)1;
        assert_int_equal(tt_tune_shapes_parse(bad[i], &sh, &n), TT_ERR_INVALID);
        assert_null(sh);
        assert_non_null(strstr(tt_error_message(), "want a comma-separated list of RANKSxNODES"));
    }
}

static const char *meas(const char *name)
{
    static char p[4][1024];
    static int k;
    char rel[256];
    snprintf(rel, sizeof rel, "measurements/%s", name);
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s", tu_fixture(rel));
    return p[k];
}

static void test_measure_files_and_calib_text(void **state)
{
    (void)state;
    tt_measure_opts mo = TT_MEASURE_OPTS_DEFAULT;
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_load_files(NULL, 0, &mo, &ms), TT_ERR_INVALID);
    const char *files[] = {meas("exec-ar-ring-4.json"), meas("exec-ar-tree-4.json")};
    assert_int_equal(tt_measure_load_files(files, 2, &mo, &ms), TT_OK);
    assert_true(ms.n > 0);
    tt_xml_doc *doc = NULL;
    tt_topo *t = tu_load("measurements/host-pcie-8gpu.xml", NULL, &doc);
    tt_cluster c;
    tt_cluster_overrides ov = TT_CLUSTER_OVERRIDES_NONE;
    assert_int_equal(tt_cluster_for_topo(t, 1, &ov, &c), TT_OK);
    tt_model_params start, fitted;
    tt_model_params_default(&start);
    tt_calib_report rep;
    assert_int_equal(tt_calibrate(t, &c, &ms, &start, &fitted, &rep), TT_OK);
    tt_strbuf r;
    tt_strbuf_init(&r);
    assert_int_equal(tt_calib_write_text(&rep, &ms, &start, &r), TT_OK);
    assert_non_null(strstr(r.data, "# calibration of the topotune model:"));
    assert_non_null(strstr(r.data, "# per row: |pred - meas| / meas"));
    assert_non_null(strstr(r.data, "# robust straight line per group"));
    tt_strbuf_free(&r);
    tt_calib_report_free(&rep);
    /* --expect: the measured run's ranks, one judged row per measurement, the verdict summary */
    tt_cluster ec = c;
    assert_int_equal(tt_expect_cluster(&ms, &ec), TT_OK);
    assert_int_equal(ec.gpus_per_node, 4);
    tt_tune_ctx *ctx = NULL;
    assert_int_equal(tt_tune_ctx_new(t, &ec, TT_MODEL_TOPOTUNE, &start, &ctx), TT_OK);
    tt_expect_row *rows = NULL;
    int n = 0, counts[3];
    assert_int_equal(tt_expect_rows_judge(ctx, &ms, &rows, &n), TT_OK);
    assert_int_equal(n, ms.n);
    tt_expect_verdict v = tt_expect_rows_verdict(rows, n, counts);
    assert_int_equal(counts[0] + counts[1] + counts[2], n);
    tt_strbuf_init(&r);
    assert_int_equal(tt_expect_write_text(ctx, &ec, TT_MODEL_TOPOTUNE, &start, rows, n, 1, &r), TT_OK);
    char tail[64];
    snprintf(tail, sizeof tail, "FAIL -> %s\n", tt_expect_verdict_name(v));
    assert_non_null(strstr(r.data, tail));
    tt_strbuf_free(&r);
    free(rows);
    /* the same in one call */
    tt_strbuf r2;
    tt_strbuf_init(&r);
    tt_strbuf_init(&r2);
    assert_int_equal(tt_expect_rows_judge(ctx, &ms, &rows, &n), TT_OK);
    assert_int_equal(tt_expect_write_text(ctx, &ec, TT_MODEL_TOPOTUNE, &start, rows, n, 1, &r), TT_OK);
    free(rows);
    tt_expect_opts eo = {t, &c, 0, TT_MODEL_TOPOTUNE, &start, 0, 0, 0, 0};
    tt_expect_verdict worst = TT_EXPECT_FAIL;
    assert_int_equal(tt_expect_report(&eo, &ms, &r2, &worst), TT_OK);
    assert_string_equal(r.data, r2.data);
    assert_int_equal(worst, v);
    tt_strbuf_free(&r);
    tt_strbuf_free(&r2);
    /* --judge-choices in one call: the model's table on the measured ranks */
    tt_judge_opts jo = {t, &c, 0, TT_MODEL_TOPOTUNE, &start, NULL, 0, 0.05, 1024, 1ULL << 30, 0};
    tt_judge_report jr = {0};
    assert_int_equal(tt_tune_judge_choices(&jo, &ms, &jr), TT_OK);
    assert_true(jr.n > 0);
    assert_int_equal(jr.nright + jr.nwrong + jr.nunmeasured, jr.n);
    tt_judge_report_free(&jr);
    /* a table for 8 ranks does not judge a 4-rank run */
    char tpath[] = "/tmp/test_tune_write.XXXXXX";
    int fd = mkstemp(tpath);
    assert_true(fd >= 0);
    close(fd);
    tt_cluster c8 = c;
    tt_tune_ctx *ctx8 = NULL;
    tt_tune_table tab8;
    assert_int_equal(tt_tune_ctx_new(t, &c8, TT_MODEL_TOPOTUNE, &start, &ctx8), TT_OK);
    assert_int_equal(tt_tune_table_build(ctx8, 1u << TT_COLL_ALLREDUCE, 1024, 1 << 20, 0, &tab8), TT_OK);
    tt_strbuf_init(&r);
    assert_int_equal(tt_tune_write_json(ctx8, &tab8, &r), TT_OK);
    assert_int_equal(tt_write_file_atomic(tpath, r.data, r.len), TT_OK);
    tt_strbuf_free(&r);
    tt_tune_table_free(&tab8);
    tt_tune_ctx_free(ctx8);
    jo.table = tpath;
    memset(&jr, 0, sizeof jr);
    assert_int_equal(tt_tune_judge_choices(&jo, &ms, &jr), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "measured with 4 ranks"));
    tt_judge_report_free(&jr);
    unlink(tpath);
    /* a sweep: 5 collectives x sizes 1K..8K = 20 rows */
    assert_int_equal(tt_expect_rows_sweep(ctx, (1u << TT_COLL_COUNT) - 1, 1024, 8192, &rows, &n), TT_OK);
    assert_int_equal(n, 20);
    assert_int_equal(rows[0].coll, TT_COLL_ALLREDUCE);
    free(rows);
    /* ranks that do not split over the nodes */
    ec = c;
    ec.nodes = 3;
    assert_int_equal(tt_expect_cluster(&ms, &ec), TT_ERR_INVALID);
    tt_tune_ctx_free(ctx);
    tt_measure_set_free(&ms);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

static void test_bench(void **state)
{
    fixture *fx = *state;
    tt_tune_bench b;
    assert_int_equal(tt_tune_bench_tables(fx->t, 2, TT_MODEL_TOPOTUNE, 2, &b), TT_OK);
    assert_int_equal(b.ranks, 16);
    assert_true(b.rows > 0);
    assert_true(b.best_s <= b.worst_s && b.best_s >= 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_output),
        cmocka_unit_test(test_shapes_and_set),
        cmocka_unit_test(test_measure_files_and_calib_text),
        cmocka_unit_test(test_bench),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
