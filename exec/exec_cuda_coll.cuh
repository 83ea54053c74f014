/*
 * exec_cuda_coll.cuh - the GPU executor's kernels: AllReduce (ring and
 * binary tree), AllGather, ReduceScatter, Broadcast and Reduce (ring /
 * pipelined chain along the ring), Simple, LL and LL128 protocols, several
 * channels, and the standalone reduce-copy (LL128 only where the host
 * allowed it: same GPU or NVLink).  One kernel per (data type, operation);
 * the collective, algorithm and protocol are chosen at run time inside it
 * (AllGather and Broadcast run the sum kernel: they reduce nothing).
 *
 * Grid: one thread block per (local rank, channel); block b serves local
 * rank b / nch, channel b % nch.  All the blocks of one launch are resident
 * at once (the host checks occupancy), so virtual ranks on one GPU - all in
 * the same launch - can wait on each other.
 */
#ifndef EXEC_CUDA_COLL_CUH
#define EXEC_CUDA_COLL_CUH
#include <cuda_runtime.h>

#include "exec_cuda_prims.cuh"

template <class Tag, int OP, int PROTO>
__device__ __forceinline__ bool do_step(const Ctx &x, int nr, const int *rr, const typename Tr<Tag>::S *in,
                                        int ns, const int *sr, typename Tr<Tag>::S *out, size_t n, int div)
{
    if (PROTO == TT_PROTO_SIMPLE) return simple_step<Tag, OP>(x, nr, rr, in, ns, sr, out, n, div);
    if (PROTO == TT_PROTO_LL128) return ll128_step<Tag, OP>(x, nr, rr, in, ns, sr, out, n, div);
    return ll_step<Tag, OP>(x, nr, rr, in, ns, sr, out, n, div);
}

/* payload bytes of one slot of protocol PROTO (a multiple of 16) */
template <int PROTO> __device__ __forceinline__ constexpr size_t proto_chunk_bytes()
{
    return PROTO == TT_PROTO_SIMPLE ? GPU_SIMPLE_SLOT_BYTES : PROTO == TT_PROTO_LL128 ? GPU_LL128_SLOT_DATA
                                                                                      : GPU_LL_SLOT_DATA;
}

/* The channels' walk, the same for every collective (docs/gpu-executor.md, "Channel walk"):
 * the count is cut into pieces of nseg segments, each segment a multiple of 16 bytes and at
 * most one chunk, and the pieces go to the channels round robin: piece k belongs to channel
 * k % nch.  The number of rounds R = ceil(count / (nch x nseg x chunk)) is the fewest that keeps
 * segments within a chunk, and the segments are count / (R x nch x nseg) rounded up to 16 bytes,
 * so every channel takes at most R pieces of one size (only the last piece of the count is
 * short; channels past it take R - 1): as many synchronised steps per channel as one contiguous
 * share per channel took, and at any moment the channels stream neighbouring pieces instead of
 * nch places far apart (measured: docs/log/2026-12-02-gpu-copy.md).  Every piece and segment
 * starts at a multiple of 16 bytes from the buffer start. */
struct chan_walk {
    size_t seg;    /* elements per segment (a multiple of 16 bytes) */
    size_t piece;  /* nseg x seg: elements per piece */
    size_t first;  /* the channel's first piece: chan x piece */
    size_t stride; /* nch x piece: from one of the channel's pieces to its next */
};
template <class S>
__device__ __forceinline__ chan_walk make_walk(size_t count, int chan, int nch, int nseg, size_t chunk)
{
    const size_t A = 16 / sizeof(S);
    const size_t per_round = (size_t)nch * (size_t)nseg * chunk;
    size_t rounds = (count + per_round - 1) / per_round;
    if (!rounds) rounds = 1;
    const size_t parts = rounds * (size_t)nch * (size_t)nseg;
    size_t seg = (count + parts - 1) / parts;
    seg = (seg + A - 1) / A * A;
    if (!seg) seg = A;
    chan_walk w;
    w.seg = seg;
    w.piece = seg * (size_t)nseg;
    w.first = (size_t)chan * w.piece;
    w.stride = (size_t)nch * w.piece;
    return w;
}

