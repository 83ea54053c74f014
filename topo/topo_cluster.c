/*
 * topo_cluster.c - per-host topology files of one cluster: loading (one file per host
 * or a merged <cluster> file), host signatures, differences from the majority, merging.
 */
#include "tt_topo.h"
#include "topo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A merged file holds every host: larger than one node's file. */
#define CLUSTER_MAX_BYTES (256u << 20)
#define CLUSTER_MAX_NODES 4000000

void tt_hostset_init(tt_hostset *s) { memset(s, 0, sizeof *s); }

void tt_hostset_free(tt_hostset *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        tt_topo_free(s->hosts[i].topo);
        tt_xml_doc_free(s->hosts[i].model_doc);
        tt_xml_doc_free(s->hosts[i].doc);
    }
    free(s->hosts);
    memset(s, 0, sizeof *s);
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* A NET port that carries nothing: state recorded and not ACTIVE / up / unknown. */
static int net_is_down(const tt_xml_node *net)
{
    const char *st = tt_xml_get(net, TT_ATTR_STATE);
    if (!st || !*st) return 0;
    return strcasecmp(st, "ACTIVE") && strcasecmp(st, "up") && strcasecmp(st, "unknown");
}

static void drop_down_nets(tt_host_topo *h, tt_xml_node *top)
{
    tt_xml_node *cur = top;
    while (cur) {
        tt_xml_node *next = tt_xml_walk_next(top, cur);
        if (cur->name && !strcmp(cur->name, TT_ELEM_NET) && net_is_down(cur)) {
            /* skip the subtree of the removed element */
            while (next && tt_xml_depth(next) > tt_xml_depth(cur)) next = tt_xml_walk_next(top, next);
            const char *nm = tt_xml_get(cur, TT_ATTR_NAME);
            size_t l = strlen(h->down_names);
            snprintf(h->down_names + l, sizeof h->down_names - l, "%s%s", l ? "," : "", nm ? nm : "?");
            h->down++;
            tt_xml_detach(cur);
            tt_xml_node_free(cur);
        }
        cur = next;
    }
}

/* Takes ownership of doc (freed on error). */
static tt_status add_host(tt_hostset *s, tt_xml_doc *doc, const char *name, const char *source)
{
    tt_status st;
    if (s->n >= TT_HOSTSET_MAX) {
        tt_xml_doc_free(doc);
        return tt_error_set(TT_ERR_LIMIT, "%s: more than %d hosts in one cluster", source, TT_HOSTSET_MAX);
    }
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 8;
        tt_host_topo *p = realloc(s->hosts, (size_t)nc * sizeof *p);
        if (!p) {
            tt_xml_doc_free(doc);
            return tt_error_set(TT_ERR_NOMEM, "out of memory loading %s", source);
        }
        s->hosts = p;
        s->cap = nc;
    }
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->hosts[i].name, name)) {
            tt_xml_doc_free(doc);
            return tt_error_set(TT_ERR_INVALID, "%s: host '%s' is given twice (first from %s)", source, name,
                                s->hosts[i].source);
        }
    tt_host_topo *h = &s->hosts[s->n];
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "%s", name);
    snprintf(h->source, sizeof h->source, "%s", source);
    h->doc = doc;
    h->model_doc = tt_xml_doc_new(NULL, doc->source);
    if (!h->model_doc || !(h->model_doc->root = tt_xml_clone(doc->root))) {
        tt_xml_doc_free(h->model_doc);
        tt_xml_doc_free(doc);
        return tt_error_set(TT_ERR_NOMEM, "out of memory loading %s", source);
    }
    drop_down_nets(h, h->model_doc->root);
    if ((st = tt_topo_from_xml(h->model_doc, s->opts, &h->topo)) != TT_OK) {
        tt_xml_doc_free(h->model_doc);
        tt_xml_doc_free(doc);
        return tt_error_prefix(st, "host %s", name);
    }
    h->gpus = h->topo->ntype[TT_NODE_GPU];
    if (h->gpus == 0) {
        tt_topo_free(h->topo);
        tt_xml_doc_free(h->model_doc);
        tt_xml_doc_free(doc);
        return tt_error_set(TT_ERR_INVALID, "%s: host %s has no GPU; is it a compute node's file?", source, name);
    }
    if ((st = tt_topo_check_one_vendor(h->topo)) != TT_OK) {
        tt_topo_free(h->topo);
        tt_xml_doc_free(h->model_doc);
        tt_xml_doc_free(doc);
        return tt_error_prefix(st, "host %s", name);
    }
    for (int i = 0; i < h->topo->nnodes && !h->vendor[0]; i++) {
        const tt_node *g = &h->topo->nodes[i];
        char why[128];
        if (g->type != TT_NODE_GPU) continue;
        snprintf(h->vendor, sizeof h->vendor, "%s", tt_topo_gpu_vendor(g, why, sizeof why));
        snprintf(h->vendor_why, sizeof h->vendor_why, "%.200s:%d: GPU %.32s: %.120s", h->topo->source, g->xml ? g->xml->line : 0,
                 g->busid, why);
    }
    s->n++;
    return TT_OK;
}

