/*
 * topo_lint.c - what the tools check of a document before they use it: the lint that also
 * builds the graph (topo-dump --validate), the root element a conversion needs, and reading a
 * vendor file fused with a scan (topo-dump --vendor-file).
 */
#include <string.h>

#include "topo_internal.h"
#include "tt_topo.h"

tt_status tt_topo_validate_build(const tt_xml_doc *doc, const tt_topo_options *o, tt_findings *f)
{
    tt_status st = tt_topo_validate(doc, f);
    if (st != TT_OK || tt_findings_max_severity(f) >= TT_SEV_ERROR) return st;
    /* the file lints clean enough: it must also build */
    tt_topo *t = NULL;
    if (tt_topo_from_xml(doc, o, &t) != TT_OK)
        st = tt_findings_add(f, TT_SEV_ERROR, "build-failed", 0, "", "the topology graph cannot be built: %s",
                             tt_error_message());
    /* GPUs of two vendors: a valid machine, but no one communicator (topo-tune refuses it) */
    if (t && st == TT_OK && tt_topo_check_one_vendor(t) != TT_OK)
        st = tt_findings_add(f, TT_SEV_WARN, "mixed-gpu-vendors", 0, "", "%s", tt_error_message());
    /* what the builder assumed for a partial vendor file (issue #19) */
    for (int i = 0; t && st == TT_OK && i < t->assumed.n; i++) {
        const tt_finding *a = &t->assumed.items[i];
        st = tt_findings_add(f, a->severity, a->code, a->line, a->where, "%s", a->message);
    }
    tt_topo_free(t);
    return st;
}


tt_status tt_topo_require_system(const tt_xml_doc *doc, const char *label)
{
    if (!doc->root) return tt_error_set(TT_ERR_PARSE, "%s: no root element", label);
    if (strcmp(doc->root->name, TT_ELEM_SYSTEM))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: root element is <%s>, not <system>: %s",
                            label, doc->root->line, doc->root->name, tt_topo__root_what(doc->root->name));
    return TT_OK;
}

int tt_topo_doc_is_cluster(const tt_xml_doc *doc)
{
    return doc->root && !strcmp(doc->root->name, TT_ELEM_CLUSTER);
}

tt_status tt_topo_fuse_file(const char *vendor_file, const tt_xml_doc *scan, tt_xml_doc **out, int *nmatched)
{
    tt_xml_doc *vendor = NULL;
    tt_status st = tt_xml_read_file(vendor_file, NULL, &vendor);
    if (st != TT_OK) return st;
    st = tt_topo_fuse(vendor, scan, out, nmatched);
    tt_xml_doc_free(vendor);
    return st;
}
