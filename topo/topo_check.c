/*
 * topo_check.c - health findings on a scanned topology (any native doc):
 * what an operator should fix before blaming NCCL.  Works on the XML tree,
 * so it also reads values the graph does not keep (cur_link_*, state, mtu,
 * p2p, nvlink down).  Codes (docs/scan.md):
 *
 *   pcie-downtrained   warning  link trained below the device's maximum width (or speed,
 *                               non-GPU); GPUs drop speed when idle, so GPU speed is info
 *   pcie-slot-limited  info     narrower than the device's maximum because the slot is
 *   gpu-nic-numa       warning  a GPU's nearest NIC hangs from another CPU / NUMA node
 *   p2p-unavailable    warning  a GPU pair without P2P (NVML read/write, CUDA access)
 *   nvlink-down        error    NVLinks of a GPU reported down
 *   nvlink-unequal     warning  GPUs with different NVLink counts, or A->B != B->A
 *   ib-port-not-active error    an RDMA port not ACTIVE
 *   net-down           warning  a socket interface not up
 *   mtu-small          warning  an RDMA port's active MTU below 4096
 *   no-numa            warning  devices with numa_node -1 / no NUMA node at all
 *   gdr-unavailable    warning  RDMA NICs and GPUs, but no GPUDirect RDMA
 *   scan-unknown       info     how many values the scan could not see
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_topo.h"
#include "topo_internal.h"

#define CHECK_MTU_MIN 4096 /* the largest IB MTU; RoCE below it costs bandwidth (docs/scan.md) */

static int is_gpu_pci(const tt_xml_node *n)
{
    const char *c = tt_xml_get(n, TT_ATTR_CLASS);
    return !strcmp(n->name, TT_ELEM_PCI) && c && !strncmp(c, "0x03", 4);
}

static const tt_xml_node *cpu_of(const tt_xml_node *n)
{
    while (n && strcmp(n->name, TT_ELEM_CPU) != 0)
        n = n->parent;
    return n;
}

static int depth_of(const tt_xml_node *n)
{
    int d = 0;
    for (; n; n = n->parent)
        d++;
    return d;
}

/* hops between two elements in the tree */
static int tree_dist(const tt_xml_node *a, const tt_xml_node *b)
{
    int da = depth_of(a), db = depth_of(b), h = 0;
    while (da > db) {
        a = a->parent;
        da--;
        h++;
    }
    while (db > da) {
        b = b->parent;
        db--;
        h++;
    }
    while (a != b) {
        a = a->parent;
        b = b->parent;
        h += 2;
    }
    return h;
}

static const char *bus(const tt_xml_node *n)
{
    const char *b = tt_xml_get(n, TT_ATTR_BUSID);
    return b ? b : "?";
}

static tt_status check_pcie(const tt_xml_node *n, tt_findings *f)
{
    int mw = tt_topo__attr_int_or(n, TT_ATTR_MAX_LINK_WIDTH, -1);
    int cw = tt_topo__attr_int_or(n, TT_ATTR_CUR_LINK_WIDTH, -1);
    int lw = tt_topo__attr_int_or(n, TT_ATTR_LINK_WIDTH, -1);
    double ms = tt_topo__attr_gts(n, TT_ATTR_MAX_LINK_SPEED);
    double cs = tt_topo__attr_gts(n, TT_ATTR_CUR_LINK_SPEED);
    char where[64];
    tt_status st = TT_OK;
    snprintf(where, sizeof where, "pci %s", bus(n));
    if (mw > 0 && cw > 0 && cw < mw) {
        if (lw > 0 && cw >= lw)
            st = tt_findings_add(f, TT_SEV_INFO, "pcie-slot-limited", n->line, where,
                                 "link runs x%d, device supports x%d: the slot/upstream port is x%d", cw,
                                 mw, lw);
        else
            st = tt_findings_add(f, TT_SEV_WARN, "pcie-downtrained", n->line, where,
                                 "link trained at x%d below its x%d maximum (reseat the card, check "
                                 "the riser/slot): bandwidth is %d%% of nominal",
                                 cw, mw, cw * 100 / mw);
    }
    if (st == TT_OK && ms > 0 && cs > 0 && cs < ms) {
        int gpu = is_gpu_pci(n);
        st = tt_findings_add(f, gpu ? TT_SEV_INFO : TT_SEV_WARN, "pcie-downtrained", n->line, where,
                             "link runs at %s below its maximum %s%s", tt_xml_get(n, TT_ATTR_CUR_LINK_SPEED),
                             tt_xml_get(n, TT_ATTR_MAX_LINK_SPEED),
                             gpu ? " (GPUs lower the link speed when idle: re-check under load)" : "");
    }
    return st;
}

