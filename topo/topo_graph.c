/*
 * topo_graph.c - the graph container: nodes, links, lookups, freeing.
 */
#include "tt_topo.h"
#include "topo_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void tt_topo_options_default(tt_topo_options *o)
{
    if (!o)
        return;
    o->p2p_level = TT_PATH_PXB; /* NCCL_P2P_LEVEL default */
    o->gdr_level = TT_PATH_PXB; /* NCCL_NET_GDR_LEVEL default without C2C */
    o->pxn = 1;                 /* NCCL_PXN_DISABLE=0 */
    o->nvb = 1;                 /* NCCL_NVB_DISABLE=0 */
    o->gpu_part = NULL;         /* $TOPOTUNE_GPU_PART */
}

tt_status tt_topo__add_node(tt_topo *t, tt_node_type type, int *index)
{
    tt_node *n;
    if ((int)type < 0 || type >= TT_NODE_NTYPES)
        return tt_error_set(TT_ERR_INTERNAL, "bad node type %d", (int)type);
    if (t->ntype[type] >= TT_TOPO_MAX_TYPE_NODES)
        return tt_error_set(TT_ERR_LIMIT, "more than %d %s nodes", TT_TOPO_MAX_TYPE_NODES,
                            tt_node_type_name(type));
    if (t->nnodes == t->cap_nodes) {
        int cap = t->cap_nodes ? t->cap_nodes * 2 : 32;
        tt_node *nn = realloc(t->nodes, (size_t)cap * sizeof *nn);
        if (!nn)
            return tt_error_set(TT_ERR_NOMEM, "out of memory adding a topology node");
        t->nodes = nn;
        t->cap_nodes = cap;
    }
    n = &t->nodes[t->nnodes];
    memset(n, 0, sizeof *n);
    n->type = type;
    n->id = t->ntype[type]++;
    n->host = -1;
    *index = t->nnodes++;
    return TT_OK;
}

tt_link *tt_topo__find_link(const tt_topo *t, int a, int b, tt_link_type type)
{
    const tt_node *n = &t->nodes[a];
    for (int i = 0; i < n->nlinks; i++)
        if (n->links[i].peer == b && n->links[i].type == type)
            return &n->links[i];
    return NULL;
}

tt_status tt_topo__link_one(tt_topo *t, int a, int b, tt_link_type type, double bw, int xgmi)
{
    tt_node *n = &t->nodes[a];
    tt_link *l = tt_topo__find_link(t, a, b, type);
    if (l) {
        l->bw += bw; /* repeated links of one type to one peer add up (as NCCL) */
        l->xgmi |= xgmi;
        return TT_OK;
    }
    if (n->nlinks == n->cap_links) {
        int cap = n->cap_links ? n->cap_links * 2 : 4;
        tt_link *nl = realloc(n->links, (size_t)cap * sizeof *nl);
        if (!nl)
            return tt_error_set(TT_ERR_NOMEM, "out of memory adding a topology link");
        n->links = nl;
        n->cap_links = cap;
    }
    l = &n->links[n->nlinks++];
    l->type = type;
    l->peer = b;
    l->bw = bw;
    l->xgmi = xgmi;
    return TT_OK;
}

tt_status tt_topo__link(tt_topo *t, int a, int b, tt_link_type type, double bw, int xgmi)
{
    tt_status st = tt_topo__link_one(t, a, b, type, bw, xgmi);
    if (st != TT_OK)
        return st;
    return tt_topo__link_one(t, b, a, type, bw, xgmi);
}

tt_status tt_topo__remove_nodes(tt_topo *t, const unsigned char *remove, int *map_out)
{
    int *map = map_out ? map_out : malloc((size_t)(t->nnodes ? t->nnodes : 1) * sizeof *map);
    int n = 0;
    if (!map)
        return tt_error_set(TT_ERR_NOMEM, "out of memory removing topology nodes");
    if (t->paths)
        tt_topo__free_paths(t);
    for (int i = 0; i < t->nnodes; i++)
        map[i] = remove[i] ? -1 : n++;
    memset(t->ntype, 0, sizeof t->ntype);
    for (int i = 0; i < t->nnodes; i++) {
        tt_node *nd = &t->nodes[i];
        if (remove[i]) {
            free(nd->links);
            continue;
        }
        int k = 0;
        for (int j = 0; j < nd->nlinks; j++) {
            int p = map[nd->links[j].peer];
            if (p < 0)
                continue;
            nd->links[k] = nd->links[j];
            nd->links[k].peer = p;
            k++;
        }
        nd->nlinks = k;
        nd->id = t->ntype[nd->type]++;
        if (map[i] != i)
            t->nodes[map[i]] = *nd;
    }
    /* names that embed the per-type id are rebuilt */
    for (int i = 0; i < n; i++) {
        tt_node *nd = &t->nodes[i];
        if (nd->type == TT_NODE_GPU || nd->type == TT_NODE_CPU || nd->type == TT_NODE_NVS)
            snprintf(nd->name, sizeof nd->name, "%s%d", tt_node_type_name(nd->type), nd->id);
    }
    t->nnodes = n;
    if (!map_out)
        free(map);
    return TT_OK;
}

