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

/* ---- every published form of nccl-tests output (hand-written fixtures, tests/fixtures/measurements/README.md) ---- */

static tt_status parse_as(const char *text, int coll, const char *name, tt_measure_set *ms)
{
    tt_measure_opts o = TT_MEASURE_OPTS_DEFAULT;
    o.coll = coll;
    return tt_measure_parse(text, strlen(text), name, &o, ms);
}

/* refused, the message naming want1 (file:line) and want2, nothing appended */
static void refused(const char *text, int coll, const char *want1, const char *want2)
{
    tt_measure_set ms = {0};
    tt_status st = parse_as(text, coll, "t.txt", &ms);
    if (st == TT_OK) fail_msg("accepted: %s", text);
    if (!strstr(tt_error_message(), want1) || (want2 && !strstr(tt_error_message(), want2)))
        fail_msg("message '%s' lacks '%s' / '%s'", tt_error_message(), want1, want2 ? want2 : "");
    assert_int_equal(ms.n, 0);
    tt_measure_set_free(&ms);
}

static const tt_measurement *row_of(const tt_measure_set *ms, uint64_t bytes)
{
    for (int i = 0; i < ms->n; i++)
        if (ms->m[i].bytes == bytes) return &ms->m[i];
    fail_msg("no row of %llu bytes", (unsigned long long)bytes);
    return NULL;
}

/* nccl-tests 2019 - 2022: "size count type redop time algbw busbw error" (no root column), 16 ranks
 * on 4 nodes; before the fix the algbw column was read as the time (1 MiB at 8.42 us) */
static void test_table_without_root(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    tt_measure_opts o = TT_MEASURE_OPTS_DEFAULT;
    o.coll = TT_COLL_ALLREDUCE; /* those versions do not print the program name */
    assert_int_equal(tt_measure_load(fix("nccl-tests-2019-allreduce-4node.txt"), &o, &ms), TT_OK);
    assert_int_equal(ms.n, 7);
    const tt_measurement *m = row_of(&ms, 1048576);
    assert_true(m->time_oop_us == 124.5 && m->time_ip_us == 123.9 && m->time_us == 123.9);
    assert_true(m->busbw == 15.87);
    assert_int_equal(m->coll, TT_COLL_ALLREDUCE);
    assert_int_equal(m->nranks, 16);
    assert_int_equal(m->nodes, 4);
    assert_non_null(strstr(m->where, "nccl-tests-2019-allreduce-4node.txt:28"));
    m = row_of(&ms, 1073741824ULL);
    assert_true(m->time_oop_us == 44012 && m->time_us == 43987 && m->busbw == 45.77);
    m = row_of(&ms, 8);
    assert_true(m->time_us == 41.20);
    tt_measure_set_free(&ms);
    assert_int_equal(tt_measure_load(fix("nccl-tests-2019-allreduce-4node.txt"), NULL, &ms), TT_ERR_PARSE);
    assert_non_null(strstr(tt_error_message(), "nccl-tests-2019-allreduce-4node.txt:24"));
    assert_non_null(strstr(tt_error_message(), "--collective"));

    /* all_gather of those versions: no redop column either, and algbw = size x (n-1)/n / time */
    const char *ag = "#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n"
                     "#        (B)    (elements)              (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
                     "      131072          4096   float    30.20    3.80    3.80  0e+00    29.90    3.84    3.84  0e+00\n"
                     "     4194304        131072   float    210.3   17.45   17.45  0e+00    209.8   17.49   17.49  0e+00\n";
    assert_int_equal(parse_as(ag, TT_COLL_ALLGATHER, "ag.txt", &ms), TT_OK);
    assert_int_equal(ms.n, 2);
    assert_true(ms.m[1].time_us == 209.8 && ms.m[1].busbw == 17.49);
    assert_int_equal(ms.m[1].nranks, 8); /* size / (count x 4 bytes), no rank lines */
    tt_measure_set_free(&ms);
    /* broadcast of those versions: root where the others have redop */
    const char *bc = "#       size         count    type    root     time   algbw   busbw  error     time   algbw   busbw  error\n"
                     "     1048576        262144   float       0    95.14   11.02   11.02  0e+00    94.87   11.05   11.05  0e+00\n";
    assert_int_equal(parse_as(bc, TT_COLL_BROADCAST, "bc.txt", &ms), TT_OK);
    assert_true(ms.m[0].time_us == 94.87 && ms.m[0].busbw == 11.05);
    tt_measure_set_free(&ms);
}

