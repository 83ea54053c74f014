/*
 * exec_cuda_hier.cu - hierarchical AllReduce of a process-mode GPU communicator whose ranks
 * span hosts (plan algo TT_ALGO_HIER): most bytes stay on the IPC pairs of a host.
 *
 *   1. intra-host: ReduceScatter of the first L * shard elements among the L ranks of a host
 *      (ring over IPC; rank with local index i keeps shard i), plus an AllReduce of the tail
 *      (count - L * shard < L elements);
 *   2. inter-host: AllReduce of shard i (and of the tail) among the ranks with local index i on
 *      every host (over net, ring or tree: tt_gpu_comm_set_hier_algo); avg divides here, once,
 *      by the whole communicator's rank count;
 *   3. intra-host: AllGather of the shards (IPC).
 *
 * Built at the first such call (collective over the parent's host communicator): the groups come
 * from the parent's per-pair transports (same host = not a net pair, exec_gpu_hier_plan.c), each
 * group's first rank opens a rendezvous, the ids travel in one AllGather over the parent host
 * communicator, then a host communicator and a GPU sub-communicator per group.  The
 * sub-communicators get their hosts explicitly (inside a host no emulated hosts: every pair
 * IPC; between hosts one emulated host per rank: every pair net), so TOPOTUNE_GPU_EMULATE_HOSTS
 * does not split them again.  They run the user's buffers directly (tt_gpu_alloc memory is plain
 * device memory of this process; kernels read and write only local buffers and the connection
 * pools).  The phases are ordered on the GPU with events between the streams (parent -> intra ->
 * inter -> intra -> parent), so there is no host round trip and later calls on the parent stay in
 * order.  Failures: the sync watches all three communicators; the first abort seen in one is
 * raised in the others with a linked record (GPU_ERR_LINKED) naming the first failure, so the
 * parent's proxies (a full mesh) and the sub-communicators' own machinery carry it to every
 * process.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <string>
#include <vector>

#include "exec_cuda_comm.h"
#include "exec_gpu_net.h"

#define SUBSYS "gpu"
#define PEER_CHECK_MS 100 /* as exec_cuda_procs.cu */
static const char HIER[] = "hierarchical AllReduce"; /* setup messages: "<HIER> setup (<step>): ..." */

struct exec_gpu_hier {
    exec_gpu_hier_groups hg;
    int intra_me, inter_me;        /* this process's index in its groups */
    tt_comm *intra_host, *inter_host;
    tt_gpu_comm *intra, *inter;
    cudaEvent_t ev[4];             /* parent -> intra, intra -> inter, inter -> intra, intra -> parent */
    int nev;
};

