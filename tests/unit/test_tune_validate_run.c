/*
 * test_tune_validate_run.c - the loop of topo-exec --validate in tune (tune_validate_run.c) and its
 * report (tune_validate_report.c), over a measurement the test plays: a choice that wins, one
 * that loses beyond the margin, one within noise, a wrong result; rounds keeping the fastest
 * time and the most wrong results; a failure part-way; the exit code class, the text report and
 * the -J document; and what comes before (tune_validate_prepare.c): the table checked against
 * the run.
 */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tt_tune.h"

/* the fake measurement: per size, per candidate the time of round 0 (round r: that + slow[r]) */
typedef struct {
    double t[4][2];          /* [size][candidate] */
    long long wrong[4][2];   /* wrong results in round 1 (round 0: none) */
    double slow[3];          /* added per round */
    int fail_at;             /* size index whose round 0 fails after its first candidate (-1: none) */
    int calls, judged[4], njudged;
} fake;

static tt_status fake_measure(void *user, const tt_validate_run *r, int i, int round, tt_validate_cand *c)
{
    fake *f = user;
    f->calls++;
    for (int k = 0; k < r->sz[i].nc; k++) {
        assert_true(c[k].t[0] == 0 && c[k].wrong[0] == -1); /* handed over cleared */
        if (f->fail_at == i && k == 1) return tt_error_set(TT_ERR_IO, "rank 1: the fake transport broke");
        for (int p = 0; p < 2; p++) {
            c[k].t[p] = f->t[i][k] + f->slow[round] + p; /* in place 1 us slower */
            c[k].busbw[p] = 1000 / c[k].t[p];
            c[k].algbw[p] = 500 / c[k].t[p];
            c[k].wrong[p] = round == 1 ? f->wrong[i][k] : 0;
        }
    }
    return TT_OK;
}

static void fake_judged(void *user, const tt_validate_run *r, int i)
{
    fake *f = user;
    (void)r;
    f->judged[f->njudged++] = i;
}

static tt_validate_size sizes[4];
static char *argv0[] = {"topo-exec", "--validate"};

/* 4 sizes of 2 candidates each (tree/simple the choice, ring/simple the runner-up) */
static void setup_run(tt_validate_run *r)
{
    memset(r, 0, sizeof *r);
    memset(sizes, 0, sizeof sizes);
    for (int i = 0; i < 4; i++) {
        sizes[i].bytes = 1024ull << (2 * i);
        sizes[i].count = sizes[i].bytes / 4;
        sizes[i].nc = 2;
        sizes[i].c[0] = (tt_validate_cand){.algo = TT_ALGO_TREE, .proto = TT_PROTO_SIMPLE, .channels = 1,
                                           .ran_channels = 1, .pred_us = 5};
        sizes[i].c[1] = (tt_validate_cand){.algo = TT_ALGO_RING, .proto = TT_PROTO_SIMPLE, .channels = 1,
                                           .ran_channels = 1, .pred_us = 6};
    }
    *r = (tt_validate_run){.coll_name = "all_reduce", .coll = TT_COLL_ALLREDUCE, .type_name = "float",
                           .op_name = "sum", .root = 0, .nranks = 4, .transport = "shm", .minb = 1024,
                           .maxb = 65536, .factor = 4, .warmup = 1, .iters = 2, .agg = 1, .check = 1,
                           .chunk_bytes = 524288, .margin = 0.05, .runners_up = 1, .rounds = 2, .argc = 2,
                           .argv = argv0, .ranked = 1, .sz = sizes, .nsz = 4};
    snprintf(r->start, sizeof r->start, "2026-12-06 00:00:00");
    snprintf(r->table_desc, sizeof r->table_desc, "t.json (4 ranks)");
    snprintf(r->model_desc, sizeof r->model_desc, "the model");
}

/* right at 1K, wrong by 200% at 4K, within noise at 16K, a wrong result at 64K */
static fake four_cases(void)
{
    fake f = {.t = {{10, 20}, {30, 10}, {10.2, 10}, {10, 20}}, .slow = {5, 0, 0}, .fail_at = -1};
    f.wrong[3][1] = 3;
    return f;
}

