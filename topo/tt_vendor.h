/*
 * tt_vendor.h - partial vendor topology files (issue #19): the table of
 * NVIDIA data-center GPU parts by PCI device id (topo_parts.c), used by the
 * graph builder to fill a fabric a file does not describe, and the fusion of
 * a vendor file with the live scan (topo_fuse.c), as NCCL does with
 * NCCL_TOPO_FILE.  See docs/xml-schema.md ("Partial vendor files") and
 * docs/scan.md ("Fusion with a vendor file").
 */
#ifndef TT_VENDOR_H
#define TT_VENDOR_H

#include "tt_common.h"
#include "tt_xml.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Fuse a vendor topology file with a scan of this machine, as NCCL does with
 * NCCL_TOPO_FILE: the vendor file comes first (its PCIe tree and attributes
 * win); the scan fills in, matched by PCI bus id, what the file lacks
 * (attributes it does not set, <gpu>/<nvlink>, <nic>/<net>, ...) and adds the
 * devices the file does not name under their scanned parent.  `*nmatched`
 * (may be NULL) receives the number of scanned devices found in the file.
 * The result is a new doc; neither input is changed. */
tt_status tt_topo_fuse(const tt_xml_doc *vendor, const tt_xml_doc *scan, tt_xml_doc **out,
                       int *nmatched);

#ifdef __cplusplus
}
#endif
#endif
