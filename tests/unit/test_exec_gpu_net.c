/* test_exec_gpu_net.c - the GPU executor's net transport without a GPU:
 * TOPOTUNE_GPU_TRANSPORT and TOPOTUNE_GPU_EMULATE_HOSTS values and the
 * per-pair rule of process mode, IPC or net (exec_gpu_select.c), and the proxy thread (exec_gpu_proxy.c) with threads
 * playing the kernels' part on the same host-memory layout: Simple and LL
 * steps of every size, both directions, two channels, bytes exact; over the
 * shared-memory transport (thread ranks and forked processes) and TCP (forked processes); an
 * abort raised on one side stops the other; a dead peer is named by the
 * survivor's proxy within the deadline; bytes that are no message are refused.
 * Over IB verbs too (the same data and abort cases), when tests/cli/test_gpu_net_ib.sh
 * runs this program on the fake verbs library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec_gpu_net.h"
#include "exec_internal.h" /* the host communicator's connections (junk test) */
#include "tt_exec.h"

typedef unsigned long long ull;

/* timing bounds scale with TOPOTUNE_TEST_SLOWDOWN (valgrind, sanitizers) */
static double slowdown(void)
{
    const char *s = getenv("TOPOTUNE_TEST_SLOWDOWN");
    double v = s ? atof(s) : 1.0;
    return v >= 1.0 ? v : 1.0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- selection ------------------------------------------------------------ */
static void test_transport_values(void **state)
{
    (void)state;
    int m = -1;
    assert_int_equal(exec_gpu_transport_parse(NULL, &m), TT_OK);
    assert_int_equal(m, GPU_TP_AUTO);
    assert_int_equal(exec_gpu_transport_parse("", &m), TT_OK);
    assert_int_equal(m, GPU_TP_AUTO);
    assert_int_equal(exec_gpu_transport_parse("auto", &m), TT_OK);
    assert_int_equal(m, GPU_TP_AUTO);
    assert_int_equal(exec_gpu_transport_parse("host", &m), TT_OK);
    assert_int_equal(m, GPU_TP_HOST);
    assert_int_equal(exec_gpu_transport_parse("net", &m), TT_OK);
    assert_int_equal(m, GPU_TP_NET);
    assert_int_equal(exec_gpu_transport_parse("NET", &m), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "'NET'"));
    assert_non_null(strstr(tt_error_message(), "auto, host, net"));
}

/* whether any pair of the communicator is net, with the first net pair's reason (why may be NULL);
 * *net = 0 on an error of exec_gpu_pairs_select */
static tt_status any_net(int n, const exec_gpu_where *w, int *net, char *why, size_t whylen)
{
    exec_gpu_pair p[16];
    assert_true(n * n <= 16);
    *net = 0;
    if (why && whylen) why[0] = '\0';
    tt_status st = exec_gpu_pairs_select(n, w, p);
    for (int i = 0; st == TT_OK && i < n * n && !*net; i++)
        if (p[i].net) {
            *net = 1;
            if (why && whylen) snprintf(why, whylen, "%s", p[i].why);
        }
    return st;
}

static void test_selection(void **state)
{
    (void)state;
    char why[256];
    int net = -1;
    exec_gpu_where w[3] = {{GPU_TP_AUTO, "a", "b1", 0}, {GPU_TP_AUTO, "a", "b1", 0}, {GPU_TP_AUTO, "a", "b1", 0}};
    assert_int_equal(any_net(3, w, &net, why, sizeof why), TT_OK);
    assert_int_equal(net, 0);
    assert_string_equal(why, "");
    /* one rank forcing net is enough, and named */
    w[1].mode = GPU_TP_NET;
    assert_int_equal(any_net(3, w, &net, why, sizeof why), TT_OK);
    assert_int_equal(net, 1);
    assert_non_null(strstr(why, "TOPOTUNE_GPU_TRANSPORT=net on rank 1"));
    /* net on one rank, host on another: the ranks disagree */
    w[2].mode = GPU_TP_HOST;
    assert_int_equal(any_net(3, w, &net, why, sizeof why), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "net on rank 1, host on rank 2"));
    /* another host: net in auto mode, with the hosts named */
    w[1].mode = w[2].mode = GPU_TP_AUTO;
    w[2].host = "b";
    assert_int_equal(any_net(3, w, &net, why, sizeof why), TT_OK);
    assert_int_equal(net, 1);
    assert_non_null(strstr(why, "hosts differ: rank 2 runs on 'b', rank 0 on 'a'"));
    /* the same name after a reboot of one machine (another boot id) is another machine */
    w[2].host = "a";
    w[1].boot = "b2";
    assert_int_equal(any_net(3, w, &net, NULL, 0), TT_OK);
    assert_int_equal(net, 1);
    /* host-staged memory cannot cross hosts: refused naming the rank that forces it */
    w[0].mode = GPU_TP_HOST;
    assert_int_equal(any_net(3, w, &net, why, sizeof why), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "rank 0 forces host-staged"));
    assert_int_equal(net, 0);
}

