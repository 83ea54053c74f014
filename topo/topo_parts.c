/*
 * topo_parts.c - NVIDIA data-center GPU parts by PCI device id, and what the
 * graph builder assumes from them for a partial vendor file (issue #19).
 *
 * Cloud images ship NCCL topology files with only <cpu> and <pci>: GPUs and
 * NICs known by PCI class alone, no <gpu>, <net> or <nvlink>, often no device
 * ids.  For such a file:
 *   - a GPU whose <pci> has no <gpu> child has no NVLink information; when its
 *     part is known (device id in the table, or named with --gpu-part /
 *     TOPOTUNE_GPU_PART) the fabric of its board is synthesised: NVSwitch on
 *     8-GPU HGX baseboards, direct links on 4-GPU HGX boards; otherwise it
 *     stays PCIe-only and t->gpu_fabric_unknown counts it;
 *   - a NIC (PCI class 0x02xxxx) without <net> gets one port of assumed speed.
 * Every value filled this way is a finding in t->assumed ("..., not seen").
 *
 * Table facts are from NVIDIA's public data sheets (cited per row); device ids
 * from the public PCI id list (pci-ids.ucw.cz, vendor 10de).  "link_gbps" is
 * the nominal per-link, per-direction rate (NVLink 2/3/4: 25 GB/s, NVLink 5:
 * 50 GB/s); the graph carries NCCL's effective per-link figure for the part's
 * SM (tt_nvlink_bw_per_link), as for a file that lists the links.
 */