static char *text_of(const tt_validate_run *r, void (*w)(tt_strbuf *, const tt_validate_run *))
{
    tt_strbuf b;
    tt_strbuf_init(&b);
    w(&b, r);
    return tt_strbuf_steal(&b, NULL);
}

static void test_verdicts_and_rounds(void **state)
{
    (void)state;
    tt_validate_run r;
    setup_run(&r);
    fake f = four_cases();
    tt_validate_measurer m = {fake_measure, fake_judged, &f};
    assert_int_equal(tt_validate_measure(&r, &m), 0);
    assert_int_equal(f.calls, 8); /* 4 sizes x 2 rounds */
    assert_int_equal(f.njudged, 4);
    assert_int_equal(f.judged[3], 3);
    assert_int_equal(sizes[0].verdict, TT_VERDICT_RIGHT);
    assert_int_equal(sizes[1].verdict, TT_VERDICT_WRONG);
    assert_int_equal(sizes[1].best, 1);
    assert_true(sizes[1].loss > 1.99 && sizes[1].loss < 2.01);
    assert_int_equal(sizes[2].verdict, TT_VERDICT_NOISE);
    assert_int_equal(sizes[3].verdict, TT_VERDICT_RIGHT);
    /* round 1 was the faster (round 0: +5 us): its time and bandwidths are kept */
    assert_true(sizes[0].c[0].t[0] == 10 && sizes[0].c[0].t[1] == 11);
    assert_true(sizes[0].c[0].busbw[0] == 100);
    /* wrong results of any round are kept */
    assert_int_equal(sizes[3].c[1].wrong[0], 3);
    assert_int_equal(sizes[3].c[0].wrong[0], 0);
    assert_int_equal(tt_validate_oob(&r), 2); /* both placements of one candidate */
    /* wrong results take precedence over a wrong table; an earlier code over both */
    assert_int_equal(tt_validate_exit_code(&r, 0), TT_VALIDATE_EXIT_WRONG_RESULTS);
    assert_int_equal(tt_validate_exit_code(&r, 2), 2);
    sizes[3].c[1].wrong[0] = sizes[3].c[1].wrong[1] = 0;
    assert_int_equal(tt_validate_exit_code(&r, 0), TT_VALIDATE_EXIT_TABLE_WRONG);
    sizes[1].verdict = TT_VERDICT_NOISE;
    assert_int_equal(tt_validate_exit_code(&r, 0), 0);
}

static void test_text_report(void **state)
{
    (void)state;
    tt_validate_run r;
    setup_run(&r);
    fake f = four_cases();
    tt_validate_measurer m = {fake_measure, NULL, &f};
    assert_int_equal(tt_validate_measure(&r, &m), 0);
    char *h = text_of(&r, tt_validate_report_header);
    assert_non_null(
        strstr(h, "# topo-exec --validate (topotune " TT_VERSION_STRING ") collective: all_reduce, 4 ranks (shm)\n"));
    assert_non_null(strstr(h, "# table: t.json (4 ranks)\n# runner-ups: the 1 nearest by predicted time; the model\n"));
    assert_non_null(strstr(h, ", 2 interleaved rounds (fastest kept)\n"));
    assert_non_null(strstr(h, "within noise = slower by <= 5%;"));
    free(h);
    tt_strbuf b;
    tt_strbuf_init(&b);
    tt_validate_report_size(&b, &sizes[1]);
    assert_string_equal(b.data, "        4096  tree/simple                   30.00  ring/simple                   10.00  "
                                "+200.0%  WRONG by 200.0%       ring/simple 10.00 [6.00]\n");
    tt_strbuf_free(&b);
    tt_strbuf_init(&b);
    tt_validate_report_size(&b, &sizes[3]);
    assert_non_null(strstr(b.data, "RIGHT   "));
    assert_non_null(strstr(b.data, "  (ring/simple: 3 WRONG RESULT(S) out of place)  (ring/simple: 3 WRONG RESULT(S) in "
                                   "place)\n"));
    tt_strbuf_free(&b);
    char *s = text_of(&r, tt_validate_report_summary);
    assert_string_equal(s, "# 4 size(s) judged: 2 right, 1 within noise (5%), 1 wrong; 0 not judged\n"
                           "# table wrong for 4K (all_reduce, 4 ranks): its choice tree/simple is 200.0% slower than "
                           "ring/simple at 4K\n"
                           "# fix: re-run with -J FILE and feed it to topo-tune --calibrate FILE --input TOPO -o "
                           "cal.json, then rebuild the table with --calibration cal.json\n");
    free(s);
    s = text_of(&r, tt_validate_report_oob);
    assert_string_equal(s, "# Out of bounds values : 2 FAILED (the times of wrong results do not count)\n");
    free(s);
    /* right everywhere: the closing line; a size not judged says why */
    r.nsz = 1;
    s = text_of(&r, tt_validate_report_summary);
    assert_string_equal(s, "# 1 size(s) judged: 1 right, 0 within noise (5%), 0 wrong; 0 not judged\n"
                           "# the table's choice was right (or within noise) at every judged size\n");
    free(s);
    sizes[0].nc = 0;
    snprintf(sizes[0].note, sizeof sizes[0].note, "no table entry");
    tt_strbuf_init(&b);
    tt_validate_report_size(&b, &sizes[0]);
    assert_string_equal(b.data, "        1024  not judged: no table entry\n");
    tt_strbuf_free(&b);
}

