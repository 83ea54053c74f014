/* cli_input.c - --input FILE: NCCL/native XML, or an hwloc export (root <topology>). */

#include "cli_input.h"
#include "tt_topo.h"

tt_status tt_cli_read_topology(const char *path, int quiet, tt_xml_doc **doc, int *hwloc)
{
    if (quiet) /* the offline hwloc scan logs per probe */
        tt_log_quiet();
    return tt_topo_read_file(path, doc, hwloc);
}
