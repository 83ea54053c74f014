/*
 * test_tune_judge.c - judging a table's choices against measured candidates (right/wrong,
 * loss, ranges to fix, unmeasured choices, rows without an algorithm) and the expected
 * performance envelope (bands, PASS/WARN/FAIL, rank mismatch).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tt_tune.h"
#include "tt_xml.h"
#include "tune_testtopo.h"

static void add(tt_measure_set *ms, tt_coll c, int algo, int proto, uint64_t bytes, double us)
{
    if (ms->n == ms->cap) {
        ms->cap = ms->cap ? 2 * ms->cap : 64;
        ms->m = realloc(ms->m, sizeof(tt_measurement) * (size_t)ms->cap);
        assert_non_null(ms->m);
    }
    tt_measurement *m = &ms->m[ms->n++];
    memset(m, 0, sizeof(*m));
    m->coll = c;
    m->algo = algo;
    m->proto = proto;
    m->nranks = 8;
    m->nodes = 1;
    m->bytes = bytes;
    m->time_us = m->time_oop_us = us;
    m->time_ip_us = -1;
    snprintf(m->where, sizeof m->where, "row%d", ms->n - 1);
}

/* table: tree/simple up to 64K, ring/simple above */
static const tt_tune_entry table[] = {
    {TT_COLL_ALLREDUCE, 0, 65535, TT_ALGO_TREE, TT_PROTO_SIMPLE, 1, 0, 0, 0},
    {TT_COLL_ALLREDUCE, 65536, UINT64_MAX, TT_ALGO_RING, TT_PROTO_SIMPLE, 1, 0, 0, 0},
};

static void test_judge(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    /* 4K: tree (table) fastest -> right */
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_TREE, TT_PROTO_SIMPLE, 4096, 10);
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 4096, 12);
    /* 16K: ring 3% faster -> still right at 5% */
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_TREE, TT_PROTO_SIMPLE, 16384, 10.3);
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 16384, 10);
    /* 64K, 256K, 1M: rhd beats the table by 50%, 20%, 100% -> one range to fix */
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 65536, 30);
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RHD, TT_PROTO_SIMPLE, 65536, 20);
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 262144, 60);
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RHD, TT_PROTO_SIMPLE, 262144, 50);
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RHD, TT_PROTO_SIMPLE, 1048576, 100);
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 1048576, 250);
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 1048576, 200); /* repeated: fastest counts */
    /* 4M: right again */
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 4194304, 400);
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RHD, TT_PROTO_SIMPLE, 4194304, 500);
    /* 16M: tree faster (wrong, other candidate -> separate range) */
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_RING, TT_PROTO_SIMPLE, 16777216, 2000);
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_TREE, TT_PROTO_SIMPLE, 16777216, 1000);
    /* 64M: table choice not measured */
    add(&ms, TT_COLL_ALLREDUCE, TT_ALGO_TREE, TT_PROTO_SIMPLE, 67108864, 1000);
    /* NCCL's own choice: cannot be attributed, ignored */
    add(&ms, TT_COLL_ALLREDUCE, -1, -1, 4096, 1);
    tt_judge_report r;
    if (tt_tune_judge(table, 2, &ms, 0.05, &r) != TT_OK) fail_msg("%s", tt_error_message());
    assert_int_equal(r.n, 8);
    assert_int_equal(r.nright, 3);
    assert_int_equal(r.nwrong, 4);
    assert_int_equal(r.nunmeasured, 1);
    /* sorted by size */
    assert_true(r.rows[0].bytes == 4096 && r.rows[0].verdict == 0 && r.rows[0].ncand == 2);
    assert_true(r.rows[1].bytes == 16384 && r.rows[1].verdict == 0 && fabs(r.rows[1].loss - 0.03) < 1e-9);
    assert_true(r.rows[2].bytes == 65536 && r.rows[2].verdict == 1 && fabs(r.rows[2].loss - 0.5) < 1e-9);
    assert_true(r.rows[4].bytes == 1048576 && r.rows[4].table_us == 200 && fabs(r.rows[4].loss - 1.0) < 1e-9);
    assert_int_equal(r.rows[4].ncand, 2);
    assert_int_equal(r.rows[7].verdict, 2);
    assert_int_equal(r.nfix, 2);
    assert_true(r.fix[0].lo == 65536 && r.fix[0].hi == 1048576);
    assert_int_equal(r.fix[0].best_algo, TT_ALGO_RHD);
    assert_int_equal(r.fix[0].table_algo, TT_ALGO_RING);
    assert_true(fabs(r.fix[0].worst_loss - 1.0) < 1e-9);
    assert_true(r.fix[1].lo == 16777216 && r.fix[1].hi == 16777216 && r.fix[1].best_algo == TT_ALGO_TREE);
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    assert_int_equal(tt_judge_write_text(&r, 0.05, &sb), TT_OK);
    assert_non_null(strstr(sb.data, "fix: allreduce, 8 ranks, sizes 65536..1048576 bytes: use rhd/simple instead of ring/simple"));
    assert_non_null(strstr(sb.data, "3 right, 4 wrong, 1 without"));
    tt_strbuf_free(&sb);
    tt_judge_report_free(&r);
    /* a looser tolerance turns the 20% row right and splits the range */
    if (tt_tune_judge(table, 2, &ms, 0.25, &r) != TT_OK) fail_msg("%s", tt_error_message());
    assert_int_equal(r.nwrong, 3);
    assert_int_equal(r.nfix, 3);
    tt_judge_report_free(&r);
    assert_int_equal(tt_tune_judge(table, 2, &ms, -1, &r), TT_ERR_INVALID);
    /* nothing attributable */
    tt_measure_set only = {0};
    add(&only, TT_COLL_ALLREDUCE, -1, -1, 4096, 1);
    assert_int_equal(tt_tune_judge(table, 2, &only, 0.05, &r), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "algorithm"));
    free(only.m);
    free(ms.m);
}

