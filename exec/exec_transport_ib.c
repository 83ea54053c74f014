/* exec_transport_ib.c - InfiniBand / RoCE verbs transport between processes.
 *
 * One reliable-connected (RC) queue pair per pair of ranks, one completion
 * queue per connection.  Byte stream per direction (exec_ib_ring.h): the
 * receiver owns a registered ring, the sender copies into a registered
 * staging ring and RDMA-WRITEs WITH IMMEDIATE (immediate = length) into the
 * receiver's ring at the same offset; each such write consumes one of the
 * receiver's pre-posted receive requests and raises one receive completion,
 * which tells the receiver how many bytes arrived (RC delivers writes and
 * their completions in order).  The receiver gives room back by an RDMA WRITE
 * (no immediate) of its 64-bit consumed offset into a word of the sender's
 * registered memory, posted each time recv_some consumed bytes: no receive
 * request is used by credits, so only data writes need receive requests.
 *
 * Setup (exec_ib_setup.c: exec_ib_upgrade, after the TCP mesh and the
 * shared-memory upgrade):
 * the ranks of each pair that will use IB exchange {status, qpn, psn, lid,
 * gid, MTU, ring address/rkey, credit-word address} over the pair's TCP
 * connection, move their QPs INIT -> RTR -> RTS, and confirm with one byte, so
 * no write reaches a QP that is not ready.  The TCP connection stays open as
 * the liveness channel (check_peer watches it for a hang-up, as shm does).
 * Completions do not wake poll(), so poll_fd is -1 and idle waits spin/yield/
 * sleep like shm.
 *
 * libibverbs.so.1 is loaded at run time (exec_ib_verbs.c).  Without the verbs
 * headers at build time, TOPOTUNE_TRANSPORT=ib fails with "built without
 * rdma-core headers" and auto mode stays on TCP. */
#ifdef TT_HAVE_IBVERBS
#include "exec_ib_internal.h"

#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- data path ---------------------------------------------------------- */

static tt_status conn_fail(ib_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tt_status conn_fail(ib_conn *c, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (c->err == TT_OK) {
        c->err = TT_ERR_REMOTE;
        snprintf(c->errmsg, sizeof c->errmsg, "InfiniBand (rank %d, peer rank %d, %s port %d): %s", c->me,
                 c->base.peer, c->dev->name, c->dev->port, what);
    }
    return tt_error_set(c->err, "%s", c->errmsg);
}

tt_status exec_ib_post_recvs(ib_conn *c, int n)
{
    for (int i = 0; i < n; i++) {
        struct ibv_recv_wr wr = {0}, *bad = NULL;
        wr.wr_id = IB_WR_RECV;
        wr.num_sge = 0; /* RDMA write with immediate: no data lands in the receive buffer */
        int e = ibv_post_recv(c->qp, &wr, &bad);
        if (e)
            return conn_fail(c, "ibv_post_recv: %s", strerror(e));
    }
    return TT_OK;
}

static tt_status post_credit(ib_conn *c)
{
    if (c->rx.returned == c->rx.tail || c->credits_out >= IB_CREDIT_SLOTS)
        return TT_OK;
    unsigned slot = c->credit_seq++ % IB_CREDIT_SLOTS;
    c->ctrl->credit_src[slot] = c->rx.tail;
    struct ibv_sge sge = {(uintptr_t)&c->ctrl->credit_src[slot], 8, c->mr->lkey};
    struct ibv_send_wr wr = {0}, *bad = NULL;
    wr.wr_id = IB_WR_CREDIT | slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = c->r_credit;
    wr.wr.rdma.rkey = c->r_rkey;
    int e = ibv_post_send(c->qp, &wr, &bad);
    if (e)
        return conn_fail(c, "ibv_post_send (credit write): %s", strerror(e));
    c->credits_out++;
    c->rx.returned = c->rx.tail;
    return TT_OK;
}

/* Poll completions, take the peer's credit, give ours back. */
static tt_status progress(ib_conn *c)
{
    if (c->err != TT_OK)
        return tt_error_set(c->err, "%s", c->errmsg);
    struct ibv_wc wc[32];
    int n;
    int reposts = 0;
    while ((n = ibv_poll_cq(c->cq, 32, wc)) > 0) {
        for (int i = 0; i < n; i++) {
            const struct ibv_wc *w = &wc[i];
            /* an error completion defines only wr_id, status and vendor_err */
            const char *what = (w->wr_id & IB_WR_RECV) ? "receive of a write" :
                               (w->wr_id & IB_WR_CREDIT) ? "credit write" : "data write";
            if (w->status != IBV_WC_SUCCESS)
                return conn_fail(c, "work completion error on the %s: %s (status %d, vendor error 0x%x)", what,
                                 exec_ib_wc_str(c->dev->api, w->status), (int)w->status, w->vendor_err);
            if (w->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
                uint32_t len = ntohl(w->imm_data);
                if (exec_ib_rx_arrived(&c->rx, len) != 0)
                    return conn_fail(c, "protocol error: a write of %u bytes overflows the %zu-byte ring "
                                     "(%llu unread)", len, c->cap,
                                     (unsigned long long)(c->rx.head - c->rx.tail));
                reposts++;
            } else if (w->opcode == IBV_WC_RDMA_WRITE) {
                if (w->wr_id & IB_WR_CREDIT)
                    c->credits_out--;
                else if (exec_ib_tx_acked(&c->tx, w->wr_id) != 0)
                    return conn_fail(c, "protocol error: completion of a write ending at %llu out of order",
                                     (unsigned long long)w->wr_id);
            } else {
                return conn_fail(c, "unexpected completion opcode %d", (int)w->opcode);
            }
        }
    }
    if (n < 0)
        return conn_fail(c, "ibv_poll_cq failed (%d)", n);
    if (reposts) {
        tt_status st = exec_ib_post_recvs(c, reposts);
        if (st != TT_OK)
            return st;
    }
    /* the peer's consumed offset: an 8-byte RDMA write; read until two reads
     * agree so that a torn read is never taken */
    uint64_t a, b = __atomic_load_n(&c->ctrl->credit_in, __ATOMIC_ACQUIRE);
    do {
        a = b;
        b = __atomic_load_n(&c->ctrl->credit_in, __ATOMIC_ACQUIRE);
    } while (a != b);
    if (a != c->tx.credited && exec_ib_tx_credit(&c->tx, a) != 0)
        return conn_fail(c, "protocol error: credit %llu outside 0..%llu", (unsigned long long)a,
                         (unsigned long long)c->tx.sent);
    return post_credit(c);
}

static tt_status ib_send_some(exec_conn *ec, const void *buf, size_t len, size_t *moved)
{
    ib_conn *c = (ib_conn *)ec;
    *moved = 0;
    tt_status st = progress(c);
    if (st != TT_OK)
        return st;
    size_t done = 0, off, n;
    while (done < len && (n = exec_ib_tx_room(&c->tx, &off)) > 0) {
        if (n > len - done)
            n = len - done;
        memcpy(c->txs + off, (const char *)buf + done, n);
        struct ibv_sge sge = {(uintptr_t)(c->txs + off), (uint32_t)n, c->mr->lkey};
        struct ibv_send_wr wr = {0}, *bad = NULL;
        wr.wr_id = c->tx.sent + n; /* end offset: matched by exec_ib_tx_acked */
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.imm_data = htonl((uint32_t)n);
        wr.wr.rdma.remote_addr = c->r_ring + off;
        wr.wr.rdma.rkey = c->r_rkey;
        int e = ibv_post_send(c->qp, &wr, &bad);
        if (e)
            return conn_fail(c, "ibv_post_send (data write of %zu bytes): %s", n, strerror(e));
        exec_ib_tx_posted(&c->tx, n);
        done += n;
    }
    *moved = done;
    return TT_OK;
}

static tt_status ib_recv_some(exec_conn *ec, void *buf, size_t len, size_t *moved)
{
    ib_conn *c = (ib_conn *)ec;
    *moved = 0;
    tt_status st = progress(c);
    if (st != TT_OK)
        return st;
    size_t done = 0, off, n;
    while (done < len && (n = exec_ib_rx_avail(&c->rx, &off)) > 0) {
        if (n > len - done)
            n = len - done;
        memcpy((char *)buf + done, c->rxr + off, n);
        exec_ib_rx_consumed(&c->rx, n);
        done += n;
    }
    *moved = done;
    return done ? post_credit(c) : TT_OK;
}

static int ib_poll_fd(exec_conn *c) { return -1; }

static tt_status ib_check_peer(exec_conn *ec)
{
    ib_conn *c = (ib_conn *)ec;
    /* keep credits flowing for pairs the current step does not touch; a
     * completion error surfaces on the next send/recv of this pair */
    if (c->err == TT_OK)
        (void)progress(c);
    struct pollfd p = {exec_tcp_conn_fd(c->tcp), POLLRDHUP, 0};
    /* a peer that wrote its last bytes and left is not lost until they are read
     * (as TCP's POLLIN with POLLRDHUP) */
    if (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) && c->rx.head == c->rx.tail)
        return tt_error_set(TT_ERR_REMOTE, "lost rank %d (process died or aborted)", ec->peer);
    return TT_OK;
}

