/*
 * exec_cuda_comm.h - the GPU communicator's host-side state, shared by
 * exec_cuda_comm.cu (ranks of one process: thread mode) and
 * exec_cuda_procs.cu (one rank per process: CUDA IPC between processes).
 * C++ (nvcc) only; internal.
 */
#ifndef EXEC_CUDA_COMM_H
#define EXEC_CUDA_COMM_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "exec_gpu_hier.h"
#include "exec_gpu_internal.h"
#include "exec_test_hooks.h"
#include "tt_common.h"
#include "tt_exec.h"

#define GPU_HOST_STAGED_CHANNELS 4

/* Transport of a directed pair (link table).  The IPC kinds are the process
 * mode's: the peer's buffers are mapped with cudaIpcOpenMemHandle. */
enum {
    LINK_LOCAL = 0,     /* same GPU, same process (virtual ranks) */
    LINK_P2P_NVLINK,    /* peer access, same process */
    LINK_P2P_PCIE,
    LINK_HOST,          /* mapped pinned host memory of this process */
    LINK_IPC_SAME,      /* same GPU, another process */
    LINK_IPC_NVLINK,    /* another GPU in another process, peer access over IPC */
    LINK_IPC_PCIE,
    LINK_HOST_SHM,      /* POSIX shared memory mapped by both processes (cudaHostRegister) */
    LINK_NET            /* processes joined only by a host communicator: pinned FIFOs + proxy (exec_cuda_net.cu) */
};
const char *exec_gpu_link_name(int l);

struct gpu_net; /* exec_cuda_net.cu */
struct exec_gpu_hier; /* exec_cuda_hier.cu */

struct dev_group {
    int device;
    std::vector<int> ranks;   /* global ranks on this device, local index order */
    cudaStream_t stream;
    gpu_chan *dchans;         /* [ranks.size() * nch_max] on the device */
    char *pool;               /* device pool of buffers and words */
    size_t pool_bytes, pool_used;
};

struct tt_gpu_comm {
    int nranks, nch_max, timeout_ms, is_virtual, force_host;
    int stall_rank;                /* TOPOTUNE_GPU_TEST_STALL_RANK (testing aid), -1 */
    std::vector<int> dev;          /* device of every rank (process mode: ordinal in that rank's process) */
    std::vector<int> group_of;     /* device group of every rank (-1: rank of another process) */
    std::vector<int> local_of;     /* local index within the group */
    std::vector<int> locals;       /* global ranks of this process, in order */
    std::vector<dev_group> groups;
    std::vector<int> link;         /* [from * n + to] */
    std::vector<gpu_chan> hchans;  /* [rank * nch_max + c] host mirror used while building */
    char *hpool;                   /* host-staged pool (mapped pinned) */
    size_t hpool_bytes, hpool_used;
    volatile int *abort_word;      /* host view of the abort word */
    gpu_err *err;                  /* host view of the first failure */
    volatile int *abort_dev;       /* the same words as kernels address them */
    gpu_err *err_dev;
    uint64_t seq;
    tt_status sticky;
    char sticky_msg[1024];
    char last_algo[32];
    char last_coll[24];            /* label of the last collective launched (messages) */
    /* plans per size (tt_gpu_comm_set_plan_table) */
    std::vector<tt_tune_entry> rules;
    unsigned rule_flags;
    unsigned long rule_fallbacks;
    /* process mode (tt_gpu_comm_init_procs) */
    int procs;                     /* 1: one rank per process, peers over IPC / shm */
    int me;                        /* this process's rank */
    tt_comm *host;                 /* the host communicator (handles, barriers) */
    std::vector<pid_t> pids;       /* process of every rank (same host) */
    std::vector<void *> opened;    /* peers' pools mapped with cudaIpcOpenMemHandle */
    void *shm;                     /* shared segment: control words + host-staged buffers */
    size_t shm_len;
    int shm_registered;
    gpu_net *net;                  /* net transport (process mode across hosts, or forced), else NULL */
    char net_name[48];             /* "NET/tcp": the pairs' link name */
    char net_name_same[64];        /* "NET/tcp (same GPU)": pairs whose ranks share a GPU */
    std::vector<unsigned char> same_gpu; /* process mode: [a * n + b] = 1 when both ranks use one GPU (UUID) */
    std::vector<std::string> pair_why;   /* process mode: [a * n + b] why that pair has its transport (logs) */
    int span_real;                 /* process mode: some pair of ranks is on different real hosts */
    /* hierarchical AllReduce (exec_cuda_hier.cu): built at its first call, NULL before */
    exec_gpu_hier *hier;
    int hier_inter_algo;           /* tt_gpu_comm_set_hier_algo: 0 default, else tt_algo + 1 */
    /* a sub-communicator of a hierarchical plan: */
    int avg_nranks;                /* > 0: avg divides by this (the whole communicator's ranks), else nranks */
    std::vector<int> gname;        /* rank of the whole communicator of every rank here (messages); empty: same */
};

tt_status exec_gpu_cuda_fail(cudaError_t e, const char *what);
int exec_gpu_env_timeout_ms(void);
/* Bytes of the receiver-side block of one connection. */
size_t exec_gpu_recv_block(void);
/* Where the parts of a receiver-side block start: Simple slots, LL slots, LL128 slots, head word. */
struct gpu_block_parts {
    char *simple, *ll, *ll128;
    unsigned long long *head;
};
gpu_block_parts exec_gpu_block_layout(char *blk);
/* Can the pairs `coll` uses with `algo` run LL128 (same GPU or NVLink both ways)?  0 with a
 * sentence naming the first pair that cannot in why. */