/* Ring AllReduce: pieces of n segments (make_walk), per piece 2(n-1) steps. */
template <class Tag, int OP, int PROTO>
__device__ void ring_allreduce(const Ctx &x, const typename Tr<Tag>::S *in, typename Tr<Tag>::S *out,
                               size_t count, int nch, int n, int r, int div)
{
    typedef typename Tr<Tag>::S S;
    const size_t chunk = proto_chunk_bytes<PROTO>() / sizeof(S);
    const chan_walk w = make_walk<S>(count, x.chan, nch, n, chunk);
    const int R[1] = {GPU_CONN_RING};
    for (size_t base = w.first; base < count; base += w.stride) {
        const size_t hi = min(count, base + w.piece), cs = w.seg;
        auto seg = [&](int j, size_t *len) -> size_t {
            size_t off = base + (size_t)j * cs;
            *len = off < hi ? min(cs, hi - off) : 0;
            return off;
        };
        size_t len, off;
        /* reduce-scatter */
        off = seg(r, &len);
        if (!do_step<Tag, OP, PROTO>(x, 0, R, in + off, 1, R, nullptr, len, 0)) return;
        for (int s = 1; s <= n - 2; s++) {
            off = seg((r - s + n) % n, &len);
            if (!do_step<Tag, OP, PROTO>(x, 1, R, in + off, 1, R, nullptr, len, 0)) return;
        }
        /* the last reduction gives the final segment: keep it and send it */
        off = seg((r + 1) % n, &len);
        if (!do_step<Tag, OP, PROTO>(x, 1, R, in + off, 1, R, out + off, len, div)) return;
        /* all-gather */
        for (int s = 1; s <= n - 2; s++) {
            off = seg((r + 1 - s + n) % n, &len);
            if (!do_step<Tag, OP, PROTO>(x, 1, R, nullptr, 1, R, out + off, len, 0)) return;
        }
        off = seg((r + 2) % n, &len);
        if (!do_step<Tag, OP, PROTO>(x, 1, R, nullptr, 0, R, out + off, len, 0)) return;
    }
}

/* The other ring collectives, built from the same protocol steps (do_step) and
 * connections (GPU_CONN_RING, r -> r+1) as ring_allreduce.  Each channel walks
 * its pieces of the per-rank count (make_walk, one segment per piece: at most
 * one slot); every rank runs the same number of steps per piece on each
 * connection it uses, so the per-connection step numbers agree. */

/* AllGather: the all-gather half of ring_allreduce over whole blocks.  Rank
 * r stores its block in place and sends it; steps 1..n-2 receive block
 * (r - s) mod n, store and forward it; the last step stores block
 * (r + 1) mod n.  `in` may be out + r * count (in place). */
template <class Tag, int OP, int PROTO>
__device__ void ring_allgather(const Ctx &x, const typename Tr<Tag>::S *in, typename Tr<Tag>::S *out,
                               size_t count, int nch, int n, int r)
{
    typedef typename Tr<Tag>::S S;
    const size_t chunk = proto_chunk_bytes<PROTO>() / sizeof(S);
    const chan_walk w = make_walk<S>(count, x.chan, nch, 1, chunk);
    const int R[1] = {GPU_CONN_RING};
    for (size_t off = w.first; off < count; off += w.stride) {
        size_t len = min(w.piece, count - off);
        if (!do_step<Tag, OP, PROTO>(x, 0, R, in + off, 1, R, out + (size_t)r * count + off, len, 0)) return;
        for (int s = 1; s <= n - 2; s++) {
            size_t b = (size_t)((r - s + n) % n);
            if (!do_step<Tag, OP, PROTO>(x, 1, R, nullptr, 1, R, out + b * count + off, len, 0)) return;
        }
        size_t b = (size_t)((r + 1) % n);
        if (!do_step<Tag, OP, PROTO>(x, 1, R, nullptr, 0, R, out + b * count + off, len, 0)) return;
    }
}