tt_status tt_hostset_add_file(tt_hostset *s, const char *path)
{
    tt_xml_limits lim;
    tt_xml_doc *doc = NULL;
    tt_status st;
    tt_xml_limits_default(&lim);
    lim.max_bytes = CLUSTER_MAX_BYTES;
    lim.max_nodes = CLUSTER_MAX_NODES;
    if ((st = tt_xml_read_file(path, &lim, &doc)) != TT_OK) return st;
    if (doc->root && !strcmp(doc->root->name, TT_ELEM_HWLOC_ROOT)) { /* an hwloc export: one host */
        tt_xml_doc_free(doc);
        doc = NULL;
        if ((st = tt_topo_read_file(path, &doc, NULL)) != TT_OK) return st;
    }
    const tt_xml_node *root = doc->root;
    if (root && !strcmp(root->name, TT_ELEM_SYSTEM)) {
        char nm[128];
        snprintf(nm, sizeof nm, "%s", base_name(path));
        return add_host(s, doc, nm, path);
    }
    if (!root || strcmp(root->name, TT_ELEM_CLUSTER)) {
        st = tt_error_set(TT_ERR_INVALID, "%s:%d: root element is <%s>, expected <system> (one host) or <cluster>%s",
                          path, root ? root->line : 0, root && root->name ? root->name : "?",
                          tt_topo__root_note(root ? root->name : NULL));
        tt_xml_doc_free(doc);
        return st;
    }
    int nsys = 0;
    st = TT_OK;
    while (st == TT_OK && root->nchildren > 0) {
        tt_xml_node *c = root->children[0];
        tt_xml_detach(c);
        if (strcmp(c->name, TT_ELEM_SYSTEM)) {
            st = tt_error_set(TT_ERR_INVALID, "%s:%d: <%s> inside <cluster>; expected <system host=\"...\">", path,
                              c->line, c->name);
            tt_xml_node_free(c);
            break;
        }
        const char *host = tt_xml_get(c, TT_ATTR_HOST);
        char nm[128], src[320];
        snprintf(src, sizeof src, "%s:%d", path, c->line);
        if (host && *host) snprintf(nm, sizeof nm, "%s", host);
        else snprintf(nm, sizeof nm, "%s#%d", base_name(path), nsys + 1);
        tt_xml_doc *hd = tt_xml_doc_new(NULL, path);
        if (!hd) {
            tt_xml_node_free(c);
            st = tt_error_set(TT_ERR_NOMEM, "out of memory reading %s", path);
            break;
        }
        hd->root = c;
        st = add_host(s, hd, nm, src);
        nsys++;
    }
    if (st == TT_OK && nsys == 0)
        st = tt_error_set(TT_ERR_INVALID, "%s:%d: <cluster> holds no <system>", path, root->line);
    tt_xml_doc_free(doc);
    return st;
}

/* ---------------------------------------------------------------- signatures */

typedef struct {
    char pre[80], post[24]; /* what is said: pre + value + post ("GPU 3 PCIe link " "x8" "") */
    char value[80];
} sig_item;

typedef struct {
    sig_item *it;
    int n, cap;
} sig;

static int sig_add(sig *g, const char *pre, const char *value, const char *post)
{
    if (g->n == g->cap) {
        int nc = g->cap ? g->cap * 2 : 32;
        sig_item *p = realloc(g->it, (size_t)nc * sizeof *p);
        if (!p) return -1;
        g->it = p;
        g->cap = nc;
    }
    sig_item *it = &g->it[g->n++];
    snprintf(it->pre, sizeof it->pre, "%s", pre);
    snprintf(it->post, sizeof it->post, "%s", post);
    snprintf(it->value, sizeof it->value, "%s", value);
    return 0;
}

static void pci_link(const tt_xml_node *pci, char *buf, size_t n)
{
    const char *sp = pci ? tt_xml_get(pci, TT_ATTR_LINK_SPEED) : NULL;
    const char *w = pci ? tt_xml_get(pci, TT_ATTR_LINK_WIDTH) : NULL;
    snprintf(buf, n, "%s x%s", sp && *sp ? sp : "(speed not recorded)", w && *w ? w : "?");
}

