/*
 * tune_nccl_rows.c - NCCL rows (measurements of NCCL itself) evaluated with NCCL's own
 * structure (docs/model.md "NCCL rows: absolute time", docs/calibration.md section 10).
 *
 * NCCL's cost model (tune_model_nccl.c, `--model nccl`) ranks candidates; it is not meant to
 * give the absolute time of a call (its LL latency, its 2-rank tree bandwidth and its per-size
 * efficiency are off by up to 2.6x on our recorded H200 runs).  So an NCCL row is predicted in
 * two steps:
 *   1. which (algorithm, protocol): the row's own when it was forced (NCCL_ALGO/NCCL_PROTO),
 *      else NCCL's choice = the arg-min of NCCL's model as NCCL computes it (tt_tune_best on a
 *      TT_MODEL_NCCL context, NCCL algorithms only);
 *   2. its time: NCCL's model latency and bandwidth of that candidate, corrected by a named
 *      absolute-time layer per known part:
 *        time = lat_nccl + extra_us[algo][proto] + bytes / (1000 * bw_nccl * eff[algo][proto](bytes))
 *      eff is given at anchor sizes 2 MiB, 8 MiB, ..., 2 GiB (x4) and interpolated linearly in
 *      log2(bytes), held constant outside.  bw_nccl includes NCCL's tree correction factor.
 * Parts without recorded data get no correction (the pure NCCL model).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tune_internal.h"

#define NANCH 6 /* anchors 2^21, 2^23, ..., 2^31 bytes */

typedef struct {
    const char *name;
    const char *source;
    double extra_us[2][TT_PROTO_COUNT];    /* [tree, ring][LL, LL128, Simple] */
    double eff[2][TT_PROTO_COUNT][NANCH];  /* [tree, ring][proto][anchor] */
} nccl_part;

/* SM90 (H100/H200 SXM), 18 NVLink4 links per GPU to an NVSwitch, one node, AllReduce.
 * Source: our recorded NCCL 2.28.3 runs on 2 x H200 (nvidia-h200-x2), 2026-11-29 19:39 UTC,
 * tests/fixtures/measurements/gpu-h200x2-b/s-nccl-{ring,tree}-{ll,ll128,simple}-{small,large}.txt
 * (forced sweeps, NCCL_NVLS_ENABLE=0, 8 B .. 2 GiB x4; docs/log/2026-11-29-benchmarks.md).
 *   extra_us: median over the sizes below 2 MiB of (measured - NCCL model time);
 *   eff:      bytes / (1000 * bw_nccl * (measured - lat_nccl - extra_us)) at each anchor size.
 * The NCCL default-choice sweeps (s-nccl-default-*) and the earlier session
 * (gpu-h200x2/sweep-nccl-default.txt, 17:49 UTC) were NOT used: they are the held-out check.
 * H100 SXM has the same NVLink4 x18 fabric but HBM3 instead of HBM3e: applying these constants
 * there is an assumption (no H100 run recorded).  Tree values > 1: NCCL's tree model halves
 * the bandwidth of a 2-rank tree that in fact runs at ring speed. */
static const nccl_part part_sm90_nvl18 = {
    "sm90-nvl18-1node",
    "recorded 2 x H200 NV18, NCCL 2.28.3, 2026-11-29 (gpu-h200x2-b forced sweeps)",
    {/* tree */ {4.89, -3.51, 1.41},
     /* ring */ {5.23, 0.81, 1.06}},
    {/* tree */ {{5.112, 3.159, 2.710, 2.610, 2.624, 2.616},
                 {1.965, 1.305, 2.009, 1.877, 1.684, 1.736},
                 {1.969, 1.384, 2.318, 2.087, 1.979, 2.126}},
     /* ring */ {{1.665, 1.150, 0.909, 0.867, 0.865, 0.865},
                 {1.548, 0.856, 0.765, 0.830, 0.904, 0.972},
                 {0.500, 0.750, 0.768, 0.818, 0.876, 0.938}}}};

