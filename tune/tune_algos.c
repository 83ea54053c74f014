/*
 * tune_algos.c - the models' cost hooks per algorithm, one table keyed by the registry's id
 * (common/common_algos.c; the executor's schedules: exec/exec_algos.c):
 *  - topotune's model (tune_model_topotune.c): where the algorithm does not apply, and its latency
 *    and bandwidth parts at c channels (alpha-beta per link class, docs/model.md);
 *  - the executor-shaped model for host ranks (tune_model_exec_host.c): an AllReduce's terms,
 *    following exec/exec_algo_*.c (docs/model.md, "Host ranks").
 * Algorithms neither model covers have no hooks: the models say "not modelled".
 */
#include <math.h>
#include <stdio.h>

#include "tune_internal.h"

/* ---- topotune's model ---- */

#define OFF(...) do { snprintf(why, wl, __VA_ARGS__); return 1; } while (0)

/* latency part of a pipeline of hops_in + hops_net hops moving bytes_per_ch in chunks:
 * every hop once, then one step per further chunk at the slowest hop */
static double pipe_time(int hops_in, int hops_net, double bytes_per_ch, double chunk, const tune_topo_eval *e)
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

static int off_collnet(const tune_topo_eval *e, char *why, size_t wl)
{
    OFF("CollNet (SHARP) is not modelled: NCCL_COLLNET_ENABLE=0 assumed");
}

static int off_pat(const tune_topo_eval *e, char *why, size_t wl)
{
    OFF("PAT is not modelled by topotune (use --model nccl)");
}

static int off_tree(const tune_topo_eval *e, char *why, size_t wl)
{
    if (!e->is_ar) OFF("NCCL runs tree only for allreduce");
    return 0;
}

static int off_nvls(const tune_topo_eval *e, char *why, size_t wl)
{
    if (!e->is_ar) OFF("NVLS is modelled for allreduce only");
    if (!e->ctx->ch.nvls_support) OFF("NVLS needs an NVSwitch (multicast), SM90+ and >= 2 GPUs per node");
    if (e->N > 1) OFF("NVLS on several nodes needs CollNet; see nvls_tree");
    if (e->proto != TT_PROTO_SIMPLE) OFF("%s runs only with the simple protocol", tt_algo_name(e->algo));
    return 0;
}

static int off_nvls_tree(const tune_topo_eval *e, char *why, size_t wl)
{
    if (!e->is_ar) OFF("NVLS tree runs only allreduce");
    if (!e->ctx->ch.nvls_support) OFF("NVLS needs an NVSwitch (multicast), SM90+ and >= 2 GPUs per node");
    if (e->N == 1) OFF("NVLS tree is for several nodes");
    if (e->proto != TT_PROTO_SIMPLE) OFF("%s runs only with the simple protocol", tt_algo_name(e->algo));
    return 0;
}

static int off_rhd(const tune_topo_eval *e, char *why, size_t wl)
{
    if (!e->is_ar) OFF("recursive halving-doubling is an allreduce algorithm");
    return 0;
}

static int off_rd(const tune_topo_eval *e, char *why, size_t wl)
{
    if (e->bcred) OFF("recursive doubling does not apply to %s", tt_coll_name(e->coll));
    return 0;
}

static int off_hier(const tune_topo_eval *e, char *why, size_t wl)
{
    if (e->bcred) OFF("hierarchical is modelled for allreduce/allgather/reducescatter");
    if (e->N == 1 || e->g == 1) OFF("hierarchical needs several nodes with several GPUs each");
    return 0;
}
#undef OFF

/* Ring (n ranks, N nodes): allreduce 2(n-1) steps, 2(N-1) of them on the network, moving
 * 2(n-1)/n * S per rank; allgather/reducescatter (n-1) steps, (n-1)/n * S; broadcast/reduce
 * a pipelined chain of n-1 hops. */
static void cost_ring(const tune_topo_eval *e, double *lat, double *tb)
{
    int n = e->n, N = e->N, c = e->c, is_ar = e->is_ar;
    double S = e->S;
    double Bring = N > 1 ? fmin(e->Bin, e->Bnet) : e->Bin;
    if (e->bcred) {
        int hn = N - 1, hi = n - 1 - hn;
        double per = S / c, k = fmax(1, ceil(per / e->chunk));
        *lat += pipe_time(hi, hn, per, e->chunk, e);
        *tb = S / Bring * (hi + hn + k - 1) / k;
    } else {
        int steps = is_ar ? 2 * (n - 1) : n - 1;
        int sn = N > 1 ? (is_ar ? 2 * (N - 1) : N - 1) : 0;
        *lat += (steps - sn) * e->a_in + sn * e->a_net;
        *tb = (is_ar ? 2.0 : 1.0) * (n - 1) / n * S / Bring;
    }
}