namespace {

struct id_rec {
    int32_t st;
    tt_unique_id intra, inter;
    char err[256];
};
struct st_rec {
    int32_t st;
    char err[256];
};

std::string rank_list(const int *r, int k)
{
    std::string s;
    char b[16];
    for (int i = 0; i < k; i++) {
        snprintf(b, sizeof b, "%s%d", i ? "," : "", r[i]);
        s += b;
    }
    return s;
}

void close_host(tt_comm *c, int healthy)
{
    if (!c) return;
    if (healthy) tt_comm_destroy(c);
    else exec_gpu_net_comm_close(c); /* a failed group: no barrier with a peer that may be gone */
}

void hier_free(exec_gpu_hier *h, tt_status parent_sticky)
{
    /* a failed communicator skips the destroy barriers (a peer may be gone) */
    int healthy = parent_sticky == TT_OK;
    for (tt_gpu_comm *s : {h->inter, h->intra})
        if (s && s->sticky != TT_OK) healthy = 0;
    for (tt_gpu_comm *s : {h->inter, h->intra})
        if (s) {
            if (!healthy && s->sticky == TT_OK) {
                s->sticky = parent_sticky != TT_OK ? parent_sticky : TT_ERR_SYSTEM;
                snprintf(s->sticky_msg, sizeof s->sticky_msg, "hierarchical AllReduce: stopped");
            }
            tt_gpu_comm_destroy(s);
        }
    close_host(h->inter_host, healthy);
    close_host(h->intra_host, healthy);
    for (int i = 0; i < h->nev; i++) cudaEventDestroy(h->ev[i]);
    cudaGetLastError();
    delete h;
}

/* index of global rank r in a group list, -1 when absent */
int index_in(const std::vector<int> &v, int r)
{
    for (size_t i = 0; i < v.size(); i++)
        if (v[i] == r) return (int)i;
    return -1;
}

tt_status hier_build(tt_gpu_comm *g, exec_gpu_hier **out)
{
    *out = NULL;
    exec_gpu_hier *h = new exec_gpu_hier();
    int applies = 0;
    tt_status st = exec_gpu_hier_layout(g, &h->hg, &applies);
    if (st == TT_OK && !applies) st = tt_error_set(TT_ERR_INVALID, "hierarchical AllReduce: one host or one rank "
                                                                   "per host (the flat plan applies)");
    if (st != TT_OK) {
        delete h;
        return st;
    }
    const int me = g->me;
    int intra_r[EXEC_HIER_MAX], inter_r[EXEC_HIER_MAX];
    const int L = exec_gpu_hier_intra(&h->hg, me, intra_r, &h->intra_me);
    const int H = exec_gpu_hier_inter(&h->hg, me, inter_r, &h->inter_me);
    /* 1. each group's first rank opens its rendezvous; the ids travel over the parent host comm */
    id_rec ir;
    memset(&ir, 0, sizeof ir);
    if (h->intra_me == 0 && (st = tt_get_unique_id(&ir.intra, "127.0.0.1")) != TT_OK) exec_gpu_fail_into(ir, st);
    if (ir.st == TT_OK && h->inter_me == 0) {
        char addr[64] = "127.0.0.1";
        st = g->span_real ? tt_host_address(addr, sizeof addr) : TT_OK;
        if (st == TT_OK) st = tt_get_unique_id(&ir.inter, addr);
        if (st != TT_OK) exec_gpu_fail_into(ir, st);
    }
    std::vector<id_rec> ids;
    std::vector<st_rec> sts;
    st_rec sr;
    if ((st = exec_gpu_gather(g->host, ir, ids, HIER, "rendezvous")) != TT_OK) goto fail;
    /* 2. the groups' host communicators (intra first everywhere, then inter) */
    memset(&sr, 0, sizeof sr);
    if ((st = tt_comm_init_rank(&h->intra_host, L, &ids[intra_r[0]].intra, h->intra_me)) != TT_OK) {
        h->intra_host = NULL;
        exec_gpu_fail_into(sr, tt_error_prefix(st, "intra-host group %s", rank_list(intra_r, L).c_str()));
    }
    if ((st = exec_gpu_gather(g->host, sr, sts, HIER, "intra-host connections")) != TT_OK) goto fail;
    if ((st = tt_comm_init_rank(&h->inter_host, H, &ids[inter_r[0]].inter, h->inter_me)) != TT_OK) {
        h->inter_host = NULL;
        exec_gpu_fail_into(sr, tt_error_prefix(st, "inter-host group %s", rank_list(inter_r, H).c_str()));
    }
    if ((st = exec_gpu_gather(g->host, sr, sts, HIER, "inter-host connections")) != TT_OK) goto fail;
    /* 3. the GPU sub-communicators on this process's device, their hosts given explicitly */
    if ((st = exec_gpu_comm_init_procs_emulate(&h->intra, h->intra_host, g->dev[me], 0)) != TT_OK) {
        h->intra = NULL;
        exec_gpu_fail_into(sr, tt_error_prefix(st, "intra-host GPU communicator"));
    }
    if ((st = exec_gpu_gather(g->host, sr, sts, HIER, "intra-host GPU communicator")) != TT_OK) goto fail;
    if ((st = exec_gpu_comm_init_procs_emulate(&h->inter, h->inter_host, g->dev[me], H)) != TT_OK) {
        h->inter = NULL;
        exec_gpu_fail_into(sr, tt_error_prefix(st, "inter-host GPU communicator"));
    }
    if ((st = exec_gpu_gather(g->host, sr, sts, HIER, "inter-host GPU communicator")) != TT_OK) goto fail;
    /* 4. names in messages, avg divisor, testing aid, events */
    h->intra->gname.assign(intra_r, intra_r + L);
    h->inter->gname.assign(inter_r, inter_r + H);
    h->inter->avg_nranks = g->nranks;
    h->intra->stall_rank = g->stall_rank >= 0 ? index_in(h->intra->gname, g->stall_rank) : -1;
    h->inter->stall_rank = g->stall_rank >= 0 ? index_in(h->inter->gname, g->stall_rank) : -1;
    cudaSetDevice(g->dev[me]);
    for (int i = 0; i < 4 && sr.st == TT_OK; i++) {
        cudaError_t e = cudaEventCreateWithFlags(&h->ev[i], cudaEventDisableTiming);
        if (e != cudaSuccess) exec_gpu_fail_into(sr, exec_gpu_cuda_fail(e, "cudaEventCreate (hierarchical AllReduce)"));
        else h->nev++;
    }
    if ((st = exec_gpu_gather(g->host, sr, sts, HIER, "events")) != TT_OK) goto fail;
    TT_INFO(SUBSYS, "hierarchical AllReduce: rank %d: %d host(s) x %d rank(s); intra-host group %s (local index "
                    "%d, %s, up to %d channel(s)); inter-host group %s (host %d, %s, up to %d channel(s))",
            me, h->hg.nhosts, h->hg.L, rank_list(intra_r, L).c_str(), h->intra_me,
            tt_gpu_comm_link(h->intra, h->intra_me, (h->intra_me + 1) % L), h->intra->nch_max,
            rank_list(inter_r, H).c_str(), h->inter_me,
            tt_gpu_comm_link(h->inter, h->inter_me, (h->inter_me + 1) % H), h->inter->nch_max);
    *out = h;
    return TT_OK;
fail : {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tt_error_message());
    /* every process failed at this same step (the status exchanges): the groups are still whole */
    hier_free(h, TT_OK);
    return tt_error_set(st, "%s", msg);
}
}

