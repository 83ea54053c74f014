/*
 * exec_cuda_net.cu - process mode's net transport, CUDA side: pinned,
 * device-mapped host memory for this process's control words and for both
 * ends of every net connection it has, the kernels' pointers into it, the
 * proxy's host communicator and the proxy thread (exec_gpu_proxy.c).  The
 * protocol is described in exec_gpu_net.h.
 *
 * Every process computes its own layout (nothing but a rendezvous id
 * travels): one cudaHostAlloc(mapped) region = a 4 KiB control block (abort
 * word at 0, error record at 256; no segment is shared across hosts) and per
 * connection and channel one block: Simple slots, LL slots, head word (the
 * receive block of exec_gpu_internal.h), then the tail word and the step-info
 * ring.  Freed by exec_gpu_net_free after the proxy stopped.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include <vector>

#include "exec_cuda_comm.h"
#include "exec_gpu_net.h"

#define SUBSYS "gpu"
#define CTRL_BYTES 4096
#define ERR_OFFSET 256

struct gpu_net {
    tt_comm *comm;                        /* the proxy's host communicator */
    exec_gpu_proxy *proxy;
    char *hmem;                           /* cudaHostAlloc'ed region */
    size_t bytes;
    std::vector<exec_gpu_netconn> conns;
    int span_hosts;
};

namespace {
struct id_msg {
    int32_t st;
    tt_unique_id id;
    char err[256];
};
struct st_msg {
    int32_t st;
    char err[256];
};

size_t r256(size_t v) { return (v + 255) & ~(size_t)255; }
}  // namespace

tt_status exec_gpu_net_wire(tt_gpu_comm *g, int nch, int span_hosts)
{
    const int n = g->nranks, me = g->me;
    gpu_net *net = new gpu_net();
    g->net = net;
    net->span_hosts = span_hosts;
    /* this process's net connections: receives (rank me, every role with a sender) and sends */
    struct c_rec {
        int peer, is_send, role, srole, c;
    };
    std::vector<c_rec> cs;
    for (int r = 0; r < n; r++)
        for (int role = 0; role < GPU_NCONN; role++) {
            int srole, s = exec_gpu_sender_of(n, r, role, &srole);
            if (s < 0 || (s != me && r != me) || g->link[(size_t)s * n + r] != LINK_NET) continue;
            for (int c = 0; c < nch; c++) cs.push_back({s == me ? r : s, s == me, role, srole, c});
        }
    const size_t blk = r256(exec_gpu_recv_block()), per = blk + 512;
    net->bytes = CTRL_BYTES + per * cs.size();
    cudaError_t e = cudaHostAlloc((void **)&net->hmem, net->bytes, cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess) {
        net->hmem = NULL;
        return tt_error_set(TT_ERR_NOMEM, "%zu MiB of pinned host memory for the net transport: %s",
                            net->bytes >> 20, cudaGetErrorString(e));
    }
    memset(net->hmem, 0, net->bytes);
    char *dev = NULL;
    if ((e = cudaHostGetDevicePointer((void **)&dev, net->hmem, 0)) != cudaSuccess)
        return exec_gpu_cuda_fail(e, "cudaHostGetDevicePointer(net buffers)");
    g->abort_word = (volatile int *)net->hmem;
    g->err = (gpu_err *)(net->hmem + ERR_OFFSET);
    g->abort_dev = (volatile int *)dev;
    g->err_dev = (gpu_err *)(dev + ERR_OFFSET);
    g->hchans.assign((size_t)nch, gpu_chan{});
    for (auto &c : g->hchans)
        for (int k = 0; k < GPU_NCONN; k++) c.send[k].peer = c.recv[k].peer = -1;
    net->conns.resize(cs.size());
    const size_t ll_off = (size_t)GPU_SIMPLE_SLOTS * GPU_SIMPLE_SLOT_BYTES;
    const size_t head_off = ll_off + (size_t)GPU_LL_SLOTS * GPU_LL_SLOT_LINES * 16;
    for (size_t i = 0; i < cs.size(); i++) {
        const c_rec &q = cs[i];
        size_t off = CTRL_BYTES + per * i;
        char *h = net->hmem + off, *d = dev + off;
        exec_gpu_netconn &nc = net->conns[i];
        memset(&nc, 0, sizeof nc);
        nc.peer = q.peer;
        nc.is_send = q.is_send;
        nc.role = q.role;
        nc.channel = q.c;
        nc.simple = h;
        nc.ll = h + ll_off;
        nc.head = (volatile unsigned long long *)(h + head_off);
        nc.tail = (volatile unsigned long long *)(h + blk);
        nc.info = q.is_send ? (volatile unsigned long long *)(h + blk + 256) : NULL;
        if (q.is_send) {
            gpu_send &sd = g->hchans[q.c].send[q.srole];
            sd.simple = d;
            sd.ll = d + ll_off;
            sd.head = (unsigned long long *)(d + head_off);
            sd.tail = (volatile unsigned long long *)(d + blk);
            sd.info = (unsigned long long *)(d + blk + 256);
            sd.peer = q.peer;
            sd.sys = 1; /* host memory: system scope */
        } else {
            gpu_recv &rv = g->hchans[q.c].recv[q.role];
            rv.simple = d;
            rv.ll = d + ll_off;
            rv.head = (volatile unsigned long long *)(d + head_off);
            rv.tail = (unsigned long long *)(d + blk);
            rv.peer = q.peer;
            rv.sys = 1;
        }
    }
    return TT_OK;
}

