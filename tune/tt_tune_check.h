/*
 * tt_tune_check.h - what topo-tune must say about its own predictions: the sanity gate
 * (predictions absurd for the hardware) and clusters of different hosts (the table is
 * computed for the slowest host).  docs/model.md, "Sanity checks" and "Clusters of
 * different hosts".
 */
#ifndef TT_TUNE_CHECK_H
#define TT_TUNE_CHECK_H

#include "tt_topo.h"
#include "tt_topo_cluster.h"
#include "tt_tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sanity gate (tune_sanity.c) ----
 * Findings (severity warning; message = cause, then "fix: ...") when a prediction is absurd
 * for the hardware the topology describes.  Codes:
 *   busbw-absurd      AllReduce busbw at TT_SANITY_BYTES below TT_SANITY_MIN_BUSBW GB/s
 *   busbw-below-links AllReduce busbw at TT_SANITY_BYTES below TT_SANITY_LINK_FRACTION of the
 *                     links the graph has (best GPU-GPU path; on several nodes also the
 *                     node's network bandwidth)
 *   nvlink-missing    several GPUs of an NVLink part (tt_tune_nvlink_part) and no GPU pair
 *                     joined by NVLink: the table assumes PCIe/SMP between them
 *   gpu-unknown       GPUs without a <gpu> element (no model): NVLink cannot be known
 * A PCIe-only box whose figures match its PCIe links gets no finding. */
#define TT_SANITY_BYTES (1ULL << 30)
#define TT_SANITY_MIN_BUSBW 1.0
#define TT_SANITY_LINK_FRACTION 0.10
tt_status tt_tune_sanity_check(const tt_tune_ctx *ctx, tt_findings *out);
/* 1 when a GPU with this compute capability (x10) and PCI device id (0 = not recorded) is a
 * part built with NVLink (SXM / NVL modules); 0 for PCIe cards and AMD GPUs (`amd`). */
int tt_tune_nvlink_part(int sm, unsigned device, int amd);

/* ---- clusters of different hosts (tune_hosts.c) ---- */
typedef struct {
    int gpus_per_node;   /* > 0: ranks per node; -1: from the topology (the fewest GPUs of any host) */
    int nics_per_node;   /* >= 0: NET ports per node; -1: from each host's topology */
    int rails;           /* > 0: rails; -1: = NICs */
    double nic_gbps;     /* > 0: port speed in Gb/s; <= 0: from each host's topology */
} tt_cluster_overrides;
#define TT_CLUSTER_OVERRIDES_NONE ((tt_cluster_overrides){-1, -1, -1, -1.0})

/* The cluster description topo-tune makes for one topology: tt_cluster_from_topo(), `nodes`,
 * then the overrides (--nics-per-node without --rails sets rails = NICs). */
tt_status tt_cluster_for_topo(const tt_topo *t, int nodes, const tt_cluster_overrides *o, tt_cluster *out);

typedef struct {
    int chosen;          /* index of the slowest host in the hostset */
    tt_cluster cluster;  /* the cluster to tune: nodes = hosts, the chosen host's topology */
    uint64_t bytes;      /* size of the AllReduce the hosts are ranked by (TT_SANITY_BYTES) */
    double *busbw;       /* per host: predicted AllReduce busbw at `bytes`, GB/s */
    int n;
    char why[640];       /* one line: which host, its figure, the others', the rule */
} tt_slowest_host;

/* MODEL ASSUMPTION: every collective waits for its slowest member, so a cluster of hosts that
 * differ is tuned as `nodes` copies of the slowest host: the one with the lowest predicted
 * AllReduce busbw at `bytes` for the whole cluster (ties: the first).  Ranks per node are the
 * fewest GPUs of any host unless o->gpus_per_node is given (then every host must have that
 * many: TT_ERR_INVALID naming the host otherwise).  `nodes` 0 = one node per host. */
tt_status tt_tune_slowest_host(const tt_hostset *hs, int nodes, const tt_cluster_overrides *o,
                               tt_model_kind model, const tt_model_params *params, tt_slowest_host *out);
void tt_slowest_host_free(tt_slowest_host *s);

/* JSON table (tt_tune_write_json) with, when given, topology.cluster = {hosts:[{name, source,
 * busbw_GBps, differs}], chosen, reason, differences:[{host, message}]} and
 * warnings = [{code, where, message}] (sanity findings).  Same schema and version. */
typedef struct {
    const tt_hostset *hosts;        /* NULL: one host */
    const tt_slowest_host *slowest; /* with hosts */
    const tt_findings *differences; /* with hosts: tt_hostset_compare's findings */
    const tt_findings *warnings;    /* NULL or sanity findings */
} tt_tune_json_extra;
tt_status tt_tune_write_json_ex(const tt_tune_ctx *ctx, const tt_tune_table *tab, const tt_tune_json_extra *x,
                                tt_strbuf *out);

#ifdef __cplusplus
}
#endif
#endif
