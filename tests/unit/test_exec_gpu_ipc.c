/* test_exec_gpu_ipc.c - GPU ranks in separate processes (tt_gpu_comm_init_procs):
 * forked processes meet over the host executor's TCP rendezvous, map each
 * other's buffers with CUDA IPC (two and three processes on one GPU: "IPC (same
 * GPU)") or host-stage through shared memory, and run AllReduce for every
 * type (ring and tree, simple and ll, in place and out of place, odd counts),
 * bit-exact against tt_verify_expected.  Failures: a killed peer process makes
 * the survivor fail within the deadline naming the rank; a stuck rank's
 * deadline in one process stops the kernels of the others (shared abort word).
 * The same sweeps and failures over the net transport (TOPOTUNE_GPU_TRANSPORT=net:
 * pinned host FIFOs and proxy threads over TCP loopback; aborts travel through
 * the proxies, a killed peer is seen by the survivor's proxy).  Mixed: 4 processes
 * on 2 emulated hosts (TOPOTUNE_GPU_EMULATE_HOSTS=2): IPC inside each, net between,
 * in one communicator; the same sweep and a killed peer named by every survivor.
 *
 * CUDA must not be initialised in the parent before fork(): the parent probes
 * the GPU in a child and never calls CUDA itself.  Every GPU test is a cmocka
 * skip with the reason when no GPU is usable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tt_exec.h"

#define MAXP 4
#define MSG 1024

static int g_ngpu;
static char g_why[256];

/* TT_GPU_TEST_QUICK=1 (used under compute-sanitizer): a few types only */
static int quick(void) { return getenv("TT_GPU_TEST_QUICK") != NULL; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int need_gpu(void)
{
    if (g_ngpu > 0) return 1;
    printf("# SKIP no GPU: %s\n", g_why);
    skip();
    return 0;
}

/* ---- process harness --------------------------------------------------- */
typedef int (*child_fn)(int rank, tt_comm *hc, const void *arg, char *msg, size_t ml);

typedef struct {
    int rc[MAXP];        /* exit status, 128 + signal, or -1 = killed at the harness deadline */
    double secs[MAXP];   /* from start until the process ended */
    char msg[MAXP][MSG];
} results;

/* A free TCP port on 127.0.0.1 (rank 0 binds it in tt_comm_init_rank; an id
 * from tt_get_unique_id would keep a listener in this parent for every run). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

/* nprocs processes; each meets the others over TCP, runs fn and exits with its status. */
static void run_procs(int nprocs, child_fn fn, const void *arg, int deadline_s, results *res)
{
    memset(res, 0, sizeof *res);
    tt_unique_id id;
    char addr[64];
    int port = free_port();
    assert_true(port > 0);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    assert_int_equal(tt_unique_id_from_addr(&id, addr), TT_OK);
    pid_t pid[MAXP];
    int fd[MAXP];
    double t0 = now_s();
    fflush(stdout);
    fflush(stderr);
    for (int r = 0; r < nprocs; r++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        pid[r] = fork();
        assert_true(pid[r] >= 0);
        if (pid[r] == 0) {
            close(p[0]);
            char msg[MSG] = "";
            tt_comm *hc = NULL;
            int rc;
            if (tt_comm_init_rank(&hc, nprocs, &id, r) != TT_OK) {
                snprintf(msg, sizeof msg, "rank %d: host communicator: %s", r, tt_error_message());
                rc = 2;
            } else {
                rc = fn(r, hc, arg, msg, sizeof msg);
                tt_comm_destroy(hc);
            }
            if (write(p[1], msg, strlen(msg) + 1) < 0) rc = 3;
            _exit(rc);
        }
        close(p[1]);
        fd[r] = p[0];
        fcntl(fd[r], F_SETFL, O_NONBLOCK);
    }
    int left = nprocs;
    int done[MAXP] = {0};
    while (left > 0) {
        for (int r = 0; r < nprocs; r++) {
            if (done[r]) continue;
            int stt;
            if (waitpid(pid[r], &stt, WNOHANG) == pid[r]) { /* reaped at once: no zombie is left */
                done[r] = 1;
                left--;
                res->secs[r] = now_s() - t0;
                res->rc[r] = WIFEXITED(stt) ? WEXITSTATUS(stt) : 128 + WTERMSIG(stt);
                ssize_t k = read(fd[r], res->msg[r], MSG - 1);
                res->msg[r][k > 0 ? k : 0] = '\0';
            }
        }
        if (left && now_s() - t0 > deadline_s) {
            for (int r = 0; r < nprocs; r++)
                if (!done[r]) {
                    kill(pid[r], SIGKILL);
                    waitpid(pid[r], NULL, 0);
                    done[r] = 1;
                    res->rc[r] = -1;
                    snprintf(res->msg[r], MSG, "rank %d still running after %d s: killed (a hang)", r, deadline_s);
                }
            left = 0;
        }
        if (left) usleep(2000);
    }
    for (int r = 0; r < nprocs; r++) {
        close(fd[r]);
        printf("# rank %d: exit %d after %.1f s%s%s\n", r, res->rc[r], res->secs[r], res->msg[r][0] ? ": " : "",
               res->msg[r]);
    }
}

#define CFAIL(...)                                 \
    do {                                           \
        snprintf(msg, ml, __VA_ARGS__);            \
        goto out;                                  \
    } while (0)

/* ---- AllReduce sweep in every process ----------------------------------- */
typedef struct {
    const char *link;   /* expected substring of the rank -> rank + 1 transport */
    int full;           /* every type on every size; otherwise a few */
    int emulate;        /* > 0: TOPOTUNE_GPU_EMULATE_HOSTS; every pair is checked: `link` on one emulated
                         * host, `far` across them */
    const char *far;
} sweep_arg;

static const tt_proto protos[2] = {TT_PROTO_SIMPLE, TT_PROTO_LL};

static int one(tt_gpu_comm *g, int rank, void *sb, void *rb, unsigned char *h, unsigned char *want, size_t cap,
               size_t count, tt_dtype t, tt_redop op, tt_algo algo, tt_proto proto, int inplace, char *msg, size_t ml)
{
    size_t es = tt_dtype_size(t);
    int n = tt_gpu_comm_nranks(g);
    uint64_t seed = 77 + count + (uint64_t)t * 5 + (uint64_t)op;
    tt_verify_fill(h, count, t, op, rank, seed, 0);
    if (tt_gpu_memcpy(sb, h, count * es) != TT_OK || tt_gpu_memset(rb, 0xEE, cap) != TT_OK ||
        (inplace && tt_gpu_memcpy(rb, h, count * es) != TT_OK)) {
        snprintf(msg, ml, "rank %d: copy: %s", rank, tt_error_message());
        return -1;
    }
    const void *s[1] = {inplace ? rb : sb};
    void *d[1] = {rb};
    tt_plan p = TT_PLAN_DEFAULT;
    p.algo = algo;
    p.proto = proto;
    p.channels = (count & 1) ? 1 : 2;
    if (tt_gpu_allreduce(g, s, d, count, t, op, &p) != TT_OK || tt_gpu_comm_sync(g) != TT_OK) {
        snprintf(msg, ml, "rank %d: AllReduce count %zu %s %s %s/%s: %s", rank, count, tt_dtype_name(t),
                 tt_redop_name(op), tt_algo_label(algo), tt_proto_name(proto), tt_error_message());
        return -1;
    }
    tt_verify_expected(want, count, t, op, n, seed, 0);
    if (tt_gpu_memcpy(h, rb, count * es + 8) != TT_OK) {
        snprintf(msg, ml, "rank %d: copy back: %s", rank, tt_error_message());
        return -1;
    }
    size_t bad = tt_verify_count_wrong(h, want, count, t);
    for (int k = 0; k < 8; k++) bad += h[count * es + k] != 0xEE; /* nothing written past the end */
    if (bad)
        snprintf(msg, ml, "rank %d: %zu wrong (count %zu %s %s %s/%s inplace %d)", rank, bad, count,
                 tt_dtype_name(t), tt_redop_name(op), tt_algo_label(algo), tt_proto_name(proto), inplace);
    return (int)bad;
}

/* a sweep child's tear-down: its two device buffers, the communicator, the two host buffers */
static void sweep_free(tt_gpu_comm *g, int rank, void *sb, void *rb, unsigned char *h, unsigned char *want)
{
    if (g) {
        tt_gpu_free(g, rank, sb);
        tt_gpu_free(g, rank, rb);
        tt_gpu_comm_destroy(g);
    }
    free(h);
    free(want);
}

static int sweep_child(int rank, tt_comm *hc, const void *argp, char *msg, size_t ml)
{
    const sweep_arg *a = argp;
    tt_gpu_comm *g = NULL;
    void *sb = NULL, *rb = NULL;
    const size_t sizes[] = {0, 1, 13, 1000, 4099, 70001};
    const size_t cap = 70001 * 8 + 64;
    unsigned char *h = malloc(cap), *want = malloc(cap);
    int rc = 1, runs = 0;
    if (tt_gpu_comm_init_procs(&g, hc, -1) != TT_OK) CFAIL("rank %d: init: %s", rank, tt_error_message());
    if (tt_gpu_comm_nlocal(g) != 1 || tt_gpu_comm_local_rank(g, 0) != rank)
        CFAIL("rank %d: local ranks %d / %d", rank, tt_gpu_comm_nlocal(g), tt_gpu_comm_local_rank(g, 0));
    int n = tt_gpu_comm_nranks(g);
    if (!a->emulate && !strstr(tt_gpu_comm_link(g, rank, (rank + 1) % n), a->link))
        CFAIL("rank %d: link to %d is '%s', expected '%s'", rank, (rank + 1) % n,
              tt_gpu_comm_link(g, rank, (rank + 1) % n), a->link);
    for (int b = 0; a->emulate && b < n; b++) {
        /* mixed: IPC inside an emulated host (rank r on r * K / n), net between them */
        const char *exp = rank * a->emulate / n == b * a->emulate / n ? a->link : a->far;
        if (b != rank && (!strstr(tt_gpu_comm_link(g, rank, b), exp) ||
                          (exp == a->link && strstr(tt_gpu_comm_link(g, rank, b), "NET"))))
            CFAIL("rank %d: link to %d is '%s', expected '%s'", rank, b, tt_gpu_comm_link(g, rank, b), exp);
    }
    if (tt_gpu_alloc(g, rank, cap, &sb) != TT_OK || tt_gpu_alloc(g, rank, cap, &rb) != TT_OK)
        CFAIL("rank %d: alloc: %s", rank, tt_error_message());
    /* another process's rank is not ours to allocate for */
    void *x;
    if (tt_gpu_alloc(g, (rank + 1) % n, 64, &x) != TT_ERR_INVALID) CFAIL("rank %d: alloc for a peer accepted", rank);
    for (int algo = 0; algo < 2; algo++)
        for (int pi = 0; pi < 2; pi++)
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
                for (int t = 0; t < TT_NDTYPES; t++) {
                    if (!a->full && t != TT_FLOAT && t != TT_HALF && t != TT_INT64) continue;
                    int b = one(g, rank, sb, rb, h, want, cap, sizes[si], (tt_dtype)t, TT_SUM, (tt_algo)algo,
                                protos[pi], (int)((si + t) & 1), msg, ml);
                    runs++;
                    if (b) goto out;
                }
    /* every op on a few types */
    const tt_dtype ts[] = {TT_INT8, TT_UINT32, TT_BFLOAT16, TT_DOUBLE};
    for (int algo = 0; algo < 2; algo++)
        for (int pi = 0; pi < 2; pi++)
            for (size_t ti = 0; ti < sizeof ts / sizeof *ts; ti++)
                for (int op = 0; op < TT_NREDOPS; op++) {
                    if (!a->full && ti > 1) continue;
                    int b = one(g, rank, sb, rb, h, want, cap, 3001, ts[ti], (tt_redop)op, (tt_algo)algo,
                                protos[pi], op & 1, msg, ml);
                    runs++;
                    if (b) goto out;
                }
    snprintf(msg, ml, "%d AllReduce runs exact, link %d -> %d: %s, %d -> %d: %s, channels up to %d, virtual %d",
             runs, rank, (rank + 1) % n, tt_gpu_comm_link(g, rank, (rank + 1) % n), rank, (rank + n - 1) % n,
             tt_gpu_comm_link(g, rank, (rank + n - 1) % n), tt_gpu_comm_max_channels(g), tt_gpu_comm_is_virtual(g));
    rc = 0;
out:
    sweep_free(g, rank, sb, rb, h, want);
    return rc;
}

static void expect_all_ok(int n, const results *r)
{
    for (int k = 0; k < n; k++)
        if (r->rc[k] != 0) fail_msg("rank %d exited %d: %s", k, r->rc[k], r->msg[k]);
}

static const char *ipc_link(void) { return g_ngpu == 1 ? "IPC (same GPU)" : "IPC"; }

static void test_ipc_2_procs(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    sweep_arg a = {ipc_link(), !quick(), 0, NULL};
    results r;
    run_procs(2, sweep_child, &a, 240, &r);
    expect_all_ok(2, &r);
}

static void test_ipc_3_procs(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    sweep_arg a = {ipc_link(), !quick(), 0, NULL};
    results r;
    run_procs(3, sweep_child, &a, 240, &r);
    expect_all_ok(3, &r);
}

static void test_host_staged_shm_3_procs(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    setenv("TOPOTUNE_GPU_TRANSPORT", "host", 1);
    sweep_arg a = {"host-staged (shm)", 0, 0, NULL};
    results r;
    run_procs(3, sweep_child, &a, 240, &r);
    unsetenv("TOPOTUNE_GPU_TRANSPORT");
    expect_all_ok(3, &r);
}

/* ---- net transport: processes forced apart on one GPU, TCP over loopback ---- */
/* net and mixed runs: VAR=VALUE (VALUE NULL: unset) and the proxies' host connections on TCP, as
 * between hosts (not shared memory) */
static void proxy_env(const char *var, const char *value)
{
    if (value) {
        setenv(var, value, 1);
        setenv("TOPOTUNE_TRANSPORT", "tcp", 1);
    } else {
        unsetenv(var);
        unsetenv("TOPOTUNE_TRANSPORT");
    }
}
#define net_env(on) proxy_env("TOPOTUNE_GPU_TRANSPORT", (on) ? "net" : NULL)
#define mixed_env(on) proxy_env("TOPOTUNE_GPU_EMULATE_HOSTS", (on) ? "2" : NULL)

static void test_net_2_procs(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    net_env(1);
    sweep_arg a = {"NET/tcp", !quick(), 0, NULL};
    results r;
    run_procs(2, sweep_child, &a, 240, &r);
    net_env(0);
    expect_all_ok(2, &r);
}

static void test_net_3_procs(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    net_env(1);
    sweep_arg a = {"NET/tcp", 0, 0, NULL};
    results r;
    run_procs(3, sweep_child, &a, 240, &r);
    net_env(0);
    expect_all_ok(3, &r);
}

/* ---- mixed: 4 processes on 2 emulated hosts, IPC inside each, net between ---- */
static void test_mixed_4_procs_2_hosts(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    mixed_env(1);
    sweep_arg a = {ipc_link(), 0, 2, "NET/tcp"};
    results r;
    run_procs(4, sweep_child, &a, 240, &r);
    mixed_env(0);
    expect_all_ok(4, &r);
}

/* ---- hierarchical AllReduce: 4 processes on 2 emulated hosts ------------------
 * intra-host ReduceScatter (IPC), inter-host AllReduce of each shard (net), intra-host AllGather;
 * the inter-host phase ring and tree, simple and ll, odd counts (a tail), every op incl. avg */
static int hier_child(int rank, tt_comm *hc, const void *argp, char *msg, size_t ml)
{
    (void)argp;
    tt_gpu_comm *g = NULL;
    void *sb = NULL, *rb = NULL;
    const size_t sizes[] = {0, 1, 13, 1000, 4099, 70001};
    const size_t cap = 70001 * 8 + 64;
    unsigned char *h = malloc(cap), *want = malloc(cap);
    int rc = 1, runs = 0;
    if (tt_gpu_comm_init_procs(&g, hc, -1) != TT_OK) CFAIL("rank %d: init: %s", rank, tt_error_message());
    tt_plan hp = TT_PLAN_DEFAULT, eff;
    hp.algo = TT_ALGO_HIER;
    if (tt_gpu_comm_resolve_plan(g, TT_COLL_ALLREDUCE, 1 << 20, TT_FLOAT, &hp, &eff) != TT_OK ||
        eff.algo != TT_ALGO_HIER)
        CFAIL("rank %d: resolve of hierarchical: %s (algo %s)", rank, tt_error_message(), tt_algo_label(eff.algo));
    if (tt_gpu_comm_resolve_plan(g, TT_COLL_ALLGATHER, 1 << 20, TT_FLOAT, &hp, &eff) != TT_ERR_UNSUPPORTED)
        CFAIL("rank %d: hierarchical AllGather was not refused", rank);
    if (tt_gpu_comm_set_hier_algo(g, TT_ALGO_NVLS) != TT_ERR_UNSUPPORTED)
        CFAIL("rank %d: inter-host algorithm nvls was not refused", rank);
    if (tt_gpu_alloc(g, rank, cap, &sb) != TT_OK || tt_gpu_alloc(g, rank, cap, &rb) != TT_OK)
        CFAIL("rank %d: alloc: %s", rank, tt_error_message());
    const tt_algo inner[2] = {TT_ALGO_RING, TT_ALGO_TREE};
    for (int ai = 0; ai < 2; ai++) {
        if (tt_gpu_comm_set_hier_algo(g, inner[ai]) != TT_OK) CFAIL("rank %d: set_hier_algo: %s", rank, tt_error_message());
        for (int pi = 0; pi < 2; pi++) {
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
                for (int t = 0; t < TT_NDTYPES; t++) {
                    if (t != TT_FLOAT && t != TT_HALF && t != TT_INT64 && t != TT_BFLOAT16) continue;
                    int b = one(g, rank, sb, rb, h, want, cap, sizes[si], (tt_dtype)t, TT_SUM, TT_ALGO_HIER,
                                protos[pi], (int)((si + t) & 1), msg, ml);
                    runs++;
                    if (b) {
                        size_t l = strlen(msg);
                        snprintf(msg + l, ml - l, " [inter-host %s]", tt_algo_label(inner[ai]));
                        goto out;
                    }
                }
            const tt_dtype ts[] = {TT_INT8, TT_UINT32, TT_BFLOAT16, TT_DOUBLE};
            for (size_t ti = 0; ti < sizeof ts / sizeof *ts; ti++)
                for (int op = 0; op < TT_NREDOPS; op++) {
                    int b = one(g, rank, sb, rb, h, want, cap, 3001, ts[ti], (tt_redop)op, TT_ALGO_HIER, protos[pi],
                                op & 1, msg, ml);
                    runs++;
                    if (b) {
                        size_t l = strlen(msg);
                        snprintf(msg + l, ml - l, " [inter-host %s]", tt_algo_label(inner[ai]));
                        goto out;
                    }
                }
        }
    }
    /* a flat call after hierarchical ones on the same buffers stays ordered (and exact) */
    if (one(g, rank, sb, rb, h, want, cap, 4099, TT_FLOAT, TT_SUM, TT_ALGO_RING, TT_PROTO_SIMPLE, 0, msg, ml)) goto out;
    snprintf(msg, ml, "%d hierarchical AllReduce runs exact (inter-host ring and tree, simple and ll), then a flat one",
             runs);
    rc = 0;
out:
    sweep_free(g, rank, sb, rb, h, want);
    return rc;
}

static void test_hier_4_procs_2_hosts(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    mixed_env(1);
    results r;
    run_procs(4, hier_child, NULL, 300, &r);
    mixed_env(0);
    expect_all_ok(4, &r);
}

/* ---- failures ------------------------------------------------------------ */
#define KILL_TIMEOUT_MS 3000

/* rank 1 dies (SIGKILL) after one good AllReduce; rank 0 must fail within its
 * deadline, naming rank 1 */
static int killed_child(int rank, tt_comm *hc, const void *argp, char *msg, size_t ml)
{
    const tt_plan *plan = argp; /* NULL: default; hierarchical: its sub-communicators must name it too */
    const int victim = 1;
    tt_gpu_comm *g = NULL;
    void *b = NULL;
    int rc = 1;
    if (tt_gpu_comm_init_procs(&g, hc, -1) != TT_OK) CFAIL("rank %d: init: %s", rank, tt_error_message());
    tt_gpu_comm_set_timeout(g, KILL_TIMEOUT_MS);
    if (tt_gpu_alloc(g, rank, 1 << 20, &b) != TT_OK) CFAIL("alloc: %s", tt_error_message());
    const void *s[1] = {b};
    void *d[1] = {b};
    if (tt_gpu_memset(b, 0, 1 << 20) != TT_OK || tt_gpu_allreduce(g, s, d, 1 << 18, TT_FLOAT, TT_SUM, plan) != TT_OK ||
        tt_gpu_comm_sync(g) != TT_OK)
        CFAIL("rank %d: first AllReduce: %s", rank, tt_error_message());
    /* both have finished the first one before rank 1 dies */
    int one = 1, sum = 0;
    if (tt_allreduce(&one, &sum, 1, TT_INT32, TT_SUM, hc) != TT_OK || tt_comm_wait(hc) != TT_OK)
        CFAIL("rank %d: barrier: %s", rank, tt_error_message());
    if (rank == victim) raise(SIGKILL);
    usleep(200 * 1000); /* rank 1 is gone (and reaped) before the collective starts */
    double t0 = now_s();
    tt_status st = tt_gpu_allreduce(g, s, d, 1 << 18, TT_FLOAT, TT_SUM, plan);
    if (st == TT_OK) st = tt_gpu_comm_sync(g);
    /* hierarchical: a survivor whose groups do not contain the victim may finish this call before the
     * abort reaches it (its phases need no byte of rank 1); the next call must fail */
    for (int k = 0; plan && st == TT_OK && k < 3; k++) {
        st = tt_gpu_allreduce(g, s, d, 1 << 18, TT_FLOAT, TT_SUM, plan);
        if (st == TT_OK) st = tt_gpu_comm_sync(g);
    }
    double el = now_s() - t0;
    /* every survivor (all the others: the same host's over IPC, the other host's over net) names it */
    if (st == TT_OK) CFAIL("rank %d: AllReduce with a dead peer succeeded", rank);
    if (!strstr(tt_error_message(), "rank 1 "))
        CFAIL("rank %d: the failure does not name rank 1: %s", rank, tt_error_message());
    if (el > KILL_TIMEOUT_MS / 1000.0 + 5) CFAIL("rank %d: failed only after %.1f s: %s", rank, el, tt_error_message());
    snprintf(msg, ml, "failed after %.2f s (deadline %d ms): %s", el, KILL_TIMEOUT_MS, tt_error_message());
    rc = 0;
out:
    if (g) {
        tt_gpu_free(g, rank, b);
        tt_gpu_comm_destroy(g);
    }
    return rc;
}

/* net: 0 IPC, 1 net (2 processes); 2 mixed (4 processes on 2 emulated hosts: rank 1 dies, rank 0 is
 * its IPC peer, ranks 2 and 3 reach it over net) */
static void killed_peer_plan(int net, const tt_plan *plan)
{
    char old[32] = "";
    if (getenv("TOPOTUNE_TIMEOUT_MS")) snprintf(old, sizeof old, "%s", getenv("TOPOTUNE_TIMEOUT_MS"));
    setenv("TOPOTUNE_TIMEOUT_MS", "5000", 1); /* host communicator: setup and tear-down with a dead peer */
    results r;
    int np = net == 2 ? 4 : 2;
    if (net == 2) mixed_env(1);
    else net_env(net);
    run_procs(np, killed_child, plan, 60, &r);
    mixed_env(0);
    net_env(0);
    if (old[0]) setenv("TOPOTUNE_TIMEOUT_MS", old, 1);
    else unsetenv("TOPOTUNE_TIMEOUT_MS");
    assert_int_equal(r.rc[1], 128 + SIGKILL);
    for (int k = 0; k < np; k++)
        if (k != 1 && r.rc[k] != 0) fail_msg("survivor rank %d: exit %d: %s", k, r.rc[k], r.msg[k]);
}

static void killed_peer(int net) { killed_peer_plan(net, NULL); }

static void test_killed_peer_process(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    killed_peer(0);
}

/* over the net transport the survivor's proxy sees the connection close */
static void test_net_killed_peer_process(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    killed_peer(1);
}

/* mixed: the killed rank's IPC peer and its net peers all name it */
static void test_mixed_killed_peer_process(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    killed_peer(2);
}

/* hierarchical, 4 processes on 2 emulated hosts: rank 1 dies; rank 0 (its intra-host peer), rank 3
 * (its inter-host peer) and rank 2 (in neither of its groups) all name it */
static void test_hier_killed_peer_process(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    tt_plan p = TT_PLAN_DEFAULT;
    p.algo = TT_ALGO_HIER;
    killed_peer_plan(2, &p);
}

/* rank 2 never enters (testing aid); rank 0 has a 1 s deadline, rank 1 a 60 s
 * one: rank 1 must be stopped by rank 0's abort (shared word) long before
 * its own deadline, and say why */
typedef struct {
    tt_proto proto;
    int algo;  /* TT_ALGO_RING, or TT_ALGO_HIER (4 processes on 2 emulated hosts) */
    int stall; /* the stalled rank (TOPOTUNE_GPU_TEST_STALL_RANK) */
} stuck_arg;

static int stuck_child(int rank, tt_comm *hc, const void *argp, char *msg, size_t ml)
{
    const stuck_arg *sa = argp;
    tt_gpu_comm *g = NULL;
    void *b = NULL;
    int rc = 1;
    if (tt_gpu_comm_init_procs(&g, hc, -1) != TT_OK) CFAIL("rank %d: init: %s", rank, tt_error_message());
    tt_gpu_comm_set_timeout(g, rank == 0 ? 1000 : 60000);
    if (tt_gpu_alloc(g, rank, 1 << 20, &b) != TT_OK) CFAIL("alloc: %s", tt_error_message());
    const void *s[1] = {b};
    void *d[1] = {b};
    tt_plan p = TT_PLAN_DEFAULT;
    p.algo = (tt_algo)sa->algo;
    p.proto = sa->proto;
    double t0 = now_s();
    tt_status st = tt_gpu_memset(b, 0, 1 << 20);
    if (st == TT_OK) st = tt_gpu_allreduce(g, s, d, 100000, TT_FLOAT, TT_SUM, &p);
    if (st == TT_OK) st = tt_gpu_comm_sync(g);
    double el = now_s() - t0;
    if (rank == sa->stall) { /* the stalled rank's own kernel left at once; nothing to check but no hang */
        snprintf(msg, ml, "stalled rank: %s", st == TT_OK ? "ok" : tt_error_message());
        rc = 0;
        goto out;
    }
    if (st != TT_ERR_TIMEOUT) CFAIL("rank %d: status %d, expected a timeout: %s", rank, (int)st, tt_error_message());
    if (el > 20) CFAIL("rank %d: stopped only after %.1f s: %s", rank, el, tt_error_message());
    if (rank == 0 && !strstr(tt_error_message(), "timed out after 1000 ms"))
        CFAIL("rank 0: %s", tt_error_message());
    if (rank != 0 && (!strstr(tt_error_message(), "rank 0") || !strstr(tt_error_message(), "stopped")))
        CFAIL("rank %d: the message does not say rank 0 stopped it: %s", rank, tt_error_message());
    /* sticky */
    if (tt_gpu_allreduce(g, s, d, 100000, TT_FLOAT, TT_SUM, &p) != TT_ERR_TIMEOUT)
        CFAIL("rank %d: failure not sticky", rank);
    snprintf(msg, ml, "after %.2f s: %s", el, tt_error_message());
    rc = 0;
out:
    if (g) {
        tt_gpu_free(g, rank, b);
        tt_gpu_comm_destroy(g);
    }
    return rc;
}

/* net: 0 IPC, 1 net, 2 mixed (2 emulated hosts: ranks 0 and 1 share one, so rank 0's abort reaches
 * its IPC peer rank 1 through the proxies too: no word is shared in a mixed communicator) */
static void stuck_rank_plan(int net, int algo)
{
    /* hierarchical: 4 processes, rank 2 (host 1, local index 0) stalls, so rank 3 waits for it in the
     * intra-host phase, rank 0 in the inter-host one, and rank 1 in the inter-host one for rank 3:
     * rank 0's deadline must stop all three, whichever sub-communicator each is waiting in */
    int np = algo == TT_ALGO_HIER ? 4 : 3;
    for (int pi = 0; pi < 2; pi++) {
        if (net == 2) mixed_env(1);
        else net_env(net);
        stuck_arg sa = {protos[pi], algo, 2};
        setenv("TOPOTUNE_GPU_TEST_STALL_RANK", "2", 1);
        setenv("TOPOTUNE_TIMEOUT_MS", "10000", 1);
        results r;
        run_procs(np, stuck_child, &sa, 90, &r);
        unsetenv("TOPOTUNE_GPU_TEST_STALL_RANK");
        unsetenv("TOPOTUNE_TIMEOUT_MS");
        mixed_env(0);
        net_env(0);
        expect_all_ok(np, &r);
        for (int k = 1; k < np; k++)
            if (k != sa.stall) assert_true(r.secs[k] < 30);
    }
}

static void stuck_rank(int net) { stuck_rank_plan(net, TT_ALGO_RING); }

static void test_stuck_rank_stops_every_process(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    stuck_rank(0);
}

/* over the net transport rank 0's abort reaches the others through the proxies */
static void test_net_stuck_rank_stops_every_process(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    stuck_rank(1);
}

static void test_mixed_stuck_rank_stops_every_process(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    stuck_rank(2);
}

/* hierarchical, 4 processes on 2 emulated hosts: a stalled rank stops every other within the first
 * deadline, through the linked aborts of the sub-communicators and the parent's proxies */
static void test_hier_stuck_rank_stops_every_process(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    stuck_rank_plan(2, TT_ALGO_HIER);
}

/* A setup error in one process fails every process at the same point, naming
 * the rank (nobody waits for a peer that gave up): rank 1 has a bad
 * TOPOTUNE_GPU_TRANSPORT, then rank 0 asks for a device that does not exist. */
static int setup_fail_child(int rank, tt_comm *hc, const void *argp, char *msg, size_t ml)
{
    int which = *(const int *)argp;
    if (which == 0 && rank == 1) setenv("TOPOTUNE_GPU_TRANSPORT", "bogus", 1);
    tt_gpu_comm *g = (tt_gpu_comm *)1;
    double t0 = now_s();
    tt_status st = tt_gpu_comm_init_procs(&g, hc, which == 1 && rank == 0 ? 99 : -1);
    double el = now_s() - t0;
    const char *want1 = which == 0 ? "rank 1" : "rank 0", *want2 = which == 0 ? "TOPOTUNE_GPU_TRANSPORT" : "device 99";
    if (st != TT_ERR_INVALID || g != NULL || !strstr(tt_error_message(), want1) || !strstr(tt_error_message(), want2) ||
        el > 10) {
        snprintf(msg, ml, "rank %d: status %d after %.1f s (want %d naming '%s' and '%s'): %s", rank, (int)st, el,
                 (int)TT_ERR_INVALID, want1, want2, tt_error_message());
        if (g && g != (tt_gpu_comm *)1) tt_gpu_comm_destroy(g);
        return 1;
    }
    snprintf(msg, ml, "after %.2f s: %s", el, tt_error_message());
    return 0;
}

static void test_setup_error_fails_every_process(void **state)
{
    (void)state;
    if (!need_gpu()) return;
    for (int which = 0; which < 2; which++) {
        results r;
        run_procs(2, setup_fail_child, &which, 60, &r);
        expect_all_ok(2, &r);
    }
}

/* Without a GPU (or CUDA) the process API fails clearly, collectively, at once. */
static int nogpu_child(int rank, tt_comm *hc, const void *argp, char *msg, size_t ml)
{
    (void)argp;
    tt_gpu_comm *g = (tt_gpu_comm *)1;
    tt_status st = tt_gpu_comm_init_procs(&g, hc, -1);
    if (st != TT_ERR_UNSUPPORTED || g != NULL || !strstr(tt_error_message(), "GPU")) {
        snprintf(msg, ml, "rank %d: status %d: %s", rank, (int)st, tt_error_message());
        return 1;
    }
    snprintf(msg, ml, "%s", tt_error_message());
    return 0;
}

static void test_no_gpu_is_a_clear_error(void **state)
{
    (void)state;
    if (g_ngpu > 0) {
        printf("# (a GPU is present: the no-GPU error path is not reachable here)\n");
        return;
    }
    results r;
    run_procs(2, nogpu_child, NULL, 60, &r);
    expect_all_ok(2, &r);
}

static void test_null_host_comm(void **state)
{
    (void)state;
    /* no CUDA call is reached: checked before anything else */
    tt_gpu_comm *g = (tt_gpu_comm *)1;
    assert_int_not_equal(tt_gpu_comm_init_procs(&g, NULL, -1), TT_OK);
    assert_null(g);
}

/* The GPU probe runs in a child: CUDA must stay uninitialised here for fork(). */
static void probe_gpu(void)
{
    int p[2];
    if (pipe(p) != 0) return;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        char why[256];
        int n = tt_gpu_available(why, sizeof why);
        char buf[300];
        int len = snprintf(buf, sizeof buf, "%d %s", n, why);
        if (write(p[1], buf, (size_t)len + 1) < 0) _exit(1);
        _exit(0);
    }
    close(p[1]);
    char buf[300] = "";
    ssize_t k = read(p[0], buf, sizeof buf - 1);
    buf[k > 0 ? k : 0] = '\0';
    close(p[0]);
    waitpid(pid, NULL, 0);
    char *sp = strchr(buf, ' ');
    g_ngpu = atoi(buf);
    snprintf(g_why, sizeof g_why, "%s", sp ? sp + 1 : "GPU probe failed");
}

