/*
 * test_tune_validate.c - topo-exec --validate's plan and verdicts in tune (tune_validate.c,
 * tune_verdict.c): sweep sizes, the model on the host stand-in, ranking by prediction, the
 * choice with its runner-ups, the plan of every size over an engine the test plays
 * (tt_validate_plan), the plan's fingerprint, RIGHT / within noise / WRONG thresholds,
 * wrong ranges and what won there, counts and the JSON member.
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

static void test_sizes(void **state)
{
    (void)state;
    tt_validate_size *sz = NULL;
    int n = 0;
    /* all_gather, 4 ranks, 4-byte elements, 1000..64000 x4: counts per rank, bytes rounded down */
    assert_int_equal(tt_validate_sizes(TT_COLL_ALLGATHER, 4, 4, 1000, 63999, 0, 4, &sz, &n), TT_OK);
    assert_int_equal(n, 3); /* 1000, 4000, 16000 */
    free(sz);
    assert_int_equal(tt_validate_sizes(TT_COLL_ALLGATHER, 4, 4, 1000, 64000, 0, 4, &sz, &n), TT_OK);
    assert_int_equal(n, 4);
    assert_int_equal(sz[0].count, 62);  /* 1000 / 4 / 4 */
    assert_int_equal(sz[0].bytes, 992); /* 62 * 4 * 4 */
    assert_int_equal(sz[3].count, 4000);
    assert_int_equal(sz[3].bytes, 64000);
    assert_int_equal(sz[1].nc, 0);
    free(sz);
    /* all_reduce: the whole size per rank; a step instead of a factor; a size below one element */
    assert_int_equal(tt_validate_sizes(TT_COLL_ALLREDUCE, 8, 8, 4, 36, 16, 0, &sz, &n), TT_OK);
    assert_int_equal(n, 3);
    assert_int_equal(sz[0].count, 0);
    assert_int_equal(sz[1].count, 2);
    assert_int_equal(sz[1].bytes, 16);
    assert_int_equal(sz[2].bytes, 32);
    free(sz);
    assert_int_equal(tt_validate_sizes(TT_COLL_ALLREDUCE, 8, 8, 4, 36, 0, 1, &sz, &n), TT_ERR_INVALID);
    assert_null(sz);
}

static int pred_sorted(const tt_validate_cand *c, int n)
{
    for (int k = 1; k < n; k++) {
        if (c[k - 1].pred_us < 0 && c[k].pred_us >= 0) return 0;
        if (c[k].pred_us >= 0 && c[k - 1].pred_us > c[k].pred_us) return 0;
    }
    return 1;
}

