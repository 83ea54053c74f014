/*
 * tune_model_cluster.c - NCCL's algorithms as NCCL runs them, on one node or a cluster (the
 * default model's ring, tree, NVLS, NVLS tree and PAT; docs/model.md section 4).
 *
 * One model of NCCL's algorithms: the candidates, the graphs (channels, per-channel speeds) and
 * the bandwidth structure are NCCL's own (tune_nccl_prepare: the 2-node trees that run at bwIntra,
 * the NVLS tree's doubled inter-node bandwidth on 2 nodes, the per-channel caps, the protocol
 * factors); what NCCL's cost model leaves out is added, each term a named MODEL ASSUMPTION
 * (tt_model_params, tune_params.c):
 *
 *   network   the NICs carry what the algorithm sends across nodes at the fabric's efficiency
 *             (tt_fabric_params.efficiency of the ports' speed): the algorithm bandwidth is
 *             capped at node_net_bw * efficiency * payload(proto) / traffic(algo), traffic =
 *             bytes each node sends per byte reduced (ring AR 2(n-1)/n, tree AR 1 on 2 nodes and 2
 *             on more, ...);
 *   latency   base[proto] + intra hops * (alpha[intra class] + step[proto]) + network hops *
 *             fabric hop[proto]; hops as the algorithm walks them (ring 2(n-1) steps, 2(N-1) of
 *             them across nodes; tree 2(g-1) in the node and 2 ceil(log2 N) across; NVLS one
 *             multicast step each way, nvls_alpha; PAT log2 n);
 *   channels  NCCL launches fewer channels (CTAs) for small sizes (its launch rule, the
 *             same as --model nccl reports); the bandwidth scales with the channels that run
 *             below the graph's channel count;
 *   pipeline  medium sizes: the data crosses the hops in chunks that grow with the size; the
 *             fill costs min(2 sqrt(pipeline * hops_us * bytes / B), pipeline_cap * hops_us)
 *             (the optimum of a pipeline with a per-chunk cost, up to where the chunks stop
 *             growing); hops_us = the latency part beyond the launch.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tune_internal.h"

static int ceil_log2(long n)
{
    int l = 0;
    while ((1L << l) < n) l++;
    return l;
}

/* bytes a node sends across the network per byte of the collective's buffer (algorithm bytes) */
static double net_traffic(tt_coll coll, tt_algo a, int n, int N)
{
    double f = (double)(n - 1) / n;
    switch (a) {
    case TT_ALGO_RING:
        if (coll == TT_COLL_ALLREDUCE) return 2 * f;
        if (coll == TT_COLL_ALLGATHER || coll == TT_COLL_REDUCESCATTER) return f;
        return 1; /* broadcast / reduce: every node forwards the buffer once */
    case TT_ALGO_TREE:
    case TT_ALGO_NVLS_TREE:
        /* double binary tree: on 2 nodes each node is the root of one tree and the leaf of the
         * other (S/2 up + S/2 down); on more, an interior node sends S/2 up and S/2 to each of two
         * children in one tree and S/2 up as a leaf of the other */
        return N <= 2 ? 1 : 2;
    case TT_ALGO_PAT: return f;
    default: return 2 * f;
    }
}

