/*
 * topo_paths.c - best path between every pair of nodes, with NCCL's rules
 * (reference nccl-topo.md 3.2 - 3.4), then NCCL's post-processing (P2P via
 * CPU, P2C, PXN, GDR).
 *
 * Search: from every source, a label-correcting breadth-first search keeps one
 * path per destination and replaces it by a candidate with a better class,
 * else a higher bottleneck bandwidth, else fewer hops.  The class of a path is
 * the worst of its hops; a hop's class is its link type except: a PCI link
 * between two PCI switches is PXB, a PCI link touching a CPU is PHB, a NET
 * link is LOC, and an NVLink leaving an intermediate GPU is NVB.  A GPU is
 * never crossed except over NVLink to another GPU, at most one intermediate
 * GPU, when opts.nvb is set.
 *
 * Storage: the routes of one source row live in one block whose first entry
 * is the self path's route (so the row block is freed through it).
 */
#include "tt_topo.h"
#include "topo_internal.h"

#include <stdlib.h>
#include <string.h>

#define REL_EPS 1e-9

static size_t at(const tt_topo *t, int a, int b)
{
    return (size_t)a * (size_t)t->nnodes + (size_t)b;
}

/* candidate (type, bw, hops) better than the current path? */
static int better(tt_path_type type, double bw, int hops, const tt_path *cur)
{
    if (cur->nhops < 0)
        return 1;
    if (type != cur->type)
        return type < cur->type;
    if (bw > cur->bw * (1 + REL_EPS))
        return 1;
    if (bw < cur->bw * (1 - REL_EPS))
        return 0;
    return hops < cur->nhops;
}

static tt_path_type hop_type(const tt_topo *t, int s, int u, const tt_link *l)
{
    const tt_node *nu = &t->nodes[u], *nv = &t->nodes[l->peer];
    tt_path_type ht;
    switch (l->type) {
    case TT_LINK_LOC: ht = TT_PATH_LOC; break;
    case TT_LINK_NVL: ht = TT_PATH_NVL; break;
    case TT_LINK_C2C: ht = TT_PATH_C2C; break;
    case TT_LINK_PCI: ht = TT_PATH_PIX; break;
    case TT_LINK_SYS: ht = TT_PATH_SYS; break;
    case TT_LINK_NET: ht = TT_PATH_LOC; break;
    default: ht = TT_PATH_SYS; break;
    }
    if (nu->type == TT_NODE_PCI && nv->type == TT_NODE_PCI)
        ht = TT_PATH_PXB;
    if (l->type == TT_LINK_PCI && (nu->type == TT_NODE_CPU || nv->type == TT_NODE_CPU))
        ht = TT_PATH_PHB;
    if (u != s && nu->type == TT_NODE_GPU && l->type == TT_LINK_NVL)
        ht = TT_PATH_NVB;
    return ht;
}

typedef struct {
    tt_path *lab;   /* N labels for the current source */
    int *rbuf;      /* N*N route scratch: rbuf[v*N ...] */
    int *queue;
    unsigned char *inq;
} search_ws;

static int in_route(const int *r, int len, int v)
{
    for (int i = 0; i < len; i++)
        if (r[i] == v)
            return 1;
    return 0;
}

