/*
 * topo_build.c - topology XML (NCCL dialect or our superset) -> typed graph.
 *
 * Lenient about missing information (NCCL's fallbacks are used and logged at
 * INFO), strict about malformed values: "file:line: <elem> attribute 'x': why".
 * Elements in places NCCL would not look at are ignored with an INFO line.
 */
#include "tt_topo.h"
#include "topo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PCI_DEPTH 128     /* nesting of <pci> elements */
#define MAX_LINK_COUNT 1024   /* nvlink/xgmi/c2c count bound */
#define MAX_LINK_WIDTH 256    /* PCIe lanes (vNICs may sum several x16) */

typedef struct {
    tt_topo *t;
    const tt_xml_doc *doc;
    const char *src;
    int *parent;   /* PCI-tree parent node (-1 none) */
    int *cpu_of;   /* CPU node the element sits under (-1 none) */
    int cap;
    /* distinct host_hash values; slot with has_hash 0 = "no host_hash" */
    uint64_t *hash;
    int *has_hash;
    int nhosts, cap_hosts;
    int nvs;       /* shared NVSwitch node, -1 until needed */
} builder;

/* ---------- attributes (topo_schema.c) ---------- */

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static const tt_xml_node *child(const tt_xml_node *n, const char *name)
{
    for (int i = 0; i < n->nchildren; i++)
        if (tt_topo__is(n->children[i], name))
            return n->children[i];
    return NULL;
}

static int count_children(const tt_xml_node *n, const char *name)
{
    int c = 0;
    for (int i = 0; i < n->nchildren; i++)
        c += tt_topo__is(n->children[i], name);
    return c;
}

static void ignore(builder *b, const tt_xml_node *n, const char *where)
{
    TT_INFO("topo", "%s:%d: ignoring <%s> inside <%s>", b->src, n->line, n->name ? n->name : "?",
            where);
}

/* ---------- nodes ---------- */

static tt_status new_node(builder *b, const tt_xml_node *el, tt_node_type type, int parent,
                          int cpu, int *index)
{
    tt_status st = tt_topo__add_node(b->t, type, index);
    if (st != TT_OK) {
        if (el)
            return tt_error_prefix(st, "%s:%d: <%s>", b->src, el->line, el->name);
        return st;
    }
    if (b->t->nnodes > b->cap) {
        int cap = b->cap ? b->cap * 2 : 64;
        int *p = realloc(b->parent, (size_t)cap * sizeof *p);
        if (!p)
            return tt_error_set(TT_ERR_NOMEM, "out of memory building the topology");
        b->parent = p;
        p = realloc(b->cpu_of, (size_t)cap * sizeof *p);
        if (!p)
            return tt_error_set(TT_ERR_NOMEM, "out of memory building the topology");
        b->cpu_of = p;
        b->cap = cap;
    }
    tt_node *n = &b->t->nodes[*index];
    n->xml = el;
    n->line = el ? el->line : 0;
    b->parent[*index] = parent;
    b->cpu_of[*index] = cpu;
    n->host = cpu >= 0 ? b->t->nodes[cpu].host : -1;
    return TT_OK;
}

/* A bus id used twice is an error, except for two switches (seen in RCCL
 * files): NCCL and RCCL make one node per element, and so does the builder. */
static tt_status check_dup_busid(builder *b, const tt_xml_node *el, const char *busid,
                                 tt_node_type type)
{
    int i = tt_topo_find_busid(b->t, busid);
    if (i >= 0 && type == TT_NODE_PCI && b->t->nodes[i].type == TT_NODE_PCI) {
        TT_INFO("topo", "%s:%d: switch bus id %s is used again (first at line %d): a second "
                "switch node, as NCCL and RCCL make", b->src, el->line, busid, b->t->nodes[i].line);
        return TT_OK;
    }
    if (i >= 0)
        return tt_topo__attr_error(b->src, el, TT_ERR_INVALID, TT_ATTR_BUSID,
                                   "duplicate bus id %s (first at line %d)",
                      busid, b->t->nodes[i].line);
    return TT_OK;
}

static tt_status shared_nvs(builder *b, int *index)
{
    if (b->nvs < 0) {
        tt_status st = new_node(b, NULL, TT_NODE_NVS, -1, -1, &b->nvs);
        if (st != TT_OK)
            return st;
        tt_node *n = &b->t->nodes[b->nvs];
        snprintf(n->name, sizeof n->name, "NVS%d", n->id);
        n->host = -1;
    }
    *index = b->nvs;
    return TT_OK;
}

