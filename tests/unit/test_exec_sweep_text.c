/* test_exec_sweep_text.c - a sweep's results as nccl-tests' text (tt_sweep_text_*): the exact
 * preamble, rank lines, column heads, rows (both placements, #wrong and N/A, the prediction
 * columns, number fitting) and closing lines, so that the nccl-tests form cannot drift. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_exec.h"

/* sb's text (owned by the caller's buffer: freed by done()) */
static char last[4096];
static const char *done(tt_strbuf *sb)
{
    assert_int_equal(tt_strbuf_status(sb), TT_OK);
    snprintf(last, sizeof last, "%s", sb->data ? sb->data : "");
    tt_strbuf_free(sb);
    tt_strbuf_init(sb);
    return last;
}

static tt_sweep_opts sweep(tt_coll coll, tt_dtype dtype, int root)
{
    tt_sweep_opts o;
    memset(&o, 0, sizeof o);
    o.coll = coll;
    o.dtype = dtype;
    o.op = TT_SUM;
    o.root = root;
    o.minb = 1024;
    o.maxb = 65536;
    o.stepb = 1024;
    o.factor = 4;
    o.iters = 20;
    o.warmup = 5;
    o.agg = 2;
    o.check = 1;
    o.check_max = 1u << 20;
    o.plan = TT_PLAN_DEFAULT;
    return o;
}

static tt_sweep_result result(uint64_t bytes, size_t count, double t0, double t1, double a0, double a1, double b0,
                              double b1, long long w0, long long w1)
{
    tt_sweep_result r;
    memset(&r, 0, sizeof r);
    r.m.bytes = bytes;
    r.m.count = count;
    r.m.time_us[0] = t0;
    r.m.time_us[1] = t1;
    r.m.algbw[0] = a0;
    r.m.algbw[1] = a1;
    r.m.busbw[0] = b0;
    r.m.busbw[1] = b1;
    r.m.wrong[0] = w0;
    r.m.wrong[1] = w1;
    return r;
}

static void test_coll_names(void **st)
{
    (void)st;
    assert_string_equal(tt_sweep_coll_name(TT_COLL_ALLREDUCE), "all_reduce");
    assert_string_equal(tt_sweep_coll_name(TT_COLL_REDUCESCATTER), "reduce_scatter");
    assert_string_equal(tt_sweep_coll_name(TT_COLL_ALLGATHER), "all_gather");
    assert_string_equal(tt_sweep_coll_name(TT_COLL_BROADCAST), "broadcast");
    assert_string_equal(tt_sweep_coll_name(TT_COLL_REDUCE), "reduce");
    assert_string_equal(tt_sweep_coll_name((tt_coll)99), "?");
}

static void test_preamble(void **st)
{
    (void)st;
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_sweep_opts o = sweep(TT_COLL_ALLREDUCE, TT_FLOAT, 0);
    char want[1024];

    /* nccl-tests' preamble (a drop-in): its version line's shape, saying whose it is; the note only
     * with extra (--topotune); the -J file announced first */
    tt_sweep_text_run perf = {"all_reduce_perf", "# a note", NULL, 4, 0, 0, NULL};
    tt_sweep_text_preamble(&sb, &perf, &o);
    snprintf(want, sizeof want,
             "# nccl-tests version 2.19.6+topotune.%s nccl-headers=0 nccl-library=0\n"
             "# Collective test starting: all_reduce_perf\n"
             "# nThread 4 nGpus 0 minBytes 1024 maxBytes 65536 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 2 "
             "validation: 1 graph: 0 unalign: 0\n", TT_VERSION_STRING);
    assert_string_equal(done(&sb), want);
    perf.extra = 1;
    perf.json = "r.json";
    tt_sweep_text_preamble(&sb, &perf, &o);
    snprintf(want, sizeof want,
             "# Writing JSON output to r.json\n"
             "# nccl-tests version 2.19.6+topotune.%s nccl-headers=0 nccl-library=0\n"
             "# Collective test starting: all_reduce_perf\n"
             "# nThread 4 nGpus 0 minBytes 1024 maxBytes 65536 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 2 "
             "validation: 1 graph: 0 unalign: 0\n"
             "# a note\n", TT_VERSION_STRING);
    assert_string_equal(done(&sb), want);

    /* the drop-in on GPU ranks: the engine line with extra */
    tt_sweep_text_run perf_gpu = {"all_reduce_perf", NULL, "topotune GPU executor", 1, 2, 1, NULL};
    tt_sweep_text_preamble(&sb, &perf_gpu, &o);
    snprintf(want, sizeof want,
             "# nccl-tests version 2.19.6+topotune.%s nccl-headers=0 nccl-library=0\n"
             "# Collective test starting: all_reduce_perf\n"
             "# nThread 1 nGpus 2 minBytes 1024 maxBytes 65536 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 2 "
             "validation: 1 graph: 0 unalign: 0\n"
             "# engine topotune GPU executor; checked up to 1048576 bytes\n", TT_VERSION_STRING);
    assert_string_equal(done(&sb), want);

    /* topo-exec's own, host ranks, step in bytes */
    o.factor = 1;
    tt_sweep_text_run host = {NULL, "# not printed", NULL, 1, 0, 1, NULL};
    tt_sweep_text_preamble(&sb, &host, &o);
    snprintf(want, sizeof want,
             "# topo-exec (topotune %s) collective: all_reduce\n"
             "# nThread 1 nGpus 0 minBytes 1024 maxBytes 65536 step: 1024(bytes) warmup iters: 5 iters: 20 agg iters: 2 "
             "validation: 1 graph: 0\n", TT_VERSION_STRING);
    assert_string_equal(done(&sb), want);

    /* topo-exec's own, GPU ranks */
    o.coll = TT_COLL_ALLGATHER;
    tt_sweep_text_run gpu = {NULL, NULL, "nccl (libnccl.so.2 via dlopen)", 1, 4, 0, NULL};
    tt_sweep_text_preamble(&sb, &gpu, &o);
    snprintf(want, sizeof want,
             "# topo-exec (topotune %s) collective: all_gather, engine nccl (libnccl.so.2 via dlopen)\n"
             "# nThread 1 nGpus 4 minBytes 1024 maxBytes 65536 step: 1024(bytes) warmup iters: 5 iters: 20 "
             "validation: 1 (sizes up to 1048576 bytes)\n", TT_VERSION_STRING);
    assert_string_equal(done(&sb), want);
}