int exec_gpu_ll128_pairs_ok(const tt_gpu_comm *g, tt_coll coll, tt_algo algo, char *why, size_t wl);
/* Who sends into recv role `role` of rank r (and with which send role); -1 none. */
int exec_gpu_sender_of(int n, int r, int role, int *srole);
/* Channel cap of one process with `per_gpu` of its ranks on device `device`
 * (every block of one launch resident at once); <= 0 with the error set. */
int exec_gpu_channel_cap(int device, int per_gpu);
/* Process mode: release IPC mappings, shared segment, pools (after a barrier when healthy). */
void exec_gpu_procs_destroy(tt_gpu_comm *g);
/* Process mode: the failure text of a collective stopped by the shared abort word, or a dead peer. */
tt_status exec_gpu_procs_sync(tt_gpu_comm *g);
/* Process mode: one look at the peer processes of this host; one that exited raises the abort word
 * (record: "exited") and is returned, else -1. */
int exec_gpu_procs_check_peers(tt_gpu_comm *g);
/* tt_gpu_comm_init_procs with TOPOTUNE_GPU_EMULATE_HOSTS given: emulate -1 reads the variable,
 * 0 no emulated hosts, k > 0 k emulated hosts (sub-communicators of a hierarchical plan). */
tt_status exec_gpu_comm_init_procs_emulate(tt_gpu_comm **out, tt_comm *host, int device, int emulate);
/* Name of rank r of g in messages: its rank in the whole communicator (sub-communicators), else r. */
static inline int exec_gpu_gname(const tt_gpu_comm *g, int r)
{
    return r >= 0 && r < (int)g->gname.size() ? g->gname[r] : r;
}
/* gpu_err.what of an abort raised by another communicator of a hierarchical plan in the same
 * process: peer = the rank (whole communicator) the first failure names, role = that failure's
 * what, channel = the rank that raised this one, step = the rank that saw the first failure,
 * proto = the phase (EXEC_HIER_PHASE_*). */
#define GPU_ERR_LINKED 6
enum { EXEC_HIER_PHASE_FLAT = 0, EXEC_HIER_PHASE_INTRA = 1, EXEC_HIER_PHASE_INTER = 2 };
const char *exec_gpu_hier_phase_name(int phase);

/* Hierarchical AllReduce (exec_cuda_hier.cu): eff is the resolved plan (algo TT_ALGO_HIER),
 * req_channels the channels the caller asked for (0: each phase's default).  Collective over the
 * communicator; the first call builds the sub-communicators.  sync: waits for the parent's and
 * the sub-communicators' streams, watches the peers, links the aborts; destroy: before the parent. */
tt_status exec_gpu_hier_allreduce(tt_gpu_comm *g, const void *send, void *recv, size_t count, tt_dtype t,
                                  tt_redop op, const tt_plan *eff, int req_channels);
tt_status exec_gpu_hier_sync(tt_gpu_comm *g);
void exec_gpu_hier_destroy(tt_gpu_comm *g);
/* The host grouping of a process-mode communicator from its per-pair transports; TT_OK with
 * *applies = 0 when the plan reduces to a flat AllReduce. */
tt_status exec_gpu_hier_layout(const tt_gpu_comm *g, exec_gpu_hier_groups *hg, int *applies);

/* Net transport (exec_cuda_net.cu).  wire: pinned memory, control words and
 * this rank's channel pointers (g->hchans, reset here) for nch channels of the
 * pairs whose link is LINK_NET (local, no communication; the other pairs,
 * IPC in a mixed communicator, are wired by the caller afterwards).  span_hosts:
 * the ranks are on different real hosts (the proxies' rendezvous is then on
 * tt_host_address, else on 127.0.0.1).  connect: the proxies' host
 * communicator (every process: it also carries aborts to IPC peers) and
 * thread (collective over g->host, with status exchanges).  stop: the thread
 * and that communicator; free: also the pinned memory. */
tt_status exec_gpu_net_wire(tt_gpu_comm *g, int nch, int span_hosts);
tt_status exec_gpu_net_connect(tt_gpu_comm *g);
void exec_gpu_net_stop(tt_gpu_comm *g);
void exec_gpu_net_free(tt_gpu_comm *g);

/* Setup records every process exchanges (process mode, the net transport, the hierarchical plan): M
 * has `int32_t st` and `char err[256]`.  exec_gpu_fail_into fills one with a status and the last
 * error; exec_gpu_gather AllGathers one record per process over host, and every process returns the
 * first failed process's error, "<what> setup (<step>): rank R: <its message>", so all fail at the
 * same step. */
template <class M> void exec_gpu_fail_into(M &m, tt_status st)
{
    m.st = (int32_t)st;
    snprintf(m.err, sizeof m.err, "%s", tt_error_message());
}

template <class M>
tt_status exec_gpu_gather(tt_comm *host, const M &mine, std::vector<M> &all, const char *what, const char *step)
{
    int n = tt_comm_nranks(host);
    all.assign((size_t)n, M());
    tt_status st = tt_allgather(&mine, all.data(), sizeof(M), TT_UINT8, host);
    if (st == TT_OK) st = tt_comm_wait(host);
    if (st != TT_OK) return tt_error_prefix(st, "%s setup (%s exchange)", what, step);
    for (int r = 0; r < n; r++)
        if (all[r].st != TT_OK) {
            all[r].err[sizeof all[r].err - 1] = '\0';
            return tt_error_set((tt_status)all[r].st, "%s setup (%s): rank %d: %s", what, step, r, all[r].err);
        }
    return TT_OK;
}

#endif
