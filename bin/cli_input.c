/* cli_input.c - --input FILE: NCCL/native XML, or an hwloc export (root <topology>). */
#include <stdlib.h>

#include "cli_input.h"
#include "tt_topo.h"

tt_status tt_cli_read_topology(const char *path, int quiet, tt_xml_doc **doc, int *hwloc)
{
    if (quiet && !getenv("TOPOTUNE_DEBUG")) { /* the offline hwloc scan logs per probe */
        setenv("TOPOTUNE_DEBUG", "NONE", 1);
        tt_log_reinit();
    }
    return tt_topo_read_file(path, doc, hwloc);
}