static tt_status search_from(tt_topo *t, int s, search_ws *w)
{
    int n = t->nnodes, head = 0, count = 0;
    long long work = 0, max_work = 64LL * n * n + 100000;
    for (int v = 0; v < n; v++) {
        w->lab[v].type = TT_PATH_DIS;
        w->lab[v].bw = 0;
        w->lab[v].nhops = -1;
        w->lab[v].route = w->rbuf + (size_t)v * n;
        w->inq[v] = 0;
    }
    w->lab[s].type = TT_PATH_LOC;
    w->lab[s].bw = TT_LOC_BW;
    w->lab[s].nhops = 0;
    w->lab[s].route[0] = s;
    w->queue[0] = s;
    w->inq[s] = 1;
    count = 1;
    while (count > 0) {
        int u = w->queue[head];
        head = (head + 1) % n;
        count--;
        w->inq[u] = 0;
        const tt_node *nu = &t->nodes[u];
        const tt_path *pu = &w->lab[u];
        for (int k = 0; k < nu->nlinks; k++) {
            const tt_link *l = &nu->links[k];
            int v = l->peer;
            if (++work > max_work)
                return tt_error_set(TT_ERR_INTERNAL, "path search from %s did not converge",
                                    nu->name);
            if (u != s && nu->type == TT_NODE_GPU &&
                (!t->opts.nvb || l->type != TT_LINK_NVL || t->nodes[v].type != TT_NODE_GPU ||
                 pu->nhops != 1))
                continue; /* a GPU is crossed only as one NVLink hop to another GPU */
            if (pu->nhops + 1 >= n || in_route(pu->route, pu->nhops + 1, v))
                continue;
            tt_path_type ht = hop_type(t, s, u, l);
            tt_path_type nt = ht > pu->type ? ht : pu->type;
            double nb = l->bw < pu->bw ? l->bw : pu->bw;
            int nh = pu->nhops + 1;
            tt_path *pv = &w->lab[v];
            if (!better(nt, nb, nh, pv))
                continue;
            pv->type = nt;
            pv->bw = nb;
            pv->nhops = nh;
            memcpy(pv->route, pu->route, (size_t)nh * sizeof(int));
            pv->route[nh] = v;
            if (!w->inq[v]) {
                w->queue[(head + count) % n] = v;
                count++;
                w->inq[v] = 1;
            }
        }
    }
    /* store the row: one block, self route first */
    size_t total = 0;
    for (int v = 0; v < n; v++)
        if (w->lab[v].nhops >= 0)
            total += (size_t)w->lab[v].nhops + 1;
    int *block = malloc(total * sizeof(int));
    if (!block)
        return tt_error_set(TT_ERR_NOMEM, "out of memory storing paths");
    size_t off = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int v = 0; v < n; v++) {
            if ((pass == 0) != (v == s))
                continue;
            tt_path *dst = &t->paths[at(t, s, v)];
            *dst = w->lab[v];
            if (dst->nhops < 0) {
                dst->route = NULL;
                continue;
            }
            dst->route = block + off;
            memcpy(dst->route, w->lab[v].route, ((size_t)dst->nhops + 1) * sizeof(int));
            off += (size_t)dst->nhops + 1;
        }
    }
    return TT_OK;
}

/* ---------- post-processing ---------- */

typedef struct {
    tt_topo *t;
    unsigned char *owned; /* route malloc'd by post-processing (not in a row block) */
    unsigned char *dirty; /* row has owned routes */
    int *cpu;             /* local CPU per node (from the raw paths) */
} post;

static tt_path_type merge_type(tt_path_type a, tt_path_type b)
{
    if ((a == TT_PATH_C2C && b == TT_PATH_PHB) || (a == TT_PATH_PHB && b == TT_PATH_C2C))
        return TT_PATH_P2C;
    return a > b ? a : b;
}

/* path a -> b := path(a, m) + path(m, b). type < 0: merged type. 1 when done. */
static tt_status reroute(post *p, int a, int m, int b, int type, int *done)
{
    tt_topo *t = p->t;
    const tt_path *x = &t->paths[at(t, a, m)], *y = &t->paths[at(t, m, b)];
    tt_path *d = &t->paths[at(t, a, b)];
    *done = 0;
    if (x->nhops < 0 || y->nhops < 0 || a == b)
        return TT_OK;
    int nh = x->nhops + y->nhops;
    int *r = malloc(((size_t)nh + 1) * sizeof(int));
    if (!r)
        return tt_error_set(TT_ERR_NOMEM, "out of memory rerouting paths");
    memcpy(r, x->route, ((size_t)x->nhops + 1) * sizeof(int));
    memcpy(r + x->nhops + 1, y->route + 1, (size_t)y->nhops * sizeof(int));
    d->type = type >= 0 ? (tt_path_type)type : merge_type(x->type, y->type);
    d->bw = x->bw < y->bw ? x->bw : y->bw;
    if (p->owned[at(t, a, b)])
        free(d->route);
    d->route = r;
    d->nhops = nh;
    p->owned[at(t, a, b)] = 1;
    p->dirty[a] = 1;
    *done = 1;
    return TT_OK;
}

static int is_type(const tt_topo *t, int i, tt_node_type type)
{
    return t->nodes[i].type == type;
}

static tt_status step_p2p(post *p)
{
    tt_topo *t = p->t;
    int done;
    for (int a = 0; a < t->nnodes; a++) {
        if (!is_type(t, a, TT_NODE_GPU) || p->cpu[a] < 0)
            continue;
        for (int b = 0; b < t->nnodes; b++) {
            const tt_path *pt = &t->paths[at(t, a, b)];
            if (b == a || !is_type(t, b, TT_NODE_GPU) || pt->nhops < 0 ||
                pt->type <= t->opts.p2p_level)
                continue;
            tt_status st = reroute(p, a, p->cpu[a], b, -1, &done);
            if (st != TT_OK)
                return st;
        }
    }
    return TT_OK;
}

