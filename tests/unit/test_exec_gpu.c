/* test_exec_gpu.c - the GPU executor: reduce-copy for every type and op
 * (unaligned heads/tails, mismatched alignment) against the host
 * reductions; AllReduce on virtual ranks of one GPU for every algorithm,
 * protocol and type, several channels, in and out of place, bit-exact
 * against tt_verify_expected; host-staged transport; P2P when the machine
 * has 2+ GPUs; plan errors.  AllGather, ReduceScatter, Broadcast and Reduce
 * (ring) on 1/2/3/4 (8) virtual ranks: every type and op, every protocol (LL128 where the pairs
 * allow it, refused with the reason on host-staged / PCIe pairs),
 * in and out of place, every root, odd counts, bit-exact against the host
 * engine's expected values (tt_verify_*); host-staged and P2P too.  Both sweeps also walk
 * large counts over 1 and 3 channels, so that every channel takes several pieces round robin
 * and the last piece is short.
 * TT_GPU_TEST_COLL_ONLY=1 runs only those (and the plan errors); TT_GPU_TEST_PROTOS=ll128 runs the
 * sweeps of the listed protocols only.  Every GPU test is skipped (cmocka skip) with
 * the reason printed when no GPU is usable.  Without CUDA the API must
 * answer TT_ERR_UNSUPPORTED (checked everywhere). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_exec.h"

/* TT_GPU_TEST_QUICK=1 (used under compute-sanitizer): small sizes only */
static int quick(void) { return getenv("TT_GPU_TEST_QUICK") != NULL; }

static int g_ngpu;
static char g_why[256];

static int need_gpu(void)
{
    if (g_ngpu > 0) return 1;
    printf("# SKIP no GPU: %s\n", g_why);
    skip();
    return 0;
}

static void test_no_gpu_is_a_clear_error(void **state)
{
    (void)state;
    if (g_ngpu > 0) {
        assert_true(strlen(g_why) > 0);
        return;
    }
    tt_gpu_comm *g = (tt_gpu_comm *)1;
    assert_int_equal(tt_gpu_comm_init(&g, 2, NULL), TT_ERR_UNSUPPORTED);
    assert_null(g);
    assert_non_null(strstr(tt_error_message(), "GPU"));
    double gbs[3];
    assert_int_equal(tt_gpu_bench_copy(0, 1024, 1, 0, 0, gbs), TT_ERR_UNSUPPORTED);
}

/* ---- reduce-copy --------------------------------------------------- */
static void test_reduce_copy_every_type_op_alignment(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    const size_t sizes[] = {1, 7, 33, 1000, 4099, 70001};
    const int offs[][3] = {{0, 0, 0}, {1, 1, 1}, {3, 3, 3}, {0, 1, 2}, {1, 0, 0}};
    size_t maxn = 70001 + 16, maxb = maxn * 8;
    void *d0, *d1, *dd;
    /* allocate through a 1-rank communicator (owns the device choice) */
    tt_gpu_comm *g;
    assert_int_equal(tt_gpu_comm_init(&g, 1, NULL), TT_OK);
    assert_int_equal(tt_gpu_alloc(g, 0, maxb, &d0), TT_OK);
    assert_int_equal(tt_gpu_alloc(g, 0, maxb, &d1), TT_OK);
    assert_int_equal(tt_gpu_alloc(g, 0, maxb, &dd), TT_OK);
    unsigned char *h0 = malloc(maxb), *h1 = malloc(maxb), *want = malloc(maxb), *got = malloc(maxb);
    int cases = 0;
    for (int t = 0; t < TT_NDTYPES; t++)
        for (int op = 0; op < TT_NREDOPS; op++) {
            if (op == TT_AVG) continue;
            size_t es = tt_dtype_size((tt_dtype)t);
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
                for (size_t oi = 0; oi < sizeof offs / sizeof *offs; oi++) {
                    size_t n = sizes[si];
                    if (n > 4099 && (oi > 1 || quick())) continue; /* large sizes: the two aligned layouts */
                    tt_verify_fill(h0, n, (tt_dtype)t, (tt_redop)op, 0, 11 + si, 0);
                    tt_verify_fill(h1, n, (tt_dtype)t, (tt_redop)op, 1, 11 + si, 0);
                    memcpy(want, h0, n * es);
                    assert_int_equal(tt_reduce(want, h1, n, (tt_dtype)t, (tt_redop)op), TT_OK);
                    char *p0 = (char *)d0 + offs[oi][0] * es, *p1 = (char *)d1 + offs[oi][1] * es,
                         *pd = (char *)dd + offs[oi][2] * es;
                    assert_int_equal(tt_gpu_memcpy(p0, h0, n * es), TT_OK);
                    assert_int_equal(tt_gpu_memcpy(p1, h1, n * es), TT_OK);
                    assert_int_equal(tt_gpu_memset(dd, 0xA5, maxb), TT_OK);
                    assert_int_equal(tt_gpu_reduce_copy(0, pd, p0, p1, n, (tt_dtype)t, (tt_redop)op), TT_OK);
                    assert_int_equal(tt_gpu_memcpy(got, pd, n * es), TT_OK);
                    size_t bad = tt_verify_count_wrong(got, want, n, (tt_dtype)t);
                    if (bad)
                        fail_msg("reduce-copy %s %s n=%zu offsets %d/%d/%d: %zu wrong", tt_dtype_name((tt_dtype)t),
                                 tt_redop_name((tt_redop)op), n, offs[oi][0], offs[oi][1], offs[oi][2], bad);
                    /* nothing written past the end */
                    unsigned char after[16];
                    assert_int_equal(tt_gpu_memcpy(after, pd + n * es, 16), TT_OK);
                    for (int k = 0; k < 16; k++) assert_int_equal(after[k], 0xA5);
                    /* copy (one source) */
                    assert_int_equal(tt_gpu_reduce_copy(0, pd, p0, NULL, n, (tt_dtype)t, (tt_redop)op), TT_OK);
                    assert_int_equal(tt_gpu_memcpy(got, pd, n * es), TT_OK);
                    assert_int_equal(memcmp(got, h0, n * es), 0);
                    cases++;
                }
        }
    printf("# reduce-copy: %d cases bit-exact\n", cases);
    free(h0); free(h1); free(want); free(got);
    tt_gpu_free(g, 0, d0);
    tt_gpu_free(g, 0, d1);
    tt_gpu_free(g, 0, dd);
    tt_gpu_comm_destroy(g);
}