static void test_ranks(void **st)
{
    (void)st;
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_sweep_text_devices(&sb);
    tt_sweep_text_rank(&sb, 0, 4242, "node1", -1, "0000:00:00", "host rank (shm)");
    tt_sweep_text_rank(&sb, 11, -1, "-", 3, "gpu, virtual", "P2P/IPC -> rank 0");
    assert_string_equal(done(&sb),
                        "#\n# Using devices\n"
                        "#  Rank  0 Group  0 Pid   4242 on      node1 device -1 [0000:00:00] host rank (shm)\n"
                        "#  Rank 11 Group  0 Pid     -1 on          - device  3 [gpu, virtual] P2P/IPC -> rank 0\n");
}

static void test_header(void **st)
{
    (void)st;
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    /* nccl-tests' heads with their trailing spaces: 10 after "in-place", 1 after "#wrong", 7 on the units line */
    tt_sweep_text_header(&sb, 0);
    assert_string_equal(done(&sb),
        "#\n"
        "#                                                              out-of-place                       in-place          \n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n");
    tt_sweep_text_header(&sb, TT_SWEEP_TEXT_PRED);
    assert_string_equal(done(&sb),
        "#\n"
        "#                                                              out-of-place                                        in-place                           \n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     pred    err%     time   algbw   busbw  #wrong     pred    err% \n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (%)     (us)  (GB/s)  (GB/s)             (us)     (%) \n");
    /* GPU mode's heads with the plan column, as topo-exec has printed them */
    tt_sweep_text_header(&sb, TT_SWEEP_TEXT_PLAN_COLUMN);
    assert_string_equal(done(&sb),
        "#\n"
        "#                                                    out-of-place                       in-place\n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong  algo/proto/ch\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)               (us)  (GB/s)  (GB/s)\n");
    tt_sweep_text_header(&sb, TT_SWEEP_TEXT_PLAN_COLUMN | TT_SWEEP_TEXT_PRED);
    assert_string_equal(done(&sb),
        "#\n"
        "#                                                    out-of-place                                        in-place\n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     pred    err%     time   algbw   busbw  #wrong     pred    err%  algo/proto/ch\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)               (us)                 (us)  (GB/s)  (GB/s)               (us)\n");
}