static void test_model_rank(void **state)
{
    (void)state;
    tt_validate_model m;
    char desc[600];
    assert_int_equal(tt_validate_model_load(&m, NULL, 0, 4, NULL, desc, sizeof desc), TT_OK);
    assert_true(m.ok);
    assert_int_equal(m.base.topo_gpus, 4);
    assert_int_equal(m.base.gpus_per_node, 4);
    assert_int_equal(m.base.nodes, 1);
    assert_string_equal(desc, "executor-shaped model (host ranks), built-in constants");

    /* host candidates (bin/cli_validate.c's list, reversed), ranked at a small and a large size */
    const tt_algo algos[] = {TT_ALGO_HIER, TT_ALGO_RHD, TT_ALGO_TREE, TT_ALGO_RING};
    for (int pass = 0; pass < 2; pass++) {
        tt_validate_cand c[4];
        for (int k = 0; k < 4; k++) c[k] = (tt_validate_cand){.algo = algos[k], .proto = TT_PROTO_SIMPLE, .channels = 1};
        uint64_t bytes = pass ? (256u << 20) : 64;
        tt_validate_rank(&m, TT_COLL_ALLREDUCE, bytes, 4, c, 4);
        assert_true(pred_sorted(c, 4));
        assert_true(c[0].pred_us > 0);
        assert_true(c[0].pred_us <= c[1].pred_us);
        assert_true(c[0].pred_us == tt_validate_predict(&m, TT_COLL_ALLREDUCE, bytes, 4, &c[0]));
        /* host ranks run hierarchical on one node (reduce to rank 0, broadcast): predicted, and
         * at a large size the slowest (the leader serialises every stream) */
        assert_true(c[3].pred_us > 0);
        if (pass) assert_int_equal(c[3].algo, TT_ALGO_HIER);
        /* larger sizes take longer */
        if (pass) assert_true(c[0].pred_us > 1000);
    }
    tt_validate_model_free(&m);
    assert_null(m.topo);

    /* no model: predictions < 0, order kept */
    tt_validate_model none;
    memset(&none, 0, sizeof none);
    tt_validate_cand c[2] = {{.algo = TT_ALGO_TREE, .proto = TT_PROTO_SIMPLE}, {.algo = TT_ALGO_RING, .proto = TT_PROTO_SIMPLE}};
    tt_validate_rank(&none, TT_COLL_ALLREDUCE, 1 << 20, 4, c, 2);
    assert_int_equal(c[0].algo, TT_ALGO_TREE);
    assert_true(c[0].pred_us < 0 && c[1].pred_us < 0);

    /* a topology with fewer GPUs than ranks is refused, naming both */
    const char *root = getenv("TOPOTUNE_ROOT");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/pcie-4gpu.xml", root && *root ? root : ".");
    assert_int_equal(tt_validate_model_load(&m, path, 0, 8, NULL, desc, sizeof desc), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "has 4 GPU(s) but the run has 8 ranks"));
    tt_validate_model_free(&m);
    assert_int_equal(tt_validate_model_load(&m, "/nonexistent/topo.xml", 0, 2, NULL, desc, sizeof desc), TT_ERR_IO);
    assert_non_null(strstr(tt_error_message(), "--topo /nonexistent/topo.xml"));
    tt_validate_model_free(&m);
}

static tt_validate_cand cand(tt_algo a, tt_proto p, double pred)
{
    return (tt_validate_cand){.algo = a, .proto = p, .channels = 1, .pred_us = pred};
}

static void test_plan_size(void **state)
{
    (void)state;
    const tt_validate_cand ranked[] = {
        cand(TT_ALGO_TREE, TT_PROTO_SIMPLE, 5), cand(TT_ALGO_RING, TT_PROTO_SIMPLE, 6),
        cand(TT_ALGO_RHD, TT_PROTO_SIMPLE, 7), cand(TT_ALGO_HIER, TT_PROTO_SIMPLE, 9),
    };
    tt_validate_size z;
    memset(&z, 0, sizeof z);
    /* the model's fastest is the choice, the next two are the runner-ups */
    assert_int_equal(tt_validate_plan_size(&z, NULL, ranked, 4, 1, 2), 3);
    assert_int_equal(z.c[0].algo, TT_ALGO_TREE);
    assert_int_equal(z.c[1].algo, TT_ALGO_RING);
    assert_int_equal(z.c[2].algo, TT_ALGO_RHD);
    /* the table's choice (ring) first; runner-ups skip it and keep the model's order */
    tt_validate_cand choice = cand(TT_ALGO_RING, TT_PROTO_SIMPLE, 6);
    memset(&z, 0, sizeof z);
    assert_int_equal(tt_validate_plan_size(&z, &choice, ranked, 4, 1, 2), 3);
    assert_int_equal(z.c[0].algo, TT_ALGO_RING);
    assert_int_equal(z.c[1].algo, TT_ALGO_TREE);
    assert_int_equal(z.c[2].algo, TT_ALGO_RHD);
    /* a different protocol is a different candidate */
    choice = cand(TT_ALGO_TREE, TT_PROTO_LL, 4);
    memset(&z, 0, sizeof z);
    assert_int_equal(tt_validate_plan_size(&z, &choice, ranked, 4, 1, 1), 2);
    assert_int_equal(z.c[1].algo, TT_ALGO_TREE);
    assert_int_equal(z.c[1].proto, TT_PROTO_SIMPLE);
    /* no model: every other runnable candidate is measured, whatever runners_up says */
    memset(&z, 0, sizeof z);
    assert_int_equal(tt_validate_plan_size(&z, &ranked[3], ranked, 4, 0, 1), 4);
    /* zero runner-ups: the choice alone */
    memset(&z, 0, sizeof z);
    assert_int_equal(tt_validate_plan_size(&z, NULL, ranked, 4, 1, 0), 1);
    /* no table and nothing predicted: not judged, with the reason */
    const tt_validate_cand unpred[] = {cand(TT_ALGO_RING, TT_PROTO_SIMPLE, -1)};
    memset(&z, 0, sizeof z);
    assert_int_equal(tt_validate_plan_size(&z, NULL, unpred, 1, 1, 2), 0);
    assert_non_null(strstr(z.note, "predicts none"));
}