#include "tt_topo.h"
#include "tt_topo.h"
#include "topo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const tt_gpu_part parts[] = {
    /* Tesla V100 data sheet (2020): SXM2 "NVLink 300 GB/s" = 6 NVLink 2 links x 25 GB/s per
     * direction, PCIe Gen3.  HGX-1/DGX-1 wire SXM2 GPUs as a hybrid cube-mesh: which GPU
     * pairs are linked is not inferable from PCI ids. */
    {0x1db1, "V100-SXM2", "Tesla V100 SXM2 16GB", 70, 2, 6, 25.0, TT_BOARD_MESH, 0, 3,
     "NVIDIA Tesla V100 data sheet; pci.ids 10de:1db1"},
    {0x1db5, "V100-SXM2", "Tesla V100 SXM2 32GB", 70, 2, 6, 25.0, TT_BOARD_MESH, 0, 3,
     "NVIDIA Tesla V100 data sheet; pci.ids 10de:1db5"},
    /* DGX-2 / HGX-2 data sheet: 16 V100 SXM3 on two baseboards of 8 GPUs + 6 NVSwitches */
    {0x1db8, "V100-SXM3", "Tesla V100 SXM3 32GB", 70, 2, 6, 25.0, TT_BOARD_NVSWITCH, 0, 3,
     "NVIDIA DGX-2 data sheet; pci.ids 10de:1db8"},
    {0x1db4, "V100-PCIE", "Tesla V100 PCIe 16GB", 70, 0, 0, 0.0, TT_BOARD_NONE, 0, 3,
     "NVIDIA Tesla V100 data sheet (PCIe: no NVLink); pci.ids 10de:1db4"},
    {0x1db6, "V100-PCIE", "Tesla V100 PCIe 32GB", 70, 0, 0, 0.0, TT_BOARD_NONE, 0, 3,
     "NVIDIA Tesla V100 data sheet (PCIe: no NVLink); pci.ids 10de:1db6"},
    /* A100 data sheet: SXM "NVLink 600 GB/s" = 12 NVLink 3 links x 25 GB/s, PCIe Gen4;
     * HGX A100 8-GPU (6 NVSwitches) and 4-GPU (direct, 4 links per pair) boards;
     * PCIe cards: "NVIDIA NVLink Bridge for 2 GPUs: 600 GB/s" (optional). */
    {0x20b0, "A100-SXM", "A100 SXM4 40GB", 80, 3, 12, 25.0, TT_BOARD_NVSWITCH, 4, 4,
     "NVIDIA A100 Tensor Core GPU data sheet; pci.ids 10de:20b0"},
    {0x20b2, "A100-SXM", "A100 SXM4 80GB", 80, 3, 12, 25.0, TT_BOARD_NVSWITCH, 4, 4,
     "NVIDIA A100 Tensor Core GPU data sheet; pci.ids 10de:20b2"},
    {0x20f1, "A100-PCIE", "A100 PCIe 40GB", 80, 3, 12, 25.0, TT_BOARD_BRIDGE, 0, 4,
     "NVIDIA A100 Tensor Core GPU data sheet; pci.ids 10de:20f1"},
    {0x20b5, "A100-PCIE", "A100 PCIe 80GB", 80, 3, 12, 25.0, TT_BOARD_BRIDGE, 0, 4,
     "NVIDIA A100 Tensor Core GPU data sheet; pci.ids 10de:20b5"},
    /* H100 data sheet: SXM "NVLink 900 GB/s" = 18 NVLink 4 links x 25 GB/s, PCIe Gen5;
     * HGX H100 8-GPU (4 NVSwitches) and 4-GPU (direct) boards; PCIe and NVL cards:
     * "NVLink 600 GB/s" through optional bridges. */
    {0x2330, "H100-SXM", "H100 SXM5 80GB", 90, 4, 18, 25.0, TT_BOARD_NVSWITCH, 6, 5,
     "NVIDIA H100 Tensor Core GPU data sheet; pci.ids 10de:2330"},
    {0x2331, "H100-PCIE", "H100 PCIe", 90, 4, 12, 25.0, TT_BOARD_BRIDGE, 0, 5,
     "NVIDIA H100 Tensor Core GPU data sheet; pci.ids 10de:2331"},
    {0x2321, "H100-NVL", "H100 NVL", 90, 4, 12, 25.0, TT_BOARD_BRIDGE, 0, 5,
     "NVIDIA H100 Tensor Core GPU data sheet; pci.ids 10de:2321"},
    /* H200 data sheet: SXM "NVLink 900 GB/s", PCIe Gen5; HGX H200 8-GPU and 4-GPU boards;
     * H200 NVL: "2- or 4-way NVIDIA NVLink bridge: 900 GB/s" (optional). */
    {0x2335, "H200-SXM", "H200 SXM 141GB", 90, 4, 18, 25.0, TT_BOARD_NVSWITCH, 6, 5,
     "NVIDIA H200 Tensor Core GPU data sheet; pci.ids 10de:2335"},
    {0x233b, "H200-NVL", "H200 NVL", 90, 4, 18, 25.0, TT_BOARD_BRIDGE, 0, 5,
     "NVIDIA H200 Tensor Core GPU data sheet; pci.ids 10de:233b"},
    /* HGX/DGX B200 data sheets: fifth-generation NVLink 1.8 TB/s per GPU = 18 links x 50 GB/s,
     * 8-GPU baseboard with NVSwitch; host interface PCIe Gen5 x16 (MLPerf system descriptions). */
    {0x2901, "B200-SXM", "B200", 100, 5, 18, 50.0, TT_BOARD_NVSWITCH, 0, 5,
     "NVIDIA DGX B200 / HGX B200 data sheets; pci.ids 10de:2901"},
};

#define NPARTS ((int)(sizeof parts / sizeof parts[0]))

int tt_gpu_part_count(void) { return NPARTS; }

const tt_gpu_part *tt_gpu_part_at(int i) { return i >= 0 && i < NPARTS ? &parts[i] : NULL; }

const tt_gpu_part *tt_gpu_part_by_id(unsigned device_id)
{
    for (int i = 0; i < NPARTS; i++)
        if (parts[i].device_id == device_id)
            return &parts[i];
    return NULL;
}