static void test_rows(void **st)
{
    (void)st;
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    /* AllReduce: root -1 whatever -r says; in place not checked (N/A) */
    tt_sweep_opts ar = sweep(TT_COLL_ALLREDUCE, TT_FLOAT, 3);
    tt_sweep_result r = result(1024, 256, 12.5, 13.25, 0.08, 0.08, 0.15, 0.14, 0, -1);
    tt_sweep_text_row(&sb, &ar, &r, 0, NULL);
    assert_string_equal(done(&sb), "        1024           256     float     sum      -1    12.50    0.08    0.15       "
                                   "0    13.25    0.08    0.14    N/A\n");
    /* numbers too wide for %.2f, #wrong out of place, a prediction for one placement only, a tail */
    r = result(1048576, 262144, 12345678.9, 250, 123456, 4.19, 0, 7.86, 3, 0);
    r.pred_us[0] = 15;
    tt_sweep_text_row(&sb, &ar, &r, 1, "  ring");
    assert_string_equal(done(&sb), "     1048576        262144     float     sum      -1  1.2e+07  123456    0.00       "
                                   "3    15.00  -100.0   250.00    4.19    7.86       0      N/A     N/A  ring\n");
    /* nccl-tests prints #wrong with %g; a number too wide for 7 columns is cut as its 8-byte buffer cuts it */
    r = result(8, 2, -123456789, 1, 0, 0, 0, 0, 1048576, 0);
    tt_sweep_text_row(&sb, &ar, &r, 0, NULL);
    assert_string_equal(done(&sb), "           8             2     float     sum      -1  -1.2e+0    0.00    0.00  "
                                   "1.04858e+06     1.00    0.00    0.00       0\n");
    /* Broadcast: no redop, its root; nothing checked; predictions faster and slower than measured */
    tt_sweep_opts bc = sweep(TT_COLL_BROADCAST, TT_INT32, 2);
    r = result(4096, 1024, 10, 10, 0.41, 0.41, 0.41, 0.41, -1, -1);
    r.pred_us[0] = 8;
    r.pred_us[1] = 12.5;
    tt_sweep_text_row(&sb, &bc, &r, 1, "");
    assert_string_equal(done(&sb), "        4096          1024     int32    none       2    10.00    0.41    0.41    "
                                   "N/A     8.00  -20.00    10.00    0.41    0.41    N/A    12.50   25.00\n");
    /* AllGather: no redop, root -1; a prediction without pred columns is not printed */
    tt_sweep_opts ag = sweep(TT_COLL_ALLGATHER, TT_DOUBLE, 1);
    r = result(3072, 256, 5, 0, 0.61, 0, 0.41, 0, 0, 0);
    r.pred_us[0] = 4;
    tt_sweep_text_row(&sb, &ag, &r, 0, "  ring/simple/2");
    assert_string_equal(done(&sb), "        3072           256    double    none      -1     5.00    0.61    0.41       "
                                   "0     0.00    0.00    0.00       0  ring/simple/2\n");
}

/* nccl-tests' -I: i_min i_max i_p99 i_cv% of the max over ranks of each iteration, after -K's skip */
static void test_per_iter(void **st)
{
    (void)st;
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_sweep_opts o = sweep(TT_COLL_ALLREDUCE, TT_FLOAT, 0);
    o.per_iter = 1;
    o.per_iter_skip = 1;
    /* rank 0 then rank 1, 4 iterations: the max {10, 4, 2, 3}, without the first {4, 2, 3} */
    static const double t[8] = {10, 1, 2, 3, 5, 4, 1, 1};
    tt_sweep_result r = result(64, 16, 3, 3, 0.02, 0.02, 0.02, 0.02, 0, 0);
    r.m.iter_us[0] = r.m.iter_us[1] = t;
    r.m.iter_ranks = 2;
    r.m.iter_n = 4;
    tt_sweep_text_row(&sb, &o, &r, 0, NULL);
    assert_string_equal(done(&sb), "          64            16     float     sum      -1     3.00    0.02    0.02       0"
                                   "     2.00     4.00     4.00    27.22     3.00    0.02    0.02       0     2.00     4.00"
                                   "     4.00    27.22\n");
    tt_sweep_text_header(&sb, TT_SWEEP_TEXT_PER_ITER);
    assert_string_equal(done(&sb),
        "#\n"
        "#                                                                 out-of-place (+ per-iteration)                                in-place (+ per-iteration)\n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv% \n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%) \n");
    /* the copy kept past on_row */
    assert_int_equal(tt_sweep_result_keep(&r), TT_OK);
    assert_true(r.m.iter_us[0] != t && r.m.iter_us[0][4] == 5);
    tt_sweep_result_release(&r);
    assert_null(r.m.iter_us[0]);
}

static void test_footer(void **st)
{
    (void)st;
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_sweep_text_footer(&sb, 0, 1.234567, NULL);
    tt_sweep_text_end(&sb, "all_reduce", NULL, 3);
    assert_string_equal(done(&sb), "# Out of bounds values : 0 OK\n"
                                   "# Avg bus bandwidth    : 1.23457 \n"
                                   "#\n# Collective test concluded: all_reduce\n#\n\n");
    tt_sweep_text_footer(&sb, 2, 0, "(virtual ranks)");
    tt_sweep_text_end(&sb, "all_gather_perf", NULL, 0);
    assert_string_equal(done(&sb), "# Out of bounds values : 2 FAILED\n"
                                   "# Avg bus bandwidth    : 0 (virtual ranks)\n"
                                   "#\n# Collective test concluded: all_gather_perf\n#\n\n");
    tt_sweep_text_end(&sb, "all_reduce", "rank 1: timed out", 2);
    assert_string_equal(done(&sb), "# Collective test FAILED after 2 size(s): rank 1: timed out\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coll_names), cmocka_unit_test(test_preamble), cmocka_unit_test(test_ranks),
        cmocka_unit_test(test_header),     cmocka_unit_test(test_rows),     cmocka_unit_test(test_footer),
        cmocka_unit_test(test_per_iter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
