/*
 * exec_cuda_procs.cu - GPU communicator whose ranks are processes: one GPU
 * rank per process of a host communicator (tt_comm), on one machine.
 *
 * Setup (collective over the host communicator; five AllGathers of small
 * fixed-size records, each carrying a status so that a failure in one
 * process fails every process at the same point instead of leaving them
 * waiting):
 *   1. identity: host name + boot id (one machine required), pid, pid namespace
 *   2. device: chosen ordinal, UUID, channel cap (resident blocks)
 *   3. peer access: per peer, can this GPU and the peer's reach each other
 *   4. memory: every process allocates the receive-side buffers (and the
 *      tail words of its sends) of its IPC connections in one device pool
 *      and exports it with cudaIpcGetMemHandle; rank 0 creates one POSIX
 *      shared-memory segment with the control words (abort word, error
 *      record) and the buffers of every host-staged pair
 *   5. done: peers' pools are opened (cudaIpcOpenMemHandle), the segment is
 *      mapped and cudaHostRegister'ed (mapped); rank 0 unlinks its name.
 * Every process computes the same link table and the same layout (offsets
 * inside each pool and inside the segment) from the gathered records, so
 * only base pointers travel.  The kernels are the thread mode's: only the
 * pointers differ.  The abort word and the error record live in the shared
 * segment: a deadline hit in one process stops the kernels of all of them.
 * While waiting, tt_gpu_comm_sync also watches the peers' processes: one
 * that exited raises the abort word at once, naming it.
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "exec_cuda_comm.h"
#include "exec_gpu_net.h"

#define SUBSYS "gpu"
/* head of the shared segment: abort word at 0, error record at 256 */
#define CTRL_BYTES 4096
#define ERR_OFFSET 256
/* liveness check of the peer processes while a collective runs (engineering choice) */
#define PEER_CHECK_MS 100

namespace {

struct ident_msg {
    int32_t st, pid, mode, emulate;
    char host[64], boot[40], pidns[48];
    char err[256];
};
struct dev_msg {
    int32_t st, device, cap, force_host;
    unsigned char uuid[16];
    char err[256];
};
struct p2p_msg {
    int32_t st;
    unsigned char can[GPU_MAX_RANKS]; /* 0 no peer access, 1 both ways, 2 both ways with native atomics */
    char err[256];
};
struct mem_msg {
    int32_t st;
    cudaIpcMemHandle_t h;
    uint64_t pool_bytes, shm_bytes;
    char shm[64];
    char err[256];
};
struct done_msg {
    int32_t st;
    char err[256];
};

/* One directed connection and channel: where its receive block and its tail word live. */
struct slot_rec {
    int s, r, role, srole, c, shm;
    size_t blk, tail; /* offsets in the pools (blk: receiver's, tail: sender's) or the segment */
};

void read_line(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    if (f) {
        if (!fgets(out, (int)n, f)) out[0] = '\0';
        fclose(f);
    }
    out[strcspn(out, "\n")] = '\0';
}

/* Is process pid gone (or a zombie)? */
bool process_gone(pid_t pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    char p[64], st[512];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    read_line(p, st, sizeof st);
    const char *rp = strrchr(st, ')');
    return rp && (rp[2] == 'Z' || rp[2] == 'X');
}

size_t round256(size_t v) { return (v + 255) & ~(size_t)255; }

}  // namespace

static void procs_free(tt_gpu_comm *g)
{
    if (!g->groups.empty()) {
        dev_group &gr = g->groups[0];
        cudaSetDevice(gr.device);
        for (void *p : g->opened) cudaIpcCloseMemHandle(p);
        g->opened.clear();
        if (gr.stream) cudaStreamDestroy(gr.stream);
        if (gr.dchans) cudaFree(gr.dchans);
        if (gr.pool) cudaFree(gr.pool);
    }
    exec_gpu_net_free(g); /* proxy stopped before its pinned memory goes */
    if (g->shm_registered) cudaHostUnregister(g->shm);
    if (g->shm) munmap(g->shm, g->shm_len);
    cudaGetLastError();
    delete g;
}

