/* exec_hdr_round.c - the header round of one collective (exec_hdr.c says why
 * and how the headers travel): pushed to both ring neighbours as the
 * collective starts (with the fault-injection points of the tests), and
 * owed headers collected before it completes. */
#include "exec_internal.h"

#include <stdio.h>

tt_status exec_hdr_begin(exec_ctx *ctx)
{
    tt_comm *c = ctx->comm;
    const exec_op *op = ctx->op;
    int n = c->nranks;
    c->hdr_on = 0;
    if (n == 1)
        return TT_OK;
    exec_coll_header h = {EXEC_HDR_MAGIC, op->internal ? -2 : (int32_t)op->coll, (int32_t)op->dtype, (int32_t)op->op,
                          op->root, (int32_t)op->plan.algo, op->count, op->seq};
    if (!op->internal) {
        exec_fault_before_collective(c, op->seq);
        exec_fault_slow(c, op->plan.algo);
        if (exec_fault_corrupt_header(c, op->seq))
            h.magic ^= 0x5a5a5a5au;
    }
    c->hdr_mine = h;
    c->hdr_ep++;
    c->hdr_on = 1;
    /* push to the neighbours now, without waiting: whatever does not fit goes before the data */
    int nb[2] = {(c->rank + 1) % n, (c->rank + n - 1) % n};
    for (int i = 0; i < (nb[0] == nb[1] ? 1 : 2); i++) {
        int moved;
        tt_status st = exec_hdr_progress(ctx, nb[i], 1, &moved);
        if (st != TT_OK && c->fault_dropped) /* its own injected network failure, not the neighbour's */
            return exec_fail(ctx, TT_ERR_REMOTE, "rank %d dropped its own TCP connections (fault injection drop-tcp)",
                             c->rank);
        if (st == TT_ERR_REMOTE) { /* a neighbour gone: a report naming the first cause may be on its way */
            char mine[EXEC_ERRMSG_MAX];
            snprintf(mine, sizeof mine, "sending the header to rank %d: %s", nb[i], tt_error_message());
            return exec_fail_lost(ctx, mine);
        }
        if (st != TT_OK)
            return st;
    }
    return TT_OK;
}

tt_status exec_hdr_finish(exec_ctx *ctx)
{
    tt_comm *c = ctx->comm;
    if (!c->hdr_on)
        return TT_OK;
    int n = c->nranks, nb[2] = {(c->rank + 1) % n, (c->rank + n - 1) % n};
    exec_xfer_item it[4];
    int k = 0;
    for (int i = 0; i < (nb[0] == nb[1] ? 1 : 2); i++)
        for (int dir = 1; dir >= 0; dir--)
            if (exec_hdr_pending(c, nb[i], dir))
                it[k++] = (exec_xfer_item){nb[i], dir, NULL, 0, 0};
    tt_status st = TT_OK;
    if (k) {
        const char *ph = ctx->phase;
        int ns = ctx->nsteps;
        ctx->phase = "header check";
        ctx->nsteps = 0;
        st = exec_xfer(ctx, it, k); /* zero-length items: only the headers are owed */
        ctx->phase = ph;
        ctx->nsteps = ns;
    }
    c->hdr_on = 0;
    return st;
}

void exec_hdr_end(tt_comm *c) { c->hdr_on = 0; }