/* ---- AllReduce ----------------------------------------------------- */
typedef struct {
    int n;
    tt_gpu_comm *g;
    void *sb[64], *rb[64];
    size_t cap;
    unsigned char *h, *want, *got;
} fix;

static void fix_init(fix *f, int n, size_t cap)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    f->cap = cap;
    assert_int_equal(tt_gpu_comm_init(&f->g, n, NULL), TT_OK);
    for (int r = 0; r < n; r++) {
        assert_int_equal(tt_gpu_alloc(f->g, r, cap + 64, &f->sb[r]), TT_OK);
        assert_int_equal(tt_gpu_alloc(f->g, r, cap + 64, &f->rb[r]), TT_OK);
    }
    f->h = malloc(cap);
    f->want = malloc(cap);
    f->got = malloc(cap);
}
static void fix_free(fix *f)
{
    for (int r = 0; r < f->n; r++) {
        tt_gpu_free(f->g, r, f->sb[r]);
        tt_gpu_free(f->g, r, f->rb[r]);
    }
    tt_gpu_comm_destroy(f->g);
    free(f->h); free(f->want); free(f->got);
}

/* one AllReduce, checked bit for bit; returns the number of wrong elements */
/* the protocols the GPU executor runs; LL128 only between ranks of one GPU or NVLink peers */
#define NPROTOS 3
static const tt_proto gpu_protos[NPROTOS] = {TT_PROTO_SIMPLE, TT_PROTO_LL, TT_PROTO_LL128};
/* TT_GPU_TEST_PROTOS=ll128 (a comma list of protocol names): the sweeps run those protocols only
 * (scripts/gpu/gpu-ll128-check.sh); unset: all three */
static int g_proto_on[NPROTOS] = {1, 1, 1};
static int proto_wanted(int pi) { return g_proto_on[pi]; }
static int parse_protos(const char *env)
{
    int any = 0;
    for (int pi = 0; pi < NPROTOS; pi++) {
        const char *nm = tt_proto_name(gpu_protos[pi]);
        size_t l = strlen(nm);
        g_proto_on[pi] = 0;
        for (const char *q = env; (q = strstr(q, nm)) != NULL; q += l)
            if ((q == env || q[-1] == ',') && (q[l] == '\0' || q[l] == ',')) g_proto_on[pi] = 1;
        any |= g_proto_on[pi];
    }
    return any;
}
/* may this communicator's pairs run protocol gpu_protos[pi]?  (LL128: not over PCIe or host memory) */
static int proto_runs_here(tt_gpu_comm *g, int pi)
{
    if (gpu_protos[pi] != TT_PROTO_LL128) return 1;
    const char *l = tt_gpu_comm_link(g, 0, tt_gpu_comm_nranks(g) > 1 ? 1 : 0);
    return strstr(l, "same GPU") || strstr(l, "NVLink");
}
/* LL128 refused on a communicator whose pairs cannot run it, naming the pair and its link */
static void expect_ll128_refused(tt_gpu_comm *g, tt_coll coll, tt_algo algo)
{
    tt_plan p = TT_PLAN_DEFAULT, e;
    p.algo = algo;
    p.proto = TT_PROTO_LL128;
    assert_int_equal(tt_gpu_comm_resolve_plan(g, coll, 4096, TT_FLOAT, &p, &e), TT_ERR_UNSUPPORTED);
    printf("# %s\n", tt_error_message());
    assert_non_null(strstr(tt_error_message(), "LL128 needs ranks on one GPU or NVLink peers"));
    assert_non_null(strstr(tt_error_message(), tt_gpu_comm_link(g, 0, 1)));
}

