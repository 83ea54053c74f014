/* test_exec_hdr.c - the per-collective header carried with the data (exec/exec_hdr.c):
 * it costs no round trip (a rank's data follows its header before the peer has even
 * entered the collective), and mismatched calls are still caught and named, also by a
 * rank whose first contact with the odd rank is not a ring neighbour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "exec_internal.h"
#include "tt_exec.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Rank 0 enters a 1 KiB AllReduce alone: its header AND its data are in the ring to rank 1
 * without waiting for rank 1 (a separate header exchange would hold the data back until rank
 * 1's header arrived: one round trip per collective). */
static void test_no_round_trip(void **state)
{
    (void)state;
    static const tt_algo algos[] = {TT_ALGO_RD, TT_ALGO_RING};
    for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
        tt_comm *c[2];
        assert_int_equal(tt_comm_init_threads(2, c), TT_OK);
        tt_plan p = TT_PLAN_DEFAULT;
        p.algo = algos[a];
        float in[2][256], out[2][256];
        for (int r = 0; r < 2; r++) {
            tt_comm_set_plan(c[r], &p);
            for (int i = 0; i < 256; i++)
                in[r][i] = (float)(i % 7 + r);
        }
        assert_int_equal(tt_allreduce(in[0], out[0], 256, TT_FLOAT, TT_SUM, c[0]), TT_OK);
        const void *ring01 = c[0]->world->rings[0 * 2 + 1];
        /* rd sends the whole vector, ring half of it (its reduce-scatter step) */
        size_t want = sizeof(exec_coll_header) + (algos[a] == TT_ALGO_RD ? sizeof in[0] : sizeof in[0] / 2);
        size_t used = 0;
        for (double t0 = now_s(); now_s() - t0 < 2.0;) {
            used = exec_shm_ring_used(ring01);
            if (used >= want)
                break;
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        if (used < want)
            fail_msg("%s: rank 0 put %zu bytes towards rank 1 before rank 1 entered; want header + data = %zu",
                     tt_algo_label(algos[a]), used, want);
        assert_int_equal(tt_allreduce(in[1], out[1], 256, TT_FLOAT, TT_SUM, c[1]), TT_OK);
        for (int r = 0; r < 2; r++)
            assert_int_equal(tt_comm_wait(c[r]), TT_OK);
        for (int i = 0; i < 256; i++) {
            assert_true(out[0][i] == in[0][i] + in[1][i]);
            assert_true(out[1][i] == out[0][i]);
        }
        for (int r = 0; r < 2; r++)
            assert_int_equal(tt_comm_destroy(c[r]), TT_OK);
    }
}

/* One rank calls something else; every rank fails fast, the listed ranks with the mismatch
 * itself naming the odd rank and the difference. */
static void mismatch_case(int n, int odd, tt_algo algo, int which, const char *needle, const int *finders, int nf)
{
    tt_comm *c[8];
    assert_int_equal(tt_comm_init_threads(n, c), TT_OK);
    float buf[8][300];
    memset(buf, 0, sizeof buf);
    tt_plan p = TT_PLAN_DEFAULT;
    p.algo = algo;
    for (int r = 0; r < n; r++) {
        tt_comm_set_timeout(c[r], 3000);
        tt_comm_set_plan(c[r], &p);
        int o = r == odd;
        tt_status st = which == 0 ? tt_allreduce(buf[r], buf[r], o ? 300 : 200, TT_FLOAT, TT_SUM, c[r])
                                  : tt_allreduce(buf[r], buf[r], 200, TT_FLOAT, o ? TT_MAX : TT_SUM, c[r]);
        assert_int_equal(st, TT_OK);
    }
    double t0 = now_s();
    int found[8] = {0};
    for (int r = 0; r < n; r++) {
        tt_status st = tt_comm_wait(c[r]);
        if (st != TT_ERR_MISMATCH && st != TT_ERR_REMOTE)
            fail_msg("%d ranks (%s), rank %d: status %d: %s", n, tt_algo_label(algo), r, (int)st, tt_error_message());
        char want[32];
        snprintf(want, sizeof want, "rank %d called", odd);
        if (st == TT_ERR_MISMATCH && r != odd && strstr(tt_error_message(), want) &&
            strstr(tt_error_message(), needle))
            found[r] = 1;
        if (r == odd && st == TT_ERR_MISMATCH)
            assert_non_null(strstr(tt_error_message(), "but this rank called"));
    }
    for (int i = 0; i < nf; i++)
        if (!found[finders[i]])
            fail_msg("%d ranks (%s): rank %d did not name rank %d's call itself", n, tt_algo_label(algo), finders[i],
                     odd);
    if (now_s() - t0 > 1.5)
        fail_msg("%d ranks (%s): mismatch took %.2f s (the deadline, not the header)", n, tt_algo_label(algo),
                 now_s() - t0);
    for (int r = 0; r < n; r++)
        tt_comm_destroy(c[r]);
}

static void test_mismatch_named(void **state)
{
    (void)state;
    /* 2 ranks, rd: the partner is the neighbour */
    mismatch_case(2, 1, TT_ALGO_RD, 0, "count 300", (int[]){0}, 1);
    /* 4 ranks, rd: rank 2's neighbours 1 and 3 name it */
    mismatch_case(4, 2, TT_ALGO_RD, 1, "max", (int[]){1, 3}, 2);
    /* 6 ranks, tree: rank 5 first sends up to its parent 2, which is not its ring neighbour: rank 2
     * reads the header in front of the data and names the call before using the data */
    mismatch_case(6, 5, TT_ALGO_TREE, 0, "count 300", (int[]){0, 2, 4}, 3);
    /* ring, 3 ranks */
    mismatch_case(3, 1, TT_ALGO_RING, 1, "max", (int[]){0, 2}, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_round_trip),
        cmocka_unit_test(test_mismatch_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
