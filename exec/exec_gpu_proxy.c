/*
 * exec_gpu_proxy.c - the progress thread of the GPU executor's net transport
 * (exec_gpu_net.h): forwards the steps the local kernels publish in their
 * host send FIFOs to the peers' proxies over a host communicator's
 * connections, writes what arrives into the local receive FIFOs, and carries
 * credits and aborts.  Plain host memory and host transports only: no CUDA,
 * so it is unit-tested on machines without a GPU (tests/unit/test_exec_gpu_net.c
 * plays the kernels' part with threads).
 *
 * Wire format, per peer and direction one ordered byte stream of messages,
 * each a 32-byte header and a payload:
 *   DATA   role, channel, step, bytes, protocol; payload = the step's bytes
 *          (Simple: the slot's first `bytes`; LL: whole 16-byte lines)
 *   CREDIT role, channel, value = the receiving kernel's tail word
 *   ABORT  payload = the sender's gpu_err record (its kernels were stopped)
 * Steps of one connection travel in order; a DATA step is sent only once the
 * kernel published it (head > step; for LL also every line's two flags equal
 * step + 1, checked here because the kernel fences LL lines only for its
 * peer's loads).  The sender's slot is reused by its kernel only after the
 * credit for that step came back, which follows the whole payload, so
 * payloads are sent straight from the FIFO without copies.  Simple payloads
 * are received straight into the receive slot (free: the sending kernel
 * waited for its credit); LL payloads go through a staging buffer and are
 * stored with 8-byte stores, so the polling kernel never sees a flag before
 * its data.  A peer that is gone is seen by the transport's error on the data
 * path (TCP) or by its liveness check (check_peer: shm, IB verbs), every 50 ms.
 */
#include "exec_gpu_net.h"
#include "exec_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SUBSYS "gpu"

enum { MSG_DATA = 1, MSG_CREDIT = 2, MSG_ABORT = 3 };
#define CTL_Q 128 /* pending small messages per peer (credits coalesce, so few are ever queued) */
#define LL_SLOT_BYTES ((size_t)GPU_LL_SLOT_LINES * 16u)
#define PEER_CHECK_MS 50 /* engineering choice: how often the host transports' liveness checks run */

typedef struct {
    uint32_t type, proto;
    int32_t role, channel;
    uint64_t step;    /* DATA: step; CREDIT: tail value */
    uint64_t bytes;   /* payload bytes */
} msg_hdr;

typedef struct {
    msg_hdr h;
    const void *payload;
} out_msg;

typedef struct {
    exec_conn *c;
    int dead;
    /* outgoing */
    out_msg q[CTL_Q];
    int qh, qn;
    out_msg cur;
    int active;
    size_t off;        /* bytes of cur (header + payload) sent */
    int64_t idle_since_ms;
    int rr;            /* round robin over this peer's send connections */
    /* incoming */
    msg_hdr in;
    size_t in_off;
    int in_payload;    /* 1: reading the payload into dst */
    char *dst;
    size_t doff;
    exec_gpu_netconn *in_conn;
    char *stage;       /* LL staging: one slot */
    gpu_err abort_in;
} peer_state;

struct exec_gpu_proxy {
    tt_comm *net;
    exec_gpu_netconn *conns;
    int nconns, me, n, timeout_ms;
    volatile int *abort_word;
    gpu_err *err;
    peer_state *peers;
    gpu_err abort_out;
    int abort_sent;
    pthread_t th;
    int started;
    atomic_int stop;
    atomic_ullong sent, received;
    int64_t last_check_ms;
};

static unsigned long long ld_acq(volatile unsigned long long *p)
{
    return __atomic_load_n((unsigned long long *)p, __ATOMIC_ACQUIRE);
}
static void st_rel(volatile unsigned long long *p, unsigned long long v)
{
    __atomic_store_n((unsigned long long *)p, v, __ATOMIC_RELEASE);
}