/* no column header: the row's shape decides (column count, root or redop in the 4th / 5th token) */
static void test_no_header_inferred(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    struct {
        const char *row;
        int coll;
        double oop, ip, busbw;
    } ok[] = {
        /* today's 13 columns, root -1 in the 5th */
        {"  1048576  262144  float  sum  -1  124.5  8.42  15.79  0  123.9  8.46  15.87  0\n", TT_COLL_ALLREDUCE, 124.5, 123.9, 15.87},
        /* 2019 - 2022 all_reduce: 12 columns, the 5th a time */
        {"  1048576  262144  float  sum  124.5  8.42  15.79  2e-07  123.9  8.46  15.87  2e-07\n", TT_COLL_ALLREDUCE, 124.5, 123.9, 15.87},
        /* ... a time above 10 ms is printed as an integer */
        {"  1073741824  268435456  float  sum  44012  24.40  45.74  2e-07  43987  24.41  45.77  2e-07\n", TT_COLL_ALLREDUCE, 44012, 43987, 45.77},
        /* 2019 - 2022 broadcast: the 4th an integer root */
        {"  1048576  262144  float  0  95.14  11.02  11.02  0e+00  94.87  11.05  11.05  0e+00\n", TT_COLL_BROADCAST, 95.14, 94.87, 11.05},
        /* 2019 - 2022 all_gather: 11 columns */
        {"  4194304  131072  float  210.3  17.45  17.45  0e+00  209.8  17.49  17.49  0e+00\n", TT_COLL_ALLGATHER, 210.3, 209.8, 17.49},
        /* one placement: 9 columns */
        {"  1048576  262144  float  sum  -1  124.5  8.42  15.79  0\n", TT_COLL_ALLREDUCE, 124.5, -1, 15.79},
        /* -S 1 timestamp after the row */
        {"  1048576  262144  float  sum  -1  124.5  8.42  15.79  0  123.9  8.46  15.87  0  2025-10-28 12:00:00\n", TT_COLL_ALLREDUCE, 124.5, 123.9, 15.87},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (parse_as(ok[i].row, ok[i].coll, "r.txt", &ms) != TT_OK) fail_msg("%s: %s", ok[i].row, tt_error_message());
        assert_int_equal(ms.n, 1);
        if (ms.m[0].time_oop_us != ok[i].oop || ms.m[0].time_ip_us != ok[i].ip || ms.m[0].busbw != ok[i].busbw)
            fail_msg("%s: read %g / %g us, busbw %g", ok[i].row, ms.m[0].time_oop_us, ms.m[0].time_ip_us, ms.m[0].busbw);
        tt_measure_set_free(&ms);
    }
    /* ambiguous or malformed: refused with file:line */
    refused("# c\n  1048576  262144  float  sum  -1  124.5  8.42  15.79  0  123.9\n", TT_COLL_ALLREDUCE, "t.txt:2",
            "matches no nccl-tests layout");
    refused("  1048576  262144  float  sum  124.5  8.42  15.79  2e-07  123.9  8.46  15.87  2e-07  9\n", TT_COLL_ALLREDUCE,
            "t.txt:1", "13 columns");
    /* the 2017 form printed milliseconds: without its header the unit is unknown */
    refused("  2097152  524288  float  sum  0.487  4.31  7.54  1e-07  0.484  4.33  7.58  1e-07\n", TT_COLL_ALLREDUCE,
            "t.txt:1", "3 decimals");
    /* a time that disagrees with its algbw (here milliseconds with 2 decimals) is not read as us */
    refused("  1048576  262144  float  sum  -1  0.12  8.42  15.79  0  0.12  8.46  15.87  0\n", TT_COLL_ALLREDUCE, "t.txt:1",
            "disagree with the size 1048576 B");
}