/* "H100 SXM", "h100_sxm", "H100-SXM5" -> "H100-SXM" style key: upper case, '-' for ' '/'_' */
static void part_key(const char *in, char *out, size_t cap)
{
    size_t k = 0;
    for (; in && *in && k + 1 < cap; in++) {
        char c = *in;
        if (c == ' ' || c == '_')
            c = '-';
        else if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        out[k++] = c;
    }
    out[k] = 0;
}

const tt_gpu_part *tt_gpu_part_by_name(const char *name)
{
    char key[64], row[64];
    if (!name || !*name)
        return NULL;
    part_key(name, key, sizeof key);
    /* common spellings: B200 alone, SXM5/SXM4 suffixes, PCIe/PCIE */
    if (!strcmp(key, "B200"))
        snprintf(key, sizeof key, "B200-SXM");
    size_t l = strlen(key);
    if (l > 4 && (!strcmp(key + l - 4, "SXM5") || !strcmp(key + l - 4, "SXM4")) &&
        strncmp(key, "V100", 4))
        key[l - 1] = 0;
    for (int i = 0; i < NPARTS; i++) {
        part_key(parts[i].name, row, sizeof row);
        if (!strcmp(key, row))
            return &parts[i];
    }
    return NULL;
}

const char *tt_board_kind_name(tt_board_kind b)
{
    switch (b) {
    case TT_BOARD_NONE: return "none";
    case TT_BOARD_NVSWITCH: return "nvswitch";
    case TT_BOARD_BRIDGE: return "bridge";
    case TT_BOARD_MESH: return "mesh";
    }
    return "?";
}

/* ---------------------------------------------------------- inference */

static int has_child(const tt_xml_node *n, const char *name)
{
    for (int i = 0; n && i < n->nchildren; i++)
        if (tt_topo__is(n->children[i], name))
            return 1;
    return 0;
}

/* A GPU without <gpu> child that no one probed: a partial (vendor) file.  Our own scan
 * marks a GPU it could not probe with <unknown attr="gpu">: left as the scan says. */
static int partial_gpu(const tt_node *n)
{
    if (n->type != TT_NODE_GPU || !n->xml || has_child(n->xml, TT_ELEM_GPU))
        return 0;
    for (int i = 0; i < n->xml->nchildren; i++) {
        const tt_xml_node *c = n->xml->children[i];
        const char *a = tt_topo__is(c, "unknown") ? tt_topo__attr(c, "attr") : NULL;
        if (a && !strcmp(a, TT_ELEM_GPU))
            return 0;
    }
    return 1;
}

typedef struct {
    int node;                /* GPU node index */
    const tt_gpu_part *part; /* NULL: unknown */
    char how[96];            /* "device id 0x2330" / "--gpu-part H100-SXM (no device id in the file)" */
    char why[200];           /* why the fabric stays unknown ("" when inferred) */
    int done;                /* grouped (infer_group) */
    int reported;            /* its unknown-fabric warning is written */
} gpu_guess;

static tt_status add_nvs(tt_topo *t, int *nvs)
{
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].type == TT_NODE_NVS) {
            *nvs = i;
            return TT_OK;
        }
    tt_status st = tt_topo__add_node(t, TT_NODE_NVS, nvs);
    if (st != TT_OK)
        return st;
    tt_node *n = &t->nodes[*nvs];
    snprintf(n->name, sizeof n->name, "NVS%d", n->id);
    n->host = -1;
    n->xml = NULL;
    n->line = 0;
    return TT_OK;
}

static const char *part_env_or_opt(const tt_topo *t)
{
    if (t->opts.gpu_part && *t->opts.gpu_part)
        return t->opts.gpu_part;
    const char *e = tt_setting("TOPOTUNE_GPU_PART");
    return e && *e ? e : NULL;
}

