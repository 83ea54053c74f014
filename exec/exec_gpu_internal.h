/*
 * exec_gpu_internal.h - structures shared by the GPU executor's host code
 * (exec_cuda_comm.cu) and kernels (exec_cuda_kernels.cu).  C++ (nvcc) only.
 *
 * Connections.  Every directed pair of ranks that an algorithm uses (ring:
 * r -> r+1; tree: child <-> parent) is one connection per channel.  The
 * RECEIVER side owns the data buffers and the `head` word; the SENDER side
 * owns the `tail` word.  Steps are numbered per connection (64-bit, never
 * reset): step s of the Simple protocol uses slot s % GPU_SIMPLE_SLOTS, of
 * LL slot s % GPU_LL_SLOTS.  Both protocols share the step numbers and the
 * credit words, so a communicator may switch protocol between collectives.
 *   - sender:   wait until step - tail < SLOTS (a free slot), write, then
 *               (Simple) fence + release-store head = step + 1;
 *               (LL) every 16-byte line carries the flag step + 1;
 *               (LL128) every 128-byte line carries the flag step + 1 in its last word.
 *   - receiver: wait for head > step (Simple) or for the flags (LL, LL128), read,
 *               then release-store tail = step + 1 (slot free again).
 * Where the words live depends on the transport of the pair (local device,
 * peer device, or mapped pinned host memory for host-staged pairs).
 */
#ifndef EXEC_GPU_INTERNAL_H
#define EXEC_GPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tt_exec.h"

/* Engineering choices (documented in docs/gpu-executor.md). */
#define GPU_MAX_RANKS 64               /* ranks of one communicator */
#define GPU_MAX_CHANNELS 64
#define GPU_THREADS 512                /* threads per channel (thread block) */
#define GPU_SIMPLE_SLOTS 4
#define GPU_SIMPLE_SLOT_BYTES (256u * 1024u)
#define GPU_LL_SLOTS 8
#define GPU_LL_SLOT_LINES 2048u        /* 16-byte lines: 8 data bytes + 2 flags */
#define GPU_LL_SLOT_DATA (GPU_LL_SLOT_LINES * 8u)
#define GPU_NET_INFO_SLOTS 8           /* net transport: step-info ring (>= both protocols' slot counts) */
/* LL128 (facts from NCCL's published design): 128-byte lines of 16 8-byte words, the last word of
 * each line is the flag, so 120 of 128 bytes are payload; a warp stores and loads 4 whole lines
 * per instruction (8 threads x 16 bytes per line). */
#define GPU_LL128_SLOTS 8
#define GPU_LL128_SLOT_LINES 1024u     /* 128-byte lines per slot: 128 KiB, 120 KiB of payload */
#define GPU_LL128_LINE_DATA 120u
#define GPU_LL128_SLOT_DATA (GPU_LL128_SLOT_LINES * GPU_LL128_LINE_DATA)

/* Connection roles of one (rank, channel). */
enum { GPU_CONN_RING = 0, GPU_CONN_PARENT = 1, GPU_CONN_CHILD0 = 2, GPU_CONN_CHILD1 = 3, GPU_NCONN = 4 };

typedef struct {
    char *simple;                        /* peer's Simple slots (remote) */
    char *ll;                            /* peer's LL slots (remote) */
    char *ll128;                         /* peer's LL128 slots (remote, 128-byte aligned) */
    unsigned long long *head;            /* peer's head word (remote) */
    volatile unsigned long long *tail;   /* credit word (written by the peer) */
    unsigned long long *info;            /* net transport only (else NULL): [GPU_NET_INFO_SLOTS], step s's
                                          * bytes | protocol << 32 at s % GPU_NET_INFO_SLOTS, written before
                                          * head (LL steps then publish head too); exec_gpu_net.h */
    int peer;                            /* -1: not connected */
    int sys;                             /* 1: the peer is another GPU or host memory (system scope) */
} gpu_send;

typedef struct {
    char *simple;
    char *ll;
    char *ll128;
    volatile unsigned long long *head;   /* written by the peer */
    unsigned long long *tail;            /* the peer's credit word (remote) */
    int peer;
    int sys;                             /* 1: system scope, 0: same GPU (gpu scope suffices) */
} gpu_recv;

typedef struct {
    gpu_send send[GPU_NCONN];
    gpu_recv recv[GPU_NCONN];
    unsigned long long send_step[GPU_NCONN];
    unsigned long long recv_step[GPU_NCONN];
} gpu_chan;

/* First failure seen by a kernel (mapped pinned host memory). */
typedef struct {
    int set;
    int rank, channel, peer, role, proto;
    int what;                            /* 1 = waiting for data, 2 = waiting for a free slot, 3 = aborted */
    unsigned long long step, seen;
} gpu_err;

typedef struct {
    gpu_chan *chans;                     /* [nloc * chstride] on this device */
    int chstride;                        /* channels allocated per rank */
    int nloc, nch, nranks, algo, proto;
    int coll;                            /* tt_coll: AllReduce, AllGather, ReduceScatter, Broadcast, Reduce */
    int root;                            /* Broadcast / Reduce */
    int avg_div;                         /* > 0: divide the finished sum (avg) */
    int stall_rank;                      /* testing aid: this rank skips the collective (-1: none) */
    int rank[GPU_MAX_RANKS];             /* global rank of local index */
    const void *send[GPU_MAX_RANKS];
    void *recv[GPU_MAX_RANKS];
    size_t count;                        /* the collective's count argument (per-rank block for AllGather /
                                          * ReduceScatter) */
    unsigned long long timeout_ns;
    volatile int *abort;                 /* mapped host word shared by every device */
    gpu_err *err;
} gpu_kargs;

#ifdef __CUDACC__
#include <cuda_runtime.h>
/* kernels (exec_cuda_kernels.cu): the collective a->coll (one kernel per type and op for all of them) */
tt_status exec_gpu_launch_coll(const gpu_kargs *a, tt_dtype t, tt_redop op, cudaStream_t s);
/* dst = src0 op src1 (src1 may be NULL: copy) over `count` elements */
tt_status exec_gpu_launch_reduce_copy(void *dst, const void *src0, const void *src1, size_t count, tt_dtype t,
                                      tt_redop op, int blocks, cudaStream_t s);
int exec_gpu_max_blocks_per_sm(tt_dtype t, tt_redop op);
/* float sum; variants as tt_gpu_bench_copy */
tt_status exec_gpu_launch_reduce_copy_variant(int variant, void *dst, const void *src0, const void *src1,
                                              size_t count, int blocks, cudaStream_t s);
#endif

#endif