/* a size with measured times (out of place; in place slower) per candidate */
static tt_validate_size timed(uint64_t bytes, const tt_algo *a, const double *t, int n)
{
    tt_validate_size z;
    memset(&z, 0, sizeof z);
    z.bytes = bytes;
    z.count = bytes / 4;
    z.nc = n;
    for (int k = 0; k < n; k++) {
        z.c[k] = cand(a[k], TT_PROTO_SIMPLE, -1);
        z.c[k].t[0] = t[k];
        z.c[k].t[1] = t[k] > 0 ? t[k] * 2 : 0;
        z.c[k].wrong[0] = z.c[k].wrong[1] = -1;
    }
    return z;
}

static void test_verdicts(void **state)
{
    (void)state;
    const tt_algo rt[] = {TT_ALGO_RING, TT_ALGO_TREE};
    tt_validate_size z;
    z = timed(4096, rt, (double[]){10, 12}, 2);
    tt_validate_judge_size(&z, 0.05);
    assert_int_equal(z.verdict, TT_VERDICT_RIGHT);
    assert_int_equal(z.best, 0);
    z = timed(4096, rt, (double[]){10.4, 10}, 2); /* 4 % slower: noise at 5 % */
    tt_validate_judge_size(&z, 0.05);
    assert_int_equal(z.verdict, TT_VERDICT_NOISE);
    assert_int_equal(z.best, 1);
    assert_true(z.loss > 0.0399 && z.loss < 0.0401);
    z = timed(4096, rt, (double[]){10.6, 10}, 2); /* 6 % slower: wrong at 5 %, noise at 10 % */
    tt_validate_judge_size(&z, 0.05);
    assert_int_equal(z.verdict, TT_VERDICT_WRONG);
    tt_validate_judge_size(&z, 0.10);
    assert_int_equal(z.verdict, TT_VERDICT_NOISE);
    tt_validate_judge_size(&z, 0);
    assert_int_equal(z.verdict, TT_VERDICT_WRONG);
    z = timed(4096, rt, (double[]){10}, 1);
    tt_validate_judge_size(&z, 0.05);
    assert_int_equal(z.verdict, TT_VERDICT_ONLY);
    /* the faster placement counts: in place only */
    z = timed(4096, rt, (double[]){10, 12}, 2);
    z.c[0].t[0] = 0;
    z.c[0].t[1] = 11;
    assert_true(tt_validate_cand_time(&z.c[0]) == 11);
    tt_validate_judge_size(&z, 0.05);
    assert_int_equal(z.verdict, TT_VERDICT_RIGHT);
    /* the choice has no time: not judged */
    z = timed(4096, rt, (double[]){0, 12}, 2);
    tt_validate_judge_size(&z, 0.05);
    assert_int_equal(z.verdict, TT_VERDICT_SKIP);
    assert_string_equal(z.note, "no time measured");
    assert_string_equal(tt_verdict_word(TT_VERDICT_NOISE), "within noise");
    assert_string_equal(tt_verdict_word(TT_VERDICT_SKIP), "not judged");
    char b[64];
    tt_validate_cand_name(b, sizeof b, &(tt_validate_cand){.algo = TT_ALGO_RHD, .proto = TT_PROTO_LL});
    assert_string_equal(b, "halving-doubling/ll");
}