/* Resolve the part of one GPU without <gpu> child. */
static tt_status resolve(tt_topo *t, gpu_guess *g, const char *named, const tt_gpu_part *named_part)
{
    const tt_node *n = &t->nodes[g->node];
    const tt_xml_node *el = n->xml;
    long long dev = -1, ven = -1;
    if (tt_topo__read_ll(el, TT_ATTR_DEVICE, &dev, NULL) != TT_ATTR_OK)
        dev = -1;
    if (tt_topo__read_ll(el, TT_ATTR_VENDOR, &ven, NULL) != TT_ATTR_OK)
        ven = -1;
    if (dev >= 0 && (ven < 0 || ven == 0x10de)) {
        g->part = tt_gpu_part_by_id((unsigned)dev);
        snprintf(g->how, sizeof g->how, "device id 0x%04llx", dev);
        if (!g->part) {
            snprintf(g->why, sizeof g->why, "device id 0x%04llx is not in the part table", dev);
            return TT_OK;
        }
        if (named_part && named_part != g->part && strcmp(named_part->name, g->part->name))
            return tt_findings_add(&t->assumed, TT_SEV_WARN, "gpu-part-ignored", n->line, n->busid,
                                   "--gpu-part/TOPOTUNE_GPU_PART %s ignored: the file's device id "
                                   "0x%04llx names %s",
                                   named, dev, g->part->product);
        return TT_OK;
    }
    if (dev >= 0) {
        snprintf(g->why, sizeof g->why, "vendor 0x%04llx is not NVIDIA", ven);
        return TT_OK;
    }
    if (named_part) {
        g->part = named_part;
        snprintf(g->how, sizeof g->how, "part given by option (%s), no device id in the file", named);
        return TT_OK;
    }
    snprintf(g->why, sizeof g->why, "no device id in the file and no part named "
             "(--gpu-part or TOPOTUNE_GPU_PART)");
    return TT_OK;
}

static void fabric_desc(const tt_gpu_part *p, char *out, size_t cap)
{
    snprintf(out, cap, "%s: NVLink %d, %d links x %.0f GB/s per direction, sm %d.%d", p->product,
             p->nvlink_gen, p->links, p->link_gbps, p->sm / 10, p->sm % 10);
}