/* TOPOTUNE_GPU_EMULATE_HOSTS: 1..n, anything else refused naming the variable and value */
static void test_emulate_values(void **state)
{
    (void)state;
    int k = -1;
    assert_int_equal(exec_gpu_emulate_parse(NULL, 4, &k), TT_OK);
    assert_int_equal(k, 0);
    assert_int_equal(exec_gpu_emulate_parse("", 4, &k), TT_OK);
    assert_int_equal(k, 0);
    assert_int_equal(exec_gpu_emulate_parse("1", 4, &k), TT_OK);
    assert_int_equal(k, 1);
    assert_int_equal(exec_gpu_emulate_parse("4", 4, &k), TT_OK);
    assert_int_equal(k, 4);
    const char *bad[] = {"0", "5", "-1", "two", "2x", " ", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        k = -1;
        assert_int_equal(exec_gpu_emulate_parse(bad[i], 4, &k), TT_ERR_INVALID);
        assert_int_equal(k, 0);
        assert_non_null(strstr(tt_error_message(), "TOPOTUNE_GPU_EMULATE_HOSTS"));
        assert_non_null(strstr(tt_error_message(), bad[i]));
        assert_non_null(strstr(tt_error_message(), "1..4"));
    }
    /* contiguous blocks: r * k / n */
    int want4_2[] = {0, 0, 1, 1}, want5_2[] = {0, 0, 0, 1, 1}, want3_3[] = {0, 1, 2};
    for (int r = 0; r < 4; r++) assert_int_equal(exec_gpu_emulated_host(r, 4, 2), want4_2[r]);
    for (int r = 0; r < 5; r++) assert_int_equal(exec_gpu_emulated_host(r, 5, 2), want5_2[r]);
    for (int r = 0; r < 3; r++) assert_int_equal(exec_gpu_emulated_host(r, 3, 3), want3_3[r]);
    for (int r = 0; r < 4; r++) assert_int_equal(exec_gpu_emulated_host(r, 4, 0), 0);
}