/* NETs "local" to GPU g: highest bandwidth, then best class. */
static int local_net(const tt_topo *t, int g, int n)
{
    const tt_path *pn = &t->paths[at(t, g, n)];
    if (pn->nhops < 0)
        return 0;
    for (int m = 0; m < t->nnodes; m++) {
        const tt_path *pm = &t->paths[at(t, g, m)];
        if (!is_type(t, m, TT_NODE_NET) || pm->nhops < 0)
            continue;
        if (pm->bw > pn->bw * (1 + REL_EPS))
            return 0;
        if (pm->bw >= pn->bw * (1 - REL_EPS) && pm->type < pn->type)
            return 0;
    }
    return 1;
}

static void step_p2c(post *p)
{
    tt_topo *t = p->t;
    for (int g = 0; g < t->nnodes; g++) {
        int c = p->cpu[g];
        if (!is_type(t, g, TT_NODE_GPU) || c < 0 || t->paths[at(t, g, c)].type != TT_PATH_C2C)
            continue;
        for (int n = 0; n < t->nnodes; n++) {
            if (!is_type(t, n, TT_NODE_NET) || !local_net(t, g, n) ||
                t->paths[at(t, n, c)].type != TT_PATH_PHB)
                continue;
            tt_path *a = &t->paths[at(t, g, n)], *b = &t->paths[at(t, n, g)];
            if (a->type > TT_PATH_P2C)
                a->type = TT_PATH_P2C;
            if (b->nhops >= 0 && b->type > TT_PATH_P2C)
                b->type = TT_PATH_P2C;
        }
    }
}

/* GPU closest to NET n: best class, then bandwidth, then lowest index. */
static int net_local_gpu(const tt_topo *t, int n)
{
    int best = -1;
    for (int g = 0; g < t->nnodes; g++) {
        if (!is_type(t, g, TT_NODE_GPU))
            continue;
        const tt_path *pg = &t->paths[at(t, g, n)];
        if (pg->nhops < 0)
            continue;
        if (best < 0) {
            best = g;
            continue;
        }
        const tt_path *pb = &t->paths[at(t, best, n)];
        if (pg->type < pb->type || (pg->type == pb->type && pg->bw > pb->bw * (1 + REL_EPS)))
            best = g;
    }
    return best;
}

/* GPUDirect allowed between GPU g and NET n at distance d (unknown gdr = yes). */
static int gdr_ok(const tt_topo *t, int g, int n, tt_path_type d)
{
    return t->nodes[g].u.gpu.gdr != 0 && t->nodes[n].u.net.gdr != 0 && d <= t->opts.gdr_level;
}

static tt_status step_pxn(post *p)
{
    tt_topo *t = p->t;
    int done;
    for (int n = 0; n < t->nnodes; n++) {
        if (!is_type(t, n, TT_NODE_NET))
            continue;
        int peer = net_local_gpu(t, n);
        if (peer < 0)
            continue;
        const tt_path *pp = &t->paths[at(t, peer, n)];
        /* relay must reach the NIC within P2C (NCCL_PXN_C2C=1) with GPUDirect */
        if (pp->type > TT_PATH_P2C || !gdr_ok(t, peer, n, pp->type))
            continue;
        for (int g = 0; g < t->nnodes; g++) {
            if (g == peer || !is_type(t, g, TT_NODE_GPU) || t->nodes[g].host != t->nodes[peer].host)
                continue;
            const tt_path *gg = &t->paths[at(t, g, peer)], *gp = &t->paths[at(t, g, n)];
            if (gg->nhops < 0 || gg->type > TT_PATH_NVL)
                continue;
            if (gp->nhops >= 0 && !(pp->bw > gp->bw * (1 + REL_EPS) || gp->type > TT_PATH_PXN))
                continue;
            tt_status st = reroute(p, g, peer, n, TT_PATH_PXN, &done);
            if (st != TT_OK)
                return st;
        }
    }
    return TT_OK;
}

static tt_status step_gdr(post *p)
{
    tt_topo *t = p->t;
    int done;
    for (int g = 0; g < t->nnodes; g++) {
        if (!is_type(t, g, TT_NODE_GPU) || p->cpu[g] < 0)
            continue;
        for (int n = 0; n < t->nnodes; n++) {
            const tt_path *pt = &t->paths[at(t, g, n)];
            if (!is_type(t, n, TT_NODE_NET) || pt->nhops < 0 || pt->type >= TT_PATH_PHB)
                continue;
            int relay = g;
            tt_path_type d = pt->type;
            if (pt->type == TT_PATH_PXN) { /* judged by the relay GPU's distance */
                for (int k = pt->nhops; k >= 0; k--)
                    if (is_type(t, pt->route[k], TT_NODE_GPU)) {
                        relay = pt->route[k];
                        break;
                    }
                d = t->paths[at(t, relay, n)].type;
            }
            if (gdr_ok(t, g, n, d) && (relay == g || t->nodes[relay].u.gpu.gdr != 0))
                continue;
            tt_status st = reroute(p, g, p->cpu[g], n, -1, &done);
            if (st == TT_OK)
                st = reroute(p, n, p->cpu[g], g, -1, &done);
            if (st != TT_OK)
                return st;
        }
    }
    return TT_OK;
}