static void test_ranges(void **state)
{
    (void)state;
    const tt_algo ring_tree[] = {TT_ALGO_RING, TT_ALGO_TREE}, tree_ring[] = {TT_ALGO_TREE, TT_ALGO_RING},
                  ring_rhd[] = {TT_ALGO_RING, TT_ALGO_RHD};
    tt_validate_size sz[7];
    sz[0] = timed(1024, ring_tree, (double[]){10, 20}, 2);      /* right */
    sz[1] = timed(2048, ring_tree, (double[]){12, 10}, 2);      /* wrong 20 %: range 1 */
    sz[2] = timed(4096, ring_tree, (double[]){15, 10}, 2);      /* wrong 50 %: range 1 */
    sz[3] = timed(8192, ring_rhd, (double[]){13, 10}, 2);       /* wrong 30 %, rhd won: range 1 */
    sz[4] = timed(16384, tree_ring, (double[]){20, 10}, 2);     /* wrong, another choice: range 2 */
    sz[5] = timed(32768, ring_tree, (double[]){10.2, 10}, 2);   /* noise */
    sz[6] = timed(1048576, ring_tree, (double[]){11, 10}, 2);   /* wrong 10 %: range 3 */
    for (int i = 0; i < 7; i++) tt_validate_judge_size(&sz[i], 0.05);
    int cnt[TT_VERDICT_COUNT];
    tt_validate_count(sz, 7, cnt);
    assert_int_equal(cnt[TT_VERDICT_RIGHT], 1);
    assert_int_equal(cnt[TT_VERDICT_NOISE], 1);
    assert_int_equal(cnt[TT_VERDICT_WRONG], 5);
    assert_int_equal(cnt[TT_VERDICT_SKIP], 0);
    tt_validate_range r[7];
    int nr = tt_validate_wrong_ranges(sz, 7, r);
    assert_int_equal(nr, 3);
    assert_int_equal(r[0].lo, 1);
    assert_int_equal(r[0].hi, 3);
    assert_true(r[0].minloss > 0.199 && r[0].minloss < 0.201);
    assert_true(r[0].maxloss > 0.499 && r[0].maxloss < 0.501);
    assert_int_equal(r[1].lo, 4);
    assert_int_equal(r[1].hi, 4);
    assert_int_equal(r[2].lo, 6);
    char win[600];
    tt_validate_range_winners(sz, &r[0], win, sizeof win);
    assert_string_equal(win, "tree/simple at 2K 4K; halving-doubling/simple at 8K");
    tt_validate_range_winners(sz, &r[2], win, sizeof win);
    assert_string_equal(win, "tree/simple at 1M");
    char lab[24];
    tt_validate_size_label(lab, sizeof lab, 1000);
    assert_string_equal(lab, "1000B");
    tt_validate_size_label(lab, sizeof lab, 3ull << 30);
    assert_string_equal(lab, "3G");

    cJSON *j = tt_validate_json(sz, 7, "table.json", "model line", 0.05, 2, 1, 3);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "table")->valuestring, "table.json");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "sizes")), 7);
    cJSON *s1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "sizes"), 1);
    assert_string_equal(cJSON_GetObjectItem(s1, "verdict")->valuestring, "wrong");
    assert_string_equal(cJSON_GetObjectItem(s1, "fastest")->valuestring, "tree/simple");
    cJSON *wr = cJSON_GetObjectItem(j, "wrong_ranges");
    assert_int_equal(cJSON_GetArraySize(wr), 3);
    assert_int_equal((int)cJSON_GetObjectItem(cJSON_GetArrayItem(wr, 0), "max_bytes")->valuedouble, 8192);
    assert_int_equal((int)cJSON_GetObjectItem(j, "exit")->valuedouble, 3);
    cJSON_Delete(j);
}

