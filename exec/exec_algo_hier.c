/* exec_algo_hier.c - hierarchical AllReduce for ranks spread over nodes:
 *   1. node reduce: every rank sends its data to its node's leader (lowest
 *      rank of the node), which reduces them chunk by chunk;
 *   2. inter-node: the leaders run the ring AllReduce among themselves (one
 *      rank per node crosses the network);
 *   3. node broadcast: each leader sends the result to its node's ranks.
 * Nodes come from the rendezvous (same boot id and host name = same node);
 * thread ranks are one node unless TOPOTUNE_THREAD_NODES splits them (a
 * testing aid).  With one node this is reduce + broadcast through rank 0. */
#include "exec_internal.h"

#include <stdlib.h>
#include <string.h>

static inline size_t clamp_chunk(size_t len, size_t at, size_t ce)
{
    return at >= len ? 0 : (len - at < ce ? len - at : ce);
}

tt_status exec_hier_allreduce(exec_ctx *ctx)
{
    tt_comm *comm = ctx->comm;
    const exec_op *op = ctx->op;
    int n = comm->nranks, me = comm->rank, mynode = comm->node[me];
    size_t es = tt_dtype_size(op->dtype), count = op->count, ce = exec_chunk_elems(op);
    unsigned char *buf = op->recvbuf;
    if (op->sendbuf != op->recvbuf)
        memmove(buf, op->sendbuf, count * es);
    int *local = malloc((size_t)n * sizeof *local), *leaders = malloc((size_t)n * sizeof *leaders);
    if (!local || !leaders) {
        free(local);
        free(leaders);
        return exec_fail(ctx, TT_ERR_NOMEM, "hierarchy");
    }
    int nl = 0, nlead = 0, mypos = -1;
    for (int r = 0; r < n; r++) {
        if (comm->node[r] == mynode)
            local[nl++] = r;
        int first = 1; /* r leads its node if no lower rank shares it */
        for (int q = 0; q < r && first; q++)
            first = comm->node[q] != comm->node[r];
        if (first) {
            if (comm->node[r] == mynode && r == local[0]) /* local[0] is set once r is on my node */
                mypos = nlead;
            leaders[nlead++] = r;
        }
    }
    int leader = local[0];
    tt_status st = TT_OK;
    unsigned char *tmp = exec_scratch(comm, ce * es);
    if (!tmp)
        st = exec_fail(ctx, TT_ERR_NOMEM, "scratch of %zu bytes", ce * es);

    /* 1. node reduce */
    ctx->phase = "node reduce";
    ctx->nsteps = nl - 1;
    if (st == TT_OK && me != leader) {
        ctx->step = 1;
        st = exec_send(ctx, leader, buf, count * es);
    }
    for (int i = 1; st == TT_OK && me == leader && i < nl; i++) {
        ctx->step = i;
        for (size_t at = 0; st == TT_OK && at < count; at += ce) {
            size_t cl = clamp_chunk(count, at, ce);
            st = exec_recv(ctx, local[i], tmp, cl * es);
            if (st == TT_OK)
                st = tt_reduce(buf + at * es, tmp, cl, op->dtype, op->op);
        }
    }
    /* 2. between nodes, leaders only */
    if (st == TT_OK && me == leader && nlead > 1)
        st = exec_ring_allreduce_members(ctx, buf, leaders, nlead, mypos, 0);
    if (st == TT_OK && me == leader && op->op == TT_AVG)
        st = tt_reduce_finish_avg(buf, count, op->dtype, n);
    /* 3. node broadcast */
    ctx->phase = "node broadcast";
    ctx->nsteps = 1;
    ctx->step = 1;
    if (st == TT_OK && me != leader) {
        st = exec_recv(ctx, leader, buf, count * es);
    } else if (st == TT_OK && nl > 1) {
        exec_xfer_item *it = calloc((size_t)nl, sizeof *it);
        if (!it)
            st = exec_fail(ctx, TT_ERR_NOMEM, "broadcast items");
        for (int i = 1; it && i < nl; i++)
            it[i - 1] = (exec_xfer_item){local[i], 1, buf, count * es, 0};
        if (it)
            st = exec_xfer(ctx, it, nl - 1);
        free(it);
    }
    free(local);
    free(leaders);
    return st;
}