static size_t run_one(fix *f, size_t count, tt_dtype t, tt_redop op, tt_algo algo, tt_proto proto, int nch,
                      int inplace, int eoff)
{
    size_t es = tt_dtype_size(t);
    assert_true((count + eoff) * es <= f->cap + 64);
    const void *s[64];
    void *d[64];
    uint64_t seed = 1000 + count + (uint64_t)t * 7 + (uint64_t)op;
    for (int r = 0; r < f->n; r++) {
        char *sp = (char *)f->sb[r] + eoff * es, *rp = (char *)f->rb[r] + eoff * es;
        tt_verify_fill(f->h, count, t, op, r, seed, 0);
        assert_int_equal(tt_gpu_memcpy(sp, f->h, count * es), TT_OK);
        assert_int_equal(tt_gpu_memset(f->rb[r], 0xEE, f->cap + 64), TT_OK);
        if (inplace) {
            assert_int_equal(tt_gpu_memcpy(rp, f->h, count * es), TT_OK);
            s[r] = rp;
        } else {
            s[r] = sp;
        }
        d[r] = rp;
    }
    tt_plan p = TT_PLAN_DEFAULT;
    p.algo = algo;
    p.proto = proto;
    p.channels = nch;
    if (tt_gpu_allreduce(f->g, s, d, count, t, op, &p) != TT_OK || tt_gpu_comm_sync(f->g) != TT_OK)
        fail_msg("AllReduce n=%d count=%zu %s %s %s/%s ch=%d: %s", f->n, count, tt_dtype_name(t), tt_redop_name(op),
                 tt_algo_label(algo), tt_proto_name(proto), nch, tt_error_message());
    assert_int_equal(tt_verify_expected(f->want, count, t, op, f->n, seed, 0), TT_OK);
    size_t bad = 0;
    for (int r = 0; r < f->n; r++) {
        assert_int_equal(tt_gpu_memcpy(f->got, d[r], count * es), TT_OK);
        size_t b = tt_verify_count_wrong(f->got, f->want, count, t);
        if (b)
            printf("# rank %d: %zu wrong (n=%d count=%zu %s %s %s/%s ch=%d inplace=%d)\n", r, b, f->n, count,
                   tt_dtype_name(t), tt_redop_name(op), tt_algo_label(algo), tt_proto_name(proto), nch, inplace);
        bad += b;
        /* nothing written past the end */
        unsigned char after[8];
        assert_int_equal(tt_gpu_memcpy(after, (char *)d[r] + count * es, 8), TT_OK);
        for (int k = 0; k < 8; k++) assert_int_equal(after[k], 0xEE);
    }
    return bad;
}


static void sweep(int n, const char *label)
{
    const size_t all_sizes[] = {0, 1, 13, 1000, 4096 + 3, 70001, 300007};
    const size_t *sizes = all_sizes;
    size_t nsizes = quick() ? 5 : sizeof all_sizes / sizeof *all_sizes;
    fix f;
    fix_init(&f, n, 300007 * 8 + 64);
    int maxch = tt_gpu_comm_max_channels(f.g);
    size_t bad = 0;
    int runs = 0;
    for (int algo = 0; algo < 2; algo++)
        for (int pi = 0; pi < NPROTOS; pi++)
            for (size_t si = 0; si < nsizes && proto_wanted(pi); si++)
                for (int t = 0; t < TT_NDTYPES; t++) {
                    int nch = (si & 1) ? 1 : (maxch < 4 ? maxch : 4);
                    if (sizes[si] >= 70001) nch = maxch;
                    int inplace = (int)((si + t) & 1);
                    int eoff = (t == TT_FLOAT && si == 3) ? 1 : 0; /* unaligned start (float) */
                    bad += run_one(&f, sizes[si], (tt_dtype)t, TT_SUM, (tt_algo)algo, gpu_protos[pi], nch, inplace,
                                   eoff);
                    runs++;
                }
    /* every op on a few types, both algorithms and protocols */
    const tt_dtype ts[] = {TT_INT8, TT_UINT32, TT_INT64, TT_HALF, TT_BFLOAT16, TT_FLOAT, TT_DOUBLE};
    for (int algo = 0; algo < 2; algo++)
        for (int pi = 0; pi < NPROTOS; pi++)
            for (size_t ti = 0; ti < sizeof ts / sizeof *ts && proto_wanted(pi); ti++)
                for (int op = 0; op < TT_NREDOPS; op++) {
                    bad += run_one(&f, 5003, ts[ti], (tt_redop)op, (tt_algo)algo, gpu_protos[pi], 2, op & 1, 0);
                    runs++;
                }
    /* the channel walk over several rounds (pieces round robin over few channels, a short last piece) */
    const tt_dtype wt[] = {TT_INT8, TT_HALF, TT_FLOAT, TT_DOUBLE};
    const size_t wcount = quick() ? 20011 : 300007;
    for (int algo = 0; algo < 2; algo++)
        for (int pi = 0; pi < NPROTOS; pi++)
            for (size_t ti = 0; ti < sizeof wt / sizeof *wt && proto_wanted(pi); ti++)
                for (int nch = 1; nch <= 3 && nch <= maxch; nch += 2) {
                    if (quick() && wt[ti] != TT_FLOAT) continue;
                    bad += run_one(&f, wcount, wt[ti], TT_SUM, (tt_algo)algo, gpu_protos[pi], nch,
                                   (int)(ti + nch) & 1, 0);
                    runs++;
                }
    printf("# %s: %d ranks, %d AllReduce runs, %zu wrong elements (channels up to %d, virtual=%d)\n", label, n,
           runs, bad, maxch, tt_gpu_comm_is_virtual(f.g));
    fix_free(&f);
    assert_int_equal(bad, 0);
}

static void test_allreduce_virtual_2(void **state) { (void)state; if (need_gpu()) sweep(2, "virtual"); }
static void test_allreduce_virtual_3(void **state) { (void)state; if (need_gpu()) sweep(3, "virtual"); }
static void test_allreduce_virtual_4(void **state) { (void)state; if (need_gpu()) sweep(4, "virtual"); }
static void test_allreduce_virtual_8(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    if (quick()) { /* runs nothing: counted as skipped, not as passed */
        printf("# SKIP TT_GPU_TEST_QUICK: the 8-rank sweep is left out\n");
        skip();
        return;
    }
    sweep(8, "virtual");
}
static void test_allreduce_one_rank(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    fix f;
    fix_init(&f, 1, 100000 * 8);
    size_t bad = 0;
    for (int t = 0; t < TT_NDTYPES; t++)
        for (int op = 0; op < TT_NREDOPS; op++) bad += run_one(&f, 99999, (tt_dtype)t, (tt_redop)op, TT_ALGO_RING,
                                                               TT_PROTO_SIMPLE, (op & 1) ? 1 : 3, op & 1, 0);
    fix_free(&f);
    assert_int_equal(bad, 0);
}

