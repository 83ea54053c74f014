/*
 * tune_names.c - names and parsers of models and link classes (collective names are in
 * common/common_names.c), and
 * the cluster description (defaults from the topology, validation); the models' shared counts
 * (tune_log2i, tune_exec_chunks).
 */
#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "tune_internal.h"

static const char *lclass_names[TT_LCLASS_COUNT] = {"NVL", "C2C", "PCI", "SYS", "NET"};

const char *tt_model_name(tt_model_kind m) { return m == TT_MODEL_NCCL ? "nccl" : "topotune"; }
const char *tt_link_class_name(tt_link_class c)
{
    return (unsigned)c < TT_LCLASS_COUNT ? lclass_names[c] : "?";
}

tt_link_class tune_link_class_of(tt_path_type t)
{
    switch (t) {
    case TT_PATH_LOC:
    case TT_PATH_NVL:
    case TT_PATH_NVB: return TT_LCLASS_NVL;
    case TT_PATH_C2C: return TT_LCLASS_C2C;
    case TT_PATH_SYS: return TT_LCLASS_SYS;
    case TT_PATH_NET:
    case TT_PATH_DIS: return TT_LCLASS_NET;
    default: return TT_LCLASS_PCI;
    }
}

const char *tune_path_name(tt_path_type t)
{
    static const char *n[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
    return (unsigned)t <= TT_PATH_DIS ? n[t] : "?";
}

/* two counts every model shares (tune_model_*.c): floor(log2 n), and the pipeline chunks of `bytes`
 * in pieces of `chunk` (ceil, at least 1) */
int tune_log2i(long n)
{
    int l = 0;
    while (n > 1) { n >>= 1; l++; }
    return l;
}

double tune_exec_chunks(double bytes, double chunk)
{
    double k = ceil(bytes / chunk - 1e-9);
    return k < 1 ? 1 : k;
}

tt_status tt_model_parse(const char *s, tt_model_kind *out)
{
    if (s && !strcasecmp(s, "nccl")) { *out = TT_MODEL_NCCL; return TT_OK; }
    if (s && !strcasecmp(s, "topotune")) { *out = TT_MODEL_TOPOTUNE; return TT_OK; }
    return tt_error_set(TT_ERR_INVALID, "unknown model '%s' (expected topotune or nccl)", s ? s : "");
}

tt_status tt_cluster_from_topo(const tt_topo *t, tt_cluster *c)
{
    memset(c, 0, sizeof(*c));
    if (!t) return tt_error_set(TT_ERR_INVALID, "tune: no topology");
    c->nodes = 1;
    c->cpu_vendor = TT_CPU_OTHER;
    int first = 1, xgmi_links = 0;
    for (int i = 0; i < t->nnodes; i++) {
        const tt_node *n = &t->nodes[i];
        switch (n->type) {
        case TT_NODE_GPU:
            c->topo_gpus++;
        {   /* AMD GPUs: the mapped class, not RCCL's sm (topo_amd.c) */
            int cc = n->u.gpu.amd ? n->u.gpu.cc : n->u.gpu.sm;
            if (first || cc < c->min_sm) c->min_sm = cc;
            if (first || cc > c->max_sm) c->max_sm = cc;
        }
            if (first) c->xgmi = n->u.gpu.amd;
            else if (!n->u.gpu.amd) c->xgmi = 0;
            first = 0;
            for (int l = 0; l < n->nlinks; l++) {
                int p = n->links[l].peer;
                if (p >= 0 && p < t->nnodes && t->nodes[p].type == TT_NODE_NVS) c->nvswitch = 1;
                if (n->links[l].xgmi) xgmi_links = 1;
            }
            break;
        case TT_NODE_NET: {
            c->topo_nics++;
            double g = n->u.net.speed_mbps / 1000.0;
            if (g > c->topo_nic_gbps) c->topo_nic_gbps = g;
            break;
        }
        case TT_NODE_CPU:
            if (n->u.cpu.numaid >= 0) c->numa_known = 1;
            if (!strcmp(n->u.cpu.vendor, "GenuineIntel")) c->cpu_vendor = TT_CPU_INTEL;
            else if (!strcmp(n->u.cpu.vendor, "AuthenticAMD")) c->cpu_vendor = TT_CPU_AMD;
            if (!strncmp(n->u.cpu.arch, "arm", 3) || !strcmp(n->u.cpu.arch, "aarch64")) c->cpu_arm = 1;
            break;
        default:
            break;
        }
    }
    if (!xgmi_links) c->xgmi = 0;
    if (c->topo_gpus == 0)
        return tt_error_set(TT_ERR_INVALID, "%s: the topology has no GPU; nothing to tune",
                            t->source[0] ? t->source : "topology");
    c->gpus_per_node = c->topo_gpus;
    c->nics_per_node = c->topo_nics;
    c->nic_gbps = c->topo_nic_gbps;
    c->rails = c->nics_per_node > 0 ? c->nics_per_node : 1;
    return tt_fabric_detect(t, &c->fabric, &c->fabric_origin, c->fabric_why, sizeof c->fabric_why);
}

tt_status tt_cluster_validate(const tt_cluster *c)
{
    if (c->nodes < 1)
        return tt_error_set(TT_ERR_INVALID, "cluster: nodes=%d, need at least 1", c->nodes);
    if (c->nodes > 65536)
        return tt_error_set(TT_ERR_INVALID, "cluster: nodes=%d is above the supported 65536", c->nodes);
    if (c->gpus_per_node < 1)
        return tt_error_set(TT_ERR_INVALID, "cluster: gpus per node=%d, need at least 1", c->gpus_per_node);
    if (c->gpus_per_node > 1024)
        return tt_error_set(TT_ERR_LIMIT, "cluster: %d GPUs per node is above the supported 1024", c->gpus_per_node);
    if (c->topo_gpus > 0 && c->gpus_per_node > c->topo_gpus)
        return tt_error_set(TT_ERR_INVALID,
                            "cluster: %d ranks per node but the topology has only %d GPUs",
                            c->gpus_per_node, c->topo_gpus);
    if (c->nics_per_node < 0 || c->nics_per_node > 256)
        return tt_error_set(TT_ERR_INVALID, "cluster: nics per node=%d, need 0..256", c->nics_per_node);
    if (c->nics_per_node > 0 && !(c->nic_gbps > 0))
        return tt_error_set(TT_ERR_INVALID, "cluster: NIC speed %g Gb/s, must be > 0", c->nic_gbps);
    if (c->nic_gbps < 0 || c->nic_gbps > 1e5)
        return tt_error_set(TT_ERR_INVALID, "cluster: NIC speed %g Gb/s is out of range", c->nic_gbps);
    if (c->nodes > 1 && c->nics_per_node == 0)
        return tt_error_set(TT_ERR_INVALID,
                            "cluster: %d nodes but no NIC per node (the topology has none: give --nics-per-node and --nic-speed)",
                            c->nodes);
    int maxr = c->nics_per_node > 0 ? c->nics_per_node : 1;
    if (c->rails < 1 || c->rails > maxr)
        return tt_error_set(TT_ERR_INVALID, "cluster: rails=%d, need 1..%d", c->rails, maxr);
    return TT_OK;
}