static tt_status build_net(builder *b, const tt_xml_node *el, int nic)
{
    tt_status st;
    long long v;
    double d;
    int present, idx;
    const char *name = tt_topo__attr_ne(el, TT_ATTR_NAME);
    if (name && strlen(name) >= sizeof(((tt_node *)0)->u.net.name))
        return tt_topo__attr_error(b->src, el, TT_ERR_LIMIT, TT_ATTR_NAME,
                                   "'%s' is longer than %zu characters", name,
                      sizeof(((tt_node *)0)->u.net.name) - 1);
    if ((st = new_node(b, el, TT_NODE_NET, nic, b->cpu_of[nic], &idx)) != TT_OK)
        return st;
    tt_node *n = &b->t->nodes[idx];
    if (name)
        copy_str(n->u.net.name, sizeof n->u.net.name, name);
    else {
        snprintf(n->u.net.name, sizeof n->u.net.name, "net%d", n->id);
        TT_INFO("topo", "%s:%d: <net> without name, calling it %s", b->src, el->line,
                n->u.net.name);
    }
    copy_str(n->name, sizeof n->name, n->u.net.name);
    if ((st = tt_topo__get_int(b->src, el, TT_ATTR_DEV, -1, 1 << 20, -1, &v, NULL)) != TT_OK) return st;
    n->u.net.dev = (int)v;
    if ((st = tt_topo__get_int(b->src, el, TT_ATTR_PORT, 0, 1 << 20, 0, &v, NULL)) != TT_OK) return st;
    n->u.net.port = (int)v;
    if ((st = tt_topo__get_int(b->src, el, TT_ATTR_GDR, 0, 1, -1, &v, NULL)) != TT_OK) return st;
    n->u.net.gdr = (int)v;
    if ((st = tt_topo__get_int(b->src, el, TT_ATTR_MAXCONN, 0, 1LL << 31, 0, &v, NULL)) != TT_OK) return st;
    n->u.net.maxconn = (int)(v > 0x7fffffff ? 0x7fffffff : v);
    if ((st = tt_topo__get_double(b->src, el, TT_ATTR_LATENCY, 0, 1e9, 0, &d, NULL)) != TT_OK) return st;
    n->u.net.latency = d;
    if ((st = tt_topo__get_u64(b->src, el, TT_ATTR_GUID, &n->u.net.guid, NULL)) != TT_OK) return st;
    if ((st = tt_topo__get_double(b->src, el, TT_ATTR_SPEED, -1e18, 1e18, 0, &d, &present)) != TT_OK)
        return st;
    if (d > 0) {
        const char *unit;
        double mbps = tt_net_speed_mbps(d, &unit);
        if (!unit) {
            TT_WARN("topo", "%s:%d: <net %s> speed %.0f is no plausible port speed in any unit: "
                    "using %.0f Mb/s (NCCL's default)", b->src, el->line, n->u.net.name, d,
                    TT_NET_DEFAULT_SPEED_MBPS);
            d = 0;
        } else if (mbps != d) {
            TT_INFO("topo", "%s:%d: <net %s> speed %.0f is above 10 Tb/s as Mb/s: read as %s, "
                    "%.0f Mb/s", b->src, el->line, n->u.net.name, d, unit, mbps);
            d = mbps;
        }
    }
    if (d <= 0) {
        TT_INFO("topo", "%s:%d: <net %s> speed %s, using %.0f Mb/s (NCCL's default)", b->src,
                el->line, n->u.net.name, present ? "<= 0" : "missing", TT_NET_DEFAULT_SPEED_MBPS);
        d = TT_NET_DEFAULT_SPEED_MBPS;
    }
    n->u.net.speed_mbps = d;
    b->t->nodes[nic].u.nic.ports++;
    return tt_topo__link(b->t, nic, idx, TT_LINK_NET, tt_net_bw(d), 0);
}

/* nets of every <nic> child of el (el is a <pci> or a <nic>) */
static tt_status build_nic_ports(builder *b, const tt_xml_node *nic_el, int nic)
{
    for (int i = 0; i < nic_el->nchildren; i++) {
        const tt_xml_node *c = nic_el->children[i];
        tt_status st;
        if (!tt_topo__is(c, TT_ELEM_NET)) {
            ignore(b, c, TT_ELEM_NIC);
            continue;
        }
        if ((st = build_net(b, c, nic)) != TT_OK)
            return st;
    }
    return TT_OK;
}

/* RCCL's dialect: an AMD GPU's sm is not a CUDA compute capability; the
 * generation (gcn, else the PCI device id) gives the xGMI bandwidth and the
 * class the model's tables use (topo_amd.c). */
static tt_status amd_gpu_attrs(builder *b, const tt_xml_node *pci_el, const tt_xml_node *g,
                               tt_node *n)
{
    const char *gcn = g ? tt_topo__attr(g, TT_ATTR_GCN) : NULL;
    long long vendor = 0, device = 0;
    tt_amd_model m;
    tt_status st;
    if ((st = tt_topo__get_int(b->src, pci_el, TT_ATTR_VENDOR, 0, 0xffff, 0, &vendor, NULL)) != TT_OK)
        return st;
    if ((st = tt_topo__get_int(b->src, pci_el, TT_ATTR_DEVICE, 0, 0xffff, 0, &device, NULL)) != TT_OK)
        return st;
    n->u.gpu.cc = n->u.gpu.sm;
    n->u.gpu.xgmi_bw = tt_xgmi_bw_per_link();
    if (!(gcn && *gcn) && vendor != 0x1002)
        return TT_OK;
    n->u.gpu.amd = 1;
    copy_str(n->u.gpu.gcn, sizeof n->u.gpu.gcn, gcn);
    if (tt_amd_gpu_model(gcn, (unsigned)device, &m))
        TT_INFO("topo", "%s:%d: GPU %s is AMD %s (from its %s): sm=%d is RCCL's gfx number, "
                "modelled as class %d with %.0f GB/s per xGMI link", b->src, pci_el->line, n->busid,
                m.name, m.from, n->u.gpu.sm, m.cc, m.xgmi_gbps);
    else
        TT_WARN("topo", "%s:%d: GPU %s is an AMD GPU of unknown generation (gcn '%s', device 0x%04llx): "
                "modelled as class %d with %.0f GB/s per xGMI link", b->src, pci_el->line, n->busid,
                gcn ? gcn : "", device, m.cc, m.xgmi_gbps);
    n->u.gpu.cc = m.cc;
    n->u.gpu.xgmi_bw = m.xgmi_gbps;
    return TT_OK;
}

