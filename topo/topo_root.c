/*
 * topo_root.c - what a document is when its root is not <system>: the words every mode uses to
 * name an NCCL graph file or an hwloc export given as a topology (a leaf: the builder, the
 * validator, the fuser, the cluster reader and the lint all take them from here).
 */
#include <string.h>

#include "topo_internal.h"

#define GRAPH_FILE "an NCCL graph file (NCCL_GRAPH_DUMP_FILE: the rings and trees one communicator " \
                   "chose), not a topology; give the NCCL_TOPO_DUMP_FILE"

const char *tt_topo__root_what(const char *root)
{
    if (root && !strcmp(root, "graphs"))
        return GRAPH_FILE;
    if (root && !strcmp(root, "topology"))
        return "not an NCCL/topotune topology (looks like hwloc XML)";
    return "not an NCCL/topotune topology";
}

const char *tt_topo__root_note(const char *root)
{
    return root && !strcmp(root, "graphs") ? ": " GRAPH_FILE : "";
}
