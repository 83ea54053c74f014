/*
 * topo_scan_internal.h - private declarations shared by the live-scan probes
 * (topo_scan*.c).  See docs/scan.md.
 *
 * Every probe adds to one native-dialect doc:
 *   <system version="1" tt_version tt_source hostname>
 *     <cpu numaid ...>            one per NUMA node (numaid -1 = unknown)
 *       <pci busid ...>           NCCL-shaped tree: root ports and switch
 *         <pci ...><gpu/></pci>   downstream ports skipped
 *         <pci ...><nic><net/></nic></pci>
 *       <nic><net/></nic>         NICs that are not PCI functions
 *     <nvswitch busid visible links/>
 *     <unknown attr reason/>      anywhere: what a probe could not see
 */
#ifndef TOPO_SCAN_INTERNAL_H
#define TOPO_SCAN_INTERNAL_H

#include <limits.h>

#include "tt_topo.h"

#define SCAN_SUBSYS "scan"
#define SCAN_MAX_CHAIN 32     /* PCI bridges between a host bridge and a device */
#define SCAN_MAX_NETIFS 8192  /* /sys/class/net entries read (containers: many veths) */
#define SCAN_MAX_NUMA 1024    /* NUMA node directories read */

typedef struct scan_ctx {
    const tt_scan_options *opt;
    char root[PATH_MAX];      /* sysfs root prefix, "" = live "/" */
    int live;                 /* 1 when the machine itself is scanned */
    tt_xml_doc *doc;
    tt_xml_node *sys;
    tt_scan_report *rep;
    tt_scan_probe *probe;     /* probe now running (counts its unknowns) */
    int tree_done;            /* a probe already built the PCI/CPU tree */
    int gdr_peermem;          /* -1 unknown, 0 no, 1 nvidia_peermem / nv_peer_mem loaded */
    char gdr_how[96];         /* how gdr_peermem was decided */
    int dmabuf;               /* -1 unknown, else CUDA's DMA_BUF_SUPPORTED on every GPU */
    int kernel_dmabuf;        /* -1 unknown, 1 kernel >= 5.12 (dma-buf RDMA import) */
    int ngpu_props;           /* GPUs whose properties NVML or CUDA gave */
    /* fills a newly made <cpu> (arch, vendor, affinity...): set by the tree builder probe */
    void (*cpu_fill)(struct scan_ctx *c, tt_xml_node *cpu, int numaid);
    void *cpu_fill_arg;
    void *owned;              /* freed at the end of the scan (the sysfs CPU identity) */
} scan_ctx;

/* One PCI function as a probe sees it; fields < 0 / "" are unknown. */
typedef struct scan_pci_info {
    char busid[16];           /* dddd:bb:dd.f, lowercase */
    long cls, vendor, device, subvendor, subdevice;
    char max_speed[32], cur_speed[32];
    int max_width, cur_width;
    int numa;                 /* numa_node; -1 = none/unknown */
    int numa_known;
    char cpulist[256];        /* local_cpulist */
    /* the upstream port's max_link_* (NCCL takes the min with the device) */
    int up_state;             /* 0 = no upstream port (root bus), 1 = read, -1 = unreadable */
    char up_speed[32];
    int up_width;
    char up_busid[16];
    const char *why;          /* reason for every missing link/numa value (hwloc), NULL = sysfs wording */
} scan_pci_info;

