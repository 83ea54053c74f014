/*
 * tune_channels.c - what NCCL's graph search (ncclTopoCompute) produces for the model:
 * nChannels, bwIntra, bwInter, typeIntra, typeInter, pattern for ring, tree and NVLS.
 *
 * This is not a port of NCCL's depth-first search.  It follows the facts documented in
 * docs/model.md (reference: nccl-tuning.md section 2, nccl-topo.md section 4):
 *   - the same speed tables per architecture (intra / inter);
 *   - each channel subtracts its speed from every link it crosses (tune_graph.c routes);
 *   - start at the first speed <= maxBw with speed*minChannels <= totalBw (trees: totalBw
 *     scaled by n/(n-1)); keep lowering while next/best > 0.49 or nothing found; a result
 *     is better when nChannels*bw is larger (ties keep the faster speed: fewer hops);
 *     stop early when nChannels*bw >= totalBw or maxChannels is reached;
 *   - pass 2: duplicate channels (halve bw) when bwIntra >= 25 unless (ccMin > 80 and
 *     bwIntra < 50 and nChannels > 4); then raise the speed at a fixed channel count
 *     (rings: both; trees: bwIntra up to 2*bwInter; NVLS: bwInter).
 * GPU orders are searched on the graph (ring_order below, docs/model.md "Ring and tree
 * search"): a depth-first search over GPU orders that follows the routes with room at the
 * speed tried, best path class then widest path first, backtracking, path class relaxed
 * one level at a time, a bounded number of steps per channel.  The working graph is in a
 * canonical order (tune_graph.c), so the result does not depend on the order of elements
 * in the file.  Channel c enters through NIC c mod K at the GPU closest to it and leaves
 * through the NIC closest to its last GPU that has room (crossNic allowed);
 * reverse-direction consumption (NCCL: only pre-Ampere GPUs and POWER CPUs) is left out; the
 * tree pattern is BALANCED_TREE when the NIC has a second GPU at the same path class, else
 * TREE on SM90+ (NCCL's "simpler tree"); NVLS heads are capped by the NIC count on
 * several nodes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

#define EPS 1e-6
#define MAXCHANNELS 64

static const double sp_intra_pre90[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const double sp_inter_pre90[] = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
static const double sp_intra_90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
static const double sp_inter_90[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
static const double sp_intra_100[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
static const double sp_inter_100[] = {96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

const double *tt_speed_table(int sm, int inter, int *n)
{
    if (sm >= 100) { *n = inter ? NELEM(sp_inter_100) : NELEM(sp_intra_100); return inter ? sp_inter_100 : sp_intra_100; }
    if (sm >= 90) { *n = inter ? NELEM(sp_inter_90) : NELEM(sp_intra_90); return inter ? sp_inter_90 : sp_intra_90; }
    *n = inter ? NELEM(sp_inter_pre90) : NELEM(sp_intra_pre90);
    return inter ? sp_inter_pre90 : sp_intra_pre90;
}

typedef struct {
    tg_graph *g;
    int multi;      /* several nodes: channels go through NICs */
    int ngpu, nnet;
    double *save;
    /* ring / chain search state (ring_order) */
    int *order;         /* GPUs of the channel being built, order[0] = first */
    char *visited;
    int *cand;          /* candidate scratch: ngpu per depth */
    long budget;        /* search steps left for this channel */
    tt_path_type level; /* highest path class a hop may use */
    int close;          /* RING_CLOSE_* */
    int exit_net;       /* RING_CLOSE_NET: the NET port the chain left through */
    tt_path_type *levels; /* distinct GPU-GPU path classes, ascending */
    int nlevels;
    int lvl_from;       /* levels below failed for an earlier channel of this count */
    int fresh;          /* the channel being built is the first of its count (all capacity left) */
    double fail_sp[3][TT_PATH_DIS + 1]; /* per close mode and level: lowest speed that failed
                                         * on the first channel (slower ones may still fit) */
    tt_path_type worst_intra, worst_inter;
} search;