/* ReduceScatter: the reduce-scatter half of ring_allreduce, shifted by one
 * block so that rank r finishes block r.  Step s (0..n-1) of rank r handles
 * block (r - 1 - s) mod n: step 0 sends its own input, steps 1..n-2 add
 * their input to what arrives and send it on, step n-1 adds its input of
 * block r and stores the result (avg divided once, here).  `out` may be
 * in + r * count (in place: block r of the input is read only at that step). */
template <class Tag, int OP, int PROTO>
__device__ void ring_reducescatter(const Ctx &x, const typename Tr<Tag>::S *in, typename Tr<Tag>::S *out,
                                   size_t count, int nch, int n, int r, int div)
{
    typedef typename Tr<Tag>::S S;
    const size_t chunk = proto_chunk_bytes<PROTO>() / sizeof(S);
    const chan_walk w = make_walk<S>(count, x.chan, nch, 1, chunk);
    const int R[1] = {GPU_CONN_RING};
    for (size_t off = w.first; off < count; off += w.stride) {
        size_t len = min(w.piece, count - off);
        size_t b = (size_t)((r - 1 + n) % n);
        if (!do_step<Tag, OP, PROTO>(x, 0, R, in + b * count + off, 1, R, nullptr, len, 0)) return;
        for (int s = 1; s <= n - 2; s++) {
            b = (size_t)((r - 1 - s + 2 * n) % n);
            if (!do_step<Tag, OP, PROTO>(x, 1, R, in + b * count + off, 1, R, nullptr, len, 0)) return;
        }
        if (!do_step<Tag, OP, PROTO>(x, 1, R, in + (size_t)r * count + off, 0, R, out + off, len, div)) return;
    }
}

/* Broadcast: a pipelined chain along the ring from the root (position
 * p = (r - root) mod n): the root sends its chunks (and copies them to its
 * output when out of place), inner ranks store and forward, the last rank
 * (root - 1) only stores.  The connection into the root stays unused. */
template <class Tag, int OP, int PROTO>
__device__ void ring_broadcast(const Ctx &x, const typename Tr<Tag>::S *in, typename Tr<Tag>::S *out,
                               size_t count, int nch, int n, int r, int root)
{
    typedef typename Tr<Tag>::S S;
    const size_t chunk = proto_chunk_bytes<PROTO>() / sizeof(S);
    const chan_walk w = make_walk<S>(count, x.chan, nch, 1, chunk);
    const int R[1] = {GPU_CONN_RING};
    int p = (r - root + n) % n;
    for (size_t off = w.first; off < count; off += w.stride) {
        size_t len = min(w.piece, count - off);
        bool ok;
        if (p == 0) ok = do_step<Tag, OP, PROTO>(x, 0, R, in + off, 1, R, in == out ? nullptr : out + off, len, 0);
        else if (p < n - 1) ok = do_step<Tag, OP, PROTO>(x, 1, R, nullptr, 1, R, out + off, len, 0);
        else ok = do_step<Tag, OP, PROTO>(x, 1, R, nullptr, 0, R, out + off, len, 0);
        if (!ok) return;
    }
}

/* Reduce: a pipelined chain along the ring into the root (position
 * p = (r - root - 1) mod n, the root last): the first rank (root + 1) sends
 * its input, inner ranks add theirs and send on, the root adds its own and
 * stores the result (avg divided once).  Only the root's `out` is written. */
