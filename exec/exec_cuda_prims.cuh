/*
 * exec_cuda_prims.cuh - device primitives of the GPU executor: memory-order
 * helpers, the vectorised reduce-copy, and one step of the Simple, LL and
 * LL128 protocols (see exec_gpu_internal.h for the connection layout and
 * docs/gpu-executor.md for the ordering argument).
 */
#ifndef EXEC_CUDA_PRIMS_CUH
#define EXEC_CUDA_PRIMS_CUH

#include "exec_cuda_ops.cuh"
#include "exec_gpu_internal.h"

typedef unsigned long long ull;

__device__ __forceinline__ ull gpu_time_ns(void)
{
    ull t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
/* acquire / release at system scope: peers may be other GPUs or the host */
__device__ __forceinline__ ull ld_acquire_sys(const volatile ull *p)
{
    ull v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release_sys(ull *p, ull v)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/* gpu scope: both sides on one GPU (virtual ranks) */
__device__ __forceinline__ ull ld_acquire_gpu(const volatile ull *p)
{
    ull v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release_gpu(ull *p, ull v)
{
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ ull ld_acquire(const volatile ull *p, int sys)
{
    return sys ? ld_acquire_sys(p) : ld_acquire_gpu(p);
}
__device__ __forceinline__ void st_release(ull *p, ull v, int sys)
{
    if (sys) st_release_sys(p, v);
    else st_release_gpu(p, v);
}
/* named barrier over the n threads of one group */
__device__ __forceinline__ void group_bar(int id, int n)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}
/* barrier that also ORs a predicate over the group: every thread gets the
 * same answer, so a group never splits on "give up" */
__device__ __forceinline__ int group_bar_or(int id, int n, int pred)
{
    int r;
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %3, 0;\n\tbar.red.or.pred q, %1, %2, p;\n\t"
                 "selp.s32 %0, 1, 0, q;\n\t}"
                 : "=r"(r)
                 : "r"(id), "r"(n), "r"(pred)
                 : "memory");
    return r;
}
/* LL line: {data lo, flag, data hi, flag}; 16-byte volatile accesses, each
 * 8-byte half holds its own flag, so a half-written line is never taken. */
__device__ __forceinline__ void ll_store(uint4 *p, uint64_t v, uint32_t flag)
{
    asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"((uint32_t)v), "r"(flag),
                 "r"((uint32_t)(v >> 32)), "r"(flag)
                 : "memory");
}
__device__ __forceinline__ bool ll_try_load(const uint4 *p, uint32_t flag, uint64_t *v)
{
    uint32_t a, b, c, d;
    asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                 : "l"(p)
                 : "memory");
    *v = (uint64_t)a | ((uint64_t)c << 32);
    return b == flag && d == flag;
}

/* Per-block context of one rank and channel (one thread group). */
struct Ctx {
    gpu_chan *ch;
    int rank, chan, proto;
    int tid, nthr, bar;          /* thread index in the group, group size, barrier id */
    ull *ss, *rs;                /* shared: send / receive step per role */
    ull timeout;
    volatile int *abort;         /* global (host-mapped) */
    gpu_err *err;
};

static __device__ __noinline__ void report_fail(const Ctx &x, int role, int peer, int what, ull step, ull seen)
{
    if (atomicCAS((int *)x.abort, 0, 1) == 0) {
        x.err->rank = x.rank;
        x.err->channel = x.chan;
        x.err->peer = peer;
        x.err->role = role;
        x.err->proto = x.proto;
        x.err->what = what;
        x.err->step = step;
        x.err->seen = seen;
        __threadfence_system();
        x.err->set = 1;
        __threadfence_system();
    }
}

/* Spin (one thread) until *p >= want; false on abort or timeout. */
static __device__ bool wait_ge(const Ctx &x, const volatile ull *p, ull want, int role, int peer, int what,
                               int sys)
{
    ull t0 = 0;
    for (unsigned it = 0;; it++) {
        ull v = ld_acquire(p, sys);
        if (v >= want) return true;
        if ((it & 1023) == 1023) {
            if (*x.abort) return false;
            ull now = gpu_time_ns();
            if (!t0) t0 = now;
            else if (now - t0 > x.timeout) {
                report_fail(x, role, peer, what, want, v);
                return false;
            }
        }
    }
}