/* NICs: pci elements holding a <nic>, or <nic> directly under a cpu. */
static int collect_nics(const tt_xml_node *root, const tt_xml_node **out, int max)
{
    const tt_xml_node *x;
    int n = 0;
    for (x = root; x && n < max; x = tt_xml_walk_next(root, x))
        if (!strcmp(x->name, TT_ELEM_NIC))
            out[n++] = !strcmp(x->parent->name, TT_ELEM_PCI) ? x->parent : x;
    return n;
}

static const char *nic_name(const tt_xml_node *nic)
{
    const tt_xml_node *k = !strcmp(nic->name, TT_ELEM_NIC) ? nic : tt_xml_first_child(nic, TT_ELEM_NIC);
    const tt_xml_node *net = k ? tt_xml_first_child(k, TT_ELEM_NET) : NULL;
    const char *nm = net ? tt_xml_get(net, TT_ATTR_NAME) : NULL;
    return nm ? nm : bus(nic);
}

static tt_status check_gpu_nic_numa(const tt_xml_node *root, tt_findings *f)
{
    const tt_xml_node *nics[256], *x;
    int nn = collect_nics(root, nics, 256), i;
    tt_status st = TT_OK;
    if (nn == 0)
        return TT_OK;
    for (x = root; x && st == TT_OK; x = tt_xml_walk_next(root, x)) {
        const tt_xml_node *best = NULL, *gc, *nc;
        int bd = 1 << 30;
        char where[64];
        if (!is_gpu_pci(x))
            continue;
        for (i = 0; i < nn; i++) {
            int d = tree_dist(x, nics[i]);
            if (d < bd) {
                bd = d;
                best = nics[i];
            }
        }
        gc = cpu_of(x);
        nc = cpu_of(best);
        if (gc && nc && gc != nc) {
            snprintf(where, sizeof where, "pci %s", bus(x));
            st = tt_findings_add(f, TT_SEV_WARN, "gpu-nic-numa", x->line, where,
                                 "nearest NIC %s hangs from NUMA node %s, the GPU from node %s: "
                                 "network traffic crosses the CPU interconnect",
                                 nic_name(best), tt_xml_get(nc, TT_ATTR_NUMAID) ? tt_xml_get(nc, TT_ATTR_NUMAID) : "?",
                                 tt_xml_get(gc, TT_ATTR_NUMAID) ? tt_xml_get(gc, TT_ATTR_NUMAID) : "?");
        }
    }
    return st;
}

static tt_status check_gpu(const tt_xml_doc *doc, const tt_xml_node *gpu, tt_findings *f)
{
    const tt_xml_node *x, *root = doc->root;
    const char *me = bus(gpu->parent);
    char where[64];
    tt_status st = TT_OK;
    int down = 0;

    snprintf(where, sizeof where, "gpu %s", me);
    for (x = tt_xml_first_child(gpu, TT_ELEM_P2P); x && st == TT_OK; x = tt_xml_next_sibling(x, TT_ELEM_P2P)) {
        const char *t = tt_xml_get(x, TT_ATTR_TARGET);
        int rd = tt_topo__attr_int_or(x, TT_ATTR_READ, -1);
        int wr = tt_topo__attr_int_or(x, TT_ATTR_WRITE, -1);
        int ac = tt_topo__attr_int_or(x, TT_ATTR_ACCESS, -1);
        if (!t || strcmp(me, t) > 0)
            continue; /* report each unordered pair once */
        if (rd == 0 || wr == 0 || ac == 0)
            st = tt_findings_add(f, TT_SEV_WARN, "p2p-unavailable", x->line, where,
                                 "no peer-to-peer with GPU %s (read=%d write=%d access=%d): NCCL "
                                 "copies through host memory (check ACS/IOMMU settings, VM passthrough)",
                                 t, rd, wr, ac);
    }
    for (x = tt_xml_first_child(gpu, TT_ELEM_NVLINK); x && st == TT_OK; x = tt_xml_next_sibling(x, TT_ELEM_NVLINK)) {
        const char *t = tt_xml_get(x, TT_ATTR_TARGET), *tc = tt_xml_get(x, TT_ATTR_TCLASS);
        int d = tt_topo__attr_int_or(x, TT_ATTR_DOWN, 0), cnt = tt_topo__attr_int_or(x, TT_ATTR_COUNT, 0);
        down += d;
        if (d > 0)
            st = tt_findings_add(f, TT_SEV_ERROR, "nvlink-down", x->line, where,
                                 "%d NVLink(s) to %s down (%d up): NVLink bandwidth reduced, check "
                                 "nvidia-smi nvlink -s and the fabric manager",
                                 d, t ? t : "?", cnt);
        if (st == TT_OK && t && tc && !strncmp(tc, "0x03", 4)) {
            /* direct GPU-GPU links: the peer must see as many back */
            const tt_xml_node *pp = tt_xml_find(root, TT_ELEM_PCI, TT_ATTR_BUSID, t);
            const tt_xml_node *pg = pp ? tt_xml_first_child(pp, TT_ELEM_GPU) : NULL;
            const tt_xml_node *back = pg ? tt_xml_find(pg, TT_ELEM_NVLINK, TT_ATTR_TARGET, me) : NULL;
            if (pg && tt_xml_first_child(pg, TT_ELEM_NVLINK) && strcmp(me, t) < 0 &&
                (!back || tt_topo__attr_int_or(back, TT_ATTR_COUNT, 0) != cnt))
                st = tt_findings_add(f, TT_SEV_WARN, "nvlink-unequal", x->line, where,
                                     "%d NVLink(s) to GPU %s but %d back", cnt, t,
                                     back ? tt_topo__attr_int_or(back, TT_ATTR_COUNT, 0) : 0);
        }
    }
    (void)down;
    return st;
}

