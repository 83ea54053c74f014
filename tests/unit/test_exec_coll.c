/* test_exec_coll.c - collectives over thread ranks (shm transport): every
 * collective and algorithm for 1..8 ranks, odd counts, unaligned buffers,
 * in-place and out-of-place, every type and op, pipelining with tiny chunks,
 * group calls; results compared bit-exactly with host-computed ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_exec.h"
#include "tt_exec.h"

#define MAXR 8

typedef struct {
    int n;
    tt_comm *c[MAXR];
} world;

static void world_init(world *w, int n)
{
    w->n = n;
    tt_status st = tt_comm_init_threads(n, w->c);
    if (st != TT_OK)
        fail_msg("init %d: %s", n, tt_error_message());
    for (int r = 0; r < n; r++)
        tt_comm_set_timeout(w->c[r], 5000);
}

static void world_fini(world *w)
{
    for (int r = 0; r < w->n; r++)
        if (tt_comm_destroy(w->c[r]) != TT_OK)
            fail_msg("destroy rank %d: %s", r, tt_error_message());
}

/* Runs coll on every rank and checks every rank's result; returns #wrong. */
static size_t run_check(world *w, tt_coll coll, tt_dtype t, tt_redop op, size_t count, int inplace,
                        tt_algo algo, int root, size_t chunk, int misalign)
{
    int n = w->n;
    size_t es = tt_dtype_size(t);
    size_t in_elems = coll == TT_COLL_REDUCESCATTER ? count * n : count;
    size_t out_elems = coll == TT_COLL_ALLGATHER ? count * n : coll == TT_COLL_REDUCESCATTER ? count : count;
    size_t big = (in_elems > out_elems ? in_elems : out_elems) * es + 16;
    unsigned char *mem_s[MAXR], *mem_r[MAXR], *sb[MAXR], *rb[MAXR];
    tt_plan plan = TT_PLAN_DEFAULT;
    plan.algo = algo;
    plan.chunk_bytes = chunk;
    for (int r = 0; r < n; r++) {
        mem_s[r] = malloc(big);
        mem_r[r] = malloc(big);
        sb[r] = mem_s[r] + misalign;
        rb[r] = mem_r[r] + misalign;
        memset(mem_r[r], 0xee, big);
        tt_comm_set_plan(w->c[r], &plan);
        if (inplace) {
            /* the documented in-place layouts */
            if (coll == TT_COLL_REDUCESCATTER) {
                sx_fill(sb[r], r, in_elems, t, op, 0);
                rb[r] = sb[r] + (size_t)r * count * es;
            } else if (coll == TT_COLL_ALLGATHER) {
                rb[r] = sb[r];
                sx_fill(rb[r] + (size_t)r * count * es, r, count, t, op, 0);
                sb[r] = rb[r] + (size_t)r * count * es;
            } else {
                sx_fill(sb[r], r, in_elems, t, op, 0);
                rb[r] = sb[r];
            }
        } else {
            sx_fill(sb[r], r, in_elems, t, op, 0);
        }
    }
    tt_group_start();
    for (int r = 0; r < n; r++) {
        tt_status st;
        switch (coll) {
        case TT_COLL_ALLREDUCE: st = tt_allreduce(sb[r], rb[r], count, t, op, w->c[r]); break;
        case TT_COLL_REDUCESCATTER: st = tt_reducescatter(sb[r], rb[r], count, t, op, w->c[r]); break;
        case TT_COLL_ALLGATHER: st = tt_allgather(sb[r], rb[r], count, t, w->c[r]); break;
        case TT_COLL_BROADCAST: st = tt_broadcast(sb[r], rb[r], count, t, root, w->c[r]); break;
        default: st = tt_reduce_coll(sb[r], rb[r], count, t, op, root, w->c[r]); break;
        }
        if (st != TT_OK)
            fail_msg("issue: %s", tt_error_message());
    }
    assert_int_equal(tt_group_end(), TT_OK);
    for (int r = 0; r < n; r++)
        if (tt_comm_wait(w->c[r]) != TT_OK)
            fail_msg("%s n=%d %s %s count=%zu inplace=%d algo=%s: %s", tt_coll_label(coll), n,
                     tt_dtype_name(t), tt_redop_name(op), count, inplace, tt_algo_label(algo),
                     tt_error_message());
    size_t wrong = 0;
    unsigned char *exp = malloc(big), *tmp = malloc(big);
    for (int r = 0; r < n; r++) {
        switch (coll) {
        case TT_COLL_ALLREDUCE:
            sx_expected_reduce(exp, n, count, t, op, 0);
            break;
        case TT_COLL_REDUCESCATTER:
            sx_expected_reduce(exp, n, count, t, op, (size_t)r * count);
            break;
        case TT_COLL_ALLGATHER:
            for (int q = 0; q < n; q++)
                sx_fill(exp + (size_t)q * count * es, q, count, t, op, 0);
            break;
        case TT_COLL_BROADCAST:
            sx_fill(exp, root, count, t, op, 0);
            break;
        default:
            if (r != root)
                continue;
            sx_expected_reduce(exp, n, count, t, op, 0);
            break;
        }
        for (size_t i = 0; i < out_elems; i++)
            if (memcmp(rb[r] + i * es, exp + i * es, es))
                wrong++;
    }
    if (wrong)
        print_error("%s n=%d %s %s count=%zu inplace=%d algo=%s chunk=%zu: %zu wrong\n",
                    tt_coll_label(coll), n, tt_dtype_name(t), tt_redop_name(op), count, inplace,
                    tt_algo_label(algo), chunk, wrong);
    free(exp);
    free(tmp);
    for (int r = 0; r < n; r++) {
        free(mem_s[r]);
        free(mem_r[r]);
    }
    return wrong;
}

