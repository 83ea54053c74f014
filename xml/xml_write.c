/* xml_write.c - native and NCCL-dialect serializers.
 *
 * Both dialects use NCCL's writer layout: 2 spaces of indent per depth,
 * `<name a="v">`, children, `</name>`, or `<name a="v"/>` without children,
 * attributes in stored order, one element per line, no prolog.
 *
 * Native: the whole tree; values escaped (&amp; &lt; &gt; &quot;, and TAB,
 * LF, CR as character references so they survive a re-read), so that
 * write(read(write(t))) is byte-identical to write(t).
 *
 * NCCL: only what NCCL's loader reads (tt_xml_nccl_knows), and refused with
 * TT_ERR_LIMIT when the result would break NCCL's hand-written parser
 * (<=16 attributes, <=255-char names/values, <=256 elements, no quotes, '<',
 * '>', '&' or control characters inside values: NCCL does not decode escapes).
 * The traversal is iterative, so any depth is fine.
 */
#include "tt_xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define XML_SUBSYS "xml"

typedef struct {
    const tt_xml_doc *doc;
    tt_xml_dialect dialect;
    int rccl;  /* RCCL's dialect: its <gpu> attributes are kept too */
    tt_strbuf *sb;
    int nodes; /* elements written */
} writer;

/* "source:line" (or just "source" for nodes built in memory). */
static const char *where(const writer *w, const tt_xml_node *n, char *buf, size_t cap)
{
    const char *src = (w->doc && w->doc->source) ? w->doc->source : "<memory>";
    if (n->line > 0)
        snprintf(buf, cap, "%s:%d", src, n->line);
    else
        snprintf(buf, cap, "%s", src);
    return buf;
}

/* Length of the UTF-8 sequence at s (0 if invalid).  Surrogates, overlong
 * forms and U+FFFE/U+FFFF are invalid in XML and refused. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = (c == 0xE0) ? 0xA0 : 0x80, hi = (c == 0xED) ? 0x9F : 0xBF;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xEF && s[1] == 0xBF && (s[2] == 0xBE || s[2] == 0xBF))
            return 0; /* U+FFFE, U+FFFF */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = (c == 0xF0) ? 0x90 : 0x80, hi = (c == 0xF4) ? 0x8F : 0xBF;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

/* XML name: [A-Za-z_:] or non-ASCII first, then also digits, '.', '-'. */
static int valid_name(const char *name)
{
    const unsigned char *p = (const unsigned char *)name;
    int first = 1;
    if (!p || !*p)
        return 0;
    while (*p) {
        unsigned c = *p;
        int n;
        if (c >= 0x80) {
            n = utf8_len(p);
            if (!n)
                return 0;
            p += n;
        } else {
            int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                     (!first && ((c >= '0' && c <= '9') || c == '.' || c == '-'));
            if (!ok)
                return 0;
            p++;
        }
        first = 0;
    }
    return 1;
}

/* Native value check: valid UTF-8, no control characters except TAB/LF/CR. */
static const char *native_value_problem(const char *v)
{
    const unsigned char *p = (const unsigned char *)v;
    while (*p) {
        if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
            return "a control character XML cannot carry";
        if (*p >= 0x80) {
            int n = utf8_len(p);
            if (!n)
                return "invalid UTF-8";
            p += n;
        } else {
            p++;
        }
    }
    return NULL;
}

static void put_escaped(tt_strbuf *sb, const char *v)
{
    const char *run = v;
    for (; *v; v++) {
        const char *rep;
        switch (*v) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\t': rep = "&#9;"; break;
        case '\n': rep = "&#10;"; break;
        case '\r': rep = "&#13;"; break;
        default: continue;
        }
        tt_strbuf_appendn(sb, run, (size_t)(v - run));
        tt_strbuf_append(sb, rep);
        run = v + 1;
    }
    tt_strbuf_appendn(sb, run, (size_t)(v - run));
}

/* Is `child` (of an element already written) written in this dialect? */
static int kept_elem(const writer *w, const tt_xml_node *parent, const tt_xml_node *child)
{
    if (w->dialect == TT_XML_NATIVE)
        return 1;
    /* NVSwitch PCI functions (class 0x0680xx) are left out as NCCL's own dumps leave them
     * out: NCCL knows NVSwitches only as <nvlink> targets, and a PCI-attached NVS node would
     * give its graph a PCI path through the switch's management function. */
    if (!strcmp(child->name, TT_ELEM_PCI)) {
        const char *cls = tt_xml_get(child, TT_ATTR_CLASS);
        if (cls && !strncasecmp(cls, "0x0680", 6))
            return 0;
    }
    return tt_xml_nccl_knows(parent->name, child->name, NULL);
}

static int kept_attr(const writer *w, const tt_xml_node *n, const char *attr)
{
    if (w->dialect == TT_XML_NATIVE)
        return 1;
    if (w->rccl && tt_xml_rccl_knows(n->name, attr))
        return 1;
    return tt_xml_nccl_knows(NULL, n->name, attr);
}

