/*
 * tune_model_exec_host.c - the executor-shaped model's terms for HOST ranks (threads or processes
 * over the shared-memory transport), following exec/exec_algo_*.c and exec/exec_transport_shm.c:
 * per algorithm, what lies on the critical path of one call (docs/model.md, "Host ranks"; the
 * host executor's default AllReduce choice is the registry's rule, common_algos.c).
 *
 * Executor facts counted here:
 *  - a send copies its piece into the pair's 1 MiB ring and publishes it when the copy is done; a
 *    receive copies it out (2 accesses per byte each); a reduce reads 2 and writes 1;
 *  - pieces are one pipeline chunk (512 KiB) at most; lockstep schedules (ring, halving-doubling,
 *    recursive doubling) move a piece per step on every rank at once, so their critical path is one
 *    rank's work; trees and the hierarchical gather forward store-and-forward, so the first piece
 *    crosses every level before the pipeline is full (the chain below);
 *  - the first message of a call to a peer carries the 40-byte header (exec/exec_hdr.c);
 *  - of those accesses, a send's writes into the pair's ring and a receive's reads out of it touch
 *    lines another core's cache holds (the peer wrote or read them last): X, the cross-core accesses
 *    on the critical path, cost extra (xcore_GBps) beside every access's chan_GBps; the rank's own
 *    buffers and its scratch are its own core's lines.  Fitted on model-truth-h200-c (2026-12-02
 *    17:15 UTC): a ring line costs 1/80.5 + 1/28.4 ns a byte, 4.0x an own line, so schedules with
 *    fewer ring crossings a byte (recursive doubling, the tree, the hierarchical gather: 2 of 7
 *    against the ring's 4 of 11) are cheaper per access than the ring.
 * MODEL ASSUMPTIONS (fitted on the 2026-12-02 host collections, docs/benchmarks.md): the first
 * page (4 KiB) of each step's piece moves between cores at its own slow rate (xfer_GBps; the
 * hardware prefetchers stream a page only once it has started); a message the hierarchical
 * leader finds already arrived costs a quarter of a synchronised step; of the accesses to the
 * collective's own buffers, the fraction S / (S + cache) misses the cache (S = one rank's buffer).
 */
#include <math.h>
#include <stdio.h>

#include "tune_internal.h"

#define HOST_CHUNK (512.0 * 1024)    /* EXEC_DEFAULT_CHUNK */
#define HOST_RING (1024.0 * 1024)    /* TOPOTUNE_SHM_RING_BYTES default */
#define XFER_PAGE 4096.0             /* MODEL ASSUMPTION: first page of a step's piece */
#define HIER_MSG_PER_STEP 0.25       /* MODEL ASSUMPTION: an arrived message / a synchronised step */
/* MODEL ASSUMPTION: a second per-rank capacity; a rank's buffer beyond it sends the accesses of every
 * rank to DRAM (the shared term).  The GPU machine's CPU has 300 MiB of L3 over 16 vCPUs (18.75 MiB a
 * core) and its measured knee lies between 16 and 32 MiB a rank at 2, 4 and 8 ranks alike (per-rank,
 * so a share or the TLB's reach, not the whole L3); 16 MiB, not fitted (docs/model.md) */
#define HOST_SHARE (16.0 * 1048576)

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