/* Raise this process's abort word with a record (first failure wins). */
static void raise_abort(exec_gpu_proxy *p, const gpu_err *rec)
{
    if (!__sync_bool_compare_and_swap((int *)p->abort_word, 0, 1))
        return;
    gpu_err e = *rec;
    e.set = 0;
    memcpy((char *)p->err + sizeof(int), (const char *)&e + sizeof(int), sizeof e - sizeof(int));
    __sync_synchronize();
    p->err->set = 1;
    __sync_synchronize();
}

static void peer_lost(exec_gpu_proxy *p, int peer, int what, const char *why)
{
    peer_state *ps = &p->peers[peer];
    if (ps->dead)
        return;
    ps->dead = 1;
    if (atomic_load(&p->stop))
        return;
    TT_INFO(SUBSYS, "net proxy: rank %d: rank %d %s: %s", p->me, peer,
            what == 4 ? "is gone" : "accepts no data", why);
    gpu_err e;
    memset(&e, 0, sizeof e);
    e.rank = p->me;
    e.peer = peer;
    e.channel = -1;
    e.what = what;
    raise_abort(p, &e);
}

static exec_gpu_netconn *find_conn(exec_gpu_proxy *p, int peer, int is_send, int role, int channel)
{
    for (int i = 0; i < p->nconns; i++) {
        exec_gpu_netconn *c = &p->conns[i];
        if (c->peer == peer && c->is_send == is_send && c->role == role && c->channel == channel)
            return c;
    }
    return NULL;
}

static int queue_ctl(peer_state *ps, const msg_hdr *h, const void *payload)
{
    if (ps->qn == CTL_Q)
        return 0;
    out_msg *m = &ps->q[(ps->qh + ps->qn) % CTL_Q];
    m->h = *h;
    m->payload = payload;
    ps->qn++;
    return 1;
}

/* Start the next outgoing message of one peer: queued control messages
 * first, then a published step of one of its send connections. */
static int next_out(exec_gpu_proxy *p, int peer)
{
    peer_state *ps = &p->peers[peer];
    if (ps->qn) {
        ps->cur = ps->q[ps->qh];
        ps->qh = (ps->qh + 1) % CTL_Q;
        ps->qn--;
        ps->active = 1;
        ps->off = 0;
        return 1;
    }
    for (int k = 0; k < p->nconns; k++) {
        int i = (ps->rr + k) % p->nconns;
        exec_gpu_netconn *c = &p->conns[i];
        if (!c->is_send || c->peer != peer)
            continue;
        if (ld_acq(c->head) <= c->done)
            continue;
        unsigned long long info = c->info[c->done % GPU_NET_INFO_SLOTS];
        uint32_t bytes = (uint32_t)info, proto = (uint32_t)(info >> 32);
        const char *src;
        if (proto == TT_PROTO_LL) {
            if (bytes > LL_SLOT_BYTES || bytes % 16)
                goto bad;
            src = c->ll + (size_t)(c->done % GPU_LL_SLOTS) * LL_SLOT_BYTES;
            uint32_t flag = (uint32_t)(c->done + 1);
            int ready = 1;
            for (size_t l = 0; l < bytes / 16 && ready; l++) {
                const volatile uint32_t *w = (const volatile uint32_t *)(src + l * 16);
                ready = w[1] == flag && w[3] == flag;
            }
            if (!ready)
                continue; /* lines still on their way from the GPU: look again next turn */
        } else if (proto == TT_PROTO_SIMPLE) {
            if (bytes > GPU_SIMPLE_SLOT_BYTES)
                goto bad;
            src = c->simple + (size_t)(c->done % GPU_SIMPLE_SLOTS) * GPU_SIMPLE_SLOT_BYTES;
        } else {
            goto bad;
        }
        ps->cur.h = (msg_hdr){MSG_DATA, proto, c->role, c->channel, c->done, bytes};
        ps->cur.payload = src;
        ps->active = 1;
        ps->off = 0;
        c->done++;
        ps->rr = (i + 1) % p->nconns;
        return 1;
    bad:
        TT_WARN(SUBSYS, "net proxy: rank %d: step %llu to rank %d has a bad descriptor (bytes %u, protocol %u)",
                p->me, c->done, peer, bytes, proto);
        peer_lost(p, peer, 5, "bad step descriptor");
        return 0;
    }
    return 0;
}