/* Tree (allreduce): pipelined chain inside the node plus a binary tree of depth ceil(log2 N)
 * across nodes, up then down. */
static void cost_tree(const tune_topo_eval *e, double *lat, double *tb)
{
    int g = e->g, N = e->N, c = e->c;
    double S = e->S, eff = e->pp->efficiency;
    int hi = g - 1, hn = ceil_log2(N);
    double f = (g <= 2 && N == 1) ? 1.0 : 2.0;
    if (e->ctx->binary_tree && N == 1) {
        /* topotune's executor: a binary tree in heap order, depth floor(log2 g); an
         * interior rank with two children sends S up and 2S down */
        hi = tune_log2i(g);
        f = g <= 2 ? 1.0 : g <= 4 ? 2.0 : 3.0;
    }
    double per = S / c, k = fmax(1, ceil(per / e->chunk));
    *lat += pipe_time(2 * hi, 2 * hn, per, e->chunk, e);
    /* an interior GPU of the chain sends S up and S down (2S on its egress link, 2S
     * through its channels); with two GPUs and one node there is no interior GPU: the
     * leaf sends S up, the root S down (S per GPU, as a 2-rank ring);
     * a double binary tree sends 2S per node on the network (1.5S interior + S/2 leaf) */
    double t_ch = f * S / (e->cap * 1e3);
    double t_in = g > 1 ? f * S / (e->bin * eff * 1e3) : 0;
    double t_net = N > 1 ? 2 * S / (e->bnet * eff * 1e3) : 0;
    double tt = fmax(t_ch, fmax(t_in, t_net));
    *tb = tt * (2 * (hi + hn) + k - 1) / k;
}

static void cost_nvls(const tune_topo_eval *e, double *lat, double *tb)
{
    const tt_model_params *P = &e->ctx->params;
    int g = e->g, N = e->N, c = e->c;
    double S = e->S;
    double bn = e->ctx->ch.gpu_nvl_bw * P->nvls_efficiency * 1e3;
    *lat += 2 * P->nvls_alpha_us;
    double t_in = (double)(g - 1) / g * S / bn;
    if (e->algo == TT_ALGO_NVLS) { *tb = t_in; return; }
    int hn = ceil_log2(N);
    double k = fmax(1, ceil(S / c / e->chunk));
    *lat += 2 * hn * e->a_net + (k - 1) * e->a_net;
    double t_net = 2 * S / (e->bnet * e->pp->efficiency * 1e3); /* double binary tree of heads */
    *tb = fmax(t_in, t_net) * (2 * hn + k - 1) / k;
}

/* RD / RHD: the textbook step counts (docs/model.md); extra ranks folded in and out */
static void cost_rd_rhd(const tune_topo_eval *e, double *lat, double *tb)
{
    int n = e->n, g = e->g;
    double S = e->S;
    int np2 = 1;
    while (np2 * 2 <= n) np2 *= 2;
    int L = tune_log2i(np2);
    if (np2 < n) { /* fold the extra ranks in and out: two full-size steps */
        double Bx = g > 1 ? e->Bin : e->Bgnet;
        *lat += 2 * (g > 1 ? e->a_in : e->a_net);
        *tb += 2 * S / Bx;
    }
    for (int j = 0; j < L; j++) {
        int dist = 1 << j;
        int intra = dist < g;
        double B = intra ? e->Bin : e->Bgnet;
        double a = intra ? e->a_in : e->a_net;
        double data;
        if (e->algo == TT_ALGO_RHD) {
            data = S / (double)(2 << j); /* halving then doubling: same amounts twice */
            *lat += 2 * a;
            *tb += 2 * data / B;
        } else {
            data = e->is_ar ? S : S * dist / n;
            *lat += a;
            *tb += data / B;
        }
    }
}

static void cost_hier(const tune_topo_eval *e, double *lat, double *tb)
{
    int g = e->g, N = e->N, is_ar = e->is_ar;
    double S = e->S;
    int sn = is_ar ? 2 * (N - 1) : N - 1;
    int si = is_ar ? 2 * (g - 1) : g - 1;
    *lat += si * e->a_in + sn * e->a_net;
    *tb = (is_ar ? 2.0 : 1.0) * ((double)(g - 1) / g * S / e->Bin + (double)(N - 1) / N * S / e->Bnet);
}