/* the algorithms of a thread-mode communicator: the GPU mode's list, never hierarchical (which
 * needs process ranks on several hosts); one host */
static void test_comm_algos_thread_mode(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    tt_gpu_comm *g = NULL;
    assert_int_equal(tt_gpu_comm_init(&g, 3, NULL), TT_OK);
    tt_algo a[TT_ALGO_COUNT];
    int n = tt_gpu_comm_algos(g, TT_COLL_ALLREDUCE, a, TT_ALGO_COUNT);
    assert_int_equal(n, tt_exec_algos(TT_EXEC_GPU, TT_COLL_ALLREDUCE, 3, NULL, 0));
    for (int i = 0; i < n; i++) assert_int_not_equal(a[i], TT_ALGO_HIER);
    assert_int_equal(tt_gpu_comm_algos(g, TT_COLL_ALLGATHER, a, TT_ALGO_COUNT), 1);
    assert_int_equal(a[0], TT_ALGO_RING);
    assert_int_equal(tt_gpu_comm_algos(g, TT_COLL_ALLREDUCE, NULL, 0), n); /* counting only */
    assert_int_equal(tt_gpu_comm_hosts(g), 1);
    assert_int_equal(tt_gpu_comm_destroy(g), TT_OK);
}

static void test_allreduce_host_staged(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    setenv("TOPOTUNE_GPU_TRANSPORT", "host", 1);
    fix f;
    fix_init(&f, 3, 200003 * 4 + 64);
    unsetenv("TOPOTUNE_GPU_TRANSPORT");
    assert_non_null(strstr(tt_gpu_comm_link(f.g, 0, 1), "host"));
    size_t bad = 0;
    for (int algo = 0; algo < 2; algo++) {
        for (int pi = 0; pi < NPROTOS; pi++) {
            if (!proto_wanted(pi) || !proto_runs_here(f.g, pi)) continue;
            bad += run_one(&f, 200003, TT_FLOAT, TT_SUM, (tt_algo)algo, gpu_protos[pi], 2, 0, 0);
            bad += run_one(&f, 77, TT_HALF, TT_MAX, (tt_algo)algo, gpu_protos[pi], 1, 1, 0);
        }
        /* host memory gives no 128-byte line guarantee: LL128 is refused, not replaced */
        expect_ll128_refused(f.g, TT_COLL_ALLREDUCE, (tt_algo)algo);
    }
    fix_free(&f);
    assert_int_equal(bad, 0);
}

static void test_allreduce_p2p(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    if (g_ngpu < 2) {
        printf("# SKIP P2P needs 2+ GPUs (this machine has %d)\n", g_ngpu);
        skip();
        return;
    }
    fix f;
    fix_init(&f, g_ngpu, 300007 * 4 + 64);
    assert_false(tt_gpu_comm_is_virtual(f.g));
    printf("# link 0 -> 1: %s\n", tt_gpu_comm_link(f.g, 0, 1));
    size_t bad = 0;
    for (int algo = 0; algo < 2; algo++)
        for (int pi = 0; pi < NPROTOS; pi++) {
            if (!proto_wanted(pi)) continue;
            if (!proto_runs_here(f.g, pi)) { /* P2P over PCIe */
                expect_ll128_refused(f.g, TT_COLL_ALLREDUCE, (tt_algo)algo);
                continue;
            }
            bad += run_one(&f, 300007, TT_FLOAT, TT_SUM, (tt_algo)algo, gpu_protos[pi], 0, 0, 0);
            bad += run_one(&f, 1001, TT_BFLOAT16, TT_AVG, (tt_algo)algo, gpu_protos[pi], 0, 1, 0);
        }
    fix_free(&f);
    assert_int_equal(bad, 0);
}

/* a rank that never enters: the others fail at the deadline naming it,
 * nothing hangs, and the communicator stays failed */
static void test_stuck_rank_times_out(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    for (int pi = 0; pi < NPROTOS; pi++) {
        if (!proto_wanted(pi)) continue;
        setenv("TOPOTUNE_GPU_TEST_STALL_RANK", "1", 1);
        fix f;
        fix_init(&f, 3, 4096 * 4 + 64);
        unsetenv("TOPOTUNE_GPU_TEST_STALL_RANK");
        tt_gpu_comm_set_timeout(f.g, 300);
        const void *s[3] = {f.sb[0], f.sb[1], f.sb[2]};
        void *d[3] = {f.rb[0], f.rb[1], f.rb[2]};
        tt_plan p = TT_PLAN_DEFAULT;
        p.algo = TT_ALGO_RING;
        p.proto = gpu_protos[pi];
        p.channels = 2;
        assert_int_equal(tt_gpu_allreduce(f.g, s, d, 4096, TT_FLOAT, TT_SUM, &p), TT_OK);
        assert_int_equal(tt_gpu_comm_sync(f.g), TT_ERR_TIMEOUT);
        printf("# %s\n", tt_error_message());
        assert_non_null(strstr(tt_error_message(), "timed out after 300 ms"));
        assert_non_null(strstr(tt_error_message(), "waiting"));
        /* sticky */
        assert_int_equal(tt_gpu_allreduce(f.g, s, d, 4096, TT_FLOAT, TT_SUM, &p), TT_ERR_TIMEOUT);
        fix_free(&f);
    }
}