/* Send what fits of the peer's current message; 1 when bytes moved. */
static int pump_out(exec_gpu_proxy *p, int peer, int64_t now)
{
    peer_state *ps = &p->peers[peer];
    int moved_any = 0;
    for (;;) {
        if (!ps->active && !next_out(p, peer))
            break;
        size_t total = sizeof(msg_hdr) + ps->cur.h.bytes, moved = 0;
        tt_status st;
        if (ps->off < sizeof(msg_hdr))
            st = ps->c->tp->send_some(ps->c, (const char *)&ps->cur.h + ps->off, sizeof(msg_hdr) - ps->off,
                                      &moved);
        else
            st = ps->c->tp->send_some(ps->c, (const char *)ps->cur.payload + (ps->off - sizeof(msg_hdr)),
                                      total - ps->off, &moved);
        if (st != TT_OK) {
            peer_lost(p, peer, 4, tt_error_message());
            return moved_any;
        }
        if (!moved) {
            if (now - ps->idle_since_ms > p->timeout_ms) {
                char why[96];
                snprintf(why, sizeof why, "no byte of a pending message accepted for %d ms", p->timeout_ms);
                peer_lost(p, peer, 5, why);
            }
            break;
        }
        moved_any = 1;
        ps->idle_since_ms = now;
        ps->off += moved;
        if (ps->off == total) {
            if (ps->cur.h.type == MSG_DATA)
                atomic_fetch_add(&p->sent, ps->cur.h.bytes);
            ps->active = 0;
        }
    }
    if (!ps->active)
        ps->idle_since_ms = now;
    return moved_any;
}

static void deliver(exec_gpu_proxy *p, int peer)
{
    peer_state *ps = &p->peers[peer];
    exec_gpu_netconn *c = ps->in_conn;
    if (ps->in.type == MSG_ABORT) {
        ps->abort_in.set = 1;
        TT_INFO(SUBSYS, "net proxy: rank %d: rank %d reports an abort (rank %d, peer %d, what %d)", p->me, peer,
                ps->abort_in.rank, ps->abort_in.peer, ps->abort_in.what);
        raise_abort(p, &ps->abort_in);
        return;
    }
    if (ps->in.proto == TT_PROTO_LL) {
        /* 8-byte stores in line order: each half carries its own flag after its data */
        volatile uint64_t *d = (volatile uint64_t *)(c->ll + (size_t)(ps->in.step % GPU_LL_SLOTS) * LL_SLOT_BYTES);
        const uint64_t *s = (const uint64_t *)ps->stage;
        for (size_t i = 0; i < ps->in.bytes / 8; i++)
            d[i] = s[i];
    }
    atomic_fetch_add(&p->received, ps->in.bytes);
    c->done = ps->in.step + 1;
    st_rel(c->head, c->done);
}

/* A complete header arrived: check it and say where its payload goes. */
static int accept_header(exec_gpu_proxy *p, int peer)
{
    peer_state *ps = &p->peers[peer];
    msg_hdr *h = &ps->in;
    char why[160];
    ps->in_conn = NULL;
    ps->dst = NULL;
    ps->doff = 0;
    switch (h->type) {
    case MSG_CREDIT: {
        exec_gpu_netconn *c = find_conn(p, peer, 1, h->role, h->channel);
        if (!c || h->bytes)
            break;
        if (h->step > ld_acq(c->tail))
            st_rel(c->tail, h->step);
        return 1;
    }
    case MSG_ABORT:
        if (h->bytes != sizeof(gpu_err))
            break;
        ps->dst = (char *)&ps->abort_in;
        return 1;
    case MSG_DATA: {
        exec_gpu_netconn *c = find_conn(p, peer, 0, h->role, h->channel);
        if (!c || h->step != c->done)
            break;
        if (h->proto == TT_PROTO_SIMPLE && h->bytes <= GPU_SIMPLE_SLOT_BYTES)
            ps->dst = c->simple + (size_t)(h->step % GPU_SIMPLE_SLOTS) * GPU_SIMPLE_SLOT_BYTES;
        else if (h->proto == TT_PROTO_LL && h->bytes <= LL_SLOT_BYTES && h->bytes % 16 == 0)
            ps->dst = ps->stage;
        else
            break;
        ps->in_conn = c;
        return 1;
    }
    default:
        break;
    }
    snprintf(why, sizeof why, "unexpected message (type %u, role %d, channel %d, step %llu, %llu bytes)", h->type,
             h->role, h->channel, (unsigned long long)h->step, (unsigned long long)h->bytes);
    peer_lost(p, peer, 5, why);
    return 0;
}

