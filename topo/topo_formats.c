/*
 * topo_formats.c - the output formats of a topology, as one table that topo-dump (and any
 * library user) walks: name, one line of help, and the writer.  Every writer appends its text
 * to one string builder.  Adding a format is one writer file (topo_view_<name>.c) and one line
 * here (docs/contributing.md, "Adding an output format").  Rendering the Graphviz drawing
 * (svg, png) runs an external program: the front end does that with the "dot" text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_internal.h"
#include "tt_topo.h"

static tt_status append_xml(const tt_xml_doc *doc, tt_xml_dialect dialect, tt_strbuf *sb)
{
    char *buf = NULL;
    size_t len = 0;
    tt_status st = tt_xml_write_buffer(doc, dialect, &buf, &len);
    if (st == TT_OK) tt_strbuf_appendn(sb, buf, len);
    free(buf);
    return st == TT_OK ? tt_strbuf_status(sb) : st;
}

static tt_status fmt_native(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb)
{
    tt_xml_doc *native = NULL;
    tt_status st = tt_topo_to_native(doc, &native);
    if (st == TT_OK) st = append_xml(native, TT_XML_NATIVE, sb);
    tt_xml_doc_free(native);
    return st;
}

static tt_status fmt_nccl(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb)
{
    return append_xml(doc, TT_XML_NCCL, sb);
}

static tt_status fmt_json(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb) { return tt_topo_write_json(t, sb); }
static tt_status fmt_dot(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb) { return tt_topo_write_dot(t, sb); }
static tt_status fmt_matrix(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb)
{
    return tt_topo_write_matrix(t, sb);
}

static const struct {
    tt_topo_format info;
    tt_status (*write)(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb);
} formats[] = {
    {{"native", "topotune XML, notes what is unknown"}, fmt_native},
    {{"nccl", "XML NCCL accepts as NCCL_TOPO_FILE"}, fmt_nccl},
    {{"json", "graph, links and GPU/NET paths (schema topotune-topology)"}, fmt_json},
    {{"dot", "Graphviz drawing (dot -Tsvg)"}, fmt_dot},
    {{"matrix", "GPU/NIC matrix like 'nvidia-smi topo -m'"}, fmt_matrix},
};

const tt_topo_format *tt_topo_format_at(int i)
{
    return i >= 0 && i < (int)(sizeof formats / sizeof formats[0]) ? &formats[i].info : NULL;
}

tt_status tt_topo_format_write(const char *name, const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *out)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        if (strcmp(name, formats[i].info.name)) continue;
        tt_status st = formats[i].write(doc, t, out);
        return st == TT_OK ? tt_strbuf_status(out) : st;
    }
    char list[200] = "";
    for (size_t i = 0, l = 0; i < sizeof formats / sizeof formats[0] && l < sizeof list; i++)
        l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", formats[i].info.name);
    return tt_error_set(TT_ERR_INVALID, "unknown topology format '%s' (one of: %s)", name, list);
}