static void test_allreduce_all_algos(void **state)
{
    static const size_t counts[] = {0, 1, 5, 7, 64, 1001, 10007};
    for (int n = 1; n <= 8; n++) {
        world w;
        world_init(&w, n);
        static const tt_algo algos[] = {TT_ALGO_RING, TT_ALGO_TREE, TT_ALGO_RHD, TT_ALGO_RD, TT_ALGO_HIER};
        for (size_t ai = 0; ai < sizeof algos / sizeof *algos; ai++) {
            tt_algo a = algos[ai];
            if ((a == TT_ALGO_RHD || a == TT_ALGO_RD) && (n & (n - 1)))
                continue;
            for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    size_t chunk = counts[ci] > 1000 ? 4096 : 8; /* tiny chunks: many pipeline steps */
                    assert_int_equal(run_check(&w, TT_COLL_ALLREDUCE, TT_INT32, TT_SUM, counts[ci], inplace,
                                               (tt_algo)a, 0, chunk, inplace ? 1 : 3), 0);
                    assert_int_equal(run_check(&w, TT_COLL_ALLREDUCE, TT_FLOAT, TT_AVG, counts[ci], inplace,
                                               (tt_algo)a, 0, chunk, 2), 0);
                }
        }
        world_fini(&w);
    }
}

static void test_every_type_and_op(void **state)
{
    world w;
    world_init(&w, 5);
    for (int t = 0; t < TT_NDTYPES; t++)
        for (int op = 0; op < TT_NREDOPS; op++)
            for (int a = TT_ALGO_TREE; a <= TT_ALGO_RING; a++) /* tree (0) and ring (1) */
                assert_int_equal(run_check(&w, TT_COLL_ALLREDUCE, (tt_dtype)t, (tt_redop)op, 97, 0, (tt_algo)a,
                                           0, 16, 1), 0);
    world_fini(&w);
}

/* recursive doubling: every type and op bit for bit (all ranks must end with the same bits: the
 * partners combine in opposite operand order), tiny chunks too */