template <class Tag, int OP, int PROTO>
__device__ void ring_reduce(const Ctx &x, const typename Tr<Tag>::S *in, typename Tr<Tag>::S *out, size_t count,
                            int nch, int n, int r, int root, int div)
{
    typedef typename Tr<Tag>::S S;
    const size_t chunk = proto_chunk_bytes<PROTO>() / sizeof(S);
    const chan_walk w = make_walk<S>(count, x.chan, nch, 1, chunk);
    const int R[1] = {GPU_CONN_RING};
    int p = (r - root - 1 + 2 * n) % n;
    for (size_t off = w.first; off < count; off += w.stride) {
        size_t len = min(w.piece, count - off);
        bool ok;
        if (p == 0) ok = do_step<Tag, OP, PROTO>(x, 0, R, in + off, 1, R, nullptr, len, 0);
        else if (p < n - 1) ok = do_step<Tag, OP, PROTO>(x, 1, R, in + off, 1, R, nullptr, len, 0);
        else ok = do_step<Tag, OP, PROTO>(x, 1, R, in + off, 0, R, out + off, len, div);
        if (!ok) return;
    }
}

/* run one of the ring collectives above with protocol PROTO */
template <class Tag, int OP, int PROTO>
__device__ void ring_coll(const Ctx &x, const gpu_kargs &a, const typename Tr<Tag>::S *in, typename Tr<Tag>::S *out)
{
    switch (a.coll) {
    case TT_COLL_ALLGATHER: ring_allgather<Tag, OP, PROTO>(x, in, out, a.count, a.nch, a.nranks, x.rank); break;
    case TT_COLL_REDUCESCATTER:
        ring_reducescatter<Tag, OP, PROTO>(x, in, out, a.count, a.nch, a.nranks, x.rank, a.avg_div);
        break;
    case TT_COLL_BROADCAST: ring_broadcast<Tag, OP, PROTO>(x, in, out, a.count, a.nch, a.nranks, x.rank, a.root); break;
    case TT_COLL_REDUCE:
        ring_reduce<Tag, OP, PROTO>(x, in, out, a.count, a.nch, a.nranks, x.rank, a.root, a.avg_div);
        break;
    default: ring_allreduce<Tag, OP, PROTO>(x, in, out, a.count, a.nch, a.nranks, x.rank, a.avg_div); break;
    }
}

/* Binary tree in heap order (parent (r-1)/2, children 2r+1, 2r+2).  The
 * root reduces its children's chunks into its own and sends the result
 * straight down.  Other ranks split their warps: the first half sends
 * chunks up (own + children's), the second half forwards results down, so
 * both directions stream at once (and the up/down credit cycle cannot
 * deadlock). */
template <class Tag, int OP, int PROTO>
__device__ void tree_allreduce(Ctx x, const typename Tr<Tag>::S *in, typename Tr<Tag>::S *out, size_t count,
                               int nch, int n, int r, int div)
{
    typedef typename Tr<Tag>::S S;
    const size_t chunk = proto_chunk_bytes<PROTO>() / sizeof(S);
    const chan_walk w = make_walk<S>(count, x.chan, nch, 1, chunk);
    int nchild = (2 * r + 1 < n) + (2 * r + 2 < n);
    const int C[2] = {GPU_CONN_CHILD0, GPU_CONN_CHILD1};
    const int P[1] = {GPU_CONN_PARENT};
    if (r == 0) {
        for (size_t off = w.first; off < count; off += w.stride) {
            size_t len = min(w.piece, count - off);
            if (!do_step<Tag, OP, PROTO>(x, nchild, C, in + off, nchild, C, out + off, len, div)) return;
        }
        return;
    }
    int half = x.nthr / 2;
    bool up = x.tid < half;
    x.nthr = half;
    x.bar = up ? 1 : 2;
    if (!up) x.tid -= half;
    for (size_t off = w.first; off < count; off += w.stride) {
        size_t len = min(w.piece, count - off);
        bool ok = up ? do_step<Tag, OP, PROTO>(x, nchild, C, in + off, 1, P, nullptr, len, 0)
                     : do_step<Tag, OP, PROTO>(x, 1, P, nullptr, nchild, C, out + off, len, 0);
        if (!ok) return;
    }
}