static tt_status build_gpu_attrs(builder *b, const tt_xml_node *pci_el, tt_node *n)
{
    const tt_xml_node *g = child(pci_el, TT_ELEM_GPU);
    long long v;
    tt_status st;
    n->u.gpu.dev = -1;
    n->u.gpu.sm = 0;
    n->u.gpu.rank = -1;
    n->u.gpu.gdr = -1;
    if (!g) {
        TT_INFO("topo", "%s:%d: GPU %s has no <gpu> child: dev, sm, rank, gdr unknown", b->src,
                pci_el->line, n->busid);
        return amd_gpu_attrs(b, pci_el, NULL, n);
    }
    if (count_children(pci_el, TT_ELEM_GPU) > 1)
        TT_INFO("topo", "%s:%d: GPU %s has several <gpu> children (ranks or partitions); "
                "using the first", b->src, pci_el->line, n->busid);
    if ((st = tt_topo__get_int(b->src, g, TT_ATTR_DEV, -1, 1 << 20, -1, &v, NULL)) != TT_OK) return st;
    n->u.gpu.dev = (int)v;
    if ((st = tt_topo__get_int(b->src, g, TT_ATTR_SM, 0, 10000, 0, &v, NULL)) != TT_OK) return st;
    n->u.gpu.sm = (int)v;
    if ((st = tt_topo__get_int(b->src, g, TT_ATTR_RANK, -1, 1 << 24, -1, &v, NULL)) != TT_OK) return st;
    n->u.gpu.rank = (int)v;
    if ((st = tt_topo__get_int(b->src, g, TT_ATTR_GDR, 0, 1, -1, &v, NULL)) != TT_OK) return st;
    n->u.gpu.gdr = (int)v;
    return amd_gpu_attrs(b, pci_el, g, n);
}

/* A display-class function that is not a compute GPU (topo_display.c): listed, not a rank. */
static int display_adapter(builder *b, const tt_xml_node *el, const char *busid, long long cls, int has_gpu,
                           tt_status *st)
{
    char why[400];
    if (!tt_topo__display_adapter(el, cls, has_gpu, why, sizeof why)) return 0;
    *st = tt_findings_add(&b->t->assumed, TT_SEV_INFO, "display-adapter", el->line, busid, "%s", why);
    return 1;
}

static tt_status build_pci(builder *b, const tt_xml_node *el, int parent, int cpu, int depth);

static tt_status build_pci_children(builder *b, const tt_xml_node *el, int self, int cpu,
                                    int depth)
{
    for (int i = 0; i < el->nchildren; i++) {
        const tt_xml_node *c = el->children[i];
        tt_status st;
        if (tt_topo__is(c, TT_ELEM_PCI)) {
            if ((st = build_pci(b, c, self, cpu, depth + 1)) != TT_OK)
                return st;
        } else if (!tt_topo__is(c, TT_ELEM_PCILINK)) {
            ignore(b, c, TT_ELEM_PCI);
        }
    }
    return TT_OK;
}