/* raise dst's abort word with a record linked to src's first failure (first failure wins) */
void link_into(tt_gpu_comm *g, tt_gpu_comm *src, int src_phase, tt_gpu_comm *dst)
{
    if (!dst->abort_word || *dst->abort_word) return;
    const gpu_err sr = *src->err;
    gpu_err e;
    memset(&e, 0, sizeof e);
    e.what = GPU_ERR_LINKED;
    e.rank = dst->me;     /* this process raised it: its proxy (if any) tells dst's peers */
    e.channel = g->me;     /* who stopped it: this process, or the one that linked it first */
    if (sr.what == GPU_ERR_LINKED) {
        e.channel = sr.channel;
        e.peer = sr.peer;
        e.role = sr.role;
        e.step = sr.step;
        e.proto = sr.proto;
    } else {
        e.peer = exec_gpu_gname(src, sr.peer);
        e.role = sr.what;
        e.step = (unsigned long long)exec_gpu_gname(src, sr.rank);
        e.proto = src_phase;
    }
    if (__sync_bool_compare_and_swap((int *)dst->abort_word, 0, 1)) {
        memcpy((char *)dst->err + sizeof(int), (const char *)&e + sizeof(int), sizeof e - sizeof(int));
        __sync_synchronize();
        dst->err->set = 1;
    }
}

/* the first communicator (of intra, inter, parent) whose abort is up with its record; an
 * original failure before a linked one */
void link_aborts(tt_gpu_comm *g)
{
    exec_gpu_hier *h = g->hier;
    tt_gpu_comm *c[3] = {h->intra, h->inter, g};
    const int ph[3] = {EXEC_HIER_PHASE_INTRA, EXEC_HIER_PHASE_INTER, EXEC_HIER_PHASE_FLAT};
    int src = -1;
    for (int pass = 0; pass < 2 && src < 0; pass++)
        for (int i = 0; i < 3 && src < 0; i++)
            if (c[i]->abort_word && *c[i]->abort_word && c[i]->err->set &&
                (pass == 1 || c[i]->err->what != GPU_ERR_LINKED))
                src = i;
    if (src < 0) return;
    __sync_synchronize();
    for (int i = 0; i < 3; i++)
        if (i != src) link_into(g, c[src], ph[src], c[i]);
}

}  // namespace

tt_status exec_gpu_hier_layout(const tt_gpu_comm *g, exec_gpu_hier_groups *hg, int *applies)
{
    *applies = 0;
    const int n = g->nranks;
    std::vector<unsigned char> same((size_t)n * n, 0);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            same[(size_t)a * n + b] = a != b && g->link[(size_t)a * n + b] != LINK_NET;
    tt_status st = exec_gpu_hier_group(n, same.data(), hg);
    if (st != TT_OK) return st;
    *applies = exec_gpu_hier_applies(hg);
    return TT_OK;
}