extern "C" tt_status tt_gpu_comm_init_procs(tt_gpu_comm **out, tt_comm *host, int device)
{
    return exec_gpu_comm_init_procs_emulate(out, host, device, -1);
}

tt_status exec_gpu_comm_init_procs_emulate(tt_gpu_comm **out, tt_comm *host, int device, int emulate_given)
{
    *out = NULL;
    if (!host) return tt_error_set(TT_ERR_INVALID, "tt_gpu_comm_init_procs: no host communicator");
    const int n = tt_comm_nranks(host), me = tt_comm_rank(host);
    if (n > GPU_MAX_RANKS)
        return tt_error_set(TT_ERR_INVALID, "GPU communicator: %d process ranks (allowed 1..%d)", n, GPU_MAX_RANKS);
    tt_gpu_comm *g = new tt_gpu_comm();
    g->procs = 1;
    g->me = me;
    g->host = host;
    g->nranks = n;
    g->timeout_ms = exec_gpu_env_timeout_ms();
    g->stall_rank = exec_test_stall_rank(n); /* tests only (exec_test_hooks.c) */
    char shm_name[64] = "";
    tt_status st;
    cudaError_t e;

    /* 1. identity */
    ident_msg im;
    memset(&im, 0, sizeof im);
    im.pid = (int32_t)getpid();
    gethostname(im.host, sizeof im.host - 1);
    read_line("/proc/sys/kernel/random/boot_id", im.boot, sizeof im.boot);
    ssize_t nl = readlink("/proc/self/ns/pid", im.pidns, sizeof im.pidns - 1);
    if (nl < 0) im.pidns[0] = '\0';
    char why[200];
    int ndev = tt_gpu_available(why, sizeof why);
    int tmode = GPU_TP_AUTO, emulate = 0, net = 0, span_real = 0;
    std::vector<exec_gpu_pair> pairs((size_t)n * n);
    if (!ndev) {
        im.st = TT_ERR_UNSUPPORTED;
        snprintf(im.err, sizeof im.err, "%s", why);
    } else if (exec_gpu_transport_parse(tt_setting("TOPOTUNE_GPU_TRANSPORT"), &tmode) != TT_OK ||
               (emulate_given < 0 &&
                exec_gpu_emulate_parse(tt_setting("TOPOTUNE_GPU_EMULATE_HOSTS"), n, &emulate) != TT_OK)) {
        exec_gpu_fail_into(im, TT_ERR_INVALID);
    }
    if (emulate_given >= 0) emulate = emulate_given > n ? n : emulate_given; /* a hierarchical plan's groups */
    im.mode = tmode;
    im.emulate = emulate;
    std::vector<ident_msg> ids;
    if ((st = exec_gpu_gather(host, im, ids, "GPU communicator", "identity")) != TT_OK) goto fail;
    {
        /* per pair: net when the two processes are on different (real or emulated) hosts or a rank
         * forces it, else peer GPU memory (exec_gpu_select.c); the same decision in every process */
        std::vector<exec_gpu_where> w(n);
        for (int r = 0; r < n; r++) {
            ids[r].host[sizeof ids[r].host - 1] = ids[r].boot[sizeof ids[r].boot - 1] = '\0';
            w[r] = {ids[r].mode, ids[r].host, ids[r].boot, ids[r].emulate};
        }
        if ((st = exec_gpu_pairs_select(n, w.data(), pairs.data())) != TT_OK) goto fail;
        g->pair_why.assign((size_t)n * n, std::string());
        for (size_t i = 0; i < pairs.size(); i++) {
            net |= pairs[i].net;
            span_real |= pairs[i].apart;
            g->pair_why[i] = pairs[i].why;
        }
        g->span_real = span_real;
    }
    g->pids.resize(n);
    /* a pid means something only on this host and in this pid namespace (0: not watched) */
    for (int r = 0; r < n; r++)
        g->pids[r] = strcmp(ids[r].pidns, im.pidns) || strcmp(ids[r].host, im.host) || strcmp(ids[r].boot, im.boot)
                         ? 0
                         : (pid_t)ids[r].pid;

    {
        /* 2. device: the given one, or the local rank (all ranks share this host) modulo the GPU count */
        dev_msg dm;
        memset(&dm, 0, sizeof dm);
        dm.device = device >= 0 ? device : me % ndev;
        dm.force_host = tmode == GPU_TP_HOST;
        if (dm.device >= ndev) {
            dm.st = tt_error_set(TT_ERR_INVALID, "device %d requested but this process sees %d GPU(s)", device, ndev);
            exec_gpu_fail_into(dm, (tt_status)dm.st);
        } else {
            cudaDeviceProp prop;
            if ((e = cudaSetDevice(dm.device)) != cudaSuccess ||
                (e = cudaGetDeviceProperties(&prop, dm.device)) != cudaSuccess) {
                exec_gpu_fail_into(dm, exec_gpu_cuda_fail(e, "cudaSetDevice"));
            } else {
                memcpy(dm.uuid, &prop.uuid, 16);
                dm.cap = exec_gpu_channel_cap(dm.device, 1);
                if (dm.cap <= 0) exec_gpu_fail_into(dm, TT_ERR_SYSTEM);
            }
        }
        std::vector<dev_msg> devs;
        if ((st = exec_gpu_gather(host, dm, devs, "GPU communicator", "device")) != TT_OK) goto fail;
        g->dev.resize(n);
        g->nch_max = GPU_MAX_CHANNELS;
        for (int r = 0; r < n; r++) {
            g->dev[r] = devs[r].device;
            g->nch_max = std::min(g->nch_max, (int)devs[r].cap);
            g->force_host |= devs[r].force_host;
        }
        /* 3. peer access between this GPU and every other one it can see */
        p2p_msg pm;
        memset(&pm, 0, sizeof pm);
        std::vector<unsigned char> lu((size_t)ndev * 16, 0); /* UUIDs of the GPUs this process sees */
        for (int d = 0; d < ndev; d++) {
            cudaDeviceProp pp;
            if (cudaGetDeviceProperties(&pp, d) == cudaSuccess) memcpy(&lu[(size_t)d * 16], &pp.uuid, 16);
        }
        for (int r = 0; r < n; r++) {
            if (r == me || !memcmp(devs[r].uuid, dm.uuid, 16)) continue;
            for (int d = 0; d < ndev; d++)
                if (!memcmp(&lu[(size_t)d * 16], devs[r].uuid, 16)) {
                    int ab = 0, ba = 0, atom = 0;
                    cudaDeviceCanAccessPeer(&ab, dm.device, d);
                    cudaDeviceCanAccessPeer(&ba, d, dm.device);
                    /* NVLink vs PCIe: heuristic as in thread mode (native atomics over the link) */
                    if (ab && ba) cudaDeviceGetP2PAttribute(&atom, cudaDevP2PAttrNativeAtomicSupported, dm.device, d);
                    pm.can[r] = ab && ba ? (atom ? 2 : 1) : 0;
                }
        }
        cudaGetLastError();
        std::vector<p2p_msg> p2p;
        if ((st = exec_gpu_gather(host, pm, p2p, "GPU communicator", "peer access")) != TT_OK) goto fail;
        g->link.assign((size_t)n * n, LINK_IPC_SAME);
        g->same_gpu.assign((size_t)n * n, 0);
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                if (a == b) continue;
                int l;
                const size_t ab = (size_t)a * n + b;
                /* pairs on one host: the same GPU, peer access, or host-staged shared memory */
                if (pairs[ab].net) l = LINK_NET;
                else if (g->force_host) l = LINK_HOST_SHM;
                else if (!memcmp(devs[a].uuid, devs[b].uuid, 16)) l = LINK_IPC_SAME;
                else if (p2p[a].can[b] && p2p[b].can[a])
                    l = p2p[a].can[b] == 2 && p2p[b].can[a] == 2 ? LINK_IPC_NVLINK : LINK_IPC_PCIE;
                else l = LINK_HOST_SHM;
                if (l == LINK_HOST_SHM && net) {
                    /* a communicator with net pairs has no shared segment (another host could not map it):
                     * a same-host pair without peer access goes over net too */
                    l = LINK_NET;
                    g->pair_why[ab] = "same host, but no peer access between the GPUs and no shared segment in a "
                                      "communicator with net pairs";
                }
                g->link[ab] = l;
                if (!memcmp(devs[a].uuid, devs[b].uuid, 16)) g->is_virtual = g->same_gpu[(size_t)a * n + b] = 1;
            }
        if (std::count(g->link.begin(), g->link.end(), (int)LINK_HOST_SHM))
            g->nch_max = std::min(g->nch_max, GPU_HOST_STAGED_CHANNELS);
        if (net) g->nch_max = std::min(g->nch_max, GPU_NET_CHANNELS);
    }
    {
        const int nch = g->nch_max;
        /* layout, identical in every process */
        std::vector<slot_rec> recs;
        std::vector<size_t> pool(n, 0);
        size_t shm_need = CTRL_BYTES;
        const size_t blk = round256(exec_gpu_recv_block());
        for (int r = 0; r < n; r++)
            for (int role = 0; role < GPU_NCONN; role++) {
                int srole, s = exec_gpu_sender_of(n, r, role, &srole);
                /* net pairs: each process lays out its own pinned memory (exec_cuda_net.cu) */
                if (s < 0 || g->link[(size_t)s * n + r] == LINK_NET) continue;
                int shm = g->link[(size_t)s * n + r] == LINK_HOST_SHM;
                for (int c = 0; c < nch; c++) {
                    slot_rec q = {s, r, role, srole, c, shm, 0, 0};
                    if (shm) {
                        q.blk = shm_need;
                        q.tail = shm_need + blk;
                        shm_need += blk + 256;
                    } else {
                        q.blk = pool[r];
                        pool[r] += blk;
                        q.tail = pool[s];
                        pool[s] += 256;
                    }
                    recs.push_back(q);
                }
            }
        /* 4. memory */
        dev_group gr{};
        gr.device = g->dev[me];
        gr.ranks.push_back(me);
        g->groups.push_back(gr);
        g->group_of.assign(n, -1);
        g->local_of.assign(n, -1);
        g->group_of[me] = 0;
        g->local_of[me] = 0;
        g->locals.push_back(me);
        dev_group &G = g->groups[0];
        mem_msg mm;
        memset(&mm, 0, sizeof mm);
        G.pool_bytes = pool[me] + 256;
        mm.pool_bytes = G.pool_bytes;
        mm.shm_bytes = shm_need;
        cudaSetDevice(G.device);
        if ((e = cudaStreamCreate(&G.stream)) != cudaSuccess)
            exec_gpu_fail_into(mm, exec_gpu_cuda_fail(e, "cudaStreamCreate"));
        else if ((e = cudaMalloc((void **)&G.pool, G.pool_bytes)) != cudaSuccess ||
                 (e = cudaMemset(G.pool, 0, G.pool_bytes)) != cudaSuccess ||
                 (e = cudaDeviceSynchronize()) != cudaSuccess)
            exec_gpu_fail_into(mm, tt_error_set(TT_ERR_NOMEM, "%zu MiB of connection buffers on device %d: %s",
                                      G.pool_bytes >> 20, G.device, cudaGetErrorString(e)));
        else if ((e = cudaMalloc((void **)&G.dchans, sizeof(gpu_chan) * nch)) != cudaSuccess)
            exec_gpu_fail_into(mm, exec_gpu_cuda_fail(e, "cudaMalloc(channels)"));
        else if ((e = cudaIpcGetMemHandle(&mm.h, G.pool)) != cudaSuccess)
            exec_gpu_fail_into(mm, exec_gpu_cuda_fail(e, "cudaIpcGetMemHandle"));
        else if (me == 0 && !net) { /* net: no segment (another host could not map it) */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            snprintf(shm_name, sizeof shm_name, "/topotune-gpu-%d-%lx", (int)getpid(),
                     (unsigned long)(ts.tv_nsec ^ (ts.tv_sec << 20)));
            int fd = shm_open(shm_name, O_CREAT | O_EXCL | O_RDWR, 0600);
            int fe;
            if (fd < 0) {
                exec_gpu_fail_into(mm, tt_error_set(TT_ERR_SYSTEM, "shm_open(%s): %s", shm_name, strerror(errno)));
                shm_name[0] = '\0';
            } else if ((fe = posix_fallocate(fd, 0, (off_t)shm_need)) != 0) {
                /* reserve the pages now: a full /dev/shm is an error here, not a SIGBUS later */
                exec_gpu_fail_into(mm, tt_error_set(TT_ERR_SYSTEM,
                                                    "/dev/shm has no room for %zu bytes of GPU connection memory "
                                                    "(%s): enlarge it or use fewer host-staged pairs",
                                                    shm_need, strerror(fe)));
                close(fd);
            } else {
                g->shm = mmap(NULL, shm_need, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                close(fd);
                if (g->shm == MAP_FAILED) {
                    g->shm = NULL;
                    exec_gpu_fail_into(mm, tt_error_set(TT_ERR_SYSTEM, "mmap of %s: %s", shm_name, strerror(errno)));
                } else {
                    g->shm_len = shm_need;
                }
            }
            snprintf(mm.shm, sizeof mm.shm, "%s", shm_name);
        }
        std::vector<mem_msg> mems;
        st = exec_gpu_gather(host, mm, mems, "GPU communicator", "memory handles");
        if (st != TT_OK) goto fail;
        /* 5. open the peers' pools and the shared segment, wire this rank's connections */
        done_msg dn;
        memset(&dn, 0, sizeof dn);
        std::vector<char *> base(n, (char *)NULL);
        base[me] = G.pool;
        char *shm_dev = NULL;
        for (const slot_rec &q : recs) {
            int peer = q.s == me ? q.r : q.r == me ? q.s : -1;
            if (peer < 0 || q.shm || base[peer] || dn.st != TT_OK) continue;
            void *p = NULL;
            /* lazy peer access: enabled for this mapping when the GPUs differ */
            if ((e = cudaIpcOpenMemHandle(&p, mems[peer].h, cudaIpcMemLazyEnablePeerAccess)) != cudaSuccess) {
                tt_error_set(TT_ERR_SYSTEM, "cudaIpcOpenMemHandle of rank %d's buffers (%s): %s (%s)", peer,
                             exec_gpu_link_name(g->link[(size_t)me * n + peer]), cudaGetErrorString(e),
                             cudaGetErrorName(e));
                exec_gpu_fail_into(dn, TT_ERR_SYSTEM);
                break;
            }
            g->opened.push_back(p);
            base[peer] = (char *)p;
        }
        if (dn.st == TT_OK && net) {
            /* control words and every net connection of this rank in its own pinned memory; the
             * IPC connections of a mixed communicator are wired below */
            if (exec_gpu_net_wire(g, nch, span_real) != TT_OK) exec_gpu_fail_into(dn, TT_ERR_NOMEM);
        }
        if (dn.st == TT_OK && me != 0 && !net) {
            mems[0].shm[sizeof mems[0].shm - 1] = '\0';
            int fd = shm_open(mems[0].shm, O_RDWR, 0600);
            struct stat sb;
            if (fd < 0) {
                exec_gpu_fail_into(dn, tt_error_set(TT_ERR_SYSTEM, "shm_open(%s): %s", mems[0].shm, strerror(errno)));
            } else if (fstat(fd, &sb) != 0 || (size_t)sb.st_size != (size_t)mems[0].shm_bytes ||
                       mems[0].shm_bytes != shm_need) {
                exec_gpu_fail_into(dn, tt_error_set(TT_ERR_MISMATCH,
                                                    "shared segment %s has %lld bytes, this rank's layout needs %zu "
                                                    "(ranks disagree on the transports?)",
                                                    mems[0].shm, (long long)sb.st_size, shm_need));
                close(fd);
            } else {
                g->shm = mmap(NULL, shm_need, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                close(fd);
                if (g->shm == MAP_FAILED) {
                    g->shm = NULL;
                    exec_gpu_fail_into(dn, tt_error_set(TT_ERR_SYSTEM, "mmap of %s: %s", mems[0].shm, strerror(errno)));
                } else {
                    g->shm_len = shm_need;
                }
            }
        }
        if (dn.st == TT_OK && !net) {
            if ((e = cudaHostRegister(g->shm, g->shm_len, cudaHostRegisterMapped | cudaHostRegisterPortable)) !=
                cudaSuccess)
                exec_gpu_fail_into(dn, exec_gpu_cuda_fail(e, "cudaHostRegister(shared segment)"));
            else {
                g->shm_registered = 1;
                if ((e = cudaHostGetDevicePointer((void **)&shm_dev, g->shm, 0)) != cudaSuccess)
                    exec_gpu_fail_into(dn, exec_gpu_cuda_fail(e, "cudaHostGetDevicePointer(shared segment)"));
            }
        }
        if (dn.st == TT_OK && !net) {
            g->abort_word = (volatile int *)g->shm;
            g->err = (gpu_err *)((char *)g->shm + ERR_OFFSET);
            g->abort_dev = (volatile int *)shm_dev;
            g->err_dev = (gpu_err *)(shm_dev + ERR_OFFSET);
            g->hchans.assign((size_t)nch, gpu_chan{});
            for (auto &c : g->hchans)
                for (int k = 0; k < GPU_NCONN; k++) c.send[k].peer = c.recv[k].peer = -1;
        }
        if (dn.st == TT_OK) {
            /* the pairs on one host (all of them without net): peer pools or the shared segment */
            for (const slot_rec &q : recs) {
                if (q.s != me && q.r != me) continue;
                char *bk = q.shm ? shm_dev + q.blk : base[q.r] + q.blk;
                char *tl = q.shm ? shm_dev + q.tail : base[q.s] + q.tail;
                gpu_block_parts bp = exec_gpu_block_layout(bk);
                char *ll = bp.ll;
                unsigned long long *head = bp.head;
                if (q.r == me) {
                    gpu_recv &rv = g->hchans[q.c].recv[q.role];
                    rv.simple = bk;
                    rv.ll = ll;
                    rv.ll128 = bp.ll128;
                    rv.head = head;
                    rv.tail = (unsigned long long *)tl;
                    rv.peer = q.s;
                    rv.sys = 1; /* another process (another context), possibly another GPU or host memory */
                }
                if (q.s == me) {
                    gpu_send &sd = g->hchans[q.c].send[q.srole];
                    sd.simple = bk;
                    sd.ll = ll;
                    sd.ll128 = bp.ll128;
                    sd.head = head;
                    sd.tail = (volatile unsigned long long *)tl;
                    sd.peer = q.r;
                    sd.sys = 1;
                    if (q.c == 0)
                        TT_INFO(SUBSYS, "rank %d -> %d via %s (%s, %d channel(s); %s)", me, q.r,
                                exec_gpu_link_name(g->link[(size_t)me * n + q.r]),
                                q.role == GPU_CONN_RING ? "ring" : q.role == GPU_CONN_PARENT ? "tree down" : "tree up",
                                nch, g->pair_why[(size_t)me * n + q.r].c_str());
                }
            }
            if ((e = cudaMemcpy(G.dchans, g->hchans.data(), sizeof(gpu_chan) * nch, cudaMemcpyHostToDevice)) !=
                cudaSuccess)
                exec_gpu_fail_into(dn, exec_gpu_cuda_fail(e, "cudaMemcpy(channels)"));
        }
        std::vector<done_msg> dones;
        st = exec_gpu_gather(host, dn, dones, "GPU communicator", "setup status");
        if (me == 0 && shm_name[0]) {
            /* every process has mapped it (or failed): no name is left behind */
            shm_unlink(shm_name);
            shm_name[0] = '\0';
        }
        if (st != TT_OK) goto fail;
        /* net: the proxies' host communicator and thread (collective, with its own status exchanges) */
        if (net && (st = exec_gpu_net_connect(g)) != TT_OK) goto fail;
    }
    TT_INFO(SUBSYS, "GPU communicator: rank %d of %d process rank(s) on device %d%s, up to %d channel(s)", me, n,
            g->dev[me], g->is_virtual ? " (VIRTUAL: ranks share a GPU)" : "", g->nch_max);
    *out = g;
    return TT_OK;
fail : {
    /* keep the message: the clean-up calls may overwrite it */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tt_error_message());
    if (me == 0 && shm_name[0]) shm_unlink(shm_name);
    procs_free(g);
    return tt_error_set(st, "%s", msg);
}
}

