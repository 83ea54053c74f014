/*
 * tt_topo.h - typed topology graph, all-pairs paths and findings.
 *
 * tt_topo_from_xml() turns a topology XML tree (ours or NCCL's dialect) into
 * a graph of CPU (NUMA node), PCI switch, GPU, NVSwitch, NIC and NET nodes
 * joined by links of a kind (LOC, NVL, C2C, PCI, SYS, NET) and a bandwidth in
 * GB/s per direction, then computes the best path between every pair of
 * nodes: bottleneck bandwidth, hop route and path class (LOC ... SYS, NET)
 * following NCCL's rules.  Every constant is in topo_const.c and
 * docs/topology-model.md.
 *
 * Strings in nodes are copies; the graph does not borrow from the XML doc,
 * except `xml` (the origin element), which is valid only while the doc lives.
 */
#ifndef TT_TOPO_H
#define TT_TOPO_H

#include <stdint.h>

#include "tt_common.h"
#include "tt_xml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TT_NODE_GPU = 0,
    TT_NODE_PCI = 1, /* PCI switch / bridge (or any PCI device that is not GPU/NIC) */
    TT_NODE_NVS = 2, /* NVSwitch (one shared node when switches are not visible) */
    TT_NODE_CPU = 3, /* one per NUMA node (NCCL's <cpu>) */
    TT_NODE_NIC = 4, /* NIC ASIC / PCI function holding one or more ports */
    TT_NODE_NET = 5, /* one network port (NCCL's <net>) */
    TT_NODE_NTYPES = 6
} tt_node_type;

/* Numbering follows NCCL's link types. */
typedef enum {
    TT_LINK_LOC = 0,
    TT_LINK_NVL = 1, /* NVLink (RCCL xGMI is carried as NVL too, flagged xgmi) */
    TT_LINK_C2C = 3,
    TT_LINK_PCI = 4,
    TT_LINK_SYS = 9, /* inter-socket (QPI/UPI/xGMI-socket/...) */
    TT_LINK_NET = 10
} tt_link_type;

/* Path classes, lower is better; numbering follows NCCL's PATH_* values. */
typedef enum {
    TT_PATH_LOC = 0,
    TT_PATH_NVL = 1,
    TT_PATH_NVB = 2,
    TT_PATH_C2C = 3,
    TT_PATH_PIX = 4,
    TT_PATH_PXB = 5,
    TT_PATH_P2C = 6,
    TT_PATH_PXN = 7,
    TT_PATH_PHB = 8,
    TT_PATH_SYS = 9,
    TT_PATH_NET = 10,
    TT_PATH_DIS = 11
} tt_path_type;

typedef struct tt_link {
    tt_link_type type;
    int peer;   /* node index */
    double bw;  /* GB/s, one direction */
    int xgmi;   /* 1 when this NVL link came from an RCCL <xgmi> element */
} tt_link;

typedef struct tt_node {
    tt_node_type type;
    int id;                  /* index among nodes of the same type (GPU0, GPU1, ...) */
    char name[64];           /* "GPU0", "CPU1", "NVS0", "PCI/0000:15:00.0", "NIC/0000:19:00.0", "mlx5_0" */
    char busid[32];          /* lowercase PCI bus id, "" when not a PCI device */
    const tt_xml_node *xml;  /* origin element, NULL when synthesized */
    int line;                /* origin line, 0 when synthesized */
    union {
        struct {
            int dev, sm, rank, gdr;
            int cc;            /* compute-capability class the model's tables use: sm for
                                * NVIDIA, the mapped class for AMD (topo_amd.c) */
            int amd;           /* 1: an AMD GPU (RCCL's gcn, or PCI vendor 0x1002) */
            char gcn[16];      /* RCCL's gfx target, "" when none */
            double xgmi_bw;    /* GB/s per xGMI link per direction for this GPU */
        } gpu;
        struct {
            int numaid;            /* -1 = unknown */
            char arch[16];         /* x86_64, arm64, ppc64 */
            char vendor[32];       /* GenuineIntel, AuthenticAMD, ... */
            int family, model;
            char affinity[1100];   /* NCCL cpumask string, "" = unknown */
        } cpu;
        struct {
            unsigned cls, vendor, device, subvendor, subdevice;
            char link_speed[32];   /* as in the XML */
            int link_width;        /* 0 = unknown */
        } pci;
        struct { int ports; } nic;
        struct {
            char name[64];
            int dev, port, gdr, maxconn;
            double speed_mbps, latency;
            uint64_t guid;
        } net;
        struct { int visible; } nvs;
    } u;
    tt_link *links;
    int nlinks, cap_links;
    int host;                /* host index (distinct cpu host_hash, order of appearance);
                              * -1 for the shared NVSwitch node */
} tt_node;