static void test_plan_errors(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    tt_gpu_comm *g;
    assert_int_equal(tt_gpu_comm_init(&g, 2, NULL), TT_OK);
    tt_plan p = TT_PLAN_DEFAULT, e;
    p.proto = TT_PROTO_LL128;
    /* two ranks of one GPU (or NVLink peers): LL128 runs, 120 of every 128 slot bytes are payload */
    if (strstr(tt_gpu_comm_link(g, 0, 1), "same GPU") || strstr(tt_gpu_comm_link(g, 0, 1), "NVLink")) {
        assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 100, TT_FLOAT, &p, &e), TT_OK);
        assert_int_equal(e.proto, TT_PROTO_LL128);
        assert_int_equal(e.chunk_bytes, 1024 * 120);
    } else {
        expect_ll128_refused(g, TT_COLL_ALLREDUCE, TT_ALGO_DEFAULT);
    }
    p = TT_PLAN_DEFAULT;
    p.algo = TT_ALGO_RHD;
    assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 100, TT_FLOAT, &p, &e), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "available: ring, tree"));
    p = TT_PLAN_DEFAULT;
    p.channels = 1000;
    assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 100, TT_FLOAT, &p, &e), TT_ERR_UNSUPPORTED);
    /* the other collectives: ring only (default ring also where AllReduce picks tree) */
    for (int c = 0; c < TT_COLL_COUNT; c++) {
        if (c == TT_COLL_ALLREDUCE) continue;
        assert_int_equal(tt_gpu_comm_resolve_plan(g, (tt_coll)c, 100, TT_FLOAT, NULL, &e), TT_OK);
        assert_int_equal(e.algo, TT_ALGO_RING);
        p = TT_PLAN_DEFAULT;
        p.algo = TT_ALGO_TREE;
        assert_int_equal(tt_gpu_comm_resolve_plan(g, (tt_coll)c, 100, TT_FLOAT, &p, &e), TT_ERR_UNSUPPORTED);
        assert_non_null(strstr(tt_error_message(), "available: ring"));
    }
    assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 100, TT_FLOAT, NULL, &e), TT_OK);
    assert_int_equal(e.proto, TT_PROTO_LL);
    assert_int_equal(tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 1 << 24, TT_FLOAT, NULL, &e), TT_OK);
    assert_int_equal(e.proto, TT_PROTO_SIMPLE);
    assert_int_equal(e.algo, TT_ALGO_RING);
    /* misaligned element pointers are refused, not faulted on */
    void *b;
    assert_int_equal(tt_gpu_alloc(g, 0, 64, &b), TT_OK);
    const void *s[2] = {(char *)b + 1, (char *)b + 1};
    void *d[2] = {(char *)b + 1, (char *)b + 1};
    assert_int_equal(tt_gpu_allreduce(g, s, d, 4, TT_FLOAT, TT_SUM, NULL), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "aligned"));
    assert_int_equal(tt_gpu_allgather(g, s, d, 4, TT_FLOAT, NULL), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "aligned"));
    /* roots out of range, a missing buffer where one is needed, an unknown collective */
    const void *s2[2] = {b, b};
    void *d2[2] = {b, b}, *dn[2] = {NULL, NULL};
    assert_int_equal(tt_gpu_broadcast(g, s2, d2, 4, TT_FLOAT, 2, NULL), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "root 2"));
    assert_int_equal(tt_gpu_reduce(g, s2, d2, 4, TT_FLOAT, TT_SUM, -1, NULL), TT_ERR_INVALID);
    assert_int_equal(tt_gpu_reduce(g, s2, dn, 4, TT_FLOAT, TT_SUM, 1, NULL), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "rank 1 has a NULL receive buffer"));
    assert_int_equal(tt_gpu_collective(g, (tt_coll)99, s2, d2, 4, TT_FLOAT, TT_SUM, 0, NULL), TT_ERR_INVALID);
    tt_gpu_free(g, 0, b);
    tt_gpu_comm_destroy(g);
}

/* ---- AllGather, ReduceScatter, Broadcast, Reduce ---------------------- */
/* One collective, checked bit for bit as the host engine checks it (exec_measure_host.c):
 * returns the number of wrong elements.  Buffers of the fixture hold n x count elements.
 * In place: nccl-tests' layouts (AllGather input = block `rank` of the output; ReduceScatter
 * output = block `rank` of the input; Broadcast/Reduce send == receive).  Out of place,
 * Broadcast passes NULL send buffers off the root and Reduce NULL receive buffers off the
 * root on odd counts (allowed), else real ones that must stay untouched. */
