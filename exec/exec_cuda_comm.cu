/*
 * exec_cuda_comm.cu - host side of the GPU executor: GPU communicators of
 * one process, the transport chosen per pair (same device = virtual ranks,
 * CUDA peer access, host-staged through mapped pinned memory), buffers
 * allocated once at creation, plans, launches, deadlines and the
 * reduce-copy benchmark.  Ranks in separate processes (CUDA IPC): exec_cuda_procs.cu,
 * sharing the state of exec_cuda_comm.h.
 */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "exec_cuda_comm.h"
#include "exec_gpu_health.h"
#include "exec_gpu_net.h"
#include "exec_gpu_internal.h"
#include "tt_common.h"
#include "tt_exec.h"

#define SUBSYS "gpu"
/* Model assumptions (docs/gpu-executor.md): bytes per channel.  The protocol and algorithm switch
 * points of the default plan (LL and tree up to 64 KiB, tree on > 2 ranks) are the algorithm
 * registry's rule (tt_algo_default / tt_proto_default, common/common_algos.c). */
#define GPU_BYTES_PER_CHANNEL (256u * 1024u)

const char *exec_gpu_link_name(int l)
{
    switch (l) {
    case LINK_LOCAL: return "local (same GPU, virtual ranks)";
    case LINK_P2P_NVLINK: return "P2P/NVLink";
    case LINK_P2P_PCIE: return "P2P/PCIe";
    case LINK_IPC_SAME: return "IPC (same GPU)";
    case LINK_IPC_NVLINK: return "IPC/NVLink";
    case LINK_IPC_PCIE: return "IPC/PCIe";
    case LINK_HOST_SHM: return "host-staged (shm)";
    case LINK_NET: return "NET";
    default: return "host-staged (pinned host memory)";
    }
}
#define link_name exec_gpu_link_name