int main(void)
{
    probe_gpu();
    printf("# GPU: %s\n", g_why);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_host_comm),
        cmocka_unit_test(test_no_gpu_is_a_clear_error),
        cmocka_unit_test(test_ipc_2_procs),
        cmocka_unit_test(test_ipc_3_procs),
        cmocka_unit_test(test_host_staged_shm_3_procs),
        cmocka_unit_test(test_setup_error_fails_every_process),
        cmocka_unit_test(test_killed_peer_process),
        cmocka_unit_test(test_stuck_rank_stops_every_process),
        cmocka_unit_test(test_net_2_procs),
        cmocka_unit_test(test_net_3_procs),
        cmocka_unit_test(test_net_killed_peer_process),
        cmocka_unit_test(test_net_stuck_rank_stops_every_process),
        cmocka_unit_test(test_mixed_4_procs_2_hosts),
        cmocka_unit_test(test_mixed_killed_peer_process),
        cmocka_unit_test(test_mixed_stuck_rank_stops_every_process),
        cmocka_unit_test(test_hier_4_procs_2_hosts),
        cmocka_unit_test(test_hier_killed_peer_process),
        cmocka_unit_test(test_hier_stuck_rank_stops_every_process),
    };
    /* TT_GPU_TEST_FILTER=*net*: only those tests; *mixed*: the mixed ones, *hier*: the hierarchical ones
     * (scripts/gpu/gpu-net-check.sh) */
    const char *f = getenv("TT_GPU_TEST_FILTER");
    if (f && *f) cmocka_set_test_filter(f);
    /* TT_GPU_TEST_SKIP=*mixed*: all but those */
    const char *sk = getenv("TT_GPU_TEST_SKIP");
    if (sk && *sk) cmocka_set_skip_filter(sk);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