typedef struct tt_path {
    tt_path_type type;
    double bw;     /* bottleneck GB/s; 0 when unreachable */
    int nhops;     /* number of links; -1 when unreachable */
    int *route;    /* nhops+1 node indices, route[0] = from, route[nhops] = to */
} tt_path;

/* ---- findings (validation now, health checks later) ---- */
typedef enum { TT_SEV_INFO = 0, TT_SEV_WARN = 1, TT_SEV_ERROR = 2 } tt_severity;

typedef struct {
    tt_severity severity;
    char code[48];      /* stable machine name, e.g. "missing-attribute" */
    char where[128];    /* "pci 0000:18:00.0", "gpu dev=3", ... */
    int line;           /* 0 when unknown */
    char message[400];  /* one line for humans */
} tt_finding;

typedef struct {
    tt_finding *items;
    int n, cap;
} tt_findings;

/* Knobs with NCCL's defaults (tt_topo_options_default). */
typedef struct {
    tt_path_type p2p_level;  /* GPU<->GPU deeper than this is rerouted through the CPU (PXB) */
    tt_path_type gdr_level;  /* GPU<->NIC deeper than this disables GPUDirect RDMA (PXB) */
    int pxn;                 /* allow PXN (GPU -NVLink-> peer GPU -PCI-> NIC) (1) */
    int nvb;                 /* allow NVB (NVLink through one intermediate GPU) (1) */
    const char *gpu_part;    /* part of GPUs a partial file gives no device id for ("H100-SXM",
                              * tt_gpu_part_by_name); NULL = $TOPOTUNE_GPU_PART, else none */
} tt_topo_options;

typedef struct tt_topo {
    tt_node *nodes;
    int nnodes, cap_nodes;
    int ntype[TT_NODE_NTYPES];
    tt_path *paths;          /* nnodes*nnodes, row = from; filled by tt_topo_compute_paths */
    tt_topo_options opts;
    char source[256];        /* file name the XML came from */
    /* What the builder assumed for a partial (vendor) file, one finding per
     * inferred value (codes in docs/xml-schema.md, "Partial vendor files"). */
    tt_findings assumed;
    int gpu_fabric_unknown;  /* GPUs without NVLink information left PCIe-only */
} tt_topo;

void tt_topo_options_default(tt_topo_options *o);

/* Bounds on what tt_topo_from_xml / tt_topo_compute_paths accept (TT_ERR_LIMIT). */
#define TT_TOPO_MAX_TYPE_NODES 4096  /* nodes of one type */
#define TT_TOPO_MAX_PATH_NODES 2048  /* all-pairs paths are O(N^2) in memory */

/* Build the graph from an XML doc and compute paths. opts NULL = defaults.
 * Errors name the file:line, element and attribute. */
tt_status tt_topo_from_xml(const tt_xml_doc *doc, const tt_topo_options *opts, tt_topo **out);
void tt_topo_free(tt_topo *t);

/* (Re)compute all-pairs paths (also called by tt_topo_from_xml). */
tt_status tt_topo_compute_paths(tt_topo *t);

/* Node of `type` with per-type id `id`, or -1. */
int tt_topo_node_index(const tt_topo *t, tt_node_type type, int id);
/* Node with this PCI bus id (any type), or -1. Case-insensitive. */
int tt_topo_find_busid(const tt_topo *t, const char *busid);
/* Node index of a NET port by name ("mlx5_0"), or -1. */
int tt_topo_find_net(const tt_topo *t, const char *name);
const tt_path *tt_topo_path(const tt_topo *t, int from, int to);
/* The NUMA node (CPU node index) closest to node i, or -1. */
int tt_topo_local_cpu(const tt_topo *t, int i);

