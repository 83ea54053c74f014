/*
 * tt_topo_cluster.h - a cluster of hosts described by per-node topology files.
 *
 * Each host of a cluster has its own topology file (collected with, e.g.,
 * `srun topo-dump -o %h.xml`), or all of them sit in one merged file whose root
 * is our <cluster> extension element holding one <system host="..."> per host
 * (docs/xml-schema.md, "cluster").  A tt_hostset holds every host's doc and graph;
 * tt_hostset_compare() gives each host a signature (GPU count and model, PCIe
 * link of every GPU, NVLinks per GPU, NET ports with speed, state and PCIe link)
 * and names every host that differs from the majority, with what differs.
 *
 * MODEL ASSUMPTION: a NET port whose recorded `state` is neither ACTIVE, up nor
 * unknown carries no traffic: it is left out of the host's graph (not of its
 * signature, where it is named).
 */
#ifndef TT_TOPO_CLUSTER_H
#define TT_TOPO_CLUSTER_H

#include "tt_common.h"
#include "tt_topo.h"
#include "tt_xml.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TT_ELEM_CLUSTER "cluster"  /* root of a merged cluster file (native extension) */
#define TT_ATTR_HOST "host"        /* <system host="node017"> inside a <cluster> */
#define TT_HOSTSET_MAX 65536       /* hosts of one cluster */
#define TT_HOSTSET_MAX_SAID 8      /* differences named per host, then "and N more differences" */

typedef struct {
    char name[128];      /* host: base name of its file, or the host attribute in a <cluster> file */
    char source[320];    /* "b.xml" or "cluster.xml:12" (its <system>) */
    tt_xml_doc *doc;     /* the host's <system> as recorded (signature) */
    tt_xml_doc *model_doc; /* the same without NET ports that are down (the graph's origin) */
    tt_topo *topo;       /* graph of model_doc */
    int gpus;            /* GPUs in the graph */
    int down;            /* NET ports left out because they are down */
    char down_names[200];/* their names, comma separated */
    char vendor[16];     /* GPU vendor: "NVIDIA", "AMD" or "" (not recorded) */
} tt_host_topo;

typedef struct {
    tt_host_topo *hosts;
    int n, cap;
} tt_hostset;

void tt_hostset_init(tt_hostset *s);
void tt_hostset_free(tt_hostset *s);
/* Append the host(s) of one file: a <system> file is one host, a <cluster> file one host
 * per <system> child.  Errors name the file (and the <system> line): unreadable, not a
 * topology, no GPU, a graph that cannot be built. */
tt_status tt_hostset_add_file(tt_hostset *s, const char *path);
/* Per-host signature and differences from the majority.  One finding per difference:
 * severity warning, code "host-differs", where = host name, message e.g.
 * "GPU 3 PCIe link 32.0 GT/s PCIe x8 (majority 32.0 GT/s PCIe x16)", "7 GPUs (majority 8)",
 * "NIC mlx5_2 state DOWN (majority ACTIVE)".  Hosts with GPUs of different vendors
 * (NVIDIA and AMD) cannot form one communicator: TT_ERR_INVALID naming both files.
 * At most TT_HOSTSET_MAX_SAID differences per host, then one "and N more differences". */
tt_status tt_hostset_compare(const tt_hostset *s, tt_findings *out);
/* Hosts whose signature differs from the majority's in at least one item (1/0 per host,
 * `flags` has s->n entries).  Call after tt_hostset_compare with its findings. */
void tt_hostset_differing(const tt_hostset *s, const tt_findings *diffs, int *flags);

/* One merged cluster doc from per-host files: <cluster version="1"> holding each file's
 * <system> with host="<file base name without .xml>" (or its own host attribute, or the
 * hosts of a <cluster> file given as input).  Duplicate host names are refused. */
tt_status tt_hostset_merge_files(const char *const *files, int nfiles, tt_xml_doc **out);

#ifdef __cplusplus
}
#endif
#endif