/* the oldest form (2017 - early 2019): "bytes N type op time algbw busbw res", time in ms, every
 * process printing its own rank lines (here behind Open MPI --tag-output, ranks 4-7 in [1,1]'s lines) */
static void test_oldest_form_ms(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    tt_measure_opts o = TT_MEASURE_OPTS_DEFAULT;
    o.coll = TT_COLL_ALLREDUCE;
    assert_int_equal(tt_measure_load(fix("nccl-tests-2017-tagged.txt"), &o, &ms), TT_OK);
    assert_int_equal(ms.n, 5);
    const tt_measurement *m = row_of(&ms, 2097152);
    assert_true(fabs(m->time_oop_us - 487.0) < 1e-9 && fabs(m->time_us - 484.0) < 1e-9);
    assert_true(m->busbw == 7.58);
    assert_int_equal(m->nranks, 8);
    assert_int_equal(m->nodes, 2);
    assert_non_null(strstr(m->where, "nccl-tests-2017-tagged.txt:17"));
    tt_measure_set_free(&ms);
    /* broadcast of that time: root, out-of-place only */
    const char *bc = "#      bytes             N    type    root     time  algbw  busbw      res\n"
                     "     1048576        262144   float       0    0.112   9.36   9.36    0e+00\n";
    assert_int_equal(parse_as(bc, TT_COLL_BROADCAST, "bc.txt", &ms), TT_OK);
    assert_true(fabs(ms.m[0].time_oop_us - 112.0) < 1e-9 && ms.m[0].time_ip_us == -1 && ms.m[0].busbw == 9.36);
    tt_measure_set_free(&ms);
}

/* today's extra columns: -I 1 per-iteration statistics, 2024-2025 copybw, -S 1 timestamps; -C refused */
static void test_header_variants(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    const char *per_iter =
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%\n"
        "     1048576        262144     float     sum      -1    31.52   33.27   58.22       0    30.10    40.22    39.80     4.10    31.90   32.87   57.52       0    30.55    41.02    40.10     4.30\n";
    assert_int_equal(parse_as(per_iter, TT_COLL_ALLREDUCE, "i.txt", &ms), TT_OK);
    assert_true(ms.m[0].time_oop_us == 31.52 && ms.m[0].time_ip_us == 31.90 && ms.m[0].busbw == 58.22);
    tt_measure_set_free(&ms);
    const char *copybw = "#       size         count      type   redop    root     time   algbw   busbw copybw #wrong     time   algbw   busbw copybw #wrong\n"
                         "     1048576        262144     float     sum      -1    31.52   33.27   58.22   0.00     0    31.90   32.87   57.52   0.00     0\n";
    assert_int_equal(parse_as(copybw, TT_COLL_ALLREDUCE, "c.txt", &ms), TT_OK);
    assert_true(ms.m[0].time_ip_us == 31.90 && ms.m[0].busbw == 58.22);
    tt_measure_set_free(&ms);
    const char *ts = "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong           timestamp\n"
                     "     1048576        262144     float     sum      -1    31.52   33.27   58.22       0    31.90   32.87   57.52       0 2025-10-28 12:00:00\n";
    assert_int_equal(parse_as(ts, TT_COLL_ALLREDUCE, "s.txt", &ms), TT_OK);
    assert_true(ms.m[0].time_us == 31.52);
    tt_measure_set_free(&ms);
    refused("#\n#       size         count      type   redop    root  cputime   algbw   busbw  #wrong  cputime   algbw   busbw  #wrong\n"
            "     1048576        262144     float     sum      -1     5.20  201.65  352.89       0     5.10  205.60  359.80       0\n",
            TT_COLL_ALLREDUCE, "t.txt:2", "-C");
}

