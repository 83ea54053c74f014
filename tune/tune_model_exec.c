/*
 * tune_model_exec.c - the executor-shaped model: rows OUR executor ran (host ranks, virtual
 * ranks on one GPU, GPU ranks), following the schedules of exec/exec_algo_*.c and
 * exec/exec_cuda_coll.cuh rather than a textbook (docs/model.md, "Our executor").
 *
 * Every prediction is linear in nine constants per (kind, protocol) (tt_exec_params):
 *   time = launch_us + step_us * Hs + hop_us * Ht + Wb / chan + Wt / shared
 *          + peer_us * Np + Hx / xfer + Bm / dram + Wa / l2
 *   Hs  synchronised steps of a ring / pairwise exchange on the critical path, one per chunk
 *   Ht  hops of the binary-tree pipeline (depth up and down, plus one per further chunk)
 *   Wb  memory accesses (bytes read + written) on the critical path: the busiest rank on one
 *       channel, plus the pipeline fill where a schedule forwards store-and-forward
 *   Wt  memory accesses of all the ranks that share one memory (virtual ranks: the GPU's HBM;
 *       host ranks: DRAM; one rank per GPU: that GPU's own), the part that misses the cache
 *   Np, Hx, Bm  host ranks only (tune_model_exec_host.c): peers met, first-page bytes of each
 *       step's piece, the busiest rank's own-buffer accesses that miss its cache
 *   Wa  GPU kinds only: every access of the ranks on one GPU, cached or not (Wt before the L2
 *       fraction): what all the SMs together push through the L2 and the fabric
 * This file: the GPU kinds' terms, the dispatch, evaluation and the constants' names; the host
 * terms are in tune_model_exec_host.c, the fit in tune_exec_fit.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

/* executor facts (exec/exec_gpu_internal.h, exec/exec_coll.c) */
#define GPU_SIMPLE_CHUNK (256.0 * 1024)   /* GPU_SIMPLE_SLOT_BYTES */
#define GPU_LL_CHUNK (16.0 * 1024)        /* GPU_LL_SLOT_DATA */
#define GPU_LL128_CHUNK (1024.0 * 120)    /* GPU_LL128_SLOT_DATA: 1024 lines of 120 payload bytes */
#define GPU_CHANNEL_BYTES (256.0 * 1024)  /* default plan: one channel per 256 KiB */
/* MODEL ASSUMPTION: resident blocks = 132 SMs x 1 block of 512 threads (H100/H200); the channel
 * maximum is min(64, 132 / ranks per GPU) - what the recorded runs used (64, 33, 16). */
#define GPU_BLOCKS 132
#define GPU_L2_BYTES (50.0 * 1000 * 1000)
/* MODEL ASSUMPTION: a ring keeps several slots in flight (LL, LL128 8, Simple 4), so after a
 * channel's first loop a step's synchronisation overlaps the data of the steps around it: each
 * further loop's steps cost 1/4 of a synchronised step (chosen on the 2026-12-02 13:41 virtual-rank
 * collection, tests/fixtures/measurements/model-truth-h200-d: for LL 1/2, 1/3, 1/4 and 1/8 tried,
 * 1/4 the only one meeting every held-out goal there and on model-truth-h200-b; for Simple 1 (no
 * overlap), 1/2 and 1/4 meet them alike, and only 1/4 ranks tree/Simple behind ring/Simple at
 * 128 MiB - 1 GiB as measured, which the table at 8 ranks got wrong with 1) */
#define GPU_RING_OVERLAP 0.25

const char *tt_exec_kind_name(tt_exec_kind k)
{
    static const char *const n[] = {"none", "host", "virtual", "gpu"};
    return k >= 0 && k < TT_RANKS_KIND_COUNT ? n[k] : "?";
}