/* GPUs of host h with the same part, all still unresolved fabric-wise. */
static tt_status infer_group(tt_topo *t, gpu_guess *gs, int ng, int first)
{
    const tt_gpu_part *p = gs[first].part;
    int host = t->nodes[gs[first].node].host;
    int idx[64], n = 0, over = 0;
    for (int i = first; i < ng; i++) {
        if (gs[i].part != p || t->nodes[gs[i].node].host != host || gs[i].done)
            continue;
        if (n < 64)
            idx[n++] = i;
        else
            over = 1;
        gs[i].done = 1;
    }
    double per = tt_nvlink_bw_per_link(p->sm);
    char desc[200];
    fabric_desc(p, desc, sizeof desc);
    const char *reason = NULL;
    char rbuf[200];
    int mesh = 0, nvs = -1;
    if (over) {
        reason = "more than 64 GPUs of one part on one host";
    } else if (p->board == TT_BOARD_NONE) {
        reason = NULL; /* known: PCIe only */
    } else if (p->board == TT_BOARD_BRIDGE) {
        snprintf(rbuf, sizeof rbuf, "%s is a PCIe card: NVLink bridges (%d links) are optional "
                 "and not assumed", p->product, p->links);
        reason = rbuf;
    } else if (p->board == TT_BOARD_MESH) {
        snprintf(rbuf, sizeof rbuf, "%s boards wire NVLink as a mesh whose pairs cannot be "
                 "inferred", p->product);
        reason = rbuf;
    } else if (n == 8 || (n == 16 && p->sm == 70)) {
        tt_status st = add_nvs(t, &nvs);
        if (st != TT_OK)
            return st;
    } else if (n == 4 && p->mesh4_links > 0) {
        mesh = 1;
    } else if (n > 1) {
        snprintf(rbuf, sizeof rbuf, "%d %s GPUs on one host: no HGX board of that size is known",
                 n, p->product);
        reason = rbuf;
    }
    for (int k = 0; k < n; k++) {
        gpu_guess *g = &gs[idx[k]];
        tt_node *gn = &t->nodes[g->node];
        tt_status st = TT_OK;
        if (gn->u.gpu.sm <= 0) {
            gn->u.gpu.sm = p->sm;
        }
        if (reason) {
            snprintf(g->why, sizeof g->why, "%s", reason);
            st = tt_findings_add(&t->assumed, TT_SEV_INFO, "inferred-sm", gn->line, gn->busid,
                                 "compute capability %d.%d inferred from %s (%s), not seen",
                                 p->sm / 10, p->sm % 10, g->how, p->product);
        } else if (p->board == TT_BOARD_NONE) {
            g->why[0] = 0;
            st = tt_findings_add(&t->assumed, TT_SEV_INFO, "inferred-nvlink", gn->line, gn->busid,
                                 "inferred from %s (%s): no NVLink (PCIe Gen%d card), sm %d.%d, "
                                 "not seen",
                                 g->how, p->product, p->pcie_gen, p->sm / 10, p->sm % 10);
        } else if (nvs >= 0) {
            g->why[0] = 0;
            st = tt_topo__link(t, g->node, nvs, TT_LINK_NVL, p->links * per, 0);
            if (st == TT_OK)
                st = tt_findings_add(&t->assumed, TT_SEV_INFO, "inferred-nvlink", gn->line,
                                     gn->busid,
                                     "inferred from %s (%s): %d links via NVSwitch (HGX %d-GPU "
                                     "baseboard assumed), not seen; modelled at %.1f GB/s per link",
                                     g->how, desc, p->links, n == 16 ? 8 : n, per);
        } else if (mesh) {
            g->why[0] = 0;
            for (int m = 0; m < n && st == TT_OK; m++)
                if (m != k)
                    st = tt_topo__link_one(t, g->node, gs[idx[m]].node, TT_LINK_NVL,
                                           p->mesh4_links * per, 0);
            if (st == TT_OK)
                st = tt_findings_add(&t->assumed, TT_SEV_INFO, "inferred-nvlink", gn->line,
                                     gn->busid,
                                     "inferred from %s (%s): %d links to each of the 3 other GPUs "
                                     "(HGX 4-GPU board assumed, no NVSwitch), not seen; modelled "
                                     "at %.1f GB/s per link",
                                     g->how, desc, p->mesh4_links, per);
        } else {
            /* a single GPU of that part: nothing to link */
            g->why[0] = 0;
            st = tt_findings_add(&t->assumed, TT_SEV_INFO, "inferred-sm", gn->line, gn->busid,
                                 "inferred from %s (%s): single GPU, no NVLink peer; sm %d.%d, "
                                 "not seen",
                                 g->how, p->product, p->sm / 10, p->sm % 10);
        }
        if (st != TT_OK)
            return st;
    }
    if (nvs >= 0)
        return tt_findings_add(&t->assumed, TT_SEV_INFO, "inferred-nvswitch", 0,
                               t->nodes[nvs].name,
                               "NVSwitch fabric synthesised for %d %s GPUs (NVLink %d, %d links "
                               "per GPU, %.0f GB/s per link per direction nominal): not seen",
                               n, p->product, p->nvlink_gen, p->links, p->link_gbps);
    return TT_OK;
}

