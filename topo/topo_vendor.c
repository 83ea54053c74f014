/*
 * topo_vendor.c - which vendor a GPU of a topology file is, from whatever the file shows, and
 * the check that one communicator holds GPUs of one vendor (NCCL drives NVIDIA GPUs, RCCL AMD
 * ones; neither forms a communicator across vendors).  Evidence, first match wins
 * (docs/xml-schema.md, "GPU vendor"):
 *   AMD:    <pci vendor="0x1002">; RCCL's <gpu gcn> or <gpu arch>; an <xgmi> link; class
 *           0x0380xx (display controller) or 0x12xxxx (processing accelerator), which NVIDIA
 *           GPUs never have;
 *   NVIDIA: <pci vendor="0x10de">; an <nvlink> or <c2c> link; a <gpu sm> without RCCL's
 *           gcn/arch (NCCL's dump).
 * A GPU known by PCI class 0x0300/0x0302 alone shows no vendor ("").
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "topo_internal.h"
#include "tt_topo.h"

static int attr_is(const tt_xml_node *n, const char *name, const char *val)
{
    const char *v = n ? tt_xml_get(n, name) : NULL;
    return v && !strcasecmp(v, val);
}

static int attr_starts(const tt_xml_node *n, const char *name, const char *prefix)
{
    const char *v = n ? tt_xml_get(n, name) : NULL;
    return v && !strncasecmp(v, prefix, strlen(prefix));
}

static int has_attr(const tt_xml_node *n, const char *name)
{
    const char *v = n ? tt_xml_get(n, name) : NULL;
    return v && *v;
}

const char *tt_topo_gpu_vendor(const tt_node *g, char *why, size_t n)
{
    const tt_xml_node *pci = g ? g->xml : NULL;
    const tt_xml_node *gx = pci ? tt_xml_first_child(pci, TT_ELEM_GPU) : NULL;
    const char *vendor = "", *w = "no vendor id, link or attribute that names one";
    if (!pci || !g || g->type != TT_NODE_GPU) w = "not a GPU";
    else if (attr_is(pci, TT_ATTR_VENDOR, "0x1002")) vendor = "AMD", w = "vendor 0x1002";
    else if (attr_is(pci, TT_ATTR_VENDOR, "0x10de")) vendor = "NVIDIA", w = "vendor 0x10de";
    else if (has_attr(gx, TT_ATTR_GCN)) vendor = "AMD", w = "RCCL's <gpu gcn>";
    else if (has_attr(gx, TT_ATTR_ARCH)) vendor = "AMD", w = "RCCL's <gpu arch>";
    else if (gx && tt_xml_first_child(gx, TT_ELEM_XGMI)) vendor = "AMD", w = "an <xgmi> link";
    else if (attr_starts(pci, TT_ATTR_CLASS, "0x0380") || attr_starts(pci, TT_ATTR_CLASS, "0x12"))
        vendor = "AMD", w = "class 0x0380xx/0x12xxxx (an AMD Instinct class; NVIDIA GPUs are 0x0300/0x0302)";
    else if (gx && tt_xml_first_child(gx, TT_ELEM_NVLINK)) vendor = "NVIDIA", w = "an <nvlink> link";
    else if (gx && tt_xml_first_child(gx, TT_ELEM_C2C)) vendor = "NVIDIA", w = "a <c2c> link";
    else if (has_attr(gx, TT_ATTR_SM)) vendor = "NVIDIA", w = "NCCL's <gpu sm> without RCCL's gcn/arch";
    if (why && n) snprintf(why, n, "%s", w);
    return vendor;
}

tt_status tt_topo_check_one_vendor(const tt_topo *t)
{
    int first = -1;
    const char *fv = "";
    char fwhy[128], why[128];
    for (int i = 0; t && i < t->nnodes; i++) {
        const tt_node *g = &t->nodes[i];
        if (g->type != TT_NODE_GPU) continue;
        const char *v = tt_topo_gpu_vendor(g, why, sizeof why);
        if (!*v) continue;
        if (first < 0) {
            first = i;
            fv = v;
            snprintf(fwhy, sizeof fwhy, "%s", why);
        } else if (strcmp(v, fv)) {
            const tt_node *f = &t->nodes[first];
            return tt_error_set(TT_ERR_INVALID,
                                "%s:%d: GPU %s is %s (%s) but %s:%d: GPU %s is %s (%s): one host holds GPUs of two "
                                "vendors; NCCL and RCCL cannot form one communicator across vendors: give the GPUs of "
                                "one vendor (a file per vendor, tuned apart)",
                                t->source, g->xml ? g->xml->line : 0, g->busid, v, why, t->source,
                                f->xml ? f->xml->line : 0, f->busid, fv, fwhy);
        }
    }
    return TT_OK;
}