static void test_rd_every_type_and_op(void **state)
{
    (void)state;
    world w;
    world_init(&w, 4);
    for (int t = 0; t < TT_NDTYPES; t++)
        for (int op = 0; op < TT_NREDOPS; op++) {
            assert_int_equal(run_check(&w, TT_COLL_ALLREDUCE, (tt_dtype)t, (tt_redop)op, 97, 0, TT_ALGO_RD, 0, 16, 1), 0);
            assert_int_equal(run_check(&w, TT_COLL_ALLREDUCE, (tt_dtype)t, (tt_redop)op, 300, 1, TT_ALGO_RD, 0, 0, 0), 0);
        }
    world_fini(&w);
}

/* the default AllReduce plan: recursive doubling up to 64 KiB on a power-of-two rank count, tree
 * on other counts above 2, ring above 64 KiB; rd named explicitly on 3 ranks is refused */
static void test_default_small_plan(void **state)
{
    (void)state;
    static const struct { int n; size_t bytes; tt_algo want; } cases[] = {
        {2, 1024, TT_ALGO_RD}, {2, 65536, TT_ALGO_RD}, {2, 65540, TT_ALGO_RING}, {4, 4096, TT_ALGO_RD},
        {8, 16384, TT_ALGO_RD}, {3, 1024, TT_ALGO_TREE}, {6, 65536, TT_ALGO_TREE}, {3, 1u << 20, TT_ALGO_RING},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tt_comm *c[8];
        tt_plan eff;
        assert_int_equal(tt_comm_init_threads(cases[i].n, c), TT_OK);
        assert_int_equal(tt_comm_resolve_plan(c[0], TT_COLL_ALLREDUCE, cases[i].bytes / 4, TT_FLOAT, &eff), TT_OK);
        if (eff.algo != cases[i].want)
            fail_msg("%d ranks, %zu bytes: default %s, want %s", cases[i].n, cases[i].bytes, tt_algo_label(eff.algo),
                     tt_algo_label(cases[i].want));
        /* other collectives keep the ring */
        assert_int_equal(tt_comm_resolve_plan(c[0], TT_COLL_ALLGATHER, 16, TT_FLOAT, &eff), TT_OK);
        assert_int_equal(eff.algo, TT_ALGO_RING);
        if (cases[i].n == 3) {
            tt_plan p = TT_PLAN_DEFAULT;
            p.algo = TT_ALGO_RD;
            tt_comm_set_plan(c[0], &p);
            assert_int_equal(tt_comm_resolve_plan(c[0], TT_COLL_ALLREDUCE, 16, TT_FLOAT, &eff), TT_ERR_UNSUPPORTED);
            assert_non_null(strstr(tt_error_message(), "recursive-doubling needs a power-of-two rank count"));
            tt_comm_set_plan(c[0], NULL);
        }
        for (int r = 0; r < cases[i].n; r++)
            assert_int_equal(tt_comm_destroy(c[r]), TT_OK);
    }
}

static void test_other_collectives(void **state)
{
    static const size_t counts[] = {0, 1, 3, 33, 2049};
    for (int n = 1; n <= 8; n++) {
        world w;
        world_init(&w, n);
        for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
            for (int inplace = 0; inplace < 2; inplace++) {
                size_t c = counts[ci];
                int root = n > 1 ? (int)(ci % (size_t)n) : 0;
                assert_int_equal(run_check(&w, TT_COLL_REDUCESCATTER, TT_INT64, TT_SUM, c, inplace, TT_ALGO_RING, 0,
                                           24, 1), 0);
                assert_int_equal(run_check(&w, TT_COLL_REDUCESCATTER, TT_HALF, TT_MAX, c, inplace, TT_ALGO_RING, 0,
                                           6, 0), 0);
                assert_int_equal(run_check(&w, TT_COLL_ALLGATHER, TT_UINT8, TT_SUM, c, inplace, TT_ALGO_RING, 0,
                                           5, 3), 0);
                assert_int_equal(run_check(&w, TT_COLL_BROADCAST, TT_DOUBLE, TT_SUM, c, inplace, TT_ALGO_RING,
                                           root, 16, 1), 0);
                assert_int_equal(run_check(&w, TT_COLL_REDUCE, TT_BFLOAT16, TT_SUM, c, inplace, TT_ALGO_RING,
                                           root, 4, 1), 0);
                assert_int_equal(run_check(&w, TT_COLL_REDUCE, TT_INT32, TT_AVG, c, inplace, TT_ALGO_RING,
                                           n - 1, 1024, 0), 0);
            }
        world_fini(&w);
    }
}