static void test_expect(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_cluster c;
    assert_int_equal(tt_cluster_from_topo(t, &c), TT_OK);
    tt_tune_ctx *ctx = NULL;
    assert_int_equal(tt_tune_ctx_new(t, &c, TT_MODEL_TOPOTUNE, NULL, &ctx), TT_OK);
    tt_expect_bands b = {1, 0.20, 0.30, 0.25};
    tt_expect_row row;
    /* 1 GiB allreduce with explicit bands: PASS within [0.8, 1.3] of the model's busbw, FAIL below 0.55 */
    assert_int_equal(tt_expect_row_compute(ctx, TT_COLL_ALLREDUCE, 1ULL << 30, &b, &row), TT_OK);
    assert_false(row.latency_bound);
    assert_true(row.pred_busbw > 100);
    assert_true(fabs(row.pass_busbw - 0.8 * row.pred_busbw) < 1e-9);
    assert_true(fabs(row.fail_busbw - 0.55 * row.pred_busbw) < 1e-9);
    assert_true(fabs(row.above_busbw - 1.3 * row.pred_busbw) < 1e-9);
    /* the expectation is what NCCL runs */
    tt_algo na;
    tt_proto np;
    assert_int_equal(tt_nccl_choice(ctx, TT_COLL_ALLREDUCE, 1ULL << 30, &na, &np), TT_OK);
    assert_int_equal(row.algo, na);
    assert_int_equal(row.proto, np);
    tt_measure_set ms = {0};
    double k[] = {1.0, 1.3, 0.7, 2.0};
    for (int i = 0; i < 4; i++) add(&ms, TT_COLL_ALLREDUCE, -1, -1, 1ULL << 30, row.pred_us * k[i]);
    tt_expect_row j;
    assert_int_equal(tt_expect_judge(ctx, &ms.m[0], &b, &j), TT_OK);
    assert_int_equal(j.verdict, TT_EXPECT_PASS);
    assert_true(fabs(j.ratio - 1) < 1e-9);
    assert_int_equal(tt_expect_judge(ctx, &ms.m[1], &b, &j), TT_OK); /* 77% of the busbw */
    assert_int_equal(j.verdict, TT_EXPECT_WARN);
    assert_non_null(strstr(j.note, "slower than a healthy machine"));
    assert_int_equal(tt_expect_judge(ctx, &ms.m[2], &b, &j), TT_OK); /* 143%: faster than the model can explain */
    assert_int_equal(j.verdict, TT_EXPECT_WARN);
    assert_non_null(strstr(j.note, "under-predicts"));
    assert_int_equal(tt_expect_judge(ctx, &ms.m[3], &b, &j), TT_OK); /* half the busbw */
    assert_int_equal(j.verdict, TT_EXPECT_FAIL);
    /* the regime's band (b NULL): the rule of tune_expect.c over tt_model_trust */
    tt_trust tr;
    assert_int_equal(tt_model_trust(ctx, 1024, &tr), TT_OK);
    assert_int_equal(tt_expect_row_compute(ctx, TT_COLL_ALLREDUCE, 1024, NULL, &row), TT_OK);
    if (tr.sweeps > 0) {
        assert_true(fabs(row.lo - 0.35) < 1e-12); /* below 16 MiB */
        tt_expect_row big;
        tt_trust tb;
        assert_int_equal(tt_model_trust(ctx, 1ULL << 30, &tb), TT_OK);
        assert_int_equal(tt_expect_row_compute(ctx, TT_COLL_ALLREDUCE, 1ULL << 30, NULL, &big), TT_OK);
        assert_true(tb.sweeps > 0);
        assert_true(fabs(big.lo - fmin(fmax(fmin(tb.p90, 3 * tb.median), 0.10), 0.35)) < 1e-12);
        assert_true(fabs(row.hi - fmax(tr.worst, 0.30)) < 1e-12);
        assert_true(row.trusted);
    } else {
        assert_true(fabs(row.lo - 0.5) < 1e-12 && fabs(row.hi - 1.0) < 1e-12);
        assert_false(row.trusted);
    }
    assert_true(fabs(row.gap - 0.25) < 1e-12);
    assert_non_null(strstr(row.regime, "<= 64 KiB, 1 node"));
    /* a forced row is judged against the candidate it ran */
    ms.m[0].bytes = 1024;
    ms.m[0].algo = TT_ALGO_RING;
    ms.m[0].proto = TT_PROTO_SIMPLE;
    ms.m[0].time_us = 100;
    assert_int_equal(tt_expect_judge(ctx, &ms.m[0], NULL, &j), TT_OK);
    assert_int_equal(j.algo, TT_ALGO_RING);
    assert_int_equal(j.proto, TT_PROTO_SIMPLE);
    /* measured on other ranks than the context */
    ms.m[0].nranks = 16;
    assert_int_equal(tt_expect_judge(ctx, &ms.m[0], &b, &j), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "row0: measured with 16 ranks"));
    free(ms.m);
    tt_tune_ctx_free(ctx);
    tt_topo_free(t);
}