static void snap(search *s) { for (int i = 0; i < s->g->ne; i++) s->save[i] = s->g->e[i].left; }
static void restore(search *s) { for (int i = 0; i < s->g->ne; i++) s->g->e[i].left = s->save[i]; }

static int take(search *s, int a, int b, double bw)
{
    if (bw <= 0) return 1;
    if (!tg_route_fits(s->g, a, b, bw)) return 0;
    tg_route_take(s->g, a, b, bw);
    return 1;
}

static void note_type(search *s, int a, int b, int inter)
{
    tt_path_type t = s->g->ptype[a * s->g->nend + b];
    if (inter) { if (t > s->worst_inter) s->worst_inter = t; }
    else if (t > s->worst_intra) s->worst_intra = t;
}

/* GPU closest to NET k: lowest class, then highest bandwidth, then lowest index.  With
 * sp > 0 only GPUs whose route (NET->GPU when to_gpu, else GPU->NET) still has sp left. */
static int best_gpu_for_net_cap(const search *s, int k, int skip, double sp, int to_gpu)
{
    int best = -1;
    int ne = tg_net_ep(s->g, k);
    for (int i = 0; i < s->ngpu; i++) {
        if (i == skip) continue;
        int idx = i * s->g->nend + ne;
        if (!s->g->route[idx]) continue;
        if (sp > 0 && !(to_gpu ? tg_route_fits(s->g, ne, i, sp) : tg_route_fits(s->g, i, ne, sp))) continue;
        if (best < 0) { best = i; continue; }
        int bidx = best * s->g->nend + ne;
        if (s->g->ptype[idx] < s->g->ptype[bidx] ||
            (s->g->ptype[idx] == s->g->ptype[bidx] && s->g->pbw[idx] > s->g->pbw[bidx] + EPS))
            best = i;
    }
    return best;
}

static int best_gpu_for_net(const search *s, int k, int skip)
{
    return best_gpu_for_net_cap(s, k, skip, 0, 1);
}

/* NETs ordered by closeness to GPU i. Returns count written into order[]. */
static int nets_for_gpu(const search *s, int i, int *order)
{
    int n = 0;
    for (int k = 0; k < s->nnet; k++) order[n++] = k;
    for (int a = 1; a < n; a++) {
        int v = order[a], b = a - 1;
        int iv = i * s->g->nend + tg_net_ep(s->g, v);
        while (b >= 0) {
            int ib = i * s->g->nend + tg_net_ep(s->g, order[b]);
            int worse = s->g->ptype[ib] > s->g->ptype[iv] ||
                        (s->g->ptype[ib] == s->g->ptype[iv] && s->g->pbw[ib] + EPS < s->g->pbw[iv]);
            if (!worse) break;
            order[b + 1] = order[b];
            b--;
        }
        order[b + 1] = v;
    }
    return n;
}

#define RING_CLOSE_NONE 0 /* a chain: the last GPU sends nothing inside the node */
#define RING_CLOSE_RING 1 /* the last GPU sends to the first */
#define RING_CLOSE_NET 2  /* the last GPU sends to a NET port (nets_for_gpu order) */
/* Search steps (hops tried) per channel and path-class level.  MODEL ASSUMPTION: NCCL bounds
 * its own search by a global step count too; 1 << 14 hops per channel is enough to find a ring
 * in every fixture and keeps a failed speed on 72 GPUs in the millisecond range. */
#define RING_BUDGET (1L << 14)

static void give_back(search *s, int a, int b, double bw)
{
    const int *r = s->g->route[a * s->g->nend + b];
    for (int i = 0; r && r[i] >= 0; i++) s->g->e[r[i]].left += bw;
}

