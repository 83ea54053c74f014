/* test_exec_gpu_hier.c - the hierarchical GPU AllReduce's plan without a GPU
 * (exec_gpu_hier_plan.c): hosts from the per-pair transports (the rule of exec_gpu_pairs_select
 * with TOPOTUNE_GPU_EMULATE_HOSTS, contiguous and interleaved hosts), the intra- and inter-host
 * groups, refusals (hosts of different sizes, a relation that is no split into hosts), and the
 * shard arithmetic for counts that do not divide by the local rank count: the three phases
 * simulated on host arrays with the same offsets as exec_cuda_hier.cu give tt_reduce's result,
 * avg divided once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_gpu_hier.h"
#include "exec_gpu_net.h"
#include "tt_exec.h"

/* same[] from the transport rule of process mode: K emulated hosts of n ranks on one machine */
static void same_from_select(int n, int k, unsigned char *same)
{
    exec_gpu_where w[EXEC_HIER_MAX];
    exec_gpu_pair *pairs = calloc((size_t)n * n, sizeof *pairs);
    assert_non_null(pairs);
    for (int r = 0; r < n; r++) {
        w[r].mode = GPU_TP_AUTO;
        w[r].host = "node";
        w[r].boot = "boot";
        w[r].emulate = k;
    }
    assert_int_equal(exec_gpu_pairs_select(n, w, pairs), TT_OK);
    for (int i = 0; i < n * n; i++) same[i] = (i / n != i % n) && !pairs[i].net;
    free(pairs);
}

static void test_emulated_hosts_group(void **state)
{
    (void)state;
    unsigned char same[16 * 16];
    exec_gpu_hier_groups hg;
    /* 4 ranks on 2 emulated hosts: {0,1} {2,3} */
    same_from_select(4, 2, same);
    assert_int_equal(exec_gpu_hier_group(4, same, &hg), TT_OK);
    assert_int_equal(hg.nhosts, 2);
    assert_int_equal(hg.L, 2);
    assert_true(exec_gpu_hier_applies(&hg));
    int g[EXEC_HIER_MAX], me;
    assert_int_equal(exec_gpu_hier_intra(&hg, 3, g, &me), 2);
    assert_int_equal(g[0], 2);
    assert_int_equal(g[1], 3);
    assert_int_equal(me, 1);
    assert_int_equal(exec_gpu_hier_inter(&hg, 3, g, &me), 2);
    assert_int_equal(g[0], 1);
    assert_int_equal(g[1], 3);
    assert_int_equal(me, 1);
    assert_int_equal(exec_gpu_hier_inter(&hg, 0, g, &me), 2);
    assert_int_equal(g[0], 0);
    assert_int_equal(g[1], 2);
    assert_int_equal(me, 0);
    /* 12 ranks on 3 hosts: host of r = r * 3 / 12, every rank in exactly one intra and one inter group */
    same_from_select(12, 3, same);
    assert_int_equal(exec_gpu_hier_group(12, same, &hg), TT_OK);
    assert_int_equal(hg.nhosts, 3);
    assert_int_equal(hg.L, 4);
    for (int r = 0; r < 12; r++) {
        assert_int_equal(hg.host_of[r], r * 3 / 12);
        assert_int_equal(hg.local_of[r], r % 4);
        int n = exec_gpu_hier_inter(&hg, r, g, &me);
        assert_int_equal(n, 3);
        assert_int_equal(g[me], r);
        for (int h = 0; h < 3; h++) assert_int_equal(hg.local_of[g[h]], hg.local_of[r]);
        n = exec_gpu_hier_intra(&hg, r, g, &me);
        assert_int_equal(n, 4);
        assert_int_equal(g[me], r);
        for (int i = 0; i < 4; i++) assert_int_equal(hg.host_of[g[i]], hg.host_of[r]);
    }
    /* one host (K unset or 1): flat */
    same_from_select(4, 0, same);
    assert_int_equal(exec_gpu_hier_group(4, same, &hg), TT_OK);
    assert_int_equal(hg.nhosts, 1);
    assert_int_equal(hg.L, 4);
    assert_false(exec_gpu_hier_applies(&hg));
    same_from_select(4, 1, same);
    assert_int_equal(exec_gpu_hier_group(4, same, &hg), TT_OK);
    assert_false(exec_gpu_hier_applies(&hg));
    /* one rank per host (K = n): inter only = flat */
    same_from_select(4, 4, same);
    assert_int_equal(exec_gpu_hier_group(4, same, &hg), TT_OK);
    assert_int_equal(hg.nhosts, 4);
    assert_int_equal(hg.L, 1);
    assert_false(exec_gpu_hier_applies(&hg));
}