tt_status exec_gpu_cuda_fail(cudaError_t e, const char *what)
{
    return tt_error_set(TT_ERR_SYSTEM, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}
#define cuda_fail exec_gpu_cuda_fail

static_assert((int)cudaErrorNoDevice == EXEC_CUDA_ERR_NO_DEVICE && (int)cudaErrorInsufficientDriver == EXEC_CUDA_ERR_INSUFFICIENT_DRIVER &&
                  (int)cudaErrorSystemNotReady == EXEC_CUDA_ERR_SYSTEM_NOT_READY &&
                  (int)cudaErrorSystemDriverMismatch == EXEC_CUDA_ERR_DRIVER_MISMATCH &&
                  (int)cudaErrorDevicesUnavailable == EXEC_CUDA_ERR_DEVICES_UNAVAILABLE,
              "exec_gpu_health.h's CUDA error numbers");

/* what CUDA says about the GPUs; tt_gpu_available (exec_gpu_health.c) explains a failure */
extern "C" void exec_gpu_cuda_probe(exec_gpu_cuda_state *s)
{
    memset(s, 0, sizeof *s);
    s->built = 1;
    cudaError_t e = cudaGetDeviceCount(&s->count);
    if (e != cudaSuccess) s->count = 0;
    else if (s->count <= 0) e = cudaErrorNoDevice;
    s->err = (int)e;
    snprintf(s->errname, sizeof s->errname, "%s", cudaGetErrorName(e));
    snprintf(s->errmsg, sizeof s->errmsg, "%s", cudaGetErrorString(e));
    if (cudaRuntimeGetVersion(&s->runtime_ver) != cudaSuccess) s->runtime_ver = 0;
    if (cudaDriverGetVersion(&s->driver_ver) != cudaSuccess) s->driver_ver = 0;
    cudaGetLastError();
}

int exec_gpu_env_timeout_ms(void)
{
    const char *s = tt_setting("TOPOTUNE_TIMEOUT_MS");
    long long v;
    if (s && tt_parse_ll(s, &v) == TT_OK && v >= 1 && v <= 86400000) return (int)v;
    return 30000;
}

/* Bytes of the receiver-side block of one connection: Simple slots, LL slots, LL128 slots (each
 * part a multiple of 256 bytes, so the LL128 lines stay 128-byte aligned), the head word. */
static const size_t SIMPLE_PART = (size_t)GPU_SIMPLE_SLOTS * GPU_SIMPLE_SLOT_BYTES;
static const size_t LL_PART = (size_t)GPU_LL_SLOTS * GPU_LL_SLOT_LINES * 16;
static const size_t LL128_PART = (size_t)GPU_LL128_SLOTS * GPU_LL128_SLOT_LINES * 128;
static const size_t RECV_BLOCK = SIMPLE_PART + LL_PART + LL128_PART + 256;
size_t exec_gpu_recv_block(void) { return RECV_BLOCK; }
gpu_block_parts exec_gpu_block_layout(char *blk)
{
    gpu_block_parts b;
    b.simple = blk;
    b.ll = blk + SIMPLE_PART;
    b.ll128 = b.ll + LL_PART;
    b.head = (unsigned long long *)(b.ll128 + LL128_PART);
    return b;
}

/* LL128 relies on a warp's store of a 128-byte line becoming visible as a whole: true between
 * ranks of one GPU and over NVLink; not promised over PCIe or through host memory. */
static int ll128_link_ok(int l)
{
    return l == LINK_LOCAL || l == LINK_P2P_NVLINK || l == LINK_IPC_SAME || l == LINK_IPC_NVLINK;
}

int exec_gpu_ll128_pairs_ok(const tt_gpu_comm *g, tt_coll coll, tt_algo algo, char *why, size_t wl)
{
    int n = g->nranks;
    int tree = algo == TT_ALGO_TREE && coll == TT_COLL_ALLREDUCE;
    for (int r = 0; r < n && n > 1; r++)
        for (int role = 0; role < GPU_NCONN; role++) {
            if (!tree && role != GPU_CONN_RING) continue;
            if (tree && role == GPU_CONN_RING) continue;
            int srole, s = exec_gpu_sender_of(n, r, role, &srole);
            if (s < 0) continue;
            int l = g->link[(size_t)s * n + r];
            if (!ll128_link_ok(l)) {
                snprintf(why, wl, "protocol LL128 needs ranks on one GPU or NVLink peers (a warp's 128-byte line "
                                  "must become visible as a whole); rank %d -> %d uses %s: use ll or simple",
                         s, r, link_name(l));
                return 0;
            }
        }
    return 1;
}

/* Who sends into recv role `role` of rank r (and with which send role). */
int exec_gpu_sender_of(int n, int r, int role, int *srole)
{
    switch (role) {
    case GPU_CONN_RING: *srole = GPU_CONN_RING; return n >= 2 ? (r - 1 + n) % n : -1;
    case GPU_CONN_PARENT:
        if (r == 0) return -1;
        *srole = ((r - 1) % 2) ? GPU_CONN_CHILD1 : GPU_CONN_CHILD0;
        return (r - 1) / 2;
    case GPU_CONN_CHILD0:
    case GPU_CONN_CHILD1: {
        int c = 2 * r + 1 + (role - GPU_CONN_CHILD0);
        *srole = GPU_CONN_PARENT;
        return c < n ? c : -1;
    }
    }
    return -1;
}

static void gpu_free_all(tt_gpu_comm *g)
{
    for (auto &gr : g->groups) {
        cudaSetDevice(gr.device);
        if (gr.stream) cudaStreamDestroy(gr.stream);
        if (gr.dchans) cudaFree(gr.dchans);
        if (gr.pool) cudaFree(gr.pool);
    }
    if (g->hpool) cudaFreeHost(g->hpool);
    if (g->abort_word) cudaFreeHost((void *)g->abort_word);
    if (g->err) cudaFreeHost(g->err);
    delete g;
}

int exec_gpu_channel_cap(int device, int per_gpu)
{
    int sms = 0, occ = 1 << 30;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaSetDevice(device);
    for (int t = 0; t < TT_NDTYPES; t++)
        for (int o = 0; o < TT_NREDOPS; o++) occ = std::min(occ, exec_gpu_max_blocks_per_sm((tt_dtype)t, (tt_redop)o));
    if (occ <= 0 || sms <= 0) {
        tt_error_set(TT_ERR_SYSTEM, "GPU communicator: the AllReduce kernels cannot run on device %d (occupancy 0)",
                     device);
        return 0;
    }
    long cap = (long)sms * occ / (long)(per_gpu > 0 ? per_gpu : 1);
    if (cap < 1) {
        tt_error_set(TT_ERR_LIMIT, "GPU communicator: %d ranks on one GPU need %d resident blocks but the GPU holds "
                                   "%d (%d SMs x %d blocks); use fewer virtual ranks", per_gpu, per_gpu, sms * occ,
                     sms, occ);
        return 0;
    }
    return (int)std::min<long>(cap, GPU_MAX_CHANNELS);
}

static pthread_mutex_t peer_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char peer_enabled[64][64];

extern "C" tt_status tt_gpu_comm_init(tt_gpu_comm **out, int nranks, const int *devices)
{
    *out = NULL;
    char why[256];
    int ndev = tt_gpu_available(why, sizeof why);
    if (!ndev) return tt_error_set(TT_ERR_UNSUPPORTED, "GPU communicator: %s", why);
    if (nranks < 1 || nranks > GPU_MAX_RANKS)
        return tt_error_set(TT_ERR_INVALID, "GPU communicator: %d ranks (allowed 1..%d)", nranks, GPU_MAX_RANKS);
    tt_gpu_comm *g = new tt_gpu_comm();
    g->nranks = nranks;
    g->timeout_ms = exec_gpu_env_timeout_ms();
    g->stall_rank = exec_test_stall_rank(nranks); /* tests only (exec_test_hooks.c) */
    int tmode;
    if (exec_gpu_transport_parse(tt_setting("TOPOTUNE_GPU_TRANSPORT"), &tmode) != TT_OK) {
        delete g;
        return TT_ERR_INVALID;
    }
    if (tmode == GPU_TP_NET) {
        delete g;
        return tt_error_set(TT_ERR_UNSUPPORTED, "TOPOTUNE_GPU_TRANSPORT=net needs GPU ranks in processes (one "
                                                "rank per process: tt_gpu_comm_init_procs, topo-exec -g 1 --rank "
                                                "R); the ranks of one process use local, P2P or host links");
    }
    g->force_host = tmode == GPU_TP_HOST;
    g->dev.resize(nranks);
    for (int r = 0; r < nranks; r++) {
        g->dev[r] = devices ? devices[r] : r % ndev;
        if (g->dev[r] < 0 || g->dev[r] >= ndev) {
            delete g;
            return tt_error_set(TT_ERR_INVALID, "GPU communicator: rank %d asks for device %d but only %d exist",
                                r, devices[r], ndev);
        }
    }
    /* group ranks by device */
    g->group_of.resize(nranks);
    g->local_of.resize(nranks);
    for (int r = 0; r < nranks; r++) {
        int gi = -1;
        for (size_t k = 0; k < g->groups.size(); k++)
            if (g->groups[k].device == g->dev[r]) gi = (int)k;
        if (gi < 0) {
            dev_group ng{};
            ng.device = g->dev[r];
            g->groups.push_back(ng);
            gi = (int)g->groups.size() - 1;
        }
        g->group_of[r] = gi;
        g->local_of[r] = (int)g->groups[gi].ranks.size();
        g->groups[gi].ranks.push_back(r);
        if (g->groups[gi].ranks.size() > 1) g->is_virtual = 1;
    }
    /* channels: every block of one device must be resident at once */
    size_t maxloc = 0;
    for (auto &gr : g->groups) maxloc = std::max(maxloc, gr.ranks.size());
    int sms = 1 << 30;
    for (auto &gr : g->groups) {
        int v = 0;
        cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, gr.device);
        sms = std::min(sms, v);
    }
    cudaSetDevice(g->groups[0].device);
    int occ = 1 << 30;
    for (int t = 0; t < TT_NDTYPES; t++)
        for (int o = 0; o < TT_NREDOPS; o++) occ = std::min(occ, exec_gpu_max_blocks_per_sm((tt_dtype)t, (tt_redop)o));
    if (occ <= 0) {
        int d0 = g->groups[0].device;
        delete g;
        return tt_error_set(TT_ERR_SYSTEM, "GPU communicator: the AllReduce kernels cannot run on device %d "
                                           "(occupancy 0)", d0);
    }
    long cap = (long)sms * occ / (long)maxloc;
    if (cap < 1) {
        delete g;
        return tt_error_set(TT_ERR_LIMIT, "GPU communicator: %zu ranks on one GPU need %zu resident blocks but the "
                                          "GPU holds %d (%d SMs x %d blocks); use fewer virtual ranks",
                            maxloc, maxloc, sms * occ, sms, occ);
    }
    g->nch_max = (int)std::min<long>(cap, GPU_MAX_CHANNELS);
    /* links */
    g->link.assign((size_t)nranks * nranks, LINK_LOCAL);
    for (int a = 0; a < nranks; a++)
        for (int b = 0; b < nranks; b++) {
            int da = g->dev[a], db = g->dev[b], l = LINK_LOCAL;
            if (g->force_host) l = LINK_HOST;
            else if (da != db) {
                int ab = 0, ba = 0, atom = 0;
                cudaDeviceCanAccessPeer(&ab, da, db);
                cudaDeviceCanAccessPeer(&ba, db, da);
                if (ab && ba) {
                    /* heuristic: native atomics over the link are an NVLink property on
                     * the machines we know (PCIe P2P rarely offers them) */
                    cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, da, db);
                    l = atom ? LINK_P2P_NVLINK : LINK_P2P_PCIE;
                } else {
                    l = LINK_HOST;
                }
            }
            g->link[(size_t)a * nranks + b] = l;
        }
    pthread_mutex_lock(&peer_mu);
    for (int a = 0; a < nranks; a++)
        for (int b = 0; b < nranks; b++) {
            int l = g->link[(size_t)a * nranks + b];
            if ((l == LINK_P2P_NVLINK || l == LINK_P2P_PCIE) && g->dev[a] < 64 && g->dev[b] < 64 &&
                !peer_enabled[g->dev[a]][g->dev[b]]) {
                cudaSetDevice(g->dev[a]);
                cudaError_t e = cudaDeviceEnablePeerAccess(g->dev[b], 0);
                /* enabled once per process and device pair (peer access lasts as long
                 * as the context; asking again is an API error sanitizers report) */
                if (e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled)
                    peer_enabled[g->dev[a]][g->dev[b]] = 1;
                if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) {
                    TT_WARN(SUBSYS, "peer access %d -> %d failed (%s): host-staged instead", g->dev[a], g->dev[b],
                            cudaGetErrorString(e));
                    g->link[(size_t)a * nranks + b] = g->link[(size_t)b * nranks + a] = LINK_HOST;
                }
                cudaGetLastError();
            }
        }
    pthread_mutex_unlock(&peer_mu);
    if (g->force_host || std::count(g->link.begin(), g->link.end(), (int)LINK_HOST))
        g->nch_max = std::min(g->nch_max, GPU_HOST_STAGED_CHANNELS);
    const int nch = g->nch_max;
    /* size the pools: receiver blocks live with the receiver (device) or in
     * host memory; tail words live with the sender (or host) */
    std::vector<size_t> need(g->groups.size(), 0);
    size_t hneed = 0;
    for (int r = 0; r < nranks; r++)
        for (int role = 0; role < GPU_NCONN; role++) {
            int srole, s = exec_gpu_sender_of(nranks, r, role, &srole);
            if (s < 0) continue;
            bool host = g->link[(size_t)s * nranks + r] == LINK_HOST;
            size_t blk = (RECV_BLOCK + 256) * nch;
            if (host) hneed += blk;
            else need[g->group_of[r]] += blk;
        }
    tt_status st = TT_OK;
    cudaError_t e;
    for (size_t k = 0; k < g->groups.size() && st == TT_OK; k++) {
        dev_group &gr = g->groups[k];
        cudaSetDevice(gr.device);
        if ((e = cudaStreamCreate(&gr.stream)) != cudaSuccess) {
            st = cuda_fail(e, "cudaStreamCreate");
            break;
        }
        gr.pool_bytes = need[k] + 256;
        if ((e = cudaMalloc((void **)&gr.pool, gr.pool_bytes)) != cudaSuccess ||
            (e = cudaMemset(gr.pool, 0, gr.pool_bytes)) != cudaSuccess) {
            st = tt_error_set(TT_ERR_NOMEM, "GPU communicator: %zu MiB of connection buffers on device %d: %s",
                              gr.pool_bytes >> 20, gr.device, cudaGetErrorString(e));
            break;
        }
        if ((e = cudaMalloc((void **)&gr.dchans, sizeof(gpu_chan) * gr.ranks.size() * nch)) != cudaSuccess) {
            st = cuda_fail(e, "cudaMalloc(channels)");
            break;
        }
    }
    if (st == TT_OK) {
        g->hpool_bytes = hneed + 256;
        if ((e = cudaHostAlloc((void **)&g->hpool, g->hpool_bytes, cudaHostAllocMapped | cudaHostAllocPortable)) !=
                cudaSuccess ||
            (e = cudaHostAlloc((void **)&g->abort_word, 256, cudaHostAllocMapped | cudaHostAllocPortable)) !=
                cudaSuccess ||
            (e = cudaHostAlloc((void **)&g->err, sizeof(gpu_err), cudaHostAllocMapped | cudaHostAllocPortable)) !=
                cudaSuccess)
            st = cuda_fail(e, "cudaHostAlloc(mapped)");
        else {
            memset(g->hpool, 0, g->hpool_bytes);
            memset((void *)g->abort_word, 0, 256);
            memset(g->err, 0, sizeof *g->err);
            /* UVA: the host pointer of mapped pinned memory is valid on every device */
            g->abort_dev = g->abort_word;
            g->err_dev = g->err;
        }
    }
    if (st != TT_OK) {
        gpu_free_all(g);
        return st;
    }
    /* wire the connections */
    g->hchans.assign((size_t)nranks * nch, gpu_chan{});
    for (auto &c : g->hchans)
        for (int k = 0; k < GPU_NCONN; k++) c.send[k].peer = c.recv[k].peer = -1;
    auto take = [&](bool host, int grp, size_t bytes) -> char * {
        bytes = (bytes + 255) & ~(size_t)255;
        if (host) {
            char *p = g->hpool + g->hpool_used;
            g->hpool_used += bytes;
            return p; /* UVA: the host pointer of mapped pinned memory is valid on every device */
        }
        dev_group &gr = g->groups[grp];
        char *p = gr.pool + gr.pool_used;
        gr.pool_used += bytes;
        return p;
    };
    for (int r = 0; r < nranks; r++)
        for (int role = 0; role < GPU_NCONN; role++) {
            int srole, s = exec_gpu_sender_of(nranks, r, role, &srole);
            if (s < 0) continue;
            bool host = g->link[(size_t)s * nranks + r] == LINK_HOST;
            for (int c = 0; c < nch; c++) {
                char *blk = take(host, g->group_of[r], RECV_BLOCK);
                char *tail = take(host, g->group_of[s], 256);
                gpu_recv &rv = g->hchans[(size_t)r * nch + c].recv[role];
                gpu_send &sd = g->hchans[(size_t)s * nch + c].send[srole];
                gpu_block_parts bp = exec_gpu_block_layout(blk);
                rv.simple = sd.simple = bp.simple;
                rv.ll = sd.ll = bp.ll;
                rv.ll128 = sd.ll128 = bp.ll128;
                rv.head = bp.head;
                sd.head = bp.head;
                rv.tail = (unsigned long long *)tail;
                sd.tail = (unsigned long long *)tail;
                rv.peer = s;
                sd.peer = r;
                /* system scope unless both ends are the same GPU and the words live there */
                rv.sys = sd.sys = (host || g->dev[s] != g->dev[r]) ? 1 : 0;
            }
            if (role == GPU_CONN_RING || role == GPU_CONN_PARENT || role == GPU_CONN_CHILD0 ||
                role == GPU_CONN_CHILD1)
                TT_INFO(SUBSYS, "rank %d -> %d via %s (%s, %d channel(s))", s, r,
                        link_name(g->link[(size_t)s * nranks + r]),
                        role == GPU_CONN_RING ? "ring" : role == GPU_CONN_PARENT ? "tree down" : "tree up", nch);
        }
    for (auto &gr : g->groups) {
        std::vector<gpu_chan> tmp;
        for (int r : gr.ranks)
            for (int c = 0; c < nch; c++) tmp.push_back(g->hchans[(size_t)r * nch + c]);
        cudaSetDevice(gr.device);
        if ((e = cudaMemcpy(gr.dchans, tmp.data(), tmp.size() * sizeof(gpu_chan), cudaMemcpyHostToDevice)) !=
            cudaSuccess) {
            st = cuda_fail(e, "cudaMemcpy(channels)");
            gpu_free_all(g);
            return st;
        }
    }
    for (int r = 0; r < nranks; r++) g->locals.push_back(r);
    g->me = 0;
    TT_INFO(SUBSYS, "GPU communicator: %d rank(s) on %zu GPU(s)%s, up to %d channel(s), %d threads each", nranks,
            g->groups.size(), g->is_virtual ? " (VIRTUAL ranks share a GPU)" : "", nch, GPU_THREADS);
    *out = g;
    return TT_OK;
}