/* the last hop of a ring / chain; 1 when it fits (capacity taken) */
static int ring_close(search *s, int cur, double sp)
{
    if (s->close == RING_CLOSE_NONE) return 1;
    if (s->close == RING_CLOSE_RING) {
        if (s->g->ptype[cur * s->g->nend + s->order[0]] > s->level) return 0;
        return take(s, cur, s->order[0], sp);
    }
    int order[256];
    int no = nets_for_gpu(s, cur, order);
    for (int o = 0; o < no && o < 256; o++) {
        if (take(s, cur, tg_net_ep(s->g, order[o]), sp)) { s->exit_net = order[o]; return 1; }
    }
    return 0;
}

/* Depth-first search over GPU orders: order[0..depth) placed, capacity for their hops taken.
 * Next GPUs are tried by path class, then path bandwidth, then rank distance from the first
 * GPU (so rank order comes first where the links allow it).  1: order[] complete. */
static int ring_dfs(search *s, int depth, int n, double sp)
{
    int cur = s->order[depth - 1];
    if (depth == n) return ring_close(s, cur, sp);
    int *cand = s->cand + (size_t)depth * n;
    int nc = 0;
    int a = s->order[0];
    for (int step = 1; step < n; step++) {
        int v = (a + step) % n;
        if (s->visited[v]) continue;
        int idx = cur * s->g->nend + v;
        if (!s->g->route[idx] || s->g->ptype[idx] > s->level) continue;
        /* insertion by (class, bandwidth desc); equal ones keep rank distance order */
        int j = nc++;
        while (j > 0) {
            int p = cur * s->g->nend + cand[j - 1];
            if (s->g->ptype[p] < s->g->ptype[idx] ||
                (s->g->ptype[p] == s->g->ptype[idx] && s->g->pbw[p] + EPS >= s->g->pbw[idx]))
                break;
            cand[j] = cand[j - 1];
            j--;
        }
        cand[j] = v;
    }
    for (int k = 0; k < nc; k++) {
        if (--s->budget < 0) return 0;
        int v = cand[k];
        if (!take(s, cur, v, sp)) continue;
        s->visited[v] = 1;
        s->order[depth] = v;
        if (ring_dfs(s, depth + 1, n, sp)) return 1;
        s->visited[v] = 0;
        give_back(s, cur, v, sp);
    }
    return 0;
}

/* An order of all GPUs starting at GPU a whose hops fit at speed sp: the lowest path-class
 * level that gives one, each level with its own step budget.  1: s->order filled, capacity
 * taken (the caller restores on failure of a later step). */
static int ring_order(search *s, int a, double sp, int close)
{
    int n = s->ngpu;
    s->close = close;
    /* a level that failed cannot succeed with less capacity left: skip it for the later
     * channels of this count, and on the first channel at a speed not below one that failed
     * (exact on one node, where every channel starts at GPU 0; a heuristic across NICs) */
    for (int l = s->lvl_from; l < s->nlevels; l++) {
        if (s->fresh && sp + EPS >= s->fail_sp[close][l]) { s->lvl_from = l + 1; continue; }
        s->level = s->levels[l];
        s->budget = RING_BUDGET;
        memset(s->visited, 0, (size_t)n);
        s->visited[a] = 1;
        s->order[0] = a;
        if (ring_dfs(s, 1, n, sp)) return 1;
        if (s->fresh && sp < s->fail_sp[close][l]) s->fail_sp[close][l] = sp;
        s->lvl_from = l + 1;
    }
    return 0;
}

/* One ring channel number c at speed sp. Returns 1 when it fits (capacity taken). */
static int ring_channel(search *s, int c, double sp)
{
    int n = s->ngpu;
    snap(s);
    if (!s->multi) {
        if (n == 1) return 1;
        if (!ring_order(s, 0, sp, RING_CLOSE_RING)) { restore(s); return 0; }
        for (int i = 0; i < n; i++) note_type(s, s->order[i], s->order[(i + 1) % n], 0);
        return 1;
    }
    if (s->nnet == 0) return 0;
    int k = -1, a = -1;
    for (int off = 0; off < s->nnet && a < 0; off++) {
        k = (c + off) % s->nnet;
        a = best_gpu_for_net_cap(s, k, -1, sp, 1);
    }
    if (a < 0) return 0;
    if (!take(s, tg_net_ep(s->g, k), a, sp)) { restore(s); return 0; }
    if (n == 1) {
        s->order[0] = a;
        s->close = RING_CLOSE_NET;
        if (!ring_close(s, a, sp)) { restore(s); return 0; }
    } else if (!ring_order(s, a, sp, RING_CLOSE_NET)) {
        restore(s);
        return 0;
    }
    int cur = s->order[n - 1];
    note_type(s, tg_net_ep(s->g, k), a, 1);
    note_type(s, cur, tg_net_ep(s->g, s->exit_net), 1);
    for (int i = 0; i + 1 < n; i++) note_type(s, s->order[i], s->order[i + 1], 0);
    return 1;
}

