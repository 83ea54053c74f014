/*
 * topo_fuse.c - fuse a vendor topology file with a scan of this machine, as
 * NCCL does with NCCL_TOPO_FILE (issue #19): the file is loaded first, then
 * live detection fills in what it lacks, matched by PCI bus id.
 *
 * Rules (docs/scan.md, "Fusion with a vendor file"):
 *   - the result starts as a copy of the vendor file: its PCIe tree (the
 *     physical tree a VM hides) and every attribute it sets win;
 *   - a scanned <pci> whose bus id is in the file is merged into it:
 *     attributes the file leaves out (or empty) are taken from the scan, and
 *     so are child elements the file does not have (<gpu> with its <nvlink>,
 *     <nic> with its <net>, <unknown>, ...); when both have one such child
 *     they are merged the same way, recursively (<net> matched by name);
 *   - a scanned device the file does not name is added under its scanned
 *     parent's place in the result (its parent as fused, or its NUMA node's
 *     <cpu>, made if the file has none); scanned bridges are copied only when
 *     they lead to such a device;
 *   - <cpu> elements are matched by numaid; host_hash is always the scan's
 *     (NCCL overwrites it on load); system-level elements the file lacks
 *     (<nvswitch>, ...) are copied.
 */
#include "tt_topo.h"
#include "tt_topo.h"
#include "topo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tt_xml_node **node; /* result pci elements */
    char (*busid)[32];
    int n, cap;
    int matched;
} fuse_index;

static tt_status index_add(fuse_index *ix, tt_xml_node *n, const char *busid)
{
    if (ix->n == ix->cap) {
        int cap = ix->cap ? ix->cap * 2 : 64;
        tt_xml_node **p = realloc(ix->node, (size_t)cap * sizeof *p);
        if (!p)
            return tt_error_set(TT_ERR_NOMEM, "out of memory fusing topologies");
        ix->node = p;
        char(*b)[32] = realloc(ix->busid, (size_t)cap * sizeof *b);
        if (!b)
            return tt_error_set(TT_ERR_NOMEM, "out of memory fusing topologies");
        ix->busid = b;
        ix->cap = cap;
    }
    ix->node[ix->n] = n;
    snprintf(ix->busid[ix->n], sizeof ix->busid[0], "%s", busid);
    ix->n++;
    return TT_OK;
}

static int pci_busid(const tt_xml_node *n, char out[32])
{
    const char *b = tt_xml_get(n, TT_ATTR_BUSID);
    return n && tt_topo__is(n, TT_ELEM_PCI) && b && tt_topo__norm_busid(b, out) && out[0];
}

static tt_xml_node *index_find(const fuse_index *ix, const tt_xml_node *scan_pci)
{
    char b[32];
    if (!pci_busid(scan_pci, b))
        return NULL;
    for (int i = 0; i < ix->n; i++)
        if (!strcmp(ix->busid[i], b))
            return ix->node[i];
    return NULL;
}

static tt_status index_tree(fuse_index *ix, tt_xml_node *top)
{
    for (tt_xml_node *n = top; n; n = tt_xml_walk_next(top, n)) {
        char b[32];
        tt_status st;
        if (pci_busid(n, b) && (st = index_add(ix, n, b)) != TT_OK)
            return st;
    }
    return TT_OK;
}

/* attributes of `from` that `to` lacks or leaves empty */
static tt_status merge_attrs(const tt_xml_node *from, tt_xml_node *to)
{
    for (int i = 0; i < from->nattrs; i++) {
        const char *v = tt_xml_get(to, from->attrs[i].name);
        if ((!v || !*v) && from->attrs[i].value && *from->attrs[i].value) {
            tt_status st = tt_xml_set(to, from->attrs[i].name, from->attrs[i].value);
            if (st != TT_OK)
                return st;
        }
    }
    return TT_OK;
}

static int count_named(const tt_xml_node *n, const char *name)
{
    int c = 0;
    for (int i = 0; i < n->nchildren; i++)
        c += !strcmp(n->children[i]->name, name);
    return c;
}

static tt_xml_node *net_named(tt_xml_node *top, const char *name)
{
    return name ? tt_xml_find(top, TT_ELEM_NET, TT_ATTR_NAME, name) : NULL;
}

static tt_status append_clone(tt_xml_node *parent, const tt_xml_node *c)
{
    tt_xml_node *k = tt_xml_clone(c);
    if (!k)
        return tt_error_set(TT_ERR_NOMEM, "out of memory fusing topologies");
    tt_status st = tt_xml_append(parent, k);
    if (st != TT_OK)
        tt_xml_node_free(k);
    return st;
}

