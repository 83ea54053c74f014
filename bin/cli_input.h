/*
 * cli_input.h - the --input FILE of topo-dump and topo-tune: NCCL/native
 * topology XML as it is, an hwloc XML export (root <topology>) through the
 * offline hwloc scan (topo/topo_hwloc_xml.c), the same as --hwloc-xml FILE.
 */
#ifndef TT_CLI_INPUT_H
#define TT_CLI_INPUT_H

#include "tt_xml.h"

/* *doc: the native/NCCL document.  *hwloc (may be NULL) is set to 1 when the
 * file was an hwloc export, scanned offline.  quiet: no scan warnings. */
tt_status tt_cli_read_topology(const char *path, int quiet, tt_xml_doc **doc, int *hwloc);

#endif