static tt_status build_pci(builder *b, const tt_xml_node *el, int parent, int cpu, int depth)
{
    tt_status st;
    char busid[32];
    long long cls, v;
    int has_cls, idx, known, width;
    const tt_xml_node *gpu_el = child(el, TT_ELEM_GPU);
    const tt_xml_node *nic_el = child(el, TT_ELEM_NIC);
    tt_node_type type;

    if (depth > MAX_PCI_DEPTH)
        return tt_topo__attr_error(b->src, el, TT_ERR_LIMIT, NULL, "<pci> nested deeper than %d",
                                   MAX_PCI_DEPTH);
    if ((st = tt_topo__get_busid(b->src, el, TT_ATTR_BUSID, busid)) != TT_OK)
        return st;
    if ((st = tt_topo__get_int(b->src, el, TT_ATTR_CLASS, 0, 0xffffff, -1, &cls, &has_cls)) != TT_OK)
        return st;
    if (gpu_el && nic_el)
        return tt_topo__attr_error(b->src, el, TT_ERR_INVALID, NULL, "has both <gpu> and <nic> children");

    if (has_cls && cls == 0x068000) {
        /* A PCI-visible NVSwitch: its NVLinks all go to the one shared NVS node
         * (as NCCL); its PCIe function carries no collective traffic. */
        int nvs;
        if ((st = shared_nvs(b, &nvs)) != TT_OK)
            return st;
        b->t->nodes[nvs].u.nvs.visible = 1;
        for (int i = 0; i < el->nchildren; i++)
            ignore(b, el->children[i], "pci class 0x068000 (NVSwitch)");
        return TT_OK;
    }
    /* As NCCL: a <nic> child makes a NIC whatever the class; otherwise the class
     * decides.  A <gpu> child makes a GPU when the class is absent, a display
     * controller (0x03) or a processing accelerator (0x12, e.g. AMD MI300X in
     * RCCL files); under any other class it is ignored with a warning. */
    if (nic_el)
        type = TT_NODE_NIC;
    else if (has_cls && (cls >> 16) == 0x03 && !display_adapter(b, el, busid, cls, gpu_el != NULL, &st))
        type = TT_NODE_GPU;
    else if (gpu_el && (!has_cls || (cls >> 16) == 0x12))
        type = TT_NODE_GPU;
    else if (has_cls && (cls >> 16) == 0x02)
        type = TT_NODE_NIC;
    else
        type = TT_NODE_PCI;
    if (st != TT_OK) /* the display-adapter finding could not be recorded */
        return st;
    if (gpu_el && type != TT_NODE_GPU)
        TT_WARN("topo", "%s:%d: pci %s has class 0x%06llx: its <gpu> child is ignored", b->src,
                el->line, busid, cls);
    if (!busid[0])
        TT_INFO("topo", "%s:%d: <pci> without busid", b->src, el->line);
    else if ((st = check_dup_busid(b, el, busid, type)) != TT_OK)
        return st;

    if ((st = tt_topo__get_int(b->src, el, TT_ATTR_LINK_WIDTH, 0, MAX_LINK_WIDTH, 0, &v, NULL)) != TT_OK)
        return st;
    width = (int)v;
    const char *speed = tt_topo__attr(el, TT_ATTR_LINK_SPEED);
    double bw = tt_pci_bw(speed, width, &known);
    if (!known)
        TT_INFO("topo", "%s:%d: pci %s link_speed '%s' link_width %d incomplete: using %.1f GB/s "
                "(NCCL's fallbacks: unknown speed = Gen3, unknown width = x16)", b->src, el->line, busid, speed ? speed : "",
                width, bw);

    if ((st = new_node(b, el, type, parent, cpu, &idx)) != TT_OK)
        return st;
    tt_node *n = &b->t->nodes[idx];
    copy_str(n->busid, sizeof n->busid, busid);
    switch (type) {
    case TT_NODE_GPU:
        snprintf(n->name, sizeof n->name, "GPU%d", n->id);
        if ((st = build_gpu_attrs(b, el, n)) != TT_OK)
            return st;
        break;
    case TT_NODE_NIC:
        if (busid[0])
            snprintf(n->name, sizeof n->name, "NIC/%s", busid);
        else
            snprintf(n->name, sizeof n->name, "NIC%d", n->id);
        break;
    default: {
        static const char *const ids[4] = {TT_ATTR_VENDOR, TT_ATTR_DEVICE, TT_ATTR_SUBSYSTEM_VENDOR,
                                           TT_ATTR_SUBSYSTEM_DEVICE};
        unsigned *dst[4] = {&n->u.pci.vendor, &n->u.pci.device, &n->u.pci.subvendor,
                            &n->u.pci.subdevice};
        if (busid[0])
            snprintf(n->name, sizeof n->name, "PCI/%s", busid);
        else
            snprintf(n->name, sizeof n->name, "PCI/line%d", el->line);
        n->u.pci.cls = has_cls ? (unsigned)cls : 0;
        for (int i = 0; i < 4; i++) {
            if ((st = tt_topo__get_int(b->src, el, ids[i], 0, 0xffff, 0, &v, NULL)) != TT_OK)
                return st;
            *dst[i] = (unsigned)v;
        }
        copy_str(n->u.pci.link_speed, sizeof n->u.pci.link_speed, speed);
        n->u.pci.link_width = width;
        break;
    }
    }
    if (parent >= 0 && (st = tt_topo__link(b->t, idx, parent, TT_LINK_PCI, bw, 0)) != TT_OK)
        return st;

    if (type == TT_NODE_NIC) {
        for (int i = 0; i < el->nchildren; i++) {
            const tt_xml_node *c = el->children[i];
            if (tt_topo__is(c, TT_ELEM_NIC)) {
                if ((st = build_nic_ports(b, c, idx)) != TT_OK)
                    return st;
            } else {
                ignore(b, c, "pci of a NIC");
            }
        }
        return TT_OK;
    }
    if (type == TT_NODE_GPU) {
        for (int i = 0; i < el->nchildren; i++)
            if (!tt_topo__is(el->children[i], TT_ELEM_GPU))
                ignore(b, el->children[i], "pci of a GPU");
        return TT_OK;
    }
    return build_pci_children(b, el, idx, cpu, depth);
}