tt_status tune_cluster_eval(const struct tt_tune_ctx *ctx, tt_coll coll, tt_algo algo, tt_proto proto, uint64_t bytes,
                            tt_tune_estimate *out)
{
    memset(out, 0, sizeof(*out));
    const tt_model_params *P = &ctx->params;
    const tt_proto_params *pp = &P->proto[proto];
    const tt_nccl_proto_params *np = &P->nccl[proto];
    const tt_tune_channels *ch = &ctx->ch;
    const char *why = ctx->why[coll][algo][proto];
    if (why[0]) {
        snprintf(out->reason, sizeof out->reason, "%s", why);
        return TT_OK;
    }
    int n = ctx->nranks, N = ctx->nnodes, g = n / N;
    double S = (double)bytes;
    if (n == 1) {
        out->enabled = 1;
        out->lat_us = out->time_us = np->base_us;
        out->channels = 1;
        return TT_OK;
    }
    const tt_fabric_params *fp = &P->fabric[ctx->cl.fabric];
    /* NCCL's algorithm bandwidth (GB/s), its protocol factors and per-channel caps included */
    double B = ctx->bw[coll][algo][proto];
    if (algo == TT_ALGO_NVLS_TREE) {
        /* the NVLS part inside a node is what NVLink carries there (the node's own NVLS graph), not
         * the multi-node graph's per-head speed that NCCL's search bounds by the NIC path */
        double bus = tune_nccl_nvls_tree_bus(ctx, &ctx->ch1.nvls);
        if (bus > 0) B = bus * n / (2.0 * (n - 1));
    }
    if (algo == TT_ALGO_TREE && coll == TT_COLL_ALLREDUCE && B > 0 && g > 1) {
        /* the chain inside a node: an interior GPU sends the data up and down its NVLink (or PCIe), so the
         * tree runs at half of what one GPU moves (the node's own ring graph); a chain of two GPUs on one
         * node has no interior GPU and runs at the ring's speed (our 2 x H200 runs); that, not NCCL's
         * per-channel tree caps, is the tree's Simple bandwidth, and the protocols keep NCCL's ratios to
         * it (MODEL ASSUMPTION) */
        double per_gpu = ctx->ch1.ring.nchannels * ctx->ch1.ring.bw_intra;
        double chain = per_gpu / (N == 1 && g == 2 ? 1.0 : 2.0);
        double simple = ctx->bw[coll][TT_ALGO_TREE][TT_PROTO_SIMPLE];
        if (simple > 0) B *= chain / simple;
    }
    if (!(B > 0)) {
        snprintf(out->reason, sizeof out->reason, "NCCL's model gives it no bandwidth");
        return TT_OK;
    }
    /* the network at the fabric's efficiency */
    if (N > 1) {
        double net = ch->node_net_bw * fp->efficiency * pp->efficiency / net_traffic(coll, algo, n, N);
        if (net < B) B = net;
    }
    /* channels NCCL launches at this size, against the graph's */
    const tt_graph_info *gr = algo == TT_ALGO_RING ? &ch->ring
                              : (algo == TT_ALGO_NVLS || algo == TT_ALGO_NVLS_TREE) ? &ch->nvls : &ch->tree;
    int c = tune_nccl_launch_channels(ctx, algo, proto, bytes);
    int cg = gr->nchannels > 0 ? gr->nchannels : 1;
    if (algo != TT_ALGO_NVLS && algo != TT_ALGO_NVLS_TREE && c < cg) B *= (double)c / cg;
    /* hops */
    tt_link_class cin = tune_link_class_of(ch->ring.type_intra);
    double a_in = P->link[cin].alpha_us + np->step_us;
    double a_net = fp->hop_us[proto] * (ctx->cl.min_sm < 90 ? fp->hop_scale_pre_sm90 : 1.0);
    double hops = 0, hops_in = 0, hops_net = 0;
    switch (algo) {
    case TT_ALGO_RING:
        if (coll == TT_COLL_BROADCAST || coll == TT_COLL_REDUCE) {
            hops_net = N - 1;
            hops_in = n - 1 - hops_net;
        } else {
            int steps = coll == TT_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
            hops_net = N > 1 ? (coll == TT_COLL_ALLREDUCE ? 2 * (N - 1) : N - 1) : 0;
            hops_in = steps - hops_net;
        }
        break;
    case TT_ALGO_TREE:
        hops_in = 2 * (g - 1);
        hops_net = 2 * ceil_log2(N);
        break;
    case TT_ALGO_NVLS:
        hops = 2 * P->nvls_alpha_us;
        break;
    case TT_ALGO_NVLS_TREE:
        hops = 2 * P->nvls_alpha_us;
        hops_net = 2 * ceil_log2(N);
        break;
    case TT_ALGO_PAT:
        hops_net = ceil_log2(n);
        break;
    default:
        snprintf(out->reason, sizeof out->reason, "%s is not modelled", tt_algo_name(algo));
        return TT_OK;
    }
    /* the pipeline overhead grows with the steps that are not in-node NVLink/PCIe hops: the network
     * and NVLS stages (in-node steps of LL/LL128 forward line by line) */
    double pipe_hops = algo == TT_ALGO_RING ? 0 : hops + hops_net * a_net; /* a ring's own steps are its pipeline */
    hops += hops_in * a_in + hops_net * a_net;
    double lat = np->base_us + hops;
    double Bb = B * 1e3; /* bytes/us */
    double tb = S / Bb;
    /* pipeline overhead of medium sizes: chunks cross the hops one after the other; with chunks
     * that grow with the size, the fill costs 2 sqrt(pipeline * hops * S / B), up to a cap where
     * the chunks stop growing (MODEL ASSUMPTION, fitted on the published corpus) */
    double fill = 2 * sqrt(np->pipeline * pipe_hops * tb);
    if (fill > P->nccl_pipeline_cap * pipe_hops) fill = P->nccl_pipeline_cap * pipe_hops;
    double t = lat + tb + fill;
    out->enabled = 1;
    out->lat_us = lat;
    out->time_us = t;
    out->bw_GBps = t > lat ? S / ((t - lat) * 1e3) : B;
    out->channels = c;
    return TT_OK;
}

double tune_row_launch_us(const tt_model_params *P, const tt_measurement *m)
{
    /* one thread driving G GPUs (nccl-tests -g G) launches the group's kernels one after the other */
    if (m->exec_kind > TT_RANKS_NONE || m->topotune_tree || m->gpus_per_thread <= 1) return 0;
    return (m->gpus_per_thread - 1) * P->group_launch_us;
}
