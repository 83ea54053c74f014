/*
 * topo_check_dialect.c - the --check findings for values read from another
 * producer's dialect (docs/scan.md):
 *
 *   rccl-dialect     info     RCCL's file (version 2, <xgmi>, gcn): kept as it is
 *   amd-gpu          info     an AMD GPU: its sm is RCCL's gfx number; the model's
 *                             xGMI bandwidth and table class, and where they came from
 *                             (warning when the generation is unknown)
 *   nvlink-self      warning  an <nvlink>/<xgmi> whose target is the GPU's own bus id
 *   net-speed-unit   warning  a <net speed> above 10 Tb/s as Mb/s, read in another unit
 *                             (or, when no unit fits, NCCL's 10 Gb/s default)
 *   duplicate-switch info     two switch <pci> elements with one bus id (seen in RCCL
 *                             files): one switch node each, as NCCL and RCCL make
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tt_topo.h"
#include "topo_internal.h"

int tt_topo__pci_is_switch(const tt_xml_node *n)
{
    const char *cls = tt_xml_get(n, TT_ATTR_CLASS);
    if (tt_xml_first_child(n, TT_ELEM_GPU) || tt_xml_first_child(n, TT_ELEM_NIC))
        return 0;
    return !cls || !(!strncasecmp(cls, "0x02", 4) || !strncasecmp(cls, "0x03", 4) ||
                     !strncasecmp(cls, "0x12", 4) || !strcasecmp(cls, "0x068000"));
}

static const char *busid_of(const tt_xml_node *n)
{
    const char *b = n ? tt_xml_get(n, TT_ATTR_BUSID) : NULL;
    return b ? b : "?";
}

static tt_status check_amd_gpu(const tt_xml_node *gpu, tt_findings *f)
{
    const tt_xml_node *pci = gpu->parent;
    const char *gcn = tt_xml_get(gpu, TT_ATTR_GCN);
    const char *vendor = pci ? tt_xml_get(pci, TT_ATTR_VENDOR) : NULL;
    const char *sm = tt_xml_get(gpu, TT_ATTR_SM);
    int dev = pci ? tt_topo__attr_int_or(pci, TT_ATTR_DEVICE, 0) : 0;
    char where[64];
    tt_amd_model m;
    if (!gcn && !(vendor && !strcasecmp(vendor, "0x1002")))
        return TT_OK;
    snprintf(where, sizeof where, "gpu %s", busid_of(pci));
    if (tt_amd_gpu_model(gcn, dev > 0 ? (unsigned)dev : 0, &m))
        return tt_findings_add(f, TT_SEV_INFO, "amd-gpu", gpu->line, where,
                               "AMD %s (from its %s): sm=%s is RCCL's gfx number, not a CUDA "
                               "compute capability; modelled with %.0f GB/s per xGMI link and the "
                               "tables of class %d", m.name, m.from, sm ? sm : "?", m.xgmi_gbps, m.cc);
    return tt_findings_add(f, TT_SEV_WARN, "amd-gpu", gpu->line, where,
                           "AMD GPU of unknown generation (gcn '%s', device 0x%04x): modelled with "
                           "%.0f GB/s per xGMI link (default) and the tables of class %d",
                           gcn ? gcn : "", dev > 0 ? dev : 0, m.xgmi_gbps, m.cc);
}

static tt_status check_self_links(const tt_xml_node *gpu, tt_findings *f)
{
    const char *me = busid_of(gpu->parent);
    tt_status st = TT_OK;
    for (int i = 0; i < gpu->nchildren && st == TT_OK; i++) {
        const tt_xml_node *k = gpu->children[i];
        const char *t;
        char where[64];
        if (strcmp(k->name, TT_ELEM_NVLINK) && strcmp(k->name, TT_ELEM_XGMI))
            continue;
        t = tt_xml_get(k, TT_ATTR_TARGET);
        if (!t || strcasecmp(t, me))
            continue;
        snprintf(where, sizeof where, "gpu %s", me);
        st = tt_findings_add(f, TT_SEV_WARN, "nvlink-self", k->line, where,
                             "<%s target=\"%s\"> is the GPU's own bus id: read as NCCL does (a "
                             "link to itself carries no traffic); the producer mislabelled a link",
                             k->name, t);
    }
    return st;
}

static tt_status check_net_speed(const tt_xml_node *net, tt_findings *f)
{
    const char *v = tt_xml_get(net, TT_ATTR_SPEED), *name = tt_xml_get(net, TT_ATTR_NAME), *unit;
    char where[96], *end = NULL;
    double raw, mbps;
    if (!v)
        return TT_OK;
    raw = strtod(v, &end);
    if (end == v || !(raw > 1e7))
        return TT_OK;
    snprintf(where, sizeof where, "net %s", name ? name : "?");
    mbps = tt_net_speed_mbps(raw, &unit);
    if (unit)
        return tt_findings_add(f, TT_SEV_WARN, "net-speed-unit", net->line, where,
                               "speed=%s is above 10 Tb/s as Mb/s (NCCL's unit): read as %s, "
                               "%.0f Gb/s (a libfabric plugin's unit, e.g. Slingshot cxi)", v, unit,
                               mbps / 1000.0);
    return tt_findings_add(f, TT_SEV_WARN, "net-speed-unit", net->line, where,
                           "speed=%s is no plausible port speed in any unit: NCCL's default "
                           "10 Gb/s is used", v);
}

static int sw_cmp(const void *pa, const void *pb)
{
    const tt_xml_node *a = *(const tt_xml_node *const *)pa, *b = *(const tt_xml_node *const *)pb;
    int r = strcasecmp(tt_xml_get(a, TT_ATTR_BUSID), tt_xml_get(b, TT_ATTR_BUSID));
    return r ? r : a->line - b->line;
}

/* Switch <pci> elements sharing a bus id: sorted by (bus id, line), O(n log n). */
static tt_status check_dup_switches(const tt_xml_node *root, tt_findings *f)
{
    const tt_xml_node *x, **sw = NULL;
    size_t n = 0, cap = 0;
    tt_status st = TT_OK;
    for (x = root; x; x = tt_xml_walk_next(root, x)) {
        if (strcmp(x->name, TT_ELEM_PCI) || !tt_xml_get(x, TT_ATTR_BUSID) || !tt_topo__pci_is_switch(x))
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            const tt_xml_node **p = realloc(sw, nc * sizeof *p);
            if (!p) {
                free(sw);
                return tt_error_set(TT_ERR_NOMEM, "out of memory checking switch bus ids");
            }
            sw = p;
            cap = nc;
        }
        sw[n++] = x;
    }
    if (n > 1)
        qsort(sw, n, sizeof *sw, sw_cmp);
    for (size_t i = 1; i < n && st == TT_OK; i++) {
        const char *b = tt_xml_get(sw[i], TT_ATTR_BUSID);
        size_t first = i - 1;
        char where[64];
        if (strcasecmp(b, tt_xml_get(sw[first], TT_ATTR_BUSID)))
            continue;
        while (first > 0 && !strcasecmp(b, tt_xml_get(sw[first - 1], TT_ATTR_BUSID)))
            first--;
        snprintf(where, sizeof where, "pci %s", b);
        st = tt_findings_add(f, TT_SEV_INFO, "duplicate-switch", sw[i]->line, where,
                             "switch bus id %s is already used at line %d: loaded as another switch "
                             "node, as NCCL and RCCL do", b, sw[first]->line);
    }
    free(sw);
    return st;
}

tt_status tt_topo__check_dialect(const tt_xml_doc *doc, tt_findings *f)
{
    const tt_xml_node *root = doc->root, *x;
    tt_status st = TT_OK;
    if (tt_xml_is_rccl(doc))
        st = tt_findings_add(f, TT_SEV_INFO, "rccl-dialect", root->line, TT_ELEM_SYSTEM,
                             "RCCL's dialect (version=\"%s\", <xgmi>, gcn, arch): read and kept as "
                             "it is", tt_xml_get(root, TT_ATTR_VERSION) ? tt_xml_get(root, TT_ATTR_VERSION) : "?");
    for (x = root; x && st == TT_OK; x = tt_xml_walk_next(root, x)) {
        if (!strcmp(x->name, TT_ELEM_GPU)) {
            st = check_amd_gpu(x, f);
            if (st == TT_OK)
                st = check_self_links(x, f);
        } else if (!strcmp(x->name, TT_ELEM_NET)) {
            st = check_net_speed(x, f);
        }
    }
    if (st == TT_OK)
        st = check_dup_switches(root, f);
    return st;
}
