/*
 * tune_model_nccl.c - NCCL's own cost model (mode "nccl"), rewritten from the documented
 * formulas and constants (NCCL 2.30.7, reference nccl-tuning.md sections 1-6; see
 * docs/model.md).  Bandwidth and latency per (collective, algorithm, protocol) are built
 * once (tune_nccl_prepare, as ncclTopoTuneModel does), then each call costs
 * lat + bytes / (1000 * bw) with NCCL's tree correction factor and ring plateau factor.
 * One operation per group (numPipeOps = 1), buffers not registered, NCCL_ALGO/NCCL_PROTO
 * unset, CollNet disabled (NCCL_COLLNET_ENABLE default), CUDA >= 12 (so the SM90/CUDA 11.8
 * LL128 exclusion never applies), net device HOST (PAT allowed with one GPU per node).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tune_internal.h"

enum { HW_NVLINK = 0, HW_PCI = 1, HW_NET = 2 };

/* baseLatencies[algo][proto], us */
static const double base_lat[TT_ALGO_NCCL_COUNT][3] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}};
/* hwLatencies[hw][algo][proto], us per hop */
static const double hw_lat[3][TT_ALGO_NCCL_COUNT][3] = {
    /* NVLINK */ {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
    /* PCI */ {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    /* NET */ {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}};
/* [compCapIdx: Volta, Ampere, Hopper, Blackwell][N1, N2, N4], GB/s */
static const double ll_max_bws[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
static const double perch_ring_ll128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
static const double perch_tree_ll128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double perch_tree[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
static const double perch_nvls_tree[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
static const double nvls_eff[4] = {0, 0, 0.85, 0.74};
/* treeCorrectionFactor[proto][log2(bytes/64)] */
static const double tree_cf[3][24] = {
    {1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1, 1},
    {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1, 1},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

static int cc_index(int sm) { return sm < 80 ? 0 : sm < 90 ? 1 : sm < 100 ? 2 : 3; }

static const tt_graph_info *graph_for(const struct tt_tune_ctx *ctx, tt_algo a)
{
    switch (a) {
    case TT_ALGO_RING: return &ctx->ch.ring;
    case TT_ALGO_NVLS:
    case TT_ALGO_NVLS_TREE: return &ctx->ch.nvls;
    default: return &ctx->ch.tree; /* tree, PAT (model assumption), collnet */
    }
}

int tune_ll128_allowed(const struct tt_tune_ctx *ctx, const tt_graph_info *g, char *why, size_t wl)
{
    int ccmin = ctx->cl.min_sm, ccmax = ctx->cl.max_sm;
    if (ccmin >= 90 ? g->type_inter > TT_PATH_PXN : g->type_inter > TT_PATH_PXB) {
        snprintf(why, wl, "LL128 off by default: GPU-NIC path %s is beyond %s",
                 tune_path_name(g->type_inter), ccmin >= 90 ? "PXN" : "PXB");
        return 0;
    }
    if (g->type_intra > TT_PATH_NVB) {
        snprintf(why, wl, "LL128 off by default: GPU-GPU path %s is not NVLink (needs <= NVB)",
                 tune_path_name(g->type_intra));
        return 0;
    }
    if (!(ccmin == ccmax || ccmin >= 90)) {
        snprintf(why, wl, "LL128 off by default: mixed GPU architectures (sm %d..%d)", ccmin, ccmax);
        return 0;
    }
    if (ccmin < 70) {
        snprintf(why, wl, "LL128 off by default: sm %d < 70", ccmin);
        return 0;
    }
    return 1;
}

static int allowed_algo(tt_coll c, tt_algo a)
{
    switch (c) {
    case TT_COLL_BROADCAST:
    case TT_COLL_REDUCE: return a == TT_ALGO_RING;
    case TT_COLL_ALLGATHER:
    case TT_COLL_REDUCESCATTER:
        return a == TT_ALGO_RING || a == TT_ALGO_PAT || a == TT_ALGO_NVLS || a == TT_ALGO_COLLNET_DIRECT;
    default: return a != TT_ALGO_PAT;
    }
}

void tune_nccl_prepare(struct tt_tune_ctx *ctx)
{
    const tt_cluster *cl = &ctx->cl;
    int nRanks = ctx->nranks, nNodes = ctx->nnodes;
    int cc = cc_index(cl->min_sm);
    int i2 = nNodes <= 2 ? nNodes - 1 : 2;
    int i1 = nNodes == 1 ? cc : (cl->cpu_vendor == TT_CPU_AMD ? 1 : 0);
    double llmax = ll_max_bws[i1][i2];
    double ppn = (double)nRanks / nNodes;
    double net_overhead = cl->cpu_vendor == TT_CPU_AMD && !cl->cpu_arm ? 2.0 : 1.0;
    memset(ctx->bw, 0, sizeof(ctx->bw));
    memset(ctx->lat, 0, sizeof(ctx->lat));
    for (int a = 0; a < TT_ALGO_NCCL_COUNT; a++) {
        char w[120] = "";
        ctx->ll128_ok[a] = tune_ll128_allowed(ctx, graph_for(ctx, (tt_algo)a), w, sizeof w);
    }
    for (int coll = 0; coll < TT_COLL_COUNT; coll++) {
        int nsteps = coll == TT_COLL_ALLREDUCE ? 2 * (nRanks - 1)
                     : (coll == TT_COLL_ALLGATHER || coll == TT_COLL_REDUCESCATTER) ? nRanks - 1 : nRanks;
        int agrs = coll == TT_COLL_ALLGATHER || coll == TT_COLL_REDUCESCATTER;
        for (int a = 0; a < TT_ALGO_COUNT; a++) {
            for (int p = 0; p < TT_PROTO_COUNT; p++) {
                char *why = ctx->why[coll][a][p];
                why[0] = 0;
                if (a >= TT_ALGO_NCCL_COUNT) {
                    snprintf(why, 120, "not an NCCL algorithm (topotune model only)");
                    continue;
                }
                const tt_graph_info *g = graph_for(ctx, (tt_algo)a);
                if (nRanks == 1) {
                    if (!(a == TT_ALGO_RING && p == TT_PROTO_SIMPLE))
                        snprintf(why, 120, "one rank: NCCL only runs a ring/simple copy");
                    continue;
                }
                if (!allowed_algo((tt_coll)coll, (tt_algo)a)) {
                    snprintf(why, 120, "NCCL does not run %s with %s", tt_coll_name((tt_coll)coll), tt_algo_name((tt_algo)a));
                    continue;
                }
                if ((a == TT_ALGO_NVLS || a == TT_ALGO_NVLS_TREE || a == TT_ALGO_PAT) && p != TT_PROTO_SIMPLE) {
                    snprintf(why, 120, "%s runs only with the simple protocol", tt_algo_name((tt_algo)a));
                    continue;
                }
                if (a == TT_ALGO_COLLNET_DIRECT || a == TT_ALGO_COLLNET_CHAIN) {
                    snprintf(why, 120, "CollNet off: NCCL_COLLNET_ENABLE=0 (default; no SHARP network)");
                    continue;
                }
                if (a == TT_ALGO_PAT) {
                    if (!(nNodes == nRanks && cl->min_sm >= 60)) {
                        snprintf(why, 120, "PAT needs one GPU per node (nNodes == nRanks)");
                        continue;
                    }
                }
                if (a == TT_ALGO_NVLS || a == TT_ALGO_NVLS_TREE) {
                    if (!ctx->ch.nvls_support) {
                        snprintf(why, 120, "NVLS needs an NVSwitch (multicast), SM90+ and >= 2 GPUs per node");
                        continue;
                    }
                    if (a == TT_ALGO_NVLS_TREE && nNodes == 1) {
                        snprintf(why, 120, "NVLS tree is off on a single node");
                        continue;
                    }
                    if (a == TT_ALGO_NVLS && nNodes > 1) {
                        snprintf(why, 120, "NVLS on several nodes needs CollNet (NCCL_COLLNET_ENABLE=0)");
                        continue;
                    }
                    if (coll != TT_COLL_ALLREDUCE && ppn > 32) {
                        snprintf(why, 120, "NVLS for non-allreduce needs <= 32 local ranks");
                        continue;
                    }
                    if (g->nchannels < 2) {
                        snprintf(why, 120, "NVLS graph has fewer than 2 channels");
                        continue;
                    }
                }
                if (!g->found) {
                    snprintf(why, 120, "no %s graph for this topology", tt_algo_name((tt_algo)a));
                    continue;
                }
                if (p == TT_PROTO_LL128 && !ctx->ll128_ok[a]) {
                    tune_ll128_allowed(ctx, g, why, 120);
                    continue;
                }
                /* ---- bandwidth ---- */
                double bw = nNodes <= 2 ? g->bw_intra : g->bw_inter;
                if (a == TT_ALGO_NVLS || a == TT_ALGO_NVLS_TREE) {
                    double intra = g->bw_intra * nvls_eff[cc] * (g->nchannels - 1) / g->nchannels;
                    intra *= coll == TT_COLL_ALLREDUCE ? 2.0 : (ppn - 1) / ppn;
                    double inter = g->bw_inter * ((nNodes <= 2 && a == TT_ALGO_NVLS_TREE) ? 2 : 1);
                    bw = intra < inter ? intra : inter;
                    if (a == TT_ALGO_NVLS_TREE && perch_nvls_tree[cc][i2] < bw) bw = perch_nvls_tree[cc][i2];
                }
                double busbw = g->nchannels * bw;
                int nch = g->nchannels;
                if (a == TT_ALGO_RING && p == TT_PROTO_LL) busbw = fmin(llmax, busbw * 0.5);
                if (a == TT_ALGO_RING && p == TT_PROTO_LL128) busbw = fmin(busbw * 0.92, nch * perch_ring_ll128[cc][i2]);
                if (a == TT_ALGO_TREE && coll == TT_COLL_ALLREDUCE) busbw = fmin(busbw * 0.92, nch * perch_tree[cc][i2]);
                if (a == TT_ALGO_TREE && p == TT_PROTO_LL) busbw = fmin(busbw / 3.8, llmax);
                if (a == TT_ALGO_TREE && p == TT_PROTO_LL128)
                    busbw = fmin(busbw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * perch_tree_ll128[cc][i2]);
                if (a == TT_ALGO_TREE && ctx->ch.tree.pattern == TT_PATTERN_TREE) busbw *= 0.85;
                if (a == TT_ALGO_PAT) busbw *= 0.75;
                if (!(a != TT_ALGO_RING && agrs))
                    busbw *= (a == TT_ALGO_RING || a == TT_ALGO_NVLS || a == TT_ALGO_NVLS_TREE)
                                 ? (double)nRanks / nsteps : 0.5;
                ctx->bw[coll][a][p] = (float)busbw;
                if (!(busbw > 0)) {
                    snprintf(why, 120, "model bandwidth is 0");
                    continue;
                }
                /* ---- latency ---- */
                double lat = base_lat[a][p];
                int intra_hw = g->type_intra == TT_PATH_NVL ? HW_NVLINK : HW_PCI;
                int hw = nNodes == 1 ? intra_hw : HW_NET;
                double intra_lat = hw_lat[intra_hw][a][p];
                double inter_lat = (ppn == 1 ? hw_lat[HW_NET][TT_ALGO_TREE][p] : hw_lat[HW_NET][a][p]) +
                                   g->latency_inter + (p == TT_PROTO_SIMPLE ? g->latency_inter : 0);
                if (a == TT_ALGO_RING) {
                    if (coll == TT_COLL_BROADCAST || coll == TT_COLL_REDUCE) {
                        lat += g->same_channels ? hw_lat[hw][TT_ALGO_RING][p]
                                                : nsteps * (p == TT_PROTO_SIMPLE ? hw_lat[hw][TT_ALGO_TREE][p]
                                                                                 : hw_lat[hw][TT_ALGO_RING][p]);
                    } else {
                        double no = nNodes > 1 ? net_overhead * (p == TT_PROTO_SIMPLE ? 3 : 1) : 0;
                        if (no > intra_lat) intra_lat = no;
                        int ninter = nNodes == 1 ? 0 : (coll == TT_COLL_ALLREDUCE ? 2 * (nNodes - 1) : nNodes - 1);
                        lat += (nsteps - ninter) * intra_lat + ninter * inter_lat;
                    }
                } else if (a == TT_ALGO_TREE) {
                    lat += 2 * ((nRanks / nNodes - 1) * intra_lat + tune_log2i(nNodes) * inter_lat);
                } else if (a == TT_ALGO_NVLS) {
                    lat = intra_lat + (nNodes > 1 ? inter_lat : 0);
                } else if (a == TT_ALGO_NVLS_TREE) {
                    lat += intra_lat + 2 * tune_log2i(nNodes) * inter_lat;
                } else if (a == TT_ALGO_PAT) {
                    lat += tune_log2i(nNodes) * (inter_lat / 3.5) + nRanks * 2.8;
                }
                ctx->lat[coll][a][p] = (float)lat;
            }
        }
    }
}

/* launch shape, topoGetAlgoInfo: channels reduced for small sizes */
int tune_nccl_launch_channels(const struct tt_tune_ctx *ctx, tt_algo a, tt_proto p, uint64_t bytes)
{
    if (a == TT_ALGO_NVLS || a == TT_ALGO_NVLS_TREE) {
        int nc = ctx->ch.nvls_channels;
        if (ctx->nnodes > 1 && ctx->ch.comm_channels < nc) nc = ctx->ch.comm_channels;
        return nc;
    }
    int nc = ctx->ch.comm_channels;
    int nt;
    if (a == TT_ALGO_PAT) return nc; /* maxThreads[PAT] is never set: no reduction */
    if (p == TT_PROTO_LL) nt = 512;
    else if (p == TT_PROTO_LL128) nt = 640;
    else if (a == TT_ALGO_RING) nt = ctx->ch.ring.bw_intra * ctx->ch.ring.nchannels <= 12.0 ? 256 : 512;
    else if (a == TT_ALGO_TREE) nt = 512;
    else nt = 640;
    double thr = p == TT_PROTO_SIMPLE ? 64 : 8;
    if (a == TT_ALGO_RING && p == TT_PROTO_LL) thr *= ctx->nranks;
    while ((double)bytes < (double)nc * nt * thr && nc >= 2) nc--;
    return nc;
}

tt_status tune_nccl_eval(const struct tt_tune_ctx *ctx, tt_coll coll, tt_algo algo, tt_proto proto,
                         uint64_t bytes, tt_tune_estimate *out)
{
    memset(out, 0, sizeof(*out));
    const char *why = ctx->why[coll][algo][proto];
    if (why[0]) {
        snprintf(out->reason, sizeof out->reason, "%s", why);
        return TT_OK;
    }
    if (ctx->nranks == 1) {
        out->enabled = 1;
        out->time_us = 0;
        out->lat_us = 0;
        out->channels = 1;
        return TT_OK;
    }
    float bw = ctx->bw[coll][algo][proto];
    float lat = ctx->lat[coll][algo][proto];
    int ls = -1;
    for (uint64_t b = bytes >> 6; b; b >>= 1) ls++;
    if (algo == TT_ALGO_TREE && coll == TT_COLL_ALLREDUCE && ls >= 0 && ls < 23) bw *= (float)tree_cf[proto][ls];
    if (algo == TT_ALGO_NVLS_TREE && coll == TT_COLL_ALLREDUCE && ls >= 0 && ls < 24 && ctx->cl.min_sm >= 100 &&
        !ctx->cl.cpu_arm)
        bw *= (float)tree_cf[proto][ls];
    if (algo == TT_ALGO_RING && proto == TT_PROTO_SIMPLE && ctx->nnodes > 1 && coll == TT_COLL_ALLREDUCE &&
        bytes / ((uint64_t)ctx->ch.comm_channels * ctx->nranks) >= 64)
        lat *= ctx->cl.min_sm < 80 ? 1.9f : 1.4f;
    float t = lat + (float)bytes / (1000.0f * bw);
    out->enabled = 1;
    out->lat_us = lat;
    out->bw_GBps = bw;
    out->time_us = t;
    out->channels = tune_nccl_launch_channels(ctx, algo, proto, bytes);
    return TT_OK;
}

double tune_nccl_nvls_tree_bus(const struct tt_tune_ctx *ctx, const tt_graph_info *intra)
{
    /* NCCL's NVLS-tree bus bandwidth with the intra-node NVLS part taken from `intra` (a graph of the
     * node alone), capped per channel as NCCL does (perChMaxNVLSTreeBws); the inter-node part is the
     * caller's */
    int cc = cc_index(ctx->cl.min_sm);
    int i2 = ctx->nnodes <= 2 ? ctx->nnodes - 1 : 2;
    if (intra->nchannels < 2 || !(nvls_eff[cc] > 0)) return 0;
    double bus = intra->nchannels * intra->bw_intra * nvls_eff[cc] * (intra->nchannels - 1) / intra->nchannels * 2.0;
    double cap = perch_nvls_tree[cc][i2] * ctx->ch.nvls.nchannels;
    return bus < cap ? bus : cap;
}