/* per pair: IPC on one host, net across (real or emulated) hosts, every pair net when forced */
static void test_pairs_selection(void **state)
{
    (void)state;
    enum { N = 4 };
    exec_gpu_pair p[N * N];
    exec_gpu_where w[N];
    for (int r = 0; r < N; r++) w[r] = (exec_gpu_where){GPU_TP_AUTO, "h", "b", 0};
    /* one host: no pair is net */
    assert_int_equal(exec_gpu_pairs_select(N, w, p), TT_OK);
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) {
            assert_int_equal(p[a * N + b].net, 0);
            assert_int_equal(p[a * N + b].apart, 0);
            if (a != b) assert_string_equal(p[a * N + b].why, "same host");
        }
    /* two emulated hosts {0,1} {2,3}: net exactly across them, both directions, reasons name them */
    for (int r = 0; r < N; r++) w[r].emulate = 2;
    assert_int_equal(exec_gpu_pairs_select(N, w, p), TT_OK);
    int nnet = 0;
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) {
            if (a == b) continue;
            int want = (a / 2) != (b / 2);
            assert_int_equal(p[a * N + b].net, want);
            assert_int_equal(p[a * N + b].apart, 0);
            nnet += p[a * N + b].net;
        }
    assert_int_equal(nnet, 8);
    assert_string_equal(p[1 * N + 2].why, "hosts differ: emulated host 1 vs 0 (TOPOTUNE_GPU_EMULATE_HOSTS=2)");
    assert_string_equal(p[2 * N + 1].why, "hosts differ: emulated host 0 vs 1 (TOPOTUNE_GPU_EMULATE_HOSTS=2)");
    assert_string_equal(p[0 * N + 1].why, "same host: emulated host 0 (TOPOTUNE_GPU_EMULATE_HOSTS=2)");
    assert_string_equal(p[3 * N + 2].why, "same host: emulated host 1 (TOPOTUNE_GPU_EMULATE_HOSTS=2)");
    /* the communicator-wide answer agrees: net, with the first net pair's reason */
    int net = -1;
    char why[256];
    assert_int_equal(any_net(N, w, &net, why, sizeof why), TT_OK);
    assert_int_equal(net, 1);
    assert_non_null(strstr(why, "emulated host 1 vs 0"));
    /* one emulated host = one host */
    for (int r = 0; r < N; r++) w[r].emulate = 1;
    assert_int_equal(exec_gpu_pairs_select(N, w, p), TT_OK);
    for (int i = 0; i < N * N; i++) assert_int_equal(p[i].net, 0);
    /* forcing net on any rank: every pair net, even inside an emulated host */
    for (int r = 0; r < N; r++) w[r].emulate = 2;
    w[3].mode = GPU_TP_NET;
    assert_int_equal(exec_gpu_pairs_select(N, w, p), TT_OK);
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++)
            if (a != b) {
                assert_int_equal(p[a * N + b].net, 1);
                assert_string_equal(p[a * N + b].why, "forced by TOPOTUNE_GPU_TRANSPORT=net on rank 3");
            }
    w[3].mode = GPU_TP_AUTO;
    /* real hosts: ranks 2, 3 on another machine; a real difference wins over the emulated one */
    for (int r = 0; r < N; r++) w[r].emulate = 0;
    w[2].host = w[3].host = "g";
    assert_int_equal(exec_gpu_pairs_select(N, w, p), TT_OK);
    assert_int_equal(p[0 * N + 1].net, 0);
    assert_int_equal(p[2 * N + 3].net, 0);
    assert_int_equal(p[1 * N + 2].net, 1);
    assert_int_equal(p[1 * N + 2].apart, 1);
    assert_string_equal(p[1 * N + 2].why, "hosts differ: rank 2 runs on 'g', rank 1 on 'h'");
    assert_string_equal(p[3 * N + 0].why, "hosts differ: rank 0 runs on 'h', rank 3 on 'g'");
    /* the same name with another boot id is another machine */
    w[2].host = w[3].host = "h";
    w[3].boot = "b2";
    assert_int_equal(exec_gpu_pairs_select(N, w, p), TT_OK);
    assert_int_equal(p[2 * N + 3].net, 1);
    assert_int_equal(p[3 * N + 2].apart, 1);
    assert_non_null(strstr(p[2 * N + 3].why, "boot ids"));
    assert_int_equal(p[0 * N + 1].net, 0);
    w[3].boot = "b";
    /* the ranks must agree on the emulation */
    w[2].emulate = 2;
    assert_int_equal(exec_gpu_pairs_select(N, w, p), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "TOPOTUNE_GPU_EMULATE_HOSTS differs between ranks: unset on rank 0, "
                                               "2 on rank 2"));
    for (int r = 0; r < N; r++) w[r].emulate = 2;
    w[1].emulate = 4;
    assert_int_equal(exec_gpu_pairs_select(N, w, p), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "2 on rank 0, 4 on rank 1"));
    /* host-staged shared memory cannot span emulated hosts either */
    w[1].emulate = 2;
    w[2].mode = GPU_TP_HOST;
    assert_int_equal(exec_gpu_pairs_select(N, w, p), TT_ERR_UNSUPPORTED);
    assert_non_null(strstr(tt_error_message(), "rank 2 forces host-staged"));
    assert_non_null(strstr(tt_error_message(), "TOPOTUNE_GPU_EMULATE_HOSTS=2"));
    /* ... but within one emulated host it is still allowed */
    for (int r = 0; r < N; r++) w[r].emulate = 1;
    assert_int_equal(exec_gpu_pairs_select(N, w, p), TT_OK);
    for (int i = 0; i < N * N; i++) assert_int_equal(p[i].net, 0);
    /* one rank: nothing to decide */
    w[0].mode = GPU_TP_AUTO;
    w[0].emulate = 1;
    assert_int_equal(exec_gpu_pairs_select(1, w, p), TT_OK);
    assert_int_equal(p[0].net, 0);
}

/* ---- the proxy with threads as kernels ------------------------------------ */
#define NCH 2
#define STEPS_FULL 240
static ull g_steps = STEPS_FULL; /* fewer under valgrind (TOPOTUNE_TEST_SLOWDOWN) */
#define STEPS g_steps
#define LL_BYTES ((size_t)GPU_LL_SLOT_LINES * 16)
#define BLOCK ((size_t)GPU_SIMPLE_SLOTS * GPU_SIMPLE_SLOT_BYTES + (size_t)GPU_LL_SLOTS * LL_BYTES + 1024)
#define WAIT_S (20.0 * slowdown())


/* step k: protocol and size (bytes for Simple, lines for LL) */
static int step_ll(ull k) { return k % 3 == 2; }
static size_t step_size(ull k)
{
    static const size_t simple[] = {0, 1, 8, 17, 4096, 65537, GPU_SIMPLE_SLOT_BYTES, 1000};
    static const size_t lines[] = {1, 2, 64, GPU_LL_SLOT_LINES, 777};
    return step_ll(k) ? lines[(k / 3) % 5] : simple[k % 8];
}
static unsigned char pat(ull k, size_t j, int c, int s) { return (unsigned char)(k * 131 + j * 7 + c * 17 + s * 29); }
static uint32_t pat32(ull k, size_t l, int half, int c, int s)
{
    return (uint32_t)(k * 2654435761u + l * 40503u + (unsigned)half * 977u + (unsigned)c * 31u + (unsigned)s);
}