/* capacity left on the first edge of GPU v's route towards GPU w (its egress link) */
static double egress_left(const search *s, int v, int w)
{
    if (v == w) w = (v + 1) % s->ngpu;
    const int *r = s->g->route[v * s->g->nend + w];
    return r && r[0] >= 0 ? s->g->e[r[0]].left : 0;
}

/* Tree channel c: chain through the GPUs; on several nodes the chain head talks to NET k.
 * pattern: BALANCED_TREE splits the NIC return over the first two GPUs. */
static int tree_channel(search *s, int c, double si, double se, tt_pattern pat)
{
    int n = s->ngpu;
    snap(s);
    int a = -1, b = -1;
    int k = -1;
    if (!s->multi) a = 0;
    if (s->multi) {
        if (s->nnet == 0) return 0;
        for (int off = 0; off < s->nnet && a < 0; off++) {
            k = (c + off) % s->nnet;
            a = best_gpu_for_net_cap(s, k, -1, se, 1);
        }
        if (a < 0) return 0;
        if (pat == TT_PATTERN_BALANCED_TREE && n > 1) {
            b = best_gpu_for_net_cap(s, k, a, se / 2, 0);
            if (b < 0) b = best_gpu_for_net(s, k, a);
        }
    }
    /* chain order: a, b (if any), then the rest in rank order after a */
    int order[1024];
    int m = 0;
    order[m++] = a;
    if (b >= 0) order[m++] = b;
    for (int step = 1; step < n && m < 1024; step++) {
        int x = (a + step) % n;
        if (x != b) order[m++] = x;
    }
    /* the last GPU of a chain sends nothing inside the node: put the GPUs with the least
     * egress capacity left at the end (stable insertion sort on the first hop's edge) */
    int fixed = b >= 0 ? 2 : 1;
    for (int i = fixed + 1; s->multi && i < m; i++) {
        int v = order[i], j = i - 1;
        double lv = egress_left(s, v, a);
        while (j >= fixed && egress_left(s, order[j], a) + EPS < lv) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = v;
    }
    if (n > 1024) { restore(s); return 0; } /* chain orders are kept in order[1024] */
    if (!s->multi && n > 1) {
        /* one node: the chain is searched on the graph like a ring that is not closed */
        if (!ring_order(s, a, si, RING_CLOSE_NONE)) { restore(s); return 0; }
        memcpy(order, s->order, sizeof(int) * (size_t)n);
    } else {
        int i = 0;
        while (i + 1 < m && take(s, order[i], order[i + 1], si)) i++;
        if (i + 1 < m) {
            /* the fixed order does not fit: search the chain on the graph from a (the NIC
             * return of a balanced tree stays on the first two GPUs, so only without b) */
            restore(s);
            if (b >= 0 || !ring_order(s, a, si, RING_CLOSE_NONE)) { restore(s); return 0; }
            memcpy(order, s->order, sizeof(int) * (size_t)n);
        }
    }
    if (s->multi) {
        int netep = tg_net_ep(s->g, k);
        if (!take(s, netep, a, se)) { restore(s); return 0; }
        if (pat == TT_PATTERN_BALANCED_TREE && b >= 0) {
            if (!take(s, a, netep, se / 2) || !take(s, b, netep, se / 2)) { restore(s); return 0; }
            note_type(s, b, netep, 1);
        } else if (!take(s, a, netep, se)) {
            restore(s);
            return 0;
        }
        note_type(s, netep, a, 1);
        note_type(s, a, netep, 1);
    }
    for (int i = 0; i + 1 < m; i++) note_type(s, order[i], order[i + 1], 0);
    return 1;
}

