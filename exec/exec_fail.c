/* exec_fail.c - failure messages of a running collective: every error names
 * the rank, the collective, its sequence number, algorithm and step; a lost
 * peer prefers the first cause another rank already reported. */
#include "exec_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

tt_status exec_fail(exec_ctx *ctx, tt_status code, const char *fmt, ...)
{
    char what[EXEC_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const exec_op *op = ctx->op;
    if (ctx->phase && ctx->nsteps > 0)
        return tt_error_set(code, "rank %d: %s #%llu (%s) step %d/%d %s: %s", ctx->comm->rank,
                            op->internal ? "barrier" : tt_coll_label(op->coll),
                            (unsigned long long)op->seq, tt_algo_label(op->plan.algo), ctx->step,
                            ctx->nsteps, ctx->phase, what);
    return tt_error_set(code, "rank %d: %s #%llu (%s)%s%s: %s", ctx->comm->rank,
                        op->internal ? "barrier" : tt_coll_label(op->coll),
                        (unsigned long long)op->seq, tt_algo_label(op->plan.algo),
                        ctx->phase ? " step " : "", ctx->phase ? ctx->phase : "", what);
}

/* A peer is gone (its connection failed or hung up).  It may have given up
 * because of a third rank: that rank's report (relayed by rank 0) names the
 * first cause; give it 100 ms to arrive (an engineering choice). */
tt_status exec_fail_lost(exec_ctx *ctx, const char *mine)
{
    tt_comm *comm = ctx->comm;
    if (comm->fault_dropped) /* the injected network failure of this very rank */
        return exec_fail(ctx, TT_ERR_REMOTE, "rank %d dropped its own TCP connections (fault injection drop-tcp)",
                         comm->rank);
    for (int k = 0; comm->ctl && !comm->world && k < 10; k++) {
        tt_status cst = exec_ctl_check(comm, -1);
        if (cst == TT_ERR_REMOTE)
            return exec_fail(ctx, TT_ERR_REMOTE, "%s (%s)", tt_error_message(), mine);
        if (cst == TT_OK) {
            struct timespec ts = {0, 10 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    return exec_fail(ctx, TT_ERR_REMOTE, "%s", mine);
}
