/*
 * test_tune_measure.c - measurement readers: nccl-tests text tables (concatenated, MPI
 * prefixes, N/A, NCCL log lines), nccl-tests -J JSON, topo-exec -J JSON (recorded runs),
 * and clear errors (file:line / JSON member) for malformed input.
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

static const char *fix(const char *name)
{
    static char path[1024];
    const char *root = getenv("TOPOTUNE_ROOT");
    snprintf(path, sizeof path, "%s/tests/fixtures/measurements/%s", root && *root ? root : ".", name);
    return path;
}

static void test_text_handwritten(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_load(fix("nccl-tests-handwritten.txt"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 8);
    /* first table: all_reduce_perf, 8 ranks on one host */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(ms.m[i].coll, TT_COLL_ALLREDUCE);
        assert_int_equal(ms.m[i].nranks, 8);
        assert_int_equal(ms.m[i].nodes, 1);
        assert_int_equal(ms.m[i].algo, -1);
    }
    assert_true(ms.m[0].bytes == 1024);
    assert_true(ms.m[0].time_us == 17.40); /* in-place was faster */
    assert_true(ms.m[0].time_oop_us == 17.85);
    assert_true(ms.m[4].bytes == 1073741824ULL);
    assert_true(ms.m[4].time_us == 4598.9);
    assert_non_null(strstr(ms.m[0].where, "nccl-tests-handwritten.txt:19"));
    /* second table behind Open MPI prefixes: all_gather_perf, 4 ranks on 2 hosts, #wrong N/A */
    for (int i = 5; i < 8; i++) {
        assert_int_equal(ms.m[i].coll, TT_COLL_ALLGATHER);
        assert_int_equal(ms.m[i].nranks, 4);
        assert_int_equal(ms.m[i].nodes, 2);
    }
    assert_true(ms.m[7].time_us == 215.60);
    tt_measure_set_free(&ms);
}

