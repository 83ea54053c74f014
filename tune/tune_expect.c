/*
 * tune_expect.c - expected-performance envelope for burn-in.
 *
 * The expectation at a size is the model's busbw for the fastest candidate NCCL can run
 * (nccl_only), which is what nccl-tests measures when NCCL picks.  Bands (MODEL ASSUMPTION,
 * docs/calibration.md): a healthy machine reaches pass_ratio of it; below fail_ratio
 * something is broken (a link down, a NIC at lower speed, wrong NUMA placement).  Sizes whose
 * predicted time is mostly latency get the wider small_* band: latency depends on software
 * (launch, proxy threads) more than on the hardware this check is about.
 */
#include <stdio.h>
#include <string.h>

#include "tune_internal.h"

tt_status tt_expect_row_compute(const tt_tune_ctx *ctx, tt_coll coll, uint64_t bytes, const tt_expect_bands *b,
                                tt_expect_row *out)
{
    memset(out, 0, sizeof(*out));
    tt_tune_estimate e;
    tt_algo a;
    tt_proto p;
    tt_status st = tt_tune_best(ctx, coll, bytes, 1, &a, &p, &e);
    if (st != TT_OK) return st;
    /* NCCL's model picks; its absolute time comes from the NCCL-rows layer (tune_nccl_rows.c) */
    if (tt_tune_ctx_model(ctx) == TT_MODEL_NCCL && (st = tt_nccl_abs_eval(ctx, coll, a, p, bytes, &e)) != TT_OK) return st;
    out->coll = coll;
    out->bytes = bytes;
    out->algo = a;
    out->proto = p;
    out->pred_us = e.time_us;
    out->pred_busbw = (double)bytes / (e.time_us * 1e3) * tt_busbw_factor(coll, tt_tune_ctx_nranks(ctx));
    out->latency_bound = e.lat_us > 0.5 * e.time_us;
    double pr = out->latency_bound ? b->small_pass_ratio : b->pass_ratio;
    double fr = out->latency_bound ? b->small_fail_ratio : b->fail_ratio;
    out->pass_busbw = out->pred_busbw * pr;
    out->fail_busbw = out->pred_busbw * fr;
    return TT_OK;
}

tt_status tt_expect_judge(const tt_tune_ctx *ctx, const tt_measurement *m, const tt_expect_bands *b, tt_expect_row *out)
{
    int n = tt_tune_ctx_nranks(ctx);
    if (m->nranks > 0 && m->nranks != n)
        return tt_error_set(TT_ERR_INVALID,
                            "%s: measured with %d ranks but the expectation is for %d (set --nodes/--gpus-per-node)",
                            m->where, m->nranks, n);
    if (!(m->time_us > 0) || m->bytes == 0)
        return tt_error_set(TT_ERR_INVALID, "%s: no positive time or size to judge", m->where);
    tt_status st = tt_expect_row_compute(ctx, m->coll, m->bytes, b, out);
    if (st != TT_OK) return st;
    out->meas_busbw = (double)m->bytes / (m->time_us * 1e3) * tt_busbw_factor(m->coll, n);
    out->ratio = out->meas_busbw / out->pred_busbw;
    out->verdict = out->meas_busbw >= out->pass_busbw   ? TT_EXPECT_PASS
                   : out->meas_busbw >= out->fail_busbw ? TT_EXPECT_WARN
                                                        : TT_EXPECT_FAIL;
    snprintf(out->where, sizeof out->where, "%s", m->where);
    return TT_OK;
}
