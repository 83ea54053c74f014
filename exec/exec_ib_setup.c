/* exec_ib_setup.c - setup of the InfiniBand transport (exec_transport_ib.c):
 * device and port choice, per-pair QP/CQ/registered rings, the exchange of QP
 * attributes over the pairs' TCP connections, INIT -> RTR -> RTS, and the
 * switch of the pairs from TCP to verbs (exec_ib_upgrade).  Without the verbs
 * headers only the refusal of TOPOTUNE_TRANSPORT=ib is built. */
#include "exec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* can_connect: pairs on different hosts (auto), every pair when forced.
 * Whether both ends have an ACTIVE port is settled by the upgrade's exchange:
 * a pair where one side has none stays on TCP in auto mode. */
int exec_ib_can_connect(const tt_comm *comm, int peer, int forced)
{
    return forced || comm->node[peer] != comm->node[comm->rank];
}

#ifndef TT_HAVE_IBVERBS

tt_status exec_ib_upgrade(tt_comm *comm, const unsigned char *want, int forced)
{
    (void)want;
    if (forced)
        return tt_error_set(TT_ERR_UNSUPPORTED,
                            "rank %d: TOPOTUNE_TRANSPORT=ib, but topotune was built without rdma-core headers "
                            "(<infiniband/verbs.h>); install libibverbs-dev and rebuild",
                            comm->rank);
    return TT_OK; /* auto: every pair stays on TCP */
}

/* The table entry without verbs: it only ever refuses (no connection is made). */
const exec_transport exec_transport_ib = {
    .name = "ib",
    .can_connect = exec_ib_can_connect,
    .upgrade = exec_ib_upgrade,
};

#else

#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include "exec_ib_internal.h"

typedef struct {
    uint32_t magic;
    int32_t status; /* 0: ready; 1: no usable device (auto: TCP); 2: setup failed; err says why */
    uint32_t qpn, psn;
    uint16_t lid;
    uint8_t mtu, link_layer;
    uint8_t gid[16];
    uint64_t ring_addr, credit_addr;
    uint32_t rkey, ring_bytes, recv_depth, pad;
    char dev[64];
    char err[400];
} ib_info;

static const char *port_state(int s)
{
    switch (s) {
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    }
    return "NOP";
}


/* ---- setup -------------------------------------------------------------- */

/* Open the device and port: TOPOTUNE_IB_HCA=name[:port], else the first
 * ACTIVE port of any device. */
