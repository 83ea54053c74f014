/*
 * tune_model_topotune.c - our model (mode "topotune", the default).
 *
 * Alpha-beta per link class with pipelining, protocol efficiency and per-channel limits:
 *   step(class)    = alpha[class] + step_us[proto]           (one hop of one chunk)
 *   B(class, c)    = min(Bclass * eff[proto], c * per_channel[proto])
 *   Bclass         = beta[class] if set, else the topology bandwidth * efficiency[class]:
 *                      NVL/PCI/...: ring channels * bwIntra (the channel search), per GPU;
 *                      NET:         sum over the node's NICs of min(path, port), per node
 *                                   (beta NET is per NIC, times NICs per node).
 *   time           = base[proto] + c * channel_us + latency part + bandwidth part
 * Ring (n ranks, N nodes): allreduce 2(n-1) steps, 2(N-1) of them on the network, moving
 * 2(n-1)/n * S per rank; allgather/reducescatter (n-1) steps, (n-1)/n * S; broadcast/reduce
 * a pipelined chain of n-1 hops.  Tree (allreduce): pipelined chain inside the node plus a
 * binary tree of depth ceil(log2 N) across nodes, up then down; every GPU sends 2S on its
 * egress link and through its channels (reduce up, broadcast down; S when the chain is only
 * two GPUs of one node: no GPU is interior), every node 2S on the
 * network (double binary tree).  Pipelines move k = ceil(S/c/chunk) chunks:
 * (hops + k - 1) chunk times.  RD/RHD/HIER follow the textbook step counts (docs/model.md).
 * Each algorithm's conditions and latency/bandwidth parts are its hooks in tune_algos.c; this
 * file holds what every algorithm shares (link rates, channel candidates, the best of them).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tune_internal.h"

tt_status tune_topotune_eval(const struct tt_tune_ctx *ctx, tt_coll coll, tt_algo algo, tt_proto proto,
                             uint64_t bytes, tt_tune_estimate *out)
{
    memset(out, 0, sizeof(*out));
    const tt_model_params *P = &ctx->params;
    const tt_proto_params *pp = &P->proto[proto];
    const tt_tune_channels *ch = &ctx->ch;
    int n = ctx->nranks, N = ctx->nnodes, g = n / N;
    double S = (double)bytes;
    int is_ar = coll == TT_COLL_ALLREDUCE;
    int bcred = coll == TT_COLL_BROADCAST || coll == TT_COLL_REDUCE;
#define OFF(...) do { snprintf(out->reason, sizeof out->reason, __VA_ARGS__); return TT_OK; } while (0)
    if (n == 1) {
        if (!(algo == TT_ALGO_RING && proto == TT_PROTO_SIMPLE)) OFF("one rank: a local copy (ring/simple)");
        out->enabled = 1;
        out->lat_us = pp->base_us;
        out->time_us = pp->base_us;
        out->channels = 1;
        return TT_OK;
    }
    /* the algorithm's own conditions (tune_algos.c) */
    const tune_algo_cost *hooks = tune_algo_cost_of(algo);
    tune_topo_eval e = {0};
    e.ctx = ctx; e.pp = pp; e.coll = coll; e.algo = algo; e.proto = proto;
    e.n = n; e.N = N; e.g = g; e.is_ar = is_ar; e.bcred = bcred; e.S = S;
    if (hooks && hooks->topo_off && hooks->topo_off(&e, out->reason, sizeof out->reason)) return TT_OK;
    if (proto == TT_PROTO_LL128 && !ctx->ll128_ok[TT_ALGO_RING]) {
        char why[120];
        tune_ll128_allowed(ctx, &ch->ring, why, sizeof why);
        OFF("%s", why);
    }
    const tt_graph_info *gr = algo == TT_ALGO_TREE ? &ch->tree : &ch->ring;
    if (!gr->found) OFF("no %s graph for this topology", tt_algo_name(algo));

    tt_link_class cin = tune_link_class_of(ch->ring.type_intra);
    e.a_in = P->link[cin].alpha_us + pp->step_us;
    e.a_net = P->link[TT_LCLASS_NET].alpha_us + pp->step_us;
    double bin = P->link[cin].beta_GBps > 0 ? P->link[cin].beta_GBps
                                            : ch->ring.nchannels * ch->ring.bw_intra * P->link[cin].efficiency;
    double bnet = P->link[TT_LCLASS_NET].beta_GBps > 0 ? P->link[TT_LCLASS_NET].beta_GBps * ctx->cl.nics_per_node
                                                       : ch->node_net_bw * P->link[TT_LCLASS_NET].efficiency;
    if (g == 1) bin = 1e9;
    e.bin = bin;
    e.bnet = bnet;
    e.chunk = pp->chunk_bytes;
    int maxc = P->max_channels < ch->comm_channels ? P->max_channels : ch->comm_channels;
    if (maxc < 1) maxc = 1;

    double best_t = -1, best_lat = 0;
    int best_c = 1;
    int cands[16], nc = 0;
    for (int c = 1; c < maxc; c *= 2) cands[nc++] = c;
    cands[nc++] = maxc;
    if (algo == TT_ALGO_NVLS || algo == TT_ALGO_NVLS_TREE) { cands[0] = ch->nvls_channels; nc = 1; }
    for (int ci = 0; ci < nc; ci++) {
        int c = cands[ci];
        double cap = c * pp->per_channel_GBps;
        double Bin = fmin(bin * pp->efficiency, cap) * 1e3;   /* bytes/us */
        double Bnet = fmin(bnet * pp->efficiency, cap) * 1e3; /* per node */
        double Bgnet = fmin(bnet / g * pp->efficiency, cap) * 1e3; /* per GPU when all GPUs use the NICs */
        double lat = pp->base_us + c * P->channel_us, tb = 0;
        e.cap = cap;
        e.c = c;
        e.Bin = Bin;
        e.Bnet = Bnet;
        e.Bgnet = Bgnet;
        if (!hooks || !hooks->topo_cost) OFF("algorithm not modelled"); /* tune_algos.c */
        hooks->topo_cost(&e, &lat, &tb);
        double t = lat + tb;
        if (best_t < 0 || t < best_t * (1 - 1e-9)) {
            best_t = t;
            best_lat = lat;
            best_c = c;
        }
    }
    out->enabled = 1;
    out->lat_us = best_lat;
    out->time_us = best_t;
    out->bw_GBps = best_t > best_lat ? S / ((best_t - best_lat) * 1e3) : 0;
    out->channels = best_c;
    return TT_OK;
#undef OFF
}