static void test_json_report(void **state)
{
    (void)state;
    tt_validate_run r;
    setup_run(&r);
    r.json = "v.json";
    fake f = four_cases();
    tt_validate_measurer m = {fake_measure, NULL, &f};
    assert_int_equal(tt_validate_measure(&r, &m), 0);
    int rc = tt_validate_exit_code(&r, 0);
    cJSON *j = tt_validate_report_json(&r, rc);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "tool")->valuestring, "topo-exec");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "args")), 2);
    cJSON *cfg = cJSON_GetObjectItem(j, "config");
    assert_string_equal(cJSON_GetObjectItem(cfg, "collective")->valuestring, "all_reduce");
    assert_int_equal(cJSON_GetObjectItem(cfg, "step_factor")->valueint, 4);
    cJSON *res = cJSON_GetObjectItem(j, "results");
    assert_int_equal(cJSON_GetArraySize(res), 8);
    cJSON *o = cJSON_GetArrayItem(res, 7);
    assert_string_equal(cJSON_GetObjectItem(o, "role")->valuestring, "runner-up");
    assert_string_equal(cJSON_GetObjectItem(o, "redop")->valuestring, "sum");
    assert_string_equal(cJSON_GetObjectItem(o, "algo")->valuestring, "ring");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "out_of_place"), "nwrong")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "out_of_bounds"), "count")->valueint, 2);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "errors")), 0);
    cJSON *va = cJSON_GetObjectItem(j, "validate");
    assert_non_null(va);
    assert_int_equal(cJSON_GetObjectItem(va, "exit")->valueint, TT_VALIDATE_EXIT_WRONG_RESULTS);
    cJSON_Delete(j);
    /* the fix line names the -J file and the topology */
    r.topo = "t.xml";
    char *s = text_of(&r, tt_validate_report_summary);
    assert_non_null(strstr(s, "# fix: re-run topo-tune --calibrate v.json --input t.xml -o cal.json, then"));
    free(s);
}

static void test_failure(void **state)
{
    (void)state;
    tt_validate_run r;
    setup_run(&r);
    fake f = four_cases();
    f.fail_at = 2;
    tt_validate_measurer m = {fake_measure, fake_judged, &f};
    assert_int_equal(tt_validate_measure(&r, &m), 1);
    assert_true(r.failed);
    assert_string_equal(r.err, "rank 1: the fake transport broke");
    assert_int_equal(f.njudged, 2); /* the failing size and those after it are not judged */
    assert_int_equal(sizes[2].verdict, TT_VERDICT_SKIP);
    assert_true(sizes[2].c[0].t[0] > 0);  /* measured before the failure: kept */
    assert_true(sizes[2].c[1].t[0] == 0); /* not reached */
    assert_int_equal(sizes[3].c[0].wrong[0], -1);
    assert_int_equal(tt_validate_exit_code(&r, 0), 1);
    char *s = text_of(&r, tt_validate_report_summary);
    assert_string_equal(s, "# validation FAILED: rank 1: the fake transport broke\n");
    free(s);
    cJSON *j = tt_validate_report_json(&r, 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "results")), 5); /* 2 + 2 + the choice of 16K */
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "errors"), 0)->valuestring,
                        "rank 1: the fake transport broke");
    cJSON_Delete(j);
}

