/* topo_names.c - names of node, link and path types; path type parsing. */
#include "tt_topo.h"

#include <strings.h>

static const char *const path_names[] = {
    "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS",
};

const char *tt_node_type_name(tt_node_type type)
{
    switch (type) {
    case TT_NODE_GPU: return "GPU";
    case TT_NODE_PCI: return "PCI";
    case TT_NODE_NVS: return "NVS";
    case TT_NODE_CPU: return "CPU";
    case TT_NODE_NIC: return "NIC";
    case TT_NODE_NET: return "NET";
    case TT_NODE_NTYPES: break;
    }
    return "?";
}

const char *tt_link_type_name(tt_link_type type)
{
    switch (type) {
    case TT_LINK_LOC: return "LOC";
    case TT_LINK_NVL: return "NVL";
    case TT_LINK_C2C: return "C2C";
    case TT_LINK_PCI: return "PCI";
    case TT_LINK_SYS: return "SYS";
    case TT_LINK_NET: return "NET";
    }
    return "?";
}

const char *tt_path_type_name(tt_path_type type)
{
    if ((int)type < 0 || (int)type >= (int)(sizeof path_names / sizeof path_names[0]))
        return "?";
    return path_names[type];
}

tt_status tt_path_type_parse(const char *s, tt_path_type *out)
{
    if (!s || !out)
        return tt_error_set(TT_ERR_INVALID, "path type: no string given");
    for (int i = 0; i < (int)(sizeof path_names / sizeof path_names[0]); i++) {
        if (strcasecmp(s, path_names[i]) == 0) {
            *out = (tt_path_type)i;
            return TT_OK;
        }
    }
    return tt_error_set(TT_ERR_PARSE,
                        "unknown path type '%s' (expected one of LOC NVL NVB C2C PIX PXB P2C "
                        "PXN PHB SYS NET DIS)", s);
}