static int next_kept_child(const writer *w, const tt_xml_node *n, int from)
{
    int i;
    for (i = from; i < n->nchildren; i++)
        if (kept_elem(w, n, n->children[i]))
            return i;
    return -1;
}

static tt_status check_nccl_value(const writer *w, const tt_xml_node *n, const char *attr, const char *v)
{
    char loc[1100];
    const unsigned char *p;
    if (strlen(attr) > TT_XML_NCCL_MAX_STR)
        return tt_error_set(TT_ERR_LIMIT,
                            "%s: NCCL dialect: <%s> attribute name '%.40s...' is longer than NCCL's %d "
                            "characters",
                            where(w, n, loc, sizeof loc), n->name, attr, TT_XML_NCCL_MAX_STR);
    if (strlen(v) > TT_XML_NCCL_MAX_STR)
        return tt_error_set(TT_ERR_LIMIT,
                            "%s: NCCL dialect: <%s> attribute '%s' value is %zu characters, longer than "
                            "NCCL's limit of %d",
                            where(w, n, loc, sizeof loc), n->name, attr, strlen(v), TT_XML_NCCL_MAX_STR);
    for (p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\'' || *p == '<' || *p == '>' || *p == '&' || *p < 0x20 || *p == 0x7f)
            return tt_error_set(TT_ERR_LIMIT,
                                "%s: NCCL dialect: <%s> attribute '%s' value contains character 0x%02x "
                                "that NCCL's parser cannot read (it does not decode escapes)",
                                where(w, n, loc, sizeof loc), n->name, attr, *p);
    }
    return TT_OK;
}

/* Write `<name attrs` then `>` or `/>`, with checks. */
static tt_status write_open(writer *w, const tt_xml_node *n, int depth, int has_children)
{
    char loc[1100];
    int i, nattrs = 0;
    if (!valid_name(n->name))
        return tt_error_set(TT_ERR_INVALID, "%s: element name '%s' is not a valid XML name",
                            where(w, n, loc, sizeof loc), n->name ? n->name : "(null)");
    w->nodes++;
    if (w->dialect == TT_XML_NCCL) {
        if (w->nodes > TT_XML_NCCL_MAX_NODES)
            return tt_error_set(TT_ERR_LIMIT,
                                "%s: NCCL dialect: element <%s> is element number %d, more than NCCL's "
                                "limit of %d elements per topology",
                                where(w, n, loc, sizeof loc), n->name, w->nodes, TT_XML_NCCL_MAX_NODES);
        if (strlen(n->name) > TT_XML_NCCL_MAX_STR)
            return tt_error_set(TT_ERR_LIMIT, "%s: NCCL dialect: element name longer than %d characters",
                                where(w, n, loc, sizeof loc), TT_XML_NCCL_MAX_STR);
    }
    for (i = 0; i < depth; i++)
        tt_strbuf_appendn(w->sb, "  ", 2);
    tt_strbuf_append(w->sb, "<");
    tt_strbuf_append(w->sb, n->name);
    for (i = 0; i < n->nattrs; i++) {
        const char *an = n->attrs[i].name, *av = n->attrs[i].value ? n->attrs[i].value : "";
        if (!kept_attr(w, n, an))
            continue;
        if (!valid_name(an))
            return tt_error_set(TT_ERR_INVALID, "%s: <%s> attribute name '%s' is not a valid XML name",
                                where(w, n, loc, sizeof loc), n->name, an ? an : "(null)");
        if (w->dialect == TT_XML_NCCL) {
            tt_status s = check_nccl_value(w, n, an, av);
            if (s != TT_OK)
                return s;
            if (++nattrs > TT_XML_NCCL_MAX_ATTRS)
                return tt_error_set(TT_ERR_LIMIT,
                                    "%s: NCCL dialect: <%s> has more than NCCL's limit of %d attributes "
                                    "(at '%s')",
                                    where(w, n, loc, sizeof loc), n->name, TT_XML_NCCL_MAX_ATTRS, an);
        } else {
            const char *why = native_value_problem(av);
            if (why)
                return tt_error_set(TT_ERR_INVALID, "%s: <%s> attribute '%s' value has %s",
                                    where(w, n, loc, sizeof loc), n->name, an, why);
        }
        tt_strbuf_append(w->sb, " ");
        tt_strbuf_append(w->sb, an);
        tt_strbuf_append(w->sb, "=\"");
        if (w->dialect == TT_XML_NATIVE)
            put_escaped(w->sb, av);
        else
            tt_strbuf_append(w->sb, av); /* checked: nothing to escape */
        tt_strbuf_append(w->sb, "\"");
    }
    tt_strbuf_append(w->sb, has_children ? ">\n" : "/>\n");
    return TT_OK;
}