/* ---- topo_scan_util.c: helpers every probe uses ---- */
/* Path under the scan root ("/sys/..." -> "<root>/sys/..."). */
void scan_path(const scan_ctx *c, char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Read a small text file (first line kept, trailing space trimmed): 0 ok, -1 unreadable. */
int scan_read_str(const char *path, char *buf, size_t len);
int scan_read_ll(const char *path, long long *out);
/* snprintf for paths and names: 0, or -1 when the result was cut short. */
int scan_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Record <unknown attr reason/> under `node` (system when NULL) + TT_WARN. */
void scan_unknown(scan_ctx *c, tt_xml_node *node, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Lowercase and check a dddd:bb:dd.f bus id; 0 when well formed. */
int scan_busid_norm(const char *in, char *out, size_t len);
int scan_is_bdf(const char *s);
/* PCI class helpers. */
int scan_class_is_gpu(long cls, long vendor);
int scan_class_is_nic(long cls);
int scan_class_is_nvswitch(long cls);
/* An SR-IOV virtual function by PCI vendor/device id (producers without physfn: hwloc XML). */
int scan_pci_is_vf(unsigned vendor, unsigned device);

/* ---- topo_scan_tree.c: the NCCL-shaped tree, shared by sysfs and hwloc ---- */
/* cpu element for a NUMA node, created in numaid order when absent. */
tt_xml_node *scan_cpu_get(scan_ctx *c, int numaid, int *created);
/* Place a device: chain[0..n-1] are the bus ids from the root port down to the
 * device (chain[n-1]).  NCCL's rule keeps every other level counting up from
 * the device (device, its switch upstream port, ...), the top kept one hangs
 * from cpu[numaid].  `info(c, busid, i, arg, pci_node)` fills each newly made
 * pci element (i = index in chain).  Returns the device's pci element. */
typedef void (*scan_fill_fn)(scan_ctx *c, const char *busid, int chain_index, void *arg,
                             tt_xml_node *pci);
/* Index in chain of the top element NCCL keeps (its numa_node picks the cpu). */
#define SCAN_TREE_TOP(n) (((n) - 1) & 1)
tt_xml_node *scan_tree_place(scan_ctx *c, const char *hostbridge, char chain[][16], int n,
                             int numaid, scan_fill_fn fill, void *arg);
/* The pci element with this bus id anywhere under system, or NULL. */
tt_xml_node *scan_find_pci(scan_ctx *c, const char *busid);
/* Insert child keeping <pci> children ordered by busid (NCCL orders them). */
tt_status scan_insert_sorted(tt_xml_node *parent, tt_xml_node *child);
/* Write the attributes of `in` on `pci` (ids, NCCL link_speed/width rule, ours). */
void scan_pci_set_attrs(scan_ctx *c, tt_xml_node *pci, const scan_pci_info *in);
/* <nic> under `pci` (or under cpu when pci is a cpu element); one per parent. */
tt_xml_node *scan_nic_get(scan_ctx *c, tt_xml_node *parent);
/* <net> named `name` anywhere, or NULL. */
tt_xml_node *scan_find_net(scan_ctx *c, const char *name);
/* Next free net dev index. */
int scan_next_net_dev(scan_ctx *c);

/* After all probes: gdr on nets, <unknown> for GPUs nobody described. */
void scan_finish(scan_ctx *c);

/* ---- probes: each returns its state; never fails the scan ---- */
tt_probe_state scan_probe_sysfs(scan_ctx *c);
tt_probe_state scan_probe_gdr(scan_ctx *c);
tt_probe_state scan_probe_hwloc(scan_ctx *c);      /* live hwloc or opt->hwloc_xml */
tt_probe_state scan_probe_nvml(scan_ctx *c);
tt_probe_state scan_probe_cuda(scan_ctx *c);
tt_probe_state scan_probe_ibv(scan_ctx *c);

/* ---- the probe table (topo_scan_probes.c), walked in its run order by tt_topo_scan_report ---- */
typedef enum {
    SCAN_NEEDS_ROOT,     /* files under the scan root: runs live and on a fake sysfs root */
    SCAN_NEEDS_MACHINE,  /* the real machine itself: live only (off with a fake root) */
    SCAN_NEEDS_DEVICES,  /* device libraries (dlopen): live, or a fake root with
                            TOPOTUNE_SCAN_DEVICE_PROBES=1 (tests' stub libraries) */
} scan_needs;
typedef enum {
    SCAN_OFFLINE_OFF,      /* listed "off" in an offline (hwloc XML) scan */
    SCAN_OFFLINE_UNLISTED, /* left out of an offline scan's report */
    SCAN_OFFLINE_READS,    /* reads opt->hwloc_xml: runs first in an offline scan, and its
                              failure fails the scan (the file is the whole input) */
} scan_offline;
typedef struct {
    const char *name;      /* report name, exclusion-list name: [a-z0-9], < 16 chars */
    tt_probe_state (*run)(scan_ctx *c); /* add to c->doc; never fails the scan */
    scan_needs needs;
    scan_offline offline;
    const char *after;     /* comma-separated names of the probes that must run first ("" none) */
} scan_probe_def;
extern const scan_probe_def scan_probe_table[]; /* {NULL} ends it; independent probes report in this order */
int scan_probe_count(void);
/* The run order: order[i] = index into scan_probe_table of the i-th probe to run (order has
 * scan_probe_count() entries); every probe after those its `after` names, ties in table order.
 * TT_ERR_INTERNAL for an unknown name or a circle. */
tt_status scan_probe_order(int *order);
/* excluded[k] (scan_probe_count() entries) = 1 when scan_probe_table[k] is excluded, from `list`
 * and $TOPOTUNE_SCAN_EXCLUDE (comma-separated names); an unknown name is TT_ERR_INVALID listing
 * the valid ones. */
tt_status scan_probe_exclusions(const char *list, unsigned char *excluded);

/* Probe note (printf into c->probe->note). */
void scan_note(scan_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0 (reason in why) when hwloc XML text has a shape hwloc 2.9 crashes on (topo_scan_hwloc_guard.c). */
int scan_hwloc_xml_safe(const char *data, size_t size, char *why, size_t cap);
/* Offline scan of an hwloc XML file, 2.x through hwloc, 3.0 (or refused by hwloc)
 * through topotune's own reader (topo_hwloc_xml.c). */
tt_probe_state scan_hwloc_xml_file(scan_ctx *c, const char *path);
/* Live scan: `xml` (len bytes, no NUL counted) is hwloc's own export of the loaded
 * machine (topo_scan_hwloc.c); parsed by topotune's reader and mapped by the same
 * code as a file: the whole tree, or only a cross-check when c->tree_done. */
tt_probe_state scan_hwloc_xml_live(scan_ctx *c, const char *xml, size_t len);

#endif
