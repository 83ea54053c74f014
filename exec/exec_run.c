/* exec_run.c - what the worker runs (exec_comm.c): one queued op (the per-collective header of
 * exec_hdr.c, then the schedule of the dispatch table, exec_algos.c) and the barrier of
 * tt_comm_destroy. */
#include "exec_internal.h"

#include <string.h>

tt_status exec_run_op(tt_comm *comm, const exec_op *op)
{
    exec_ctx ctx = {comm, op, NULL, 0, 0};
    size_t es = tt_dtype_size(op->dtype);
    if (comm->nranks == 1) {
        size_t bytes = op->count * es;
        if (op->recvbuf && op->sendbuf && op->recvbuf != op->sendbuf && bytes)
            memmove(op->recvbuf, op->sendbuf, bytes);
        return TT_OK; /* avg over one rank: divide by 1 */
    }
    /* the header travels with the data (exec_hdr.c): no round trip of its own;
     * a neighbour lost while it is pushed is reported as the header exchange step */
    ctx.phase = "header exchange";
    tt_status st = exec_hdr_begin(&ctx);
    ctx.phase = NULL;
    if (st == TT_OK && op->count) {
        /* the schedule of the dispatch table (exec_algos.c); the plan resolution admits only
         * what the registry's host rows name, so a missing one is a bug, never a silent ring */
        exec_schedule run = exec_algo_schedule(op->plan.algo, op->coll);
        st = run ? run(&ctx)
                 : exec_fail(&ctx, TT_ERR_INTERNAL, "no host schedule for %s %s (exec_algos.c)",
                             tt_algo_label(op->plan.algo), tt_coll_label(op->coll));
    }
    if (st == TT_OK) {
        if (!op->count)
            ctx.phase = "header exchange";
        st = exec_hdr_finish(&ctx);
    }
    exec_hdr_end(comm);
    return st;
}

/* Barrier of tt_comm_destroy, run directly (the worker is idle): a header
 * exchange with both ring neighbours (exec_hdr.c, waited for), then two token passes round the ring
 * started by rank 0.  When the second token reaches a rank, every rank has
 * entered the barrier, so no rank closes its connections while a peer still
 * runs a collective (peers' hang-ups are expected only inside this op). */
tt_status exec_barrier(tt_comm *comm)
{
    exec_op op = {0};
    op.coll = TT_COLL_ALLREDUCE;
    op.dtype = TT_UINT8;
    op.op = TT_SUM;
    op.root = -1;
    op.plan = TT_PLAN_DEFAULT;
    op.plan.algo = TT_ALGO_RING;
    op.plan.chunk_bytes = EXEC_DEFAULT_CHUNK;
    op.count = 0;
    op.seq = comm->issued + 1;
    op.internal = 1;
    exec_ctx ctx = {comm, &op, NULL, 0, 0};
    tt_status st = TT_OK;
    if (comm->nranks > 1) {
        ctx.phase = "header exchange";
        st = exec_hdr_begin(&ctx);
        if (st == TT_OK)
            st = exec_hdr_finish(&ctx);
        exec_hdr_end(comm);
    }
    int n = comm->nranks, next = (comm->rank + 1) % n, prev = (comm->rank + n - 1) % n;
    for (int pass = 0; st == TT_OK && pass < 2; pass++) {
        unsigned char tok = 1;
        ctx.phase = "destroy barrier";
        ctx.step = pass + 1;
        ctx.nsteps = 2;
        if (comm->rank == 0) {
            st = exec_send(&ctx, next, &tok, 1);
            if (st == TT_OK)
                st = exec_recv(&ctx, prev, &tok, 1);
        } else {
            st = exec_recv(&ctx, prev, &tok, 1);
            if (st == TT_OK)
                st = exec_send(&ctx, next, &tok, 1);
        }
    }
    return st;
}