int exec_gpu_procs_check_peers(tt_gpu_comm *g)
{
    for (int r = 0; r < g->nranks; r++)
        if (r != g->me && g->pids[r] > 0 && process_gone(g->pids[r])) {
            /* stop every kernel (ours and the other peers') now instead of at the deadline */
            if (__sync_bool_compare_and_swap((int *)g->abort_word, 0, 1)) {
                g->err->rank = g->me;
                g->err->peer = r;
                g->err->what = 4;
                g->err->channel = -1;
                __sync_synchronize();
                g->err->set = 1;
            }
            return r;
        }
    return -1;
}

const char *exec_gpu_hier_phase_name(int phase)
{
    return phase == EXEC_HIER_PHASE_INTRA   ? "intra-host"
           : phase == EXEC_HIER_PHASE_INTER ? "inter-host"
                                            : "flat";
}

tt_status exec_gpu_procs_sync(tt_gpu_comm *g)
{
    dev_group &gr = g->groups[0];
    cudaSetDevice(gr.device);
    tt_status st = TT_OK;
    int dead = -1;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long long last_check = 0;
    for (unsigned it = 0;; it++) {
        cudaError_t e = cudaStreamQuery(gr.stream);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) {
            st = exec_gpu_cuda_fail(e, "GPU collective");
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ms = (now.tv_sec - t0.tv_sec) * 1000LL + (now.tv_nsec - t0.tv_nsec) / 1000000;
        if (ms - last_check >= PEER_CHECK_MS) {
            last_check = ms;
            if (dead < 0) dead = exec_gpu_procs_check_peers(g);
        }
        if (it > 200) {
            struct timespec ns = {0, 20000};
            nanosleep(&ns, NULL);
        }
    }
    if (st != TT_OK) {
        if (dead >= 0)
            return tt_error_prefix(st, "rank %d: rank %d (pid %d) exited during %s #%llu", exec_gpu_gname(g, g->me),
                                   exec_gpu_gname(g, dead), (int)g->pids[dead], g->last_coll,
                                   (unsigned long long)g->seq);
        return tt_error_prefix(st, "rank %d", exec_gpu_gname(g, g->me));
    }
    if (!*g->abort_word) return TT_OK;
    __sync_synchronize();
    /* ranks in messages are the whole communicator's (a hierarchical plan's sub-communicators) */
    gpu_err ecopy = *g->err;
    const gpu_err *er = &ecopy;
    const int me_name = exec_gpu_gname(g, g->me), peer_idx = ecopy.peer;
    const bool mine = ecopy.rank == g->me;
    if (ecopy.what == GPU_ERR_LINKED) {
        /* stopped by another communicator of a hierarchical plan (fields: exec_cuda_comm.h) */
        static const char *whys[] = {"", "timed out waiting for data", "timed out waiting for a free slot",
                                     "was aborted", "exited", "lost its net connection"};
        int w = ecopy.role >= 1 && ecopy.role <= 5 ? ecopy.role : 3;
        char first[160];
        if (w == 4 || w == 5)
            snprintf(first, sizeof first, "rank %d %s (seen by rank %d)", ecopy.peer, whys[w], (int)ecopy.step);
        else
            snprintf(first, sizeof first, "rank %d %s from rank %d", (int)ecopy.step, whys[w], ecopy.peer);
        return tt_error_set(w == 4 ? TT_ERR_SYSTEM : w == 5 ? TT_ERR_REMOTE : TT_ERR_TIMEOUT,
                            "rank %d: %s #%llu (%s) was stopped by rank %d: %s in the %s phase of a hierarchical "
                            "AllReduce; every rank was stopped", me_name, g->last_coll, (unsigned long long)g->seq,
                            g->last_algo, ecopy.channel, first, exec_gpu_hier_phase_name(ecopy.proto));
    }
    ecopy.rank = exec_gpu_gname(g, ecopy.rank);
    ecopy.peer = exec_gpu_gname(g, ecopy.peer);
    static const char *roles[] = {"ring", "tree parent", "tree child 0", "tree child 1"};
    if (er->what == 4) {
        char pid[32] = "";
        if (peer_idx >= 0 && peer_idx < g->nranks && g->pids[peer_idx] > 0)
            snprintf(pid, sizeof pid, " (pid %d)", (int)g->pids[peer_idx]);
        return tt_error_set(TT_ERR_SYSTEM, "rank %d: %s #%llu (%s): rank %d%s exited%s; seen by rank %d, "
                                           "every rank was stopped", me_name, g->last_coll, (unsigned long long)g->seq,
                            g->last_algo, er->peer, pid,
                            g->net && peer_idx >= 0 && peer_idx < g->nranks &&
                                    g->link[(size_t)g->me * g->nranks + peer_idx] == LINK_NET
                                ? " (its net connection closed)"
                                : "",
                            er->rank);
    }
    if (er->what == 5)
        return tt_error_set(TT_ERR_REMOTE, "rank %d: %s #%llu (%s): the net connection to rank %d failed, seen by "
                                           "rank %d (it accepted no data within the deadline, or sent a malformed "
                                           "message); every rank was stopped", me_name, g->last_coll,
                            (unsigned long long)g->seq, g->last_algo, er->peer, er->rank);
    if (mine)
        return tt_error_set(TT_ERR_TIMEOUT,
                            "rank %d channel %d: %s #%llu (%s, %s): timed out after %d ms %s rank %d "
                            "(%s connection, step %llu, seen %llu); every rank was stopped",
                            er->rank, er->channel, g->last_coll, (unsigned long long)g->seq, g->last_algo,
                            tt_proto_name((tt_proto)er->proto), g->timeout_ms,
                            er->what == 2 ? "waiting for a free slot at" : "waiting for data from", er->peer,
                            roles[er->role & 3], er->step, er->seen);
    return tt_error_set(TT_ERR_TIMEOUT,
                        "rank %d: %s #%llu (%s, %s) was stopped because rank %d channel %d timed out %s "
                        "rank %d (%s connection, step %llu, seen %llu)",
                        me_name, g->last_coll, (unsigned long long)g->seq, g->last_algo, tt_proto_name((tt_proto)er->proto),
                        er->rank, er->channel, er->what == 2 ? "waiting for a free slot at" : "waiting for data from",
                        er->peer, roles[er->role & 3], er->step, er->seen);
}

void exec_gpu_procs_destroy(tt_gpu_comm *g)
{
    dev_group &gr = g->groups[0];
    cudaSetDevice(gr.device);
    cudaStreamSynchronize(gr.stream); /* bounded: every kernel wait has the deadline */
    /* unmap the peers' pools first, then wait until every process has done
     * the same before freeing ours (freeing an exported pool that another
     * process still maps is undefined behaviour) */
    for (void *p : g->opened) cudaIpcCloseMemHandle(p);
    g->opened.clear();
    if (g->sticky == TT_OK && g->host) {
        int one = 1, sum = 0;
        tt_status st = tt_allreduce(&one, &sum, 1, TT_INT32, TT_SUM, g->host);
        if (st == TT_OK) st = tt_comm_wait(g->host);
        if (st != TT_OK) TT_WARN(SUBSYS, "GPU communicator destroy: barrier failed (%s)", tt_error_message());
    }
    procs_free(g);
}
