/* xml_dialect.c - which dialect of the topology XML a document is written in.
 *
 * RCCL (AMD's fork of NCCL) writes the same elements as NCCL plus its own
 * (docs/xml-schema.md, "RCCL's dialect"): <system version="2">, <xgmi> links
 * under <gpu>, and two <gpu> attributes, gcn (the gfx target, "gfx942") and
 * arch (an opaque number RCCL keeps for itself).  Its `sm` holds the HIP
 * major*10+minor of the gfx target (gfx942 -> 94, gfx1201 -> 120), not a CUDA
 * compute capability.  A document is RCCL's when it has an <xgmi> or a
 * <gpu gcn> (then version="2" is RCCL's too); the marks are kept through
 * every round trip.
 */
#include "tt_xml.h"

#include <string.h>

int tt_xml_is_rccl(const tt_xml_doc *doc)
{
    const tt_xml_node *root, *n;
    if (!doc || !(root = doc->root) || !root->name)
        return 0;
    /* version="2" alone is no mark: a plain version-2 file stays unsupported */
    for (n = root; n; n = tt_xml_walk_next(root, n)) {
        if (!n->name)
            continue;
        if (!strcmp(n->name, TT_ELEM_XGMI))
            return 1;
        if (!strcmp(n->name, TT_ELEM_GPU) && tt_xml_get(n, TT_ATTR_GCN))
            return 1;
    }
    return 0;
}

int tt_xml_rccl_knows(const char *elem, const char *attr)
{
    if (!elem || !attr)
        return 0;
    return !strcmp(elem, TT_ELEM_GPU) && (!strcmp(attr, TT_ATTR_GCN) || !strcmp(attr, TT_ATTR_ARCH));
}