/* GPU memory accesses per byte of a binary tree in heap order: rank r with c children.  Leaf up
 * (read input, write slot) + down (read slot, write output) = 4; interior up (input + c slots,
 * write parent slot) + down (slot, output, c slots) = 4 + 2c; root reads input + c slots and
 * writes output + c slots = 2 + 2c.  A non-root rank splits its block's warps between the two
 * streams (exec_cuda_coll.cuh, tree_allreduce).  `streams`: each half moves its stream at the
 * whole block's rate, so a non-root rank's pace is its busier stream, 2 + c (Simple: 8 loads in
 * flight per thread keep a channel's bandwidth with half the threads); otherwise a half block
 * moves at half the rate and the rank's pace is both streams' accesses, 4 + 2c (LL, LL128: a
 * thread's polled line loads, so the rate follows the threads). */
static void tree_access(int n, int streams, double *busiest, double *total)
{
    *busiest = 0;
    *total = 0;
    for (int r = 0; r < n; r++) {
        int c = (2 * r + 1 < n) + (2 * r + 2 < n);
        double a = r == 0 ? 2.0 + 2.0 * c : 4.0 + 2.0 * c;
        double pace = r == 0 || !streams ? a : 2.0 + c;
        if (pace > *busiest) *busiest = pace;
        *total += a;
    }
}

