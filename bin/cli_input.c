/* cli_input.c - --input FILE: NCCL/native XML, or an hwloc export (root <topology>). */
#include <string.h>

#include "cli_input.h"
#include "cli_scan.h"

tt_status tt_cli_read_topology(const char *path, int quiet, tt_xml_doc **doc, int *hwloc)
{
    tt_status st = tt_xml_read_file(path, NULL, doc);
    tt_cli_scan_opts so;
    const char *label;
    int line;

    if (hwloc)
        *hwloc = 0;
    if (st != TT_OK || !(*doc)->root || strcmp((*doc)->root->name, "topology"))
        return st;
    /* hwloc XML (its DOCTYPE, if any, was accepted and not loaded): scan it offline */
    line = (*doc)->root->line;
    tt_xml_doc_free(*doc);
    *doc = NULL;
    if (!strcmp(path, "-"))
        return tt_error_set(TT_ERR_UNSUPPORTED, "%s:%d: hwloc XML on standard input: give the file "
                                                "name (--input FILE or --hwloc-xml FILE)", path, line);
    memset(&so, 0, sizeof so);
    so.hwloc_xml = path;
    so.quiet = quiet;
    st = tt_cli_scan_load(&so, doc, &label);
    if (st == TT_OK && hwloc)
        *hwloc = 1;
    return st;
}
