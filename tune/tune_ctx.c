/*
 * tune_ctx.c - a prepared model: cluster, channels, parameters; evaluation and arg-min.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

tt_status tt_tune_ctx_new(const tt_topo *t, const tt_cluster *c, tt_model_kind model,
                          const tt_model_params *params, tt_tune_ctx **out)
{
    *out = NULL;
    if (!t || !c) return tt_error_set(TT_ERR_INVALID, "tune: no topology or cluster");
    if (model != TT_MODEL_NCCL && model != TT_MODEL_TOPOTUNE)
        return tt_error_set(TT_ERR_INVALID, "tune: unknown model %d", (int)model);
    tt_status st = tt_cluster_validate(c);
    if (st != TT_OK) return st;
    tt_tune_ctx *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
    ctx->topo = t;
    ctx->cl = *c;
    ctx->model = model;
    if (params) ctx->params = *params;
    else tt_model_params_default(&ctx->params);
    ctx->nnodes = c->nodes;
    ctx->nranks = c->nodes * c->gpus_per_node;
    /* MODEL ASSUMPTION: several NICs per GPU are one NCCL device per GPU at their summed speed: NCCL
     * merges the ports of one NIC (NCCL_NET_MERGE_LEVEL=PORT, e.g. OCI's 16 x 200 Gb/s = 8 dual-port
     * cards) and aws-ofi-nccl stripes the EFA devices of one GPU (p5: 32 x 100 Gb/s = 8 devices of 4
     * rails), so NCCL's graphs see one NIC per GPU; docs/model.md "Fabrics" */
    tt_cluster cs = *c;
    if (c->nodes > 1 && c->nics_per_node > c->gpus_per_node && c->nics_per_node % c->gpus_per_node == 0) {
        ctx->nics_fused = c->nics_per_node / c->gpus_per_node;
        cs.nics_per_node = c->gpus_per_node;
        cs.nic_gbps = c->nic_gbps * ctx->nics_fused;
        cs.rails = cs.nics_per_node;
    }
    st = tt_tune_channels_compute(t, &cs, &ctx->ch);
    if (st == TT_OK) {
        tt_cluster c1 = *c;
        c1.nodes = 1;
        st = c->nodes == 1 ? (ctx->ch1 = ctx->ch, TT_OK) : tt_tune_channels_compute(t, &c1, &ctx->ch1);
    }
    if (st != TT_OK) { free(ctx); return st; }
    tune_nccl_prepare(ctx); /* also fills ll128_ok used by both models */
    *out = ctx;
    return TT_OK;
}

void tt_tune_ctx_free(tt_tune_ctx *ctx) { free(ctx); }
const tt_tune_channels *tt_tune_ctx_channels(const tt_tune_ctx *ctx) { return &ctx->ch; }
const tt_cluster *tt_tune_ctx_cluster(const tt_tune_ctx *ctx) { return &ctx->cl; }
tt_model_kind tt_tune_ctx_model(const tt_tune_ctx *ctx) { return ctx->model; }
int tt_tune_ctx_nranks(const tt_tune_ctx *ctx) { return ctx->nranks; }

tt_status tt_tune_eval(const tt_tune_ctx *ctx, tt_coll coll, tt_algo algo, tt_proto proto,
                       uint64_t bytes, tt_tune_estimate *out)
{
    if ((unsigned)coll >= TT_COLL_COUNT || (unsigned)algo >= TT_ALGO_COUNT || (unsigned)proto >= TT_PROTO_COUNT)
        return tt_error_set(TT_ERR_INVALID, "tune: bad collective/algorithm/protocol id %d/%d/%d",
                            (int)coll, (int)algo, (int)proto);
    /* the default model: NCCL's algorithms as NCCL runs them (tune_model_cluster.c), topotune's own and the
     * binary tree of topotune's executor (rows it ran) in tune_model_topotune.c */
    tt_status st = ctx->model == TT_MODEL_NCCL ? tune_nccl_eval(ctx, coll, algo, proto, bytes, out)
                   : algo < TT_ALGO_NCCL_COUNT && !(algo == TT_ALGO_TREE && ctx->binary_tree)
                       ? tune_cluster_eval(ctx, coll, algo, proto, bytes, out)
                       : tune_topotune_eval(ctx, coll, algo, proto, bytes, out);
    if (st != TT_OK || !out->enabled) return st;
    if (out->time_us > 0) {
        out->algbw = (double)bytes / (out->time_us * 1e3);
        out->busbw = out->algbw * tt_busbw_factor(coll, ctx->nranks);
    }
    return TT_OK;
}

tt_status tt_tune_best(const tt_tune_ctx *ctx, tt_coll coll, uint64_t bytes, int nccl_only,
                       tt_algo *algo, tt_proto *proto, tt_tune_estimate *out)
{
    int found = 0;
    int na = nccl_only ? TT_ALGO_NCCL_COUNT : TT_ALGO_COUNT;
    for (int a = 0; a < na; a++) {
        for (int p = 0; p < TT_PROTO_COUNT; p++) {
            tt_tune_estimate e;
            tt_status st = tt_tune_eval(ctx, coll, (tt_algo)a, (tt_proto)p, bytes, &e);
            if (st != TT_OK) return st;
            if (!e.enabled || e.time_us < 0) continue;
            if (!found || e.time_us < out->time_us) {
                *out = e;
                *algo = (tt_algo)a;
                *proto = (tt_proto)p;
                found = 1;
            }
        }
    }
    if (!found)
        return tt_error_set(TT_ERR_NOT_FOUND, "tune: no enabled algorithm/protocol for %s at %llu bytes",
                            tt_coll_name(coll), (unsigned long long)bytes);
    return TT_OK;
}