int tune_exec_terms(const tt_model_params *p, const tt_measurement *m, double f[TT_EXEC_NPARAM], int *proto_out,
                    int *algo_out, char *why, size_t wl)
{
    memset(f, 0, sizeof(double) * TT_EXEC_NPARAM);
    int kind = m->exec_kind, n = m->nranks > 0 ? m->nranks : 1;
    double S = (double)m->bytes;
    int host = kind == TT_RANKS_HOST;
    if (kind <= TT_RANKS_NONE || kind >= TT_RANKS_KIND_COUNT) {
        snprintf(why, wl, "not a row of our executor");
        return -1;
    }
    int algo = m->algo, proto = m->proto;
    int ar = m->coll == TT_COLL_ALLREDUCE;
    /* the executor's default plan: the one rule of the algorithm registry (common_algos.c) */
    if (proto < 0) proto = tt_proto_default(host ? TT_RUN_HOST : TT_RUN_GPU, m->bytes);
    if (algo < 0) algo = tt_algo_default(host ? TT_RUN_HOST : TT_RUN_GPU, m->coll, m->bytes, n);
    *proto_out = proto;
    *algo_out = algo;
    if (host && proto != TT_PROTO_SIMPLE) {
        snprintf(why, wl, "host ranks run only the simple protocol");
        return -1;
    }
    if (!host && ((algo != TT_ALGO_RING && algo != TT_ALGO_TREE) ||
                  (!ar && algo != TT_ALGO_RING))) {
        snprintf(why, wl, "our GPU executor runs AllReduce ring/tree and AllGather, ReduceScatter, Broadcast, "
                          "Reduce ring, with LL, LL128 or simple");
        return -1;
    }
    if (host) return tune_exec_terms_host(p, m, algo, f, why, wl); /* tune_model_exec_host.c */
    f[0] = 1; /* launch */
    if (n == 1) {
        f[3] = 2 * S; /* a local copy */
        f[4] = 2 * S;
        f[EXEC_L2] = 2 * S;
        return 0;
    }
    double share = kind == TT_RANKS_GPU ? 1.0 / n : 1.0; /* ranks on one memory / ranks */
    double chunk = proto == TT_PROTO_SIMPLE ? GPU_SIMPLE_CHUNK : proto == TT_PROTO_LL128 ? GPU_LL128_CHUNK : GPU_LL_CHUNK;
    double cmax = GPU_BLOCKS / (kind == TT_RANKS_VIRTUAL ? n : 1);
    if (cmax > 64) cmax = 64;
    /* the executor picks channels from the bytes of the count argument: per rank for
     * AllGather / ReduceScatter (S is their total, nccl-tests' size column) */
    int blocks = m->coll == TT_COLL_ALLGATHER || m->coll == TT_COLL_REDUCESCATTER;
    double B = blocks ? S / n : S;
    double c = m->channels > 0 ? m->channels : fmin(cmax, tune_exec_chunks(B, GPU_CHANNEL_BYTES));
    double Sc = S / c;
    /* buffers of one rank (input + output) for the L2 term below */
    double F1 = blocks ? S + S / n : 2.0 * S;
    if (!ar) {
        /* exec_cuda_coll.cuh, ring_allgather / ring_reducescatter / ring_broadcast / ring_reduce:
         * each channel walks its share of the per-rank count B / c in chunks of one slot,
         * k = ceil(B / c / chunk) chunks.
         * AllGather / ReduceScatter: n - 1 synchronised hops per chunk, (n - 1) k steps.  Per
         * element of a block: AllGather first step read input, write slot + output (3), n - 2
         * forwards read slot, write slot + output (3), last read slot, write output (2);
         * ReduceScatter first read input, write slot (2), n - 2 read input + slot, write slot
         * (3), last read input + slot, write output (3): 3n - 1 accesses per block element on
         * every rank, i.e. (3n - 1) / n of S per rank and (3n - 1) S over all ranks.
         * Broadcast / Reduce: a chain of n - 1 hops with the chunks pipelined, n - 2 + k steps
         * on the critical path; the busiest rank (an inner one, or the root: 3 accesses per
         * byte) moves 3 B / c; all ranks together 3 + 3(n - 2) + 2 = 3n - 1 per byte. */
        double k = tune_exec_chunks(B / c, chunk);
        if (blocks) {
            f[1] = (n - 1.0) * k;
            f[3] = (3.0 * n - 1) / n * Sc;
        } else {
            f[1] = n - 2.0 + k;
            f[3] = 3.0 * Sc;
        }
        f[4] = (3.0 * n - 1) * S * share;
    } else if (algo == TT_ALGO_RING) {
        /* per channel: loops of n segments of at most one chunk, 2(n-1) steps each; reduce-scatter
         * step: read input + slot, write slot (first: 2, last: 4 with the output); all-gather:
         * read slot, write output + slot (last: 2) -> (6n - 4) accesses per segment */
        double k = tune_exec_chunks(Sc, n * chunk);
        f[1] = 2.0 * (n - 1) * (1 + (k - 1) * GPU_RING_OVERLAP);
        f[3] = (6.0 * n - 4) / n * Sc;
        f[4] = (6.0 * n - 4) * S * share;
    } else {
        /* binary tree in heap order, up and down streams overlapped (warps split), root in one
         * step: depth up + depth down hops for the first chunk; each further chunk is one more
         * hop (Simple: the slot is published whole, the fill below carries its data) or, LL and
         * LL128, one more synchronised step of the streams (the same credit wait and publish as a
         * ring step: do_step) */
        double k = tune_exec_chunks(Sc, chunk), b, t;
        int simple = proto == TT_PROTO_SIMPLE;
        tree_access(n, simple, &b, &t);
        f[2] = 2.0 * tune_log2i(n) + (simple ? k - 1 : 0);
        if (!simple) f[1] = k - 1;
        /* Simple: a chunk crosses every level before the next one follows it: (2D + k - 1) chunk
         * times at the busiest rank's pace (the pipeline fill; LL forwards every 16-byte line as
         * soon as it is read, so its fill is a line, LL128 likewise a 128-byte line); the shared
         * memory sees every access once */
        f[3] = b * Sc * (simple ? f[2] / k : 1.0);
        f[4] = t * S * share;
    }
    /* MODEL ASSUMPTION: what fits the GPU's L2 (50 MB on H100/H200, public figure) is not
     * HBM traffic: the shared term counts the fraction F / (F + L2) of the accesses, F =
     * the ranks' buffers on that GPU (input + output per rank); the l2 term counts them all */
    double F = F1 * (kind == TT_RANKS_VIRTUAL ? n : 1);
    f[EXEC_L2] = f[4];
    f[4] *= F / (F + GPU_L2_BYTES);
    return 0;
}