static int count_ring(search *s, double sp, int maxch)
{
    tg_reset(s->g);
    s->worst_intra = TT_PATH_LOC;
    s->worst_inter = TT_PATH_LOC;
    int nc = 0;
    s->lvl_from = 0;
    for (s->fresh = 1; nc < maxch && ring_channel(s, nc, sp); s->fresh = 0) nc++;
    return nc;
}

static int count_tree(search *s, double si, double se, tt_pattern pat, int maxch)
{
    tg_reset(s->g);
    s->worst_intra = TT_PATH_LOC;
    s->worst_inter = TT_PATH_LOC;
    int nc = 0;
    s->lvl_from = 0;
    for (s->fresh = 1; nc < maxch && tree_channel(s, nc, si, se, pat); s->fresh = 0) nc++;
    return nc;
}

static void finish_types(search *s, tt_graph_info *gi)
{
    gi->type_intra = s->ngpu > 1 ? s->worst_intra : TT_PATH_LOC;
    gi->type_inter = s->multi ? s->worst_inter : TT_PATH_PIX;
}

static int dup_ok(const tt_graph_info *gi, int ccmin)
{
    if (gi->bw_intra < 25) return 0;
    if (ccmin > 80 && gi->bw_intra < 50 && gi->nchannels > 4) return 0;
    return 1;
}

static void search_ring(search *s, const tt_cluster *c, double maxbw, double totalbw,
                        tt_graph_info *gi)
{
    int nsp;
    const double *sp = tt_speed_table(c->min_sm, s->multi, &nsp);
    int maxch = MAXCHANNELS / 2;
    memset(gi, 0, sizeof(*gi));
    gi->pattern = TT_PATTERN_RING;
    int start = 0;
    while (start < nsp - 1 && (sp[start] > maxbw + EPS || sp[start] > totalbw + EPS)) start++;
    int best_nc = 0;
    double best_sp = 0;
    tt_path_type bti = TT_PATH_LOC, bte = TT_PATH_LOC;
    for (int i = start; i < nsp; i++) {
        if (best_nc > 0 && sp[i] / best_sp <= 0.49) break;
        int nc = count_ring(s, sp[i], maxch);
        if (nc > 0 && nc * sp[i] > best_nc * best_sp + EPS) {
            best_nc = nc;
            best_sp = sp[i];
            bti = s->worst_intra;
            bte = s->worst_inter;
        }
        if (best_nc >= maxch || (best_nc > 0 && best_nc * best_sp + EPS >= totalbw)) break;
    }
    if (best_nc == 0) {
        /* NCCL's fallback: one channel, bw 0.1, SYS */
        gi->found = 1;
        gi->nchannels = 1;
        gi->bw_intra = gi->bw_inter = 0.1;
        gi->type_intra = TT_PATH_SYS;
        gi->type_inter = s->multi ? TT_PATH_SYS : TT_PATH_PIX;
        gi->same_channels = 0;
        return;
    }
    gi->found = 1;
    gi->nchannels = best_nc;
    gi->bw_intra = gi->bw_inter = best_sp;
    s->worst_intra = bti;
    s->worst_inter = bte;
    finish_types(s, gi);
    gi->same_channels = s->multi ? (s->nnet <= 1) : 1;
    /* pass 2 */
    if (dup_ok(gi, c->min_sm) && gi->nchannels * 2 <= maxch) {
        gi->nchannels *= 2;
        gi->bw_intra /= 2;
        gi->bw_inter /= 2;
    }
    for (int i = nsp - 1; i >= 0; i--) {
        if (sp[i] <= gi->bw_intra + EPS) continue;
        if (count_ring(s, sp[i], gi->nchannels) >= gi->nchannels) {
            gi->bw_intra = gi->bw_inter = sp[i];
            finish_types(s, gi);
        } else {
            break;
        }
    }
}