/* 16-byte accesses; HINT 1 = streaming (evict-first) cache hints */
template <int HINT> __device__ __forceinline__ uint4 ld16(const uint4 *p, bool vol)
{
    if (vol) return __ldcv(p);
    if (HINT) return __ldcs(p);
    return *p;
}
template <int HINT> __device__ __forceinline__ void st16(uint4 *p, uint4 v)
{
    if (HINT) __stcs(p, v);
    else *p = v;
}

/* One round of reduce_copy's vector body: packs i, i + stride, ..., i + (U-1) stride, all U
 * loads of a source issued before the first use.  PART: the last round, each pack under the
 * bound nvec. */
template <class Tag, int OP, int U, int HINT, bool PART>
__device__ __forceinline__ void reduce_copy_round(const uint4 *const *vs, int nsrc, unsigned vol, uint4 *const *vd,
                                                  int ndst, size_t i, size_t stride, size_t nvec, int div)
{
    uint4 acc[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        acc[u] = make_uint4(0, 0, 0, 0);
        if (!PART || i + u * stride < nvec) acc[u] = ld16<HINT>(vs[0] + i + u * stride, vol & 1);
    }
#pragma unroll
    for (int k = 1; k < 3; k++)
        if (k < nsrc) {
            uint4 w[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                w[u] = make_uint4(0, 0, 0, 0);
                if (!PART || i + u * stride < nvec) w[u] = ld16<HINT>(vs[k] + i + u * stride, vol >> k & 1);
            }
#pragma unroll
            for (int u = 0; u < U; u++) acc[u] = red16<Tag, OP>(acc[u], w[u]);
        }
    if (div) {
#pragma unroll
        for (int u = 0; u < U; u++) acc[u] = div16<Tag>(acc[u], div);
    }
#pragma unroll
    for (int k = 0; k < 3; k++)
        if (k < ndst) {
#pragma unroll
            for (int u = 0; u < U; u++)
                if (!PART || i + u * stride < nvec) st16<HINT>(vd[k] + i + u * stride, acc[u]);
        }
}

/* dst[k][i] = (src0 op src1 op ...)[i] (then / div) for i < n, over the
 * group's threads.  16-byte vector accesses when every pointer has the same
 * offset modulo 16 (scalar head up to the boundary, vector body with U packs
 * in flight per thread, its last partial round too, scalar tail); element
 * accesses otherwise.  Sources with bit k of vol set are peer-written
 * slots: read with ld.cv (no stale L1 line). */
template <class Tag, int OP, int U = 4, int HINT = 0>
__device__ __forceinline__ void reduce_copy(int tid, int nthr, int nsrc, const typename Tr<Tag>::S *const *src,
                                            unsigned vol, int ndst, typename Tr<Tag>::S *const *dst, size_t n,
                                            int div)
{
    typedef typename Tr<Tag>::S S;
    const int E = 16 / (int)sizeof(S);
    uintptr_t a0 = (uintptr_t)(nsrc ? (const void *)src[0] : (const void *)dst[0]) & 15;
    bool same = true;
#pragma unroll
    for (int k = 0; k < 3; k++) {
        if (k < nsrc) same &= (((uintptr_t)src[k]) & 15) == a0;
        if (k < ndst) same &= (((uintptr_t)dst[k]) & 15) == a0;
    }
    size_t head = n;
    if (same && (a0 % sizeof(S)) == 0) {
        head = ((16 - a0) & 15) / sizeof(S);
        if (head > n) head = n;
    }
    size_t nvec = (n - head) / E;
    /* scalar part: head and tail */
    auto scalar = [&](size_t i) {
        S v;
        if (vol & 1) v = *(const volatile S *)(src[0] + i);
        else v = src[0][i];
#pragma unroll
        for (int k = 1; k < 3; k++)
            if (k < nsrc) {
                S w = (vol >> k & 1) ? *(const volatile S *)(src[k] + i) : src[k][i];
                v = rop<Tag, OP>(v, w);
            }
        if (div) v = rdiv<Tag>(v, div);
#pragma unroll
        for (int k = 0; k < 3; k++)
            if (k < ndst) dst[k][i] = v;
    };
    for (size_t i = tid; i < head; i += nthr) scalar(i);
    for (size_t i = head + nvec * E + tid; i < n; i += nthr) scalar(i);
    if (!nvec) return;
    const uint4 *vs[3];
    uint4 *vd[3];
#pragma unroll
    for (int k = 0; k < 3; k++) {
        vs[k] = k < nsrc ? (const uint4 *)(src[k] + head) : nullptr;
        vd[k] = k < ndst ? (uint4 *)(dst[k] + head) : nullptr;
    }
    size_t i = tid;
    for (; i + (size_t)(U - 1) * nthr < nvec; i += (size_t)U * nthr)
        reduce_copy_round<Tag, OP, U, HINT, false>(vs, nsrc, vol, vd, ndst, i, nthr, nvec, div);
    /* the last, partial round keeps U loads in flight too (each under its bound): one element
     * per iteration would wait for one memory latency after another */
    if (i < nvec) reduce_copy_round<Tag, OP, U, HINT, true>(vs, nsrc, vol, vd, ndst, i, nthr, nvec, div);
}

