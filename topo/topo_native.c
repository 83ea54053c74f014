/*
 * topo_native.c - a loaded topology (NCCL's dialect or ours) as our native document:
 * tt_version/tt_source on <system> and an <unknown attr=... reason=.../> note wherever the input
 * could not say something NCCL then assumes (no NUMA node, PCIe link width or speed not reported).
 * topo-dump -f native writes it.
 */
#include <string.h>

#include "tt_topo.h"

static int has_unknown_note(const tt_xml_node *n, const char *attr)
{
    const tt_xml_node *k;
    for (k = tt_xml_first_child(n, "unknown"); k; k = tt_xml_next_sibling(k, "unknown")) {
        const char *a = tt_xml_get(k, "attr");
        if (a && !strcmp(a, attr))
            return 1;
    }
    return 0;
}

static tt_status add_unknown_note(tt_xml_node *n, const char *attr, const char *reason)
{
    tt_xml_node *u;
    tt_status st;
    if (has_unknown_note(n, attr))
        return TT_OK;
    u = tt_xml_node_new("unknown");
    if (!u)
        return tt_error_set(TT_ERR_NOMEM, "out of memory annotating the topology");
    if ((st = tt_xml_set(u, "attr", attr)) != TT_OK || (st = tt_xml_set(u, "reason", reason)) != TT_OK ||
        (st = tt_xml_insert(n, 0, u)) != TT_OK) {
        tt_xml_node_free(u);
        return st;
    }
    return TT_OK;
}

tt_status tt_topo_to_native(const tt_xml_doc *doc, tt_xml_doc **out)
{
    tt_xml_doc *copy;
    tt_xml_node *root, *n;
    tt_status st = TT_OK;

    *out = NULL;
    if (!doc || !doc->root)
        return tt_error_set(TT_ERR_INVALID, "no topology to convert");
    copy = tt_xml_doc_new("system", doc->source);
    root = tt_xml_clone(doc->root);
    if (!copy || !root) {
        tt_xml_doc_free(copy);
        tt_xml_node_free(root);
        return tt_error_set(TT_ERR_NOMEM, "out of memory copying the topology");
    }
    tt_xml_node_free(copy->root);
    copy->root = root;
    if (!tt_xml_get(root, "tt_version")) {
        st = tt_xml_set(root, "tt_version", "1");
        if (st == TT_OK && !tt_xml_get(root, "tt_source"))
            st = tt_xml_set(root, "tt_source", "nccl");
    }
    for (n = root; n && st == TT_OK; n = tt_xml_walk_next(root, n)) {
        const char *v;
        if (!strcmp(n->name, "cpu") && (v = tt_xml_get(n, "numaid")) && !strcmp(v, "-1"))
            st = add_unknown_note(n, "numaid",
                                  "no NUMA information (numa_node -1: VM, container or firmware "
                                  "without PCI-NUMA data)");
        if (!strcmp(n->name, "pci") && st == TT_OK) {
            if ((v = tt_xml_get(n, "link_width")) && (!*v || !strcmp(v, "0")))
                st = add_unknown_note(n, "link_width",
                                      "PCIe link width not reported; NCCL assumes x16");
            if (st == TT_OK && (v = tt_xml_get(n, "link_speed")) && !*v)
                st = add_unknown_note(n, "link_speed",
                                      "PCIe link speed not reported; NCCL assumes Gen3 (8 GT/s)");
        }
    }
    if (st != TT_OK) {
        tt_xml_doc_free(copy);
        return st;
    }
    *out = copy;
    return TT_OK;
}