/* Receive what is there from one peer; 1 when bytes moved. */
static int pump_in(exec_gpu_proxy *p, int peer)
{
    peer_state *ps = &p->peers[peer];
    int moved_any = 0;
    while (!ps->dead) {
        size_t moved = 0;
        tt_status st;
        if (!ps->in_payload)
            st = ps->c->tp->recv_some(ps->c, (char *)&ps->in + ps->in_off, sizeof(msg_hdr) - ps->in_off, &moved);
        else
            st = ps->c->tp->recv_some(ps->c, ps->dst + ps->doff, ps->in.bytes - ps->doff, &moved);
        if (st != TT_OK) {
            peer_lost(p, peer, 4, tt_error_message());
            break;
        }
        if (!moved)
            break;
        moved_any = 1;
        if (!ps->in_payload) {
            ps->in_off += moved;
            if (ps->in_off < sizeof(msg_hdr))
                continue;
            ps->in_off = 0;
            if (!accept_header(p, peer))
                break;
            if (ps->in.type == MSG_CREDIT)
                continue;
            if (ps->in.bytes == 0) {
                deliver(p, peer);
                continue;
            }
            ps->in_payload = 1;
        } else {
            ps->doff += moved;
            if (ps->doff == ps->in.bytes) {
                ps->in_payload = 0;
                deliver(p, peer);
            }
        }
    }
    return moved_any;
}

/* Credits: the receiving kernels' tail words, forwarded when they move. */
static int pump_credits(exec_gpu_proxy *p)
{
    int any = 0;
    for (int i = 0; i < p->nconns; i++) {
        exec_gpu_netconn *c = &p->conns[i];
        if (c->is_send || p->peers[c->peer].dead)
            continue;
        unsigned long long t = ld_acq(c->tail);
        if (t <= c->credited)
            continue;
        msg_hdr h = {MSG_CREDIT, 0, c->role, c->channel, t, 0};
        if (queue_ctl(&p->peers[c->peer], &h, NULL)) {
            c->credited = t;
            any = 1;
        }
    }
    return any;
}

/* This process's kernels were stopped here (deadline, a peer this process saw
 * die): tell every peer once, so their kernels stop too. */
static void pump_abort(exec_gpu_proxy *p)
{
    if (p->abort_sent || !*p->abort_word || !p->err->set)
        return;
    __sync_synchronize();
    p->abort_sent = 1;
    if (p->err->rank != p->me)
        return; /* a peer's abort: it told everybody itself */
    p->abort_out = *p->err;
    msg_hdr h = {MSG_ABORT, 0, -1, -1, 0, sizeof(gpu_err)};
    for (int r = 0; r < p->n; r++)
        if (r != p->me && !p->peers[r].dead)
            queue_ctl(&p->peers[r], &h, &p->abort_out);
}

/* Peers gone without an error on the data path: transports whose reads do not
 * see a hang-up (shared memory, IB verbs: check_peer watches their TCP
 * liveness connection); what such a peer sent before leaving is read first. */
