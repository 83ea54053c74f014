/* exec_hdr.c - the per-collective agreement check, carried with the data.
 *
 * Every collective has a 40-byte header (collective, type, op, count, root,
 * algorithm, sequence number).  It costs no round trip of its own:
 *  - at the start a rank pushes its header to both ring neighbours without
 *    waiting (exec_hdr_begin), and in front of its first data to any other
 *    peer (exec_xfer asks exec_hdr_pending/exec_hdr_progress before moving
 *    the first data byte on a connection);
 *  - a header is read in front of the first data byte received from a peer,
 *    and compared before that data is used: a rank never consumes the data of
 *    a call it has not checked;
 *  - while a rank waits for data anyway, the neighbours' headers are read as
 *    they arrive (exec_hdr_poll), and before the collective completes both
 *    neighbours' headers must have been read and agreed (exec_hdr_finish; by
 *    then they have almost always arrived).
 * Every rank checks both ring neighbours, so any disagreement among the ranks
 * is seen by at least two ranks (TT_ERR_MISMATCH naming both calls); a byte
 * stream is ordered, so a header always precedes that collective's data on
 * its connection and a stale one is recognised by its sequence number. */
#include "exec_internal.h"

#include <stdio.h>
#include <string.h>

#define HDR_LEN ((uint32_t)sizeof(exec_coll_header))

static void describe(char *b, size_t n, const exec_coll_header *h)
{
    snprintf(b, n, "%s #%llu (count %llu, %s, %s, root %d, %s)",
             h->coll == -2 ? "barrier" : tt_coll_label((tt_coll)h->coll), (unsigned long long)h->seq,
             (unsigned long long)h->count, tt_dtype_name((tt_dtype)h->dtype), tt_redop_name((tt_redop)h->op),
             h->root, tt_algo_label((tt_algo)h->algo));
}

static tt_status compare(exec_ctx *ctx, const exec_coll_header *mine, const exec_coll_header *theirs, int peer)
{
    if (theirs->magic != EXEC_HDR_MAGIC)
        return exec_fail(ctx, TT_ERR_MISMATCH,
                         "rank %d sent data that is not a collective header: the ranks are out of step "
                         "(different collectives or buffer sizes)", peer);
    if (mine->magic != EXEC_HDR_MAGIC) /* only TOPOTUNE_FAULT=corrupt makes this */
        return exec_fail(ctx, TT_ERR_MISMATCH, "this rank sent a corrupted collective header (fault injection)");
    if (memcmp(mine, theirs, sizeof *mine)) {
        char a[256], b[256];
        describe(a, sizeof a, mine);
        describe(b, sizeof b, theirs);
        return exec_fail(ctx, TT_ERR_MISMATCH, "rank %d called %s but this rank called %s", peer, b, a);
    }
    return TT_OK;
}

int exec_hdr_pending(const tt_comm *c, int peer, int is_send)
{
    if (!c->hdr_on)
        return 0;
    const exec_hdr_peer *h = &c->hdr_peer[peer];
    return is_send ? !(h->tx_ep == c->hdr_ep && h->tx_done == HDR_LEN)
                   : !(h->rx_ep == c->hdr_ep && h->rx_done == HDR_LEN);
}

tt_status exec_hdr_progress(exec_ctx *ctx, int peer, int is_send, int *moved)
{
    tt_comm *c = ctx->comm;
    exec_hdr_peer *h = &c->hdr_peer[peer];
    exec_conn *conn = c->conns[peer];
    size_t m = 0;
    tt_status st;
    *moved = 0;
    if (is_send) {
        if (h->tx_ep != c->hdr_ep) {
            h->tx_ep = c->hdr_ep;
            h->tx_done = 0;
        }
        st = conn->tp->send_some(conn, (const char *)&c->hdr_mine + h->tx_done, HDR_LEN - h->tx_done, &m);
        h->tx_done += (uint32_t)m;
    } else {
        if (h->rx_ep != c->hdr_ep) {
            h->rx_ep = c->hdr_ep;
            h->rx_done = 0;
        }
        st = conn->tp->recv_some(conn, (char *)&h->in + h->rx_done, HDR_LEN - h->rx_done, &m);
        h->rx_done += (uint32_t)m;
        if (st == TT_OK && m && h->rx_done == HDR_LEN)
            st = compare(ctx, &c->hdr_mine, &h->in, peer);
    }
    *moved = m > 0;
    return st;
}

tt_status exec_hdr_poll(exec_ctx *ctx, int *moved_any)
{
    tt_comm *c = ctx->comm;
    if (!c->hdr_on)
        return TT_OK;
    int n = c->nranks, nb[2] = {(c->rank + 1) % n, (c->rank + n - 1) % n};
    for (int i = 0; i < (nb[0] == nb[1] ? 1 : 2); i++)
        for (int dir = 0; dir < 2; dir++)
            if (exec_hdr_pending(c, nb[i], dir)) {
                int moved;
                tt_status st = exec_hdr_progress(ctx, nb[i], dir, &moved);
                if (st != TT_OK)
                    return st;
                *moved_any |= moved;
            }
    return TT_OK;
}