/* One rank: every collective is a copy of in to out (avg divides by 1), over the
 * channel's pieces of the Simple protocol's walk (a ring of one rank). */
template <class Tag, int OP>
__device__ __noinline__ void one_rank_copy(const Ctx &x, const typename Tr<Tag>::S *in, typename Tr<Tag>::S *out, size_t count,
                              int nch, int div)
{
    typedef typename Tr<Tag>::S S;
    const chan_walk w = make_walk<S>(count, x.chan, nch, 1, proto_chunk_bytes<TT_PROTO_SIMPLE>() / sizeof(S));
    for (size_t off = w.first; off < count; off += w.stride) {
        const S *src[1] = {in + off};
        S *dst[1] = {out + off};
        channel_reduce_copy<Tag, OP>(x.tid, x.nthr, 1, src, 0, 1, dst, min(w.piece, count - off), div);
    }
}

template <class Tag, int OP>
__global__ void __launch_bounds__(GPU_THREADS) coll_kernel(gpu_kargs a)
{
    typedef typename Tr<Tag>::S S;
    __shared__ ull ss[GPU_NCONN], rs[GPU_NCONN];
    int li = blockIdx.x / a.nch, c = blockIdx.x % a.nch;
    gpu_chan *ch = a.chans + (size_t)li * a.chstride + c;
    if (threadIdx.x < GPU_NCONN) {
        ss[threadIdx.x] = ch->send_step[threadIdx.x];
        rs[threadIdx.x] = ch->recv_step[threadIdx.x];
    }
    __syncthreads();
    Ctx x;
    x.ch = ch;
    x.rank = a.rank[li];
    x.chan = c;
    x.proto = a.proto;
    x.tid = threadIdx.x;
    x.nthr = blockDim.x;
    x.bar = 1;
    x.ss = ss;
    x.rs = rs;
    x.timeout = a.timeout_ns;
    x.abort = a.abort;
    x.err = a.err;
    const S *in = (const S *)a.send[li];
    S *out = (S *)a.recv[li];
    if (x.rank == a.stall_rank) {
        /* testing aid (TOPOTUNE_GPU_TEST_STALL_RANK): behave like a rank that
         * never entered the collective, so its peers hit their deadline */
    } else if (a.nranks == 1) {
        /* every collective of one rank is a copy (the avg division by 1 included), walked
         * like a ring of one rank: pieces of at most one Simple chunk, round robin */
        one_rank_copy<Tag, OP>(x, in, out, a.count, a.nch, a.avg_div);
    } else if (a.algo == TT_ALGO_TREE && a.coll == TT_COLL_ALLREDUCE) {
        if (a.proto == TT_PROTO_SIMPLE) tree_allreduce<Tag, OP, TT_PROTO_SIMPLE>(x, in, out, a.count, a.nch, a.nranks, x.rank, a.avg_div);
        else if (a.proto == TT_PROTO_LL128) tree_allreduce<Tag, OP, TT_PROTO_LL128>(x, in, out, a.count, a.nch, a.nranks, x.rank, a.avg_div);
        else tree_allreduce<Tag, OP, TT_PROTO_LL>(x, in, out, a.count, a.nch, a.nranks, x.rank, a.avg_div);
    } else {
        if (a.proto == TT_PROTO_SIMPLE) ring_coll<Tag, OP, TT_PROTO_SIMPLE>(x, a, in, out);
        else if (a.proto == TT_PROTO_LL128) ring_coll<Tag, OP, TT_PROTO_LL128>(x, a, in, out);
        else ring_coll<Tag, OP, TT_PROTO_LL>(x, a, in, out);
    }
    __syncthreads();
    if (threadIdx.x < GPU_NCONN) {
        ch->send_step[threadIdx.x] = ss[threadIdx.x];
        ch->recv_step[threadIdx.x] = rs[threadIdx.x];
    }
}