static tt_status infer_gpus(tt_topo *t)
{
    const char *named = part_env_or_opt(t);
    const tt_gpu_part *named_part = NULL;
    tt_status st;
    int ng = 0;
    int partial = 0; /* GPUs without <gpu> child: only they use the part */
    for (int i = 0; i < t->nnodes; i++)
        partial += partial_gpu(&t->nodes[i]);
    if (!partial)
        return TT_OK;
    if (named && !(named_part = tt_gpu_part_by_name(named))) {
        char list[400] = "";
        for (int i = 0; i < NPARTS; i++)
            if (!i || strcmp(parts[i].name, parts[i - 1].name)) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", parts[i].name);
            }
        return tt_error_set(TT_ERR_INVALID, "GPU part '%s' is not in the part table (known: %s)",
                            named, list);
    }
    for (int i = 0; i < t->nnodes; i++)
        ng += t->nodes[i].type == TT_NODE_GPU;
    if (!ng)
        return TT_OK;
    gpu_guess *gs = calloc((size_t)ng, sizeof *gs);
    if (!gs)
        return tt_error_set(TT_ERR_NOMEM, "out of memory");
    int k = 0;
    for (int i = 0; i < t->nnodes; i++) {
        const tt_node *n = &t->nodes[i];
        /* a <gpu> child means NCCL (or the scan) probed the GPU: absent <nvlink> is "none" */
        if (!partial_gpu(n))
            continue;
        gs[k].node = i;
        if ((st = resolve(t, &gs[k], named, named_part)) != TT_OK)
            goto out;
        k++;
    }
    ng = k;
    for (int i = 0; i < ng; i++)
        if (gs[i].part && !gs[i].done && (st = infer_group(t, gs, ng, i)) != TT_OK)
            goto out;
    /* what stays unknown: one warning per reason */
    for (int i = 0; i < ng; i++) {
        if (!gs[i].why[0] || gs[i].reported)
            continue;
        int cnt = 0;
        for (int j = i; j < ng; j++)
            if (!gs[j].reported && !strcmp(gs[j].why, gs[i].why)) {
                cnt++;
                gs[j].reported = 1;
            }
        const tt_node *n = &t->nodes[gs[i].node];
        char where[128];
        snprintf(where, sizeof where, cnt > 1 ? "%s and %d other GPU(s)" : "%s", n->busid, cnt - 1);
        t->gpu_fabric_unknown += cnt;
        if ((st = tt_findings_add(&t->assumed, TT_SEV_WARN, "gpu-interconnect-unknown", n->line,
                                  where,
                                  "GPU interconnect unknown: modelled as PCIe (no <gpu>/<nvlink> "
                                  "in the file; %s)",
                                  gs[i].why)) != TT_OK)
            goto out;
    }
    st = TT_OK;
out:
    free(gs);
    return st;
}

/* Speed assumed for a NIC port the file does not describe, from the NIC's PCIe link:
 * Gen5 x16 -> 400 Gb/s (NDR / 400GbE), Gen4 -> 200 Gb/s (HDR / 200GbE), else 100 Gb/s. */
static double nic_speed_guess(const tt_xml_node *el, double *gts_out)
{
    double gts = tt_topo__attr_gts(el, TT_ATTR_LINK_SPEED);
    *gts_out = gts;
    if (gts >= 32)
        return 400000;
    if (gts >= 16)
        return 200000;
    return 100000;
}