static size_t run_coll(fix *f, tt_coll coll, size_t count, tt_dtype t, tt_redop op, int root, tt_proto proto,
                       int nch, int inplace)
{
    int n = f->n;
    size_t es = tt_dtype_size(t);
    size_t nin = coll == TT_COLL_REDUCESCATTER ? count * n : count;
    size_t nout = coll == TT_COLL_ALLGATHER ? count * n : count;
    assert_true((nin > nout ? nin : nout) * es <= f->cap);
    const void *s[64];
    void *d[64];
    uint64_t seed = 2000 + count * 3 + (uint64_t)t * 7 + (uint64_t)op * 11 + (uint64_t)coll * 13 + (uint64_t)root;
    int nulls = !inplace && (count & 1);
    for (int r = 0; r < n; r++) {
        unsigned char *sp = f->sb[r], *rp = f->rb[r];
        size_t me = (size_t)r * count * es;
        tt_verify_fill(f->h, nin, t, op, r, seed, 0);
        assert_int_equal(tt_gpu_memset(f->rb[r], 0xEE, f->cap + 64), TT_OK);
        if (!inplace) {
            assert_int_equal(tt_gpu_memcpy(sp, f->h, nin * es), TT_OK);
            s[r] = sp;
            d[r] = rp;
        } else if (coll == TT_COLL_ALLGATHER) {
            assert_int_equal(tt_gpu_memcpy(rp + me, f->h, nin * es), TT_OK);
            s[r] = rp + me;
            d[r] = rp;
        } else if (coll == TT_COLL_REDUCESCATTER) {
            assert_int_equal(tt_gpu_memcpy(rp, f->h, nin * es), TT_OK);
            s[r] = rp;
            d[r] = rp + me;
        } else {
            assert_int_equal(tt_gpu_memcpy(rp, f->h, nin * es), TT_OK);
            s[r] = rp;
            d[r] = rp;
        }
        if (nulls && coll == TT_COLL_BROADCAST && r != root) s[r] = NULL;
        if (nulls && coll == TT_COLL_REDUCE && r != root) d[r] = NULL;
    }
    tt_plan p = TT_PLAN_DEFAULT;
    p.algo = TT_ALGO_RING;
    p.proto = proto;
    p.channels = nch;
    if (tt_gpu_collective(f->g, coll, s, d, count, t, op, root, &p) != TT_OK || tt_gpu_comm_sync(f->g) != TT_OK)
        fail_msg("%s n=%d count=%zu %s %s root %d %s ch=%d inplace=%d: %s", tt_coll_label(coll), n, count,
                 tt_dtype_name(t), tt_redop_name(op), root, tt_proto_name(proto), nch, inplace, tt_error_message());
    size_t bad = 0;
    for (int r = 0; r < n; r++) {
        switch (coll) {
        case TT_COLL_REDUCESCATTER:
            assert_int_equal(tt_verify_expected(f->want, count, t, op, n, seed, (size_t)r * count), TT_OK);
            break;
        case TT_COLL_ALLGATHER:
            for (int q = 0; q < n; q++) tt_verify_fill(f->want + (size_t)q * count * es, count, t, op, q, seed, 0);
            break;
        case TT_COLL_BROADCAST: tt_verify_fill(f->want, count, t, op, root, seed, 0); break;
        default: assert_int_equal(tt_verify_expected(f->want, count, t, op, n, seed, 0), TT_OK); break;
        }
        size_t b = 0;
        if (coll == TT_COLL_REDUCE && r != root) {
            /* off the root the receive buffer is not written (in place: the input stays) */
            if (d[r]) {
                assert_int_equal(tt_gpu_memcpy(f->got, d[r], count * es), TT_OK);
                if (inplace) tt_verify_fill(f->want, count, t, op, r, seed, 0);
                else memset(f->want, 0xEE, count * es);
                b = tt_verify_count_wrong(f->got, f->want, count, t);
            }
        } else {
            assert_int_equal(tt_gpu_memcpy(f->got, d[r], nout * es), TT_OK);
            b = tt_verify_count_wrong(f->got, f->want, nout, t);
        }
        if (b)
            printf("# rank %d: %zu wrong (%s n=%d count=%zu %s %s root %d %s ch=%d inplace=%d)\n", r, b,
                   tt_coll_label(coll), n, count, tt_dtype_name(t), tt_redop_name(op), root, tt_proto_name(proto),
                   nch, inplace);
        bad += b;
        /* nothing written past the end of the output (in-place ReduceScatter: the input follows) */
        if (d[r] && !(inplace && coll == TT_COLL_REDUCESCATTER) && !(coll == TT_COLL_REDUCE && r != root)) {
            unsigned char after[8];
            assert_int_equal(tt_gpu_memcpy(after, (char *)d[r] + nout * es, 8), TT_OK);
            for (int k = 0; k < 8; k++) assert_int_equal(after[k], 0xEE);
        }
    }
    return bad;
}

static const tt_coll other_colls[4] = {TT_COLL_ALLGATHER, TT_COLL_REDUCESCATTER, TT_COLL_BROADCAST, TT_COLL_REDUCE};