/* ---- the executor-shaped model, host ranks: an AllReduce's terms (tune_model_exec_host.c) ---- */

static int kids(int n, int r) { return (2 * r + 1 < n) + (2 * r + 2 < n); }

/* The host tree (exec_algo_tree.c: heap order, reduce phase then broadcast phase, each pipelined
 * over chunks), per byte: the busiest rank's work in each phase, the work along the deepest path
 * (leaf n-1 up to the root: a piece is published only when copied, so every level waits for the
 * one below), and the accesses to the ranks' own buffers (busiest, all).
 * Reduce phase: a rank drains c children (copy out 2 + reduce 3 each), copies its sum up (2);
 * broadcast phase: copies out from the parent (2), copies into c children (2 each). */
typedef struct { double bu, bd, chain, buf_b, buf_t, xu, xd, xchain; } tree_costs;

static tree_costs host_tree(int n)
{
    tree_costs t = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int r = 0; r < n; r++) {
        int c = kids(n, r), up = 5 * c + (r ? 2 : 0), dn = (r ? 2 : 0) + 2 * c;
        /* own buffer: the reduce reads and writes it (2 per child), the sends up and down read
         * it (1 + c), the receive from the parent writes it (1) */
        double buf = 2.0 * c + c + (r ? 2 : 0);
        if (up > t.bu) t.bu = up;
        if (dn > t.bd) t.bd = dn;
        int xu = c + (r ? 1 : 0), xd = (r ? 1 : 0) + c; /* ring lines: drained / copied up, copied out / in */
        if (xu > t.xu) t.xu = xu;
        if (xd > t.xd) t.xd = xd;
        if (buf > t.buf_b) t.buf_b = buf;
        t.buf_t += buf;
    }
    for (int r = n - 1;; r = (r - 1) / 2) {
        int c = kids(n, r);
        t.chain += 5 * c + (r ? 2 : 0) + (r ? 2 : 0) + 2 * c;
        t.xchain += 2.0 * c + (r ? 2 : 0);
        if (!r) break;
    }
    return t;
}

static int host_ring(const tune_host_in *in, double f[TT_EXEC_NPARAM], tune_host_acc *a, char *why, size_t wl)
{
    int n = in->n;
    double S = in->S;
    /* reduce-scatter n-1 steps (send 2, receive 2, reduce 3), all-gather n-1 (send 2, receive
     * 2), one segment S/n per step in chunks; own buffer: the reduce reads and writes it and
     * the send reads it (3), all-gather send reads, receive writes (2) */
    double seg = S / n, k = tune_exec_chunks(seg, HOST_CHUNK);
    f[EXEC_STEP] = 2.0 * (n - 1) * k;
    f[EXEC_XFER] = f[EXEC_STEP] * fmin(fmin(seg, HOST_CHUNK), XFER_PAGE);
    f[EXEC_PEER] = 1;
    a->Wb = 11.0 * (n - 1) / n * S;
    a->X = 4.0 * (n - 1) / n * S;
    a->Bb = 5.0 * (n - 1) / n * S;
    a->Bt = n * a->Bb;
    return 0;
}

static int host_pow2(const tune_host_in *in, tt_algo algo, double f[TT_EXEC_NPARAM], tune_host_acc *a, char *why,
                     size_t wl)
{
    int n = in->n, L = in->L;
    double S = in->S, P = in->P;
    if (!in->pow2) {
        snprintf(why, wl, "%s needs a power-of-two rank count",
                 algo == TT_ALGO_RHD ? "halving-doubling" : "recursive doubling");
        return -1;
    }
    f[EXEC_PEER] = L; /* a new partner every level */
    if (algo == TT_ALGO_RHD) {
        /* halving: level l exchanges S/2^l (7 accesses, own buffer 3), doubling the same blocks
         * back (4, own buffer 2) */
        double d = S;
        for (int l = 0; l < L; l++) {
            d /= 2;
            double k = tune_exec_chunks(d, HOST_CHUNK);
            f[EXEC_STEP] += 2 * k;
            f[EXEC_XFER] += 2 * k * fmin(fmin(d, HOST_CHUNK), XFER_PAGE);
        }
        a->Wb = 11.0 * (n - 1) / n * S;
        a->X = 4.0 * (n - 1) / n * S;
        a->Bb = 5.0 * (n - 1) / n * S;
    } else {
        /* log2(n) levels, each swapping the whole vector with one partner in chunks: send 2,
         * receive 2, reduce 3 (own buffer: send reads, reduce reads and writes: 3) */
        double k = tune_exec_chunks(S, HOST_CHUNK);
        f[EXEC_STEP] = L * k;
        f[EXEC_XFER] = f[EXEC_STEP] * fmin(P, XFER_PAGE);
        a->Wb = 7.0 * L * S;
        a->X = 2.0 * L * S;
        a->Bb = 3.0 * L * S;
    }
    a->Bt = n * a->Bb;
    return 0;
}