/* The channels' reduce-copy (Simple steps and the one-rank copy): about 8 16-byte loads in flight
 * per thread, i.e. U = 8 for one source and 4 for two or three (a round issues its U loads of every
 * source before the first use).  A collective runs one block per channel (at most 64 on 132 SMs), so
 * a block must keep twice the bytes in flight that a block of the standalone reduce-copy (one per SM,
 * U = 4) does: measured on H200 (docs/log/2026-12-02-gpu-copy.md), 64 blocks copying 256 KiB pieces
 * reach 82-83 % of cudaMemcpy with U = 4 and 95-96 % with U = 8.  U = 8 for several sources would
 * also spill the kernel's registers (128 at most for 512 threads).  A step shorter than one round
 * of 8 per thread (64 KiB for 512 threads) keeps U = 4: its partial round of 8 measured 2-4 % slower
 * on 8 virtual ranks at 1-4 MiB than the whole round of 4 it was before. */
template <class Tag, int OP>
__device__ __forceinline__ void channel_reduce_copy(int tid, int nthr, int nsrc, const typename Tr<Tag>::S *const *src,
                                                    unsigned vol, int ndst, typename Tr<Tag>::S *const *dst, size_t n,
                                                    int div)
{
    const size_t round8 = (size_t)8 * nthr * (16 / sizeof(typename Tr<Tag>::S));
    if (nsrc == 1 && n >= round8) reduce_copy<Tag, OP, 8>(tid, nthr, nsrc, src, vol, ndst, dst, n, div);
    else reduce_copy<Tag, OP, 4>(tid, nthr, nsrc, src, vol, ndst, dst, n, div);
}

/* ---- one protocol step ------------------------------------------------
 * Receive from the connections rroles[0..nr), combine with `in` (may be
 * NULL), send to sroles[0..ns), write `out` (may be NULL); n elements.
 * Every thread of the group calls it; false when the block gave up. */