static void test_json_nccl_tests(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_load(fix("nccl-tests-handwritten.json"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 3);
    assert_int_equal(ms.m[0].coll, TT_COLL_ALLREDUCE);
    assert_int_equal(ms.m[0].nranks, 8);
    assert_int_equal(ms.m[0].nodes, 1);
    assert_true(ms.m[2].time_us == 4598.9);
    assert_non_null(strstr(ms.m[1].where, "results[1]"));
    tt_measure_set_free(&ms);
}

static void test_json_topo_exec_recorded(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_load(fix("exec-ar-halving-doubling-8.json"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 9);
    for (int i = 0; i < ms.n; i++) {
        assert_int_equal(ms.m[i].coll, TT_COLL_ALLREDUCE);
        assert_int_equal(ms.m[i].algo, TT_ALGO_RHD);   /* "halving-doubling" */
        assert_int_equal(ms.m[i].proto, TT_PROTO_SIMPLE); /* host transports */
        assert_int_equal(ms.m[i].channels, 1);
        assert_int_equal(ms.m[i].nranks, 8);
        assert_int_equal(ms.m[i].nodes, 1);               /* shm */
        assert_true(ms.m[i].time_us > 0);
    }
    assert_true(ms.m[0].bytes == 1024 && ms.m[8].bytes == 64ULL << 20);
    /* the default plan switches algorithm with the size; each row keeps its own */
    tt_measure_set d = {0};
    assert_int_equal(tt_measure_load(fix("exec-ar-default-8.json"), NULL, &d), TT_OK);
    assert_int_equal(d.m[0].algo, TT_ALGO_TREE);
    assert_int_equal(d.m[d.n - 1].algo, TT_ALGO_RING);
    /* loading appends */
    assert_int_equal(tt_measure_load(fix("exec-ag-ring-8.json"), NULL, &d), TT_OK);
    assert_int_equal(d.m[d.n - 1].coll, TT_COLL_ALLGATHER);
    tt_measure_set_free(&d);
    tt_measure_set_free(&ms);
}

static void test_topo_exec_text_and_srun(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_load(fix("exec-ar-default-8.txt"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 9);
    assert_int_equal(ms.m[0].coll, TT_COLL_ALLREDUCE);
    assert_int_equal(ms.m[0].nranks, 8);
    assert_int_equal(ms.m[0].proto, TT_PROTO_SIMPLE);
    tt_measure_set_free(&ms);
    /* topo-exec with the prediction hook: pred/err% columns after each placement */
    assert_int_equal(tt_measure_load(fix("heldout/held-ar-ring-8.txt"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 8);
    assert_true(ms.m[0].time_oop_us == 22.92 && ms.m[0].time_ip_us == 19.28 && ms.m[0].time_us == 19.28);
    assert_int_equal(ms.m[0].algo, TT_ALGO_RING); /* "# plan: algo ring from --algo" */
    assert_int_equal(ms.m[0].channels, 1);
    assert_true(ms.m[7].bytes == 33554432 && ms.m[7].time_us == 17548.0);
    tt_measure_set_free(&ms);
    const char *hdr = "#  size count type redop root time algbw busbw #wrong pred err% time algbw busbw #wrong pred err%\n"
                      " 1024 256 float sum -1 5.0 0.2 0.3 0 4.0 -20.0 6.0 0.2 0.3\n";
    tt_measure_opts ho = TT_MEASURE_OPTS_DEFAULT;
    ho.coll = TT_COLL_ALLREDUCE;
    assert_int_equal(tt_measure_parse(hdr, strlen(hdr), "h.txt", &ho, &ms), TT_ERR_PARSE);
    assert_non_null(strstr(tt_error_message(), "h.txt:2: result row has 14 columns, the column header names 17"));
    /* srun -l prefixes, no header: the collective comes from the options, ranks from the
     * all_gather size/count relation */
    const char *t = "0:     8192    512  float  none  -1  24.10  0.34  0.25  N/A  23.80  0.34  0.26  N/A\n"
                    "0:   262144  16384  float  none  -1  30.55  8.58  6.44  N/A  31.02  8.45  6.34  N/A\n";
    tt_measure_opts o = TT_MEASURE_OPTS_DEFAULT;
    assert_int_equal(tt_measure_parse(t, strlen(t), "x.txt", &o, &ms), TT_ERR_PARSE);
    assert_non_null(strstr(tt_error_message(), "x.txt:1"));
    assert_non_null(strstr(tt_error_message(), "collective"));
    o.coll = TT_COLL_ALLGATHER;
    assert_int_equal(tt_measure_parse(t, strlen(t), "x.txt", &o, &ms), TT_OK);
    assert_int_equal(ms.n, 2);
    assert_int_equal(ms.m[1].nranks, 4);
    assert_true(ms.m[1].time_us == 30.55);
    tt_measure_set_free(&ms);
}

/* a sweep run several times in one file (topo-exec --cycles, nccl-tests -N): one row per size, the
 * fastest time of each placement, in the order of first appearance; another plan or rank count is
 * another row; the recorded 3-cycle host collection reads as one row per size */
static void test_repeats_merged(void **state)
{
    (void)state;
    const char *t = "# topo-exec (topotune 0.1.0) collective: all_reduce\n"
                    "#  Rank  0 Group  0 Pid   1 on h device -1 [host] shm\n"
                    "#  Rank  1 Group  0 Pid   1 on h device -1 [host] shm\n"
                    "# plan: algo ring from --algo, proto simple, channels 1, chunk 524288 bytes\n"
                    "  8  2 float sum -1  5.00 0.00 0.00 0  6.00 0.00 0.00 0\n"
                    " 16  4 float sum -1  7.00 0.00 0.00 0  7.50 0.00 0.00 0\n"
                    "  8  2 float sum -1  4.00 0.00 0.00 0  9.00 0.00 0.00 0\n"
                    " 16  4 float sum -1  8.00 0.00 0.00 0  6.50 0.00 0.00 0\n"
                    "  8  2 float sum -1  4.50 0.00 0.00 0  5.50 0.00 0.00 0\n";
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_parse(t, strlen(t), "c.txt", NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 2);
    assert_true(ms.m[0].bytes == 8 && ms.m[0].time_oop_us == 4.0 && ms.m[0].time_ip_us == 5.5);
    assert_true(ms.m[0].time_us == 4.0);
    assert_int_equal(ms.m[0].repeats, 3);
    assert_non_null(strstr(ms.m[0].where, "c.txt:5")); /* the first of the repeats */
    assert_true(ms.m[1].bytes == 16 && ms.m[1].time_oop_us == 7.0 && ms.m[1].time_ip_us == 6.5);
    assert_true(ms.m[1].time_us == 6.5);
    assert_int_equal(ms.m[1].repeats, 2);
    /* the row's own spread: the slowest repeat, each repeat at its faster placement */
    assert_true(ms.m[0].slowest_us == 5.0);
    assert_true(ms.m[1].slowest_us == 7.0);
    /* two independent estimates per row: the fastest of the odd (5.0, 4.5) and of the even (4.0) repeats */
    assert_true(ms.m[0].parity_us[0] == 4.5 && ms.m[0].parity_us[1] == 4.0);
    assert_true(ms.m[1].parity_us[0] == 7.0 && ms.m[1].parity_us[1] == 6.5);
    tt_repeatability rp;
    assert_int_equal(tt_measure_repeatability(&ms, 0, 0, &rp), TT_OK);
    assert_int_equal(rp.nrows, 2);
    assert_true(fabs(rp.worst - 0.125) < 1e-12); /* |4.5 - 4.0| / 4.0 */
    assert_true(rp.median > 0.5 / 6.5 - 1e-12 && rp.median < 0.125 + 1e-12);
    assert_non_null(strstr(rp.worst_row, "ring/simple 8 B, 2 ranks: 4.50 us against 4.00 us"));
    assert_int_equal(tt_measure_repeatability(&ms, 0, 4, &rp), TT_OK); /* no 4-rank rows */
    assert_int_equal(rp.nrows, 0);
    /* a second file with the same rows is kept apart (the readers merge within one file) */
    assert_int_equal(tt_measure_parse(t, strlen(t), "d.txt", NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 4);
    tt_measure_set_free(&ms);
    assert_int_equal(tt_measure_load(fix("model-truth-h200-c/host-8-tree-simple.txt"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 24); /* 8 B .. 64 MiB, x2; 3 cycles */
    for (int i = 0; i < ms.n; i++) {
        assert_int_equal(ms.m[i].repeats, 3);
        assert_true(ms.m[i].slowest_us >= ms.m[i].time_us);
        assert_true(i == 0 || ms.m[i].bytes == 2 * ms.m[i - 1].bytes);
    }
    tt_measure_set_free(&ms);
}

/* topo-exec's GPU mode: "collective: all_reduce, engine ...", nGpus, and a last column with
 * the plan each row ran ("ring/ll/2"); NCCL rows say "nccl" there (NCCL's own choice) */
static void test_topo_exec_gpu_text(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_load(fix("gpu-h200x2/sweep-ours-default.txt"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 16);
    assert_int_equal(ms.m[0].coll, TT_COLL_ALLREDUCE);
    assert_int_equal(ms.m[0].nranks, 2);
    assert_int_equal(ms.m[0].nodes, 1);
    assert_int_equal(ms.m[0].algo, TT_ALGO_RING);
    assert_int_equal(ms.m[0].proto, TT_PROTO_LL);
    assert_int_equal(ms.m[15].proto, TT_PROTO_SIMPLE);
    assert_true(ms.m[15].bytes == 8589934592ULL && ms.m[15].channels > 1);
    tt_measure_set_free(&ms);
    assert_int_equal(tt_measure_load(fix("gpu-h200x2/sweep-nccl-default.txt"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 16);
    assert_int_equal(ms.m[3].algo, -1);
    assert_int_equal(ms.m[3].proto, -1);
    tt_measure_set_free(&ms);
    /* the per-row plan wins over the "# plan:" line */
    const char *t = "# topo-exec (topotune 0.1.0) collective: all_reduce, engine topotune GPU executor\n"
                    "# plan: algo ring, proto simple, channels default\n"
                    "#  Rank  0 Group  0 Pid 1 on h device  0 [gpu] P2P/NVLink -> rank 1\n"
                    "#  Rank  1 Group  0 Pid 1 on h device  1 [gpu] P2P/NVLink -> rank 0\n"
                    "  1024  256  float  sum  -1  12.0  0.09  0.09  0  11.0  0.09  0.09  0  tree/ll/3\n";
    assert_int_equal(tt_measure_parse(t, strlen(t), "g.txt", NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 1);
    assert_int_equal(ms.m[0].algo, TT_ALGO_TREE);
    assert_int_equal(ms.m[0].proto, TT_PROTO_LL);
    assert_int_equal(ms.m[0].channels, 3);
    assert_true(ms.m[0].time_us == 11.0);
    tt_measure_set_free(&ms);
}

static void expect_error(const char *text, const char *want1, const char *want2)
{
    tt_measure_set ms = {0};
    tt_measure_opts o = TT_MEASURE_OPTS_DEFAULT;
    o.coll = TT_COLL_ALLREDUCE;
    tt_status st = tt_measure_parse(text, strlen(text), "bad.txt", &o, &ms);
    if (st == TT_OK) fail_msg("accepted: %s", text);
    if (!strstr(tt_error_message(), want1) || (want2 && !strstr(tt_error_message(), want2)))
        fail_msg("message '%s' lacks '%s' / '%s'", tt_error_message(), want1, want2 ? want2 : "");
    assert_int_equal(ms.n, 0); /* nothing appended */
    tt_measure_set_free(&ms);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_error("", "empty", NULL);
    expect_error("# only comments\n#\n", "no result rows", NULL);
    expect_error("# c\n 1024 256 float sum -1 17.85 0.06\n", "bad.txt:2", "columns");
    expect_error(" 1024 256 float sum -1 17.85 0.06 0.10 0 17.40 0.06 0.10 0\n 2048 512 float sum -1 abc 0.1 0.1 0\n",
                 "bad.txt:2", "out-of-place time 'abc'");
    expect_error(" 1024 256 float sum -1 0 0.06 0.10 0\n", "bad.txt:1", "above 0");
    expect_error(" 1024 256 quux sum -1 1.0 0.06 0.10 0\n", "bad.txt:1", "data type 'quux'");
    expect_error(" 10x24 256 float sum -1 1.0 0.06 0.10 0\n", "bad.txt:1", "size '10x24'");
    expect_error(" 1024 256 float sum -1 1.0 0.06 0.10 many\n", "bad.txt:1", "#wrong");
    expect_error("# Collective test starting: alltoallv_perf\n", "bad.txt:1", "alltoallv_perf");
    expect_error("{\n \"config\": {},\n \"results\": [ {\"size\": 1,\n", "bad.txt:", "not valid JSON");
    expect_error("{\"tool\": \"topo-exec\", \"config\": {\"collective\": \"all_reduce\", \"nranks\": 2}}", "\"results\"",
                 NULL);
    expect_error("{\"tool\": \"topo-exec\", \"config\": {\"collective\": \"all_reduce\", \"nranks\": 0}, \"results\": []}",
                 "config.nranks", NULL);
    expect_error("{\"tool\": \"topo-exec\", \"config\": {\"collective\": \"all_reduce\", \"nranks\": 2, \"transport\": \"shm\"},"
                 " \"results\": [{\"size\": 1024, \"algo\": \"bogus\", \"out_of_place\": {\"time\": 3}}]}",
                 "results[0].algo", "bogus");
    expect_error("{\"args\": [\"all_reduce_perf\"], \"config\": {\"nthreads\": 1, \"ngpus\": 2}, \"results\": "
                 "[{\"size\": 8, \"out_of_place\": {\"cpu_time\": 3}}]}",
                 "results[0].out_of_place", "cpu_time");
    expect_error("{\"args\": [\"all_reduce_perf\"], \"config\": {}, \"results\": [{\"size\": -8}]}", "results[0].size",
                 NULL);
    expect_error("{\"tool\": \"something\", \"config\": {}, \"results\": []}", "\"tool\"", NULL);
    expect_error("{\"tool\": \"topo-exec\"}\n\n{}", "bad.txt:3", "text after the JSON document");
    char bin[8] = {'1', ' ', 0, '2', '\n', 0, 0, 0};
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_parse(bin, 5, "b", NULL, &ms), TT_ERR_PARSE);
    assert_non_null(strstr(tt_error_message(), "binary"));
    assert_int_equal(tt_measure_load("/nonexistent/file.json", NULL, &ms), TT_ERR_IO);
    tt_measure_set_free(&ms);
}

/* topo-exec --validate: several candidates in one file, each result with its own algo, proto and channels */
static void test_topo_exec_validate_rows(void **state)
{
    (void)state;
    const char *j = "{\"tool\": \"topo-exec\", \"config\": {\"collective\": \"all_reduce\", \"nranks\": 4, "
                    "\"transport\": \"gpu\", \"proto_requested\": \"default\"}, \"results\": ["
                    "{\"size\": 1024, \"algo\": \"ring\", \"proto\": \"ll\", \"channels\": 2, \"role\": \"choice\","
                    " \"out_of_place\": {\"time\": 9}, \"in_place\": {\"time\": 8}},"
                    "{\"size\": 1024, \"algo\": \"tree\", \"proto\": \"simple\", \"channels\": 1,"
                    " \"out_of_place\": {\"time\": 7}, \"in_place\": {\"time\": 7.5}},"
                    "{\"size\": 1024, \"algo\": \"halving-doubling\", \"out_of_place\": {\"time\": 6}}]}";
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_parse(j, strlen(j), "v.json", NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 3);
    assert_int_equal(ms.m[0].algo, TT_ALGO_RING);
    assert_int_equal(ms.m[0].proto, TT_PROTO_LL);
    assert_int_equal(ms.m[0].channels, 2);
    assert_true(ms.m[0].time_us == 8);
    assert_int_equal(ms.m[1].algo, TT_ALGO_TREE);
    assert_int_equal(ms.m[1].proto, TT_PROTO_SIMPLE);
    assert_int_equal(ms.m[1].channels, 1);
    assert_int_equal(ms.m[2].algo, TT_ALGO_RHD);
    assert_int_equal(ms.m[2].proto, -1); /* not a host transport, no per-result proto: not recorded */
    tt_measure_set_free(&ms);
    expect_error("{\"tool\": \"topo-exec\", \"config\": {\"collective\": \"all_reduce\", \"nranks\": 2}, \"results\": "
                 "[{\"size\": 8, \"algo\": \"ring\", \"proto\": \"fast\", \"out_of_place\": {\"time\": 3}}]}",
                 "results[0].proto", "fast");
    expect_error("{\"tool\": \"topo-exec\", \"config\": {\"collective\": \"all_reduce\", \"nranks\": 2}, \"results\": "
                 "[{\"size\": 8, \"algo\": \"ring\", \"channels\": 0.5, \"out_of_place\": {\"time\": 3}}]}",
                 "results[0].channels", NULL);
}

/* every prefix of the fixtures: parsed or refused with TT_ERR_PARSE, never anything else */
static void test_truncated(void **state)
{
    (void)state;
    const char *files[] = {"nccl-tests-handwritten.txt", "nccl-tests-handwritten.json", "exec-ag-ring-2.json",
                           "heldout/held-ar-ring-8.txt"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char *buf = NULL;
        size_t len = 0;
        assert_int_equal(tt_read_file(fix(files[f]), 0, &buf, &len), TT_OK);
        for (size_t cut = 0; cut <= len; cut += 1 + cut / 50) {
            char *part = malloc(cut + 1); /* not NUL-terminated beyond cut: the reader keeps to len */
            assert_non_null(part);
            memcpy(part, buf, cut);
            part[cut] = '#';
            tt_measure_set ms = {0};
            tt_status st = tt_measure_parse(part, cut, files[f], NULL, &ms);
            if (st != TT_OK && st != TT_ERR_PARSE) fail_msg("%s cut at %zu: %s", files[f], cut, tt_error_message());
            if (st == TT_OK) assert_true(ms.n > 0);
            else assert_int_equal(ms.n, 0);
            tt_measure_set_free(&ms);
            free(part);
        }
        free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_handwritten),
        cmocka_unit_test(test_json_nccl_tests),
        cmocka_unit_test(test_json_topo_exec_recorded),
        cmocka_unit_test(test_topo_exec_text_and_srun),
        cmocka_unit_test(test_repeats_merged),
        cmocka_unit_test(test_topo_exec_gpu_text),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_topo_exec_validate_rows),
        cmocka_unit_test(test_truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