extern "C" tt_status tt_gpu_comm_destroy(tt_gpu_comm *g)
{
    if (!g) return TT_OK;
    if (g->procs) {
        if (g->hier) exec_gpu_hier_destroy(g); /* its sub-communicators first: barriers over their groups */
        exec_gpu_procs_destroy(g);
        return TT_OK;
    }
    for (auto &gr : g->groups) {
        cudaSetDevice(gr.device);
        if (gr.stream) cudaStreamSynchronize(gr.stream);
    }
    gpu_free_all(g);
    return TT_OK;
}

extern "C" int tt_gpu_comm_nranks(const tt_gpu_comm *g) { return g->nranks; }
extern "C" int tt_gpu_comm_nlocal(const tt_gpu_comm *g) { return (int)g->locals.size(); }
extern "C" int tt_gpu_comm_local_rank(const tt_gpu_comm *g, int i)
{
    return i >= 0 && i < (int)g->locals.size() ? g->locals[i] : -1;
}
/* index of a global rank among this process's ranks, -1 if it lives elsewhere */
static int local_index(const tt_gpu_comm *g, int rank)
{
    for (size_t i = 0; i < g->locals.size(); i++)
        if (g->locals[i] == rank) return (int)i;
    return -1;
}
extern "C" int tt_gpu_comm_is_virtual(const tt_gpu_comm *g) { return g->is_virtual; }
extern "C" int tt_gpu_comm_device(const tt_gpu_comm *g, int rank)
{
    return rank >= 0 && rank < g->nranks ? g->dev[rank] : -1;
}
extern "C" int tt_gpu_comm_max_channels(const tt_gpu_comm *g) { return g->nch_max; }
extern "C" int tt_gpu_comm_net_pairs(const tt_gpu_comm *g)
{
    int k = 0;
    for (size_t i = 0; i < g->link.size(); i++) k += g->link[i] == LINK_NET;
    return k;
}
extern "C" int tt_gpu_comm_hosts(const tt_gpu_comm *g)
{
    if (!g) return 0;
    if (g->link.size() < (size_t)g->nranks * g->nranks) return g->nranks > 0; /* no pair table: one host */
    /* a host per rank that shares it with no lower rank (hosts numbered by their lowest rank, as
     * the hierarchical layout numbers them) */
    int h = 0;
    for (int r = 0; r < g->nranks; r++) {
        int first = 1;
        for (int q = 0; q < r && first; q++) first = g->link[(size_t)q * g->nranks + r] == LINK_NET;
        h += first;
    }
    return h;
}
extern "C" const char *tt_gpu_comm_link(const tt_gpu_comm *g, int from, int to)
{
    if (from < 0 || to < 0 || from >= g->nranks || to >= g->nranks) return "none";
    int l = g->link[(size_t)from * g->nranks + to];
    if (l == LINK_NET && g->net_name[0]) /* "NET/tcp": with its host transport */
        return g->same_gpu.size() == (size_t)g->nranks * g->nranks && g->same_gpu[(size_t)from * g->nranks + to]
                   ? g->net_name_same
                   : g->net_name;
    return link_name(l);
}
extern "C" tt_status tt_gpu_comm_set_hier_algo(tt_gpu_comm *g, tt_algo inter)
{
    if (!g) return tt_error_set(TT_ERR_INVALID, "tt_gpu_comm_set_hier_algo: NULL communicator");
    if (inter != TT_ALGO_DEFAULT && inter != TT_ALGO_RING && inter != TT_ALGO_TREE)
        return tt_error_set(TT_ERR_UNSUPPORTED, "hierarchical AllReduce: inter-host algorithm %s cannot run there; "
                                                "available: ring, tree, default", tt_algo_label(inter));
    g->hier_inter_algo = inter == TT_ALGO_DEFAULT ? 0 : (int)inter + 1;
    return TT_OK;
}
extern "C" void tt_gpu_comm_set_timeout(tt_gpu_comm *g, int timeout_ms)
{
    g->timeout_ms = timeout_ms > 0 ? timeout_ms : exec_gpu_env_timeout_ms();
}

