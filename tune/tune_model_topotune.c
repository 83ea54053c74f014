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
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tune_internal.h"

typedef struct {
    double a_in, a_net;   /* step latency, us */
    double b_in, b_net;   /* GB/s: per GPU inside the node, per node on the network */
    double cap;           /* c * per-channel cap, GB/s */
    double chunk;
    int n, N, g;
} env;

/* latency part of a pipeline of hops_in + hops_net hops moving bytes_per_ch in chunks:
 * every hop once, then one step per further chunk at the slowest hop */
static double pipe_time(int hops_in, int hops_net, double bytes_per_ch, double chunk, const env *e)
{
    double k = ceil(bytes_per_ch / chunk);
    if (k < 1) k = 1;
    double amax = hops_net > 0 ? e->a_net : e->a_in;
    return hops_in * e->a_in + hops_net * e->a_net + (k - 1) * amax;
}

static int ceil_log2(int n)
{
    int l = 0;
    while ((1L << l) < n) l++;
    return l;
}

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
    switch (algo) {
    case TT_ALGO_COLLNET_DIRECT:
    case TT_ALGO_COLLNET_CHAIN: OFF("CollNet (SHARP) is not modelled: NCCL_COLLNET_ENABLE=0 assumed");
    case TT_ALGO_PAT: OFF("PAT is not modelled by topotune (use --model nccl)");
    case TT_ALGO_TREE: if (!is_ar) OFF("NCCL runs tree only for allreduce"); break;
    case TT_ALGO_NVLS:
        if (!is_ar) OFF("NVLS is modelled for allreduce only");
        if (!ch->nvls_support) OFF("NVLS needs an NVSwitch (multicast), SM90+ and >= 2 GPUs per node");
        if (N > 1) OFF("NVLS on several nodes needs CollNet; see nvls_tree");
        break;
    case TT_ALGO_NVLS_TREE:
        if (!is_ar) OFF("NVLS tree runs only allreduce");
        if (!ch->nvls_support) OFF("NVLS needs an NVSwitch (multicast), SM90+ and >= 2 GPUs per node");
        if (N == 1) OFF("NVLS tree is for several nodes");
        break;
    case TT_ALGO_RHD: if (!is_ar) OFF("recursive halving-doubling is an allreduce algorithm"); break;
    case TT_ALGO_RD: if (bcred) OFF("recursive doubling does not apply to %s", tt_coll_name(coll)); break;
    case TT_ALGO_HIER:
        if (bcred) OFF("hierarchical is modelled for allreduce/allgather/reducescatter");
        if (N == 1 || g == 1) OFF("hierarchical needs several nodes with several GPUs each");
        break;
    default: break;
    }
    if ((algo == TT_ALGO_NVLS || algo == TT_ALGO_NVLS_TREE) && proto != TT_PROTO_SIMPLE)
        OFF("%s runs only with the simple protocol", tt_algo_name(algo));
    if (proto == TT_PROTO_LL128 && !ctx->ll128_ok[TT_ALGO_RING]) {
        char why[120];
        tune_ll128_allowed(ctx, &ch->ring, why, sizeof why);
        OFF("%s", why);
    }
    const tt_graph_info *gr = algo == TT_ALGO_TREE ? &ch->tree : &ch->ring;
    if (!gr->found) OFF("no %s graph for this topology", tt_algo_name(algo));

    tt_link_class cin = tune_link_class_of(ch->ring.type_intra);
    env e = {0};
    e.n = n; e.N = N; e.g = g;
    e.a_in = P->link[cin].alpha_us + pp->step_us;
    e.a_net = P->link[TT_LCLASS_NET].alpha_us + pp->step_us;
    double bin = P->link[cin].beta_GBps > 0 ? P->link[cin].beta_GBps
                                            : ch->ring.nchannels * ch->ring.bw_intra * P->link[cin].efficiency;
    double bnet = P->link[TT_LCLASS_NET].beta_GBps > 0 ? P->link[TT_LCLASS_NET].beta_GBps * ctx->cl.nics_per_node
                                                       : ch->node_net_bw * P->link[TT_LCLASS_NET].efficiency;
    if (g == 1) bin = 1e9;
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
        switch (algo) {
        case TT_ALGO_RING: {
            double Bring = N > 1 ? fmin(Bin, Bnet) : Bin;
            if (bcred) {
                int hn = N - 1, hi = n - 1 - hn;
                double per = S / c, k = fmax(1, ceil(per / e.chunk));
                lat += pipe_time(hi, hn, per, e.chunk, &e);
                tb = S / Bring * (hi + hn + k - 1) / k;
            } else {
                int steps = is_ar ? 2 * (n - 1) : n - 1;
                int sn = N > 1 ? (is_ar ? 2 * (N - 1) : N - 1) : 0;
                lat += (steps - sn) * e.a_in + sn * e.a_net;
                tb = (is_ar ? 2.0 : 1.0) * (n - 1) / n * S / Bring;
            }
            break;
        }
        case TT_ALGO_TREE: {
            int hi = g - 1, hn = ceil_log2(N);
            double f = (g <= 2 && N == 1) ? 1.0 : 2.0;
            if (ctx->binary_tree && N == 1) {
                /* topotune's executor: a binary tree in heap order, depth floor(log2 g); an
                 * interior rank with two children sends S up and 2S down */
                hi = tune_log2i(g);
                f = g <= 2 ? 1.0 : g <= 4 ? 2.0 : 3.0;
            }
            double per = S / c, k = fmax(1, ceil(per / e.chunk));
            lat += pipe_time(2 * hi, 2 * hn, per, e.chunk, &e);
            /* an interior GPU of the chain sends S up and S down (2S on its egress link, 2S
             * through its channels); with two GPUs and one node there is no interior GPU: the
             * leaf sends S up, the root S down (S per GPU, as a 2-rank ring);
             * a double binary tree sends 2S per node on the network (1.5S interior + S/2 leaf) */
            double t_ch = f * S / (cap * 1e3);
            double t_in = g > 1 ? f * S / (bin * pp->efficiency * 1e3) : 0;
            double t_net = N > 1 ? 2 * S / (bnet * pp->efficiency * 1e3) : 0;
            double tt = fmax(t_ch, fmax(t_in, t_net));
            tb = tt * (2 * (hi + hn) + k - 1) / k;
            break;
        }
        case TT_ALGO_NVLS:
        case TT_ALGO_NVLS_TREE: {
            double bn = ch->gpu_nvl_bw * P->nvls_efficiency * 1e3;
            lat += 2 * P->nvls_alpha_us;
            double t_in = (double)(g - 1) / g * S / bn;
            if (algo == TT_ALGO_NVLS) { tb = t_in; break; }
            int hn = ceil_log2(N);
            double k = fmax(1, ceil(S / c / e.chunk));
            lat += 2 * hn * e.a_net + (k - 1) * e.a_net;
            double t_net = 2 * S / (bnet * pp->efficiency * 1e3); /* double binary tree of heads */
            tb = fmax(t_in, t_net) * (2 * hn + k - 1) / k;
            break;
        }
        case TT_ALGO_RD:
        case TT_ALGO_RHD: {
            int np2 = 1;
            while (np2 * 2 <= n) np2 *= 2;
            int L = tune_log2i(np2);
            if (np2 < n) { /* fold the extra ranks in and out: two full-size steps */
                double Bx = g > 1 ? Bin : Bgnet;
                lat += 2 * (g > 1 ? e.a_in : e.a_net);
                tb += 2 * S / Bx;
            }
            for (int j = 0; j < L; j++) {
                int dist = 1 << j;
                int intra = dist < g;
                double B = intra ? Bin : Bgnet;
                double a = intra ? e.a_in : e.a_net;
                double data;
                if (algo == TT_ALGO_RHD) {
                    data = S / (double)(2 << j); /* halving then doubling: same amounts twice */
                    lat += 2 * a;
                    tb += 2 * data / B;
                } else {
                    data = is_ar ? S : S * dist / n;
                    lat += a;
                    tb += data / B;
                }
            }
            break;
        }
        case TT_ALGO_HIER: {
            int sn = is_ar ? 2 * (N - 1) : N - 1;
            int si = is_ar ? 2 * (g - 1) : g - 1;
            lat += si * e.a_in + sn * e.a_net;
            tb = (is_ar ? 2.0 : 1.0) * ((double)(g - 1) / g * S / Bin + (double)(N - 1) / N * S / Bnet);
            break;
        }
        default:
            OFF("algorithm not modelled");
        }
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