static void test_interleaved_and_refused(void **state)
{
    (void)state;
    unsigned char same[6 * 6];
    exec_gpu_hier_groups hg;
    /* hosts by parity (real hosts interleaved): {0,2,4} {1,3,5} */
    for (int a = 0; a < 6; a++)
        for (int b = 0; b < 6; b++) same[a * 6 + b] = a != b && (a & 1) == (b & 1);
    assert_int_equal(exec_gpu_hier_group(6, same, &hg), TT_OK);
    assert_int_equal(hg.nhosts, 2);
    assert_int_equal(hg.L, 3);
    assert_int_equal(hg.host_of[5], 1);
    assert_int_equal(hg.local_of[5], 2);
    assert_int_equal(hg.member[1 * 3 + 1], 3);
    /* hosts of 2 and 3 ranks */
    memset(same, 0, sizeof same);
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++) same[a * 5 + b] = a != b && (a < 2) == (b < 2);
    assert_int_equal(exec_gpu_hier_group(5, same, &hg), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "different numbers of ranks"));
    /* 0~1, 1~2 but not 0~2: no split into hosts */
    memset(same, 0, sizeof same);
    same[0 * 3 + 1] = same[1 * 3 + 0] = same[1 * 3 + 2] = same[2 * 3 + 1] = 1;
    assert_int_equal(exec_gpu_hier_group(3, same, &hg), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "do not split the ranks into hosts"));
    assert_int_equal(exec_gpu_hier_group(0, same, &hg), TT_ERR_INVALID);
    assert_int_equal(exec_gpu_hier_group(EXEC_HIER_MAX + 1, same, &hg), TT_ERR_INVALID);
}

static void test_shards_cover_every_element_once(void **state)
{
    (void)state;
    for (int L = 1; L <= 8; L++)
        for (size_t count = 0; count <= 100; count++) {
            exec_gpu_hier_split s = exec_gpu_hier_shards(count, L);
            assert_true(s.tail < (size_t)L);
            assert_int_equal(s.tail_off, s.shard * (size_t)L);
            assert_int_equal(s.tail_off + s.tail, count);
            unsigned char seen[101] = {0};
            for (int i = 0; i < L; i++)
                for (size_t k = 0; k < s.shard; k++) seen[i * s.shard + k]++;
            for (size_t k = 0; k < s.tail; k++) seen[s.tail_off + k]++;
            for (size_t k = 0; k < count; k++) assert_int_equal(seen[k], 1);
        }
    exec_gpu_hier_split s = exec_gpu_hier_shards(1001, 2);
    assert_int_equal(s.shard, 500);
    assert_int_equal(s.tail, 1);
}

/* The three phases on host arrays with exec_cuda_hier.cu's offsets: intra ReduceScatter (op, avg as
 * sum) into block `local` of recv, tail AllReduce in the host, inter AllReduce of that block and the
 * tail (avg divides by all ranks, once), intra AllGather; every rank's result = tt_reduce over all. */
