/* test_exec_fail.c - failures never hang and are named: a rank that never
 * arrives, disagreeing arguments, plans that cannot apply, bad arguments,
 * TCP rendezvous (success over 127.0.0.1 and a rank that never connects). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support_exec.h"
#include "tt_exec.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#include <dirent.h>
static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* threads of this process once the joined ones are gone: a thread joined by pthread_join can
 * still be listed in /proc/self/task for a moment while the kernel reaps it, so wait (<= 2 s)
 * for the count to come down to `want` before reading it */
static int settled_threads(int want)
{
    int n = count_dir("/proc/self/task");
    for (int i = 0; i < 200 && n > want; i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        n = count_dir("/proc/self/task");
    }
    return n;
}

static void destroy_all(tt_comm **c, int n)
{
    for (int r = 0; r < n; r++)
        tt_comm_destroy(c[r]); /* failed comms: returns their error, frees */
}

static void test_rank_never_arrives(void **state)
{
    int threads0 = count_dir("/proc/self/task");
    tt_comm *c[4];
    assert_int_equal(tt_comm_init_threads(4, c), TT_OK);
    for (int r = 0; r < 4; r++)
        tt_comm_set_timeout(c[r], 300);
    int32_t buf[4][1000] = {{0}};
    double t0 = now_s();
    for (int r = 0; r < 3; r++) /* rank 3 never calls */
        assert_int_equal(tt_allreduce(buf[r], buf[r], 1000, TT_INT32, TT_SUM, c[r]), TT_OK);
    for (int r = 0; r < 3; r++) {
        tt_status st = tt_comm_wait(c[r]);
        assert_true(st == TT_ERR_TIMEOUT || st == TT_ERR_REMOTE);
        const char *m = tt_error_message();
        print_message("rank %d: %s\n", r, m);
        assert_non_null(strstr(m, "rank 3 never entered AllReduce #1"));
        assert_non_null(strstr(m, "step"));
        char me[16];
        snprintf(me, sizeof me, "rank %d:", r);
        assert_true(strncmp(m, me, strlen(me)) == 0);
    }
    assert_true(now_s() - t0 < 2.0);
    /* the communicator stays failed: later calls report the first error at once */
    assert_int_not_equal(tt_allreduce(buf[0], buf[0], 10, TT_INT32, TT_SUM, c[0]), TT_OK);
    assert_non_null(strstr(tt_error_message(), "never entered"));
    assert_int_not_equal(tt_comm_wait(c[0]), TT_OK);
    assert_non_null(strstr(tt_error_message(), "never entered"));
    destroy_all(c, 4);
    assert_int_equal(settled_threads(threads0), threads0); /* workers joined */
}

static void test_mismatch_detected(void **state)
{
    struct { int which; const char *needle; } cases[] = {
        {0, "count 101"}, {1, "int32"}, {2, "max"}, {3, "Broadcast"}, {4, "root 1"}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        tt_comm *c[3];
        assert_int_equal(tt_comm_init_threads(3, c), TT_OK);
        float buf[3][200];
        memset(buf, 0, sizeof buf);
        for (int r = 0; r < 3; r++) {
            tt_comm_set_timeout(c[r], 2000);
            int odd = r == 1;
            tt_status st;
            switch (cases[k].which) {
            case 0: st = tt_allreduce(buf[r], buf[r], odd ? 101 : 100, TT_FLOAT, TT_SUM, c[r]); break;
            case 1: st = tt_allreduce(buf[r], buf[r], 100, odd ? TT_INT32 : TT_FLOAT, TT_SUM, c[r]); break;
            case 2: st = tt_allreduce(buf[r], buf[r], 100, TT_FLOAT, odd ? TT_MAX : TT_SUM, c[r]); break;
            case 3:
                st = odd ? tt_broadcast(buf[r], buf[r], 100, TT_FLOAT, 0, c[r])
                         : tt_reduce_coll(buf[r], buf[r], 100, TT_FLOAT, TT_SUM, 0, c[r]);
                break;
            default: st = tt_broadcast(buf[r], buf[r], 100, TT_FLOAT, odd ? 1 : 0, c[r]); break;
            }
            assert_int_equal(st, TT_OK);
        }
        double t0 = now_s();
        for (int r = 0; r < 3; r++) {
            tt_status st = tt_comm_wait(c[r]);
            assert_true(st == TT_ERR_MISMATCH || st == TT_ERR_REMOTE);
            const char *m = tt_error_message();
            if (r != 1) { /* both neighbours of rank 1 see the difference themselves */
                assert_int_equal(st, TT_ERR_MISMATCH);
                assert_non_null(strstr(m, "rank 1 called"));
                if (!strstr(m, cases[k].needle))
                    fail_msg("case %zu: '%s' lacks '%s'", k, m, cases[k].needle);
            }
        }
        assert_true(now_s() - t0 < 1.5); /* detected at once, not by the deadline */
        destroy_all(c, 3);
    }
}