const char *tt_node_type_name(tt_node_type type);  /* "GPU", "PCI", ... */
const char *tt_link_type_name(tt_link_type type);  /* "LOC", "NVL", ... */
const char *tt_path_type_name(tt_path_type type);  /* "LOC", "NVL", ..., "DIS" */
tt_status tt_path_type_parse(const char *s, tt_path_type *out);

/* ---- constants (topo_const.c); see docs/topology-model.md ---- */
#define TT_LOC_BW 5000.0 /* GB/s of a link inside one device (NCCL's LOC_BW) */
double tt_nvlink_bw_per_link(int sm);           /* GB/s per NVLink for a GPU arch */
double tt_xgmi_bw_per_link(void);               /* GB/s per xGMI link (model assumption) */
/* PCIe link bandwidth, GB/s, with NCCL's per-lane table; unknown speed or
 * width fall back as NCCL does (Gen3, x16).  *known = 0 when a fallback was used. */
double tt_pci_bw(const char *link_speed, int width, int *known);
/* Inter-socket bandwidth for a CPU description, GB/s. */
double tt_inter_cpu_bw(const char *arch, const char *vendor, int family, int model);
double tt_net_bw(double speed_mbps);             /* Mb/s -> GB/s */
/* A <net speed> in Mb/s: values above 10 Tb/s are another producer's unit (kb/s,
 * b/s) and are scaled by 1000s; *unit names the unit read ("Mb/s", "kb/s", "b/s").
 * -1 and *unit NULL when no unit makes it plausible (topo_amd.c). */
double tt_net_speed_mbps(double raw, const char **unit);

/* AMD GPU generation (topo_amd.c): from RCCL's gcn ("gfx942") or else the PCI
 * device id.  Returns 1 when known; else 0 with the defaults filled in. */
typedef struct {
    const char *name;    /* "MI300 series (CDNA 3)" */
    double xgmi_gbps;    /* GB/s per xGMI link per direction */
    int cc;              /* compute-capability class for the NCCL-derived tables */
    const char *from;    /* "gcn", "pci device id" or "default" */
} tt_amd_model;
int tt_amd_gpu_model(const char *gcn, unsigned pci_device, tt_amd_model *out);
#define TT_NET_DEFAULT_SPEED_MBPS 10000.0 /* speed <= 0 or missing (NCCL's fallback) */
/* Inter-socket bandwidth used for an unknown CPU vendor (model assumption). */
#define TT_INTER_CPU_BW_UNKNOWN 6.0

