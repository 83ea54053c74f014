/*
 * cli_vendor.h - partial vendor topology files in the tools (issue #19):
 * --gpu-part, the assumptions the graph builder made, and topo-dump's
 * --vendor-file fusion with the scan.
 */
#ifndef TT_CLI_VENDOR_H
#define TT_CLI_VENDOR_H

#include "tt_topo.h"
#include "tt_xml.h"

/* Check a --gpu-part value against the part table: 0, or a usage error
 * naming the known parts and TT_CLI_EXIT_ERROR. */
int tt_cli_gpu_part_check(const char *name);

/* The builder's assumptions (t->assumed) on stderr, one line each
 * ("<prog>: assumed: SRC:LINE: info: [inferred-nvlink] WHERE: ..."), and,
 * when GPUs have no NVLink information and no part applied, one line
 * "<prog>: warning: GPU interconnect unknown: modelled as PCIe ...". */
void tt_cli_print_assumptions(const tt_topo *t);

/* Read the vendor file and fuse the scanned *doc into it (tt_topo_fuse);
 * *doc is replaced by the fused doc.  A line on stderr says how many scanned
 * devices the file named (unless quiet). */
tt_status tt_cli_fuse_vendor(const char *vendor_file, tt_xml_doc **doc, int quiet);

#endif