/* Reduce-copy over the whole grid, contiguous layout: block b takes one
 * contiguous 16-byte-aligned share (the layout of a collective's channels up
 * to 2026-12-02).  Kept as a benchmark variant. */
template <class Tag, int OP, int U = 4, int HINT = 0>
__global__ void __launch_bounds__(GPU_THREADS) reduce_copy_block_kernel(void *dst, const void *s0, const void *s1,
                                                                         size_t count)
{
    typedef typename Tr<Tag>::S S;
    const size_t A = 16 / sizeof(S);
    size_t per = (count + gridDim.x - 1) / gridDim.x;
    per = (per + A - 1) / A * A;
    const size_t lo = min(count, (size_t)blockIdx.x * per), hi = min(count, lo + per);
    if (hi <= lo) return;
    const S *src[2] = {(const S *)s0 + lo, s1 ? (const S *)s1 + lo : nullptr};
    S *d[1] = {(S *)dst + lo};
    reduce_copy<Tag, OP, U, HINT>(threadIdx.x, blockDim.x, s1 ? 2 : 1, src, 0, 1, d, hi - lo, 0);
}

/* Standalone reduce-copy (tt_gpu_reduce_copy): blocks take tiles of
 * U x threads x 16 bytes round robin, each through the same reduce_copy.
 * Measured faster than the contiguous layout on H200 (docs/log/2026-11-29-gpu-executor-1xh200.md). */
template <class Tag, int OP, int U = 4>
__global__ void __launch_bounds__(GPU_THREADS) reduce_copy_kernel(void *dst, const void *s0, const void *s1,
                                                                   size_t count)
{
    typedef typename Tr<Tag>::S S;
    const size_t tile = (size_t)U * GPU_THREADS * (16 / sizeof(S));
    for (size_t lo = (size_t)blockIdx.x * tile; lo < count; lo += (size_t)gridDim.x * tile) {
        size_t n = count - lo < tile ? count - lo : tile;
        const S *src[2] = {(const S *)s0 + lo, s1 ? (const S *)s1 + lo : nullptr};
        S *d[1] = {(S *)dst + lo};
        reduce_copy<Tag, OP, U, 0>(threadIdx.x, blockDim.x, s1 ? 2 : 1, src, 0, 1, d, n, 0);
    }
}

typedef void (*exec_ar_fn)(gpu_kargs);
typedef void (*exec_rc_fn)(void *, const void *, const void *, size_t);

/* the kernels of one type, ops sum prod min max (avg runs sum + division) */
template <class Tag> static void exec_fill_row(exec_ar_fn *ar, exec_rc_fn *rc)
{
    ar[TT_SUM] = coll_kernel<Tag, TT_SUM>;
    ar[TT_PROD] = coll_kernel<Tag, TT_PROD>;
    ar[TT_MIN] = coll_kernel<Tag, TT_MIN>;
    ar[TT_MAX] = coll_kernel<Tag, TT_MAX>;
    rc[TT_SUM] = reduce_copy_kernel<Tag, TT_SUM>;
    rc[TT_PROD] = reduce_copy_kernel<Tag, TT_PROD>;
    rc[TT_MIN] = reduce_copy_kernel<Tag, TT_MIN>;
    rc[TT_MAX] = reduce_copy_kernel<Tag, TT_MAX>;
}
/* instantiated in exec_cuda_kern_int.cu / exec_cuda_kern_float.cu (two
 * files so that a parallel build compiles them at once) */
void exec_gpu_fill_int(exec_ar_fn (*ar)[4], exec_rc_fn (*rc)[4]);
void exec_gpu_fill_float(exec_ar_fn (*ar)[4], exec_rc_fn (*rc)[4]);
#endif
