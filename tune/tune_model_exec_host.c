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

/* HOST_CHUNK, HOST_RING, XFER_PAGE, HIER_MSG_PER_STEP: tune_internal.h (the AllReduce hooks of
 * tune_algos.c use them too) */
/* MODEL ASSUMPTION: a second per-rank capacity; a rank's buffer beyond it sends the accesses of every
 * rank to DRAM (the shared term).  The GPU machine's CPU has 300 MiB of L3 over 16 vCPUs (18.75 MiB a
 * core) and its measured knee lies between 16 and 32 MiB a rank at 2, 4 and 8 ranks alike (per-rank,
 * so a share or the TLB's reach, not the whole L3); 16 MiB, not fitted (docs/model.md) */
#define HOST_SHARE (16.0 * 1048576)

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
    case TT_COLL_ALLREDUCE: {
        /* the algorithm's terms: its hook in tune_algos.c */
        const tune_algo_cost *hooks = tune_algo_cost_of((tt_algo)algo);
        if (!hooks || !hooks->host_allreduce) {
            snprintf(why, wl, "host ranks run ring, tree, halving-doubling, recursive-doubling, hierarchical");
            return -1;
        }
        tune_host_in in = {n, L, pow2, S, P};
        tune_host_acc acc = {0, 0, 0, 0};
        if (hooks->host_allreduce(&in, f, &acc, why, wl))
            return -1;
        Wb = acc.Wb;
        X = acc.X;
        Bb = acc.Bb;
        Bt = acc.Bt;
        break;
    }
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
