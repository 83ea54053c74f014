/*
 * tune_fabric.c - the network between the nodes: InfiniBand, RoCE, AWS EFA, GPUDirect-TCPX or
 * plain sockets, read off the topology's NET ports where it shows, else assumed (and said so).
 *
 * What the topology says (NCCL's dialect and our extensions, docs/xml-schema.md):
 *   - `driver` (our extension on <net>, from a live scan): efa (EFA), gve (Google gVNIC: TCPX with
 *     gdr=1, else sockets), ena (AWS ENA: sockets);
 *   - `link_layer` (our extension on <net>): "InfiniBand" or "Ethernet";
 *   - the PCI vendor of the NIC: 0x1d0f Amazon (EFA), 0x1ae0 Google (gVNIC: GPUDirect-TCPX when
 *     the port can move GPU memory, gdr=1, else sockets);
 *   - the device name the net plugin gives: mlx5_N / mlx4_N / ibpN (Mellanox verbs: InfiniBand
 *     unless the link layer says Ethernet), bnxt_re / irdma / erdma / hns / qedr / ionic / rocep
 *     (RDMA over Ethernet only), efa / rdmap (EFA), eth / ens / enp / eno / bond without gdr and
 *     NCCL's socket maxconn 65536 (sockets).
 * Every port of the node votes; the majority wins (ties: the first port).  Nothing to read = the
 * assumption InfiniBand, named in `why` so that outputs can say it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tune_internal.h"

static const char *const fabric_names[TT_FABRIC_COUNT] = {"ib", "roce", "efa", "tcpx", "socket"};
static const char *const fabric_titles[TT_FABRIC_COUNT] = {"InfiniBand", "RoCE", "AWS EFA", "GPUDirect-TCPX",
                                                           "TCP sockets"};

const char *tt_fabric_name(tt_fabric f) { return (unsigned)f < TT_FABRIC_COUNT ? fabric_names[f] : "?"; }
const char *tt_fabric_title(tt_fabric f) { return (unsigned)f < TT_FABRIC_COUNT ? fabric_titles[f] : "?"; }

const char *tt_fabric_origin_name(tt_fabric_origin o)
{
    return o == TT_FABRIC_GIVEN ? "given" : o == TT_FABRIC_DETECTED ? "detected" : "assumed";
}

tt_status tt_fabric_parse(const char *s, tt_fabric *out)
{
    static const struct {
        const char *name;
        tt_fabric f;
    } alias[] = {{"ib", TT_FABRIC_IB},         {"infiniband", TT_FABRIC_IB},  {"roce", TT_FABRIC_ROCE},
                 {"efa", TT_FABRIC_EFA},       {"tcpx", TT_FABRIC_TCPX},      {"tcpxo", TT_FABRIC_TCPX},
                 {"gpudirect-tcpx", TT_FABRIC_TCPX}, {"socket", TT_FABRIC_SOCKET}, {"sockets", TT_FABRIC_SOCKET},
                 {"tcp", TT_FABRIC_SOCKET}};
    for (size_t i = 0; s && i < sizeof alias / sizeof alias[0]; i++)
        if (!strcasecmp(s, alias[i].name)) {
            *out = alias[i].f;
            return TT_OK;
        }
    return tt_error_set(TT_ERR_INVALID, "unknown fabric '%s' (expected ib, roce, efa, tcpx or socket)", s ? s : "");
}

static int has_prefix(const char *s, const char *p) { return !strncasecmp(s, p, strlen(p)); }

/* the PCI vendor id of the device holding this NET port (0 = unknown) */
static unsigned pci_vendor_of(const tt_node *n)
{
    for (const tt_xml_node *x = n->xml; x; x = x->parent) {
        if (strcmp(x->name, "pci")) continue;
        const char *v = tt_xml_get(x, "vendor");
        return v ? (unsigned)strtoul(v, NULL, 16) : 0;
    }
    return 0;
}