static const nccl_part *part_of(const struct tt_tune_ctx *ctx, tt_coll coll)
{
    const tt_cluster *c = &ctx->cl;
    /* 18 links x 20.6 GB/s = 370.8 GB/s per GPU (NCCL's SM90 NVLink figure) */
    if (coll == TT_COLL_ALLREDUCE && c->nodes == 1 && c->min_sm >= 90 && c->max_sm < 100 && c->nvswitch &&
        ctx->ch.ring.type_intra == TT_PATH_NVL && ctx->ch.gpu_nvl_bw > 17.5 * 20.6 && ctx->ch.gpu_nvl_bw < 18.5 * 20.6)
        return &part_sm90_nvl18;
    return NULL;
}

const char *tt_nccl_part_name(const tt_tune_ctx *ctx, tt_coll coll)
{
    const nccl_part *p = part_of(ctx, coll);
    return p ? p->name : "none (NCCL's model as is)";
}

static double eff_at(const double *e, uint64_t bytes)
{
    double x = log2((double)(bytes ? bytes : 1));
    if (x <= 21) return e[0];
    if (x >= 21 + 2 * (NANCH - 1)) return e[NANCH - 1];
    int k = (int)((x - 21) / 2);
    double f = (x - 21 - 2 * k) / 2;
    return e[k] + f * (e[k + 1] - e[k]);
}

tt_status tt_nccl_abs_eval(const tt_tune_ctx *ctx, tt_coll coll, tt_algo algo, tt_proto proto, uint64_t bytes,
                           tt_tune_estimate *out)
{
    if (ctx->model != TT_MODEL_NCCL)
        return tt_error_set(TT_ERR_INVALID, "NCCL rows: the context is not NCCL's model");
    tt_status st = tt_tune_eval(ctx, coll, algo, proto, bytes, out);
    if (st != TT_OK || !out->enabled || ctx->nranks == 1) return st;
    const nccl_part *p = part_of(ctx, coll);
    if (!p || (algo != TT_ALGO_TREE && algo != TT_ALGO_RING)) return TT_OK;
    int ai = algo == TT_ALGO_RING;
    double lat = out->lat_us + p->extra_us[ai][proto];
    if (lat < 0.5) lat = 0.5;
    double bw = out->bw_GBps * eff_at(p->eff[ai][proto], bytes);
    out->lat_us = lat;
    out->bw_GBps = bw;
    out->time_us = lat + (double)bytes / (1000.0 * bw);
    out->algbw = (double)bytes / (out->time_us * 1e3);
    out->busbw = out->algbw * tt_busbw_factor(coll, ctx->nranks);
    return TT_OK;
}

tt_status tt_nccl_row_eval(const tt_tune_ctx *ctx, const tt_measurement *m, double *us, tt_algo *algo, tt_proto *proto)
{
    if (m->topotune_tree)
        return tt_error_set(TT_ERR_UNSUPPORTED,
                            "%s: a run of topotune's executor, not of NCCL (evaluate it with --model topotune)", m->where);
    tt_algo a;
    tt_proto p;
    tt_tune_estimate e;
    tt_status st;
    if ((st = tune_row_candidate(ctx, m, &a, &p)) != TT_OK) return st;
    if ((st = tt_nccl_abs_eval(ctx, m->coll, a, p, m->bytes, &e)) != TT_OK) return st;
    if (!e.enabled)
        return tt_error_set(TT_ERR_UNSUPPORTED, "%s: NCCL's model cannot evaluate %s %s/%s: %s", m->where,
                            tt_coll_name(m->coll), tt_algo_name(a), tt_proto_name(p), e.reason);
    *us = e.time_us;
    if (algo) *algo = a;
    if (proto) *proto = p;
    return TT_OK;
}

tt_status tt_rows_predict(const tt_topo *t, const tt_cluster *base, tt_model_kind model, const tt_model_params *p,
                          const tt_measurement *m, double *pred_us)
{
    if (model != TT_MODEL_NCCL) return tt_calib_predict(t, base, p, m, pred_us);
    tt_cluster c;
    tt_status st = tune_row_cluster(base, m, &c);
    if (st != TT_OK) return st;
    tt_tune_ctx *ctx = NULL;
    if ((st = tt_tune_ctx_new(t, &c, TT_MODEL_NCCL, p, &ctx)) != TT_OK) return st;
    st = tt_nccl_row_eval(ctx, m, pred_us, NULL, NULL);
    tt_tune_ctx_free(ctx);
    return st;
}