static int links_count(const tt_xml_node *gx, const char *elem)
{
    int total = 0;
    for (const tt_xml_node *l = tt_xml_first_child(gx, elem); l; l = tt_xml_next_sibling(l, elem)) {
        const char *c = tt_xml_get(l, "count");
        total += c ? atoi(c) : 1;
    }
    return total;
}

/* A NIC known by PCI class alone: class 0x02xxxx, no <nic> (nor <gpu>) child */
static int class_only_nic(const tt_xml_node *pci)
{
    const char *cls = tt_xml_get(pci, TT_ATTR_CLASS);
    return cls && !strncasecmp(cls, "0x02", 4) && !tt_xml_first_child(pci, TT_ELEM_NIC) &&
           !tt_xml_first_child(pci, TT_ELEM_GPU);
}

static tt_status host_sig(const tt_host_topo *h, sig *g)
{
    const tt_topo *t = h->topo;
    char v[80], pre[80];
    int rc = 0;
    snprintf(v, sizeof v, "%d", h->gpus);
    rc |= sig_add(g, "", v, " GPUs");
    for (int i = 0; i < t->nnodes; i++) {
        const tt_node *n = &t->nodes[i];
        if (n->type != TT_NODE_GPU) continue;
        const tt_xml_node *pci = n->xml, *gx = pci ? tt_xml_first_child(pci, TT_ELEM_GPU) : NULL;
        const char *dev = pci ? tt_xml_get(pci, TT_ATTR_DEVICE) : NULL;
        if (n->u.gpu.sm > 0 || dev)
            snprintf(v, sizeof v, "%s%ssm%d%s%s", h->vendor, h->vendor[0] ? " " : "", n->u.gpu.sm, dev ? " device " : "",
                     dev ? dev : "");
        else
            snprintf(v, sizeof v, "(model not recorded)");
        snprintf(pre, sizeof pre, "GPU %d model ", n->id);
        rc |= sig_add(g, pre, v, "");
        pci_link(pci, v, sizeof v);
        snprintf(pre, sizeof pre, "GPU %d PCIe link ", n->id);
        rc |= sig_add(g, pre, v, "");
        snprintf(v, sizeof v, "%d", gx ? links_count(gx, TT_ELEM_NVLINK) + links_count(gx, TT_ELEM_XGMI) : 0);
        snprintf(pre, sizeof pre, "GPU %d NVLinks ", n->id);
        rc |= sig_add(g, pre, v, "");
    }
    /* NET ports as recorded (down ones included), from the host's own doc */
    int nports = 0;
    for (const tt_xml_node *x = h->doc->root; x; x = tt_xml_walk_next(h->doc->root, x)) {
        if (!x->name || strcmp(x->name, TT_ELEM_NET)) continue;
        nports++;
        const char *nm = tt_xml_get(x, TT_ATTR_NAME), *sp = tt_xml_get(x, TT_ATTR_SPEED),
                   *st = tt_xml_get(x, TT_ATTR_STATE);
        char name[64];
        snprintf(name, sizeof name, "%s", nm && *nm ? nm : "(unnamed)");
        snprintf(pre, sizeof pre, "NIC %s ", name);
        rc |= sig_add(g, pre, "present", "");
        snprintf(v, sizeof v, "%s Mb/s", sp && *sp ? sp : "(not recorded)");
        snprintf(pre, sizeof pre, "NIC %s speed ", name);
        rc |= sig_add(g, pre, v, "");
        snprintf(pre, sizeof pre, "NIC %s state ", name);
        rc |= sig_add(g, pre, st && *st ? st : "(not recorded)", "");
        const tt_xml_node *p = x->parent;
        while (p && strcmp(p->name, TT_ELEM_PCI) && strcmp(p->name, TT_ELEM_CPU)) p = p->parent;
        if (p && !strcmp(p->name, TT_ELEM_PCI)) {
            pci_link(p, v, sizeof v);
            snprintf(pre, sizeof pre, "NIC %s PCIe link ", name);
            rc |= sig_add(g, pre, v, "");
        }
    }
    /* NICs known by PCI class alone (class 0x02xxxx, no <nic>): the builder gives each one port
     * named ib-BUSID / eth-BUSID (docs/xml-schema.md "Partial vendor files"); the same names here */
    for (const tt_xml_node *x = h->doc->root; x; x = tt_xml_walk_next(h->doc->root, x)) {
        if (!x->name || strcmp(x->name, TT_ELEM_PCI) || !class_only_nic(x)) continue;
        const char *cls = tt_xml_get(x, TT_ATTR_CLASS), *bus = tt_xml_get(x, TT_ATTR_BUSID);
        char name[64];
        nports++;
        snprintf(name, sizeof name, "%s-%s", !strncasecmp(cls, "0x0207", 6) ? "ib" : "eth",
                 bus && *bus ? bus : "(no busid)");
        snprintf(pre, sizeof pre, "NIC %s ", name);
        rc |= sig_add(g, pre, "present", "");
        pci_link(x, v, sizeof v);
        snprintf(pre, sizeof pre, "NIC %s PCIe link ", name);
        rc |= sig_add(g, pre, v, "");
    }
    snprintf(v, sizeof v, "%d", nports);
    rc |= sig_add(g, "", v, " NIC ports");
    return rc ? tt_error_set(TT_ERR_NOMEM, "out of memory comparing hosts") : TT_OK;
}