static tt_status dev_open(ib_dev **out, int me)
{
    const exec_ib_api *a = exec_ib_api_get();
    if (!a)
        return tt_error_prefix(TT_ERR_UNSUPPORTED, "rank %d", me);
    char want[64] = "";
    int want_port = 0;
    const char *hca = tt_setting("TOPOTUNE_IB_HCA");
    if (hca && *hca) {
        snprintf(want, sizeof want, "%s", hca);
        char *colon = strchr(want, ':');
        if (colon) {
            long long p;
            *colon = '\0';
            if (tt_parse_ll(colon + 1, &p) != TT_OK || p < 1 || p > 255)
                return tt_error_set(TT_ERR_INVALID, "rank %d: TOPOTUNE_IB_HCA='%s': port must be 1..255", me, hca);
            want_port = (int)p;
        }
    }
    int gid_index = 0;
    const char *gi = tt_setting("TOPOTUNE_IB_GID_INDEX");
    if (gi && *gi) {
        long long v;
        if (tt_parse_ll(gi, &v) != TT_OK || v < 0 || v > 255)
            return tt_error_set(TT_ERR_INVALID, "rank %d: TOPOTUNE_IB_GID_INDEX='%s' must be 0..255", me, gi);
        gid_index = (int)v;
    }
    int n = 0;
    struct ibv_device **list = a->get_device_list(&n);
    if (!list || n <= 0) {
        if (list)
            a->free_device_list(list);
        return tt_error_set(TT_ERR_UNSUPPORTED, "rank %d: no RDMA device found by libibverbs", me);
    }
    ib_dev *d = calloc(1, sizeof *d);
    if (!d) {
        a->free_device_list(list);
        return tt_error_set(TT_ERR_NOMEM, "rank %d: InfiniBand device", me);
    }
    d->api = a;
    d->refs = 1;
    d->gid_index = gid_index;
    char seen[512] = "";
    size_t sl = 0;
    int found_name = 0;
    for (int i = 0; i < n && !d->ctx; i++) {
        const char *name = a->get_device_name(list[i]);
        if (!name || (want[0] && strcmp(name, want)))
            continue;
        found_name = 1;
        struct ibv_context *ctx = a->open_device(list[i]);
        if (!ctx) {
            sl += (size_t)snprintf(seen + sl, sl < sizeof seen ? sizeof seen - sl : 0, "%s%s: cannot open",
                                   sl ? ", " : "", name);
            continue;
        }
        struct ibv_device_attr da;
        memset(&da, 0, sizeof da);
        if (a->query_device(ctx, &da) != 0) {
            sl += (size_t)snprintf(seen + sl, sl < sizeof seen ? sizeof seen - sl : 0,
                                   "%s%s: ibv_query_device failed", sl ? ", " : "", name);
            a->close_device(ctx);
            continue;
        }
        for (int p = 1; p <= da.phys_port_cnt && !d->ctx; p++) {
            struct ibv_port_attr pa;
            if (want_port && p != want_port)
                continue;
            if (exec_ib_query_port(a, ctx, (uint8_t)p, &pa) != 0) {
                sl += (size_t)snprintf(seen + sl, sl < sizeof seen ? sizeof seen - sl : 0,
                                       "%s%s port %d: ibv_query_port failed", sl ? ", " : "", name, p);
                continue;
            }
            if (pa.state != IBV_PORT_ACTIVE) {
                sl += (size_t)snprintf(seen + sl, sl < sizeof seen ? sizeof seen - sl : 0, "%s%s port %d: %s",
                                       sl ? ", " : "", name, p, port_state(pa.state));
                continue;
            }
            d->ctx = ctx;
            d->port = p;
            d->pa = pa;
            snprintf(d->name, sizeof d->name, "%s", name);
        }
        if (want_port && want_port > da.phys_port_cnt)
            sl += (size_t)snprintf(seen + sl, sl < sizeof seen ? sizeof seen - sl : 0, "%s%s has %d port(s)",
                                   sl ? ", " : "", name, da.phys_port_cnt);
        if (!d->ctx)
            a->close_device(ctx);
    }
    a->free_device_list(list);
    if (!d->ctx) {
        free(d);
        if (want[0] && !found_name)
            return tt_error_set(TT_ERR_NOT_FOUND, "rank %d: TOPOTUNE_IB_HCA='%s': no RDMA device named %s", me, hca,
                                want);
        return tt_error_set(TT_ERR_UNSUPPORTED, "rank %d: no ACTIVE RDMA port%s%s (%s)", me, want[0] ? " on " : "",
                            want[0] ? hca : "", seen);
    }
    int need_gid = d->pa.link_layer == IBV_LINK_LAYER_ETHERNET || (gi && *gi);
    if (need_gid && a->query_gid(d->ctx, (uint8_t)d->port, gid_index, &d->gid) != 0) {
        tt_status st = tt_error_set(TT_ERR_INVALID, "rank %d: %s port %d: cannot read GID index %d "
                                    "(TOPOTUNE_IB_GID_INDEX)", me, d->name, d->port, gid_index);
        exec_ib_dev_release(d);
        return st;
    }
    if (!(d->pd = a->alloc_pd(d->ctx))) {
        tt_status st = tt_error_set(TT_ERR_SYSTEM, "rank %d: %s: ibv_alloc_pd failed", me, d->name);
        exec_ib_dev_release(d);
        return st;
    }
    *out = d;
    return TT_OK;
}

static size_t env_ring(void)
{
    const char *s = tt_setting("TOPOTUNE_IB_RING_BYTES");
    uint64_t v;
    if (s && *s) {
        if (tt_parse_size(s, &v) == TT_OK && v >= 4096 && v <= (1ull << 30) && !(v & (v - 1)))
            return (size_t)v;
        TT_WARN("exec", "TOPOTUNE_IB_RING_BYTES='%s' must be a power of two in 4K..1G; using 1M", s);
    }
    return IB_DEFAULT_RING;
}

/* QP, CQ and registered buffer of one pair, QP in INIT with its receives
 * posted; info filled for the peer. */
