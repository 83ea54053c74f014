/* topo_view_dot.c - the built graph as Graphviz: one cluster per CPU (NUMA
 * node) holding the devices whose closest CPU it is, nodes shaped by type,
 * one edge per linked pair labelled "<type> <GB/s>" ("a/b" when the two
 * directions differ; one-way links get an arrow). */
#include "tt_topo.h"

#include <stdio.h>
#include <string.h>

static void esc(tt_strbuf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            tt_strbuf_appendn(out, "\\", 1);
        if ((unsigned char)*s < 0x20)
            continue;
        tt_strbuf_appendn(out, s, 1);
    }
}

static const char *shape_of(tt_node_type t)
{
    switch (t) {
    case TT_NODE_GPU: return "shape=box, style=filled, fillcolor=\"#c7e9c0\"";
    case TT_NODE_PCI: return "shape=diamond";
    case TT_NODE_NVS: return "shape=hexagon, style=filled, fillcolor=\"#fdd0a2\"";
    case TT_NODE_CPU: return "shape=box3d, style=filled, fillcolor=\"#deebf7\"";
    case TT_NODE_NIC: return "shape=component";
    case TT_NODE_NET: return "shape=ellipse, style=filled, fillcolor=\"#fee391\"";
    default: return "shape=plaintext";
    }
}

static const char *color_of(tt_link_type t)
{
    switch (t) {
    case TT_LINK_NVL: return "#238b45";
    case TT_LINK_C2C: return "#6a51a3";
    case TT_LINK_PCI: return "#2171b5";
    case TT_LINK_SYS: return "#cb181d";
    case TT_LINK_NET: return "#d94801";
    default: return "#737373";
    }
}

static void node_line(const tt_topo *t, int i, const char *indent, tt_strbuf *out)
{
    const tt_node *n = &t->nodes[i];
    tt_strbuf_printf(out, "%sn%d [label=\"", indent, i);
    esc(out, n->name);
    if (n->type == TT_NODE_CPU) {
        if (n->u.cpu.numaid >= 0)
            tt_strbuf_printf(out, "\\nNUMA %d", n->u.cpu.numaid);
        else
            tt_strbuf_append(out, "\\nNUMA unknown");
    } else if (n->type == TT_NODE_GPU) {
        tt_strbuf_printf(out, "\\nsm %d", n->u.gpu.sm);
    } else if (n->type == TT_NODE_NET) {
        tt_strbuf_printf(out, "\\n%.0f Gb/s", n->u.net.speed_mbps / 1000.0);
    }
    if (n->busid[0] && !strstr(n->name, n->busid)) {
        tt_strbuf_append(out, "\\n");
        esc(out, n->busid);
    }
    tt_strbuf_printf(out, "\", %s];\n", shape_of(n->type));
}

/* GB/s with one or two decimals: 370.8, 48.0, 1.25. */
static void fmt_bw(char *buf, size_t sz, double bw)
{
    size_t n;
    snprintf(buf, sz, "%.2f", bw);
    n = strlen(buf);
    if (n > 3 && buf[n - 1] == '0' && buf[n - 3] == '.')
        buf[n - 1] = '\0';
}

static const tt_link *find_link(const tt_node *n, int peer, tt_link_type type)
{
    int l;
    for (l = 0; l < n->nlinks; l++)
        if (n->links[l].peer == peer && n->links[l].type == type)
            return &n->links[l];
    return NULL;
}

tt_status tt_topo_write_dot(const tt_topo *t, tt_strbuf *out)
{
    int i, c, l;
    char bw[48];

    if (!t || !out)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_write_dot: NULL argument");
    tt_strbuf_append(out, "graph topology {\n  graph [label=\"");
    esc(out, t->source[0] ? t->source : "topology");
    tt_strbuf_append(out, "\", labelloc=t, fontname=\"Helvetica\"];\n"
                          "  node [fontname=\"Helvetica\", fontsize=10];\n"
                          "  edge [fontname=\"Helvetica\", fontsize=9];\n");
    /* one cluster per CPU with the devices closest to it */
    for (c = 0; c < t->nnodes; c++) {
        const tt_node *cpu = &t->nodes[c];
        if (cpu->type != TT_NODE_CPU)
            continue;
        tt_strbuf_printf(out, "  subgraph cluster_cpu%d {\n    label=\"", cpu->id);
        esc(out, cpu->name);
        if (cpu->u.cpu.numaid >= 0)
            tt_strbuf_printf(out, " (NUMA %d)", cpu->u.cpu.numaid);
        else
            tt_strbuf_append(out, " (NUMA unknown)");
        tt_strbuf_append(out, "\";\n    style=rounded;\n");
        for (i = 0; i < t->nnodes; i++) {
            tt_node_type ty = t->nodes[i].type;
            if (ty == TT_NODE_NVS)
                continue;
            if (i == c || (ty != TT_NODE_CPU && tt_topo_local_cpu(t, i) == c))
                node_line(t, i, "    ", out);
        }
        tt_strbuf_append(out, "  }\n");
    }
    /* the rest: NVSwitches, devices with no CPU */
    for (i = 0; i < t->nnodes; i++) {
        tt_node_type ty = t->nodes[i].type;
        if (ty == TT_NODE_CPU)
            continue;
        if (ty == TT_NODE_NVS || tt_topo_local_cpu(t, i) < 0)
            node_line(t, i, "  ", out);
    }
    /* edges: one per pair and type */
    for (i = 0; i < t->nnodes; i++) {
        const tt_node *n = &t->nodes[i];
        for (l = 0; l < n->nlinks; l++) {
            const tt_link *k = &n->links[l];
            const tt_link *back;
            int j = k->peer;
            if (j < 0 || j >= t->nnodes || j == i)
                continue;
            if (find_link(n, j, k->type) != k)
                continue; /* several links of one type to one peer: print the first */
            back = find_link(&t->nodes[j], i, k->type);
            if (back && j < i)
                continue; /* printed from the other end */
            fmt_bw(bw, sizeof bw, k->bw);
            tt_strbuf_printf(out, "  n%d -- n%d [label=\"%s %s", i, j,
                             k->xgmi ? "XGMI" : tt_link_type_name(k->type), bw);
            if (back && back->bw != k->bw) {
                fmt_bw(bw, sizeof bw, back->bw);
                tt_strbuf_printf(out, "/%s", bw);
            }
            tt_strbuf_printf(out, "\", color=\"%s\"%s%s];\n", color_of(k->type),
                             k->type == TT_LINK_NVL ? ", penwidth=2" : "",
                             back ? "" : ", dir=forward, style=dashed");
        }
    }
    tt_strbuf_append(out, "}\n");
    return tt_strbuf_status(out);
}
