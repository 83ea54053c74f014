/*
 * cli_scan.h - the live-scan source of topo-dump.
 */
#ifndef TT_CLI_SCAN_H
#define TT_CLI_SCAN_H

#include "tt_topo.h"

typedef struct {
    const char *hwloc_xml;   /* --hwloc-xml FILE: offline scan of an lstopo XML */
    const char *sysfs_root;  /* --sysfs-root DIR: fake or foreign sysfs tree */
    int no_nvml, no_cuda, no_ibv, no_hwloc;
    int report;              /* --scan-report: per-probe lines on stderr */
    int quiet;               /* --quiet: no scan warnings (unless TOPOTUNE_DEBUG is set) */
} tt_cli_scan_opts;

/* Run the scan; *label names the source in later messages ("live scan",
 * "sysfs DIR", the hwloc file).  Scan warnings go to stderr as log lines. */
tt_status tt_cli_scan_load(const tt_cli_scan_opts *o, tt_xml_doc **doc, const char **label);

#endif