/* the model's ranking among measured candidates: times equal to the model's own predictions
 * are all right; making the model's pick four times slower at one size makes that size wrong */
static void test_judge_model(void **state)
{
    (void)state;
    const char *r = getenv("TOPOTUNE_ROOT");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/measurements/host-pcie-8gpu.xml", r && *r ? r : ".");
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    if (tt_xml_read_file(path, NULL, &doc) != TT_OK || tt_topo_from_xml(doc, NULL, &t) != TT_OK)
        fail_msg("%s", tt_error_message());
    tt_cluster c;
    assert_int_equal(tt_cluster_from_topo(t, &c), TT_OK);
    tt_model_params p;
    tt_model_params_default(&p);
    tt_measure_set ms = {0};
    const int algos[] = {TT_ALGO_RING, TT_ALGO_TREE, TT_ALGO_RHD};
    for (uint64_t s = 1024; s <= (16u << 20); s *= 16)
        for (int a = 0; a < 3; a++) {
            add(&ms, TT_COLL_ALLREDUCE, algos[a], TT_PROTO_SIMPLE, s, 0);
            ms.m[ms.n - 1].channels = 1;
            double us;
            assert_int_equal(tt_calib_predict(t, &c, &p, &ms.m[ms.n - 1], &us), TT_OK);
            ms.m[ms.n - 1].time_us = us;
        }
    tt_judge_report rep;
    if (tt_tune_judge_model(t, &c, &p, &ms, 0.0, &rep) != TT_OK) fail_msg("%s", tt_error_message());
    assert_int_equal(rep.n, 4);
    assert_int_equal(rep.nwrong, 0);
    assert_int_equal(rep.nunmeasured, 0);
    int pick = rep.rows[2].table_algo; /* at 256 KiB */
    tt_judge_report_free(&rep);
    for (int i = 0; i < ms.n; i++)
        if (ms.m[i].bytes == 262144 && ms.m[i].algo == pick) ms.m[i].time_us *= 4;
    if (tt_tune_judge_model(t, &c, &p, &ms, 0.05, &rep) != TT_OK) fail_msg("%s", tt_error_message());
    assert_int_equal(rep.nwrong, 1);
    assert_int_equal(rep.nfix, 1);
    assert_true(rep.fix[0].lo == 262144 && rep.fix[0].table_algo == pick && rep.fix[0].best_algo != pick);
    tt_judge_report_free(&rep);
    free(ms.m);
    tt_topo_free(t);
    tt_xml_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_judge),
        cmocka_unit_test(test_expect),
        cmocka_unit_test(test_judge_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
