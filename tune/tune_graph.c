/*
 * tune_graph.c - the working graph the channel search runs on.
 *
 * It is a copy of one node of the topology with capacities per directed edge, limited to
 * the GPUs (the first gpus_per_node GPUs in canonical order, i.e. by PCI bus id) and NET
 * ports the cluster description uses; nodes and edges are in canonical order (canon_cmp), so
 * the order of elements in the file changes nothing.  Fewer NICs than the topology holds:
 * the best placed ones, spread over the GPUs they serve (one per home GPU in turn, the home
 * being the GPU with the best path; p4d-style 4 NICs on an 8-NIC HGX file take one NIC per
 * PCIe switch, not the first four).  More NICs than the topology holds: the
 * cluster the user asked for is built, every NIC synthetic, evenly spread over the GPUs (NIC i
 * next to GPU i*G/K), each on its GPU's own PCIe parent with the GPU's PCIe bandwidth (MODEL
 * ASSUMPTION: DGX/HGX/p5-style placement; the file's own NICs are left out so that no GPU keeps
 * a far NIC next to new near ones).  NET port bandwidth is nic_gbps/8.
 *
 * Routes between endpoints (GPUs, NETs) are the widest of the shortest paths (fewest
 * hops, then highest bottleneck) that do not pass through another GPU or NET, and through
 * a NIC only when the destination is a NET port.  Path classes come from the topology's
 * own path table when present (tt_topo_compute_paths, NCCL's rules incl. PXN/GDR), else
 * from the route: NVL/NVB, PIX (<= 1 PCI switch), PXB (more switches), PHB (through a
 * CPU), SYS (inter-CPU link).
 */
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

#define TG_EPS 1e-6
#define TG_DEFAULT_PCI_BW 48.0 /* model assumption: Gen5 x16 when a GPU has no PCI link */

typedef struct {
    int from, to;
    tt_link_type type;
    double bw;
} raw_edge;

typedef struct {
    raw_edge *e;
    int n, cap;
} raw_list;

static int raw_add(raw_list *l, int from, int to, tt_link_type type, double bw)
{
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 256;
        raw_edge *ne = realloc(l->e, (size_t)nc * sizeof(*ne));
        if (!ne) return -1;
        l->e = ne;
        l->cap = nc;
    }
    l->e[l->n++] = (raw_edge){from, to, type, bw};
    return 0;
}

static int raw_has(const raw_list *l, int from, int to)
{
    for (int i = 0; i < l->n; i++)
        if (l->e[i].from == from && l->e[i].to == to) return 1;
    return 0;
}

void tg_free(tg_graph *g)
{
    if (!g) return;
    if (g->route) {
        for (int i = 0; i < g->nend * g->nend; i++) free(g->route[i]);
    }
    free(g->route);
    free(g->route_len);
    free(g->ptype);
    free(g->pbw);
    free(g->type);
    free(g->topo_index);
    free(g->adj_start);
    free(g->adj);
    free(g->e);
    free(g->gpu);
    free(g->net);
    memset(g, 0, sizeof(*g));
}

void tg_reset(tg_graph *g)
{
    for (int i = 0; i < g->ne; i++) g->e[i].left = g->e[i].bw;
}

/* Class of a route when the topology has no path table. */
static tt_path_type classify(const tg_graph *g, const int *r, int len)
{
    if (len == 0) return TT_PATH_LOC;
    int all_nvl = 1, nsw = 0, cpu = 0, sys = 0, midgpu = 0, c2c = 0;
    for (int i = 0; i < len; i++) {
        const tg_edge *e = &g->e[r[i]];
        if (e->type == TT_LINK_NET) continue;
        if (e->type != TT_LINK_NVL) all_nvl = 0;
        if (e->type == TT_LINK_SYS) sys = 1;
        if (e->type == TT_LINK_C2C) c2c = 1;
        if (i > 0) {
            tt_node_type mt = g->type[e->from];
            if (mt == TT_NODE_PCI) nsw++;
            if (mt == TT_NODE_CPU) cpu = 1;
            if (mt == TT_NODE_GPU) midgpu = 1;
        }
    }
    if (all_nvl) return midgpu ? TT_PATH_NVB : TT_PATH_NVL;
    if (sys) return TT_PATH_SYS;
    if (cpu) return c2c ? TT_PATH_P2C : TT_PATH_PHB;
    if (c2c) return TT_PATH_C2C;
    return nsw >= 2 ? TT_PATH_PXB : TT_PATH_PIX;
}