static tt_status host_index(builder *b, const tt_xml_node *el, int *out)
{
    uint64_t h;
    int present;
    tt_status st = tt_topo__get_u64(b->src, el, TT_ATTR_HOST_HASH, &h, &present);
    if (st != TT_OK)
        return st;
    for (int i = 0; i < b->nhosts; i++) {
        if (b->has_hash[i] == present && (!present || b->hash[i] == h)) {
            *out = i;
            return TT_OK;
        }
    }
    if (b->nhosts == b->cap_hosts) {
        int cap = b->cap_hosts ? b->cap_hosts * 2 : 4;
        uint64_t *nh = realloc(b->hash, (size_t)cap * sizeof *nh);
        if (!nh)
            return tt_error_set(TT_ERR_NOMEM, "out of memory");
        b->hash = nh;
        int *np = realloc(b->has_hash, (size_t)cap * sizeof *np);
        if (!np)
            return tt_error_set(TT_ERR_NOMEM, "out of memory");
        b->has_hash = np;
        b->cap_hosts = cap;
    }
    b->hash[b->nhosts] = h;
    b->has_hash[b->nhosts] = present;
    *out = b->nhosts++;
    return TT_OK;
}

static tt_status build_cpu(builder *b, const tt_xml_node *el)
{
    tt_status st;
    long long numa, fam, model;
    int host = -1, idx = -1;
    if ((st = host_index(b, el, &host)) != TT_OK)
        return st;
    if ((st = tt_topo__get_int(b->src, el, TT_ATTR_NUMAID, -1, 1 << 20, -1, &numa, NULL)) != TT_OK)
        return st;
    if ((st = tt_topo__get_int(b->src, el, TT_ATTR_FAMILYID, 0, 1 << 20, -1, &fam, NULL)) != TT_OK)
        return st;
    if ((st = tt_topo__get_int(b->src, el, TT_ATTR_MODELID, 0, 1 << 20, -1, &model, NULL)) != TT_OK)
        return st;
    /* one CPU node per (host, NUMA node): repeated <cpu> elements are merged */
    for (int i = 0; i < b->t->nnodes; i++) {
        const tt_node *n = &b->t->nodes[i];
        if (n->type == TT_NODE_CPU && n->host == host && n->u.cpu.numaid == numa) {
            TT_INFO("topo", "%s:%d: <cpu numaid=%lld> repeats line %d; merged", b->src, el->line,
                    numa, n->line);
            idx = i;
            break;
        }
    }
    if (idx < 0) {
        if ((st = new_node(b, el, TT_NODE_CPU, -1, -1, &idx)) != TT_OK)
            return st;
        tt_node *n = &b->t->nodes[idx];
        const char *aff = tt_topo__attr(el, TT_ATTR_AFFINITY);
        b->cpu_of[idx] = idx;
        n->host = host;
        snprintf(n->name, sizeof n->name, "CPU%d", n->id);
        n->u.cpu.numaid = (int)numa;
        n->u.cpu.family = (int)fam;
        n->u.cpu.model = (int)model;
        copy_str(n->u.cpu.arch, sizeof n->u.cpu.arch, tt_topo__attr(el, TT_ATTR_ARCH));
        copy_str(n->u.cpu.vendor, sizeof n->u.cpu.vendor, tt_topo__attr(el, TT_ATTR_VENDOR));
        if (aff && strlen(aff) >= sizeof n->u.cpu.affinity)
            TT_WARN("topo", "%s:%d: <cpu> affinity longer than %zu characters; treated as unknown",
                    b->src, el->line, sizeof n->u.cpu.affinity - 1);
        else
            copy_str(n->u.cpu.affinity, sizeof n->u.cpu.affinity, aff);
        if (numa < 0)
            TT_INFO("topo", "%s:%d: <cpu> numaid unknown (-1)", b->src, el->line);
    }
    for (int i = 0; i < el->nchildren; i++) {
        const tt_xml_node *c = el->children[i];
        if (tt_topo__is(c, TT_ELEM_PCI)) {
            if ((st = build_pci(b, c, idx, idx, 1)) != TT_OK)
                return st;
        } else if (tt_topo__is(c, TT_ELEM_NIC)) {
            /* a NIC that is not a PCI device (virtual): linked to the CPU at LOC_BW as NCCL */
            int nic;
            if ((st = new_node(b, c, TT_NODE_NIC, idx, idx, &nic)) != TT_OK)
                return st;
            tt_node *n = &b->t->nodes[nic];
            snprintf(n->name, sizeof n->name, "NIC%d", n->id);
            if ((st = tt_topo__link(b->t, nic, idx, TT_LINK_PCI, TT_LOC_BW, 0)) != TT_OK)
                return st;
            if ((st = build_nic_ports(b, c, nic)) != TT_OK)
                return st;
        } else {
            ignore(b, c, TT_ELEM_CPU);
        }
    }
    return TT_OK;
}

/* ---------- second pass: NVLink, xGMI, C2C, pcilink ---------- */