/* a row with one placement printed, the other half left blank: the header's columns tell which */
static void test_half_rows(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    const char *t = "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
                    "     1048576        262144     float     sum      -1                                       31.90   32.87   57.52       0\n"
                    "     2097152        524288     float     sum      -1    45.10   46.50   81.37       0\n"
                    "     4194304       1048576     float     sum      -1    70.31   59.65  104.39       0    70.02   59.90  104.83       0\n";
    assert_int_equal(parse_as(t, TT_COLL_ALLREDUCE, "h.txt", &ms), TT_OK);
    assert_int_equal(ms.n, 3);
    assert_true(ms.m[0].time_oop_us == -1 && ms.m[0].time_ip_us == 31.90 && ms.m[0].time_us == 31.90);
    assert_true(ms.m[0].busbw == 57.52);
    assert_true(ms.m[1].time_oop_us == 45.10 && ms.m[1].time_ip_us == -1 && ms.m[1].busbw == 81.37);
    assert_true(ms.m[2].time_us == 70.02);
    tt_measure_set_free(&ms);
    /* neither a whole row nor one half */
    refused("#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
            " 1048576 262144 float sum -1 31.52 33.27 58.22 0 31.90 32.87\n",
            TT_COLL_ALLREDUCE, "t.txt:2", "11 columns, the column header names 13");
}