static void coll_sweep(int n, const char *label)
{
    const size_t all_sizes[] = {0, 1, 13, 1003, 4096 + 5, 70001, 300007};
    /* quick (under compute-sanitizer): sizes up to 4101, four types */
    size_t nsizes = quick() ? 5 : sizeof all_sizes / sizeof *all_sizes;
    fix f;
    fix_init(&f, n, (size_t)n * 300007 * 8 + 64);
    int maxch = tt_gpu_comm_max_channels(f.g);
    size_t bad = 0;
    int runs = 0;
    for (int ci = 0; ci < 4; ci++)
        for (int pi = 0; pi < NPROTOS; pi++)
            for (size_t si = 0; si < nsizes && proto_wanted(pi); si++)
                for (int t = 0; t < TT_NDTYPES; t++) {
                    if (quick() && t != TT_INT8 && t != TT_HALF && t != TT_FLOAT && t != TT_UINT64) continue;
                    size_t count = all_sizes[si];
                    /* the large counts on one type per element size (time) */
                    if (count >= 70001 && t != TT_INT8 && t != TT_HALF && t != TT_FLOAT && t != TT_DOUBLE) continue;
                    int nch = (si & 1) ? 1 : (maxch < 3 ? maxch : 3);
                    if (count >= 70001) nch = maxch;
                    int inplace = (int)((si + t + pi) & 1);
                    int root = (int)((si + t + ci) % n);
                    bad += run_coll(&f, other_colls[ci], count, (tt_dtype)t, TT_SUM, root, gpu_protos[pi], nch,
                                    inplace);
                    runs++;
                }
    /* every op of the reducing ones on a few types; every root of the rooted ones */
    const tt_dtype ts[] = {TT_INT8, TT_UINT8, TT_INT32, TT_UINT64, TT_HALF, TT_BFLOAT16, TT_FLOAT, TT_DOUBLE};
    for (int ci = 0; ci < 4; ci++)
        for (int pi = 0; pi < NPROTOS; pi++)
            for (size_t ti = 0; ti < sizeof ts / sizeof *ts && proto_wanted(pi); ti++)
                for (int op = 0; op < TT_NREDOPS; op++) {
                    int reduces = other_colls[ci] == TT_COLL_REDUCESCATTER || other_colls[ci] == TT_COLL_REDUCE;
                    if (!reduces && op != TT_SUM) continue;
                    if (quick() && ts[ti] != TT_INT32 && ts[ti] != TT_FLOAT) continue;
                    bad += run_coll(&f, other_colls[ci], 5003, ts[ti], (tt_redop)op, (int)(op + ti) % n,
                                    gpu_protos[pi], 2, (int)(op + ti) & 1);
                    runs++;
                }
    for (int root = 0; root < n; root++)
        for (int pi = 0; pi < NPROTOS; pi++) {
            if (!proto_wanted(pi)) continue;
            bad += run_coll(&f, TT_COLL_BROADCAST, 77777, TT_FLOAT, TT_SUM, root, gpu_protos[pi], 0, root & 1);
            bad += run_coll(&f, TT_COLL_REDUCE, 77777, TT_INT32, TT_AVG, root, gpu_protos[pi], 0, !(root & 1));
            runs += 2;
        }
    /* the channel walk over several rounds (pieces round robin over few channels, a short last piece) */
    const tt_dtype wt[] = {TT_INT8, TT_FLOAT, TT_DOUBLE};
    const size_t wcount = quick() ? 20011 : 300007;
    for (int ci = 0; ci < 4; ci++)
        for (int pi = 0; pi < NPROTOS; pi++)
            for (size_t ti = 0; ti < sizeof wt / sizeof *wt && proto_wanted(pi); ti++)
                for (int nch = 1; nch <= 3 && nch <= maxch; nch += 2) {
                    if (quick() && wt[ti] != TT_FLOAT) continue;
                    bad += run_coll(&f, other_colls[ci], wcount, wt[ti], TT_SUM, (int)(ti + nch + ci) % n,
                                    gpu_protos[pi], nch, (int)(ti + nch + ci) & 1);
                    runs++;
                }
    printf("# %s: %d ranks, %d AllGather/ReduceScatter/Broadcast/Reduce runs, %zu wrong elements (channels up to %d)\n",
           label, n, runs, bad, maxch);
    fix_free(&f);
    assert_int_equal(bad, 0);
}

static void test_colls_virtual_2(void **state) { (void)state; if (need_gpu()) coll_sweep(2, "virtual"); }
static void test_colls_virtual_3(void **state) { (void)state; if (need_gpu()) coll_sweep(3, "virtual"); }
static void test_colls_virtual_4(void **state) { (void)state; if (need_gpu()) coll_sweep(4, "virtual"); }
static void test_colls_virtual_8(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    if (quick()) {
        printf("# SKIP TT_GPU_TEST_QUICK: the 8-rank sweep is left out\n");
        skip();
        return;
    }
    coll_sweep(8, "virtual");
}

static void test_colls_one_rank(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    fix f;
    fix_init(&f, 1, 100000 * 8);
    size_t bad = 0;
    size_t count = quick() ? 999 : 99999;
    for (int ci = 0; ci < 4; ci++)
        for (int t = 0; t < TT_NDTYPES; t++)
            for (int op = 0; op < TT_NREDOPS; op++)
                if (!quick() || t == TT_INT8 || t == TT_BFLOAT16 || t == TT_INT64 || t == TT_FLOAT)
                bad += run_coll(&f, other_colls[ci], count, (tt_dtype)t, (tt_redop)op, 0, gpu_protos[op & 1], 1,
                                (t + op) & 1);
    fix_free(&f);
    assert_int_equal(bad, 0);
}

static void test_colls_host_staged(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    setenv("TOPOTUNE_GPU_TRANSPORT", "host", 1);
    fix f;
    fix_init(&f, 3, 3 * 200003 * 4 + 64);
    unsetenv("TOPOTUNE_GPU_TRANSPORT");
    size_t bad = 0;
    for (int ci = 0; ci < 4; ci++) {
        for (int pi = 0; pi < NPROTOS; pi++) {
            if (!proto_wanted(pi) || !proto_runs_here(f.g, pi)) continue;
            bad += run_coll(&f, other_colls[ci], 200003, TT_FLOAT, TT_SUM, 1, gpu_protos[pi], 2, 0);
            bad += run_coll(&f, other_colls[ci], 77, TT_HALF, TT_MAX, 2, gpu_protos[pi], 1, 1);
        }
        expect_ll128_refused(f.g, other_colls[ci], TT_ALGO_RING);
    }
    fix_free(&f);
    assert_int_equal(bad, 0);
}