template <class Tag, int OP>
__device__ __noinline__ bool simple_step(const Ctx &x, int nr, const int *rroles, const typename Tr<Tag>::S *in, int ns,
                            const int *sroles, typename Tr<Tag>::S *out, size_t n, int div)
{
    typedef typename Tr<Tag>::S S;
    int give_up = 0;
    if (x.tid == 0) {
        bool ok = true;
        for (int k = 0; k < ns && ok; k++) {
            const gpu_send &c = x.ch->send[sroles[k]];
            ull st = x.ss[sroles[k]];
            if (st >= GPU_SIMPLE_SLOTS)
                ok = wait_ge(x, c.tail, st - GPU_SIMPLE_SLOTS + 1, sroles[k], c.peer, 2, c.sys);
        }
        for (int k = 0; k < nr && ok; k++) {
            const gpu_recv &c = x.ch->recv[rroles[k]];
            ok = wait_ge(x, c.head, x.rs[rroles[k]] + 1, rroles[k], c.peer, 1, c.sys);
        }
        give_up = !ok;
    }
    if (group_bar_or(x.bar, x.nthr, give_up)) return false;
    const S *src[3] = {nullptr, nullptr, nullptr};
    S *dst[3] = {nullptr, nullptr, nullptr};
    int nsrc = 0, ndst = 0;
    unsigned vol = 0;
    if (in) src[nsrc++] = in;
    for (int k = 0; k < nr; k++) {
        vol |= 1u << nsrc;
        src[nsrc++] = (const S *)(x.ch->recv[rroles[k]].simple +
                                  (size_t)(x.rs[rroles[k]] % GPU_SIMPLE_SLOTS) * GPU_SIMPLE_SLOT_BYTES);
    }
    for (int k = 0; k < ns; k++)
        dst[ndst++] = (S *)(x.ch->send[sroles[k]].simple +
                            (size_t)(x.ss[sroles[k]] % GPU_SIMPLE_SLOTS) * GPU_SIMPLE_SLOT_BYTES);
    if (out) dst[ndst++] = out;
    if (nsrc && ndst && n) channel_reduce_copy<Tag, OP>(x.tid, x.nthr, nsrc, src, vol, ndst, dst, n, div);
    /* data before flag: every writer fences at system scope, the barrier
     * gathers the group, one thread publishes with a release store */
    if (ns) {
        int sys = 0;
        for (int k = 0; k < ns; k++) sys |= x.ch->send[sroles[k]].sys;
        if (sys) __threadfence_system();
        else __threadfence();
    }
    group_bar(x.bar, x.nthr);
    if (x.tid == 0) {
        for (int k = 0; k < ns; k++) {
            ull st = ++x.ss[sroles[k]];
            ull *info = x.ch->send[sroles[k]].info; /* net transport: the proxy needs the step's size */
            if (info) info[(st - 1) % GPU_NET_INFO_SLOTS] = (ull)(n * sizeof(S)) | ((ull)TT_PROTO_SIMPLE << 32);
            st_release(x.ch->send[sroles[k]].head, st, x.ch->send[sroles[k]].sys);
        }
        for (int k = 0; k < nr; k++) {
            ull st = ++x.rs[rroles[k]];
            st_release(x.ch->recv[rroles[k]].tail, st, x.ch->recv[rroles[k]].sys);
        }
    }
    return true;
}

__device__ __forceinline__ uint64_t load_bytes(const char *p, int b)
{
    if (b == 8 && !((uintptr_t)p & 7)) return *(const uint64_t *)p;
    uint64_t v = 0;
    for (int i = 0; i < b; i++) v |= (uint64_t)(unsigned char)p[i] << (8 * i);
    return v;
}
__device__ __forceinline__ void store_bytes(char *p, uint64_t v, int b)
{
    if (b == 8 && !((uintptr_t)p & 7)) {
        *(uint64_t *)p = v;
        return;
    }
    for (int i = 0; i < b; i++) p[i] = (char)(v >> (8 * i));
}