static const char *sig_find(const sig *g, const sig_item *key)
{
    for (int i = 0; i < g->n; i++)
        if (!strcmp(g->it[i].pre, key->pre) && !strcmp(g->it[i].post, key->post)) return g->it[i].value;
    return NULL;
}

tt_status tt_hostset_compare(const tt_hostset *s, tt_findings *out)
{
    if (!s || !out) return tt_error_set(TT_ERR_INVALID, "tt_hostset_compare: NULL argument");
    for (int i = 1; i < s->n; i++)
        for (int j = 0; j < i; j++)
            if (s->hosts[i].vendor[0] && s->hosts[j].vendor[0] && strcmp(s->hosts[i].vendor, s->hosts[j].vendor))
                return tt_error_set(TT_ERR_INVALID,
                                    "%s: host %s has %s GPUs (%s) but %s (host %s) has %s GPUs (%s); NCCL and RCCL "
                                    "cannot form one communicator across vendors: tune them as two clusters",
                                    s->hosts[i].source, s->hosts[i].name, s->hosts[i].vendor, s->hosts[i].vendor_why,
                                    s->hosts[j].source, s->hosts[j].name, s->hosts[j].vendor, s->hosts[j].vendor_why);
    if (s->n < 2) return TT_OK;
    sig *g = calloc((size_t)s->n, sizeof *g);
    if (!g) return tt_error_set(TT_ERR_NOMEM, "out of memory comparing hosts");
    tt_status st = TT_OK;
    for (int i = 0; i < s->n && st == TT_OK; i++) st = host_sig(&s->hosts[i], &g[i]);
    const char **vals = st == TT_OK ? calloc((size_t)s->n, sizeof *vals) : NULL;
    int *said = st == TT_OK ? calloc((size_t)s->n, sizeof *said) : NULL; /* differences per host */
    if (st == TT_OK && (!vals || !said)) st = tt_error_set(TT_ERR_NOMEM, "out of memory comparing hosts");
    /* every label of every host, in order of first appearance */
    for (int hi = 0; hi < s->n && st == TT_OK; hi++) {
        for (int k = 0; k < g[hi].n && st == TT_OK; k++) {
            const sig_item *key = &g[hi].it[k];
            int seen = 0;
            for (int e = 0; e < hi && !seen; e++) seen = sig_find(&g[e], key) != NULL;
            if (seen) continue;
            for (int i = 0; i < s->n; i++) vals[i] = sig_find(&g[i], key);
            /* majority value (absent counts as a value); ties go to the first seen */
            int best = -1, bestc = 0;
            for (int i = 0; i < s->n; i++) {
                int c = 0;
                for (int j = 0; j < s->n; j++)
                    c += (vals[i] == NULL) ? vals[j] == NULL : (vals[j] && !strcmp(vals[i], vals[j]));
                if (c > bestc) { bestc = c; best = i; }
            }
            const char *maj = vals[best];
            int per_gpu = !strncmp(key->pre, "GPU ", 4);
            int presence = (maj && !strcmp(maj, "present")) || !strcmp(key->value, "present");
            for (int i = 0; i < s->n && st == TT_OK; i++) {
                const char *v = vals[i];
                if (v == maj || (v && maj && !strcmp(v, maj))) continue;
                /* an absent GPU is said by the GPU count, an absent NIC's details by its presence */
                if ((per_gpu || !presence) && (!v || !maj)) continue;
                if (++said[i] > TT_HOSTSET_MAX_SAID) continue; /* summed up below */
                char what[200], mq[120];
                snprintf(what, sizeof what, "%s%s%s", key->pre, v ? v : "absent", key->post);
                if (2 * bestc > s->n) snprintf(mq, sizeof mq, "majority %s", maj ? maj : "absent");
                else snprintf(mq, sizeof mq, "%s on %d of %d hosts", maj ? maj : "absent", bestc, s->n);
                st = tt_findings_add(out, TT_SEV_WARN, "host-differs", 0, s->hosts[i].name, "%s (%s)", what, mq);
            }
        }
    }
    for (int i = 0; i < s->n && st == TT_OK && said; i++)
        if (said[i] > TT_HOSTSET_MAX_SAID)
            st = tt_findings_add(out, TT_SEV_WARN, "host-differs", 0, s->hosts[i].name, "and %d more differences",
                                 said[i] - TT_HOSTSET_MAX_SAID);
    free(said);
    free(vals);
    for (int i = 0; i < s->n; i++) free(g[i].it);
    free(g);
    return st;
}