/* Move every post-processed route back into its row's block. */
static tt_status compact(post *p)
{
    tt_topo *t = p->t;
    int n = t->nnodes;
    for (int s = 0; s < n; s++) {
        if (!p->dirty[s])
            continue;
        size_t total = 0, off = 0;
        for (int v = 0; v < n; v++)
            if (t->paths[at(t, s, v)].nhops >= 0)
                total += (size_t)t->paths[at(t, s, v)].nhops + 1;
        int *block = malloc(total * sizeof(int));
        if (!block)
            return tt_error_set(TT_ERR_NOMEM, "out of memory storing paths");
        int *old = t->paths[at(t, s, s)].route;
        for (int pass = 0; pass < 2; pass++) {
            for (int v = 0; v < n; v++) {
                tt_path *d = &t->paths[at(t, s, v)];
                if ((pass == 0) != (v == s) || d->nhops < 0)
                    continue;
                memcpy(block + off, d->route, ((size_t)d->nhops + 1) * sizeof(int));
                if (p->owned[at(t, s, v)]) {
                    free(d->route);
                    p->owned[at(t, s, v)] = 0;
                }
                d->route = block + off;
                off += (size_t)d->nhops + 1;
            }
        }
        free(old);
        p->dirty[s] = 0;
    }
    return TT_OK;
}

static void drop_owned(post *p)
{
    tt_topo *t = p->t;
    size_t nn = (size_t)t->nnodes * (size_t)t->nnodes;
    for (size_t i = 0; i < nn; i++)
        if (p->owned[i]) {
            free(t->paths[i].route);
            t->paths[i].route = NULL;
        }
}

tt_status tt_topo_compute_paths(tt_topo *t)
{
    search_ws w = {0};
    post p = {0};
    tt_status st = TT_OK;
    int n;
    if (!t)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_compute_paths: no topology");
    tt_topo__free_paths(t);
    n = t->nnodes;
    if (n == 0)
        return TT_OK;
    if (n > TT_TOPO_MAX_PATH_NODES)
        return tt_error_set(TT_ERR_LIMIT, "%s: %d nodes, more than the %d all-pairs paths are "
                            "computed for", t->source, n, TT_TOPO_MAX_PATH_NODES);
    t->paths = calloc((size_t)n * (size_t)n, sizeof *t->paths);
    w.lab = calloc((size_t)n, sizeof *w.lab);
    w.rbuf = malloc((size_t)n * (size_t)n * sizeof *w.rbuf);
    w.queue = malloc((size_t)n * sizeof *w.queue);
    w.inq = malloc((size_t)n);
    if (!t->paths || !w.lab || !w.rbuf || !w.queue || !w.inq) {
        st = tt_error_set(TT_ERR_NOMEM, "out of memory computing paths for %d nodes", n);
        goto out;
    }
    for (int s = 0; s < n && st == TT_OK; s++)
        st = search_from(t, s, &w);
    if (st != TT_OK)
        goto out;

    p.t = t;
    p.owned = calloc((size_t)n * (size_t)n, 1);
    p.dirty = calloc((size_t)n, 1);
    p.cpu = malloc((size_t)n * sizeof *p.cpu);
    if (!p.owned || !p.dirty || !p.cpu) {
        st = tt_error_set(TT_ERR_NOMEM, "out of memory computing paths for %d nodes", n);
        goto out;
    }
    for (int i = 0; i < n; i++)
        p.cpu[i] = tt_topo_local_cpu(t, i);
    st = step_p2p(&p);
    if (st == TT_OK)
        step_p2c(&p);
    if (st == TT_OK && t->opts.pxn)
        st = step_pxn(&p);
    if (st == TT_OK)
        st = step_gdr(&p);
    if (st == TT_OK)
        st = compact(&p);
    if (st != TT_OK)
        drop_owned(&p);
out:
    if (st != TT_OK && t->paths) {
        /* rows not yet stored have NULL self routes; free what exists */
        tt_topo__free_paths(t);
    }
    free(p.owned);
    free(p.dirty);
    free(p.cpu);
    free(w.lab);
    free(w.rbuf);
    free(w.queue);
    free(w.inq);
    return st;
}