int tune_exec_terms_host(const tt_model_params *p, const tt_measurement *m, int algo, double f[TT_EXEC_NPARAM],
                         char *why, size_t wl)
{
    int n = m->nranks > 0 ? m->nranks : 1;
    double S = (double)m->bytes, P = fmin(S, HOST_CHUNK);
    double cache = p->exec[TT_RANKS_HOST][TT_PROTO_SIMPLE].cache_MiB * 1048576.0;
    double miss = S / (S + cache); /* of the accesses to the rank's own buffer */
    double far = S / (S + HOST_SHARE); /* of those, reaching DRAM (all ranks' traffic) */
    double Wb = 0, Bb = 0, Bt = 0, X = 0;  /* all accesses of the busiest rank; own-buffer accesses: busiest, all */
    f[EXEC_LAUNCH] = 1;
    if (n == 1) { /* a local copy */
        f[EXEC_CHAN] = 2 * S;
        f[EXEC_SHARED] = 2 * S * miss;
        f[EXEC_DRAM] = 2 * S * miss;
        return 0;
    }
    int pow2 = !(n & (n - 1)), L = 0;
    while ((1 << L) < n) L++;
    switch (m->coll) {
    case TT_COLL_ALLREDUCE:
        if (algo == TT_ALGO_RING) {
            /* reduce-scatter n-1 steps (send 2, receive 2, reduce 3), all-gather n-1 (send 2, receive
             * 2), one segment S/n per step in chunks; own buffer: the reduce reads and writes it and
             * the send reads it (3), all-gather send reads, receive writes (2) */
            double seg = S / n, k = tune_exec_chunks(seg, HOST_CHUNK);
            f[EXEC_STEP] = 2.0 * (n - 1) * k;
            f[EXEC_XFER] = f[EXEC_STEP] * fmin(fmin(seg, HOST_CHUNK), XFER_PAGE);
            f[EXEC_PEER] = 1;
            Wb = 11.0 * (n - 1) / n * S;
            X = 4.0 * (n - 1) / n * S;
            Bb = 5.0 * (n - 1) / n * S;
            Bt = n * Bb;
        } else if (algo == TT_ALGO_RHD || algo == TT_ALGO_RD) {
            if (!pow2) {
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
                Wb = 11.0 * (n - 1) / n * S;
                X = 4.0 * (n - 1) / n * S;
                Bb = 5.0 * (n - 1) / n * S;
            } else {
                /* log2(n) levels, each swapping the whole vector with one partner in chunks: send 2,
                 * receive 2, reduce 3 (own buffer: send reads, reduce reads and writes: 3) */
                double k = tune_exec_chunks(S, HOST_CHUNK);
                f[EXEC_STEP] = L * k;
                f[EXEC_XFER] = f[EXEC_STEP] * fmin(P, XFER_PAGE);
                Wb = 7.0 * L * S;
                X = 2.0 * L * S;
                Bb = 3.0 * L * S;
            }
            Bt = n * Bb;
        } else if (algo == TT_ALGO_TREE) {
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
            Wb = (t.bu + t.bd) * (S - P) + t.chain * P;
            X = (t.xu + t.xd) * (S - P) + t.xchain * P;
            Bb = t.buf_b * S;
            Bt = t.buf_t * S;
        } else if (algo == TT_ALGO_HIER) {
            /* one node: every rank sends to the leader, which drains and reduces the n-1 streams in
             * turn, then copies the result to n-1 rings.  Per chunk one synchronised wait for the
             * data, and 2(n-1) messages the leader handles with the data already there; the leader's
             * work (5 per byte and stream in, 2 per byte and stream out) plus the first sender's copy
             * in and the last receiver's copy out (pieces up to the ring) lie on the critical path */
            double k = tune_exec_chunks(S, HOST_CHUNK);
            f[EXEC_STEP] = k + HIER_MSG_PER_STEP * 2.0 * (n - 1) * k;
            f[EXEC_XFER] = n * k * fmin(P, XFER_PAGE);
            f[EXEC_PEER] = 2;
            Wb = 7.0 * (n - 1) * S + 4.0 * (n == 2 ? S : fmin(S, HOST_RING));
            X = 2.0 * (n - 1) * S + 2.0 * (n == 2 ? S : fmin(S, HOST_RING));
            Bb = 3.0 * (n - 1) * S;
            Bt = Bb + 2.0 * (n - 1) * S;
        } else {
            snprintf(why, wl, "host ranks run ring, tree, halving-doubling, recursive-doubling, hierarchical");
            return -1;
        }
        break;
    case TT_COLL_ALLGATHER:
    case TT_COLL_REDUCESCATTER: {
        /* ring, n-1 steps of one block S/n in chunks: AllGather send 2 + receive 2 (own buffer 2),
         * ReduceScatter send 2 + receive 2 + reduce 3 (own buffer: input read 2, output 1) */
        double blk = S / n, k = tune_exec_chunks(blk, HOST_CHUNK), ag = m->coll == TT_COLL_ALLGATHER;
        f[EXEC_STEP] = (n - 1.0) * k;
        f[EXEC_XFER] = f[EXEC_STEP] * fmin(fmin(blk, HOST_CHUNK), XFER_PAGE);
        f[EXEC_PEER] = 1;
        Wb = (ag ? 4.0 : 7.0) * (n - 1) / n * S;
        X = 2.0 * (n - 1) / n * S;
        Bb = (ag ? 2.0 : 3.0) * (n - 1) / n * S;
        Bt = n * Bb;
        break;
    }
    case TT_COLL_BROADCAST:
    case TT_COLL_REDUCE: {
        /* a chain of n-1 hops, chunks pipelined: n - 2 + k steps; an inner rank receives and sends
         * every byte (Broadcast 4 accesses, own buffer 2; Reduce 7, own buffer 3) */
        double k = tune_exec_chunks(S, HOST_CHUNK), bc = m->coll == TT_COLL_BROADCAST;
        f[EXEC_STEP] = n - 2.0 + k;
        f[EXEC_XFER] = f[EXEC_STEP] * fmin(P, XFER_PAGE);
        f[EXEC_PEER] = 1;
        Wb = (bc ? 4.0 : 7.0) * S + (n - 2.0) * (bc ? 4.0 : 7.0) * P;
        X = 2.0 * (S + (n - 2.0) * P);
        Bb = (bc ? 2.0 : 3.0) * S;
        Bt = (n - 1) * Bb;
        break;
    }
    default:
        snprintf(why, wl, "not modelled for host ranks");
        return -1;
    }
    f[EXEC_CHAN] = Wb;
    f[EXEC_XCORE] = X;
    f[EXEC_DRAM] = Bb * miss;
    f[EXEC_SHARED] = Bt * far;
    /* more ranks than cores: time-sliced (everything but the shared memory's own rate) */
    double slice = p->host_cores > 0 && n > p->host_cores ? n / p->host_cores : 1.0;
    for (int j = EXEC_STEP; j < TT_EXEC_NPARAM; j++)
        if (j != EXEC_SHARED) f[j] *= slice;
    return 0;
}