/* every GPU's total of active NVLinks should be the same */
static tt_status check_nvlink_totals(const tt_xml_node *root, tt_findings *f)
{
    const tt_xml_node *x, *y;
    int totals[512], n = 0, i, maxv = 0;
    const tt_xml_node *gpus[512];
    tt_status st = TT_OK;
    for (x = root; x && n < 512; x = tt_xml_walk_next(root, x)) {
        int t = 0, any = 0;
        if (strcmp(x->name, TT_ELEM_GPU) != 0)
            continue;
        for (y = tt_xml_first_child(x, TT_ELEM_NVLINK); y; y = tt_xml_next_sibling(y, TT_ELEM_NVLINK)) {
            t += tt_topo__attr_int_or(y, TT_ATTR_COUNT, 0);
            any = 1;
        }
        if (!any)
            continue;
        gpus[n] = x;
        totals[n++] = t;
        if (t > maxv)
            maxv = t;
    }
    for (i = 0; i < n && st == TT_OK; i++) {
        char where[64];
        if (totals[i] == maxv)
            continue;
        snprintf(where, sizeof where, "gpu %s", bus(gpus[i]->parent));
        st = tt_findings_add(f, TT_SEV_WARN, "nvlink-unequal", gpus[i]->line, where,
                             "%d active NVLink(s), other GPUs have %d: collectives run at the "
                             "slowest GPU's NVLink bandwidth",
                             totals[i], maxv);
    }
    return st;
}

static tt_status check_net(const tt_xml_node *net, int ngpu, tt_findings *f, int *rdma_nogdr)
{
    const char *name = tt_xml_get(net, TT_ATTR_NAME), *state = tt_xml_get(net, TT_ATTR_STATE);
    int rdma = tt_xml_get(net, TT_ATTR_NODE_GUID) != NULL;
    int mtu = tt_topo__attr_int_or(net, TT_ATTR_MTU, -1);
    char where[96];
    tt_status st = TT_OK;
    snprintf(where, sizeof where, "net %s port %s", name ? name : "?",
             tt_xml_get(net, TT_ATTR_PORT) ? tt_xml_get(net, TT_ATTR_PORT) : "?");
    if (rdma) {
        if (state && strcmp(state, "ACTIVE") != 0)
            st = tt_findings_add(f, TT_SEV_ERROR, "ib-port-not-active", net->line, where,
                                 "RDMA port is %s, not ACTIVE: NCCL will not use it (cable, switch "
                                 "port, subnet manager)",
                                 state);
        if (st == TT_OK && mtu > 0 && mtu < CHECK_MTU_MIN)
            st = tt_findings_add(f, TT_SEV_WARN, "mtu-small", net->line, where,
                                 "active MTU %d below %d: smaller packets cost RDMA bandwidth "
                                 "(%s)",
                                 mtu, CHECK_MTU_MIN,
                                 tt_xml_get(net, TT_ATTR_LINK_LAYER) && !strcmp(tt_xml_get(net, TT_ATTR_LINK_LAYER), "Ethernet")
                                     ? "RoCE: raise the interface MTU to 4200+"
                                     : "check the subnet manager's MTU");
        if (ngpu > 0 && tt_topo__attr_int_or(net, TT_ATTR_GDR, -1) == 0)
            (*rdma_nogdr)++;
    } else if (state && strcmp(state, "up") != 0 && strcmp(state, "unknown") != 0) {
        st = tt_findings_add(f, TT_SEV_WARN, "net-down", net->line, where, "interface is %s", state);
    }
    return st;
}