static tt_status gpu_resolve_plain(const tt_gpu_comm *g, tt_coll coll, size_t count, tt_dtype t,
                                   const tt_plan *req, tt_plan *eff)
{
    tt_plan p = req ? *req : TT_PLAN_DEFAULT;
    char why[320];
    if (p.algo == TT_ALGO_HIER) {
        /* hierarchical (exec_cuda_hier.cu): AllReduce of a process-mode communicator; not in the
         * mode-wide table of exec_caps.c because it depends on the communicator */
        if (coll != TT_COLL_ALLREDUCE)
            return tt_error_set(TT_ERR_UNSUPPORTED, "algorithm hierarchical was requested for the GPU %s but the GPU "
                                                    "executor runs it for AllReduce only; available: ring",
                                tt_coll_label(coll));
        if (!g->procs)
            return tt_error_set(TT_ERR_UNSUPPORTED, "algorithm hierarchical on GPU ranks needs process mode (one GPU "
                                                    "rank per process, tt_gpu_comm_init_procs) whose ranks span "
                                                    "hosts; the %d ranks of this communicator live in one process; "
                                                    "available: ring, tree", g->nranks);
        exec_gpu_hier_groups hg;
        int applies = 0;
        tt_status hs = exec_gpu_hier_layout(g, &hg, &applies);
        if (hs != TT_OK) return hs;
        if (!applies) {
            /* one host, or one rank per host: the plan is the flat AllReduce (what it reports) */
            p.algo = TT_ALGO_DEFAULT;
        } else {
            /* protocol and channels as a ring of this communicator would have them */
            p.algo = TT_ALGO_RING;
            hs = gpu_resolve_plain(g, coll, count, t, &p, eff);
            if (hs == TT_OK) eff->algo = TT_ALGO_HIER;
            return hs;
        }
    }
    /* what the GPU executor can run: the table of exec_caps.c (tt_exec_supports) */
    if (!tt_exec_supports(TT_EXEC_GPU, coll, TT_ALGO_DEFAULT, TT_PROTO_DEFAULT, 0, why, sizeof why))
        return tt_error_set(TT_ERR_UNSUPPORTED, "%s", why);
    size_t bytes = count * tt_dtype_size(t);
    if (p.algo == TT_ALGO_DEFAULT) p.algo = tt_algo_default(TT_RUN_GPU, coll, bytes, g->nranks);
    if (!tt_exec_supports(TT_EXEC_GPU, coll, p.algo, TT_PROTO_DEFAULT, g->nranks, why, sizeof why))
        return tt_error_set(TT_ERR_UNSUPPORTED, "%s", why);
    if (p.proto == TT_PROTO_DEFAULT) p.proto = tt_proto_default(TT_RUN_GPU, bytes);
    if ((unsigned)p.proto >= TT_PROTO_COUNT)
        return tt_error_set(TT_ERR_INVALID, "protocol %d unknown", (int)p.proto);
    if (!tt_exec_supports(TT_EXEC_GPU, coll, p.algo, p.proto, g->nranks, why, sizeof why))
        return tt_error_set(TT_ERR_UNSUPPORTED, "%s", why);
    /* the net proxy forwards the steps it can describe: the kernels write their size only for these */
    if (g->net && p.proto != TT_PROTO_SIMPLE && p.proto != TT_PROTO_LL)
        return tt_error_set(TT_ERR_UNSUPPORTED, "protocol %s over the net transport: available: simple, ll",
                            tt_proto_name(p.proto));
    /* LL128 only where the pairs give its guarantee; refused elsewhere, never replaced */
    if (p.proto == TT_PROTO_LL128 && !exec_gpu_ll128_pairs_ok(g, coll, p.algo, why, sizeof why))
        return tt_error_set(TT_ERR_UNSUPPORTED, "%s", why);
    if (p.channels < 0 || p.channels > g->nch_max)
        return tt_error_set(TT_ERR_UNSUPPORTED, "%d channels were requested; this GPU communicator has 1..%d "
                                                "(resident blocks of %d rank(s) per GPU)", p.channels, g->nch_max,
                            g->nranks);
    if (p.channels == 0) {
        size_t c = (bytes + GPU_BYTES_PER_CHANNEL - 1) / GPU_BYTES_PER_CHANNEL;
        p.channels = (int)std::max<size_t>(1, std::min<size_t>(c, (size_t)g->nch_max));
    }
    p.chunk_bytes = p.proto == TT_PROTO_SIMPLE  ? GPU_SIMPLE_SLOT_BYTES
                    : p.proto == TT_PROTO_LL128 ? GPU_LL128_SLOT_DATA
                                                : GPU_LL_SLOT_DATA;
    *eff = p;
    return TT_OK;
}

