/* exec_algo_rd.c - recursive-doubling AllReduce for a power-of-two number of
 * ranks: log2(n) steps; at step l every rank swaps its whole (partly reduced)
 * vector with partner rank ^ (1 << l) and reduces the partner's copy into its
 * own.  After the last step every rank holds the full reduction.  Fewest
 * messages of all the AllReduce schedules (log2 n, one per step and rank), so
 * it is the default for small messages (exec_coll.c); it moves log2(n) whole
 * vectors per rank, so large messages take the ring.  Other rank counts are
 * refused by the plan resolution (exec_caps.c, pow2 row).
 *
 * Every rank computes partial results in the same association (a op b at step
 * 1, (a op b) op (c op d) at step 2, ...), only the operand order of each
 * combine differs between partners, and every reduction op is commutative
 * element by element, so all ranks end with bitwise the same vector. */
#include "exec_internal.h"

#include <string.h>

tt_status exec_rd_allreduce(exec_ctx *ctx)
{
    tt_comm *comm = ctx->comm;
    const exec_op *op = ctx->op;
    int n = comm->nranks, r = comm->rank, levels;
    size_t es = tt_dtype_size(op->dtype), ce = exec_chunk_elems(op);
    if (ce > op->count)
        ce = op->count;
    unsigned char *buf = op->recvbuf, *tmp;
    tt_status st0 = exec_pow2_begin(ctx, "recursive doubling", ce, &levels, &tmp);
    if (st0 != TT_OK)
        return st0;
    tt_status st = TT_OK;
    ctx->phase = "recursive doubling";
    ctx->nsteps = levels;
    for (int l = 0; st == TT_OK && l < levels; l++) {
        int partner = r ^ (1 << l);
        ctx->step = l + 1;
        for (size_t at = 0; st == TT_OK && at < op->count; at += ce) {
            size_t c = op->count - at < ce ? op->count - at : ce;
            st = exec_sendrecv(ctx, partner, buf + at * es, c * es, partner, tmp, c * es);
            if (st == TT_OK)
                st = tt_reduce(buf + at * es, tmp, c, op->dtype, op->op);
        }
    }
    if (st == TT_OK && op->op == TT_AVG)
        st = tt_reduce_finish_avg(buf, op->count, op->dtype, n);
    return st;
}