/* BFS from endpoint node `src` over allowed intermediates; fills routes to all endpoints. */
static tt_status bfs_routes(tg_graph *g, const tt_topo *t, int a)
{
    int src = a < g->ngpu ? g->gpu[a] : g->net[a - g->ngpu];
    int n = g->n;
    int *dist = malloc((size_t)n * sizeof(int));
    double *wb = malloc((size_t)n * sizeof(double));
    int *pe = malloc((size_t)n * sizeof(int));
    int *queue = malloc((size_t)n * sizeof(int));
    if (!dist || !wb || !pe || !queue) {
        free(dist); free(wb); free(pe); free(queue);
        return tt_error_set(TT_ERR_NOMEM, "tune: out of memory computing routes");
    }
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: destinations GPUs (no NIC intermediates); pass 1: NET destinations */
        for (int i = 0; i < n; i++) { dist[i] = -1; wb[i] = 0; pe[i] = -1; }
        int qh = 0, qt = 0;
        dist[src] = 0;
        wb[src] = 1e30;
        queue[qt++] = src;
        while (qh < qt) {
            int u = queue[qh++];
            if (u != src) {
                tt_node_type ut = g->type[u];
                if (ut == TT_NODE_GPU || ut == TT_NODE_NET) continue; /* no transit */
                if (ut == TT_NODE_NIC && pass == 0 && g->type[src] != TT_NODE_NET) continue;
            }
            for (int k = g->adj_start[u]; k < g->adj_start[u + 1]; k++) {
                const tg_edge *e = &g->e[g->adj[k]];
                int v = e->to;
                double b = wb[u] < e->bw ? wb[u] : e->bw;
                if (dist[v] < 0) {
                    dist[v] = dist[u] + 1;
                    wb[v] = b;
                    pe[v] = g->adj[k];
                    queue[qt++] = v;
                } else if (dist[v] == dist[u] + 1 && b > wb[v] + TG_EPS) {
                    wb[v] = b;
                    pe[v] = g->adj[k];
                }
            }
        }
        int b0 = pass == 0 ? 0 : g->ngpu, b1 = pass == 0 ? g->ngpu : g->nend;
        for (int b = b0; b < b1; b++) {
            int dst = b < g->ngpu ? g->gpu[b] : g->net[b - g->ngpu];
            int idx = a * g->nend + b;
            if (b == a) {
                g->route[idx] = calloc(1, sizeof(int));
                if (!g->route[idx]) goto oom;
                g->route[idx][0] = -1;
                g->route_len[idx] = 0;
                g->ptype[idx] = TT_PATH_LOC;
                g->pbw[idx] = TT_LOC_BW;
                continue;
            }
            if (dist[dst] < 0) { g->route[idx] = NULL; g->ptype[idx] = TT_PATH_DIS; continue; }
            int len = dist[dst];
            int *r = malloc((size_t)(len + 1) * sizeof(int));
            if (!r) goto oom;
            r[len] = -1;
            for (int v = dst, i = len - 1; v != src; i--) { r[i] = pe[v]; v = g->e[pe[v]].from; }
            g->route[idx] = r;
            g->route_len[idx] = len;
            g->pbw[idx] = wb[dst];
            g->ptype[idx] = classify(g, r, len);
            int ti = g->topo_index[src], tj = g->topo_index[dst];
            if (t->paths && ti >= 0 && tj >= 0) {
                const tt_path *p = &t->paths[(size_t)ti * t->nnodes + tj];
                if (p->nhops >= 0 && p->type != TT_PATH_DIS) g->ptype[idx] = p->type;
            }
        }
    }
    free(dist); free(wb); free(pe); free(queue);
    return TT_OK;
oom:
    free(dist); free(wb); free(pe); free(queue);
    return tt_error_set(TT_ERR_NOMEM, "tune: out of memory computing routes");
}

/* PCI bandwidth of a GPU: its first PCI link, else the default. */
static double gpu_pci_bw(const tt_topo *t, int gi, int *parent)
{
    const tt_node *n = &t->nodes[gi];
    for (int l = 0; l < n->nlinks; l++)
        if (n->links[l].type == TT_LINK_PCI) {
            if (parent) *parent = n->links[l].peer;
            return n->links[l].bw;
        }
    if (parent) *parent = -1;
    return TG_DEFAULT_PCI_BW;
}