void tt_findings_init(tt_findings *f);
void tt_findings_free(tt_findings *f);
tt_status tt_findings_add(tt_findings *f, tt_severity sev, const char *code, int line,
                          const char *where, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* -1 when empty, else the highest severity. */
int tt_findings_max_severity(const tt_findings *f);
/* Number of findings of severity `sev`. */
int tt_findings_count(const tt_findings *f, tt_severity sev);
const char *tt_severity_name(tt_severity s);  /* "info", "warning", "error" */
/* Text: "file:line: warning: [code] where: message" per finding. */
tt_status tt_findings_write_text(const tt_findings *f, const char *source, tt_strbuf *out);
tt_status tt_findings_write_json(const tt_findings *f, const char *source, tt_strbuf *out);

/* Lint a topology XML doc: names every problem (missing required attribute,
 * unknown version, duplicate bus id, implausible values, NCCL limits). */
tt_status tt_topo_validate(const tt_xml_doc *doc, tt_findings *out);
/* tt_topo_validate, then (no error found) the graph must build with `o` (else one error
 * "build-failed"), and what the builder assumed for a partial vendor file is added
 * (topo_lint.c; topo-dump --validate). */
tt_status tt_topo_validate_build(const tt_xml_doc *doc, const tt_topo_options *o, tt_findings *out);
/* TT_ERR_PARSE naming `label` (and the line) unless the root element is <system>. */
tt_status tt_topo_require_system(const tt_xml_doc *doc, const char *label);
/* 1 when the root is <cluster> (a topo-dump --merge file). */
int tt_topo_doc_is_cluster(const tt_xml_doc *doc);

/* ---- views ---- */
/* The output formats, one table (topo_formats.c): tt_topo_format_at(i) for i = 0, 1, ... until
 * NULL ("native", "nccl", "json", "dot", "matrix"), each with one line of help.
 * tt_topo_format_write appends the document `doc` and its graph `t` in the named format to `out`
 * (rendering the "dot" drawing as an image is the caller's: topo-dump -f svg/png runs Graphviz). */
typedef struct {
    const char *name;
    const char *help;
} tt_topo_format;
const tt_topo_format *tt_topo_format_at(int i);
tt_status tt_topo_format_write(const char *name, const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *out);
/* The JSON view refuses (TT_ERR_LIMIT) a topology with more GPU/NIC paths than this (~360 GPUs; ~20 MB). */
#define TT_TOPO_JSON_MAX_PATHS 131072
tt_status tt_topo_write_json(const tt_topo *t, tt_strbuf *out);
tt_status tt_topo_write_dot(const tt_topo *t, tt_strbuf *out);
/* GPU/NIC matrix in the style of `nvidia-smi topo -m`. */
tt_status tt_topo_write_matrix(const tt_topo *t, tt_strbuf *out);


/* ---- live scan (topo_scan*.c); see docs/scan.md ----
 * tt_topo_scan() builds a native-dialect topology doc of THIS machine (or of
 * a fake sysfs tree, or of an `lstopo --of xml` file) from independent
 * probes.  A probe that cannot run (library missing, no device, no
 * permission) is recorded in the report, never fails the scan; every value a
 * probe could not see is left out and recorded as <unknown attr reason/>. */
typedef struct {
    const char *sysfs_root; /* NULL = $TOPOTUNE_SYSFS_ROOT, else "/" */
    const char *hwloc_xml;  /* lstopo --of xml file: offline scan of that machine */
    /* Probes not to run: comma-separated names ("nvml,ibv"; tt_scan_probe_name
     * lists them), NULL or "" = none.  $TOPOTUNE_SCAN_EXCLUDE adds to it (in
     * the spirit of hwloc's HWLOC_COMPONENTS).  An unknown name makes the scan
     * fail with TT_ERR_INVALID naming the valid probes.  An excluded probe is
     * reported "off: disabled by option". */
    const char *exclude;
} tt_scan_options;

typedef enum {
    TT_PROBE_OFF = 0,         /* disabled by option or not applicable */
    TT_PROBE_OK = 1,          /* ran and saw everything it looks for */
    TT_PROBE_PARTIAL = 2,     /* ran, some values unknown */
    TT_PROBE_UNAVAILABLE = 3, /* library / driver / device absent */
    TT_PROBE_FAILED = 4       /* ran and failed (recorded, scan continues) */
} tt_probe_state;

typedef struct {
    char name[16];        /* "sysfs", "hwloc", "nvml", "cuda", "ibv", "gdr" */
    tt_probe_state state;
    int seen;             /* objects it found (devices, GPUs, ports, ...) */
    int missed;           /* <unknown> records it added */
    double ms;            /* wall time */
    char note[320];       /* why off/unavailable, or what it saw */
} tt_scan_probe;

typedef struct {
    tt_scan_probe *probes;  /* one per probe of the scan, in run order (tt_scan_report_free) */
    int nprobes;
    int nunknown;         /* <unknown> elements in the doc */
    double ms;            /* whole scan */
} tt_scan_report;

/* Read a topology file: our native XML or NCCL's as they are, or an hwloc export (root
 * <topology>, any version; its DOCTYPE is accepted and never loaded) converted to our XML by the
 * offline hwloc scan (*hwloc = 1 then; hwloc may be NULL).  "-" reads standard input (not for
 * hwloc files).  Errors name path:line. */
tt_status tt_topo_read_file(const char *path, tt_xml_doc **doc, int *hwloc);

/* All probes on, no roots (live scan of "/"). */
void tt_scan_options_default(tt_scan_options *o);
/* Name of the i-th probe in run order ("sysfs", "gdr", "hwloc", "nvml", "cuda",
 * "ibv"), NULL past the last: the names tt_scan_options.exclude accepts. */
const char *tt_scan_probe_name(int i);
tt_status tt_topo_scan(const tt_scan_options *o, tt_xml_doc **out);
/* Same, filling `rep` (may be NULL; free it with tt_scan_report_free, also after an error). */
tt_status tt_topo_scan_report(const tt_scan_options *o, tt_xml_doc **out, tt_scan_report *rep);
void tt_scan_report_free(tt_scan_report *r);
const char *tt_probe_state_name(tt_probe_state s); /* "off", "ok", "partial", ... */
/* One line per probe: "scan: nvml: unavailable: libnvidia-ml.so.1 not found". */
tt_status tt_scan_report_write_text(const tt_scan_report *r, tt_strbuf *out);
tt_status tt_scan_report_write_json(const tt_scan_report *r, tt_strbuf *out);

/* Health findings on a (scanned) native doc: PCIe links below their maximum,
 * GPU and nearest NIC on different NUMA nodes, GPU pairs without P2P, NVLinks
 * down or unequal, RDMA ports not ACTIVE or with MTU < 4096, no NUMA data,
 * no GPUDirect RDMA.  Codes in docs/scan.md (topo_check.c). */
tt_status tt_topo_check(const tt_xml_doc *doc, tt_findings *out);

/* ---- native document (topo_native.c) ----
 * A copy of a loaded topology (NCCL's dialect or ours) as our native document: tt_version="1"
 * and tt_source="nccl" on <system> unless present, and an <unknown attr=... reason=.../> first
 * child where the input could not say something (<cpu numaid="-1">, <pci> with an empty or 0
 * link_width, an empty link_speed).  Idempotent, so native round trips are byte-stable. */
tt_status tt_topo_to_native(const tt_xml_doc *doc, tt_xml_doc **out);

/* ---- synthetic topologies (topo_synth.c), built in memory ----
 * Host stand-in: n ranks as n PCIe GPUs (SM89, x16 Gen4) under one x86 CPU; what
 * topo-exec --validate models host ranks on (docs/calibration.md section 6).  Document source
 * TT_TOPO_SYNTH_HOST_SOURCE.
 * NVSwitch domain: ngpu SM100 GPUs, four per arm64 CPU, 18 NVLinks each to one NVSwitch (the
 * generated NVL72 of topo-tune --bench; tests/fixtures/nvl72-sm100.xml is ngpu = 72).  Source
 * TT_TOPO_SYNTH_NVL72_SOURCE.  Both: 1..TT_TOPO_MAX_TYPE_NODES GPUs, else TT_ERR_INVALID. */
#define TT_TOPO_SYNTH_HOST_SOURCE "built-in host stand-in"
#define TT_TOPO_SYNTH_NVL72_SOURCE "<generated nvl72>"
tt_status tt_topo_synth_host(int nranks, tt_xml_doc **out);
tt_status tt_topo_synth_nvl72(int ngpu, tt_xml_doc **out);

/* ==== GPU vendors (topo_vendor.c) ==== */

/* The vendor of GPU node g as its file shows it: "NVIDIA", "AMD", or "" when nothing tells
 * (PCI class alone); why (may be NULL) gets the evidence ("vendor 0x10de", "an <xgmi> link",
 * "NCCL's <gpu sm> without RCCL's gcn/arch", ...). Rule: docs/xml-schema.md "GPU vendor". */
const char *tt_topo_gpu_vendor(const tt_node *g, char *why, size_t n);
/* TT_OK when the GPUs whose vendor shows are of one vendor; else TT_ERR_INVALID naming two
 * GPUs of different vendors by file:line, bus id and evidence (one communicator cannot hold
 * NVIDIA and AMD GPUs). */
tt_status tt_topo_check_one_vendor(const tt_topo *t);

/* ==== clusters of hosts (topo_cluster.c) ==== */

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
    char vendor_why[400];/* "file:line: GPU busid: evidence" (tt_topo_gpu_vendor) */
} tt_host_topo;

