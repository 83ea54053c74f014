/*
 * tt_xml.h - the one generic XML tree every topotune stage reads and writes.
 *
 * Reading uses libxml2 with network access, external entities and DTD loading
 * disabled, entity expansion bounded, and limits on file size, element depth
 * and element count.  Every node remembers the line it came from so that
 * later stages can report "file:line: element <pci>: attribute link_width ...".
 *
 * Writing produces one of two dialects:
 *   TT_XML_NATIVE - the whole tree (our superset of NCCL's topology XML);
 *   TT_XML_NCCL   - only elements/attributes NCCL's parser knows, within its
 *                   limits (<=16 attributes, <=255-char values, <=256 nodes,
 *                   spaces only, no <?xml?> prolog) so NCCL accepts the file
 *                   as NCCL_TOPO_FILE.
 * Both writers are deterministic: attributes in insertion order, children in
 * tree order, 2-space indentation, so write(read(write(t))) == write(t).
 */
#ifndef TT_XML_H
#define TT_XML_H

#include "tt_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tt_xml_attr {
    char *name;
    char *value;
} tt_xml_attr;

typedef struct tt_xml_node {
    char *name;
    int line;                     /* 1-based source line, 0 when built in memory */
    tt_xml_attr *attrs;
    int nattrs, cap_attrs;
    struct tt_xml_node **children;
    int nchildren, cap_children;
    struct tt_xml_node *parent;
} tt_xml_node;

typedef struct tt_xml_doc {
    tt_xml_node *root;
    char *source;                 /* file name used in messages ("<buffer>" ...) */
} tt_xml_doc;

typedef struct {
    size_t max_bytes;             /* default 16 MiB */
    int max_depth;                /* default 64 */
    int max_nodes;                /* default 100000 elements */
} tt_xml_limits;

/* Default limits (used when `lim` is NULL). */
void tt_xml_limits_default(tt_xml_limits *lim);

/* Parse. Errors: TT_ERR_IO, TT_ERR_PARSE ("file:line: message"), TT_ERR_LIMIT. */
tt_status tt_xml_read_file(const char *path, const tt_xml_limits *lim, tt_xml_doc **out);
tt_status tt_xml_read_buffer(const char *buf, size_t len, const char *name,
                             const tt_xml_limits *lim, tt_xml_doc **out);

/* Reader flags.  TT_XML_READ_KEEP_TEXT keeps an element's text content (hwloc's
 * <indexes>/<u64values>) in the attribute TT_XML_TEXT_ATTR instead of dropping it. */
#define TT_XML_READ_KEEP_TEXT 1u
#define TT_XML_TEXT_ATTR "#text"
tt_status tt_xml_read_buffer_flags(const char *buf, size_t len, const char *name,
                                   const tt_xml_limits *lim, unsigned flags, tt_xml_doc **out);

/* Build in memory. */
tt_xml_doc *tt_xml_doc_new(const char *root_name, const char *source);
void tt_xml_doc_free(tt_xml_doc *doc);
tt_xml_node *tt_xml_node_new(const char *name);
void tt_xml_node_free(tt_xml_node *node);          /* frees the subtree; detach first */
tt_status tt_xml_append(tt_xml_node *parent, tt_xml_node *child);
tt_status tt_xml_insert(tt_xml_node *parent, int index, tt_xml_node *child);
void tt_xml_detach(tt_xml_node *node);             /* remove from parent, keep subtree */
/* Deep copy (line numbers kept). NULL on OOM. */
tt_xml_node *tt_xml_clone(const tt_xml_node *node);