static void test_colls_p2p(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    if (g_ngpu < 2) {
        printf("# SKIP P2P needs 2+ GPUs (this machine has %d)\n", g_ngpu);
        skip();
        return;
    }
    fix f;
    fix_init(&f, g_ngpu, (size_t)g_ngpu * 300007 * 4 + 64);
    size_t bad = 0;
    for (int ci = 0; ci < 4; ci++)
        for (int pi = 0; pi < NPROTOS; pi++) {
            if (!proto_wanted(pi)) continue;
            if (!proto_runs_here(f.g, pi)) { /* P2P over PCIe */
                expect_ll128_refused(f.g, other_colls[ci], TT_ALGO_RING);
                continue;
            }
            bad += run_coll(&f, other_colls[ci], 300007, TT_FLOAT, TT_SUM, g_ngpu - 1, gpu_protos[pi], 0, 0);
            bad += run_coll(&f, other_colls[ci], 1001, TT_BFLOAT16, TT_AVG, 0, gpu_protos[pi], 0, 1);
        }
    fix_free(&f);
    assert_int_equal(bad, 0);
}

/* a stalled rank in a Broadcast chain: the deadline names the collective */
static void test_colls_stuck_rank_times_out(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    setenv("TOPOTUNE_GPU_TEST_STALL_RANK", "1", 1);
    fix f;
    fix_init(&f, 3, 3 * 4096 * 4 + 64);
    unsetenv("TOPOTUNE_GPU_TEST_STALL_RANK");
    tt_gpu_comm_set_timeout(f.g, 300);
    const void *s[3] = {f.sb[0], f.sb[1], f.sb[2]};
    void *d[3] = {f.rb[0], f.rb[1], f.rb[2]};
    assert_int_equal(tt_gpu_broadcast(f.g, s, d, 4096, TT_FLOAT, 0, NULL), TT_OK);
    assert_int_equal(tt_gpu_comm_sync(f.g), TT_ERR_TIMEOUT);
    printf("# %s\n", tt_error_message());
    assert_non_null(strstr(tt_error_message(), "Broadcast #1"));
    assert_non_null(strstr(tt_error_message(), "timed out after 300 ms"));
    assert_int_equal(tt_gpu_allgather(f.g, s, d, 16, TT_FLOAT, NULL), TT_ERR_TIMEOUT); /* sticky */
    fix_free(&f);
}

int main(void)
{
    g_ngpu = tt_gpu_available(g_why, sizeof g_why);
    printf("# GPU: %s\n", g_why);
    const char *pe = getenv("TT_GPU_TEST_PROTOS");
    if (pe && *pe) {
        if (!parse_protos(pe)) {
            fprintf(stderr, "TT_GPU_TEST_PROTOS='%s': no protocol named (use simple, ll, ll128, comma-separated)\n", pe);
            return 2;
        }
        printf("# protocols: %s%s%s\n", g_proto_on[0] ? "simple " : "", g_proto_on[1] ? "ll " : "",
               g_proto_on[2] ? "ll128" : "");
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_gpu_is_a_clear_error),
        cmocka_unit_test(test_reduce_copy_every_type_op_alignment),
        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_comm_algos_thread_mode),
        cmocka_unit_test(test_allreduce_one_rank),
        cmocka_unit_test(test_allreduce_virtual_2),
        cmocka_unit_test(test_allreduce_virtual_3),
        cmocka_unit_test(test_allreduce_virtual_4),
        cmocka_unit_test(test_allreduce_virtual_8),
        cmocka_unit_test(test_allreduce_host_staged),
        cmocka_unit_test(test_allreduce_p2p),
        cmocka_unit_test(test_stuck_rank_times_out),
        cmocka_unit_test(test_colls_one_rank),
        cmocka_unit_test(test_colls_virtual_2),
        cmocka_unit_test(test_colls_virtual_3),
        cmocka_unit_test(test_colls_virtual_4),
        cmocka_unit_test(test_colls_virtual_8),
        cmocka_unit_test(test_colls_host_staged),
        cmocka_unit_test(test_colls_p2p),
        cmocka_unit_test(test_colls_stuck_rank_times_out),
    };
    /* TT_GPU_TEST_COLL_ONLY=1: the tests of AllGather/ReduceScatter/Broadcast/Reduce and the plan
     * errors; =small: one rank and three virtual ranks only (for compute-sanitizer) */
    const char *only_env = getenv("TT_GPU_TEST_COLL_ONLY");
    if (only_env && !strcmp(only_env, "small")) {
        const struct CMUnitTest small[] = {
            cmocka_unit_test(test_colls_one_rank),
            cmocka_unit_test(test_colls_virtual_3),
        };
        return cmocka_run_group_tests(small, NULL, NULL);
    }
    if (only_env) {
        const struct CMUnitTest only[] = {
            cmocka_unit_test(test_plan_errors),
            cmocka_unit_test(test_colls_one_rank),
            cmocka_unit_test(test_colls_virtual_2),
            cmocka_unit_test(test_colls_virtual_3),
            cmocka_unit_test(test_colls_virtual_4),
            cmocka_unit_test(test_colls_virtual_8),
            cmocka_unit_test(test_colls_host_staged),
            cmocka_unit_test(test_colls_p2p),
            cmocka_unit_test(test_colls_stuck_rank_times_out),
        };
        return cmocka_run_group_tests(only, NULL, NULL);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