/* the executor's side of the plan: ring and tree at every count, the table's choice runs */
static int two_candidates(void *user, size_t count, tt_validate_cand *out, int max)
{
    (void)user, (void)count, (void)max;
    out[0] = (tt_validate_cand){.algo = TT_ALGO_RING, .proto = TT_PROTO_SIMPLE, .channels = 1, .ran_channels = 1};
    out[1] = (tt_validate_cand){.algo = TT_ALGO_TREE, .proto = TT_PROTO_SIMPLE, .channels = 1, .ran_channels = 1};
    return 2;
}

static int choice_runs(void *user, size_t count, tt_validate_cand *c, char *why, size_t wl)
{
    (void)user, (void)count, (void)why, (void)wl;
    c->ran_channels = c->channels;
    return 1;
}

static void test_prepare(void **state)
{
    (void)state;
    tt_validate_engine e = {two_candidates, choice_runs, NULL};
    tt_validate_run r = {.coll = TT_COLL_ALLREDUCE, .nranks = 4, .minb = 1024, .maxb = 4096, .factor = 4,
                         .runners_up = 1};
    /* no table: the model's fastest (host stand-in), ranked */
    assert_int_equal(tt_validate_prepare(&r, NULL, NULL, 0, 0, 4, &e), TT_OK);
    assert_int_equal(r.nsz, 2);
    assert_true(r.ranked);
    assert_int_equal(r.sz[0].nc, 2);
    assert_string_equal(r.table_desc, "computed: the model's fastest candidate that this engine runs, per size");
    free(r.sz);
    r.sz = NULL;
    /* a table that does not load, one for other ranks, one without the collective */
    assert_int_equal(tt_validate_prepare(&r, "/nonexistent/t.json", NULL, 0, 0, 4, &e), TT_ERR_PARSE);
    char path[] = "/tmp/tt-validate-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"schema\": \"topotune-tuning-table\", \"version\": 1, \"nodes\": 1, \"ranks\": 8, \"model\": \"topotune\",\n"
          " \"entries\": [{\"collective\": \"allgather\", \"min_bytes\": 0, \"max_bytes\": 65536, \"algorithm\": "
          "\"ring\", \"protocol\": \"simple\", \"channels\": 1}]}\n", f);
    fclose(f);
    assert_int_equal(tt_validate_prepare(&r, path, NULL, 0, 0, 4, &e), TT_ERR_MISMATCH);
    assert_non_null(strstr(tt_error_message(), "the table is for 8 ranks (1 node(s)) but this run has 4 ranks"));
    r.nranks = 8;
    assert_int_equal(tt_validate_prepare(&r, path, NULL, 1, 2, 4, &e), TT_ERR_MISMATCH);
    assert_non_null(strstr(tt_error_message(), "these 8 GPU ranks span 2 host(s); build it with topo-tune --nodes 2"));
    assert_int_equal(tt_validate_prepare(&r, path, NULL, 0, 0, 4, &e), TT_ERR_MISMATCH);
    assert_non_null(strstr(tt_error_message(), "no entry for allreduce"));
    /* the table fits AllGather: no --topo, so every candidate runs and none is ranked */
    r.coll = TT_COLL_ALLGATHER;
    r.minb = 4096;
    assert_int_equal(tt_validate_prepare(&r, path, NULL, 0, 0, 4, &e), TT_OK);
    assert_false(r.ranked);
    assert_non_null(strstr(r.table_desc, "(8 ranks, 1 node(s), model topotune, 1 entries)"));
    assert_string_equal(r.model_desc, "none (no --topo): every candidate this engine runs is measured");
    assert_int_equal(r.sz[0].c[0].algo, TT_ALGO_RING);
    free(r.sz);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts_and_rounds),
        cmocka_unit_test(test_text_report),
        cmocka_unit_test(test_json_report),
        cmocka_unit_test(test_failure),
        cmocka_unit_test(test_prepare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
