/*
 * tune_model_exec.c - the executor-shaped model: rows OUR executor ran (host ranks, virtual
 * ranks on one GPU, GPU ranks), following the schedules of exec/exec_algo_*.c and
 * exec/exec_cuda_coll.cuh rather than a textbook (docs/model.md, "Our executor").
 *
 * Every prediction is linear in five constants per (kind, protocol):
 *   time = launch_us * 1 + step_us * Hs + hop_us * Ht + Wb / chan + Wt / shared
 *   Hs  synchronised steps of a ring / pairwise exchange on the critical path, one per chunk
 *   Ht  hops of the binary-tree pipeline (depth up and down, plus one per further chunk)
 *   Wb  memory accesses (bytes read + written) of the busiest rank on one channel
 *   Wt  memory accesses of all the ranks that share one memory (virtual ranks: the GPU's HBM;
 *       host ranks: DRAM; one rank per GPU: that GPU's own)
 * Host ranks beyond host_cores are time-sliced: Hs, Ht, Wb scale by ranks / cores.
 * Because the model is linear in (launch, step, hop, 1/chan, 1/shared), the fit is a
 * non-negative robust linear regression (tune_exec_fit): least absolute relative deviation by
 * iteratively reweighted least squares, exact non-negative least squares per iteration.
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
#define HOST_CHUNK (512.0 * 1024)         /* EXEC_DEFAULT_CHUNK */
#define DEFAULT_PLAN_MAX (64.0 * 1024)    /* default plan: tree/LL up to 64 KiB */
/* MODEL ASSUMPTION: resident blocks = 132 SMs x 1 block of 512 threads (H100/H200); the channel
 * maximum is min(64, 132 / ranks per GPU) - what the recorded runs used (64, 33, 16). */
#define GPU_BLOCKS 132
#define GPU_L2_BYTES (50.0 * 1000 * 1000)

const char *tt_exec_kind_name(tt_exec_kind k)
{
    static const char *const n[] = {"none", "host", "virtual", "gpu"};
    return k >= 0 && k < TT_RANKS_KIND_COUNT ? n[k] : "?";
}

static int floor_log2(int n)
{
    int l = 0;
    while ((2L << l) <= n) l++;
    return l;
}

/* memory accesses per byte of a binary tree in heap order: rank r with c children.
 * GPU: leaf up (read input, write slot) + down (read slot, write output) = 4; interior up
 * (input + c slots, write parent slot) + down (slot, output, c slots) = 4 + 2c; root reads
 * input + c slots and writes output + c slots = 2 + 2c.
 * Host (shared-memory transport: a send copies into the shared buffer, a receive copies out,
 * 2 accesses each; a reduce reads 2, writes 1): leaf send + recv = 4; interior: recv c (2c),
 * reduce c (3c), send up (2), recv down (2), send c (2c) = 4 + 7c; root: 7c + 2c = 9c. */
static void tree_access(int n, int host, double *busiest, double *total)
{
    *busiest = 0;
    *total = 0;
    for (int r = 0; r < n; r++) {
        int c = (2 * r + 1 < n) + (2 * r + 2 < n);
        double a;
        if (host) a = r == 0 ? 9.0 * c : 4.0 + 7.0 * c;
        else a = r == 0 ? 2.0 + 2.0 * c : 4.0 + 2.0 * c;
        if (a > *busiest) *busiest = a;
        *total += a;
    }
}