template <class Tag, int OP>
__device__ __noinline__ bool ll_step(const Ctx &x, int nr, const int *rroles, const typename Tr<Tag>::S *in, int ns,
                        const int *sroles, typename Tr<Tag>::S *out, size_t n, int div)
{
    typedef typename Tr<Tag>::S S;
    int give_up = 0;
    if (x.tid == 0) {
        bool ok = true;
        for (int k = 0; k < ns && ok; k++) {
            const gpu_send &c = x.ch->send[sroles[k]];
            ull st = x.ss[sroles[k]];
            if (st >= GPU_LL_SLOTS) ok = wait_ge(x, c.tail, st - GPU_LL_SLOTS + 1, sroles[k], c.peer, 2, c.sys);
        }
        give_up = !ok;
    }
    if (group_bar_or(x.bar, x.nthr, give_up)) return false;
    const uint4 *rb[2] = {nullptr, nullptr};
    uint32_t rf[2] = {0, 0};
    uint4 *sb[2] = {nullptr, nullptr};
    for (int k = 0; k < nr; k++) {
        ull st = x.rs[rroles[k]];
        rb[k] = (const uint4 *)(x.ch->recv[rroles[k]].ll + (size_t)(st % GPU_LL_SLOTS) * GPU_LL_SLOT_LINES * 16);
        rf[k] = (uint32_t)(st + 1);
    }
    uint32_t sf = 0;
    for (int k = 0; k < ns; k++) {
        ull st = x.ss[sroles[k]];
        sb[k] = (uint4 *)(x.ch->send[sroles[k]].ll + (size_t)(st % GPU_LL_SLOTS) * GPU_LL_SLOT_LINES * 16);
        sf = (uint32_t)(st + 1); /* all send roles of a step share the step number only if equal: */
    }
    size_t nbytes = n * sizeof(S);
    size_t nlines = (nbytes + 7) / 8;
    for (size_t l = x.tid; l < nlines; l += x.nthr) {
        int b = (int)(nbytes - l * 8 < 8 ? nbytes - l * 8 : 8);
        uint64_t v = 0;
        bool have = false;
        for (int k = 0; k < nr; k++) {
            uint64_t w;
            ull t0 = 0;
            for (unsigned it = 0; !ll_try_load(rb[k] + l, rf[k], &w); it++) {
                if ((it & 1023) == 1023) {
                    if (*x.abort) {
                        give_up = 1;
                        break;
                    }
                    ull now = gpu_time_ns();
                    if (!t0) t0 = now;
                    else if (now - t0 > x.timeout) {
                        report_fail(x, rroles[k], x.ch->recv[rroles[k]].peer, 1, x.rs[rroles[k]] + 1, 0);
                        give_up = 1;
                        break;
                    }
                }
            }
            v = have ? red8<Tag, OP>(v, w) : w;
            have = true;
        }
        if (give_up) break;
        if (in) {
            uint64_t u = load_bytes((const char *)in + l * 8, b);
            v = have ? red8<Tag, OP>(u, v) : u;
        }
        if (div) v = div8<Tag>(v, div);
        for (int k = 0; k < ns; k++) {
            uint32_t f = (uint32_t)(x.ss[sroles[k]] + 1);
            ll_store(sb[k] + l, v, f);
        }
        if (out) store_bytes((char *)out + l * 8, v, b);
    }
    (void)sf;
    if (group_bar_or(x.bar, x.nthr, give_up)) return false;
    if (x.tid == 0) {
        for (int k = 0; k < ns; k++) {
            ull st = ++x.ss[sroles[k]];
            ull *info = x.ch->send[sroles[k]].info; /* net transport: size, then head for the proxy */
            if (info) {
                info[(st - 1) % GPU_NET_INFO_SLOTS] = (ull)(nlines * 16) | ((ull)TT_PROTO_LL << 32);
                st_release(x.ch->send[sroles[k]].head, st, 1);
            }
        }
        for (int k = 0; k < nr; k++) {
            ull st = ++x.rs[rroles[k]];
            st_release(x.ch->recv[rroles[k]].tail, st, x.ch->recv[rroles[k]].sys);
        }
    }
    return true;
}

/* ---- LL128 ----------------------------------------------------------------
 * A slot is GPU_LL128_SLOT_LINES lines of 128 bytes = 16 words of 8 bytes;
 * word 15 is the flag (step + 1), words 0..14 carry 120 payload bytes.  A
 * warp moves 4 lines per instruction: lane L handles line L / 8 of the four
 * and its 16-byte part L % 8 (the part with L % 8 == 7 is payload word 14 +
 * the flag).  The 8 lanes of a line store it with one 16-byte volatile store
 * each in the same instruction, so the line becomes visible as a whole (the
 * hardware guarantee LL128 rests on: same GPU or NVLink; the host refuses the
 * protocol elsewhere); the reader loads the line the same way and takes it
 * when the flag lane sees step + 1, which it passes to the line's 7 other
 * lanes with a shuffle.  Payload byte b of a step lives at line b / 120,
 * offset b % 120.  No head word and no fence: the flag travels with the data. */