/* Non-<pci> children of scanned `from` into result `to` (see the rules above). */
static tt_status merge_children(const tt_xml_node *from, tt_xml_node *to, tt_xml_node *root)
{
    tt_status st;
    for (int i = 0; i < from->nchildren; i++) {
        const tt_xml_node *c = from->children[i];
        if (tt_topo__is(c, TT_ELEM_PCI))
            continue;
        if (tt_topo__is(c, TT_ELEM_NET)) {
            tt_xml_node *o = net_named(root, tt_xml_get(c, TT_ATTR_NAME));
            st = o ? merge_attrs(c, o) : append_clone(to, c);
            if (st == TT_OK && o)
                st = merge_children(c, o, root);
            if (st != TT_OK)
                return st;
            continue;
        }
        int nt = count_named(to, c->name);
        if (nt == 0) {
            /* every scanned child of this name, once (at the first) */
            int first = 1;
            for (int j = 0; j < i; j++)
                first &= strcmp(from->children[j]->name, c->name) != 0;
            if (first)
                for (int j = i; j < from->nchildren; j++)
                    if (!strcmp(from->children[j]->name, c->name) &&
                        (st = append_clone(to, from->children[j])) != TT_OK)
                        return st;
        } else if (nt == 1 && count_named(from, c->name) == 1) {
            tt_xml_node *o = tt_xml_first_child(to, c->name);
            if ((st = merge_attrs(c, o)) != TT_OK || (st = merge_children(c, o, root)) != TT_OK)
                return st;
        }
        /* several on both sides: the file's stand */
    }
    return TT_OK;
}

static int is_device(const tt_xml_node *n);

/* Whether scanned element n (pci or cpu) holds a device the result lacks. */
static int needed(const fuse_index *ix, const tt_xml_node *n, tt_xml_node *root)
{
    if (tt_topo__is(n, TT_ELEM_PCI) && is_device(n) && !index_find(ix, n))
        return 1;
    for (int i = 0; i < n->nchildren; i++) {
        const tt_xml_node *c = n->children[i];
        if (tt_topo__is(c, TT_ELEM_PCI) && needed(ix, c, root))
            return 1;
        if (tt_topo__is(n, TT_ELEM_CPU) && tt_topo__is(c, TT_ELEM_NIC)) {
            const tt_xml_node *net = tt_xml_first_child(c, TT_ELEM_NET);
            if (!net || !net_named(root, tt_xml_get(net, TT_ATTR_NAME)))
                return 1;
        }
    }
    return 0;
}

/* a copy of n without its <pci> children */
static tt_xml_node *shallow_pci(const tt_xml_node *n)
{
    tt_xml_node *k = tt_xml_node_new(n->name);
    if (!k)
        return NULL;
    k->line = n->line;
    for (int i = 0; i < n->nattrs; i++)
        if (tt_xml_set(k, n->attrs[i].name, n->attrs[i].value) != TT_OK) {
            tt_xml_node_free(k);
            return NULL;
        }
    for (int i = 0; i < n->nchildren; i++)
        if (!tt_topo__is(n->children[i], TT_ELEM_PCI) && append_clone(k, n->children[i]) != TT_OK) {
            tt_xml_node_free(k);
            return NULL;
        }
    return k;
}

/* is a scanned pci a device (not a host or PCI-PCI bridge)? NVSwitches (0x068000) are devices. */
static int is_device(const tt_xml_node *n)
{
    long long cls;
    if (tt_xml_first_child(n, TT_ELEM_GPU) || tt_xml_first_child(n, TT_ELEM_NIC))
        return 1;
    if (tt_topo__read_ll(n, TT_ATTR_CLASS, &cls, NULL) != TT_ATTR_OK)
        return 0;
    return (cls >> 8) != 0x0600 && (cls >> 8) != 0x0604;
}

static tt_status fuse_pci_children(fuse_index *ix, const tt_xml_node *from, tt_xml_node *to,
                                   tt_xml_node *root)
{
    tt_status st;
    for (int i = 0; i < from->nchildren; i++) {
        const tt_xml_node *c = from->children[i];
        if (!tt_topo__is(c, TT_ELEM_PCI))
            continue;
        tt_xml_node *o = index_find(ix, c);
        if (o) {
            if (is_device(c))
                ix->matched++;
            TT_INFO("topo", "fuse: %s found in the vendor file; completed from the scan",
                    tt_xml_get(c, TT_ATTR_BUSID));
            if ((st = merge_attrs(c, o)) != TT_OK || (st = merge_children(c, o, root)) != TT_OK ||
                (st = fuse_pci_children(ix, c, o, root)) != TT_OK)
                return st;
        } else if (needed(ix, c, root)) {
            char b[32];
            tt_xml_node *k = shallow_pci(c);
            if (!k)
                return tt_error_set(TT_ERR_NOMEM, "out of memory fusing topologies");
            if ((st = tt_xml_append(to, k)) != TT_OK) {
                tt_xml_node_free(k);
                return st;
            }
            if (pci_busid(k, b) && (st = index_add(ix, k, b)) != TT_OK)
                return st;
            if (is_device(c))
                TT_INFO("topo", "fuse: %s is not in the vendor file; placed under its scanned parent",
                        tt_xml_get(c, TT_ATTR_BUSID));
            if ((st = fuse_pci_children(ix, c, k, root)) != TT_OK)
                return st;
        } else if ((st = fuse_pci_children(ix, c, to, root)) != TT_OK) {
            /* a scanned bridge whose devices are all in the file: not copied */
            return st;
        }
    }
    return TT_OK;
}