/* ---- the per-size plan over an engine the test plays (tt_validate_plan) */
typedef struct {
    int ncalls, nchoice;
} fake_engine;

/* ring and tree, simple, one channel, resolved to 1 */
static int fake_candidates(void *user, size_t count, tt_validate_cand *out, int max)
{
    (void)count;
    ((fake_engine *)user)->ncalls++;
    assert_true(max >= 2);
    out[0] = (tt_validate_cand){.algo = TT_ALGO_RING, .proto = TT_PROTO_SIMPLE, .channels = 1, .ran_channels = 1};
    out[1] = (tt_validate_cand){.algo = TT_ALGO_TREE, .proto = TT_PROTO_SIMPLE, .channels = 1, .ran_channels = 1};
    return 2;
}

/* halving-doubling does not run; channels are cut to 2 */
static int fake_choice_runs(void *user, size_t count, tt_validate_cand *c, char *why, size_t wl)
{
    (void)count;
    ((fake_engine *)user)->nchoice++;
    if (c->channels > 2) c->channels = 2;
    if (c->algo == TT_ALGO_RHD) {
        snprintf(why, wl, "not on 3 ranks");
        return 0;
    }
    c->ran_channels = c->channels;
    return 1;
}

static void test_plan_sizes(void **state)
{
    (void)state;
    tt_validate_size *sz = NULL;
    int n = 0;
    /* allreduce, 3 ranks, floats: 2 B (no element), 16 B, 128 B, 1 KiB, 8 KiB */
    assert_int_equal(tt_validate_sizes(TT_COLL_ALLREDUCE, 3, 4, 2, 32768, 0, 8, &sz, &n), TT_OK);
    assert_int_equal(n, 5);
    tt_tune_entry e[3] = {
        {.coll = TT_COLL_ALLREDUCE, .min_bytes = 0, .max_bytes = 100, .algo = TT_ALGO_TREE, .proto = TT_PROTO_SIMPLE,
         .channels = 8},
        {.coll = TT_COLL_ALLREDUCE, .min_bytes = 101, .max_bytes = 1000, .algo = TT_ALGO_RHD, .proto = TT_PROTO_SIMPLE},
        {.coll = TT_COLL_ALLREDUCE, .min_bytes = 1001, .max_bytes = 4096, .algo = TT_ALGO_RING, .proto = TT_PROTO_SIMPLE,
         .channels = 1},
    };
    tt_tune_table tab;
    memset(&tab, 0, sizeof tab);
    tab.entries = e;
    tab.n = 3;
    tab.ranks = 3;
    tab.nodes = 1;
    fake_engine fe = {0, 0};
    tt_validate_engine eng = {fake_candidates, fake_choice_runs, &fe};
    /* no model: every runnable candidate is a runner-up */
    int judged = tt_validate_plan(sz, n, &tab, NULL, TT_COLL_ALLREDUCE, 3, 1, &eng);
    assert_int_equal(judged, 2);
    assert_int_equal(fe.ncalls, n);  /* the engine was asked at every size */
    assert_int_equal(fe.nchoice, 3); /* the table's choice where there is an element and an entry */
    assert_int_equal(sz[0].nc, 0);
    assert_string_equal(sz[0].note, "size below one element per rank");
    /* 16 B: tree (the table), its channels cut by the engine, then the ring */
    assert_int_equal(sz[1].nc, 2);
    assert_int_equal(sz[1].c[0].algo, TT_ALGO_TREE);
    assert_int_equal(sz[1].c[0].channels, 2);
    assert_int_equal(sz[1].c[0].ran_channels, 2);
    assert_true(sz[1].c[0].pred_us < 0);
    assert_int_equal(sz[1].c[1].algo, TT_ALGO_RING);
    /* 128 B: the table's choice does not run here, with the engine's reason */
    assert_int_equal(sz[2].nc, 0);
    assert_string_equal(sz[2].note, "table choice halving-doubling/simple not runnable here: not on 3 ranks");
    /* 1 KiB: ring, then tree */
    assert_int_equal(sz[3].nc, 2);
    assert_int_equal(sz[3].c[0].algo, TT_ALGO_RING);
    assert_int_equal(sz[3].c[1].algo, TT_ALGO_TREE);
    /* 8 KiB: beyond the table */
    assert_int_equal(sz[4].nc, 0);
    assert_string_equal(sz[4].note, "the table has no entry for this size");
    /* no table and no model: nothing says which candidate is the choice */
    free(sz);
    assert_int_equal(tt_validate_sizes(TT_COLL_ALLREDUCE, 3, 4, 1024, 1024, 0, 16, &sz, &n), TT_OK);
    assert_int_equal(tt_validate_plan(sz, n, NULL, NULL, TT_COLL_ALLREDUCE, 3, 1, &eng), 0);
    assert_non_null(strstr(sz[0].note, "predicts none"));
    free(sz);
}