static tt_status gpu_peer(builder *b, const tt_xml_node *el, int g, int *peer)
{
    char target[32];
    tt_status st = tt_topo__get_busid(b->src, el, TT_ATTR_TARGET, target);
    if (st != TT_OK)
        return st;
    if (!target[0])
        return tt_topo__attr_error(b->src, el, TT_ERR_INVALID, TT_ATTR_TARGET,
                                   "missing: a link to a GPU needs the "
                      "peer's bus id");
    *peer = tt_topo_find_busid(b->t, target);
    if (*peer < 0 || b->t->nodes[*peer].type != TT_NODE_GPU)
        return tt_topo__attr_error(b->src, el, TT_ERR_INVALID, TT_ATTR_TARGET,
                                   "no GPU with bus id %s in this file",
                      target);
    if (*peer == g) {
        /* seen in a vendor file; NCCL reads it (a link to itself carries nothing) */
        TT_WARN("topo", "%s:%d: <%s target=%s> links the GPU to itself: read as NCCL does, "
                "no bandwidth to any peer", b->src, el->line, el->name, target);
        *peer = -1;
    }
    return TT_OK;
}

static tt_status build_gpu_links(builder *b, int g)
{
    const tt_node *gn = &b->t->nodes[g];
    const tt_xml_node *gel = gn->xml ? child(gn->xml, TT_ELEM_GPU) : NULL;
    int sm = gn->u.gpu.sm;
    int cpu = b->cpu_of[g];
    tt_status st;
    long long count;
    int present;
    if (!gel)
        return TT_OK;
    for (int i = 0; i < gel->nchildren; i++) {
        const tt_xml_node *c = gel->children[i];
        if (tt_topo__is(c, TT_ELEM_NVLINK) || tt_topo__is(c, TT_ELEM_XGMI)) {
            int xgmi = tt_topo__is(c, TT_ELEM_XGMI);
            long long tclass;
            int peer = -1;
            if ((st = tt_topo__get_int(b->src, c, TT_ATTR_COUNT, 0, MAX_LINK_COUNT, 1, &count,
                                       &present)) != TT_OK) {
                const char *cv = tt_topo__attr_ne(c, TT_ATTR_COUNT);
                if (st == TT_ERR_INVALID && cv && cv[0] == '-')
                    return tt_topo__attr_error(b->src, c, TT_ERR_INVALID, TT_ATTR_COUNT,
                                               "'%s' is negative", cv);
                return st;
            }
            if (!present)
                TT_INFO("topo", "%s:%d: <%s> without count, assuming 1 link", b->src, c->line,
                        c->name);
            if (count == 0)
                continue;
            if ((st = tt_topo__get_int(b->src, c, TT_ATTR_TCLASS, 0, 0xffffff,
                                       xgmi ? 0x030000 : 0x068000, &tclass,
                              NULL)) != TT_OK)
                return st;
            if (xgmi || (tclass >> 16) == 0x03) {
                double per = xgmi ? gn->u.gpu.xgmi_bw : tt_nvlink_bw_per_link(sm);
                if ((st = gpu_peer(b, c, g, &peer)) != TT_OK)
                    return st;
                if (peer < 0)
                    continue; /* to itself (warned) */
                /* one direction: the peer's own element describes the way back */
                st = tt_topo__link_one(b->t, g, peer, TT_LINK_NVL, (double)count * per, xgmi);
            } else if (tclass == 0x068001) {
                if (cpu < 0) {
                    TT_INFO("topo", "%s:%d: NVLink to a CPU but the GPU has no CPU; ignored",
                            b->src, c->line);
                    continue;
                }
                st = tt_topo__link(b->t, g, cpu, TT_LINK_NVL,
                                   (double)count * tt_nvlink_bw_per_link(sm), 0);
            } else {
                /* NVSwitch (0x068000) or an unknown target: the shared NVS node, as NCCL */
                int nvs;
                if ((st = shared_nvs(b, &nvs)) != TT_OK)
                    return st;
                st = tt_topo__link(b->t, g, nvs, TT_LINK_NVL,
                                   (double)count * tt_nvlink_bw_per_link(sm), 0);
            }
            if (st != TT_OK)
                return st;
        } else if (tt_topo__is(c, TT_ELEM_C2C)) {
            double bw;
            int pb;
            if ((st = tt_topo__get_int(b->src, c, TT_ATTR_COUNT, 0, MAX_LINK_COUNT, 0, &count,
                                       &present)) != TT_OK)
                return st;
            if ((st = tt_topo__get_double(b->src, c, TT_ATTR_BW, 0, 1e7, 0, &bw, &pb)) != TT_OK)
                return st;
            if (!present || !pb || count == 0 || bw <= 0) {
                TT_INFO("topo", "%s:%d: <c2c> without bw or count; ignored", b->src, c->line);
                continue;
            }
            if (cpu < 0)
                continue;
            if ((st = tt_topo__link(b->t, g, cpu, TT_LINK_C2C, bw * (double)count / 1000.0, 0)) !=
                TT_OK)
                return st;
        } else {
            ignore(b, c, TT_ELEM_GPU);
        }
    }
    return TT_OK;
}