static tt_pattern tree_pattern(search *s, const tt_cluster *c)
{
    if (!s->multi || s->ngpu < 2) return TT_PATTERN_BALANCED_TREE;
    /* balanced needs a second GPU at the same class as the first for every NIC used */
    for (int k = 0; k < s->nnet; k++) {
        int a = best_gpu_for_net(s, k, -1);
        int b = best_gpu_for_net(s, k, a);
        if (a < 0 || b < 0) continue;
        tt_path_type ta = s->g->ptype[a * s->g->nend + tg_net_ep(s->g, k)];
        tt_path_type tb = s->g->ptype[b * s->g->nend + tg_net_ep(s->g, k)];
        if (tb > ta) return c->min_sm >= 90 ? TT_PATTERN_TREE : TT_PATTERN_BALANCED_TREE;
    }
    return TT_PATTERN_BALANCED_TREE;
}

static void search_tree(search *s, const tt_cluster *c, double maxbw, double totalbw, int nch,
                        tt_graph_info *gi)
{
    int nsp;
    const double *sp = tt_speed_table(c->min_sm, s->multi, &nsp);
    memset(gi, 0, sizeof(*gi));
    if (s->ngpu < 2 && !s->multi) return;
    tt_pattern pat = tree_pattern(s, c);
    double tb = s->ngpu > 1 ? totalbw * s->ngpu / (s->ngpu - 1) : totalbw;
    int start = 0;
    while (start < nsp - 1 && (sp[start] > maxbw + EPS || sp[start] * nch > tb + EPS)) start++;
    int found = -1;
    for (int i = start; i < nsp; i++) {
        if (count_tree(s, sp[i], sp[i], pat, nch) >= nch) { found = i; break; }
    }
    gi->pattern = pat;
    if (found < 0) {
        gi->found = 1;
        gi->nchannels = 1;
        gi->bw_intra = gi->bw_inter = 0.1;
        gi->type_intra = TT_PATH_SYS;
        gi->type_inter = s->multi ? TT_PATH_SYS : TT_PATH_PIX;
        return;
    }
    gi->found = 1;
    gi->nchannels = nch;
    gi->bw_intra = gi->bw_inter = sp[found];
    finish_types(s, gi);
    gi->same_channels = s->multi ? (s->nnet <= 1) : 1;
    if (dup_ok(gi, c->min_sm) && gi->nchannels * 2 <= MAXCHANNELS / 2) {
        gi->nchannels *= 2;
        gi->bw_intra /= 2;
        gi->bw_inter /= 2;
    }
    /* raise bwIntra up to 2*bwInter at a fixed channel count */
    for (int i = nsp - 1; i >= 0; i--) {
        if (sp[i] <= gi->bw_intra + EPS) continue;
        if (sp[i] > 2 * gi->bw_inter + EPS) break;
        if (count_tree(s, sp[i], gi->bw_inter, pat, gi->nchannels) >= gi->nchannels) {
            gi->bw_intra = sp[i];
            finish_types(s, gi);
        } else {
            break;
        }
    }
}