static tt_xml_node *cpu_by_numa(tt_xml_node *root, const char *numaid)
{
    for (tt_xml_node *c = tt_xml_first_child(root, TT_ELEM_CPU); c;
         c = tt_xml_next_sibling(c, TT_ELEM_CPU)) {
        const char *v = tt_xml_get(c, TT_ATTR_NUMAID);
        if (v && numaid && !strcmp(v, numaid))
            return c;
    }
    return NULL;
}

static tt_status fuse(fuse_index *ix, const tt_xml_node *sroot, tt_xml_node *root)
{
    tt_status st;
    if ((st = merge_attrs(sroot, root)) != TT_OK)
        return st;
    for (int i = 0; i < sroot->nchildren; i++) {
        const tt_xml_node *c = sroot->children[i];
        if (!tt_topo__is(c, TT_ELEM_CPU))
            continue;
        tt_xml_node *o = cpu_by_numa(root, tt_xml_get(c, TT_ATTR_NUMAID));
        if (!o) {
            if (!needed(ix, c, root))
                continue;
            o = tt_xml_node_new(TT_ELEM_CPU);
            if (!o)
                return tt_error_set(TT_ERR_NOMEM, "out of memory fusing topologies");
            o->line = c->line;
            if ((st = tt_xml_append(root, o)) != TT_OK) {
                tt_xml_node_free(o);
                return st;
            }
        }
        const char *hh = tt_xml_get(c, TT_ATTR_HOST_HASH);
        if (hh && *hh && (st = tt_xml_set(o, TT_ATTR_HOST_HASH, hh)) != TT_OK)
            return st;
        if ((st = merge_attrs(c, o)) != TT_OK)
            return st;
        /* non-PCI NICs and notes of the NUMA node */
        for (int j = 0; j < c->nchildren; j++) {
            const tt_xml_node *k = c->children[j];
            if (tt_topo__is(k, TT_ELEM_PCI))
                continue;
            if (tt_topo__is(k, TT_ELEM_NIC)) {
                const tt_xml_node *net = tt_xml_first_child(k, TT_ELEM_NET);
                if (net && net_named(root, tt_xml_get(net, TT_ATTR_NAME)))
                    st = merge_children(k, tt_xml_find(root, TT_ELEM_NET, TT_ATTR_NAME,
                                                       tt_xml_get(net, TT_ATTR_NAME))->parent,
                                        root);
                else
                    st = append_clone(o, k);
            } else if (!tt_xml_first_child(o, k->name)) {
                st = append_clone(o, k);
            }
            if (st != TT_OK)
                return st;
        }
        if ((st = fuse_pci_children(ix, c, o, root)) != TT_OK)
            return st;
    }
    /* system-level elements the file lacks (nvswitch, findings, unknown) */
    for (int i = 0; i < sroot->nchildren; i++) {
        const tt_xml_node *c = sroot->children[i];
        if (tt_topo__is(c, TT_ELEM_CPU) || count_named(root, c->name) > 0)
            continue;
        for (int j = i; j < sroot->nchildren; j++)
            if (!strcmp(sroot->children[j]->name, c->name) &&
                (st = append_clone(root, sroot->children[j])) != TT_OK)
                return st;
    }
    return TT_OK;
}

tt_status tt_topo_fuse(const tt_xml_doc *vendor, const tt_xml_doc *scan, tt_xml_doc **out,
                       int *nmatched)
{
    fuse_index ix;
    tt_status st;
    if (!out)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_fuse: no output pointer");
    *out = NULL;
    if (!vendor || !vendor->root || !scan || !scan->root)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_fuse: missing document");
    if (!tt_topo__is(vendor->root, TT_ELEM_SYSTEM))
        return tt_error_set(TT_ERR_INVALID, "%s:%d: root element is <%s>, expected <system>%s",
                            vendor->source ? vendor->source : "vendor file", vendor->root->line,
                            vendor->root->name, tt_topo__root_note(vendor->root->name));
    if (!tt_topo__is(scan->root, TT_ELEM_SYSTEM))
        return tt_error_set(TT_ERR_INVALID, "scan: root element is <%s>, expected <system>",
                            scan->root->name);
    tt_xml_doc *d = tt_xml_doc_new(TT_ELEM_SYSTEM, vendor->source);
    tt_xml_node *root = tt_xml_clone(vendor->root);
    if (!d || !root) {
        tt_xml_doc_free(d);
        tt_xml_node_free(root);
        return tt_error_set(TT_ERR_NOMEM, "out of memory fusing topologies");
    }
    tt_xml_node_free(d->root);
    d->root = root;
    memset(&ix, 0, sizeof ix);
    st = index_tree(&ix, root);
    if (st == TT_OK)
        st = fuse(&ix, scan->root, root);
    if (st == TT_OK)
        st = tt_xml_set(root, "tt_source", "fused");
    if (st == TT_OK && vendor->source)
        st = tt_xml_set(root, "tt_vendor_file", vendor->source);
    free(ix.node);
    free(ix.busid);
    if (st != TT_OK) {
        tt_xml_doc_free(d);
        return st;
    }
    if (nmatched)
        *nmatched = ix.matched;
    *out = d;
    return TT_OK;
}