static tt_status build_pcilinks(builder *b, int p)
{
    const tt_xml_node *el = b->t->nodes[p].xml;
    if (!el)
        return TT_OK;
    for (int i = 0; i < el->nchildren; i++) {
        const tt_xml_node *c = el->children[i];
        char target[32];
        tt_status st;
        if (!tt_topo__is(c, TT_ELEM_PCILINK))
            continue;
        if ((st = tt_topo__get_busid(b->src, c, TT_ATTR_TARGET, target)) != TT_OK)
            return st;
        int q = target[0] ? tt_topo_find_busid(b->t, target) : -1;
        if (q < 0 || q == p || b->t->nodes[q].type != TT_NODE_PCI) {
            TT_INFO("topo", "%s:%d: <pcilink target='%s'> names no other PCI switch; ignored",
                    b->src, c->line, target);
            continue;
        }
        /* NCCL: a Broadcom virtual-switch link is LOC_BW, one direction per element */
        if ((st = tt_topo__link_one(b->t, p, q, TT_LINK_LOC, TT_LOC_BW, 0)) != TT_OK)
            return st;
    }
    return TT_OK;
}

/* Files that describe a link from one side only get the way back too. */
static tt_status add_missing_reverse(tt_topo *t, tt_node_type between, tt_link_type type)
{
    for (int a = 0; a < t->nnodes; a++) {
        if (t->nodes[a].type != between)
            continue;
        for (int k = 0; k < t->nodes[a].nlinks; k++) {
            tt_link l = t->nodes[a].links[k];
            if (l.type != type || t->nodes[l.peer].type != between)
                continue;
            if (!tt_topo__find_link(t, l.peer, a, type)) {
                tt_status st = tt_topo__link_one(t, l.peer, a, type, l.bw, l.xgmi);
                if (st != TT_OK)
                    return st;
            }
        }
    }
    return TT_OK;
}

/* A CPU node with another CPU node on its host whose arch/vendor the model does not know. */
static int cpu_unknown_linked(const tt_topo *t, int i)
{
    const tt_node *c = &t->nodes[i];
    if (c->type != TT_NODE_CPU || tt_topo__cpu_known(c->u.cpu.arch, c->u.cpu.vendor))
        return 0;
    for (int j = 0; j < t->nnodes; j++)
        if (j != i && t->nodes[j].type == TT_NODE_CPU && t->nodes[j].host == c->host)
            return 1;
    return 0;
}

static int same_cpu_kind(const tt_node *a, const tt_node *b)
{
    return !strcmp(a->u.cpu.arch, b->u.cpu.arch) && !strcmp(a->u.cpu.vendor, b->u.cpu.vendor);
}

/* One warning per unknown (arch, vendor), with the number of CPU nodes, not one per node
 * (O(n^2) in nodes, as the CPU links themselves). */
static void warn_unknown_cpus(builder *b)
{
    tt_topo *t = b->t;
    char *unk = calloc((size_t)t->nnodes + 1, 1);
    if (!unk)
        return; /* only a warning is lost */
    for (int i = 0; i < t->nnodes; i++)
        unk[i] = (char)cpu_unknown_linked(t, i);
    for (int i = 0; i < t->nnodes; i++) {
        const tt_node *c = &t->nodes[i];
        int first = unk[i], n = 0;
        for (int k = 0; k < i && first; k++)
            first = !(unk[k] && same_cpu_kind(&t->nodes[k], c));
        if (!first)
            continue;
        for (int j = i; j < t->nnodes; j++)
            n += unk[j] && same_cpu_kind(&t->nodes[j], c);
        TT_WARN("topo", "%s:%d: CPU arch '%s' vendor '%s' unknown: inter-socket bandwidth %.1f GB/s "
                "assumed (%d CPU node(s))", b->src, c->line, c->u.cpu.arch, c->u.cpu.vendor,
                tt_inter_cpu_bw(c->u.cpu.arch, c->u.cpu.vendor, c->u.cpu.family, c->u.cpu.model), n);
    }
    free(unk);
}

static tt_status connect_cpus(builder *b)
{
    tt_topo *t = b->t;
    warn_unknown_cpus(b);
    for (int i = 0; i < t->nnodes; i++) {
        tt_node *c = &t->nodes[i];
        if (c->type != TT_NODE_CPU)
            continue;
        double bw = tt_inter_cpu_bw(c->u.cpu.arch, c->u.cpu.vendor, c->u.cpu.family,
                                    c->u.cpu.model);
        for (int j = 0; j < t->nnodes; j++) {
            if (j == i || t->nodes[j].type != TT_NODE_CPU || t->nodes[j].host != c->host)
                continue;
            tt_status st = tt_topo__link_one(t, i, j, TT_LINK_SYS, bw, 0);
            if (st != TT_OK)
                return st;
        }
    }
    return TT_OK;
}

/* Two GPUs of one host with the same dev (device index) contradict each other (issue #32): refused,
 * naming both lines, like a duplicate bus id.  Sorted by (host, dev): O(n log n) on huge files. */
typedef struct {
    int host, dev, node;
} dev_ent;

static int dev_cmp(const void *pa, const void *pb)
{
    const dev_ent *a = pa, *b = pb;
    if (a->host != b->host) return a->host < b->host ? -1 : 1;
    if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
    return a->node - b->node;
}