tt_status exec_gpu_net_connect(tt_gpu_comm *g)
{
    gpu_net *net = g->net;
    const int n = g->nranks, me = g->me;
    /* 1. rank 0 opens the rendezvous of the proxies' host communicator */
    id_msg im;
    memset(&im, 0, sizeof im);
    if (me == 0) {
        char addr[64] = "127.0.0.1";
        tt_status st = TT_OK;
        if (net->span_hosts) st = tt_host_address(addr, sizeof addr);
        if (st == TT_OK) st = tt_get_unique_id(&im.id, addr);
        if (st != TT_OK) exec_gpu_fail_into(im, st);
    }
    std::vector<id_msg> ids;
    tt_status st = exec_gpu_gather(g->host, im, ids, "GPU communicator", "net: rendezvous");
    if (st != TT_OK) return st;
    /* 2. every process joins it: a full mesh on the host transports (TOPOTUNE_TRANSPORT) */
    st_msg sm;
    memset(&sm, 0, sizeof sm);
    st = tt_comm_init_rank(&net->comm, n, &ids[0].id, me);
    if (st != TT_OK) {
        net->comm = NULL;
        tt_error_prefix(st, "net transport: host connections");
        exec_gpu_fail_into(sm, st);
    } else {
        tt_comm_set_timeout(net->comm, g->timeout_ms);
        st = exec_gpu_proxy_start(&net->proxy, net->comm, net->conns.data(), (int)net->conns.size(),
                                  g->abort_word, g->err, g->timeout_ms);
        if (st != TT_OK) exec_gpu_fail_into(sm, st);
    }
    std::vector<st_msg> sts;
    if ((st = exec_gpu_gather(g->host, sm, sts, "GPU communicator", "net: connections")) != TT_OK) return st;
    snprintf(g->net_name, sizeof g->net_name, "NET/%s", tt_comm_transport(net->comm));
    snprintf(g->net_name_same, sizeof g->net_name_same, "%s (same GPU)", g->net_name);
    static const char *roles[] = {"ring", "tree down", "tree up", "tree up"};
    for (const exec_gpu_netconn &c : net->conns)
        if (c.is_send && c.channel == 0)
            TT_INFO(SUBSYS, "rank %d -> %d via %s (%s, %zu channel(s); %s; host-staged: pinned FIFOs, proxy thread)",
                    me, c.peer, tt_gpu_comm_link(g, me, c.peer), roles[c.role & 3], g->hchans.size(),
                    g->pair_why[(size_t)me * n + c.peer].c_str());
    TT_INFO(SUBSYS, "net transport: GPUDirect RDMA not used (not implemented: every step is staged in pinned "
                    "host memory)");
    return TT_OK;
}

void exec_gpu_net_stop(tt_gpu_comm *g)
{
    gpu_net *net = g->net;
    if (!net) return;
    if (net->proxy) {
        unsigned long long s = 0, r = 0;
        exec_gpu_proxy_bytes(net->proxy, &s, &r);
        TT_INFO(SUBSYS, "net transport: rank %d proxy sent %llu and received %llu payload bytes", g->me, s, r);
        exec_gpu_proxy_stop(net->proxy);
        net->proxy = NULL;
    }
    if (net->comm) {
        exec_gpu_net_comm_close(net->comm);
        net->comm = NULL;
    }
}

void exec_gpu_net_free(tt_gpu_comm *g)
{
    gpu_net *net = g->net;
    if (!net) return;
    exec_gpu_net_stop(g);
    if (net->hmem) cudaFreeHost(net->hmem);
    g->abort_word = g->abort_dev = NULL;
    g->err = g->err_dev = NULL;
    delete net;
    g->net = NULL;
}