/* NVLS: k heads each loading (k+1)*speed on a GPU's NVSwitch link. */
static void search_nvls(search *s, const tt_cluster *c, double nvs_cap, double netpath,
                        tt_graph_info *gi)
{
    int nsp;
    const double *sp = tt_speed_table(c->min_sm, s->multi, &nsp);
    memset(gi, 0, sizeof(*gi));
    int maxch = s->ngpu < 32 ? s->ngpu : 32;
    if (s->multi && s->nnet < maxch) maxch = s->nnet;
    if (maxch < 1) return;
    double maxbw = s->multi ? netpath : nvs_cap;
    int best = 0;
    double bsp = 0;
    for (int i = 0; i < nsp; i++) {
        if (sp[i] > maxbw + EPS) continue;
        if (best > 0 && sp[i] / bsp <= 0.49) break;
        int k = (int)floor(nvs_cap / sp[i] + EPS) - 1;
        if (k > maxch) k = maxch;
        if (k < 1) continue;
        if (k > best || (k == best && k * sp[i] > best * bsp + EPS)) { best = k; bsp = sp[i]; }
        if (best >= maxch) break;
    }
    if (best == 0) return;
    gi->found = 1;
    gi->pattern = TT_PATTERN_NVLS;
    gi->nchannels = best;
    gi->bw_intra = gi->bw_inter = bsp;
    gi->type_intra = TT_PATH_NVL;
    gi->type_inter = s->multi ? TT_PATH_PIX : TT_PATH_PIX;
    /* pass 2: raise bwInter (bounded by the NIC path on several nodes) */
    for (int i = nsp - 1; i >= 0; i--) {
        if (sp[i] <= gi->bw_inter + EPS) continue;
        if (s->multi && sp[i] > netpath + EPS) break;
        gi->bw_inter = sp[i];
    }
}