static void write_close(writer *w, const tt_xml_node *n, int depth)
{
    int i;
    for (i = 0; i < depth; i++)
        tt_strbuf_appendn(w->sb, "  ", 2);
    tt_strbuf_append(w->sb, "</");
    tt_strbuf_append(w->sb, n->name);
    tt_strbuf_append(w->sb, ">\n");
}

typedef struct {
    const tt_xml_node *node;
    int next; /* next child index to look at */
} frame;

static tt_status write_tree(writer *w, const tt_xml_node *root)
{
    frame *stack = NULL;
    int depth = 0, cap = 0;
    tt_status s;

    s = write_open(w, root, 0, next_kept_child(w, root, 0) >= 0);
    if (s != TT_OK || next_kept_child(w, root, 0) < 0)
        return s;
    cap = 16;
    stack = malloc((size_t)cap * sizeof *stack);
    if (!stack)
        return tt_error_set(TT_ERR_NOMEM, "xml write: out of memory");
    stack[0].node = root;
    stack[0].next = 0;
    depth = 1; /* number of open elements */
    while (depth > 0) {
        frame *top = &stack[depth - 1];
        int i = next_kept_child(w, top->node, top->next);
        const tt_xml_node *c;
        int has;
        if (i < 0) {
            write_close(w, top->node, depth - 1);
            depth--;
            continue;
        }
        top->next = i + 1;
        c = top->node->children[i];
        has = next_kept_child(w, c, 0) >= 0;
        s = write_open(w, c, depth, has);
        if (s != TT_OK)
            break;
        if (has) {
            if (depth == cap) {
                frame *p = realloc(stack, (size_t)cap * 2 * sizeof *stack);
                if (!p) {
                    s = tt_error_set(TT_ERR_NOMEM, "xml write: out of memory");
                    break;
                }
                stack = p;
                cap *= 2;
            }
            stack[depth].node = c;
            stack[depth].next = 0;
            depth++;
        }
    }
    free(stack);
    return s;
}

tt_status tt_xml_write_buffer(const tt_xml_doc *doc, tt_xml_dialect dialect, char **out, size_t *len)
{
    tt_strbuf sb;
    writer w;
    tt_status s;
    char loc[1100];

    if (out)
        *out = NULL;
    if (len)
        *len = 0;
    if (!doc || !out)
        return tt_error_set(TT_ERR_INVALID, "xml write: NULL document or output");
    if (!doc->root)
        return tt_error_set(TT_ERR_INVALID, "%s: xml write: document has no root element",
                            doc->source ? doc->source : "<memory>");
    if (dialect != TT_XML_NATIVE && dialect != TT_XML_NCCL)
        return tt_error_set(TT_ERR_INVALID, "xml write: unknown dialect %d", (int)dialect);
    memset(&w, 0, sizeof w);
    w.doc = doc;
    w.dialect = dialect;
    w.rccl = dialect == TT_XML_NCCL && tt_xml_is_rccl(doc);
    w.sb = &sb;
    if (dialect == TT_XML_NCCL) {
        const char *ver = tt_xml_get(doc->root, TT_ATTR_VERSION);
        if (strcmp(doc->root->name, TT_ELEM_SYSTEM))
            return tt_error_set(TT_ERR_INVALID,
                                "%s: NCCL dialect: root element is <%s>; NCCL topology files need <system>",
                                where(&w, doc->root, loc, sizeof loc), doc->root->name);
        if (w.rccl)
            TT_INFO(XML_SUBSYS, "%s: RCCL's dialect (version %s, <xgmi>, gcn, arch) is kept: the file "
                    "is for RCCL; NCCL would read version 1 only", where(&w, doc->root, loc, sizeof loc),
                    ver ? ver : "missing");
        else if (!ver || strcmp(ver, "1"))
            TT_INFO(XML_SUBSYS, "%s: <system> version is %s; NCCL only loads version=\"1\" files",
                    where(&w, doc->root, loc, sizeof loc), ver ? "not \"1\"" : "missing");
    }
    tt_strbuf_init(&sb);
    s = write_tree(&w, doc->root);
    if (s == TT_OK)
        s = tt_strbuf_status(&sb);
    if (s != TT_OK) {
        tt_strbuf_free(&sb);
        return s;
    }
    *out = tt_strbuf_steal(&sb, len);
    if (!*out)
        return tt_error_set(TT_ERR_NOMEM, "xml write: out of memory");
    TT_TRACE(XML_SUBSYS, "%s: wrote %d elements (%s dialect)", doc->source ? doc->source : "<memory>",
             w.nodes, dialect == TT_XML_NCCL ? "NCCL" : "native");
    return TT_OK;
}

tt_status tt_xml_write_file(const tt_xml_doc *doc, tt_xml_dialect dialect, const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    tt_status s = tt_xml_write_buffer(doc, dialect, &buf, &len);
    if (s != TT_OK)
        return s;
    s = tt_write_file_atomic(path, buf, len);
    free(buf);
    return s;
}