extern "C" tt_status tt_gpu_comm_sync(tt_gpu_comm *g)
{
    if (g->sticky != TT_OK) return tt_error_set(g->sticky, "%s", g->sticky_msg);
    tt_status st = TT_OK;
    if (g->procs) {
        /* waits while watching the peer processes (exec_cuda_procs.cu); with a hierarchical plan
         * also its sub-communicators (exec_cuda_hier.cu) */
        st = g->hier ? exec_gpu_hier_sync(g) : exec_gpu_procs_sync(g);
        if (st != TT_OK) {
            g->sticky = st;
            snprintf(g->sticky_msg, sizeof g->sticky_msg, "%s", tt_error_message());
        }
        return st;
    }
    for (auto &gr : g->groups) {
        cudaSetDevice(gr.device);
        cudaError_t e = cudaStreamSynchronize(gr.stream);
        if (e != cudaSuccess && st == TT_OK) st = cuda_fail(e, "GPU collective");
    }
    if (st == TT_OK && *g->abort_word) {
        __sync_synchronize();
        const gpu_err *er = g->err;
        static const char *roles[] = {"ring", "tree parent", "tree child 0", "tree child 1"};
        st = tt_error_set(TT_ERR_TIMEOUT,
                          "rank %d channel %d: %s #%llu (%s, %s): timed out after %d ms %s rank %d "
                          "(%s connection, step %llu, seen %llu); every rank of the launch was stopped",
                          er->rank, er->channel, g->last_coll, (unsigned long long)g->seq, g->last_algo,
                          tt_proto_name((tt_proto)er->proto), g->timeout_ms,
                          er->what == 2 ? "waiting for a free slot at" : "waiting for data from", er->peer,
                          roles[er->role & 3], er->step, er->seen);
    }
    if (st != TT_OK) {
        g->sticky = st;
        snprintf(g->sticky_msg, sizeof g->sticky_msg, "%s", tt_error_message());
    }
    return st;
}