static void test_plan_overrides_reported(void **state)
{
    tt_comm *c[3];
    assert_int_equal(tt_comm_init_threads(3, c), TT_OK);
    int32_t b[8] = {0};
    tt_plan p = TT_PLAN_DEFAULT;
    p.algo = TT_ALGO_TREE;
    tt_comm_set_plan(c[0], &p);
    assert_int_equal(tt_allgather(b, b, 1, TT_INT32, c[0]), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "algorithm tree was requested for AllGather"));
    assert_non_null(strstr(tt_error_message(), "available: ring"));
    p.algo = TT_ALGO_RHD;
    tt_comm_set_plan(c[0], &p);
    assert_int_equal(tt_allreduce(b, b, 1, TT_INT32, TT_SUM, c[0]), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "power-of-two"));
    p.algo = TT_ALGO_HIER;
    tt_comm_set_plan(c[0], &p);
    assert_int_equal(tt_reducescatter(b, b, 1, TT_INT32, TT_SUM, c[0]), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "hierarchical was requested for ReduceScatter"));
    p = TT_PLAN_DEFAULT;
    p.proto = TT_PROTO_LL;
    tt_comm_set_plan(c[0], &p);
    assert_int_equal(tt_allreduce(b, b, 1, TT_INT32, TT_SUM, c[0]), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "protocol ll"));
    p = TT_PLAN_DEFAULT;
    p.channels = 4;
    tt_comm_set_plan(c[0], &p);
    assert_int_equal(tt_allreduce(b, b, 1, TT_INT32, TT_SUM, c[0]), TT_ERR_UNSUPPORTED);
    tt_plan eff;
    tt_comm_set_plan(c[0], NULL);
    assert_int_equal(tt_comm_resolve_plan(c[0], TT_COLL_ALLREDUCE, 100, TT_FLOAT, &eff), TT_OK);
    assert_int_equal(eff.algo, TT_ALGO_TREE);
    assert_int_equal(tt_comm_resolve_plan(c[0], TT_COLL_ALLREDUCE, 1 << 20, TT_FLOAT, &eff), TT_OK);
    assert_int_equal(eff.algo, TT_ALGO_RING);
    /* bad arguments are refused before anything is queued */
    assert_int_equal(tt_broadcast(b, b, 1, TT_INT32, 3, c[0]), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "root 3 not in 0..2"));
    assert_int_equal(tt_allreduce(NULL, b, 1, TT_INT32, TT_SUM, c[0]), TT_ERR_INVALID);
    assert_int_equal(tt_allreduce(b, b, 1, (tt_dtype)42, TT_SUM, c[0]), TT_ERR_INVALID);
    assert_int_equal(tt_comm_init_threads(0, c), TT_ERR_INVALID);
    for (int r = 0; r < 3; r++)
        assert_int_equal(tt_comm_destroy(c[r]), TT_OK);
}

/* ---- TCP ------------------------------------------------------------- */
typedef struct {
    tt_unique_id id;
    int rank, nranks, timeout_ms;
    tt_status st;
    char msg[1024];
    size_t wrong;
} tcp_arg;

static void *tcp_rank(void *p)
{
    tcp_arg *a = p;
    tt_comm *c = NULL;
    a->st = tt_comm_init_rank(&c, a->nranks, &a->id, a->rank); /* TOPOTUNE_TIMEOUT_MS set by the caller */
    if (a->st != TT_OK) {
        snprintf(a->msg, sizeof a->msg, "%s", tt_error_message());
        return NULL;
    }
    size_t n = 100003;
    int32_t *in = malloc(n * 4), *out = malloc(n * 4), *exp = malloc(n * 4);
    sx_fill(in, a->rank, n, TT_INT32, TT_SUM, 0);
    sx_expected_reduce(exp, a->nranks, n, TT_INT32, TT_SUM, 0);
    tt_status st = tt_allreduce(in, out, n, TT_INT32, TT_SUM, c);
    if (st == TT_OK)
        st = tt_comm_wait(c);
    a->wrong = 0;
    for (size_t i = 0; st == TT_OK && i < n; i++)
        a->wrong += out[i] != exp[i];
    /* tree too (small) */
    if (st == TT_OK)
        st = tt_allreduce(in, out, 100, TT_INT32, TT_SUM, c);
    if (st == TT_OK)
        st = tt_comm_wait(c);
    for (size_t i = 0; st == TT_OK && i < 100; i++)
        a->wrong += out[i] != exp[i];
    if (st == TT_OK)
        st = tt_comm_destroy(c);
    else
        tt_comm_destroy(c);
    a->st = st;
    if (st != TT_OK)
        snprintf(a->msg, sizeof a->msg, "%s", tt_error_message());
    free(in);
    free(out);
    free(exp);
    return NULL;
}