typedef struct {
    exec_gpu_netconn *nc;
    int me, bad;
    char what[200];
} kern_arg;

static int wait_ge(volatile ull *p, ull v)
{
    double t0 = now_s();
    while (__atomic_load_n((ull *)p, __ATOMIC_ACQUIRE) < v) {
        if (now_s() - t0 > WAIT_S) return 0;
        sched_yield();
    }
    return 1;
}

static void *fake_sender(void *argp)
{
    kern_arg *a = argp;
    exec_gpu_netconn *c = a->nc;
    for (ull k = 0; k < STEPS; k++) {
        int ll = step_ll(k);
        ull need = k >= (ull)(ll ? GPU_LL_SLOTS : GPU_SIMPLE_SLOTS) ? k - (ll ? GPU_LL_SLOTS : GPU_SIMPLE_SLOTS) + 1 : 0;
        if (!wait_ge(c->tail, need)) {
            snprintf(a->what, sizeof a->what, "rank %d sender ch %d: no credit for step %llu", a->me, c->channel, k);
            a->bad = 1;
            return NULL;
        }
        size_t n = step_size(k), bytes;
        if (ll) {
            uint32_t *w = (uint32_t *)(c->ll + (k % GPU_LL_SLOTS) * LL_BYTES);
            for (size_t l = 0; l < n; l++) {
                w[4 * l] = pat32(k, l, 0, c->channel, a->me);
                w[4 * l + 2] = pat32(k, l, 1, c->channel, a->me);
                __atomic_store_n(&w[4 * l + 1], (uint32_t)(k + 1), __ATOMIC_RELEASE);
                __atomic_store_n(&w[4 * l + 3], (uint32_t)(k + 1), __ATOMIC_RELEASE);
            }
            bytes = n * 16;
        } else {
            unsigned char *d = (unsigned char *)c->simple + (k % GPU_SIMPLE_SLOTS) * GPU_SIMPLE_SLOT_BYTES;
            for (size_t j = 0; j < n; j++) d[j] = pat(k, j, c->channel, a->me);
            bytes = n;
        }
        c->info[k % GPU_NET_INFO_SLOTS] = (ull)bytes | (ull)(ll ? TT_PROTO_LL : TT_PROTO_SIMPLE) << 32;
        __atomic_store_n((ull *)c->head, k + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void *fake_receiver(void *argp)
{
    kern_arg *a = argp;
    exec_gpu_netconn *c = a->nc;
    int from = c->peer;
    for (ull k = 0; k < STEPS; k++) {
        size_t n = step_size(k);
        if (step_ll(k)) {
            /* LL: poll each line's two flags, as the kernel does (no head) */
            const volatile uint32_t *w = (const volatile uint32_t *)(c->ll + (k % GPU_LL_SLOTS) * LL_BYTES);
            double t0 = now_s();
            for (size_t l = 0; l < n; l++) {
                while (w[4 * l + 1] != (uint32_t)(k + 1) || w[4 * l + 3] != (uint32_t)(k + 1)) {
                    if (now_s() - t0 > WAIT_S) {
                        snprintf(a->what, sizeof a->what, "rank %d receiver ch %d: LL step %llu line %zu never came",
                                 a->me, c->channel, k, l);
                        a->bad = 1;
                        return NULL;
                    }
                    sched_yield();
                }
                if (w[4 * l] != pat32(k, l, 0, c->channel, from) || w[4 * l + 2] != pat32(k, l, 1, c->channel, from)) {
                    snprintf(a->what, sizeof a->what, "rank %d ch %d: LL step %llu line %zu wrong", a->me, c->channel,
                             k, l);
                    a->bad = 1;
                    return NULL;
                }
            }
        } else {
            if (!wait_ge(c->head, k + 1)) {
                snprintf(a->what, sizeof a->what, "rank %d receiver ch %d: no data for step %llu", a->me, c->channel, k);
                a->bad = 1;
                return NULL;
            }
            const unsigned char *d = (const unsigned char *)c->simple + (k % GPU_SIMPLE_SLOTS) * GPU_SIMPLE_SLOT_BYTES;
            for (size_t j = 0; j < n; j++)
                if (d[j] != pat(k, j, c->channel, from)) {
                    snprintf(a->what, sizeof a->what, "rank %d ch %d: step %llu byte %zu is %u, want %u", a->me,
                             c->channel, k, j, d[j], pat(k, j, c->channel, from));
                    a->bad = 1;
                    return NULL;
                }
        }
        __atomic_store_n((ull *)c->tail, k + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* One side (rank) of a 2-rank ring: a send and a receive connection per channel. */
typedef struct {
    tt_comm *comm;
    int rank;
    /* both sides reach it before their proxies stop (the GPU communicator's
     * destroy has the host communicator's barrier there) */
    void (*barrier)(void *);
    void *barrier_arg;
    int bad;
    char what[256];
    ull sent, received;
} side_arg;

static void *run_side(void *argp)
{
    side_arg *s = argp;
    int me = s->rank, peer = 1 - me;
    exec_gpu_netconn nc[2 * NCH];
    char *mem = calloc(2 * NCH, BLOCK);
    static __thread int ctrl[64];
    gpu_err err;
    memset(&err, 0, sizeof err);
    memset(ctrl, 0, sizeof ctrl);
    memset(nc, 0, sizeof nc);
    for (int i = 0; i < 2 * NCH; i++) {
        char *b = mem + (size_t)i * BLOCK;
        nc[i].peer = peer;
        nc[i].is_send = i < NCH;
        nc[i].role = GPU_CONN_RING;
        nc[i].channel = i % NCH;
        nc[i].simple = b;
        nc[i].ll = b + (size_t)GPU_SIMPLE_SLOTS * GPU_SIMPLE_SLOT_BYTES;
        nc[i].head = (volatile ull *)(nc[i].ll + (size_t)GPU_LL_SLOTS * LL_BYTES);
        nc[i].tail = nc[i].head + 32;
        nc[i].info = nc[i].is_send ? nc[i].head + 64 : NULL;
    }
    exec_gpu_proxy *p = NULL;
    if (exec_gpu_proxy_start(&p, s->comm, nc, 2 * NCH, ctrl, &err, 10000) != TT_OK) {
        snprintf(s->what, sizeof s->what, "rank %d: proxy: %s", me, tt_error_message());
        s->bad = 1;
        free(mem);
        return NULL;
    }
    pthread_t th[2 * NCH];
    kern_arg ka[2 * NCH];
    for (int i = 0; i < 2 * NCH; i++) {
        memset(&ka[i], 0, sizeof ka[i]);
        ka[i].nc = &nc[i];
        ka[i].me = me;
        pthread_create(&th[i], NULL, nc[i].is_send ? fake_sender : fake_receiver, &ka[i]);
    }
    for (int i = 0; i < 2 * NCH; i++) {
        pthread_join(th[i], NULL);
        if (ka[i].bad && !s->bad) {
            s->bad = 1;
            snprintf(s->what, sizeof s->what, "%s", ka[i].what);
        }
    }
    /* credits flowed: a sender passes step k only with the credit of step k - slots */
    s->barrier(s->barrier_arg);
    if (!s->bad && ctrl[0]) {
        s->bad = 1;
        snprintf(s->what, sizeof s->what, "rank %d: abort word raised (what %d, peer %d)", me, err.what, err.peer);
    }
    exec_gpu_proxy_bytes(p, &s->sent, &s->received);
    exec_gpu_proxy_stop(p);
    free(mem);
    return NULL;
}

static void thread_barrier(void *a) { pthread_barrier_wait(a); }

/* processes: pipes made by the parent before fork; each side writes one byte
 * to the other's pipe and reads one from its own (bounded by a poll) */
static int g_bar[2][2];
static int g_rank;
static void pipe_barrier(void *a)
{
    (void)a;
    char b = 1;
    if (write(g_bar[1 - g_rank][1], &b, 1) != 1) return;
    struct pollfd pf = {g_bar[g_rank][0], POLLIN, 0};
    if (poll(&pf, 1, 30000) == 1 && read(g_bar[g_rank][0], &b, 1) == 1) return;
}

static ull expected_bytes(void)
{
    ull b = 0;
    for (ull k = 0; k < STEPS; k++) b += step_ll(k) ? step_size(k) * 16 : step_size(k);
    return b * NCH;
}

static void test_proxy_threads_shm(void **state)
{
    (void)state;
    tt_comm *c[2];
    assert_int_equal(tt_comm_init_threads(2, c), TT_OK);
    side_arg s[2];
    pthread_t th[2];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 2);
    for (int r = 0; r < 2; r++) {
        memset(&s[r], 0, sizeof s[r]);
        s[r].comm = c[r];
        s[r].rank = r;
        s[r].barrier = thread_barrier;
        s[r].barrier_arg = &bar;
        pthread_create(&th[r], NULL, run_side, &s[r]);
    }
    for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < 2; r++) {
        if (s[r].bad) fail_msg("%s", s[r].what);
        assert_int_equal(s[r].sent, expected_bytes());
        assert_int_equal(s[r].received, expected_bytes());
    }
    pthread_barrier_destroy(&bar);
    printf("# shm: %llu payload bytes each way, exact\n", s[0].sent);
    for (int r = 0; r < 2; r++) tt_comm_destroy(c[r]);
}

/* ---- processes over TCP ----------------------------------------------------- */
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

typedef int (*child_fn)(tt_comm *c, int rank, char *msg, size_t ml);

/* the host transport of run_pair's communicator: tcp, or ib on the fake verbs library */
static const char *g_transport = "tcp";

/* The IB verbs cases run only where tests/cli/test_gpu_net_ib.sh started this program on the fake
 * libibverbs (tests/fixtures/stubs/fake_ibverbs_rdma.c, LD_LIBRARY_PATH, TT_NET_TEST_IB=1); a skip
 * elsewhere (the library is found at start-up, so this process cannot switch to it itself). */
static int want_ib(void)
{
    if (getenv("TT_NET_TEST_IB")) return 1;
    printf("# SKIP IB verbs under the proxy: run by tests/cli/test_gpu_net_ib.sh on the fake verbs library\n");
    skip();
    return 0;
}

/* Two processes on a TCP communicator; each runs fn; returns their exit codes
 * (or -1 when killed at the deadline) and messages. */
static void run_pair(child_fn fn, int deadline_s, int rc[2], char msg[2][512])
{
    char addr[64];
    tt_unique_id id;
    snprintf(addr, sizeof addr, "127.0.0.1:%d", free_port());
    assert_int_equal(tt_unique_id_from_addr(&id, addr), TT_OK);
    setenv("TOPOTUNE_TRANSPORT", g_transport, 1);
    pid_t pid[2];
    int fd[2];
    for (int r = 0; r < 2; r++) assert_int_equal(pipe(g_bar[r]), 0);
    fflush(stdout);
    for (int r = 0; r < 2; r++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        pid[r] = fork();
        assert_true(pid[r] >= 0);
        if (pid[r] == 0) {
            close(p[0]);
            g_rank = r;
            char m[512] = "";
            tt_comm *c = NULL;
            int code;
            if (tt_comm_init_rank(&c, 2, &id, r) != TT_OK) {
                snprintf(m, sizeof m, "rank %d: host communicator: %s", r, tt_error_message());
                code = 2;
            } else {
                code = fn(c, r, m, sizeof m);
            }
            if (write(p[1], m, strlen(m) + 1) < 0) code = 3;
            _exit(code); /* the communicator dies with the process */
        }
        close(p[1]);
        fd[r] = p[0];
    }
    for (int r = 0; r < 2; r++) {
        close(g_bar[r][0]);
        close(g_bar[r][1]);
    }
    unsetenv("TOPOTUNE_TRANSPORT");
    double t0 = now_s();
    int done[2] = {0, 0};
    while (!done[0] || !done[1]) {
        for (int r = 0; r < 2; r++) {
            int stt;
            if (!done[r] && waitpid(pid[r], &stt, WNOHANG) == pid[r]) {
                done[r] = 1;
                rc[r] = WIFEXITED(stt) ? WEXITSTATUS(stt) : 128 + WTERMSIG(stt);
                ssize_t k = read(fd[r], msg[r], 511);
                msg[r][k > 0 ? k : 0] = '\0';
            }
        }
        if (now_s() - t0 > deadline_s) {
            for (int r = 0; r < 2; r++)
                if (!done[r]) {
                    kill(pid[r], SIGKILL);
                    waitpid(pid[r], NULL, 0);
                    done[r] = 1;
                    rc[r] = -1;
                    snprintf(msg[r], 512, "rank %d still running after %d s (a hang)", r, deadline_s);
                }
        }
        usleep(2000);
    }
    for (int r = 0; r < 2; r++) {
        close(fd[r]);
        printf("# rank %d: exit %d: %s\n", r, rc[r], msg[r]);
    }
}

static int data_child(tt_comm *c, int rank, char *msg, size_t ml)
{
    side_arg s;
    memset(&s, 0, sizeof s);
    s.comm = c;
    s.rank = rank;
    s.barrier = pipe_barrier;
    run_side(&s);
    if (s.bad) {
        snprintf(msg, ml, "%s", s.what);
        return 1;
    }
    if (s.sent != expected_bytes() || s.received != expected_bytes()) {
        snprintf(msg, ml, "rank %d: moved %llu / %llu bytes, want %llu", rank, s.sent, s.received, expected_bytes());
        return 1;
    }
    snprintf(msg, ml, "%s: %llu payload bytes each way, exact", tt_comm_transport(c), s.sent);
    return 0;
}

static void test_proxy_processes_tcp(void **state)
{
    (void)state;
    int rc[2];
    char msg[2][512];
    run_pair(data_child, (int)(60 * slowdown()), rc, msg);
    for (int r = 0; r < 2; r++)
        if (rc[r]) fail_msg("rank %d exited %d: %s", r, rc[r], msg[r]);
    assert_non_null(strstr(msg[0], "tcp"));
}

/* The same steps between processes on the shared-memory transport (what the proxies' host
 * communicator is on one machine in auto mode, e.g. with TOPOTUNE_GPU_EMULATE_HOSTS) */
static void test_proxy_processes_shm(void **state)
{
    (void)state;
    int rc[2];
    char msg[2][512];
    g_transport = "shm";
    run_pair(data_child, (int)(60 * slowdown()), rc, msg);
    g_transport = "tcp";
    for (int r = 0; r < 2; r++)
        if (rc[r]) fail_msg("rank %d exited %d: %s", r, rc[r], msg[r]);
    if (strncmp(msg[0], "shm:", 4) || strncmp(msg[1], "shm:", 4))
        fail_msg("not on shm: '%s' / '%s'", msg[0], msg[1]);
}

/* The same steps with the proxies' host connections on IB verbs (the fake library moves the bytes
 * between the processes as RDMA writes): bytes exact, the transport reported as ib. */
static void test_proxy_processes_ib(void **state)
{
    (void)state;
    if (!want_ib()) return;
    int rc[2];
    char msg[2][512];
    g_transport = "ib";
    run_pair(data_child, (int)(90 * slowdown()), rc, msg);
    g_transport = "tcp";
    for (int r = 0; r < 2; r++)
        if (rc[r]) fail_msg("rank %d exited %d: %s", r, rc[r], msg[r]);
    if (strncmp(msg[0], "ib:", 3) || strncmp(msg[1], "ib:", 3))
        fail_msg("not on ib: '%s' / '%s'", msg[0], msg[1]);
}

/* Rank 1 raises its abort word (as a kernel at its deadline would): rank 0's
 * proxy must raise rank 0's, with rank 1's record.  Then rank 1 exits
 * without a word: rank 0's proxy must name it as gone. */
static int abort_child(tt_comm *c, int rank, char *msg, size_t ml)
{
    static int ctrl[64];
    gpu_err err;
    memset(&err, 0, sizeof err);
    exec_gpu_proxy *p = NULL;
    if (exec_gpu_proxy_start(&p, c, NULL, 0, ctrl, &err, 3000) != TT_OK) {
        snprintf(msg, ml, "rank %d: proxy: %s", rank, tt_error_message());
        return 1;
    }
    if (rank == 1) {
        usleep(200 * 1000);
        err.rank = 1;
        err.peer = 0;
        err.channel = 3;
        err.what = 1;
        err.step = 42;
        __sync_synchronize();
        err.set = 1;
        __sync_synchronize();
        ctrl[0] = 1;
        usleep(500 * 1000); /* time to send it */
        snprintf(msg, ml, "raised");
        _exit(0);           /* no goodbye: the peer must notice */
    }
    double t0 = now_s();
    while (!ctrl[0] && now_s() - t0 < 10 * slowdown()) usleep(1000);
    double t_abort = now_s() - t0;
    if (!ctrl[0] || err.rank != 1 || err.channel != 3 || err.step != 42 || err.what != 1) {
        snprintf(msg, ml, "rank 0: abort not received (word %d, rank %d channel %d step %llu what %d)", ctrl[0],
                 err.rank, err.channel, err.step, err.what);
        exec_gpu_proxy_stop(p);
        return 1;
    }
    exec_gpu_proxy_stop(p);
    /* second round: a fresh proxy sees the dead peer */
    memset(ctrl, 0, sizeof ctrl);
    memset(&err, 0, sizeof err);
    if (exec_gpu_proxy_start(&p, c, NULL, 0, ctrl, &err, 3000) != TT_OK) {
        snprintf(msg, ml, "rank 0: second proxy: %s", tt_error_message());
        return 1;
    }
    t0 = now_s();
    while (!ctrl[0] && now_s() - t0 < 10 * slowdown()) usleep(1000);
    double t_dead = now_s() - t0;
    exec_gpu_proxy_stop(p);
    if (!ctrl[0] || err.what != 4 || err.peer != 1 || err.rank != 0) {
        snprintf(msg, ml, "rank 0: dead peer not seen (word %d, what %d, peer %d)", ctrl[0], err.what, err.peer);
        return 1;
    }
    snprintf(msg, ml, "abort after %.2f s, dead peer 1 seen after %.2f s", t_abort, t_dead);
    return 0;
}

static void test_proxy_abort_and_dead_peer(void **state)
{
    (void)state;
    int rc[2];
    char msg[2][512];
    run_pair(abort_child, (int)(40 * slowdown()), rc, msg);
    if (rc[1]) fail_msg("rank 1 exited %d: %s", rc[1], msg[1]);
    if (rc[0]) fail_msg("rank 0 exited %d: %s", rc[0], msg[0]);
}

/* the abort message and a dead peer between processes on shared memory: a shm read sees no
 * hang-up, so the peer's exit is found by the transport's liveness check */
static void test_proxy_abort_and_dead_peer_shm(void **state)
{
    (void)state;
    int rc[2];
    char msg[2][512];
    g_transport = "shm";
    run_pair(abort_child, (int)(40 * slowdown()), rc, msg);
    g_transport = "tcp";
    if (rc[1]) fail_msg("rank 1 exited %d: %s", rc[1], msg[1]);
    if (rc[0]) fail_msg("rank 0 exited %d: %s", rc[0], msg[0]);
}

/* the abort message and a dead peer over IB verbs: the peer's exit is seen by the survivor's proxy */
static void test_proxy_abort_and_dead_peer_ib(void **state)
{
    (void)state;
    if (!want_ib()) return;
    int rc[2];
    char msg[2][512];
    g_transport = "ib";
    run_pair(abort_child, (int)(60 * slowdown()), rc, msg);
    g_transport = "tcp";
    if (rc[1]) fail_msg("rank 1 exited %d: %s", rc[1], msg[1]);
    if (rc[0]) fail_msg("rank 0 exited %d: %s", rc[0], msg[0]);
}

/* A peer that sends something that is no message of the protocol is named as
 * a failed net connection (what 5), not trusted. */
static int garbage_child(tt_comm *c, int rank, char *msg, size_t ml)
{
    static int ctrl[64];
    gpu_err err;
    memset(&err, 0, sizeof err);
    if (rank == 1) {
        exec_conn *k = c->conns[0];
        uint64_t junk[4] = {0x77, 0x1234, 99, 5};
        size_t off = 0, moved;
        double t0 = now_s();
        while (off < sizeof junk && now_s() - t0 < 5) {
            if (k->tp->send_some(k, (char *)junk + off, sizeof junk - off, &moved) != TT_OK) break;
            off += moved;
        }
        pipe_barrier(NULL); /* rank 0 has seen it */
        snprintf(msg, ml, "sent %zu bytes of junk", off);
        return off == sizeof junk ? 0 : 1;
    }
    exec_gpu_proxy *p = NULL;
    if (exec_gpu_proxy_start(&p, c, NULL, 0, ctrl, &err, 3000) != TT_OK) {
        snprintf(msg, ml, "rank 0: proxy: %s", tt_error_message());
        return 1;
    }
    double t0 = now_s();
    while (!ctrl[0] && now_s() - t0 < 10 * slowdown()) usleep(1000);
    exec_gpu_proxy_stop(p);
    pipe_barrier(NULL);
    if (!ctrl[0] || err.what != 5 || err.peer != 1 || err.rank != 0) {
        snprintf(msg, ml, "rank 0: junk not refused (word %d, what %d, peer %d)", ctrl[0], err.what, err.peer);
        return 1;
    }
    snprintf(msg, ml, "junk from rank 1 refused after %.2f s", now_s() - t0);
    return 0;
}

static void test_proxy_refuses_junk(void **state)
{
    (void)state;
    int rc[2];
    char msg[2][512];
    run_pair(garbage_child, (int)(30 * slowdown()), rc, msg);
    for (int r = 0; r < 2; r++)
        if (rc[r]) fail_msg("rank %d exited %d: %s", r, rc[r], msg[r]);
}

int main(void)
{
    if (slowdown() > 1.0) g_steps = 48; /* still every size and both protocols (the tables cycle within 15) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transport_values),
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_emulate_values),
        cmocka_unit_test(test_pairs_selection),
        cmocka_unit_test(test_proxy_threads_shm),
        cmocka_unit_test(test_proxy_processes_tcp),
        cmocka_unit_test(test_proxy_abort_and_dead_peer),
        cmocka_unit_test(test_proxy_refuses_junk),
        cmocka_unit_test(test_proxy_processes_shm),
        cmocka_unit_test(test_proxy_abort_and_dead_peer_shm),
        cmocka_unit_test(test_proxy_processes_ib),
        cmocka_unit_test(test_proxy_abort_and_dead_peer_ib),
    };
    /* TT_NET_TEST_FILTER=*ib: only those (tests/cli/test_gpu_net_ib.sh) */
    const char *f = getenv("TT_NET_TEST_FILTER");
    if (f && *f) cmocka_set_test_filter(f);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