/* the fingerprint ranks compare: equal plans agree, any difference in what would run does not */
static void test_fingerprint(void **state)
{
    (void)state;
    tt_validate_size *a = NULL, *b = NULL;
    int na = 0, nb = 0;
    assert_int_equal(tt_validate_sizes(TT_COLL_ALLREDUCE, 4, 4, 1024, 65536, 0, 4, &a, &na), TT_OK);
    assert_int_equal(tt_validate_sizes(TT_COLL_ALLREDUCE, 4, 4, 1024, 65536, 0, 4, &b, &nb), TT_OK);
    for (int i = 0; i < na; i++) {
        a[i].nc = b[i].nc = 2;
        a[i].c[0] = b[i].c[0] = (tt_validate_cand){.algo = TT_ALGO_RING, .proto = TT_PROTO_SIMPLE, .channels = 1};
        a[i].c[1] = b[i].c[1] = (tt_validate_cand){.algo = TT_ALGO_TREE, .proto = TT_PROTO_SIMPLE, .channels = 1};
    }
    long long set[3] = {1, 20, 5}, other[3] = {1, 20, 6};
    int64_t fa = tt_validate_fingerprint(a, na, set, 3);
    /* measurements, predictions and notes are no part of the plan */
    b[1].c[0].t[0] = 12.5;
    b[1].c[1].pred_us = 3;
    snprintf(b[2].note, sizeof b[2].note, "anything");
    assert_true(fa == tt_validate_fingerprint(b, nb, set, 3));
    assert_true(fa >= 0);
    assert_true(fa != tt_validate_fingerprint(a, na, other, 3));       /* a setting */
    assert_true(fa != tt_validate_fingerprint(a, na, set, 2));         /* fewer settings */
    assert_true(fa != tt_validate_fingerprint(a, na - 1, set, 3));     /* a size fewer */
    b[2].c[1].proto = TT_PROTO_LL;                                     /* a protocol */
    assert_true(fa != tt_validate_fingerprint(b, nb, set, 3));
    b[2].c[1].proto = TT_PROTO_SIMPLE;
    b[0].c[0].channels = 2;                                            /* channels */
    assert_true(fa != tt_validate_fingerprint(b, nb, set, 3));
    b[0].c[0].channels = 1;
    b[3].nc = 1;                                                       /* a runner-up fewer */
    assert_true(fa != tt_validate_fingerprint(b, nb, set, 3));
    b[3].nc = 2;
    b[3].c[0].algo = TT_ALGO_TREE, b[3].c[1].algo = TT_ALGO_RING;      /* the choice and a runner-up swapped */
    assert_true(fa != tt_validate_fingerprint(b, nb, set, 3));
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),     cmocka_unit_test(test_model_rank), cmocka_unit_test(test_plan_size),
        cmocka_unit_test(test_verdicts),  cmocka_unit_test(test_ranges),     cmocka_unit_test(test_fingerprint),
        cmocka_unit_test(test_plan_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