/* size-0 rows (all_gather below nranks elements, -b 0) are skipped; a file of only those is refused */
static void test_size_zero_rows(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_load(fix("nccl-tests-allgather-size0.txt"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 4);
    assert_true(ms.m[0].bytes == 32 && ms.m[0].time_us == 10.61);
    assert_int_equal(ms.m[0].coll, TT_COLL_ALLGATHER);
    assert_int_equal(ms.m[0].nranks, 8);
    assert_non_null(strstr(ms.m[0].where, "nccl-tests-allgather-size0.txt:20"));
    tt_measure_set_free(&ms);
    refused("# Collective test starting: all_gather_perf\n"
            "           0             0     float    none      -1     0.22    0.00    0.00       0     0.21    0.00    0.00       0\n",
            -1, "t.txt: only size-0 rows", NULL);
    refused("{\"args\": [\"all_gather_perf\"], \"config\": {\"nthreads\": 1, \"ngpus\": 8, \"devices\": [{\"rank\": 0}]}, "
            "\"results\": [{\"size\": 0, \"out_of_place\": {\"time\": 0.2}}]}",
            -1, "t.txt: only size-0 rows", NULL);
}

/* launcher prefixes on every line read like the bare table */
static void test_launcher_prefixes(void **state)
{
    (void)state;
    char *base = NULL;
    size_t len = 0;
    assert_int_equal(tt_read_file(fix("nccl-tests-allgather-size0.txt"), 0, &base, &len), TT_OK);
    const char *pfx[] = {"[1,0]<stdout>:", "[1,0]<stdout>: ", "0: ", " 0: ", "[0] ", "node01: "};
    for (size_t k = 0; k < sizeof pfx / sizeof pfx[0]; k++) {
        char *t = malloc(len * 2 + 4096);
        assert_non_null(t);
        size_t w = 0;
        for (const char *l = base; l < base + len;) {
            const char *e = memchr(l, '\n', (size_t)(base + len - l));
            size_t n = e ? (size_t)(e - l) + 1 : (size_t)(base + len - l);
            w += (size_t)sprintf(t + w, "%s", pfx[k]);
            memcpy(t + w, l, n);
            w += n;
            l += n;
        }
        t[w] = 0;
        tt_measure_set ms = {0};
        if (parse_as(t, -1, "p.txt", &ms) != TT_OK) fail_msg("prefix '%s': %s", pfx[k], tt_error_message());
        assert_int_equal(ms.n, 4);
        assert_true(ms.m[3].bytes == 1048576 && ms.m[3].time_us == 27.61 && ms.m[3].busbw == 33.23);
        assert_int_equal(ms.m[3].nranks, 8);
        assert_int_equal(ms.m[3].nodes, 1);
        assert_int_equal(ms.m[3].repeats, 1);
        tt_measure_set_free(&ms);
        free(t);
    }
    free(base);
    /* two ranks each printing a table of its own (a build without MPI under srun -l), lines
     * interleaved, rank 0's stderr in between: copies, not repeats - rank 0's rows only */
    const char *copies =
        "1: # Collective test starting: all_reduce_perf\n"
        "0: # Collective test starting: all_reduce_perf\n"
        "0: #  Rank  0 Group  0 Pid   1001 on     node01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n"
        "1: #  Rank  0 Group  0 Pid   2001 on     node02 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n"
        "0: #  Rank  1 Group  0 Pid   1001 on     node01 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3\n"
        "1: #  Rank  1 Group  0 Pid   2001 on     node02 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3\n"
        "1: #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
        "0: #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
        "1:      1048576        262144     float     sum      -1    12.50   83.89   83.89       0    12.40   84.56   84.56       0\n"
        "0: node01: warning: clock skew detected\n"
        "0:      1048576        262144     float     sum      -1    13.10   80.04   80.04       0    13.00   80.66   80.66       0\n"
        "0:     16777216       4194304     float     sum      -1   110.20  152.24  152.24       0   110.00  152.52  152.52       0\n"
        "1:     16777216       4194304     float     sum      -1   108.70  154.35  154.35       0   108.90  154.06  154.06       0\n"
        "1: # Collective test concluded: all_reduce_perf\n"
        "0: # Collective test concluded: all_reduce_perf\n";
    tt_measure_set ms = {0};
    assert_int_equal(parse_as(copies, -1, "c.txt", &ms), TT_OK);
    assert_int_equal(ms.n, 2);
    assert_true(ms.m[0].bytes == 1048576 && ms.m[0].time_us == 13.00 && ms.m[0].repeats == 1);
    assert_true(ms.m[1].bytes == 16777216 && ms.m[1].time_us == 110.00 && ms.m[1].repeats == 1);
    assert_int_equal(ms.m[1].nranks, 2);
    assert_int_equal(ms.m[1].nodes, 1);
    assert_non_null(strstr(ms.m[0].where, "c.txt:11"));
    tt_measure_set_free(&ms);
    /* Open MPI: another rank's stderr interleaved with rank 0's table */
    const char *om = "[1,0]<stdout>:# Collective test starting: all_reduce_perf\n"
                     "[1,0]<stdout>:#  Rank  0 Group  0 Pid   1001 on     node01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n"
                     "[1,0]<stdout>:#  Rank  1 Group  0 Pid   2001 on     node02 device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n"
                     "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
                     "[1,0]<stdout>:      1048576        262144     float     sum      -1    45.10   23.25   23.25       0    44.90   23.35   23.35       0\n"
                     "[1,1]<stderr>:# 12 something that is not nccl-tests' output\n"
                     "[1,1]<stderr>:  12 34 not a row of a table\n"
                     "[1,0]<stdout>:     16777216       4194304     float     sum      -1   701.20   23.93   23.93       0   700.80   23.94   23.94       0\n";
    /* rank 1 printed no table: its stray lines do not refuse rank 0's */
    assert_int_equal(parse_as(om, -1, "o.txt", &ms), TT_OK);
    assert_int_equal(ms.n, 2);
    assert_true(ms.m[1].time_us == 700.80 && ms.m[1].nranks == 2 && ms.m[1].nodes == 2);
    assert_non_null(strstr(ms.m[1].where, "o.txt:8"));
    tt_measure_set_free(&ms);
    /* a malformed row of the rank whose table is read still refuses the file, with its line */
    char bad[2048];
    snprintf(bad, sizeof bad, "%s[1,0]<stdout>:     33554432       8388608     float     sum      -1   abc\n", om);
    assert_int_equal(parse_as(bad, -1, "o.txt", &ms), TT_ERR_PARSE);
    assert_non_null(strstr(tt_error_message(), "o.txt:9"));
    assert_int_equal(ms.n, 0);
    tt_measure_set_free(&ms);
}

/* nccl-tests -J, schema version 1 (2.17.x: one devices entry per process, the 'bandwidith' typo,
 * a size-0 row, nwrong null) and version 3 (2.19.x: per-iteration members) */
static void test_json_schema_versions(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    assert_int_equal(tt_measure_load(fix("nccl-tests-v1.json"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 3); /* the size-0 result skipped */
    const tt_measurement *m = row_of(&ms, 4194304);
    assert_int_equal(m->coll, TT_COLL_ALLREDUCE);
    assert_int_equal(m->nranks, 8); /* 2 processes x ngpus 4 */
    assert_int_equal(m->nodes, 2);
    assert_true(m->time_oop_us == 121.35 && m->time_us == 120.98);
    assert_true(fabs(m->busbw - 4194304 / 120.98e3 * 1.75) < 1e-3);
    assert_non_null(strstr(m->where, "nccl-tests-v1.json: results[2]"));
    tt_measure_set_free(&ms);
    assert_int_equal(tt_measure_load(fix("nccl-tests-v3.json"), NULL, &ms), TT_OK);
    assert_int_equal(ms.n, 3);
    m = row_of(&ms, 1048576);
    assert_int_equal(m->coll, TT_COLL_REDUCESCATTER);
    assert_int_equal(m->nranks, 8); /* one process, -g 8: one devices entry */
    assert_int_equal(m->nodes, 1);
    assert_true(m->time_oop_us == 25.37 && m->time_ip_us == 25.15);
    tt_measure_set_free(&ms);
    /* errors name the member */
    refused("{\"version\": \"3\", \"args\": [\"all_reduce_perf\"], \"config\": {\"nthreads\": 1, \"ngpus\": 1}, \"results\": []}",
            -1, "t.txt: version", NULL);
    refused("{\"version\": 1, \"args\": [\"all_reduce_perf\"], \"config\": {\"nthreads\": 1, \"ngpus\": 4, \"devices\": "
            "[{\"rank\": 0}, {\"rank\": 3}]}, \"results\": []}",
            -1, "config.devices[].rank", NULL);
    refused("{\"version\": 1, \"args\": [\"all_reduce_perf\"], \"config\": {\"nthreads\": 1, \"ngpus\": 4, \"devices\": "
            "[{\"rank\": 0, \"group\": 0}, {\"rank\": 4, \"group\": 1}]}, \"results\": []}",
            -1, "config.devices[1].group", "NCCL_TESTS_SPLIT");
    refused("{\"version\": 3, \"args\": [\"all_reduce_perf\"], \"config\": {\"nthreads\": 1, \"ngpus\": 8, \"devices\": "
            "[{\"rank\": 0}]}, \"results\": [{\"size\": 8, \"root\": \"    -1\", \"out_of_place\": {\"time\": \"nan\"}}]}",
            -1, "results[0].out_of_place.time", NULL);
    refused("{\"identifier\": \"nccl-tests structured output\", \"version\": \"2.26.6\", \"benchmark\": []}", -1,
            "identifier", NULL);
    /* NCCL_TESTS_SPLIT with one rank per process: rank 0's group */
    const char *split = "{\"version\": 1, \"args\": [\"all_reduce_perf\"], \"config\": {\"nthreads\": 1, \"ngpus\": 1, \"devices\": ["
                        "{\"rank\": 0, \"group\": 0, \"hostname\": \"a\"}, {\"rank\": 1, \"group\": 1, \"hostname\": \"a\"},"
                        "{\"rank\": 2, \"group\": 0, \"hostname\": \"b\"}, {\"rank\": 3, \"group\": 1, \"hostname\": \"b\"}]},"
                        "\"results\": [{\"size\": 1024, \"out_of_place\": {\"time\": 9.5}}]}";
    assert_int_equal(parse_as(split, -1, "s.json", &ms), TT_OK);
    assert_int_equal(ms.m[0].nranks, 2);
    assert_int_equal(ms.m[0].nodes, 2);
    tt_measure_set_free(&ms);
}

/* several runs in one file: another collective, another rank count, the same run again */
static void test_runs_kept_apart(void **state)
{
    (void)state;
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    assert_int_equal(tt_read_file(fix("nccl-tests-handwritten.txt"), 0, &a, &la), TT_OK);
    assert_int_equal(tt_read_file(fix("nccl-tests-allgather-size0.txt"), 0, &b, &lb), TT_OK);
    char *t = malloc(2 * la + lb + 1);
    assert_non_null(t);
    memcpy(t, a, la);
    memcpy(t + la, b, lb);
    memcpy(t + la + lb, a, la);
    t[2 * la + lb] = 0;
    tt_measure_set ms = {0};
    assert_int_equal(parse_as(t, -1, "runs.txt", &ms), TT_OK);
    /* all_reduce x8 (5 sizes, run twice: repeats), all_gather x4 on 2 hosts (3, twice), all_gather x8 (4) */
    assert_int_equal(ms.n, 12);
    int ar = 0, ag4 = 0, ag8 = 0;
    for (int i = 0; i < ms.n; i++) {
        const tt_measurement *m = &ms.m[i];
        if (m->coll == TT_COLL_ALLREDUCE && m->nranks == 8 && m->nodes == 1 && m->repeats == 2) ar++;
        if (m->coll == TT_COLL_ALLGATHER && m->nranks == 4 && m->nodes == 2 && m->repeats == 2) ag4++;
        if (m->coll == TT_COLL_ALLGATHER && m->nranks == 8 && m->nodes == 1 && m->repeats == 1) ag8++;
    }
    assert_int_equal(ar, 5);
    assert_int_equal(ag4, 3);
    assert_int_equal(ag8, 4);
    tt_measure_set_free(&ms);
    free(t);
    free(a);
    free(b);
}

/* our fact tables of published results ("topotune published result, version 1") */
static void test_fact_tables(void **state)
{
    (void)state;
    tt_measure_set ms = {0};
    tt_measure_opts o = TT_MEASURE_OPTS_DEFAULT;
    o.coll = TT_COLL_BROADCAST; /* the file says its collective; it wins */
    assert_int_equal(tt_measure_load(fix("facts-handwritten.txt"), &o, &ms), TT_OK);
    assert_int_equal(ms.n, 5); /* the size-0 row skipped */
    for (int i = 0; i < ms.n; i++) {
        assert_int_equal(ms.m[i].coll, TT_COLL_ALLREDUCE);
        assert_int_equal(ms.m[i].nranks, 16);
        assert_int_equal(ms.m[i].nodes, 2);
        assert_int_equal(ms.m[i].algo, -1);
        assert_int_equal(ms.m[i].proto, -1);
        assert_int_equal(ms.m[i].exec_kind, TT_RANKS_NONE);
    }
    const tt_measurement *m = row_of(&ms, 65536);
    assert_true(m->time_oop_us == 41.06 && m->time_ip_us == -1 && m->time_us == 41.06 && m->busbw == 2.99);
    assert_non_null(strstr(m->where, "facts-handwritten.txt:16"));
    m = row_of(&ms, 1048576); /* busbw only: time = bytes / (busbw / (2 x 15 / 16)) / 1000 */
    assert_true(fabs(m->time_us - 1048576.0 / (61.20 / 1.875) / 1000.0) < 1e-9 && m->busbw == 61.20);
    m = row_of(&ms, 8589934592ULL);
    assert_true(m->time_us == 34470.1);
    tt_measure_set_free(&ms);

    const char *head = "# topotune published result, version 1\n"
                       "# source: https://example.org/run (test)\n"
                       "# hardware: 1 node x 8 GPUs\n"
                       "# software: unknown\n"
                       "# run: all_gather_perf\n"
                       "# health: healthy: test\n"
                       "# topo-tune: -i hgx-h100-8gpu.xml\n";
    char t[2048];
    snprintf(t, sizeof t, "%scollective allgather\nranks 8\nnodes 1\nalgo ring\nproto simple\n1048576 - - 150.50\n", head);
    assert_int_equal(parse_as(t, -1, "f.txt", &ms), TT_OK);
    assert_int_equal(ms.m[0].coll, TT_COLL_ALLGATHER);
    assert_int_equal(ms.m[0].algo, TT_ALGO_RING);
    assert_int_equal(ms.m[0].proto, TT_PROTO_SIMPLE);
    assert_true(fabs(ms.m[0].time_us - 1048576.0 / (150.50 / 0.875) / 1000.0) < 1e-9);
    tt_measure_set_free(&ms);
    /* refused with file:line */
    struct {
        const char *body, *want1, *want2;
    } bad[] = {
        {"collective allreduce\nranks 8\nnodes 1\n1024 - - -\n", "t.txt:11", "needs a time or a busbw"},
        {"collective allreduce\nranks 8\n1024 5.0 - -\n", "t.txt:10", "no 'nodes' line"},
        {"collective allreduce\nranks 8\nnodes 1\n1024 5.0 -\n", "t.txt:11", "3 columns"},
        {"collective allreduce\nranks 8\nnodes 1\nalgo bogus\n", "t.txt:11", "algo 'bogus'"},
        {"collective allreduce\nranks 8\nnodes 1\nproto fast\n", "t.txt:11", "proto 'fast'"},
        {"collective allreduce\nranks 8\nnodes 1\nflavour mild\n", "t.txt:11", "unknown line 'flavour'"},
        {"collective allreduce\nranks 8\nnodes 1\n1024 5.0 - -\nranks 16\n", "t.txt:12", "after the figures"},
        {"collective allreduce\nranks 8\nnodes 1\n1024 -3 - -\n", "t.txt:11", "oop_us '-3'"},
        {"collective allreduce\nranks 8\nnodes 16\n1024 5.0 - -\n", "t.txt:11", "nodes 16 is more than ranks 8"},
        {"collective alltoall\n", "t.txt:8", "unknown collective 'alltoall'"},
        {"collective allreduce\nranks 8\nnodes 1\n", "t.txt:10", "no figure lines"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(t, sizeof t, "%s%s", head, bad[i].body);
        refused(t, -1, bad[i].want1, bad[i].want2);
    }
    refused("# topotune published result, version 2\n", -1, "t.txt:1", "version 2");
    refused("# topotune published result, version 1\n# source: x\ncollective allreduce\nranks 8\nnodes 1\n1024 5.0 - -\n", -1,
            "t.txt:6", "no '# hardware:' line");
    refused("# topotune published result, version 1\n# source: x\n# source: y\n", -1, "t.txt:3", "second '# source:'");
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
        cmocka_unit_test(test_table_without_root),
        cmocka_unit_test(test_no_header_inferred),
        cmocka_unit_test(test_oldest_form_ms),
        cmocka_unit_test(test_header_variants),
        cmocka_unit_test(test_half_rows),
        cmocka_unit_test(test_size_zero_rows),
        cmocka_unit_test(test_launcher_prefixes),
        cmocka_unit_test(test_json_schema_versions),
        cmocka_unit_test(test_runs_kept_apart),
        cmocka_unit_test(test_fact_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