tt_status tt_topo_check(const tt_xml_doc *doc, tt_findings *out)
{
    const tt_xml_node *root, *x;
    tt_status st = TT_OK;
    int ngpu = 0, ncpu = 0, numa_unknown = 0, nunknown = 0, rdma_nogdr = 0, nrdma = 0;
    const tt_xml_node *first_unknown_cpu = NULL;

    if (!doc || !doc->root || !out)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_check: NULL argument");
    root = doc->root;
    if (strcmp(root->name, TT_ELEM_SYSTEM))
        return tt_error_set(TT_ERR_INVALID,
                            "%s:%d: root element is <%s>, not <system>: %s",
                            doc->source ? doc->source : "<memory>", root->line, root->name,
                            tt_topo__root_what(root->name));
    for (x = root; x; x = tt_xml_walk_next(root, x)) {
        if (is_gpu_pci(x))
            ngpu++;
        if (!strcmp(x->name, TT_ELEM_NET) && tt_xml_get(x, TT_ATTR_NODE_GUID))
            nrdma++;
    }
    for (x = root; x && st == TT_OK; x = tt_xml_walk_next(root, x)) {
        if (!strcmp(x->name, TT_ELEM_PCI))
            st = check_pcie(x, out);
        else if (!strcmp(x->name, TT_ELEM_GPU)) {
            st = check_gpu(doc, x, out);
            if (st == TT_OK && nrdma > 0 && tt_topo__attr_int_or(x, TT_ATTR_GDR, -1) == 0) {
                char where[64];
                snprintf(where, sizeof where, "gpu %s", bus(x->parent));
                st = tt_findings_add(out, TT_SEV_WARN, "gdr-unavailable", x->line, where,
                                     "the GPU does not support GPUDirect RDMA (CUDA attribute): "
                                     "NIC traffic is staged through host memory");
            }
        }
        else if (!strcmp(x->name, TT_ELEM_NET))
            st = check_net(x, ngpu, out, &rdma_nogdr);
        else if (!strcmp(x->name, TT_ELEM_UNKNOWN))
            nunknown++;
        else if (!strcmp(x->name, TT_ELEM_CPU)) {
            ncpu++;
            if (tt_topo__attr_int_or(x, TT_ATTR_NUMAID, -1) < 0 && x->nchildren > 0 &&
                (tt_xml_first_child(x, TT_ELEM_PCI) || tt_xml_first_child(x, TT_ELEM_NIC))) {
                numa_unknown++;
                if (!first_unknown_cpu)
                    first_unknown_cpu = x;
            }
        }
    }
    if (st == TT_OK)
        st = tt_topo__check_dialect(doc, out);
    if (st == TT_OK)
        st = check_gpu_nic_numa(root, out);
    if (st == TT_OK)
        st = check_nvlink_totals(root, out);
    if (st == TT_OK && numa_unknown)
        st = tt_findings_add(out, TT_SEV_WARN, "no-numa", first_unknown_cpu->line, "cpu numaid=-1",
                             "devices report no NUMA node (numa_node -1: VM, or firmware without "
                             "PCI locality): NCCL cannot pin threads or tell PHB from SYS");
    if (st == TT_OK && ncpu == 0)
        st = tt_findings_add(out, TT_SEV_WARN, "no-numa", 0, TT_ELEM_SYSTEM, "no CPU / NUMA node in the topology");
    if (st == TT_OK && rdma_nogdr)
        st = tt_findings_add(out, TT_SEV_WARN, "gdr-unavailable", 0, TT_ELEM_SYSTEM,
                             "%d of %d RDMA port(s) without GPUDirect RDMA (no nvidia_peermem / "
                             "dma-buf): GPU buffers are staged through host memory",
                             rdma_nogdr, nrdma);
    if (st == TT_OK && nunknown)
        st = tt_findings_add(out, TT_SEV_INFO, "scan-unknown", 0, TT_ELEM_SYSTEM,
                             "%d value(s) could not be seen (see the <unknown> elements)", nunknown);
    return st;
}