static tt_status infer_nics(tt_topo *t)
{
    int nnet = 0, n0 = t->nnodes;
    for (int i = 0; i < n0; i++)
        if (t->nodes[i].type == TT_NODE_NET && t->nodes[i].u.net.dev >= nnet)
            nnet = t->nodes[i].u.net.dev + 1;
    for (int i = 0; i < n0; i++) {
        tt_node *nic = &t->nodes[i];
        long long cls = -1;
        double gts;
        int idx;
        /* only NICs nobody probed: a <nic> child means detection ran and its ports are what it
         * recorded (none left, e.g. when a cluster's model drops ports that are down) */
        if (nic->type != TT_NODE_NIC || nic->u.nic.ports > 0 || !nic->xml ||
            !tt_topo__is(nic->xml, TT_ELEM_PCI) || tt_xml_first_child(nic->xml, TT_ELEM_NIC))
            continue;
        if (tt_topo__read_ll(nic->xml, TT_ATTR_CLASS, &cls, NULL) != TT_ATTR_OK)
            cls = -1;
        const char *kind = (cls >> 8) == 0x0207 ? "InfiniBand" : (cls >> 8) == 0x0200 ? "Ethernet"
                                                                                       : "network";
        double mbps = nic_speed_guess(nic->xml, &gts);
        tt_status st = tt_topo__add_node(t, TT_NODE_NET, &idx);
        if (st != TT_OK)
            return st;
        nic = &t->nodes[i]; /* the array may have moved */
        tt_node *n = &t->nodes[idx];
        n->xml = NULL;
        n->line = 0;
        n->host = nic->host;
        snprintf(n->u.net.name, sizeof n->u.net.name, "%s-%s",
                 (cls >> 8) == 0x0207 ? "ib" : "eth", nic->busid[0] ? nic->busid : "?");
        snprintf(n->name, sizeof n->name, "%s", n->u.net.name);
        n->u.net.dev = nnet++;
        n->u.net.port = 1;
        n->u.net.gdr = -1;
        n->u.net.speed_mbps = mbps;
        nic->u.nic.ports = 1;
        if ((st = tt_topo__link(t, i, idx, TT_LINK_NET, tt_net_bw(mbps), 0)) != TT_OK)
            return st;
        char pcie[48];
        if (gts > 0)
            snprintf(pcie, sizeof pcie, "its PCIe link runs at %g GT/s", gts);
        else
            snprintf(pcie, sizeof pcie, "its PCIe link speed is not given");
        if ((st = tt_findings_add(&t->assumed, TT_SEV_INFO, "inferred-net", nic->line, nic->busid,
                                  "%s NIC from PCI class 0x%06llx without <net>: one port '%s' "
                                  "assumed (real name unknown), speed %.0f Gb/s assumed (%s), "
                                  "GPUDirect RDMA unknown; not seen",
                                  kind, cls < 0 ? 0 : cls, n->u.net.name, mbps / 1000, pcie)) != TT_OK)
            return st;
    }
    return TT_OK;
}

/* A probed NVIDIA GPU (a <gpu> child) without sm, as hwloc exports give it:
 * the compute capability of the part its PCI device id names.  Before the
 * links are built: NVLink bandwidth per link depends on sm. */
tt_status tt_topo__infer_sm(tt_topo *t)
{
    for (int i = 0; i < t->nnodes; i++) {
        tt_node *n = &t->nodes[i];
        long long dev = -1, ven = -1;
        const tt_gpu_part *p;
        if (n->type != TT_NODE_GPU || n->u.gpu.amd || n->u.gpu.sm > 0 || !n->xml ||
            partial_gpu(n))
            continue;
        if (tt_topo__read_ll(n->xml, TT_ATTR_DEVICE, &dev, NULL) != TT_ATTR_OK)
            continue;
        if (tt_topo__read_ll(n->xml, TT_ATTR_VENDOR, &ven, NULL) != TT_ATTR_OK)
            ven = -1;
        if ((ven >= 0 && ven != 0x10de) || dev < 0 || !(p = tt_gpu_part_by_id((unsigned)dev)))
            continue;
        n->u.gpu.sm = p->sm;
        n->u.gpu.cc = p->sm;
        tt_status st = tt_findings_add(&t->assumed, TT_SEV_INFO, "inferred-sm", n->line, n->busid,
                                       "compute capability %d.%d inferred from device id 0x%04llx "
                                       "(%s): the file gives no sm",
                                       p->sm / 10, p->sm % 10, dev, p->product);
        if (st != TT_OK)
            return st;
    }
    return TT_OK;
}

tt_status tt_topo__infer_partial(tt_topo *t)
{
    tt_status st = infer_gpus(t);
    if (st == TT_OK)
        st = infer_nics(t);
    return st;
}

void tt_gpu_part_names(char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    for (int i = 0; i < tt_gpu_part_count(); i++) {
        const tt_gpu_part *p = tt_gpu_part_at(i);
        if (i && !strcmp(p->name, tt_gpu_part_at(i - 1)->name)) continue;
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", l ? ", " : "", p->name);
    }
}
