/* exec_xfer.c - the progress engine: drives sends and receives on several
 * connections at once, with a deadline, abort checks and failure messages
 * that name the rank, collective, step and peer. */
#include "exec_internal.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

void *exec_scratch(tt_comm *comm, size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    if (bytes > comm->scratch_bytes) {
        unsigned char *p = realloc(comm->scratch, bytes);
        if (!p)
            return NULL;
        comm->scratch = p;
        comm->scratch_bytes = bytes;
    }
    return comm->scratch;
}

tt_status exec_pow2_begin(exec_ctx *ctx, const char *what, size_t ce, int *levels, unsigned char **tmp)
{
    tt_comm *comm = ctx->comm;
    const exec_op *op = ctx->op;
    int n = comm->nranks;
    if (n & (n - 1))
        return exec_fail(ctx, TT_ERR_UNSUPPORTED, "%s needs a power-of-two rank count", what);
    *levels = 0;
    while ((1 << *levels) < n)
        (*levels)++;
    size_t es = tt_dtype_size(op->dtype);
    if (op->sendbuf != op->recvbuf)
        memmove(op->recvbuf, op->sendbuf, op->count * es);
    *tmp = exec_scratch(comm, ce * es);
    if (!*tmp)
        return exec_fail(ctx, TT_ERR_NOMEM, "scratch of %zu bytes", ce * es);
    return TT_OK;
}

size_t exec_chunk_elems(const exec_op *op)
{
    size_t e = tt_dtype_size(op->dtype);
    size_t c = op->plan.chunk_bytes / e;
    return c ? c : 1;
}

/* Threads mode: name the ranks that have not entered this collective. */
static void describe_missing(exec_ctx *ctx, char *buf, size_t n)
{
    exec_world *w = ctx->comm->world;
    buf[0] = '\0';
    if (!w || ctx->op->internal)
        return;
    size_t len = 0;
    int found = 0;
    for (int r = 0; r < w->nranks; r++) {
        uint64_t e = atomic_load(&w->entered[r]);
        if (e < ctx->op->seq) {
            len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%srank %d never entered %s #%llu (last entered #%llu)",
                                    found ? "; " : " (", r, tt_coll_label(ctx->op->coll),
                                    (unsigned long long)ctx->op->seq, (unsigned long long)e);
            found = 1;
        }
    }
    if (found && len + 2 < n)
        strcat(buf, ")");
}

static tt_status check_abort(exec_ctx *ctx)
{
    exec_world *w = ctx->comm->world;
    if (w && atomic_load(&w->aborted)) {
        char msg[EXEC_ERRMSG_MAX];
        pthread_mutex_lock(&w->mu);
        snprintf(msg, sizeof msg, "%s", w->abort_msg);
        pthread_mutex_unlock(&w->mu);
        return exec_fail(ctx, TT_ERR_REMOTE, "aborted because another rank failed: %s", msg);
    }
    return TT_OK;
}

/* an item still owes bytes: its data, or the collective header in front of it (exec_hdr.c) */
static int item_open(const tt_comm *comm, const exec_xfer_item *it)
{
    return it->done < it->len || exec_hdr_pending(comm, it->peer, it->is_send);
}

/* A failure report or abort arrived while this rank waited: when a neighbour's header that is
 * already here disagrees with this rank's call, that (this rank's own finding) is the better
 * message.  Returns TT_ERR_MISMATCH with the message set, else TT_OK. */