__device__ __forceinline__ void ll128_store(char *p, uint64_t a, uint64_t b)
{
    asm volatile("st.volatile.global.v2.u64 [%0], {%1,%2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
__device__ __forceinline__ void ll128_load(const char *p, uint64_t *a, uint64_t *b)
{
    asm volatile("ld.volatile.global.v2.u64 {%0,%1}, [%2];" : "=l"(*a), "=l"(*b) : "l"(p) : "memory");
}
/* 16 payload bytes of user memory at p (b0, b1: valid bytes of each word, 0..8) */
__device__ __forceinline__ void ll128_user_load(const char *p, int b0, int b1, uint64_t *w0, uint64_t *w1)
{
    if (b0 == 8 && b1 == 8 && !((uintptr_t)p & 15)) {
        uint4 v = *(const uint4 *)p;
        *w0 = (uint64_t)v.x | ((uint64_t)v.y << 32);
        *w1 = (uint64_t)v.z | ((uint64_t)v.w << 32);
        return;
    }
    *w0 = b0 ? load_bytes(p, b0) : 0;
    *w1 = b1 ? load_bytes(p + 8, b1) : 0;
}
__device__ __forceinline__ void ll128_user_store(char *p, int b0, int b1, uint64_t w0, uint64_t w1)
{
    if (b0 == 8 && b1 == 8 && !((uintptr_t)p & 15)) {
        uint4 v;
        v.x = (uint32_t)w0;
        v.y = (uint32_t)(w0 >> 32);
        v.z = (uint32_t)w1;
        v.w = (uint32_t)(w1 >> 32);
        *(uint4 *)p = v;
        return;
    }
    if (b0) store_bytes(p, w0, b0);
    if (b1) store_bytes(p + 8, w1, b1);
}

#define GPU_LL128_UNROLL 2 /* line groups of 4 lines in flight per warp (engineering choice) */

template <class Tag, int OP>
__device__ __noinline__ bool ll128_step(const Ctx &x, int nr, const int *rroles, const typename Tr<Tag>::S *in,
                                        int ns, const int *sroles, typename Tr<Tag>::S *out, size_t n, int div)
{
    typedef typename Tr<Tag>::S S;
    const int U = GPU_LL128_UNROLL;
    const unsigned FULL = 0xffffffffu;
    int give_up = 0;
    if (x.tid == 0) {
        bool ok = true;
        for (int k = 0; k < ns && ok; k++) {
            const gpu_send &c = x.ch->send[sroles[k]];
            ull st = x.ss[sroles[k]];
            if (st >= GPU_LL128_SLOTS)
                ok = wait_ge(x, c.tail, st - GPU_LL128_SLOTS + 1, sroles[k], c.peer, 2, c.sys);
        }
        give_up = !ok;
    }
    if (group_bar_or(x.bar, x.nthr, give_up)) return false;
    const char *rb[2] = {nullptr, nullptr};
    ull rf[2] = {0, 0};
    char *sb[2] = {nullptr, nullptr};
    ull sf[2] = {0, 0};
    for (int k = 0; k < nr; k++) {
        ull st = x.rs[rroles[k]];
        rb[k] = x.ch->recv[rroles[k]].ll128 + (size_t)(st % GPU_LL128_SLOTS) * GPU_LL128_SLOT_LINES * 128;
        rf[k] = st + 1;
    }
    for (int k = 0; k < ns; k++) {
        ull st = x.ss[sroles[k]];
        sb[k] = x.ch->send[sroles[k]].ll128 + (size_t)(st % GPU_LL128_SLOTS) * GPU_LL128_SLOT_LINES * 128;
        sf[k] = st + 1;
    }
    const int lane = x.tid & 31, part = lane & 7, flagger = lane | 7;
    const int warp = x.tid >> 5, nwarps = x.nthr >> 5;
    const size_t nbytes = n * sizeof(S);
    const size_t nlines = (nbytes + GPU_LL128_LINE_DATA - 1) / GPU_LL128_LINE_DATA;
    const size_t per = (size_t)4 * U; /* lines per warp and round */
    /* the loop bounds are the same for every lane of a warp, so shuffles and votes see all 32 */
    for (size_t base = (size_t)warp * per; base < nlines; base += (size_t)nwarps * per) {
        bool act[U];
        size_t line[U], off[U];
        int b0[U], b1[U];
        uint64_t v[U][2], mine[U][2];
#pragma unroll
        for (int u = 0; u < U; u++) {
            line[u] = base + (size_t)u * 4 + (lane >> 3);
            act[u] = line[u] < nlines;
            off[u] = line[u] * GPU_LL128_LINE_DATA + (size_t)part * 16;
            long long left = act[u] ? (long long)nbytes - (long long)off[u] : 0;
            b0[u] = left <= 0 ? 0 : left >= 8 ? 8 : (int)left;
            b1[u] = part == 7 || left <= 8 ? 0 : left >= 16 ? 8 : (int)(left - 8);
            v[u][0] = v[u][1] = mine[u][0] = mine[u][1] = 0;
        }
        /* own input first: its loads overlap the wait for the peers' lines */
        if (in) {
#pragma unroll
            for (int u = 0; u < U; u++)
                if (b0[u]) ll128_user_load((const char *)in + off[u], b0[u], b1[u], &mine[u][0], &mine[u][1]);
        }
        for (int k = 0; k < nr; k++) {
            uint64_t w[U][2];
            bool ok[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                ok[u] = !act[u];
                w[u][0] = w[u][1] = 0;
            }
            ull t0 = 0;
            for (unsigned it = 0;; it++) {
                bool all = true;
#pragma unroll
                for (int u = 0; u < U; u++) {
                    bool f = ok[u];
                    if (!ok[u]) {
                        ll128_load(rb[k] + line[u] * 128 + (size_t)part * 16, &w[u][0], &w[u][1]);
                        f = w[u][1] == rf[k]; /* meaningful on the flag lane only */
                    }
                    ok[u] = __shfl_sync(FULL, f, flagger);
                    all &= ok[u];
                }
                if (__all_sync(FULL, all)) break;
                if ((it & 1023) == 1023) {
                    int stop = *x.abort != 0;
                    ull now = gpu_time_ns();
                    if (!t0) t0 = now;
                    else if (now - t0 > x.timeout) stop = 2;
                    if (__any_sync(FULL, stop)) {
                        if (stop == 2 && lane == 0)
                            report_fail(x, rroles[k], x.ch->recv[rroles[k]].peer, 1, x.rs[rroles[k]] + 1, 0);
                        give_up = 1;
                        break;
                    }
                }
            }
            if (give_up) break;
            /* the order of LL: the received values combined, then own input op received */
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (part == 7) w[u][1] = 0; /* the flag is no payload */
                v[u][0] = k ? red8<Tag, OP>(v[u][0], w[u][0]) : w[u][0];
                v[u][1] = k ? red8<Tag, OP>(v[u][1], w[u][1]) : w[u][1];
            }
        }
        if (give_up) break;
        if (in) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                v[u][0] = nr ? red8<Tag, OP>(mine[u][0], v[u][0]) : mine[u][0];
                v[u][1] = nr ? red8<Tag, OP>(mine[u][1], v[u][1]) : mine[u][1];
            }
        }
        if (div) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                v[u][0] = div8<Tag>(v[u][0], div);
                v[u][1] = div8<Tag>(v[u][1], div);
            }
        }
        for (int k = 0; k < ns; k++) {
#pragma unroll
            for (int u = 0; u < U; u++)
                if (act[u]) ll128_store(sb[k] + line[u] * 128 + (size_t)part * 16, v[u][0], part == 7 ? sf[k] : v[u][1]);
        }
        if (out) {
#pragma unroll
            for (int u = 0; u < U; u++)
                if (b0[u]) ll128_user_store((char *)out + off[u], b0[u], b1[u], v[u][0], v[u][1]);
        }
    }
    if (group_bar_or(x.bar, x.nthr, give_up)) return false;
    if (x.tid == 0) {
        for (int k = 0; k < ns; k++) ++x.ss[sroles[k]];
        for (int k = 0; k < nr; k++) {
            ull st = ++x.rs[rroles[k]];
            st_release(x.ch->recv[rroles[k]].tail, st, x.ch->recv[rroles[k]].sys);
        }
    }
    return true;
}

#endif