static void test_hierarchical_nodes(void **state)
{
    /* thread ranks split into emulated nodes: node reduce, ring between the
     * leaders, node broadcast */
    static const int cfg[][2] = {{4, 2}, {5, 2}, {7, 3}, {8, 4}, {6, 6}};
    for (size_t k = 0; k < sizeof cfg / sizeof *cfg; k++) {
        char v[16];
        snprintf(v, sizeof v, "%d", cfg[k][1]);
        setenv("TOPOTUNE_THREAD_NODES", v, 1);
        world w;
        world_init(&w, cfg[k][0]);
        unsetenv("TOPOTUNE_THREAD_NODES");
        static const size_t counts[] = {1, 13, 4097};
        for (size_t ci = 0; ci < 3; ci++) {
            assert_int_equal(run_check(&w, TT_COLL_ALLREDUCE, TT_INT32, TT_SUM, counts[ci], 0, TT_ALGO_HIER, 0, 64, 1), 0);
            assert_int_equal(run_check(&w, TT_COLL_ALLREDUCE, TT_HALF, TT_AVG, counts[ci], 1, TT_ALGO_HIER, 0, 64, 0), 0);
            assert_int_equal(run_check(&w, TT_COLL_ALLREDUCE, TT_UINT8, TT_MAX, counts[ci], 1, TT_ALGO_HIER, 0, 16, 3), 0);
        }
        world_fini(&w);
    }
    setenv("TOPOTUNE_THREAD_NODES", "9", 1);
    tt_comm *c[4];
    assert_int_equal(tt_comm_init_threads(4, c), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "TOPOTUNE_THREAD_NODES"));
    unsetenv("TOPOTUNE_THREAD_NODES");
}

static void test_group_many_ops(void **state)
{
    /* one thread drives 4 ranks; each rank queues 3 collectives in a group */
    world w;
    world_init(&w, 4);
    int32_t in[4][3][50], out[4][3][50];
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 50; i++)
                in[r][k][i] = r * 100 + k * 10 + i;
    tt_group_start();
    tt_group_start(); /* nested */
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < 4; r++)
            assert_int_equal(tt_allreduce(in[r][k], out[r][k], 50, TT_INT32, k == 2 ? TT_MAX : TT_SUM, w.c[r]),
                             TT_OK);
    assert_int_equal(tt_group_end(), TT_OK);
    assert_int_equal(tt_comm_idle(w.c[0]) || 1, 1);
    assert_int_equal(tt_group_end(), TT_OK);
    for (int r = 0; r < 4; r++)
        assert_int_equal(tt_comm_wait(w.c[r]), TT_OK);
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 50; i++) {
                int32_t want = k == 2 ? 300 + k * 10 + i : (0 + 100 + 200 + 300) + 4 * (k * 10 + i);
                assert_int_equal(out[r][k][i], want);
            }
    assert_int_equal(tt_group_end(), TT_ERR_INVALID); /* unbalanced */
    tt_group_start();
    assert_int_equal(tt_comm_wait(w.c[0]), TT_ERR_INVALID);    /* would never return */
    assert_int_equal(tt_comm_destroy(w.c[0]), TT_ERR_INVALID); /* would free queued ops' comm */
    assert_int_equal(tt_group_end(), TT_OK);
    world_fini(&w);
}