tt_status exec_gpu_hier_sync(tt_gpu_comm *g)
{
    exec_gpu_hier *h = g->hier;
    tt_gpu_comm *c[3] = {h->intra, h->inter, g};
    cudaSetDevice(g->dev[g->me]);
    tt_status cst = TT_OK;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long long last_check = 0;
    for (unsigned it = 0;; it++) {
        int pending = 0;
        for (int i = 0; i < 3 && cst == TT_OK; i++) {
            cudaError_t e = cudaStreamQuery(c[i]->groups[0].stream);
            if (e == cudaErrorNotReady) pending++;
            else if (e != cudaSuccess) cst = exec_gpu_cuda_fail(e, "hierarchical AllReduce");
        }
        if (cst != TT_OK || !pending) break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ms = (now.tv_sec - t0.tv_sec) * 1000LL + (now.tv_nsec - t0.tv_nsec) / 1000000;
        if (ms - last_check >= PEER_CHECK_MS) {
            last_check = ms;
            for (int i = 0; i < 3; i++) exec_gpu_procs_check_peers(c[i]);
        }
        link_aborts(g);
        if (it > 200) {
            struct timespec ns = {0, 20000};
            nanosleep(&ns, NULL);
        }
    }
    /* once more: an abort that came after the kernels finished still reaches the other groups
     * (and through their connections this process's peers) */
    link_aborts(g);
    if (cst != TT_OK) return tt_error_prefix(cst, "rank %d", g->me);
    /* the streams are idle: each sync returns at once with its communicator's failure */
    tt_status first = TT_OK;
    int first_linked = 1;
    char msg[1024] = "";
    for (int i = 0; i < 3; i++) {
        tt_status s = i < 2 ? tt_gpu_comm_sync(c[i]) : exec_gpu_procs_sync(g);
        if (s == TT_OK) continue;
        int linked = c[i]->abort_word && *c[i]->abort_word && c[i]->err->what == GPU_ERR_LINKED;
        if (first == TT_OK || (first_linked && !linked)) {
            first = s;
            first_linked = linked;
            if (i < 2)
                snprintf(msg, sizeof msg, "hierarchical AllReduce, %s phase: %s",
                         exec_gpu_hier_phase_name(i == 0 ? EXEC_HIER_PHASE_INTRA : EXEC_HIER_PHASE_INTER),
                         tt_error_message());
            else
                snprintf(msg, sizeof msg, "%s", tt_error_message());
        }
    }
    return first == TT_OK ? TT_OK : tt_error_set(first, "%s", msg);
}

void exec_gpu_hier_destroy(tt_gpu_comm *g)
{
    if (!g->hier) return;
    hier_free(g->hier, g->sticky);
    g->hier = NULL;
}

#define CK(call, what)                                                           \
    do {                                                                         \
        cudaError_t e_ = (call);                                                 \
        if (e_ != cudaSuccess) {                                                 \
            st = exec_gpu_cuda_fail(e_, what);                                   \
            goto launched;                                                       \
        }                                                                        \
    } while (0)
#define PHASE(call, phase)                                                       \
    do {                                                                         \
        if ((st = (call)) != TT_OK) {                                            \
            tt_error_prefix(st, "hierarchical AllReduce, %s phase", phase);      \
            goto launched;                                                       \
        }                                                                        \
    } while (0)