/* Best GPU path class / bandwidth to a topology NET node, by a quick route on the raw
 * topology: used only to rank NET ports when the description uses fewer than exist. */
typedef struct { int node; int type; double bw; int home; } net_rank;
/* Canonical order of topology nodes, independent of the order of elements in the file: by
 * type, then PCI bus id, then what the element itself says (GPU dev, CPU NUMA id, NET name
 * and dev), then the name; the file position decides only between nodes alike in all that. */
static const tt_topo *canon_topo;
static int canon_cmp_idx(int a, int b)
{
    const tt_node *x = &canon_topo->nodes[a], *y = &canon_topo->nodes[b];
    if (x->type != y->type) return (int)x->type - (int)y->type;
    int c = strcmp(x->busid, y->busid);
    if (c) return c;
    switch (x->type) {
    case TT_NODE_GPU:
        if (x->u.gpu.dev != y->u.gpu.dev) return x->u.gpu.dev - y->u.gpu.dev;
        break;
    case TT_NODE_CPU:
        if (x->u.cpu.numaid != y->u.cpu.numaid) return x->u.cpu.numaid - y->u.cpu.numaid;
        if (x->host != y->host) return x->host - y->host;
        c = strcmp(x->u.cpu.affinity, y->u.cpu.affinity);
        if (c) return c;
        break;
    case TT_NODE_NET:
        c = strcmp(x->u.net.name, y->u.net.name);
        if (c) return c;
        if (x->u.net.dev != y->u.net.dev) return x->u.net.dev - y->u.net.dev;
        if (x->u.net.port != y->u.net.port) return x->u.net.port - y->u.net.port;
        break;
    default:
        break;
    }
    c = strcmp(x->name, y->name);
    if (c) return c;
    return a - b;
}
static int canon_cmp(const void *a, const void *b) { return canon_cmp_idx(*(const int *)a, *(const int *)b); }

static int net_rank_cmp(const void *a, const void *b)
{
    const net_rank *x = a, *y = b;
    if (x->type != y->type) return x->type - y->type;
    if (x->bw != y->bw) return x->bw > y->bw ? -1 : 1;
    return canon_cmp_idx(x->node, y->node);
}

/* raw edges in canonical order (the working graph's node numbers are canonical already) */
static int raw_cmp(const void *a, const void *b)
{
    const raw_edge *x = a, *y = b;
    if (x->from != y->from) return x->from - y->from;
    if (x->to != y->to) return x->to - y->to;
    if (x->type != y->type) return (int)x->type - (int)y->type;
    if (x->bw != y->bw) return x->bw > y->bw ? -1 : 1;
    return 0;
}