static int host_rhd(const tune_host_in *in, double f[TT_EXEC_NPARAM], tune_host_acc *a, char *why, size_t wl)
{
    return host_pow2(in, TT_ALGO_RHD, f, a, why, wl);
}

static int host_rd(const tune_host_in *in, double f[TT_EXEC_NPARAM], tune_host_acc *a, char *why, size_t wl)
{
    return host_pow2(in, TT_ALGO_RD, f, a, why, wl);
}

static int host_tree_ar(const tune_host_in *in, double f[TT_EXEC_NPARAM], tune_host_acc *a, char *why, size_t wl)
{
    int n = in->n;
    double S = in->S, P = in->P;
    /* reduce phase then broadcast phase (not overlapped), each pipelined over k chunks through
     * D levels: 2(D + k - 1) hops; the busiest rank's work for all but the first piece, the
     * deepest path's work for the first; a parent drains two children per reduce hop and
     * receives one piece per broadcast hop (1.5 pieces between cores per hop) */
    double k = tune_exec_chunks(S, HOST_CHUNK);
    int D = tune_log2i(n);
    tree_costs t = host_tree(n);
    f[EXEC_HOP] = 2.0 * (D + k - 1);
    f[EXEC_XFER] = 1.5 * f[EXEC_HOP] * fmin(P, XFER_PAGE);
    f[EXEC_PEER] = 2.0 * D;
    a->Wb = (t.bu + t.bd) * (S - P) + t.chain * P;
    a->X = (t.xu + t.xd) * (S - P) + t.xchain * P;
    a->Bb = t.buf_b * S;
    a->Bt = t.buf_t * S;
    return 0;
}

static int host_hier(const tune_host_in *in, double f[TT_EXEC_NPARAM], tune_host_acc *a, char *why, size_t wl)
{
    int n = in->n;
    double S = in->S, P = in->P;
    /* one node: every rank sends to the leader, which drains and reduces the n-1 streams in
     * turn, then copies the result to n-1 rings.  Per chunk one synchronised wait for the
     * data, and 2(n-1) messages the leader handles with the data already there; the leader's
     * work (5 per byte and stream in, 2 per byte and stream out) plus the first sender's copy
     * in and the last receiver's copy out (pieces up to the ring) lie on the critical path */
    double k = tune_exec_chunks(S, HOST_CHUNK);
    f[EXEC_STEP] = k + HIER_MSG_PER_STEP * 2.0 * (n - 1) * k;
    f[EXEC_XFER] = n * k * fmin(P, XFER_PAGE);
    f[EXEC_PEER] = 2;
    a->Wb = 7.0 * (n - 1) * S + 4.0 * (n == 2 ? S : fmin(S, HOST_RING));
    a->X = 2.0 * (n - 1) * S + 2.0 * (n == 2 ? S : fmin(S, HOST_RING));
    a->Bb = 3.0 * (n - 1) * S;
    a->Bt = a->Bb + 2.0 * (n - 1) * S;
    return 0;
}

/* ---- the table: one line per algorithm of the registry ---- */
static const tune_algo_cost costs[] = {
    /* algo, topotune: off, cost; host ranks: AllReduce terms */
    {TT_ALGO_TREE, off_tree, cost_tree, host_tree_ar},
    {TT_ALGO_RING, NULL, cost_ring, host_ring},
    {TT_ALGO_COLLNET_DIRECT, off_collnet, NULL, NULL},
    {TT_ALGO_COLLNET_CHAIN, off_collnet, NULL, NULL},
    {TT_ALGO_NVLS, off_nvls, cost_nvls, NULL},
    {TT_ALGO_NVLS_TREE, off_nvls_tree, cost_nvls, NULL},
    {TT_ALGO_PAT, off_pat, NULL, NULL},
    {TT_ALGO_RHD, off_rhd, cost_rd_rhd, host_rhd},
    {TT_ALGO_RD, off_rd, cost_rd_rhd, host_rd},
    {TT_ALGO_HIER, off_hier, cost_hier, host_hier},
};

const tune_algo_cost *tune_algo_cost_of(tt_algo a)
{
    for (size_t i = 0; i < sizeof costs / sizeof *costs; i++)
        if (costs[i].algo == a)
            return &costs[i];
    return NULL;
}