/* Launch one collective on every local rank (thread mode: every rank; process mode: this
 * process's).  count: the collective's count argument (AllGather: per rank sent; ReduceScatter:
 * per rank received).  Buffers: one entry per local rank; Broadcast needs a send buffer on the
 * root only, Reduce a receive buffer on the root only (NULL elsewhere is fine). */
static tt_status gpu_coll(tt_gpu_comm *g, tt_coll coll, const void *const *sendbufs, void *const *recvbufs,
                          size_t count, tt_dtype t, tt_redop op, int root, const tt_plan *plan)
{
    const char *cl = tt_coll_label(coll);
    if (g->sticky != TT_OK) return tt_error_set(g->sticky, "%s", g->sticky_msg);
    /* the abort word is already up (a deadline, a peer that died): fail this call now rather than
     * queue more kernels that only leave again, each after its first abort poll - a long queue of
     * back-to-back calls (topo-exec -n) would otherwise take minutes to drain.  The sync waits for
     * what is queued (bounded) and gives the failure its message; it is sticky from then on. */
    if (g->abort_word && *g->abort_word) {
        tt_status ast = tt_gpu_comm_sync(g);
        if (ast != TT_OK) return ast;
    }
    if ((int)t < 0 || t >= TT_NDTYPES || (int)op < 0 || op >= TT_NREDOPS)
        return tt_error_set(TT_ERR_INVALID, "GPU %s: bad type %d or op %d", cl, (int)t, (int)op);
    int rooted = coll == TT_COLL_BROADCAST || coll == TT_COLL_REDUCE;
    if (rooted && (root < 0 || root >= g->nranks))
        return tt_error_set(TT_ERR_INVALID, "GPU %s: root %d out of range (0..%d)", cl, root, g->nranks - 1);
    if (!sendbufs || !recvbufs) return tt_error_set(TT_ERR_INVALID, "GPU %s: NULL buffer array", cl);
    tt_plan p;
    tt_status st = tt_gpu_comm_resolve_plan(g, coll, count, t, plan, &p);
    if (st != TT_OK) return st;
    size_t es = tt_dtype_size(t);
    /* one entry per rank of this process (tt_gpu_comm_local_rank order) */
    for (size_t i = 0; i < g->locals.size(); i++) {
        int r = g->locals[i];
        int need_send = !(coll == TT_COLL_BROADCAST && r != root);
        int need_recv = !(coll == TT_COLL_REDUCE && r != root);
        if ((need_send && !sendbufs[i]) || (need_recv && !recvbufs[i]))
            return tt_error_set(TT_ERR_INVALID, "GPU %s: rank %d has a NULL %s buffer", cl, r,
                                need_send && !sendbufs[i] ? "send" : "receive");
        if (((uintptr_t)sendbufs[i] | (uintptr_t)recvbufs[i]) % es)
            return tt_error_set(TT_ERR_INVALID, "GPU %s: rank %d: buffers must be aligned to the element "
                                                "size (%zu bytes for %s)", cl, r, es, tt_dtype_name(t));
    }
    /* AllGather and Broadcast reduce nothing: they run the sum kernel of the type */
    int reduces = coll == TT_COLL_ALLREDUCE || coll == TT_COLL_REDUCESCATTER || coll == TT_COLL_REDUCE;
    tt_redop kop = reduces ? op : TT_SUM;
    g->seq++;
    snprintf(g->last_algo, sizeof g->last_algo, "%s", tt_algo_label(p.algo));
    snprintf(g->last_coll, sizeof g->last_coll, "%s", cl);
    if (p.algo == TT_ALGO_HIER) /* process mode: one local rank */
        return exec_gpu_hier_allreduce(g, sendbufs[0], recvbufs[0], count, t, op, &p, plan ? plan->channels : 0);
    for (auto &gr : g->groups) {
        gpu_kargs a;
        memset(&a, 0, sizeof a);
        a.chans = gr.dchans;
        a.nloc = (int)gr.ranks.size();
        a.nch = p.channels;
        a.nranks = g->nranks;
        a.algo = p.algo;
        a.proto = p.proto;
        a.coll = (int)coll;
        a.root = rooted ? root : 0;
        /* a hierarchical plan's inter-host phase divides by the whole communicator's ranks */
        a.avg_div = reduces && op == TT_AVG ? (g->avg_nranks > 0 ? g->avg_nranks : g->nranks) : 0;
        for (int i = 0; i < a.nloc; i++) {
            int li = local_index(g, gr.ranks[i]);
            a.rank[i] = gr.ranks[i];
            a.send[i] = sendbufs[li];
            a.recv[i] = recvbufs[li];
        }
        a.count = count;
        a.timeout_ns = (unsigned long long)g->timeout_ms * 1000000ull;
        a.abort = g->abort_dev;
        a.err = g->err_dev;
        a.chstride = g->nch_max;
        a.stall_rank = g->stall_rank;
        cudaSetDevice(gr.device);
        st = exec_gpu_launch_coll(&a, t, kop, gr.stream);
        if (st != TT_OK) {
            g->sticky = st;
            snprintf(g->sticky_msg, sizeof g->sticky_msg, "%s", tt_error_message());
            return st;
        }
    }
    return TT_OK;
}