/* Attributes. tt_xml_get returns NULL when absent. */
const char *tt_xml_get(const tt_xml_node *node, const char *attr);
tt_status tt_xml_set(tt_xml_node *node, const char *attr, const char *value);
tt_status tt_xml_setf(tt_xml_node *node, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tt_xml_unset(tt_xml_node *node, const char *attr);
/* Typed getters: TT_ERR_NOT_FOUND if absent (no message set), TT_ERR_PARSE
 * with "source:line: <elem> attribute 'x'='v' is not an integer" otherwise. */
tt_status tt_xml_get_ll(const tt_xml_doc *doc, const tt_xml_node *node, const char *attr,
                        long long *out);
tt_status tt_xml_get_double(const tt_xml_doc *doc, const tt_xml_node *node, const char *attr,
                            double *out);

/* Navigation. */
tt_xml_node *tt_xml_first_child(const tt_xml_node *node, const char *name); /* name NULL = any */
tt_xml_node *tt_xml_next_sibling(const tt_xml_node *node, const char *name);
/* First descendant (pre-order, including node) named `name` whose attribute
 * `attr` equals `value` (attr NULL = any). */
tt_xml_node *tt_xml_find(const tt_xml_node *node, const char *name, const char *attr,
                         const char *value);
/* Pre-order walk: returns the node after `cur` inside the subtree of `top`. */
tt_xml_node *tt_xml_walk_next(const tt_xml_node *top, const tt_xml_node *cur);
int tt_xml_depth(const tt_xml_node *node);          /* root = 0 */
int tt_xml_count(const tt_xml_node *node);          /* elements in subtree */

typedef enum {
    TT_XML_NATIVE = 0,
    TT_XML_NCCL = 1
} tt_xml_dialect;

/* Serialize. The NCCL dialect fails with TT_ERR_LIMIT if the filtered tree
 * breaks one of NCCL's limits (naming which). *out is NUL-terminated. */
tt_status tt_xml_write_buffer(const tt_xml_doc *doc, tt_xml_dialect dialect, char **out,
                              size_t *len);
/* Atomic file write; path NULL or "-" = stdout. */
tt_status tt_xml_write_file(const tt_xml_doc *doc, tt_xml_dialect dialect, const char *path);

/* RCCL's dialect (xml_dialect.c): 1 when the document carries one of RCCL's
 * marks (an <xgmi>, a <gpu gcn>; its version="2" then counts as RCCL's).  The NCCL-dialect
 * writer then also keeps RCCL's own attributes (tt_xml_rccl_knows). */
int tt_xml_is_rccl(const tt_xml_doc *doc);
int tt_xml_rccl_knows(const char *elem, const char *attr);
#define TT_RCCL_VERSION "2"  /* <system version> RCCL writes */

/* ------------------------------------------------------------------------
 * Element and attribute names of the topology dialects: NCCL's topology XML
 * and our native superset (docs/xml-schema.md).  Every reader and writer of
 * a topology tree (this module's NCCL schema, topo's builder, validator,
 * health checks and views) spells them through these constants.
 * ------------------------------------------------------------------------ */
/* elements (NCCL) */
#define TT_ELEM_SYSTEM "system"
#define TT_ELEM_HWLOC_ROOT "topology" /* root of an hwloc XML export */
#define TT_ELEM_CLUSTER "cluster"  /* root of a merged cluster file (native extension, topo-dump --merge) */
#define TT_ATTR_HOST "host"        /* <system host="node017"> inside a <cluster> */
#define TT_ELEM_CPU "cpu"
#define TT_ELEM_PCI "pci"
#define TT_ELEM_PCILINK "pcilink"
#define TT_ELEM_GPU "gpu"
#define TT_ELEM_NVLINK "nvlink"
#define TT_ELEM_C2C "c2c"
#define TT_ELEM_XGMI "xgmi"              /* RCCL */
#define TT_ELEM_NIC "nic"
#define TT_ELEM_NET "net"
/* elements (native only) */
#define TT_ELEM_NVSWITCH "nvswitch"
#define TT_ELEM_FINDINGS "findings"
#define TT_ELEM_P2P "p2p"
#define TT_ELEM_UNKNOWN "unknown"

/* <system> */
#define TT_ATTR_VERSION "version"
#define TT_ATTR_NAME "name"               /* also <net> */
#define TT_ATTR_TT_VERSION "tt_version"   /* native */
/* <cpu> */
#define TT_ATTR_HOST_HASH "host_hash"
#define TT_ATTR_NUMAID "numaid"
#define TT_ATTR_AFFINITY "affinity"
#define TT_ATTR_ARCH "arch"
#define TT_ATTR_VENDOR "vendor"           /* also <pci> */
#define TT_ATTR_FAMILYID "familyid"
#define TT_ATTR_MODELID "modelid"
/* <pci> */
#define TT_ATTR_BUSID "busid"
#define TT_ATTR_CLASS "class"
#define TT_ATTR_DEVICE "device"
#define TT_ATTR_SUBSYSTEM_VENDOR "subsystem_vendor"
#define TT_ATTR_SUBSYSTEM_DEVICE "subsystem_device"
#define TT_ATTR_LINK_SPEED "link_speed"
#define TT_ATTR_LINK_WIDTH "link_width"
#define TT_ATTR_MAX_LINK_SPEED "max_link_speed" /* native */
#define TT_ATTR_MAX_LINK_WIDTH "max_link_width" /* native */
#define TT_ATTR_CUR_LINK_SPEED "cur_link_speed" /* native */
#define TT_ATTR_CUR_LINK_WIDTH "cur_link_width" /* native */
/* <pcilink>, <nvlink>, <xgmi>, <p2p> */
#define TT_ATTR_TARGET "target"
/* <nvlink>, <xgmi>, <c2c> */
#define TT_ATTR_COUNT "count"
#define TT_ATTR_TCLASS "tclass"
#define TT_ATTR_BW "bw"
#define TT_ATTR_DOWN "down"               /* native: NVLinks reported down */
/* <gpu> */
#define TT_ATTR_DEV "dev"                 /* also <net> */
#define TT_ATTR_SM "sm"
#define TT_ATTR_RANK "rank"
#define TT_ATTR_GDR "gdr"                 /* also <net> */
#define TT_ATTR_MLOPART "mlopart"
#define TT_ATTR_GCN "gcn"                 /* RCCL: gfx target, "gfx942" (TT_ATTR_ARCH: RCCL's opaque arch) */
/* <p2p> (native) */
#define TT_ATTR_READ "read"
#define TT_ATTR_WRITE "write"
#define TT_ATTR_ACCESS "access"
/* <net> */
#define TT_ATTR_SPEED "speed"
#define TT_ATTR_PORT "port"
#define TT_ATTR_LATENCY "latency"
#define TT_ATTR_GUID "guid"
#define TT_ATTR_MAXCONN "maxconn"
#define TT_ATTR_NODE_GUID "node_guid"     /* native: an RDMA port */
#define TT_ATTR_STATE "state"             /* native */
#define TT_ATTR_MTU "mtu"                 /* native */
#define TT_ATTR_LINK_LAYER "link_layer"   /* native */
#define TT_ATTR_DRIVER "driver"           /* native: the kernel driver of the port's device (efa, gve, mlx5_core, ...) */
/* transient trim marker, never written */
#define TT_ATTR_KEEP "keep"

/* NCCL's parser limits, as documented in docs/xml-schema.md. */
#define TT_XML_NCCL_MAX_ATTRS 16
#define TT_XML_NCCL_MAX_STR 255
#define TT_XML_NCCL_MAX_NODES 256

/* Whether NCCL's loader knows element `elem` (under `parent`) and attribute
 * `attr` of it (attr NULL asks about the element alone). */
int tt_xml_nccl_knows(const char *parent, const char *elem, const char *attr);

#ifdef __cplusplus
}
#endif
#endif
