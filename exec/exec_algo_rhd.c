/* exec_algo_rhd.c - recursive halving-doubling AllReduce for a power-of-two
 * number of ranks: log2(n) exchange steps with partner rank^mask halve the
 * block each rank is responsible for (reduce-scatter), then log2(n) steps
 * double it back (all-gather).  Other rank counts are refused by the plan
 * resolution with a message (see tt_comm_resolve_plan). */
#include "exec_internal.h"

#include <string.h>

static inline size_t clamp_chunk(size_t len, size_t at, size_t ce)
{
    return at >= len ? 0 : (len - at < ce ? len - at : ce);
}

tt_status exec_rhd_allreduce(exec_ctx *ctx)
{
    tt_comm *comm = ctx->comm;
    const exec_op *op = ctx->op;
    int n = comm->nranks, r = comm->rank, levels;
    size_t es = tt_dtype_size(op->dtype), ce = exec_chunk_elems(op);
    unsigned char *buf = op->recvbuf, *tmp;
    tt_status st0 = exec_pow2_begin(ctx, "halving-doubling", ce, &levels, &tmp);
    if (st0 != TT_OK)
        return st0;
    size_t lo[32], hi[32]; /* block owned before level l */
    size_t curlo = 0, curhi = op->count;
    tt_status st = TT_OK;

    ctx->phase = "recursive halving";
    ctx->nsteps = levels;
    for (int l = 0; st == TT_OK && l < levels; l++) {
        int mask = n >> (l + 1), partner = r ^ mask;
        ctx->step = l + 1;
        lo[l] = curlo;
        hi[l] = curhi;
        size_t mid = curlo + (curhi - curlo) / 2;
        size_t klo, khi, glo, ghi;
        if (r & mask) { klo = mid; khi = curhi; glo = curlo; ghi = mid; }
        else { klo = curlo; khi = mid; glo = mid; ghi = curhi; }
        size_t kl = khi - klo, gl = ghi - glo, mx = kl > gl ? kl : gl;
        for (size_t at = 0; st == TT_OK && at < mx; at += ce) {
            size_t sc = clamp_chunk(gl, at, ce), rc = clamp_chunk(kl, at, ce);
            st = exec_sendrecv(ctx, partner, buf + (glo + at) * es, sc * es, partner, tmp, rc * es);
            if (st == TT_OK && rc)
                st = tt_reduce(buf + (klo + at) * es, tmp, rc, op->dtype, op->op);
        }
        curlo = klo;
        curhi = khi;
    }
    if (st == TT_OK && op->op == TT_AVG)
        st = tt_reduce_finish_avg(buf + curlo * es, curhi - curlo, op->dtype, n);

    ctx->phase = "recursive doubling";
    for (int l = levels - 1; st == TT_OK && l >= 0; l--) {
        int mask = n >> (l + 1), partner = r ^ mask;
        ctx->step = levels - l;
        /* partner owns the other half of [lo[l], hi[l]) */
        size_t plo = curlo == lo[l] ? curhi : lo[l];
        size_t phi = curlo == lo[l] ? hi[l] : curlo;
        size_t ml = curhi - curlo, pl = phi - plo, mx = ml > pl ? ml : pl;
        for (size_t at = 0; st == TT_OK && at < mx; at += ce) {
            size_t sc = clamp_chunk(ml, at, ce), rc = clamp_chunk(pl, at, ce);
            st = exec_sendrecv(ctx, partner, buf + (curlo + at) * es, sc * es, partner,
                               buf + (plo + at) * es, rc * es);
        }
        curlo = lo[l];
        curhi = hi[l];
    }
    return st;
}