extern "C" tt_status tt_gpu_allreduce(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                                      size_t count, tt_dtype t, tt_redop op, const tt_plan *plan)
{
    return gpu_coll(g, TT_COLL_ALLREDUCE, sendbufs, recvbufs, count, t, op, -1, plan);
}
extern "C" tt_status tt_gpu_allgather(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                                      size_t sendcount, tt_dtype t, const tt_plan *plan)
{
    return gpu_coll(g, TT_COLL_ALLGATHER, sendbufs, recvbufs, sendcount, t, TT_SUM, -1, plan);
}
extern "C" tt_status tt_gpu_reducescatter(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                                          size_t recvcount, tt_dtype t, tt_redop op, const tt_plan *plan)
{
    return gpu_coll(g, TT_COLL_REDUCESCATTER, sendbufs, recvbufs, recvcount, t, op, -1, plan);
}
extern "C" tt_status tt_gpu_broadcast(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                                      size_t count, tt_dtype t, int root, const tt_plan *plan)
{
    return gpu_coll(g, TT_COLL_BROADCAST, sendbufs, recvbufs, count, t, TT_SUM, root, plan);
}
extern "C" tt_status tt_gpu_reduce(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                                   size_t count, tt_dtype t, tt_redop op, int root, const tt_plan *plan)
{
    return gpu_coll(g, TT_COLL_REDUCE, sendbufs, recvbufs, count, t, op, root, plan);
}
extern "C" tt_status tt_gpu_collective(tt_gpu_comm *g, tt_coll coll, const void *const *sendbufs,
                                       void *const *recvbufs, size_t count, tt_dtype t, tt_redop op, int root,
                                       const tt_plan *plan)
{
    if ((unsigned)coll >= TT_COLL_COUNT) return tt_error_set(TT_ERR_INVALID, "GPU collective: unknown collective %d", (int)coll);
    return gpu_coll(g, coll, sendbufs, recvbufs, count, t, op, root, plan);
}

extern "C" tt_status tt_gpu_alloc(tt_gpu_comm *g, int rank, size_t bytes, void **ptr)
{
    *ptr = NULL;
    if (local_index(g, rank) < 0)
        return tt_error_set(TT_ERR_INVALID, "tt_gpu_alloc: rank %d does not live in this process (its ranks: %d..%d)",
                            rank, g->locals.front(), g->locals.back());
    cudaSetDevice(g->dev[rank]);
    cudaError_t e = cudaMalloc(ptr, bytes ? bytes : 1);
    if (e != cudaSuccess)
        return tt_error_set(TT_ERR_NOMEM, "rank %d: cudaMalloc(%zu) on device %d: %s", rank, bytes, g->dev[rank],
                            cudaGetErrorString(e));
    return TT_OK;
}
extern "C" void tt_gpu_free(tt_gpu_comm *g, int rank, void *ptr)
{
    if (!ptr || local_index(g, rank) < 0) return;
    cudaSetDevice(g->dev[rank]);
    cudaFree(ptr);
}
extern "C" tt_status tt_gpu_memcpy(void *dst, const void *src, size_t bytes)
{
    cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
    /* a copy from pageable memory may return before its DMA finished:
     * make the data visible to every stream before returning */
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    return e == cudaSuccess ? TT_OK : cuda_fail(e, "cudaMemcpy");
}
extern "C" tt_status tt_gpu_memset(void *dst, int byte, size_t bytes)
{
    cudaError_t e = cudaMemset(dst, byte, bytes);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    return e == cudaSuccess ? TT_OK : cuda_fail(e, "cudaMemset");
}

extern "C" tt_status tt_gpu_reduce_copy(int device, void *dst, const void *src0, const void *src1, size_t count,
                                        tt_dtype t, tt_redop op)
{
    char why[256];
    if (!tt_gpu_available(why, sizeof why)) return tt_error_set(TT_ERR_UNSUPPORTED, "reduce-copy: %s", why);
    cudaSetDevice(device);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    /* one block per SM: the best tiled shape measured on H200 (docs/log/2026-11-29-gpu-executor-1xh200.md) */
    tt_status st = exec_gpu_launch_reduce_copy(dst, src0, src1, count, t, op, sms, 0);
    if (st != TT_OK) return st;
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) return cuda_fail(e, "reduce-copy");
    if (op == TT_AVG) return tt_error_set(TT_ERR_INVALID, "reduce-copy: avg has no meaning for two sources");
    return TT_OK;
}

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Median of `iters` timings (CUDA events) of fn. */
template <class F> static float median_ms(int iters, F fn)
{
    std::vector<float> v(iters);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < 3; i++) fn();
    for (int i = 0; i < iters; i++) {
        cudaEventRecord(a, 0);
        fn();
        cudaEventRecord(b, 0);
        cudaEventSynchronize(b);
        cudaEventElapsedTime(&v[i], a, b);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    qsort(v.data(), v.size(), sizeof(float), cmp_f);
    return v[iters / 2];
}