static void simulate(int nhosts, int L, size_t count, tt_redop op)
{
    const int n = nhosts * L;
    unsigned char same[64 * 64];
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) same[a * n + b] = a != b && a / L == b / L;
    exec_gpu_hier_groups hg;
    assert_int_equal(exec_gpu_hier_group(n, same, &hg), TT_OK);
    exec_gpu_hier_split s = exec_gpu_hier_shards(count, L);
    const tt_dtype t = TT_INT64;
    int64_t *in = calloc((size_t)n * (count + 1), 8), *out = calloc((size_t)n * (count + 1), 8);
    int64_t *want = calloc(count + 1, 8), *tmp = calloc(count + 1, 8);
    for (int r = 0; r < n; r++)
        for (size_t k = 0; k < count; k++) in[r * (count + 1) + k] = (int64_t)((r * 7 + k * 3) % 11) + 1;
    /* reference: tt_reduce over every rank, avg divided once at the end */
    tt_redop rop = op == TT_AVG ? TT_SUM : op;
    memcpy(want, in, count * 8);
    for (int r = 1; r < n; r++) tt_reduce(want, in + r * (count + 1), count, t, rop);
    if (op == TT_AVG)
        for (size_t k = 0; k < count; k++) want[k] /= n;
    const tt_redop iop = op == TT_AVG ? TT_SUM : op;
    /* phase 1: intra ReduceScatter + tail AllReduce */
    for (int r = 0; r < n; r++) {
        int g[EXEC_HIER_MAX], me;
        int L2 = exec_gpu_hier_intra(&hg, r, g, &me);
        int64_t *o = out + r * (count + 1);
        size_t off = (size_t)me * s.shard;
        memcpy(o + off, in + g[0] * (count + 1) + off, s.shard * 8);
        memcpy(o + s.tail_off, in + g[0] * (count + 1) + s.tail_off, s.tail * 8);
        for (int i = 1; i < L2; i++) {
            tt_reduce(o + off, in + g[i] * (count + 1) + off, s.shard, t, iop);
            tt_reduce(o + s.tail_off, in + g[i] * (count + 1) + s.tail_off, s.tail, t, iop);
        }
    }
    /* phase 2: inter AllReduce of each rank's block and of the tail (all ranks of a group agree) */
    for (int i = 0; i < L; i++) {
        int g[EXEC_HIER_MAX], me;
        int H = exec_gpu_hier_inter(&hg, hg.member[i], g, &me);
        size_t off = (size_t)i * s.shard;
        memcpy(tmp, out + g[0] * (count + 1) + off, s.shard * 8);
        memcpy(tmp + s.shard, out + g[0] * (count + 1) + s.tail_off, s.tail * 8);
        for (int h = 1; h < H; h++) {
            tt_reduce(tmp, out + g[h] * (count + 1) + off, s.shard, t, rop);
            tt_reduce(tmp + s.shard, out + g[h] * (count + 1) + s.tail_off, s.tail, t, rop);
        }
        if (op == TT_AVG)
            for (size_t k = 0; k < s.shard + s.tail; k++) tmp[k] /= n;
        for (int h = 0; h < H; h++) {
            memcpy(out + g[h] * (count + 1) + off, tmp, s.shard * 8);
            memcpy(out + g[h] * (count + 1) + s.tail_off, tmp + s.shard, s.tail * 8);
        }
    }
    /* phase 3: intra AllGather of the blocks */
    for (int r = 0; r < n; r++) {
        int g[EXEC_HIER_MAX], me;
        int L2 = exec_gpu_hier_intra(&hg, r, g, &me);
        for (int i = 0; i < L2; i++)
            if (g[i] != r)
                memcpy(out + r * (count + 1) + (size_t)i * s.shard, out + g[i] * (count + 1) + (size_t)i * s.shard,
                       s.shard * 8);
    }
    for (int r = 0; r < n; r++)
        for (size_t k = 0; k < count; k++)
            if (out[r * (count + 1) + k] != want[k])
                fail_msg("hosts %d x %d count %zu op %s: rank %d element %zu: %lld, want %lld", nhosts, L, count,
                         tt_redop_name(op), r, k, (long long)out[r * (count + 1) + k], (long long)want[k]);
    free(in);
    free(out);
    free(want);
    free(tmp);
}

static void test_phases_simulated_exact(void **state)
{
    (void)state;
    const size_t counts[] = {0, 1, 2, 3, 7, 13, 64, 1001};
    for (int hosts = 2; hosts <= 3; hosts++)
        for (int L = 2; L <= 4; L++)
            for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
                for (int op = 0; op < TT_NREDOPS; op++) simulate(hosts, L, counts[c], (tt_redop)op);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_emulated_hosts_group),
        cmocka_unit_test(test_interleaved_and_refused),
        cmocka_unit_test(test_shards_cover_every_element_once),
        cmocka_unit_test(test_phases_simulated_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