/* one port's fabric; 0 = nothing to tell, 1 = inferred (an assumption), 2 = read off the file; why: what told it */
static int port_fabric(const tt_node *n, tt_fabric *f, char *why, size_t wl)
{
    const char *name = n->u.net.name;
    const char *ll = n->xml ? tt_xml_get(n->xml, TT_ATTR_LINK_LAYER) : NULL;
    const char *drv = n->xml ? tt_xml_get(n->xml, TT_ATTR_DRIVER) : NULL;
    unsigned vendor = pci_vendor_of(n);
    /* the kernel driver a live scan recorded */
    if (drv && !strcmp(drv, "efa")) {
        *f = TT_FABRIC_EFA;
        snprintf(why, wl, "port %s: driver efa", name);
        return 2;
    }
    if (drv && !strcmp(drv, "gve")) {
        *f = n->u.net.gdr ? TT_FABRIC_TCPX : TT_FABRIC_SOCKET;
        snprintf(why, wl, "port %s: driver gve (Google gVNIC)%s", name,
                 n->u.net.gdr ? " moving GPU memory (GPUDirect-TCPX)" : " without GPUDirect (sockets)");
        return 2;
    }
    if (drv && !strcmp(drv, "ena")) {
        *f = TT_FABRIC_SOCKET;
        snprintf(why, wl, "port %s: driver ena (AWS ENA: TCP sockets)", name);
        return 2;
    }
    if (vendor == 0x1d0f || has_prefix(name, "efa") || has_prefix(name, "rdmap")) {
        *f = TT_FABRIC_EFA;
        snprintf(why, wl, "port %s: %s", name, vendor == 0x1d0f ? "Amazon PCI device (EFA)" : "EFA device name");
        return 2;
    }
    if (vendor == 0x1ae0) {
        *f = n->u.net.gdr ? TT_FABRIC_TCPX : TT_FABRIC_SOCKET;
        snprintf(why, wl, "port %s: Google gVNIC%s", name,
                 n->u.net.gdr ? " that moves GPU memory (GPUDirect-TCPX)" : " without GPUDirect (sockets)");
        return 2;
    }
    static const char *const roce_only[] = {"bnxt_re", "irdma", "erdma", "hns", "qedr", "ionic", "rocep", "roce"};
    for (size_t i = 0; i < sizeof roce_only / sizeof roce_only[0]; i++)
        if (has_prefix(name, roce_only[i])) {
            *f = TT_FABRIC_ROCE;
            snprintf(why, wl, "port %s: an RDMA-over-Ethernet device", name);
            return 2;
        }
    int verbs = has_prefix(name, "mlx5") || has_prefix(name, "mlx4") || has_prefix(name, "ibp") ||
                has_prefix(name, "hfi1") || has_prefix(name, "qib");
    if (ll && !strcasecmp(ll, "InfiniBand")) {
        *f = TT_FABRIC_IB;
        snprintf(why, wl, "port %s: link layer InfiniBand", name);
        return 2;
    }
    if (ll && !strcasecmp(ll, "Ethernet") && (verbs || n->u.net.gdr || n->u.net.maxconn != 65536)) {
        *f = TT_FABRIC_ROCE;
        snprintf(why, wl, "port %s: RDMA device on an Ethernet link layer (RoCE)", name);
        return 2;
    }
    if (verbs) {
        *f = TT_FABRIC_IB;
        snprintf(why, wl, "port %s: verbs device, no link layer recorded: taken as InfiniBand", name);
        return 1; /* an inference: RoCE ports of the same device look the same in NCCL's dialect */
    }
    int ifname = has_prefix(name, "eth") || has_prefix(name, "ens") || has_prefix(name, "enp") ||
                 has_prefix(name, "eno") || has_prefix(name, "bond") || (ll && !strcasecmp(ll, "Ethernet"));
    if (ifname && !n->u.net.gdr) {
        *f = TT_FABRIC_SOCKET;
        snprintf(why, wl, "port %s: a network interface without GPUDirect (NCCL's socket transport)", name);
        return 2;
    }
    return 0;
}

tt_status tt_fabric_detect(const tt_topo *t, tt_fabric *out, tt_fabric_origin *origin, char *why, size_t wl)
{
    int votes[TT_FABRIC_COUNT] = {0}, sure[TT_FABRIC_COUNT] = {0}, first = -1;
    char first_why[TT_FABRIC_COUNT][200];
    memset(first_why, 0, sizeof first_why);
    int nports = 0;
    for (int i = 0; t && i < t->nnodes; i++) {
        const tt_node *n = &t->nodes[i];
        if (n->type != TT_NODE_NET) continue;
        nports++;
        tt_fabric f;
        char w[200];
        int k = port_fabric(n, &f, w, sizeof w);
        if (!k) continue;
        if (k == 2) sure[f] = 1;
        if (!votes[f]) snprintf(first_why[f], sizeof first_why[f], "%s", w);
        votes[f]++;
        if (first < 0) first = (int)f;
    }
    if (first < 0) {
        *out = TT_FABRIC_IB;
        *origin = TT_FABRIC_ASSUMED;
        snprintf(why, wl, "%s: assumed InfiniBand (say --fabric ib|roce|efa|tcpx|socket)",
                 nports ? "no NET port tells its fabric" : "the topology has no NET port");
        return TT_OK;
    }
    int best = first;
    for (int f = 0; f < TT_FABRIC_COUNT; f++)
        if (votes[f] > votes[best]) best = f;
    *out = (tt_fabric)best;
    *origin = sure[best] ? TT_FABRIC_DETECTED : TT_FABRIC_ASSUMED;
    int others = 0;
    for (int f = 0; f < TT_FABRIC_COUNT; f++)
        if (f != best) others += votes[f];
    snprintf(why, wl, "%s (%d of %d ports%s)", first_why[best], votes[best], nports,
             others ? "; the other ports differ: the majority is used" : "");
    return TT_OK;
}