tt_status exec_gpu_hier_allreduce(tt_gpu_comm *g, const void *send, void *recv, size_t count, tt_dtype t,
                                  tt_redop op, const tt_plan *eff, int req_channels)
{
    tt_status st;
    if (!g->hier && (st = hier_build(g, &g->hier)) != TT_OK) return st;
    exec_gpu_hier *h = g->hier;
    tt_gpu_comm *in = h->intra, *ix = h->inter;
    const exec_gpu_hier_split sp = exec_gpu_hier_shards(count, h->hg.L);
    const size_t es = tt_dtype_size(t);
    const tt_redop iop = op == TT_AVG ? TT_SUM : op; /* avg divides once, in the inter-host phase */
    in->timeout_ms = ix->timeout_ms = g->timeout_ms;
    /* a group already stopped (an earlier call failed, not yet synced): link it everywhere and fail
     * now, as gpu_coll does for one communicator, instead of queueing phases that wait for peers */
    if ((in->abort_word && *in->abort_word) || (ix->abort_word && *ix->abort_word)) {
        st = exec_gpu_hier_sync(g);
        if (st != TT_OK) {
            g->sticky = st;
            snprintf(g->sticky_msg, sizeof g->sticky_msg, "%s", tt_error_message());
            return st;
        }
    }
    tt_plan pr = TT_PLAN_DEFAULT, pt = TT_PLAN_DEFAULT, px = TT_PLAN_DEFAULT;
    pr.algo = TT_ALGO_RING; /* ReduceScatter / AllGather: ring */
    pr.proto = pt.proto = px.proto = eff->proto;
    pr.channels = pt.channels = px.channels = req_channels;
    px.algo = g->hier_inter_algo ? (tt_algo)(g->hier_inter_algo - 1) : TT_ALGO_DEFAULT;
    /* every phase's plan first: a refusal launches nothing (and is the same on every rank) */
    {
        tt_plan e;
        tt_status rs = TT_OK;
        const char *bad = NULL;
        if (sp.shard && (rs = tt_gpu_comm_resolve_plan(in, TT_COLL_REDUCESCATTER, sp.shard, t, &pr, &e)) != TT_OK)
            bad = "intra-host (ReduceScatter)";
        else if (sp.tail && (rs = tt_gpu_comm_resolve_plan(in, TT_COLL_ALLREDUCE, sp.tail, t, &pt, &e)) != TT_OK)
            bad = "intra-host (tail AllReduce)";
        else if (sp.shard && (rs = tt_gpu_comm_resolve_plan(ix, TT_COLL_ALLREDUCE, sp.shard, t, &px, &e)) != TT_OK)
            bad = "inter-host (AllReduce)";
        else if (sp.tail && (rs = tt_gpu_comm_resolve_plan(ix, TT_COLL_ALLREDUCE, sp.tail, t, &px, &e)) != TT_OK)
            bad = "inter-host (tail AllReduce)";
        if (bad) return tt_error_prefix(rs, "hierarchical AllReduce, %s phase", bad);
    }
    if (!count) return TT_OK;
    {
        char *rb = (char *)recv;
        const char *sb = (const char *)send;
        char *mine = rb + (size_t)h->intra_me * sp.shard * es, *tail = rb + sp.tail_off * es;
        cudaStream_t ps = g->groups[0].stream, is = in->groups[0].stream, xs = ix->groups[0].stream;
        cudaSetDevice(g->dev[g->me]);
        CK(cudaEventRecord(h->ev[0], ps), "cudaEventRecord");
        CK(cudaStreamWaitEvent(is, h->ev[0], 0), "cudaStreamWaitEvent");
        /* 1. intra-host: shard i of the host's sum to local rank i (in place when send == recv: the
         * output is block i of the input), the tail summed whole */
        if (sp.shard) {
            const void *s[1] = {sb};
            void *d[1] = {mine};
            PHASE(tt_gpu_reducescatter(in, s, d, sp.shard, t, iop, &pr), "intra-host (ReduceScatter)");
        }
        if (sp.tail) {
            const void *s[1] = {sb + sp.tail_off * es};
            void *d[1] = {tail};
            PHASE(tt_gpu_allreduce(in, s, d, sp.tail, t, iop, &pt), "intra-host (tail AllReduce)");
        }
        CK(cudaEventRecord(h->ev[1], is), "cudaEventRecord");
        CK(cudaStreamWaitEvent(xs, h->ev[1], 0), "cudaStreamWaitEvent");
        /* 2. inter-host: in place on this rank's shard and the tail (avg: / all ranks) */
        if (sp.shard) {
            const void *s[1] = {mine};
            void *d[1] = {mine};
            PHASE(tt_gpu_allreduce(ix, s, d, sp.shard, t, op, &px), "inter-host (AllReduce)");
        }
        if (sp.tail) {
            const void *s[1] = {tail};
            void *d[1] = {tail};
            PHASE(tt_gpu_allreduce(ix, s, d, sp.tail, t, op, &px), "inter-host (tail AllReduce)");
        }
        CK(cudaEventRecord(h->ev[2], xs), "cudaEventRecord");
        CK(cudaStreamWaitEvent(is, h->ev[2], 0), "cudaStreamWaitEvent");
        /* 3. intra-host: every shard to every local rank (in place: shard i is block i of recv) */
        if (sp.shard) {
            const void *s[1] = {mine};
            void *d[1] = {rb};
            PHASE(tt_gpu_allgather(in, s, d, sp.shard, t, &pr), "intra-host (AllGather)");
        }
        CK(cudaEventRecord(h->ev[3], is), "cudaEventRecord");
        CK(cudaStreamWaitEvent(ps, h->ev[3], 0), "cudaStreamWaitEvent");
        return TT_OK;
    }
launched : {
    /* part of the call may be queued: wait for it (linking the aborts), keep the first failure */
    char msg[1024];
    snprintf(msg, sizeof msg, "rank %d: %s", g->me, tt_error_message());
    tt_status s2 = exec_gpu_hier_sync(g);
    if (s2 != TT_OK) {
        st = s2;
        snprintf(msg, sizeof msg, "%s", tt_error_message());
    }
    g->sticky = st;
    snprintf(g->sticky_msg, sizeof g->sticky_msg, "%s", msg);
    return tt_error_set(st, "%s", msg);
}
}