tt_status tg_build(const tt_topo *t, const tt_cluster *c, tg_graph *g)
{
    memset(g, 0, sizeof(*g));
    raw_list raw = {0};
    int ngpu = c->gpus_per_node;
    int want_nics = c->nodes > 1 ? c->nics_per_node : 0;
    int tn = t->nnodes;
    /* choose NET ports: rank by best GPU path (topology paths when present) */
    int ntopo_net = t->ntype[TT_NODE_NET];
    int *ord = malloc((size_t)(tn + 1) * sizeof(int));
    if (!ord) return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
    for (int i = 0; i < tn; i++) ord[i] = i;
    canon_topo = t;
    qsort(ord, (size_t)tn, sizeof(int), canon_cmp);
    net_rank *nr = calloc((size_t)(ntopo_net + 1), sizeof(*nr));
    if (!nr) { free(ord); return tt_error_set(TT_ERR_NOMEM, "tune: out of memory"); }
    int nn = 0;
    for (int i = 0; i < tn; i++) {
        if (t->nodes[i].type != TT_NODE_NET) continue;
        nr[nn].node = i;
        nr[nn].type = TT_PATH_SYS;
        nr[nn].bw = 0;
        nr[nn].home = -1;
        if (t->paths) {
            for (int j = 0; j < tn; j++) {
                if (t->nodes[j].type != TT_NODE_GPU) continue;
                const tt_path *p = &t->paths[(size_t)j * tn + i];
                if (p->nhops < 0) continue;
                if ((int)p->type < nr[nn].type || ((int)p->type == nr[nn].type && p->bw > nr[nn].bw) ||
                    ((int)p->type == nr[nn].type && p->bw == nr[nn].bw && nr[nn].home >= 0 &&
                     canon_cmp_idx(j, nr[nn].home) < 0)) {
                    nr[nn].type = p->type;
                    nr[nn].bw = p->bw;
                    nr[nn].home = j;
                }
            }
        }
        nn++;
    }
    qsort(nr, (size_t)nn, sizeof(*nr), net_rank_cmp);
    /* more NICs asked than the file holds: every NIC synthetic (the cluster asked for) */
    int use_topo_nets = want_nics <= nn ? want_nics : 0;
    int synth = want_nics - use_topo_nets;
    if (use_topo_nets > 0 && use_topo_nets < nn) {
        /* fewer than the file holds: the best placed, one per home GPU in turn */
        net_rank *pick = calloc((size_t)nn + 1, sizeof(*pick));
        char *taken = calloc((size_t)nn + 1, 1);
        int *homes = calloc((size_t)nn + 1, sizeof(int));
        if (!pick || !taken || !homes) {
            free(pick);
            free(taken);
            free(homes);
            free(nr);
            free(ord);
            return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
        }
        int np = 0;
        while (np < use_topo_nets) {
            int nh = 0;
            for (int k = 0; k < nn && np < use_topo_nets; k++) {
                if (taken[k]) continue;
                int seen = 0;
                for (int h = 0; h < nh; h++) seen |= homes[h] == nr[k].home;
                if (seen && nr[k].home >= 0) continue;
                homes[nh++] = nr[k].home;
                taken[k] = 1;
                pick[np++] = nr[k];
            }
        }
        memcpy(nr, pick, sizeof(*nr) * (size_t)np);
        free(pick);
        free(taken);
        free(homes);
    }

    /* node list: all topology nodes except unused GPUs and unused NETs, then synthetic */
    int cap = tn + 2 * synth + 1;
    g->type = calloc((size_t)cap, sizeof(*g->type));
    g->topo_index = calloc((size_t)cap, sizeof(int));
    int *map = malloc((size_t)(tn + 1) * sizeof(int));
    g->gpu = calloc((size_t)(ngpu + 1), sizeof(int));
    g->net = calloc((size_t)(want_nics + 1), sizeof(int));
    if (!g->type || !g->topo_index || !map || !g->gpu || !g->net) goto oom;
    int gseen = 0;
    for (int i = 0; i < tn; i++) map[i] = -1;
    for (int oi = 0; oi < tn; oi++) {
        int i = ord[oi];
        const tt_node *nd = &t->nodes[i];
        if (nd->type == TT_NODE_GPU) {
            if (gseen >= ngpu) { gseen++; continue; }
            gseen++;
        }
        if (nd->type == TT_NODE_NET) {
            int keep = 0;
            for (int k = 0; k < use_topo_nets; k++)
                if (nr[k].node == i) keep = 1;
            if (!keep) continue;
        }
        map[i] = g->n;
        g->type[g->n] = nd->type;
        g->topo_index[g->n] = i;
        if (nd->type == TT_NODE_GPU) g->gpu[g->ngpu++] = g->n;
        g->n++;
    }
    for (int k = 0; k < use_topo_nets; k++) g->net[g->nnet++] = map[nr[k].node];
    double nic_bw = c->nic_gbps / 8.0;
    for (int oi = 0; oi < tn; oi++) {
        int i = ord[oi];
        if (map[i] < 0) continue;
        const tt_node *nd = &t->nodes[i];
        for (int l = 0; l < nd->nlinks; l++) {
            const tt_link *lk = &nd->links[l];
            if (lk->peer < 0 || lk->peer >= tn || map[lk->peer] < 0) continue;
            double bw = lk->bw;
            if (nd->type == TT_NODE_NET || t->nodes[lk->peer].type == TT_NODE_NET) {
                if (want_nics > 0 && nic_bw > 0) bw = nic_bw;
            }
            if (raw_add(&raw, map[i], map[lk->peer], lk->type, bw)) goto oom;
        }
    }
    /* make every edge bidirectional (the topology normally lists both directions) */
    int nraw = raw.n;
    for (int i = 0; i < nraw; i++) {
        raw_edge e = raw.e[i];
        if (!raw_has(&raw, e.to, e.from) && raw_add(&raw, e.to, e.from, e.type, e.bw)) goto oom;
    }
    /* synthetic NICs: NIC node on the GPU's PCIe parent (or the GPU), NET port behind it */
    for (int s = 0; s < synth; s++) {
        int k = s;
        int gi_local = want_nics > 0 ? (int)((long)k * ngpu / want_nics) : 0;
        if (gi_local >= ngpu) gi_local = ngpu - 1;
        int gnode = g->gpu[gi_local];
        int parent_topo = -1;
        double pbw = gpu_pci_bw(t, g->topo_index[gnode], &parent_topo);
        int attach = (parent_topo >= 0 && map[parent_topo] >= 0) ? map[parent_topo] : gnode;
        int nic = g->n++, net = g->n++;
        g->type[nic] = TT_NODE_NIC;
        g->type[net] = TT_NODE_NET;
        g->topo_index[nic] = g->topo_index[net] = -1;
        if (raw_add(&raw, attach, nic, TT_LINK_PCI, pbw) || raw_add(&raw, nic, attach, TT_LINK_PCI, pbw) ||
            raw_add(&raw, nic, net, TT_LINK_NET, nic_bw) || raw_add(&raw, net, nic, TT_LINK_NET, nic_bw))
            goto oom;
        g->net[g->nnet++] = net;
    }
    qsort(raw.e, (size_t)raw.n, sizeof(*raw.e), raw_cmp);
    /* CSR */
    g->ne = raw.n;
    g->e = calloc((size_t)(raw.n + 1), sizeof(*g->e));
    g->adj_start = calloc((size_t)(g->n + 1), sizeof(int));
    g->adj = calloc((size_t)(raw.n + 1), sizeof(int));
    if (!g->e || !g->adj_start || !g->adj) goto oom;
    for (int i = 0; i < raw.n; i++) {
        g->e[i] = (tg_edge){raw.e[i].from, raw.e[i].to, raw.e[i].type, raw.e[i].bw, raw.e[i].bw};
        g->adj_start[raw.e[i].from + 1]++;
    }
    for (int i = 0; i < g->n; i++) g->adj_start[i + 1] += g->adj_start[i];
    {
        int *fill = calloc((size_t)(g->n + 1), sizeof(int));
        if (!fill) goto oom;
        for (int i = 0; i < raw.n; i++) {
            int f = raw.e[i].from;
            g->adj[g->adj_start[f] + fill[f]++] = i;
        }
        free(fill);
    }
    free(raw.e);
    raw.e = NULL;
    free(map);
    map = NULL;
    free(nr);
    nr = NULL;
    free(ord);
    ord = NULL;
    /* routes */
    g->nend = g->ngpu + g->nnet;
    size_t ne2 = (size_t)g->nend * g->nend;
    g->route = calloc(ne2 + 1, sizeof(int *));
    g->route_len = calloc(ne2 + 1, sizeof(int));
    g->ptype = calloc(ne2 + 1, sizeof(tt_path_type));
    g->pbw = calloc(ne2 + 1, sizeof(double));
    if (!g->route || !g->route_len || !g->ptype || !g->pbw) goto oom;
    for (int a = 0; a < g->nend; a++) {
        tt_status st = bfs_routes(g, t, a);
        if (st != TT_OK) { tg_free(g); return st; }
    }
    return TT_OK;
oom:
    free(raw.e);
    free(map);
    free(nr);
    free(ord);
    tg_free(g);
    return tt_error_set(TT_ERR_NOMEM, "tune: out of memory building the working graph");
}

int tg_route_fits(const tg_graph *g, int a, int b, double s)
{
    const int *r = g->route[a * g->nend + b];
    if (!r) return 0;
    /* an edge may appear once per route; compare remaining capacity with s */
    for (int i = 0; r[i] >= 0; i++)
        if (g->e[r[i]].left + TG_EPS < s) return 0;
    return 1;
}

void tg_route_take(tg_graph *g, int a, int b, double s)
{
    const int *r = g->route[a * g->nend + b];
    if (!r) return;
    for (int i = 0; r[i] >= 0; i++) g->e[r[i]].left -= s;
}
