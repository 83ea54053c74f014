/*
 * tune_sanity.c - the sanity gate: findings when a prediction is absurd for the hardware
 * the topology describes (docs/model.md, "Sanity checks").  Real files taken in VMs, from
 * vendors or with probes missing produced confident tables 20-35x below the hardware;
 * these checks say what the table had to assume and how to get a better file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tt_tune.h"
#include "tune_internal.h"

#define FIX_RESCAN "rerun `topo-dump -o FILE` on the bare node (or take NCCL_TOPO_DUMP_FILE from a NCCL run there)"

/* NVLink parts.  A small table until the NVIDIA part table (topo/topo_parts.c) is there to
 * ask: SXM/NVL module device ids say yes, PCIe card ids say no, an unknown id falls back to
 * the architecture: the data-center arches (sm 70, 80, 90, 100) ship as NVLink modules in
 * HGX/DGX boards, which is what a file without device ids most often comes from. */
int tt_tune_nvlink_part(int sm, unsigned device, int amd)
{
    static const unsigned nvlink_ids[] = {
        0x1db1, 0x1db5, 0x1db8, 0x1df5,         /* V100 SXM2/SXM3 */
        0x20b0, 0x20b2, 0x20b3, 0x20bd,         /* A100 SXM4 40/80 GB, A800 SXM */
        0x2330, 0x2324, 0x2335, 0x233a, 0x233b, /* H100 SXM5, H800, H200, H20 */
        0x2901, 0x2941, 0x2900,                 /* B200, GB200, B100 */
    };
    static const unsigned pcie_ids[] = {
        0x1db4, 0x1db6, 0x20b5, 0x20f1, 0x20f3, /* V100 PCIe, A100 PCIe, A800 PCIe */
        0x2331, 0x2322, 0x2321, 0x26b5, 0x26b9, /* H100 PCIe, H800 PCIe, H100 NVL, L40, L40S */
        0x27b8, 0x2236, 0x1eb8,                 /* L4, A10, T4 */
    };
    if (amd) return 0;
    /* the GPU part table first (topo_parts.c: SXM modules have NVLink on their board; PCIe cards
     * only with optional bridges), then the parts it does not list, then the architecture */
    const tt_gpu_part *part = device ? tt_gpu_part_by_id(device) : NULL;
    if (part) return part->board == TT_BOARD_NVSWITCH || part->board == TT_BOARD_MESH;
    for (size_t i = 0; i < sizeof nvlink_ids / sizeof *nvlink_ids; i++)
        if (device == nvlink_ids[i]) return 1;
    for (size_t i = 0; i < sizeof pcie_ids / sizeof *pcie_ids; i++)
        if (device == pcie_ids[i]) return 0;
    return sm == 70 || sm == 80 || sm == 90 || sm == 100;
}

static unsigned gpu_device(const tt_node *n, int *amd)
{
    const char *d = n->xml ? tt_xml_get(n->xml, TT_ATTR_DEVICE) : NULL;
    const char *v = n->xml ? tt_xml_get(n->xml, TT_ATTR_VENDOR) : NULL;
    /* the vendor rule of topo_vendor.c (vendor id, RCCL's gcn/arch, xGMI links, AMD classes): an AMD GPU
     * known only by `arch` and class 0x0380 is AMD too, never an "NVLink part" for its sm-like number */
    *amd = (v && !strcasecmp(v, "0x1002")) || !strcmp(tt_topo_gpu_vendor(n, NULL, 0), "AMD");
    return d ? (unsigned)strtoul(d, NULL, 16) : 0;
}