static double cdiv(double a, double b)
{
    double k = ceil(a / b - 1e-9);
    return k < 1 ? 1 : k;
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
    /* the executor's default plan (exec/exec_plan_table.c, docs/gpu-executor.md) */
    if (proto < 0) proto = host ? TT_PROTO_SIMPLE : (S <= DEFAULT_PLAN_MAX ? TT_PROTO_LL : TT_PROTO_SIMPLE);
    if (algo < 0) {
        if (!ar) algo = TT_ALGO_RING;
        else if (host) algo = tune_exec_host_default_algo(n, S); /* tune_model_exec_rd.c */
        else algo = S <= DEFAULT_PLAN_MAX && n > 2 ? TT_ALGO_TREE : TT_ALGO_RING;
    }
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
    f[0] = 1; /* launch */
    if (n == 1) {
        f[3] = 2 * S; /* a local copy */
        f[4] = 2 * S;
        return 0;
    }
    double share = kind == TT_RANKS_GPU ? 1.0 / n : 1.0; /* ranks on one memory / ranks */
    if (!host) {
        double chunk = proto == TT_PROTO_SIMPLE ? GPU_SIMPLE_CHUNK : proto == TT_PROTO_LL128 ? GPU_LL128_CHUNK : GPU_LL_CHUNK;
        double cmax = GPU_BLOCKS / (kind == TT_RANKS_VIRTUAL ? n : 1);
        if (cmax > 64) cmax = 64;
        /* the executor picks channels from the bytes of the count argument: per rank for
         * AllGather / ReduceScatter (S is their total, nccl-tests' size column) */
        int blocks = m->coll == TT_COLL_ALLGATHER || m->coll == TT_COLL_REDUCESCATTER;
        double B = blocks ? S / n : S;
        double c = m->channels > 0 ? m->channels : fmin(cmax, cdiv(B, GPU_CHANNEL_BYTES));
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
            double k = cdiv(B / c, chunk);
            if (blocks) {
                f[1] = (n - 1.0) * k;
                f[3] = (3.0 * n - 1) / n * Sc;
            } else {
                f[1] = n - 2.0 + k;
                f[3] = 3.0 * Sc;
            }
            f[4] = (3.0 * n - 1) * S * share;
            double F = F1 * (kind == TT_RANKS_VIRTUAL ? n : 1);
            f[4] *= F / (F + GPU_L2_BYTES); /* the L2 assumption below */
            return 0;
        }
        if (algo == TT_ALGO_RING) {
            /* per channel: loops of n segments of at most one chunk, 2(n-1) steps each; reduce-scatter
             * step: read input + slot, write slot (first: 2, last: 4 with the output); all-gather:
             * read slot, write output + slot (last: 2) -> (6n - 4) accesses per segment */
            double k = cdiv(Sc, n * chunk);
            f[1] = 2.0 * (n - 1) * k;
            f[3] = (6.0 * n - 4) / n * Sc;
            f[4] = (6.0 * n - 4) * S * share;
        } else {
            /* binary tree in heap order, up and down streams overlapped (warps split), root in one
             * step: depth up + depth down + one hop per further chunk */
            double k = cdiv(Sc, chunk), b, t;
            tree_access(n, 0, &b, &t);
            f[2] = 2.0 * floor_log2(n) + k - 1;
            /* a chunk crosses every level before the next one follows it: (2D + k - 1) chunk times
             * at the busiest rank's pace (the pipeline fill; Simple only: LL forwards every 16-byte
             * line as soon as it is read, so its fill is a line, LL128 likewise a 128-byte line); the shared
             * memory sees every access once */
            f[3] = b * Sc * (proto == TT_PROTO_SIMPLE ? f[2] / k : 1.0);
            f[4] = t * S * share;
        }
        /* MODEL ASSUMPTION: what fits the GPU's L2 (50 MB on H100/H200, public figure) is not
         * HBM traffic: the shared term counts the fraction F / (F + L2) of the accesses, F =
         * the ranks' buffers on that GPU (input + output per rank) */
        double F = 2.0 * S * (kind == TT_RANKS_VIRTUAL ? n : 1);
        f[4] *= F / (F + GPU_L2_BYTES);
        return 0;
    }
    /* host ranks: one thread per rank, chunks of 512 KiB, shared-memory transport */
    double slice = p->host_cores > 0 && n > p->host_cores ? n / p->host_cores : 1.0;
    switch (m->coll) {
    case TT_COLL_ALLREDUCE:
        if (algo == TT_ALGO_RING) {
            /* reduce-scatter n-1 steps (send, recv, reduce: 7 accesses), all-gather n-1 (4) */
            double k = cdiv(S / n, HOST_CHUNK);
            f[1] = 2.0 * (n - 1) * k;
            f[3] = 11.0 * (n - 1) / n * S;
            f[4] = n * f[3];
        } else if (algo == TT_ALGO_TREE) {
            /* reduce phase then broadcast phase (not overlapped), each pipelined over chunks */
            double k = cdiv(S, HOST_CHUNK), b, t;
            tree_access(n, 1, &b, &t);
            f[2] = 2.0 * (floor_log2(n) + k);
            f[3] = b * S;
            f[4] = t * S;
        } else if (algo == TT_ALGO_RHD) {
            if (n & (n - 1)) {
                snprintf(why, wl, "halving-doubling needs a power-of-two rank count");
                return -1;
            }
            double d = S;
            for (int l = 1; l < n; l <<= 1) {
                d /= 2;
                f[1] += 2 * cdiv(d, HOST_CHUNK);
            }
            f[3] = 11.0 * (n - 1) / n * S;
            f[4] = n * f[3];
        } else if (algo == TT_ALGO_RD) { /* tune_model_exec_rd.c */
            if (tune_exec_terms_rd(n, S, f, why, wl)) return -1;
        } else if (algo == TT_ALGO_HIER) {
            /* one node: every rank sends to the leader, which receives and reduces n-1 streams,
             * then sends the result to n-1 ranks: the leader serialises 2(n-1) messages per chunk */
            double k = cdiv(S, HOST_CHUNK);
            f[1] = 2.0 * (n - 1) * k;
            f[3] = 7.0 * (n - 1) * S;
            f[4] = f[3] + 4.0 * (n - 1) * S;
        } else {
            snprintf(why, wl, "host ranks run ring, tree, halving-doubling, recursive-doubling, hierarchical");
            return -1;
        }
        break;
    case TT_COLL_ALLGATHER:
    case TT_COLL_REDUCESCATTER: {
        double per = m->coll == TT_COLL_ALLGATHER ? 4.0 : 7.0;
        f[1] = (n - 1.0) * cdiv(S / n, HOST_CHUNK);
        f[3] = per * (n - 1) / n * S;
        f[4] = n * f[3];
        break;
    }
    case TT_COLL_BROADCAST:
    case TT_COLL_REDUCE: {
        /* a chain of n-1 hops, chunks pipelined */
        double k = cdiv(S, HOST_CHUNK);
        f[1] = n - 2.0 + k;
        f[3] = (m->coll == TT_COLL_BROADCAST ? 4.0 : 7.0) * S;
        f[4] = (n - 1) * f[3];
        break;
    }
    default:
        snprintf(why, wl, "not modelled for host ranks");
        return -1;
    }
    for (int j = 1; j < 4; j++) f[j] *= slice;
    return 0;
}