/* the constants in column order: name, and whether it is a rate (GB/s of the column's bytes) */
static const struct { const char *name; int rate; } col[TT_EXEC_NCONST] = {
    {"launch_us", 0}, {"step_us", 0},   {"hop_us", 0},    {"chan_GBps", 1}, {"shared_GBps", 1},
    {"peer_us", 0},   {"xfer_GBps", 1}, {"dram_GBps", 1}, {"l2_GBps", 1},   {"xcore_GBps", 1},
    {"cache_MiB", 0}};

const char *tune_exec_param_name(int j) { return j >= 0 && j < TT_EXEC_NCONST ? col[j].name : "?"; }
int tune_exec_param_is_rate(int j) { return j >= 0 && j < TT_EXEC_NPARAM && col[j].rate; }

/* whether kind's schedule has column j's term: the first EXEC_NGPU are every kind's, peer / xfer /
 * dram / xcore / cache host ranks' only, l2 the GPU kinds' only */
int tune_exec_param_applies(int j, int kind)
{
    if (j < 0 || j >= TT_EXEC_NCONST) return 0;
    if (j < EXEC_NGPU) return 1;
    return kind == TT_RANKS_HOST ? j != EXEC_L2 : j == EXEC_L2;
}

static double *slot(tt_exec_params *e, int j)
{
    double *v[TT_EXEC_NCONST] = {&e->launch_us, &e->step_us,   &e->hop_us,    &e->chan_GBps, &e->shared_GBps,
                                 &e->peer_us,   &e->xfer_GBps, &e->dram_GBps, &e->l2_GBps,   &e->xcore_GBps,
                                 &e->cache_MiB};
    return v[j];
}

double tune_exec_param_get(const tt_exec_params *e, int j)
{
    return j >= 0 && j < TT_EXEC_NCONST ? *slot((tt_exec_params *)e, j) : 0;
}

void tune_exec_param_set(tt_exec_params *e, int j, double v)
{
    if (j >= 0 && j < TT_EXEC_NCONST) *slot(e, j) = v;
}

/* the time coefficient of column j: us per unit (latencies) or 1 / (GB/s * 1e3) (rates; 0 = no term) */
double tune_exec_coef(const tt_exec_params *e, int j)
{
    double v = tune_exec_param_get(e, j);
    if (!col[j].rate) return v;
    return v > 0 ? 1.0 / (v * 1e3) : 0;
}

/* latencies 0..1e5 us, rates 1e-6..1e7 GB/s (the host-only rates and l2 may be 0: no such term), the
 * cache 0..1e6 MiB */
void tune_exec_param_range(int j, double *lo, double *hi)
{
    int rate = tune_exec_param_is_rate(j);
    *lo = rate && j < EXEC_NGPU ? 1e-6 : 0;
    *hi = j == EXEC_CACHE ? 1e6 : rate ? 1e7 : 1e5;
}

double tune_exec_value(const tt_exec_params *e, const double f[TT_EXEC_NPARAM])
{
    double t = 0;
    for (int j = 0; j < TT_EXEC_NPARAM; j++)
        if (f[j] > 0) t += f[j] * tune_exec_coef(e, j);
    return t;
}

tt_status tt_exec_predict(const tt_model_params *p, const tt_measurement *m, double *pred_us)
{
    double f[TT_EXEC_NPARAM];
    int proto, algo;
    char why[120];
    if (tune_exec_terms(p, m, f, &proto, &algo, why, sizeof why))
        return tt_error_set(TT_ERR_UNSUPPORTED, "%s: %s", m->where, why);
    *pred_us = tune_exec_value(&p->exec[m->exec_kind][proto], f);
    return TT_OK;
}