void tt_hostset_differing(const tt_hostset *s, const tt_findings *diffs, int *flags)
{
    for (int i = 0; i < s->n; i++) {
        flags[i] = 0;
        for (int k = 0; k < diffs->n && !flags[i]; k++)
            flags[i] = !strcmp(diffs->items[k].code, "host-differs") && !strcmp(diffs->items[k].where, s->hosts[i].name);
    }
}

tt_status tt_hostset_add_files(tt_hostset *s, const char *const *files, int n)
{
    tt_status st = TT_OK;
    for (int i = 0; i < n && st == TT_OK; i++) st = tt_hostset_add_file(s, files[i]);
    return st;
}

tt_status tt_hostset_count_differing(const tt_hostset *s, const tt_findings *diffs, int *ndiff)
{
    int *flags = calloc((size_t)s->n, sizeof *flags);
    *ndiff = 0;
    if (!flags) return tt_error_set(TT_ERR_NOMEM, "out of memory");
    tt_hostset_differing(s, diffs, flags);
    for (int i = 0; i < s->n; i++) *ndiff += flags[i];
    free(flags);
    return TT_OK;
}

/* ---------------------------------------------------------------- merge */

tt_status tt_hostset_merge_files(const char *const *files, int nfiles, tt_xml_doc **out)
{
    *out = NULL;
    if (nfiles < 1) return tt_error_set(TT_ERR_INVALID, "merge: no host file");
    tt_hostset hs;
    tt_hostset_init(&hs);
    tt_status st = TT_OK;
    for (int i = 0; i < nfiles && st == TT_OK; i++) {
        int before = hs.n;
        st = tt_hostset_add_file(&hs, files[i]);
        /* a one-host file is named after its base name without .xml (srun -o %h.xml) */
        if (st == TT_OK && hs.n == before + 1 && !strcmp(hs.hosts[before].source, files[i])) {
            const char *h = tt_xml_get(hs.hosts[before].doc->root, TT_ATTR_HOST);
            char *nm = hs.hosts[before].name;
            if (h && *h) snprintf(nm, sizeof hs.hosts[before].name, "%s", h);
            else {
                size_t l = strlen(nm);
                if (l > 4 && !strcasecmp(nm + l - 4, ".xml")) nm[l - 4] = '\0';
            }
            for (int j = 0; j < before && st == TT_OK; j++)
                if (!strcmp(hs.hosts[j].name, nm))
                    st = tt_error_set(TT_ERR_INVALID, "%s: host '%s' is given twice (first from %s)", files[i], nm,
                                      hs.hosts[j].source);
        }
    }
    tt_xml_doc *d = st == TT_OK ? tt_xml_doc_new(TT_ELEM_CLUSTER, "<merged cluster>") : NULL;
    if (st == TT_OK && !d) st = tt_error_set(TT_ERR_NOMEM, "out of memory merging");
    if (st == TT_OK) st = tt_xml_set(d->root, TT_ATTR_VERSION, "1");
    for (int i = 0; i < hs.n && st == TT_OK; i++) {
        tt_xml_node *sys = hs.hosts[i].doc->root;
        tt_xml_detach(sys);
        hs.hosts[i].doc->root = NULL;
        st = tt_xml_set(sys, TT_ATTR_HOST, hs.hosts[i].name);
        if (st == TT_OK) st = tt_xml_append(d->root, sys);
        else tt_xml_node_free(sys);
    }
    tt_hostset_free(&hs);
    if (st != TT_OK) {
        tt_xml_doc_free(d);
        return st;
    }
    *out = d;
    return TT_OK;
}