/* Plans per size from a table: rules fill the default fields, an explicit plan wins, a rule
 * the host transport cannot run is an error naming the rule unless fallback was asked for. */
static void test_plan_table(void **state)
{
    (void)state;
    tt_comm *c[4];
    assert_int_equal(tt_comm_init_threads(4, c), TT_OK);
    tt_tune_entry rules[2] = {
        {.coll = TT_COLL_ALLREDUCE, .min_bytes = 0, .max_bytes = 4096, .algo = TT_ALGO_RHD, .proto = TT_PROTO_SIMPLE},
        {.coll = TT_COLL_ALLREDUCE, .min_bytes = 4097, .max_bytes = 1u << 20, .algo = TT_ALGO_RING,
         .proto = TT_PROTO_LL},
    };
    assert_int_equal(tt_comm_set_plan_table(c[0], rules, 2, 0), TT_OK);
    tt_plan eff;
    assert_int_equal(tt_comm_resolve_plan(c[0], TT_COLL_ALLREDUCE, 1024, TT_FLOAT, &eff), TT_OK);
    assert_int_equal(eff.algo, TT_ALGO_RHD);
    /* outside every rule: the built-in default (ring above 64 KiB) */
    assert_int_equal(tt_comm_resolve_plan(c[0], TT_COLL_ALLREDUCE, 1u << 20, TT_FLOAT, &eff), TT_OK);
    assert_int_equal(eff.algo, TT_ALGO_RING);
    /* LL on the host: refused, naming the rule */
    assert_int_equal(tt_comm_resolve_plan(c[0], TT_COLL_ALLREDUCE, 2048, TT_FLOAT, &eff), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "plan table rule for AllReduce 4097..1048576 bytes (ring/ll)"));
    /* explicit plan wins */
    tt_plan p = TT_PLAN_DEFAULT;
    p.algo = TT_ALGO_TREE;
    tt_comm_set_plan(c[0], &p);
    assert_int_equal(tt_comm_resolve_plan(c[0], TT_COLL_ALLREDUCE, 256, TT_FLOAT, &eff), TT_OK);
    assert_int_equal(eff.algo, TT_ALGO_TREE);
    tt_comm_set_plan(c[0], NULL);
    /* with fallback: ring with simple, counted */
    assert_int_equal(tt_comm_set_plan_table(c[0], rules, 2, TT_PLAN_TABLE_FALLBACK), TT_OK);
    assert_int_equal(tt_comm_resolve_plan(c[0], TT_COLL_ALLREDUCE, 2048, TT_FLOAT, &eff), TT_OK);
    assert_true(eff.algo == TT_ALGO_RING && eff.proto == TT_PROTO_SIMPLE);
    assert_int_equal(tt_comm_plan_table_fallbacks(c[0]), 1);
    /* bad rules */
    tt_tune_entry bad = {.coll = TT_COLL_ALLREDUCE, .min_bytes = 10, .max_bytes = 5, .algo = TT_ALGO_RING,
                         .proto = TT_PROTO_SIMPLE};
    assert_int_equal(tt_comm_set_plan_table(c[0], &bad, 1, 0), TT_ERR_INVALID);
    assert_int_equal(tt_comm_set_plan_table(c[0], NULL, 0, 0), TT_OK);
    for (int r = 0; r < 4; r++) assert_int_equal(tt_comm_destroy(c[r]), TT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allreduce_all_algos),
        cmocka_unit_test(test_every_type_and_op),
        cmocka_unit_test(test_rd_every_type_and_op),
        cmocka_unit_test(test_default_small_plan),
        cmocka_unit_test(test_other_collectives),
        cmocka_unit_test(test_hierarchical_nodes),
        cmocka_unit_test(test_group_many_ops),
        cmocka_unit_test(test_plan_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
