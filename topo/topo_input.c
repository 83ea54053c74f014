/*
 * topo_input.c - one loader for a topology file, whatever wrote it: our native XML or NCCL's
 * (read as is), or an hwloc export (root <topology>, with or without hwloc's DOCTYPE, which
 * is accepted and never loaded), which is turned into our XML by the offline hwloc scan.
 * Used by topo-dump/topo-tune --input, topo-exec --predict and the --validate model.
 */
#include <string.h>

#include "topo_internal.h"
#include "tt_topo.h"

tt_status tt_topo_read_file(const char *path, tt_xml_doc **doc, int *hwloc)
{
    tt_status st = tt_xml_read_file(path, NULL, doc);
    if (hwloc) *hwloc = 0;
    if (st != TT_OK || !(*doc)->root || strcmp((*doc)->root->name, TT_ELEM_HWLOC_ROOT)) return st;
    int line = (*doc)->root->line;
    tt_xml_doc_free(*doc);
    *doc = NULL;
    if (!strcmp(path, "-"))
        return tt_error_set(TT_ERR_UNSUPPORTED, "%s:%d: hwloc XML on standard input: give the file "
                                                "name (--input FILE or --hwloc-xml FILE)", path, line);
    tt_scan_options so;
    tt_scan_options_default(&so);
    so.hwloc_xml = path;
    st = tt_topo_scan_report(&so, doc, NULL);
    if (st == TT_OK && hwloc) *hwloc = 1;
    return st;
}