static tt_status own_mismatch(exec_ctx *ctx, const exec_xfer_item *items, int n)
{
    tt_comm *comm = ctx->comm;
    char keep[EXEC_ERRMSG_MAX];
    snprintf(keep, sizeof keep, "%s", tt_error_message());
    /* the headers of the ring neighbours and of every peer this step receives from (a tree child
     * that is no ring neighbour pushed its header in front of its data at its start): read what
     * has come, for up to 50 ms, so that a mismatch this rank can see is named by it, not relayed */
    int64_t until = exec_now_ms() + 50;
    for (;;) {
        int moved = 0, waiting = 0;
        tt_status st = exec_hdr_poll(ctx, &moved);
        if (st == TT_ERR_MISMATCH)
            return st;
        for (int i = 0; st == TT_OK && i < n; i++) {
            if (items[i].is_send || !exec_hdr_pending(comm, items[i].peer, 0))
                continue;
            int m = 0;
            st = exec_hdr_progress(ctx, items[i].peer, 0, &m);
            if (st == TT_ERR_MISMATCH)
                return st;
            waiting |= st == TT_OK && exec_hdr_pending(comm, items[i].peer, 0);
        }
        if (st != TT_OK || !waiting || exec_now_ms() >= until)
            break;
        if (!moved) {
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    tt_error_set(TT_ERR_REMOTE, "%s", keep);
    return TT_OK;
}

/* The wait of this rank ran out (waited_ms without progress), or another rank
 * reported a timed-out wait (trigger).  Between processes: report which rank
 * this one waits for, collect the others' reports for a short grace, and name
 * the end of the wait-for chain - the rank everybody is waiting for. */
static tt_status fail_timeout(exec_ctx *ctx, exec_xfer_item *items, int n, int64_t waited_ms,
                              const char *trigger)
{
    tt_comm *comm = ctx->comm;
    char who[256] = "", missing[512];
    size_t len = 0;
    int waited = -1;
    for (int i = 0; i < n; i++)
        if (item_open(comm, &items[i])) {
            if (items[i].done < items[i].len)
                len += (size_t)snprintf(who + len, len < sizeof who ? sizeof who - len : 0,
                                        "%s%s rank %d (%zu of %zu bytes)", len ? ", " : "",
                                        items[i].is_send ? "sending to" : "waiting for", items[i].peer,
                                        items[i].done, items[i].len);
            else
                len += (size_t)snprintf(who + len, len < sizeof who ? sizeof who - len : 0,
                                        "%s%s rank %d (the collective header)", len ? ", " : "",
                                        items[i].is_send ? "sending to" : "waiting for", items[i].peer);
            if (waited < 0)
                waited = items[i].peer;
        }
    describe_missing(ctx, missing, sizeof missing);
    char why[320] = "";
    if (trigger)
        snprintf(why, sizeof why, " (%s)", trigger);
    if (!comm->ctl || comm->world)
        return exec_fail(ctx, TT_ERR_TIMEOUT, "timed out after %lld ms %s%s%s", (long long)waited_ms, who,
                         missing, why);
    char mine[EXEC_ERRMSG_MAX];
    snprintf(mine, sizeof mine, "rank %d: %s #%llu: timed out %s", comm->rank,
             ctx->op->internal ? "barrier" : tt_coll_label(ctx->op->coll),
             (unsigned long long)ctx->op->seq, who);
    comm->ctl_waits[comm->rank] = waited;
    exec_ctl_report(comm, mine, waited, comm->rank);
    /* grace: a quarter of the deadline, 200 ms to 2 s (an engineering choice, docs/exec.md) */
    int64_t timeout = comm->timeout_ms > 0 ? comm->timeout_ms : EXEC_DEFAULT_TIMEOUT_MS;
    int64_t grace = timeout / 4 < 200 ? 200 : timeout / 4 > 2000 ? 2000 : timeout / 4;
    int64_t until = exec_now_ms() + grace;
    while (exec_now_ms() < until) {
        tt_status st = exec_ctl_check(comm, comm->rank);
        if (st == TT_ERR_REMOTE) { /* a rank finished its own report first: quote it */
            char rep[EXEC_ERRMSG_MAX];
            snprintf(rep, sizeof rep, "%s", tt_error_message());
            return exec_fail(ctx, TT_ERR_REMOTE, "%s (this rank timed out %s)", rep, who);
        }
        if (st == TT_OK) {
            struct timespec ts = {0, 10 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    char chain[256];
    int end = waited >= 0 ? exec_ctl_chain_end(comm, comm->rank, chain, sizeof chain) : -1;
    if (end >= 0 && end != waited)
        return exec_fail(ctx, TT_ERR_TIMEOUT,
                         "timed out after %lld ms %s%s; wait chain %s: all waiting for rank %d, which "
                         "reports nothing (stuck, stopped or overloaded)",
                         (long long)waited_ms, who, missing, chain, end);
    return exec_fail(ctx, TT_ERR_TIMEOUT, "timed out after %lld ms %s%s%s", (long long)waited_ms, who,
                     missing, why);
}

tt_status exec_xfer(exec_ctx *ctx, exec_xfer_item *items, int n)
{
    tt_comm *comm = ctx->comm;
    int64_t spin_us = exec_spin_budget_us(comm); /* exec_spin.c */
    int64_t timeout = comm->timeout_ms > 0 ? comm->timeout_ms : EXEC_DEFAULT_TIMEOUT_MS;
    int64_t last_progress_us = 0, last_progress = 0;
    unsigned idle = 0;
    /* Small messages move within a microsecond, and a clock read costs tens of nanoseconds: the
     * time of the last progress is read only once the wait has stayed idle for STAMP_SPINS polls
     * (stamp_due; the deadline and the spin budget then count from a few microseconds late), and a
     * busy-poll that already knows it is inside its spin budget polls the items 15 times of 16
     * without reading the clock or the failure sockets (relaxing). */
    enum { STAMP_SPINS = 64 };
    int stamp_due = 1;
    unsigned relaxing = 0, quiet_spins = 0;
    int gone_seen = 0; /* a peer found gone since the last progress (shared memory: see below) */
    struct pollfd pfd[2 * comm->nranks]; /* data + failure-report sockets; nranks <= 1024 */
    int pfd_peer[2 * comm->nranks];

    for (;;) {
        int pending = 0, moved_any = 0;
        for (int i = 0; i < n; i++) {
            exec_xfer_item *it = &items[i];
            if (!item_open(comm, it))
                continue;
            /* items on the same connection and direction go in list order */
            int blocked = 0;
            for (int j = 0; j < i; j++)
                if (items[j].peer == it->peer && items[j].is_send == it->is_send &&
                    items[j].done < items[j].len)
                    blocked = 1;
            if (blocked) {
                pending++;
                continue;
            }
            exec_conn *c = comm->conns[it->peer];
            size_t moved = 0;
            tt_status st = TT_OK;
            if (exec_hdr_pending(comm, it->peer, it->is_send)) {
                /* this collective's header goes (comes) first on this connection */
                int hm = 0;
                st = exec_hdr_progress(ctx, it->peer, it->is_send, &hm);
                if (st == TT_ERR_MISMATCH)
                    return st;
                moved_any |= hm;
                if (st == TT_OK && exec_hdr_pending(comm, it->peer, it->is_send)) {
                    pending++;
                    continue;
                }
            }
            if (st == TT_OK && it->done < it->len)
                st = it->is_send ? c->tp->send_some(c, (char *)it->buf + it->done, it->len - it->done, &moved)
                                 : c->tp->recv_some(c, (char *)it->buf + it->done, it->len - it->done, &moved);
            if (st != TT_OK) {
                char mine[EXEC_ERRMSG_MAX];
                snprintf(mine, sizeof mine, "%s rank %d: %s", it->is_send ? "sending to" : "receiving from",
                         it->peer, tt_error_message());
                if (st == TT_ERR_REMOTE)
                    return exec_fail_lost(ctx, mine);
                return exec_fail(ctx, st, "%s", mine);
            }
            it->done += moved;
            if (moved)
                moved_any = 1;
            if (it->done < it->len)
                pending++;
        }
        if (!pending)
            return TT_OK;
        if (moved_any) {
            stamp_due = 1;
            quiet_spins = 0;
            idle = 0;
            relaxing = 0;
            gone_seen = 0;
            continue;
        }
        if (relaxing && (++relaxing & 15)) {
            cpu_relax();
            continue;
        }
        if (stamp_due) {
            if (spin_us > 0 && ++quiet_spins < STAMP_SPINS) { /* oversubscribed (no spin budget): yield at once */
                cpu_relax();
                continue;
            }
            quiet_spins = 0;
            last_progress_us = exec_now_us();
            last_progress = last_progress_us / 1000;
            stamp_due = 0;
        }
        /* idle: read (send) the neighbours' headers as they come, without waiting for them */
        int hmoved = 0;
        tt_status st = exec_hdr_poll(ctx, &hmoved);
        if (st == TT_ERR_MISMATCH)
            return st;
        /* a neighbour gone is found below (hang-up, check_peer) and named there */
        if (hmoved) {
            last_progress_us = exec_now_us();
            last_progress = last_progress_us / 1000;
            continue;
        }
        st = check_abort(ctx);
        if (st != TT_OK)
            return own_mismatch(ctx, items, n) == TT_ERR_MISMATCH ? TT_ERR_MISMATCH : st;
        int64_t now = exec_now_ms();
        if (now - last_progress >= timeout)
            return fail_timeout(ctx, items, n, now - last_progress, NULL);
        /* idle: poll descriptors (tcp); spin/yield/sleep when a shared-memory
         * connection is involved (its data does not wake poll()) */
        int np = 0, spin = 0;
        for (int i = 0; i < n; i++)
            if (item_open(comm, &items[i]) && comm->conns[items[i].peer]->tp->poll_fd(comm->conns[items[i].peer]) < 0)
                spin = 1;
        for (int p = 0; p < comm->nranks; p++) {
            exec_conn *c = comm->conns[p];
            if (!c)
                continue;
            int fd = c->tp->poll_fd(c);
            if (fd < 0)
                continue;
            short ev = 0;
            for (int i = 0; i < n; i++)
                if (items[i].peer == p && item_open(comm, &items[i]))
                    ev |= items[i].is_send ? POLLOUT : POLLIN;
            /* A peer hanging up while this rank is inside a collective means
             * that peer died or aborted (graceful close happens only after
             * the barrier of tt_comm_destroy). */
            if (!ev && ctx->op->internal)
                continue;
            pfd[np].fd = fd;
            pfd[np].events = ev | POLLRDHUP;
            pfd[np].revents = 0;
            pfd_peer[np++] = p;
        }
        int ndata = np;
        for (int p = 0; comm->ctl && p < comm->nranks; p++)
            if (comm->ctl[p] >= 0) {
                pfd[np].fd = comm->ctl[p];
                pfd[np].events = POLLIN;
                pfd[np].revents = 0;
                pfd_peer[np++] = -1;
            }
        idle++;
        if (np > 0 && (!spin || (idle & 63) == 0)) {
            int64_t left = timeout - (now - last_progress);
            int wait = spin ? 0 : left < 100 ? (int)left : 100;
            int r = poll(pfd, (nfds_t)np, wait < 0 ? 0 : wait);
            if (r < 0 && errno != EINTR)
                return exec_fail(ctx, TT_ERR_SYSTEM, "poll: %s", strerror(errno));
            /* a failure report names the first cause: it wins over hang-ups */
            tt_status cst = r > 0 ? exec_ctl_check(comm, -1) : TT_OK;
            if (cst == TT_ERR_TIMEOUT) { /* another rank timed out: report my own wait too */
                char rep[256];
                snprintf(rep, sizeof rep, "%s", tt_error_message());
                return fail_timeout(ctx, items, n, exec_now_ms() - last_progress, rep);
            }
            if (cst != TT_OK) {
                if (own_mismatch(ctx, items, n) == TT_ERR_MISMATCH)
                    return TT_ERR_MISMATCH;
                return exec_fail(ctx, TT_ERR_REMOTE, "%s", tt_error_message());
            }
            char gone[256] = "";
            size_t len = 0;
            for (int i = 0; r > 0 && i < ndata; i++) {
                int involved = pfd[i].events & (POLLIN | POLLOUT);
                if ((pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) &&
                    !(involved && (pfd[i].revents & POLLIN)))
                    len += (size_t)snprintf(gone + len, len < sizeof gone ? sizeof gone - len : 0,
                                            "%srank %d", len ? ", " : "", pfd_peer[i]);
            }
            if (len) {
                char mine[320];
                snprintf(mine, sizeof mine, "lost connection to %s (process died or aborted)", gone);
                return exec_fail_lost(ctx, mine);
            }
        }
        if (spin || np == 0) {
            if ((idle & 255) == 0) {
                /* name every peer found gone, not only the first: when one
                 * rank dies, its neighbours may abort too */
                char gone[256] = "";
                size_t len = 0;
                for (int p = 0; p < comm->nranks; p++) {
                    exec_conn *c = comm->conns[p];
                    if (!c || !c->tp->check_peer)
                        continue;
                    int involved = 0;
                    for (int i = 0; i < n; i++)
                        involved |= items[i].peer == p && item_open(comm, &items[i]);
                    if (!involved && ctx->op->internal)
                        continue;
                    if (c->tp->check_peer(c) != TT_OK)
                        len += (size_t)snprintf(gone + len, len < sizeof gone ? sizeof gone - len : 0,
                                                "%srank %d", len ? ", " : "", p);
                }
                /* A peer may write its last bytes into the shared-memory ring and exit at once (the barrier
                 * of tt_comm_destroy): those bytes are still there to read.  So the first time a peer is found
                 * gone, the items get one more pass; only a peer gone with nothing more to read is lost (the
                 * TCP path above does the same with POLLIN beside the hang-up). */
                if (len && !gone_seen) {
                    gone_seen = 1;
                    continue;
                }
                if (len) {
                    char mine[320];
                    snprintf(mine, sizeof mine, "lost connection to %s (process died or aborted)", gone);
                    return exec_fail_lost(ctx, mine);
                }
            }
            /* Spin for TOPOTUNE_SPIN_US (EXEC_SPIN_US; none when this host's
             * ranks outnumber its CPUs, exec_spin.c) without progress, then
             * yield the CPU (other ranks may share it) up to 2 ms more, then
             * sleep 50 us per poll so that idle waits cost little CPU.
             * Engineering choice. */
            int64_t quiet_us = exec_now_us() - last_progress_us;
            relaxing = 0;
            if (quiet_us < spin_us) {
                cpu_relax();
                relaxing = 1;
            } else if (quiet_us < spin_us + 2000)
                sched_yield();
            else {
                struct timespec ts = {0, 50000};
                nanosleep(&ts, NULL);
            }
        }
    }
}

tt_status exec_sendrecv(exec_ctx *ctx, int speer, const void *sbuf, size_t slen, int rpeer,
                        void *rbuf, size_t rlen)
{
    exec_xfer_item it[2] = {{speer, 1, (void *)sbuf, slen, 0}, {rpeer, 0, rbuf, rlen, 0}};
    return exec_xfer(ctx, it, 2);
}

tt_status exec_send(exec_ctx *ctx, int peer, const void *buf, size_t len)
{
    exec_xfer_item it = {peer, 1, (void *)buf, len, 0};
    return exec_xfer(ctx, &it, 1);
}

tt_status exec_recv(exec_ctx *ctx, int peer, void *buf, size_t len)
{
    exec_xfer_item it = {peer, 0, buf, len, 0};
    return exec_xfer(ctx, &it, 1);
}