static tt_status check_dup_gpu_dev(builder *b)
{
    const tt_topo *t = b->t;
    int n = 0;
    dev_ent *e = malloc((size_t)(t->nnodes ? t->nnodes : 1) * sizeof *e);
    if (!e)
        return tt_error_set(TT_ERR_NOMEM, "out of memory checking GPU device indices");
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].type == TT_NODE_GPU && t->nodes[i].u.gpu.dev >= 0 && t->nodes[i].xml)
            e[n++] = (dev_ent){t->nodes[i].host, t->nodes[i].u.gpu.dev, i};
    qsort(e, (size_t)n, sizeof *e, dev_cmp);
    tt_status st = TT_OK;
    for (int i = 1; i < n && st == TT_OK; i++) {
        if (e[i].host != e[i - 1].host || e[i].dev != e[i - 1].dev)
            continue;
        const tt_node *first = &t->nodes[e[i - 1].node], *dup = &t->nodes[e[i].node];
        const tt_xml_node *g = child(dup->xml, TT_ELEM_GPU), *g0 = child(first->xml, TT_ELEM_GPU);
        st = tt_topo__attr_error(b->src, g ? g : dup->xml, TT_ERR_INVALID, TT_ATTR_DEV,
                                 "duplicate device index %d: GPU %s has it, and so has GPU %s (line %d) on the same "
                                 "host; give every GPU of a host its own dev", dup->u.gpu.dev, dup->busid,
                                 first->busid, g0 ? g0->line : first->line);
    }
    free(e);
    return st;
}

static tt_status build(builder *b)
{
    const tt_xml_node *root = b->doc->root;
    tt_status st;
    long long ver;
    int present;
    if (!root)
        return tt_error_set(TT_ERR_INVALID, "%s: empty topology document", b->src);
    if (!tt_topo__is(root, TT_ELEM_SYSTEM))
        return tt_error_set(TT_ERR_INVALID, "%s:%d: root element is <%s>, expected <system>%s",
                            b->src, root->line, root->name ? root->name : "?",
                            tt_topo__root_note(root->name));
    if ((st = tt_topo__get_int(b->src, root, TT_ATTR_VERSION, 0, 1 << 30, 1, &ver, &present)) != TT_OK)
        return st;
    if (present && ver == 2 && tt_xml_is_rccl(b->doc))
        TT_INFO("topo", "%s:%d: RCCL's dialect (version 2)", b->src, root->line);
    else if (present && ver != 1)
        TT_WARN("topo", "%s:%d: <system version=%lld>: only version 1 is known; reading anyway",
                b->src, root->line, ver);
    for (int i = 0; i < root->nchildren; i++) {
        const tt_xml_node *c = root->children[i];
        if (tt_topo__is(c, TT_ELEM_CPU)) {
            if ((st = build_cpu(b, c)) != TT_OK)
                return st;
        } else {
            ignore(b, c, TT_ELEM_SYSTEM);
        }
    }
    if ((st = check_dup_gpu_dev(b)) != TT_OK)
        return st;
    /* sm of probed GPUs without one (hwloc exports), by device id (topo_parts.c) */
    if ((st = tt_topo__infer_sm(b->t)) != TT_OK)
        return st;
    int n = b->t->nnodes;
    for (int i = 0; i < n; i++) {
        if (b->t->nodes[i].type == TT_NODE_GPU && (st = build_gpu_links(b, i)) != TT_OK)
            return st;
        if (b->t->nodes[i].type == TT_NODE_PCI && (st = build_pcilinks(b, i)) != TT_OK)
            return st;
    }
    /* partial vendor files: fabric from the part table, NIC ports (topo_parts.c) */
    if ((st = tt_topo__infer_partial(b->t)) != TT_OK)
        return st;
    if ((st = add_missing_reverse(b->t, TT_NODE_GPU, TT_LINK_NVL)) != TT_OK)
        return st;
    if ((st = add_missing_reverse(b->t, TT_NODE_PCI, TT_LINK_LOC)) != TT_OK)
        return st;
    if ((st = tt_topo__flatten_bcm(b->t, b->parent)) != TT_OK)
        return st;
    return connect_cpus(b);
}

tt_status tt_topo_from_xml(const tt_xml_doc *doc, const tt_topo_options *opts, tt_topo **out)
{
    builder b;
    tt_status st;
    if (!out)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_from_xml: no output pointer");
    *out = NULL;
    if (!doc)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_from_xml: no document");
    memset(&b, 0, sizeof b);
    b.doc = doc;
    b.src = doc->source ? doc->source : "<memory>";
    b.nvs = -1;
    b.t = calloc(1, sizeof *b.t);
    if (!b.t)
        return tt_error_set(TT_ERR_NOMEM, "out of memory");
    copy_str(b.t->source, sizeof b.t->source, b.src);
    if (opts)
        b.t->opts = *opts;
    else
        tt_topo_options_default(&b.t->opts);
    st = build(&b);
    free(b.parent);
    free(b.cpu_of);
    free(b.hash);
    free(b.has_hash);
    if (st == TT_OK)
        st = tt_topo_compute_paths(b.t);
    if (st != TT_OK) {
        tt_topo_free(b.t);
        return st;
    }
    *out = b.t;
    return TT_OK;
}