void exec_ib_dev_release(ib_dev *d)
{
    if (!d || --d->refs > 0)
        return;
    if (d->pd)
        d->api->dealloc_pd(d->pd);
    if (d->ctx)
        d->api->close_device(d->ctx);
    free(d);
}

void exec_ib_conn_free(ib_conn *c)
{
    const exec_ib_api *a = c->dev->api;
    if (c->qp)
        a->destroy_qp(c->qp);
    if (c->cq)
        a->destroy_cq(c->cq);
    if (c->mr)
        a->dereg_mr(c->mr);
    free(c->buf);
    if (c->tcp)
        c->tcp->tp->close(c->tcp);
    exec_ib_dev_release(c->dev);
    free(c);
}

/* Before the QP goes: wait (bounded) until every posted data write has
 * completed, so that the last bytes of the stream reach the peer even when
 * this process exits right after send_some handed them over (destroying a QP
 * flushes its outstanding work).  Credit writes are not waited for (the peer
 * needs no room any more and may already be gone: waiting would cost the
 * HCA's retry timeout).  A failed pair is not drained. */
static void drain(ib_conn *c)
{
    int64_t until = exec_now_ms() + c->drain_ms;
    while (c->err == TT_OK && c->tx.acked != c->tx.sent && exec_now_ms() < until) {
        if (progress(c) != TT_OK)
            break;
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

static void ib_close(exec_conn *ec)
{
    drain((ib_conn *)ec);
    exec_ib_conn_free((ib_conn *)ec);
}

static tt_status ib_connect_all(tt_comm *comm)
{
    return tt_error_set(TT_ERR_INTERNAL, "the ib transport is set up by exec_ib_upgrade after the TCP mesh");
}

const exec_transport exec_transport_ib = {
    .name = "ib",
    .connect_all = ib_connect_all,
    .can_connect = exec_ib_can_connect,
    .upgrade = exec_ib_upgrade,
    .send_some = ib_send_some,
    .recv_some = ib_recv_some,
    .poll_fd = ib_poll_fd,
    .check_peer = ib_check_peer,
    .close = ib_close,
};

#endif