tt_status tt_tune_sanity_check(const tt_tune_ctx *ctx, tt_findings *out)
{
    if (!ctx || !out) return tt_error_set(TT_ERR_INVALID, "tt_tune_sanity_check: NULL argument");
    const tt_topo *t = ctx->topo;
    const tt_cluster *c = &ctx->cl;
    tt_status st = TT_OK;

    /* the GPUs and what joins them */
    int ngpu = 0, unknown = 0, nvlpart = 0, amd_any = 0, sm = 0;
    unsigned dev = 0;
    int first_unknown = -1;
    double best_bw = 0;
    tt_path_type best_type = TT_PATH_DIS;
    for (int i = 0; i < t->nnodes; i++) {
        const tt_node *a = &t->nodes[i];
        if (a->type != TT_NODE_GPU) continue;
        int amd;
        unsigned d = gpu_device(a, &amd);
        amd_any |= amd;
        if (a->u.gpu.sm <= 0 && !d) {
            if (first_unknown < 0) first_unknown = a->id;
            unknown++;
        }
        if (tt_tune_nvlink_part(a->u.gpu.sm, d, amd) && (a->u.gpu.sm > 0 || d)) {
            nvlpart++;
            sm = a->u.gpu.sm;
            dev = d;
        }
        ngpu++;
        for (int j = 0; j < t->nnodes; j++) {
            if (j == i || t->nodes[j].type != TT_NODE_GPU) continue;
            const tt_path *p = tt_topo_path(t, i, j);
            if (!p || p->nhops < 0) continue;
            if (p->type < best_type || (p->type == best_type && p->bw > best_bw)) {
                best_type = p->type;
                best_bw = p->bw;
            }
        }
    }
    /* best path bandwidth may sit on a worse class (NVB through a GPU...): take the widest too */
    double widest = 0;
    for (int i = 0; i < t->nnodes; i++)
        for (int j = 0; j < t->nnodes; j++) {
            if (i == j || t->nodes[i].type != TT_NODE_GPU || t->nodes[j].type != TT_NODE_GPU) continue;
            const tt_path *p = tt_topo_path(t, i, j);
            if (p && p->nhops >= 0 && p->bw > widest) widest = p->bw;
        }

    if (unknown > 0)
        st = tt_findings_add(out, TT_SEV_WARN, "gpu-unknown", 0, "topology",
                             "%d of %d GPUs (first GPU %d) have no <gpu> element or device id: their model is unknown, "
                             "so the table cannot know about NVLink and assumes PCIe only between them; fix: %s, or "
                             "add the <gpu> elements (sm, NVLinks) to the file",
                             unknown, ngpu, first_unknown, FIX_RESCAN);
    if (st == TT_OK && !amd_any && nvlpart >= 2 && c->gpus_per_node >= 2 && best_type > TT_PATH_NVB) {
        char what[64];
        if (dev) snprintf(what, sizeof what, "device 0x%04x, sm %d", dev, sm);
        else snprintf(what, sizeof what, "sm %d", sm);
        st = tt_findings_add(out, TT_SEV_WARN, "nvlink-missing", 0, "topology",
                             "%d GPUs are NVLink parts (%s) but no GPU pair is joined by NVLink in the file (best pair "
                             "%s at %.1f GB/s), so the table assumes that between GPUs; fix: files from VMs or "
                             "containers often lack NVLinks: %s; if NVLinks are really down, `nvidia-smi nvlink -s` "
                             "says which",
                             nvlpart, what, tune_path_name(best_type), best_bw, FIX_RESCAN);
    }
    if (st != TT_OK || ctx->nranks < 2) return st;

    tt_algo a;
    tt_proto p;
    tt_tune_estimate e;
    if ((st = tt_tune_best(ctx, TT_COLL_ALLREDUCE, TT_SANITY_BYTES, 0, &a, &p, &e)) != TT_OK) return st;
    double ref = c->gpus_per_node >= 2 ? widest : 0;
    const char *refwhat = "the best GPU-GPU path";
    if (ctx->nnodes > 1 && ctx->ch.node_net_bw > 0 && (ref == 0 || ctx->ch.node_net_bw < ref)) {
        ref = ctx->ch.node_net_bw;
        refwhat = "the node's network bandwidth";
    }
    if (e.busbw < TT_SANITY_MIN_BUSBW) {
        st = tt_findings_add(out, TT_SEV_WARN, "busbw-absurd", 0, "allreduce 1 GiB",
                             "predicted busbw %.3f GB/s (%s/%s on %d ranks) is below %.0f GB/s, which no GPU system "
                             "runs at: the file's links are missing or wrong (best GPU pair %s at %.2f GB/s); fix: "
                             "%s, then check every GPU's link_speed/link_width and NVLinks (`topo-dump --check`)",
                             e.busbw, tt_algo_name(a), tt_proto_name(p), ctx->nranks, TT_SANITY_MIN_BUSBW,
                             ngpu >= 2 ? tune_path_name(best_type) : "n/a", best_bw, FIX_RESCAN);
    } else if (ref > 0 && e.busbw < TT_SANITY_LINK_FRACTION * ref) {
        st = tt_findings_add(out, TT_SEV_WARN, "busbw-below-links", 0, "allreduce 1 GiB",
                             "predicted busbw %.2f GB/s (%s/%s on %d ranks) is %.1f%% of %s (%.1f GB/s): the model "
                             "could not use the links the file has (a GPU or NIC without a path, a slow link on the "
                             "way); fix: compare `topo-dump --format matrix` with `nvidia-smi topo -m` on the node and "
                             "`topo-tune --explain 1G` for what limits each algorithm",
                             e.busbw, tt_algo_name(a), tt_proto_name(p), ctx->nranks, 100.0 * e.busbw / ref, refwhat, ref);
    }
    return st;
}