typedef struct {
    tt_host_topo *hosts;
    int n, cap;
    const tt_topo_options *opts; /* how every host's graph is built (--gpu-part ...); NULL = defaults.
                                  * Set after tt_hostset_init, before adding files. */
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
 * "NIC mlx5_2 state DOWN (majority ACTIVE)"; NICs known by PCI class only are compared by
 * presence and PCIe link as "NIC ib-BUSID" / "eth-BUSID".  Hosts with GPUs of different vendors
 * (NVIDIA and AMD) cannot form one communicator: TT_ERR_INVALID naming both files.
 * At most TT_HOSTSET_MAX_SAID differences per host, then one "and N more differences". */
tt_status tt_hostset_compare(const tt_hostset *s, tt_findings *out);
/* Hosts whose signature differs from the majority's in at least one item (1/0 per host,
 * `flags` has s->n entries).  Call after tt_hostset_compare with its findings. */
void tt_hostset_differing(const tt_hostset *s, const tt_findings *diffs, int *flags);
/* tt_hostset_add_file for each of `n` files, stopping at the first error. */
tt_status tt_hostset_add_files(tt_hostset *s, const char *const *files, int n);
/* How many hosts differ from the majority (tt_hostset_differing). */
tt_status tt_hostset_count_differing(const tt_hostset *s, const tt_findings *diffs, int *ndiff);

/* One merged cluster doc from per-host files: <cluster version="1"> holding each file's
 * <system> with host="<file base name without .xml>" (or its own host attribute, or the
 * hosts of a <cluster> file given as input).  Duplicate host names are refused. */
tt_status tt_hostset_merge_files(const char *const *files, int nfiles, tt_xml_doc **out);

/* ==== partial vendor files: the GPU part table (topo_parts.c) and fusion (topo_fuse.c) ==== */

/* How the GPUs of a part are joined when the file says nothing. */
typedef enum {
    TT_BOARD_NONE = 0,     /* no NVLink (PCIe only) */
    TT_BOARD_NVSWITCH = 1, /* SXM module: HGX baseboard, NVSwitch when 8 (or 16) GPUs, direct mesh when 4 */
    TT_BOARD_BRIDGE = 2,   /* PCIe card: optional NVLink bridges - never assumed */
    TT_BOARD_MESH = 3      /* SXM module on a direct-link board whose wiring cannot be inferred */
} tt_board_kind;

typedef struct {
    unsigned device_id;   /* PCI device id (vendor 0x10de) */
    const char *name;     /* "H100-SXM": the name --gpu-part takes (case-insensitive) */
    const char *product;  /* "H100 SXM5 80GB" */
    int sm;               /* compute capability x10 */
    int nvlink_gen;       /* 0 = none */
    int links;            /* NVLinks per GPU */
    double link_gbps;     /* GB/s per link per direction (nominal, vendor spec) */
    tt_board_kind board;
    int mesh4_links;      /* links to each peer on a 4-GPU board (0 = no such board known) */
    int pcie_gen;         /* host interface generation */
    const char *source;   /* public source of the row */
} tt_gpu_part;

/* Number of rows and row i (0 <= i < count). */
int tt_gpu_part_count(void);
const tt_gpu_part *tt_gpu_part_at(int i);
/* Row for a device id, or NULL. */
const tt_gpu_part *tt_gpu_part_by_id(unsigned device_id);
/* Row for a part name ("H100-SXM", "h100_sxm", "H100 SXM" all match), or NULL. */
const tt_gpu_part *tt_gpu_part_by_name(const char *name);
const char *tt_board_kind_name(tt_board_kind b); /* "none", "nvswitch", "bridge", "mesh" */
/* The part names --gpu-part takes, "A100-SXM, A100-PCIe, ..." (table order, each once), into buf. */
void tt_gpu_part_names(char *buf, size_t n);

/* Fuse a vendor topology file with a scan of this machine, as NCCL does with
 * NCCL_TOPO_FILE: the vendor file comes first (its PCIe tree and attributes
 * win); the scan fills in, matched by PCI bus id, what the file lacks
 * (attributes it does not set, <gpu>/<nvlink>, <nic>/<net>, ...) and adds the
 * devices the file does not name under their scanned parent.  `*nmatched`
 * (may be NULL) receives the number of scanned devices found in the file.
 * The result is a new doc; neither input is changed. */
tt_status tt_topo_fuse(const tt_xml_doc *vendor, const tt_xml_doc *scan, tt_xml_doc **out,
                       int *nmatched);
/* tt_topo_fuse with the vendor file read from `vendor_file` (topo_lint.c). */
tt_status tt_topo_fuse_file(const char *vendor_file, const tt_xml_doc *scan, tt_xml_doc **out, int *nmatched);

#ifdef __cplusplus
}
#endif
#endif