tt_status tt_tune_channels_compute(const tt_topo *t, const tt_cluster *c, tt_tune_channels *out)
{
    memset(out, 0, sizeof(*out));
    tt_status st = tt_cluster_validate(c);
    if (st != TT_OK) return st;
    tg_graph g;
    st = tg_build(t, c, &g);
    if (st != TT_OK) return st;
    search s = {0};
    s.g = &g;
    s.multi = c->nodes > 1;
    s.ngpu = g.ngpu;
    s.nnet = g.nnet;
    s.save = calloc((size_t)g.ne + 1, sizeof(double));
    s.order = calloc((size_t)g.ngpu + 1, sizeof(int));
    s.visited = calloc((size_t)g.ngpu + 1, 1);
    s.cand = calloc((size_t)g.ngpu * (size_t)g.ngpu + 1, sizeof(int));
    s.levels = calloc(TT_PATH_DIS + 1, sizeof(tt_path_type));
    if (!s.save || !s.order || !s.visited || !s.cand || !s.levels) {
        free(s.save); free(s.order); free(s.visited); free(s.cand); free(s.levels);
        tg_free(&g);
        return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
    }
    /* path-class levels of the search: the classes found between GPUs, ascending */
    for (int lv = TT_PATH_LOC; lv < TT_PATH_DIS; lv++) {
        int seen = 0;
        for (int i = 0; i < g.ngpu && !seen; i++)
            for (int j = 0; j < g.ngpu && !seen; j++)
                if (i != j && g.route[i * g.nend + j] && (int)g.ptype[i * g.nend + j] == lv) seen = 1;
        if (seen) s.levels[s.nlevels++] = (tt_path_type)lv;
    }
    if (s.nlevels == 0) s.levels[s.nlevels++] = TT_PATH_SYS;
    for (int m = 0; m < 3; m++)
        for (int l = 0; l <= TT_PATH_DIS; l++) s.fail_sp[m][l] = 1e30;

    /* totalBw: max over GPUs of max(PCI link, sum NVLink); NVSwitch link capacity */
    double total = 0, nvs_cap = 1e30, nvl_gpu = 0;
    int have_nvs = 0;
    for (int i = 0; i < g.ngpu; i++) {
        double nv = 0, pci = 0, nvs = 0;
        for (int k = g.adj_start[g.gpu[i]]; k < g.adj_start[g.gpu[i] + 1]; k++) {
            const tg_edge *e = &g.e[g.adj[k]];
            if (e->type == TT_LINK_NVL) {
                nv += e->bw;
                if (g.type[e->to] == TT_NODE_NVS) nvs += e->bw;
            }
            if (e->type == TT_LINK_PCI && e->bw > pci) pci = e->bw;
        }
        double m = nv > pci ? nv : pci;
        if (m > total) total = m;
        if (nvs > 0) have_nvs = 1;
        if (nvs < nvs_cap) nvs_cap = nvs;
        if (i == 0 || nv < nvl_gpu) nvl_gpu = nv;
    }
    if (!have_nvs) nvs_cap = 0;
    out->total_bw = total;
    out->gpu_nvl_bw = nvl_gpu;
    /* maxBw: best path bw GPU->GPU (one node) or GPU->NET */
    double maxbw = 0, netpath = 0;
    for (int i = 0; i < g.ngpu; i++) {
        if (!s.multi) {
            for (int j = 0; j < g.ngpu; j++)
                if (i != j && g.route[i * g.nend + j] && g.pbw[i * g.nend + j] > maxbw)
                    maxbw = g.pbw[i * g.nend + j];
        } else {
            for (int k = 0; k < g.nnet; k++) {
                int idx = i * g.nend + tg_net_ep(&g, k);
                if (g.route[idx] && g.pbw[idx] > maxbw) maxbw = g.pbw[idx];
            }
        }
    }
    if (s.multi) netpath = maxbw;
    if (!s.multi && g.ngpu == 1) maxbw = TT_LOC_BW;
    out->max_bw = maxbw;
    if (total <= 0) total = maxbw;
    if (s.multi) {
        double sum = 0;
        for (int k = 0; k < g.nnet; k++) {
            double best = 0;
            for (int i = 0; i < g.ngpu; i++) {
                int idx = i * g.nend + tg_net_ep(&g, k);
                if (g.route[idx] && g.pbw[idx] > best) best = g.pbw[idx];
            }
            sum += best;
        }
        out->node_net_bw = sum;
    }

    if (!s.multi && g.ngpu == 1) {
        out->ring.found = 1;
        out->ring.nchannels = 1;
        out->ring.bw_intra = out->ring.bw_inter = TT_LOC_BW;
        out->ring.type_intra = TT_PATH_LOC;
        out->ring.type_inter = TT_PATH_PIX;
        out->ring.pattern = TT_PATTERN_RING;
        out->ring.same_channels = 1;
    } else {
        search_ring(&s, c, maxbw, total, &out->ring);
        search_tree(&s, c, maxbw, total, out->ring.nchannels, &out->tree);
    }
    out->nvls_support = have_nvs && c->min_sm >= 90 && g.ngpu >= 2;
    if (out->nvls_support) search_nvls(&s, c, nvs_cap, netpath, &out->nvls);
    if (!out->nvls.found) out->nvls_support = 0;

    /* runtime channels (ncclTopoPostset): 2 * min(ring, tree), <= 64; SM90 multi-node
     * doubles again when ring.bwIntra > 45 and fewer than 16 */
    int n = out->ring.nchannels;
    if (out->tree.found && out->tree.nchannels < n) n = out->tree.nchannels;
    n = n * 2 > MAXCHANNELS ? MAXCHANNELS : n * 2;
    if (c->min_sm >= 90 && s.multi && out->ring.bw_intra > 45 && n < 16)
        n = n * 2 > MAXCHANNELS ? MAXCHANNELS : n * 2;
    out->comm_channels = n;
    out->nvls_channels = c->min_sm >= 100 ? (s.multi ? 32 : 24) : 16;
    TT_INFO("tune", "channels: ring %d x %.2f/%.2f (%s/%s), tree %d x %.2f/%.2f pattern %d, nvls %d x %.2f/%.2f, comm %d",
            out->ring.nchannels, out->ring.bw_intra, out->ring.bw_inter,
            tune_path_name(out->ring.type_intra), tune_path_name(out->ring.type_inter),
            out->tree.nchannels, out->tree.bw_intra, out->tree.bw_inter, out->tree.pattern,
            out->nvls.nchannels, out->nvls.bw_intra, out->nvls.bw_inter, out->comm_channels);
    free(s.save);
    free(s.order);
    free(s.visited);
    free(s.cand);
    free(s.levels);
    tg_free(&g);
    return TT_OK;
}