static void check_peers(exec_gpu_proxy *p, int64_t now)
{
    if (now - p->last_check_ms < PEER_CHECK_MS)
        return;
    p->last_check_ms = now;
    for (int r = 0; r < p->n; r++) {
        peer_state *ps = &p->peers[r];
        if (r == p->me || ps->dead || !ps->c->tp->check_peer || ps->c->tp->check_peer(ps->c) == TT_OK)
            continue;
        char why[256];
        snprintf(why, sizeof why, "%s", tt_error_message());
        pump_in(p, r);
        peer_lost(p, r, 4, why);
    }
}

static void *proxy_main(void *arg)
{
    exec_gpu_proxy *p = arg;
    unsigned idle = 0;
    while (!atomic_load(&p->stop)) {
        int64_t now = exec_now_ms();
        int any = pump_credits(p);
        pump_abort(p);
        check_peers(p, now);
        for (int r = 0; r < p->n; r++) {
            if (r == p->me || p->peers[r].dead)
                continue;
            any |= pump_in(p, r);
            any |= pump_out(p, r, now);
        }
        if (any) {
            idle = 0;
        } else if (++idle > 20000) {
            struct timespec ts = {0, 20000}; /* engineering choice: 20 us naps once idle for a while */
            nanosleep(&ts, NULL);
        } else if (idle > 256) {
            sched_yield();
        }
    }
    return NULL;
}

tt_status exec_gpu_proxy_start(exec_gpu_proxy **out, tt_comm *net, exec_gpu_netconn *conns, int nconns,
                               volatile int *abort_word, gpu_err *err, int timeout_ms)
{
    *out = NULL;
    exec_gpu_proxy *p = calloc(1, sizeof *p);
    if (!p)
        return tt_error_set(TT_ERR_NOMEM, "GPU net proxy: out of memory");
    p->net = net;
    p->conns = conns;
    p->nconns = nconns;
    p->me = tt_comm_rank(net);
    p->n = tt_comm_nranks(net);
    p->abort_word = abort_word;
    p->err = err;
    p->timeout_ms = timeout_ms > 0 ? timeout_ms : EXEC_DEFAULT_TIMEOUT_MS;
    p->peers = calloc((size_t)p->n, sizeof *p->peers);
    if (!p->peers)
        goto nomem;
    int64_t now = exec_now_ms();
    p->last_check_ms = now;
    for (int r = 0; r < p->n; r++) {
        peer_state *ps = &p->peers[r];
        ps->idle_since_ms = now;
        if (r == p->me)
            continue;
        ps->c = net->conns[r];
        if (!ps->c) {
            exec_gpu_proxy_stop(p);
            return tt_error_set(TT_ERR_INTERNAL, "GPU net proxy: rank %d has no host connection to rank %d",
                                p->me, r);
        }
        if (!(ps->stage = malloc(LL_SLOT_BYTES)))
            goto nomem;
    }
    atomic_init(&p->stop, 0);
    int e = pthread_create(&p->th, NULL, proxy_main, p);
    if (e) {
        exec_gpu_proxy_stop(p);
        return tt_error_set(TT_ERR_SYSTEM, "GPU net proxy: pthread_create: %s", strerror(e));
    }
    p->started = 1;
    *out = p;
    return TT_OK;
nomem:
    exec_gpu_proxy_stop(p);
    return tt_error_set(TT_ERR_NOMEM, "GPU net proxy: out of memory");
}

void exec_gpu_proxy_stop(exec_gpu_proxy *p)
{
    if (!p)
        return;
    atomic_store(&p->stop, 1);
    if (p->started)
        pthread_join(p->th, NULL);
    if (p->peers)
        for (int r = 0; r < p->n; r++)
            free(p->peers[r].stage);
    free(p->peers);
    free(p);
}

void exec_gpu_proxy_bytes(const exec_gpu_proxy *p, unsigned long long *sent, unsigned long long *received)
{
    *sent = atomic_load(&((exec_gpu_proxy *)p)->sent);
    *received = atomic_load(&((exec_gpu_proxy *)p)->received);
}

void exec_gpu_net_comm_close(tt_comm *net)
{
    /* no barrier: the proxy's messages may still be in the streams, and the
     * GPU communicator's own barrier over the host communicator came first */
    exec_comm_free(net);
}