extern "C" tt_status tt_gpu_bench_copy(int device, size_t bytes, int iters, int blocks_per_sm, int variant,
                                       double gbs[3])
{
    char why[256];
    if (!tt_gpu_available(why, sizeof why)) return tt_error_set(TT_ERR_UNSUPPORTED, "copy benchmark: %s", why);
    cudaSetDevice(device);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    size_t count = bytes / sizeof(float);
    float *a = NULL, *b = NULL, *c = NULL;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
        cudaMalloc(&c, bytes) != cudaSuccess) {
        cudaFree(a);
        cudaFree(b);
        cudaGetLastError();
        return tt_error_set(TT_ERR_NOMEM, "copy benchmark: 3 x %zu MiB on device %d", bytes >> 20, device);
    }
    /* non-zero data: small integers, exact in float */
    std::vector<float> h(std::min<size_t>(count, (size_t)1 << 22));
    for (size_t i = 0; i < h.size(); i++) h[i] = (float)((i * 2654435761u >> 7) % 17) - 8.0f;
    for (size_t off = 0; off < count; off += h.size()) {
        size_t n = std::min(h.size(), count - off);
        cudaMemcpy(a + off, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
        cudaMemcpy(b + off, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    }
    int blocks = sms * (blocks_per_sm > 0 ? blocks_per_sm : 2);
    tt_status st = TT_OK;
    float tm = median_ms(iters, [&] { cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice, 0); });
    float t1 = median_ms(iters, [&] { exec_gpu_launch_reduce_copy_variant(variant, c, a, NULL, count, blocks, 0); });
    float t2 = median_ms(iters, [&] { exec_gpu_launch_reduce_copy_variant(variant, c, a, b, count, blocks, 0); });
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) st = cuda_fail(e, "copy benchmark");
    /* check the last a+b */
    if (st == TT_OK) {
        std::vector<float> got(h.size());
        cudaMemcpy(got.data(), c, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
        for (size_t i = 0; i < got.size(); i++)
            if (got[i] != 2 * h[i]) {
                st = tt_error_set(TT_ERR_INTERNAL, "copy benchmark: element %zu is %g, want %g", i, got[i],
                                  2 * h[i]);
                break;
            }
    }
    gbs[0] = 2.0 * bytes / (tm * 1e6);
    gbs[1] = 2.0 * bytes / (t1 * 1e6);
    gbs[2] = 3.0 * bytes / (t2 * 1e6);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return st;
}

/* ---- plans per size (docs/exec.md, "Plans"): the GPU twin of exec_plan_table.c ---- */
extern "C" tt_status tt_gpu_comm_set_plan_table(tt_gpu_comm *g, const tt_tune_entry *entries, int n, unsigned flags)
{
    if (!g || n < 0 || (n > 0 && !entries))
        return tt_error_set(TT_ERR_INVALID, "tt_gpu_comm_set_plan_table: NULL communicator or entries");
    for (int i = 0; i < n; i++) {
        const tt_tune_entry *r = &entries[i];
        if ((unsigned)r->coll >= TT_COLL_COUNT || r->min_bytes > r->max_bytes ||
            (r->algo != TT_ALGO_DEFAULT && (unsigned)r->algo >= TT_ALGO_COUNT) ||
            (r->proto != TT_PROTO_DEFAULT && (unsigned)r->proto >= TT_PROTO_COUNT) || r->channels < 0)
            return tt_error_set(TT_ERR_INVALID, "plan table rule %d: collective, byte range, algorithm, protocol or "
                                "channels out of range", i);
    }
    g->rules.assign(entries, entries + n);
    g->rule_flags = flags;
    return TT_OK;
}

extern "C" unsigned long tt_gpu_comm_plan_table_fallbacks(const tt_gpu_comm *g)
{
    return g ? __atomic_load_n(&g->rule_fallbacks, __ATOMIC_RELAXED) : 0;
}

/* The requested plan, its default fields filled from the table's entry for this size; a rule
 * this executor cannot run (NVLS, LL128 over PCIe or host memory, ...) fails, or with TT_PLAN_TABLE_FALLBACK runs the
 * requested plan alone and is counted. */
extern "C" tt_status tt_gpu_comm_resolve_plan(const tt_gpu_comm *g, tt_coll coll, size_t count, tt_dtype t,
                                              const tt_plan *req, tt_plan *eff)
{
    tt_plan p = req ? *req : TT_PLAN_DEFAULT;
    uint64_t bytes = (uint64_t)count * tt_dtype_size(t);
    const tt_tune_entry *rule =
        g->rules.empty() ? NULL : tt_tune_entry_find(g->rules.data(), (int)g->rules.size(), coll, bytes);
    if (!rule) return gpu_resolve_plain(g, coll, count, t, &p, eff);
    tt_plan want = p;
    if (want.algo == TT_ALGO_DEFAULT) want.algo = rule->algo;
    if (want.proto == TT_PROTO_DEFAULT) want.proto = rule->proto;
    if (!(g->rule_flags & TT_PLAN_TABLE_NO_CHANNELS) && !want.channels && rule->channels > 0)
        want.channels = rule->channels;
    tt_status st = gpu_resolve_plain(g, coll, count, t, &want, eff);
    if (st == TT_OK) return TT_OK;
    if (!(g->rule_flags & TT_PLAN_TABLE_FALLBACK))
        return tt_error_prefix(st, "plan table rule for %s %llu..%llu bytes (%s/%s)", tt_coll_label(coll),
                               (unsigned long long)rule->min_bytes, (unsigned long long)rule->max_bytes,
                               tt_algo_label(want.algo), tt_proto_name(want.proto));
    if ((st = gpu_resolve_plain(g, coll, count, t, &p, eff)) != TT_OK) return st;
    __atomic_add_fetch(&((tt_gpu_comm *)g)->rule_fallbacks, 1, __ATOMIC_RELAXED);
    TT_TRACE(SUBSYS, "plan table rule %s/%s for %s %llu bytes cannot run on GPU ranks; ran %s/%s",
             tt_algo_label(want.algo), tt_proto_name(want.proto), tt_coll_label(coll), (unsigned long long)bytes,
             tt_algo_label(eff->algo), tt_proto_name(eff->proto));
    return TT_OK;
}

/* ---- two runtime calls for the NCCL measuring engine (exec_measure_internal.h) ---- */
extern "C" tt_status exec_gpu_set_device(int device)
{
    cudaError_t e = cudaSetDevice(device);
    return e == cudaSuccess ? TT_OK : cuda_fail(e, "cudaSetDevice");
}

extern "C" tt_status exec_gpu_device_sync(int device)
{
    cudaError_t e = cudaDeviceSynchronize();
    (void)device;
    return e == cudaSuccess ? TT_OK : cuda_fail(e, "cudaDeviceSynchronize");
}
