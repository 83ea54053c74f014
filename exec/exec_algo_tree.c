/* exec_algo_tree.c - tree AllReduce: a binary tree in heap order (rank r's
 * parent is (r-1)/2, its children 2r+1 and 2r+2) reduces towards rank 0,
 * then rank 0 broadcasts down the same tree.  Both phases are pipelined:
 * while a rank receives chunk c from its children it forwards chunk c-1 to
 * its parent (and the reverse going down).  Latency grows with log2(n)
 * instead of n, which is why it is the default for small messages. */
#include "exec_internal.h"

#include <string.h>

static inline size_t clamp_chunk(size_t len, size_t at, size_t ce)
{
    return at >= len ? 0 : (len - at < ce ? len - at : ce);
}

tt_status exec_tree_allreduce(exec_ctx *ctx)
{
    tt_comm *comm = ctx->comm;
    const exec_op *op = ctx->op;
    int n = comm->nranks, r = comm->rank;
    int parent = r == 0 ? -1 : (r - 1) / 2;
    int kids[2] = {2 * r + 1 < n ? 2 * r + 1 : -1, 2 * r + 2 < n ? 2 * r + 2 : -1};
    int nk = (kids[0] >= 0) + (kids[1] >= 0);
    size_t es = tt_dtype_size(op->dtype), count = op->count, ce = exec_chunk_elems(op);
    unsigned char *buf = op->recvbuf;
    if (op->sendbuf != op->recvbuf)
        memmove(buf, op->sendbuf, count * es);
    unsigned char *sc = exec_scratch(comm, 2 * ce * es);
    if (!sc)
        return exec_fail(ctx, TT_ERR_NOMEM, "scratch of %zu bytes", 2 * ce * es);
    unsigned char *tmp[2] = {sc, sc + ce * es};
    size_t nch = (count + ce - 1) / ce;
    int nsteps = (int)(nch > 0x7fffffff ? 0x7fffffff : nch);
    tt_status st = TT_OK;

    ctx->phase = "tree reduce";
    ctx->nsteps = nsteps;
    for (size_t c = 0; st == TT_OK && c <= nch; c++) {
        exec_xfer_item it[3];
        int k = 0;
        ctx->step = (int)(c < nch ? c + 1 : nch);
        size_t cl = c < nch ? clamp_chunk(count, c * ce, ce) : 0;
        if (c < nch)
            for (int i = 0; i < 2; i++)
                if (kids[i] >= 0)
                    it[k++] = (exec_xfer_item){kids[i], 0, tmp[i], cl * es, 0};
        if (parent >= 0 && c > 0)
            it[k++] = (exec_xfer_item){parent, 1, buf + (c - 1) * ce * es,
                                       clamp_chunk(count, (c - 1) * ce, ce) * es, 0};
        if (k)
            st = exec_xfer(ctx, it, k);
        for (int i = 0; st == TT_OK && c < nch && i < nk; i++)
            st = tt_reduce(buf + c * ce * es, tmp[i], cl, op->dtype, op->op);
    }
    if (st == TT_OK && r == 0 && op->op == TT_AVG)
        st = tt_reduce_finish_avg(buf, count, op->dtype, n);

    ctx->phase = "tree broadcast";
    for (size_t c = 0; st == TT_OK && c <= nch; c++) {
        exec_xfer_item it[3];
        int k = 0;
        ctx->step = (int)(c < nch ? c + 1 : nch);
        if (parent >= 0 && c < nch)
            it[k++] = (exec_xfer_item){parent, 0, buf + c * ce * es, clamp_chunk(count, c * ce, ce) * es, 0};
        if (c > 0)
            for (int i = 0; i < 2; i++)
                if (kids[i] >= 0)
                    it[k++] = (exec_xfer_item){kids[i], 1, buf + (c - 1) * ce * es,
                                               clamp_chunk(count, (c - 1) * ce, ce) * es, 0};
        if (k)
            st = exec_xfer(ctx, it, k);
    }
    return st;
}