static tt_status conn_new(tt_comm *comm, ib_dev *d, int p, size_t cap, ib_conn **out, ib_info *info)
{
    const exec_ib_api *a = d->api;
    int me = comm->rank;
    ib_conn *c = calloc(1, sizeof *c);
    if (!c)
        return tt_error_set(TT_ERR_NOMEM, "rank %d: InfiniBand connection to rank %d", me, p);
    c->base.tp = &exec_transport_ib;
    c->base.peer = p;
    c->me = me;
    c->drain_ms = comm->timeout_ms < 10000 ? comm->timeout_ms : 10000; /* engineering bound */
    c->dev = d;
    d->refs++;
    c->cap = cap;
    c->buf_len = 2 * cap + sizeof(ib_ctrl);
    tt_status st = TT_OK;
    if (posix_memalign((void **)&c->buf, 4096, c->buf_len) != 0) {
        c->buf = NULL;
        st = tt_error_set(TT_ERR_NOMEM, "rank %d: %zu bytes of InfiniBand rings for rank %d", me, c->buf_len, p);
        goto fail;
    }
    memset(c->buf, 0, c->buf_len);
    c->rxr = c->buf;
    c->txs = c->buf + cap;
    c->ctrl = (ib_ctrl *)(c->buf + 2 * cap);
    exec_ib_rx_init(&c->rx, cap);
    if (!(c->mr = a->reg_mr(d->pd, c->buf, c->buf_len,
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE))) {
        st = tt_error_set(TT_ERR_SYSTEM, "rank %d: %s: ibv_reg_mr of %zu bytes failed (locked-memory limit? "
                          "see ulimit -l)", me, d->name, c->buf_len);
        goto fail;
    }
    if (!(c->cq = a->create_cq(d->ctx, 2 * IB_RECV_DEPTH + 2 * IB_CREDIT_SLOTS, NULL, NULL, 0))) {
        st = tt_error_set(TT_ERR_SYSTEM, "rank %d: %s: ibv_create_cq failed", me, d->name);
        goto fail;
    }
    struct ibv_qp_init_attr qa;
    memset(&qa, 0, sizeof qa);
    qa.send_cq = qa.recv_cq = c->cq;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = IB_RECV_DEPTH + IB_CREDIT_SLOTS;
    qa.cap.max_recv_wr = IB_RECV_DEPTH;
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    if (!(c->qp = a->create_qp(d->pd, &qa))) {
        st = tt_error_set(TT_ERR_SYSTEM, "rank %d: %s: ibv_create_qp (RC) failed", me, d->name);
        goto fail;
    }
    struct ibv_qp_attr at;
    memset(&at, 0, sizeof at);
    at.qp_state = IBV_QPS_INIT;
    at.pkey_index = 0;
    at.port_num = (uint8_t)d->port;
    at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    int e = a->modify_qp(c->qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (e) {
        st = tt_error_set(TT_ERR_SYSTEM, "rank %d: %s: QP to INIT failed: %s", me, d->name, strerror(e));
        goto fail;
    }
    c->max_writes = IB_RECV_DEPTH;
    if (exec_ib_post_recvs(c, IB_RECV_DEPTH) != TT_OK) {
        st = tt_error_prefix(TT_ERR_SYSTEM, "rank %d: setup with rank %d", me, p);
        goto fail;
    }
    uint32_t psn = 0;
    if (getrandom(&psn, sizeof psn, 0) != (ssize_t)sizeof psn)
        psn = (uint32_t)getpid();
    memset(info, 0, sizeof *info);
    info->magic = IB_MAGIC;
    info->qpn = c->qp->qp_num;
    info->psn = psn & 0xffffff;
    info->lid = d->pa.lid;
    info->mtu = (uint8_t)d->pa.active_mtu;
    info->link_layer = d->pa.link_layer;
    memcpy(info->gid, d->gid.raw, 16);
    info->ring_addr = (uintptr_t)c->rxr;
    info->credit_addr = (uintptr_t)&c->ctrl->credit_in;
    info->rkey = c->mr->rkey;
    info->ring_bytes = (uint32_t)cap;
    info->recv_depth = IB_RECV_DEPTH;
    snprintf(info->dev, sizeof info->dev, "%s", d->name);
    *out = c;
    return TT_OK;
fail:
    c->tcp = NULL;
    exec_ib_conn_free(c);
    return st;
}

/* INIT -> RTR -> RTS with the peer's attributes. */
static tt_status conn_connect(ib_conn *c, const ib_info *mine, const ib_info *th)
{
    const exec_ib_api *a = c->dev->api;
    ib_dev *d = c->dev;
    struct ibv_qp_attr at;
    memset(&at, 0, sizeof at);
    at.qp_state = IBV_QPS_RTR;
    at.path_mtu = (enum ibv_mtu)(th->mtu < mine->mtu ? th->mtu : mine->mtu);
    at.dest_qp_num = th->qpn;
    at.rq_psn = th->psn;
    at.max_dest_rd_atomic = 1;
    at.min_rnr_timer = 12; /* 0.64 ms (should never happen: writes never outrun the receives) */
    at.ah_attr.dlid = th->lid;
    at.ah_attr.sl = 0;
    at.ah_attr.port_num = (uint8_t)d->port;
    if (d->pa.link_layer == IBV_LINK_LAYER_ETHERNET || tt_setting("TOPOTUNE_IB_GID_INDEX")) {
        at.ah_attr.is_global = 1;
        memcpy(at.ah_attr.grh.dgid.raw, th->gid, 16);
        at.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
        at.ah_attr.grh.hop_limit = 255;
    }
    int e = a->modify_qp(c->qp, &at,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (e)
        return tt_error_set(TT_ERR_SYSTEM, "rank %d: %s port %d: QP to RTR (peer rank %d, %s qpn %u lid %u) "
                            "failed: %s", c->me, d->name, d->port, c->base.peer, th->dev, th->qpn, th->lid,
                            strerror(e));
    memset(&at, 0, sizeof at);
    at.qp_state = IBV_QPS_RTS;
    at.sq_psn = mine->psn;
    at.timeout = 14;  /* 4.096 us * 2^14 = 67 ms per try (engineering choice) */
    at.retry_cnt = 7;
    at.rnr_retry = 7; /* infinite */
    at.max_rd_atomic = 1;
    e = a->modify_qp(c->qp, &at,
                     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                         IBV_QP_MAX_QP_RD_ATOMIC);
    if (e)
        return tt_error_set(TT_ERR_SYSTEM, "rank %d: %s port %d: QP to RTS (peer rank %d) failed: %s", c->me,
                            d->name, d->port, c->base.peer, strerror(e));
    c->r_ring = th->ring_addr;
    c->r_credit = th->credit_addr;
    c->r_rkey = th->rkey;
    exec_ib_tx_init(&c->tx, c->cap, th->recv_depth < IB_RECV_DEPTH ? th->recv_depth : IB_RECV_DEPTH);
    return TT_OK;
}

/* blocking setup transfer over the pair's TCP connection (exec_tcp_setup_io) */
static tt_status io(exec_conn *c, void *buf, size_t len, int is_send, int64_t deadline, int me)
{
    return exec_tcp_setup_io(c, buf, len, is_send, deadline, me, "InfiniBand");
}

tt_status exec_ib_upgrade(tt_comm *comm, const unsigned char *want, int forced)
{
    int n = comm->nranks, me = comm->rank;
    int *target = calloc((size_t)n, sizeof *target);
    ib_info *mine = calloc((size_t)n, sizeof *mine), *theirs = calloc((size_t)n, sizeof *theirs);
    ib_conn **cs = calloc((size_t)n, sizeof *cs);
    if (!target || !mine || !theirs || !cs) {
        free(target);
        free(mine);
        free(theirs);
        free(cs);
        return tt_error_set(TT_ERR_NOMEM, "rank %d: InfiniBand setup", me);
    }
    int ntargets = 0;
    for (int p = 0; p < n; p++) {
        target[p] = want[p]; /* exec_ib_can_connect, pair still on TCP */
        ntargets += target[p];
    }
    tt_status st = TT_OK;
    if (!ntargets)
        goto out;
    int64_t deadline = exec_now_ms() + comm->timeout_ms;
    size_t cap = env_ring();
    ib_dev *d = NULL;
    char why[400] = ""; /* = ib_info.err */
    if (dev_open(&d, me) != TT_OK) {
        snprintf(why, sizeof why, "%s", tt_error_message());
        if (forced)
            st = tt_error_set(TT_ERR_UNSUPPORTED, "%s (TOPOTUNE_TRANSPORT=ib)", why);
        else
            TT_INFO("exec", "%s; ranks on other hosts use TCP", why);
    }
    /* 1. resources and attributes for every target pair (or why not) */
    for (int p = 0; p < n; p++) {
        if (!target[p])
            continue;
        if (d && st == TT_OK && conn_new(comm, d, p, cap, &cs[p], &mine[p]) != TT_OK) {
            snprintf(why, sizeof why, "%s", tt_error_message());
            st = tt_error_set(TT_ERR_SYSTEM, "%s", why);
        }
        if (!cs[p]) {
            memset(&mine[p], 0, sizeof mine[p]);
            mine[p].magic = IB_MAGIC;
            mine[p].status = d ? 2 : 1;
            snprintf(mine[p].err, sizeof mine[p].err, "%s", why[0] ? why : "setup failed");
        }
    }
    /* 2. exchange over the pairs' TCP connections: everybody sends, then reads */
    tt_status xs = TT_OK;
    for (int p = 0; xs == TT_OK && p < n; p++)
        if (target[p])
            xs = io(comm->conns[p], &mine[p], sizeof mine[p], 1, deadline, me);
    for (int p = 0; xs == TT_OK && p < n; p++)
        if (target[p])
            xs = io(comm->conns[p], &theirs[p], sizeof theirs[p], 0, deadline, me);
    if (xs != TT_OK) {
        st = xs;
        goto out_free;
    }
    /* 3. a peer's failure first (it is the cause), then pairs where both sides
     * are ready connect; the rest stay on TCP (auto) */
    for (int p = 0; st == TT_OK && p < n; p++) {
        ib_info *th = &theirs[p];
        th->err[sizeof th->err - 1] = th->dev[sizeof th->dev - 1] = '\0';
        if (target[p] && th->magic == IB_MAGIC && (th->status == 2 || (th->status != 0 && forced)))
            st = tt_error_set(TT_ERR_REMOTE, "rank %d: rank %d could not set up InfiniBand: %s", me, p, th->err);
    }
    for (int p = 0; st == TT_OK && p < n; p++) {
        if (!target[p])
            continue;
        ib_info *th = &theirs[p];
        if (th->magic != IB_MAGIC)
            st = tt_error_set(TT_ERR_MISMATCH, "rank %d: rank %d sent no InfiniBand attributes (different "
                              "topotune build or TOPOTUNE_TRANSPORT?)", me, p);
        else if (th->status == 2 || (th->status != 0 && forced))
            st = tt_error_set(TT_ERR_REMOTE, "rank %d: rank %d could not set up InfiniBand: %s", me, p, th->err);
        else if (th->status == 0 && cs[p] && th->ring_bytes != cap)
            st = tt_error_set(TT_ERR_MISMATCH, "rank %d: rank %d uses a %u-byte InfiniBand ring, this rank %zu "
                              "(set the same TOPOTUNE_IB_RING_BYTES everywhere)", me, p, th->ring_bytes, cap);
        else if (th->status == 0 && cs[p])
            st = conn_connect(cs[p], &mine[p], th);
    }
    /* 4. confirm: no write may reach a QP that is not ready to receive */
    char ok = st == TT_OK;
    for (int p = 0; p < n; p++)
        if (target[p] && cs[p] && theirs[p].status == 0 &&
            (xs = io(comm->conns[p], &ok, 1, 1, deadline, me)) != TT_OK && st == TT_OK)
            st = xs;
    for (int p = 0; st == TT_OK && p < n; p++) {
        char th_ok = 0;
        if (!target[p] || !cs[p] || theirs[p].status != 0)
            continue;
        st = io(comm->conns[p], &th_ok, 1, 0, deadline, me);
        if (st == TT_OK && !th_ok)
            st = tt_error_set(TT_ERR_REMOTE, "rank %d: rank %d failed to connect its InfiniBand queue pair "
                              "(see its message)", me, p);
    }
    /* 5. switch the pairs over; the TCP connection stays as liveness channel */
    if (st == TT_OK) {
        char list[256] = "";
        size_t ll = 0;
        for (int p = 0; p < n; p++) {
            if (!cs[p] || theirs[p].status != 0)
                continue;
            cs[p]->tcp = comm->conns[p];
            comm->conns[p] = &cs[p]->base;
            cs[p] = NULL;
            ll += (size_t)snprintf(list + ll, ll < sizeof list ? sizeof list - ll : 0, "%s%d", ll ? "," : "", p);
        }
        if (ll)
            TT_INFO("exec", "rank %d: InfiniBand %s port %d (%s, lid %u, ring %zu bytes) to rank(s) %s", me,
                    d->name, d->port,
                    d->pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand", d->pa.lid, cap, list);
        else
            TT_INFO("exec", "rank %d: no InfiniBand pair (TCP to other hosts)", me);
    }
out_free:
    for (int p = 0; p < n; p++)
        if (cs[p])
            exec_ib_conn_free(cs[p]);
    exec_ib_dev_release(d);
out:
    free(target);
    free(mine);
    free(theirs);
    free(cs);
    return st;
}


#endif