static void test_tcp_threads_as_processes(void **state)
{
    int threads0 = count_dir("/proc/self/task"), fds0 = count_dir("/proc/self/fd");
    for (int n = 2; n <= 4; n++) {
        tt_unique_id id;
        assert_int_equal(tt_get_unique_id(&id, "127.0.0.1"), TT_OK);
        pthread_t th[4];
        tcp_arg a[4];
        setenv("TOPOTUNE_TIMEOUT_MS", "3000", 1); /* before the threads: setenv is not thread-safe */
        for (int r = 0; r < n; r++) {
            a[r] = (tcp_arg){.id = id, .rank = r, .nranks = n, .timeout_ms = 3000};
            pthread_create(&th[r], NULL, tcp_rank, &a[r]);
        }
        for (int r = 0; r < n; r++) {
            pthread_join(th[r], NULL);
            if (a[r].st != TT_OK)
                fail_msg("n=%d rank %d: %s", n, r, a[r].msg);
            assert_int_equal(a[r].wrong, 0);
        }
    }
    /* nothing leaked: worker threads joined, sockets and listeners closed */
    assert_int_equal(settled_threads(threads0), threads0);
    assert_int_equal(count_dir("/proc/self/fd"), fds0);
}

static void test_tcp_rank_never_connects(void **state)
{
    tt_unique_id id;
    assert_int_equal(tt_get_unique_id(&id, NULL), TT_OK);
    pthread_t th[2];
    tcp_arg a[2];
    setenv("TOPOTUNE_TIMEOUT_MS", "500", 1);
    double t0 = now_s();
    for (int r = 0; r < 2; r++) { /* rank 2 of 3 never starts */
        a[r] = (tcp_arg){.id = id, .rank = r, .nranks = 3, .timeout_ms = 500};
        pthread_create(&th[r], NULL, tcp_rank, &a[r]);
    }
    for (int r = 0; r < 2; r++)
        pthread_join(th[r], NULL);
    assert_true(now_s() - t0 < 4.0); /* 500 ms + 1 s grace for the workers, slack for loaded CI */
    assert_int_not_equal(a[0].st, TT_OK);
    print_message("rank 0: %s\nrank 1: %s\n", a[0].msg, a[1].msg);
    assert_non_null(strstr(a[0].msg, "rank(s) 2 never connected"));
    assert_int_not_equal(a[1].st, TT_OK);
    assert_non_null(strstr(a[1].msg, "rank 0 refused the rendezvous: rendezvous at"));
    unsetenv("TOPOTUNE_TIMEOUT_MS");
}

static void test_env_init_errors(void **state)
{
    tt_comm *c;
    unsetenv("WORLD_SIZE");
    assert_int_equal(tt_comm_init_env(&c), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "WORLD_SIZE"));
    setenv("WORLD_SIZE", "2", 1);
    setenv("RANK", "5", 1);
    assert_int_equal(tt_comm_init_env(&c), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "RANK='5'"));
    unsetenv("WORLD_SIZE");
    unsetenv("RANK");
    tt_unique_id id;
    assert_int_equal(tt_unique_id_from_addr(&id, "localhost"), TT_ERR_INVALID);
    assert_int_equal(tt_unique_id_from_addr(&id, "127.0.0.1:99999"), TT_ERR_INVALID);
    /* IPv6 (issue #32 item 12): in brackets; without them refused, naming the form */
    assert_int_equal(tt_unique_id_from_addr(&id, "[::1]:29500"), TT_OK);
    assert_non_null(strstr(id.bytes, "[::1]:29500"));
    assert_int_equal(tt_unique_id_from_addr(&id, "::1:29500"), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "needs brackets"));
    assert_int_equal(tt_unique_id_from_addr(&id, "[::1:29500"), TT_ERR_INVALID);
    assert_int_equal(tt_unique_id_from_addr(&id, "[]:29500"), TT_ERR_INVALID);
    assert_int_equal(tt_unique_id_from_addr(&id, "[::1]29500"), TT_ERR_INVALID);
    memset(&id, 0, sizeof id);
    assert_int_equal(tt_comm_init_rank(&c, 2, &id, 0), TT_ERR_INVALID);
    assert_int_equal(tt_comm_init_rank(&c, 2, &id, 2), TT_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_never_arrives),
        cmocka_unit_test(test_mismatch_detected),
        cmocka_unit_test(test_plan_overrides_reported),
        cmocka_unit_test(test_tcp_threads_as_processes),
        cmocka_unit_test(test_tcp_rank_never_connects),
        cmocka_unit_test(test_env_init_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