tt_status tt_tune_crossover(const tt_tune_ctx *ctx, tt_coll coll, uint64_t lo, uint64_t hi, int nccl_only,
                            uint64_t *at)
{
    *at = 0;
    if (hi <= lo) return tt_error_set(TT_ERR_INVALID, "tune: crossover range %llu..%llu is empty",
                                      (unsigned long long)lo, (unsigned long long)hi);
    tt_algo a0, a;
    tt_proto p0, p;
    tt_tune_estimate e;
    tt_status st = tt_tune_best(ctx, coll, lo, nccl_only, &a0, &p0, &e);
    if (st != TT_OK) return st;
    if ((st = tt_tune_best(ctx, coll, hi, nccl_only, &a, &p, &e)) != TT_OK) return st;
    if (a == a0 && p == p0) return TT_OK;
    /* invariant: choice(lo) == (a0, p0), choice(hi) differs */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((st = tt_tune_best(ctx, coll, mid, nccl_only, &a, &p, &e)) != TT_OK) return st;
        if (a == a0 && p == p0) lo = mid;
        else hi = mid;
    }
    *at = hi;
    return TT_OK;
}

tt_status tt_nccl_choice(const tt_tune_ctx *ctx, tt_coll coll, uint64_t bytes, tt_algo *algo, tt_proto *proto)
{
    /* NCCL's own tables are built in every context (tune_nccl_prepare); strict < over (algorithm,
     * protocol) ids, ties to the lower one, as topoGetAlgoInfo */
    int found = 0;
    double best = 0;
    for (int a = 0; a < TT_ALGO_NCCL_COUNT; a++)
        for (int p = 0; p < TT_PROTO_COUNT; p++) {
            tt_tune_estimate e;
            tt_status st = tune_nccl_eval(ctx, coll, (tt_algo)a, (tt_proto)p, bytes, &e);
            if (st != TT_OK) return st;
            if (!e.enabled || e.time_us < 0) continue;
            if (!found || e.time_us < best) {
                best = e.time_us;
                *algo = (tt_algo)a;
                *proto = (tt_proto)p;
                found = 1;
            }
        }
    if (!found)
        return tt_error_set(TT_ERR_NOT_FOUND, "tune: NCCL has no algorithm/protocol for %s at %llu bytes",
                            tt_coll_name(coll), (unsigned long long)bytes);
    return TT_OK;
}

tt_status tune_row_candidate(const tt_tune_ctx *ctx, const tt_measurement *m, tt_algo *algo, tt_proto *proto)
{
    if (m->algo >= 0 && m->proto >= 0) {
        *algo = (tt_algo)m->algo;
        *proto = (tt_proto)m->proto;
        return TT_OK;
    }
    if (m->algo < 0 && m->proto < 0) return tt_nccl_choice(ctx, m->coll, m->bytes, algo, proto);
    /* one of the two forced (NCCL_ALGO or NCCL_PROTO): NCCL picks the other by its model */
    int found = 0;
    double best = 0;
    for (int a = 0; a < TT_ALGO_NCCL_COUNT; a++)
        for (int p = 0; p < TT_PROTO_COUNT; p++) {
            if ((m->algo >= 0 && a != m->algo) || (m->proto >= 0 && p != m->proto)) continue;
            tt_tune_estimate e;
            tt_status st = tune_nccl_eval(ctx, m->coll, (tt_algo)a, (tt_proto)p, m->bytes, &e);
            if (st != TT_OK) return st;
            if (e.enabled && (!found || e.time_us < best)) {
                found = 1;
                best = e.time_us;
                *algo = (tt_algo)a;
                *proto = (tt_proto)p;
            }
        }
    if (!found) return tt_error_set(TT_ERR_UNSUPPORTED, "%s: NCCL's model has no candidate for this row", m->where);
    return TT_OK;
}

/* The cluster a measured row ran on: the base cluster with the row's node and rank counts (refused when
 * they do not fit the topology or a multi-node row has no NIC). */
tt_status tune_row_cluster(const tt_cluster *base, const tt_measurement *m, tt_cluster *c)
{
    *c = *base;
    int nodes = m->nodes > 0 ? m->nodes : base->nodes;
    int nranks = m->nranks > 0 ? m->nranks : base->nodes * base->gpus_per_node;
    if (nranks % nodes)
        return tt_error_set(TT_ERR_INVALID, "%s: %d ranks do not split evenly over %d nodes", m->where, nranks, nodes);
    c->nodes = nodes;
    c->gpus_per_node = nranks / nodes;
    if (c->gpus_per_node > c->topo_gpus)
        return tt_error_set(TT_ERR_INVALID, "%s: %d ranks per node but the topology has %d GPUs", m->where,
                            c->gpus_per_node, c->topo_gpus);
    if (nodes > 1 && c->nics_per_node == 0)
        return tt_error_set(TT_ERR_INVALID,
                            "%s: measured on %d nodes but the cluster has no NIC (give --nics-per-node/--nic-speed)",
                            m->where, nodes);
    return tt_cluster_validate(c);
}