double tune_exec_value(const tt_exec_params *e, const double f[TT_EXEC_NPARAM])
{
    double t = f[0] * e->launch_us + f[1] * e->step_us + f[2] * e->hop_us;
    if (f[3] > 0) t += f[3] / (e->chan_GBps * 1e3);
    if (f[4] > 0) t += f[4] / (e->shared_GBps * 1e3);
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

/* ---- the fit ---- */

/* parameter vector x: launch, step, hop, 1/(chan*1e3), 1/(shared*1e3) */
static void to_x(const tt_exec_params *e, double x[TT_EXEC_NPARAM])
{
    x[0] = e->launch_us;
    x[1] = e->step_us;
    x[2] = e->hop_us;
    x[3] = 1.0 / (e->chan_GBps * 1e3);
    x[4] = 1.0 / (e->shared_GBps * 1e3);
}

static void from_x(const double x[TT_EXEC_NPARAM], tt_exec_params *e)
{
    e->launch_us = x[0];
    e->step_us = x[1];
    e->hop_us = x[2];
    /* a bandwidth the data cannot bound stays finite: at most 1e7 GB/s */
    e->chan_GBps = x[3] > 1e-10 ? 1.0 / (x[3] * 1e3) : 1e7;
    e->shared_GBps = x[4] > 1e-10 ? 1.0 / (x[4] * 1e3) : 1e7;
}

/* solve the d x d system A y = b (Gauss with partial pivoting); 0 = ok */
static int solve(int d, double A[TT_EXEC_NPARAM][TT_EXEC_NPARAM], double *b, double *y)
{
    double M[TT_EXEC_NPARAM][TT_EXEC_NPARAM + 1];
    for (int i = 0; i < d; i++) {
        for (int j = 0; j < d; j++) M[i][j] = A[i][j];
        M[i][d] = b[i];
    }
    for (int c = 0; c < d; c++) {
        int pv = c;
        for (int i = c + 1; i < d; i++)
            if (fabs(M[i][c]) > fabs(M[pv][c])) pv = i;
        if (fabs(M[pv][c]) < 1e-12) return -1;
        if (pv != c)
            for (int j = 0; j <= d; j++) {
                double t = M[c][j]; M[c][j] = M[pv][j]; M[pv][j] = t;
            }
        for (int i = c + 1; i < d; i++) {
            double q = M[i][c] / M[c][c];
            for (int j = c; j <= d; j++) M[i][j] -= q * M[c][j];
        }
    }
    for (int i = d - 1; i >= 0; i--) {
        double s = M[i][d];
        for (int j = i + 1; j < d; j++) s -= M[i][j] * y[j];
        y[i] = s / M[i][i];
    }
    return 0;
}

/* weighted non-negative least squares over the free columns (mask), exact: every subset of the
 * (at most 5) columns, the feasible one with the least weighted residual */
static void wnnls(int nr, const double (*F)[TT_EXEC_NPARAM], const double *t, const double *w, unsigned free_mask,
                  const double *scale, double *x)
{
    double best = -1, bx[TT_EXEC_NPARAM] = {0};
    for (unsigned s = 1; s < 32; s++) {
        if (s & ~free_mask) continue;
        int idx[TT_EXEC_NPARAM], d = 0;
        for (int j = 0; j < TT_EXEC_NPARAM; j++)
            if (s & (1u << j)) idx[d++] = j;
        double A[TT_EXEC_NPARAM][TT_EXEC_NPARAM] = {{0}}, b[TT_EXEC_NPARAM] = {0}, y[TT_EXEC_NPARAM];
        for (int i = 0; i < nr; i++)
            for (int a = 0; a < d; a++) {
                double fa = F[i][idx[a]] * scale[idx[a]];
                b[a] += w[i] * fa * t[i];
                for (int c = 0; c < d; c++) A[a][c] += w[i] * fa * F[i][idx[c]] * scale[idx[c]];
            }
        for (int a = 0; a < d; a++) A[a][a] *= 1 + 1e-12;
        if (solve(d, A, b, y)) continue;
        int ok = 1;
        for (int a = 0; a < d; a++)
            if (y[a] < 0) ok = 0;
        if (!ok) continue;
        double r2 = 0;
        for (int i = 0; i < nr; i++) {
            double pr = 0;
            for (int a = 0; a < d; a++) pr += F[i][idx[a]] * scale[idx[a]] * y[a];
            r2 += w[i] * (pr - t[i]) * (pr - t[i]);
        }
        if (best < 0 || r2 < best) {
            best = r2;
            memset(bx, 0, sizeof bx);
            for (int a = 0; a < d; a++) bx[idx[a]] = y[a] * scale[idx[a]];
        }
    }
    if (best >= 0)
        for (int j = 0; j < TT_EXEC_NPARAM; j++)
            if (free_mask & (1u << j)) x[j] = bx[j];
}

int tune_exec_fit(const tt_model_params *p, const tt_measurement *const *rows, int nr, int kind, int proto,
                  tt_exec_params *out, unsigned *identified)
{
    *identified = 0;
    if (nr <= 0) return 0;
    double (*F)[TT_EXEC_NPARAM] = malloc(sizeof(*F) * (size_t)nr);
    double *t = malloc(sizeof(double) * (size_t)nr), *w = malloc(sizeof(double) * (size_t)nr);
    double *tr = malloc(sizeof(double) * (size_t)nr);
    int k = 0;
    if (!F || !t || !w || !tr) {
        free(F); free(t); free(w); free(tr);
        return -1;
    }
    double colmax[TT_EXEC_NPARAM] = {0};
    for (int i = 0; i < nr; i++) {
        int pr, al;
        char why[120];
        if (rows[i]->exec_kind != kind || !(rows[i]->time_us > 0)) continue;
        if (tune_exec_terms(p, rows[i], F[k], &pr, &al, why, sizeof why) || pr != proto) continue;
        t[k] = rows[i]->time_us;
        for (int j = 0; j < TT_EXEC_NPARAM; j++)
            if (F[k][j] > colmax[j]) colmax[j] = F[k][j];
        k++;
    }
    double x[TT_EXEC_NPARAM], scale[TT_EXEC_NPARAM];
    to_x(&p->exec[kind][proto], x);
    unsigned mask = 0;
    for (int j = 0; j < TT_EXEC_NPARAM; j++) {
        /* a term that no row exercises keeps its start value (subtracted from the targets) */
        if (colmax[j] > 0 && k >= 2) mask |= 1u << j;
        scale[j] = colmax[j] > 0 ? 1.0 / colmax[j] : 1;
    }
    for (int i = 0; i < k; i++) {
        tr[i] = t[i];
        for (int j = 0; j < TT_EXEC_NPARAM; j++)
            if (!(mask & (1u << j))) tr[i] -= F[i][j] * x[j];
    }
    /* least absolute relative deviation: IRLS with weights 1 / (t^2 max(|r|, 1%)) */
    for (int i = 0; i < k; i++) w[i] = 1.0 / (t[i] * t[i]);
    for (int it = 0; it < 40 && mask; it++) {
        wnnls(k, (const double (*)[TT_EXEC_NPARAM])F, tr, w, mask, scale, x);
        for (int i = 0; i < k; i++) {
            double pr = 0;
            for (int j = 0; j < TT_EXEC_NPARAM; j++) pr += F[i][j] * x[j];
            double r = fabs(pr - t[i]) / t[i];
            w[i] = 1.0 / (t[i] * t[i] * (r > 0.01 ? r : 0.01));
        }
    }
    *identified = mask;
    tt_exec_params e = p->exec[kind][proto];
    from_x(x, &e);
    /* a column that no row exercises keeps its start value exactly */
    tt_exec_params st = p->exec[kind][proto];
    if (!(mask & 1)) e.launch_us = st.launch_us;
    if (!(mask & 2)) e.step_us = st.step_us;
    if (!(mask & 4)) e.hop_us = st.hop_us;
    if (!(mask & 8)) e.chan_GBps = st.chan_GBps;
    if (!(mask & 16)) e.shared_GBps = st.shared_GBps;
    *out = e;
    free(F); free(t); free(w); free(tr);
    return k;
}