/* The path matrix is one block per source row; each row's routes are one allocation hung on its
 * diagonal entry (topo_paths.c). */
void tt_topo__free_paths(tt_topo *t)
{
    if (!t || !t->paths)
        return;
    for (int s = 0; s < t->nnodes; s++)
        free(t->paths[(size_t)s * (size_t)t->nnodes + (size_t)s].route);
    free(t->paths);
    t->paths = NULL;
}

void tt_topo_free(tt_topo *t)
{
    if (!t)
        return;
    tt_topo__free_paths(t);
    for (int i = 0; i < t->nnodes; i++)
        free(t->nodes[i].links);
    free(t->nodes);
    tt_findings_free(&t->assumed);
    free(t);
}

int tt_topo_node_index(const tt_topo *t, tt_node_type type, int id)
{
    if (!t)
        return -1;
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].type == type && t->nodes[i].id == id)
            return i;
    return -1;
}

int tt_topo__norm_busid(const char *in, char out[32])
{
    size_t len, ncolon = 0;
    if (!in)
        return 0;
    while (*in == ' ')
        in++;
    len = strlen(in);
    while (len && in[len - 1] == ' ')
        len--;
    if (len == 0 || len > 24)
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (!isxdigit((unsigned char)in[i]) && in[i] != ':' && in[i] != '.')
            return 0;
        if (in[i] == ':')
            ncolon++;
    }
    size_t o = 0;
    if (ncolon == 1) { /* "bb:dd.f": no PCI domain, use 0000 */
        memcpy(out, "0000:", 5);
        o = 5;
    }
    for (size_t i = 0; i < len; i++)
        out[o++] = (char)tolower((unsigned char)in[i]);
    out[o] = '\0';
    return 1;
}

int tt_topo_find_busid(const tt_topo *t, const char *busid)
{
    char key[32];
    if (!t || !tt_topo__norm_busid(busid, key))
        return -1;
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].busid[0] && strcasecmp(t->nodes[i].busid, key) == 0)
            return i;
    return -1;
}

int tt_topo_find_net(const tt_topo *t, const char *name)
{
    if (!t || !name)
        return -1;
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].type == TT_NODE_NET && strcmp(t->nodes[i].u.net.name, name) == 0)
            return i;
    return -1;
}

const tt_path *tt_topo_path(const tt_topo *t, int from, int to)
{
    if (!t || !t->paths || from < 0 || to < 0 || from >= t->nnodes || to >= t->nnodes)
        return NULL;
    return &t->paths[(size_t)from * (size_t)t->nnodes + (size_t)to];
}

/* Before paths exist: the CPU fewest links away, not crossing another GPU. */
static int local_cpu_by_hops(const tt_topo *t, int i)
{
    int *queue = malloc((size_t)t->nnodes * sizeof *queue);
    unsigned char *seen = calloc((size_t)t->nnodes, 1);
    int head = 0, tail = 0, found = -1;
    if (!queue || !seen)
        goto out;
    queue[tail++] = i;
    seen[i] = 1;
    while (head < tail && found < 0) {
        int u = queue[head++];
        if (t->nodes[u].type == TT_NODE_CPU) {
            found = u;
            break;
        }
        if (u != i && t->nodes[u].type == TT_NODE_GPU)
            continue;
        for (int k = 0; k < t->nodes[u].nlinks; k++) {
            int v = t->nodes[u].links[k].peer;
            if (v >= 0 && v < t->nnodes && !seen[v]) {
                seen[v] = 1;
                queue[tail++] = v;
            }
        }
    }
out:
    free(queue);
    free(seen);
    return found;
}

int tt_topo_local_cpu(const tt_topo *t, int i)
{
    int best = -1;
    if (!t || i < 0 || i >= t->nnodes)
        return -1;
    if (t->nodes[i].type == TT_NODE_CPU)
        return i;
    if (!t->paths)
        return local_cpu_by_hops(t, i);
    for (int c = 0; c < t->nnodes; c++) {
        if (t->nodes[c].type != TT_NODE_CPU)
            continue;
        const tt_path *p = tt_topo_path(t, i, c);
        if (p->nhops < 0)
            continue;
        if (best < 0) {
            best = c;
            continue;
        }
        const tt_path *b = tt_topo_path(t, i, best);
        if (p->type < b->type || (p->type == b->type && p->bw > b->bw * (1 + 1e-9)) ||
            (p->type == b->type && p->bw >= b->bw * (1 - 1e-9) && p->nhops < b->nhops))
            best = c;
    }
    return best;
}
