/* xml_read.c - hardened XML reader: libxml2 -> tt_xml tree.
 *
 * Safety model (see docs/xml-schema.md, "Reader safety"):
 *  - the file is read by us (tt_read_file) with a size bound, then parsed from
 *    memory: libxml2 never opens a file or a URL itself;
 *  - parser options: XML_PARSE_NONET, no XML_PARSE_NOENT (entities are never
 *    substituted), no DTD loading / attribute defaulting / validation, no
 *    XML_PARSE_HUGE (libxml2's own size and depth caps stay on);
 *  - SAX hooks on our private parser context refuse, at the moment they are
 *    seen, any entity declaration, any external DTD (except hwloc's exact
 *    <!DOCTYPE topology SYSTEM "hwloc2.dtd">, accepted, never loaded), any reference to an
 *    entity other than the five predefined ones; external entity resolution
 *    always fails;
 *  - element depth and element count are checked as each start tag arrives,
 *    so a hostile file stops after at most `max_nodes` elements;
 *  - every libxml2 diagnostic goes to our structured error handler and becomes
 *    one line "file:line: message"; libxml2 never prints to stderr.
 */
#include "tt_xml.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <limits.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XML_SUBSYS "xml"
#define XML_MSG_MAX 768

void tt_xml_limits_default(tt_xml_limits *lim)
{
    lim->max_bytes = (size_t)16 << 20; /* 16 MiB: real dumps are < 100 KiB */
    lim->max_depth = 64;               /* NCCL files nest < 10 levels deep */
    lim->max_nodes = 100000;           /* NCCL's own files hold <= 256 elements */
}

static pthread_once_t xml_init_once = PTHREAD_ONCE_INIT;

static void xml_init(void) { xmlInitParser(); }

typedef struct {
    const char *name;   /* source name for messages */
    tt_xml_limits lim;
    int depth;          /* open elements */
    int nodes;          /* start tags seen */
    tt_status code;     /* first failure (TT_OK while none) */
    unsigned flags;     /* TT_XML_READ_* */
    char msg[XML_MSG_MAX];
    xmlParserCtxtPtr ctxt;
} read_state;

static int ctxt_line(xmlParserCtxtPtr ctxt)
{
    if (ctxt && ctxt->input && ctxt->input->line > 0)
        return ctxt->input->line;
    return 1;
}

/* Record the first failure; later ones (usually consequences) are dropped. */
static void state_fail(read_state *st, tt_status code, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void state_fail(read_state *st, tt_status code, int line, const char *fmt, ...)
{
    char text[XML_MSG_MAX];
    va_list ap;
    if (st->code != TT_OK)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    st->code = code;
    if (snprintf(st->msg, sizeof st->msg, "%s:%d: %s", st->name, line, text) >= (int)sizeof st->msg)
        TT_TRACE(XML_SUBSYS, "error message truncated");
}

/* Refuse and stop the parser right away. */
#define REFUSE(st, code, ...)                                       \
    do {                                                            \
        state_fail((st), (code), ctxt_line((st)->ctxt), __VA_ARGS__); \
        xmlStopParser((st)->ctxt);                                  \
    } while (0)

static read_state *state_of(void *ctx)
{
    xmlParserCtxtPtr ctxt = ctx;
    return ctxt ? ctxt->_private : NULL;
}

/* libxml2 diagnostics -> one line.  Warnings are only logged. */
static void record_xml_error(read_state *st, xmlErrorPtr err)
{
    char one[XML_MSG_MAX];
    size_t i, n = 0;
    const char *m;
    int line;
    if (!st || !err)
        return;
    m = err->message ? err->message : "unknown libxml2 error";
    for (i = 0; m[i] && n + 1 < sizeof one; i++) {
        char c = m[i];
        if (c == '\n' || c == '\r' || c == '\t')
            c = ' ';
        one[n++] = c;
    }
    while (n > 0 && one[n - 1] == ' ')
        n--;
    one[n] = '\0';
    line = err->line > 0 ? err->line : ctxt_line(st->ctxt);
    if (err->level == XML_ERR_WARNING) {
        TT_INFO(XML_SUBSYS, "%s:%d: libxml2 warning: %s", st->name, line, one);
        return;
    }
    state_fail(st, TT_ERR_PARSE, line, "%s", one);
}

static void ctxt_serror(void *ctx, xmlErrorPtr err) { record_xml_error(state_of(ctx), err); }

static void global_serror(void *data, xmlErrorPtr err) { record_xml_error(data, err); }

/* Generic (unstructured) messages should never arrive; swallow them. */
static void global_generic(void *data, const char *fmt, ...) { (void)data; (void)fmt; }

/* ------------------------------------------------------------ SAX hooks */

static void hook_internal_subset(void *ctx, const xmlChar *name, const xmlChar *ext_id,
                                 const xmlChar *sys_id)
{
    read_state *st = state_of(ctx);
    /* hwloc writes <!DOCTYPE topology SYSTEM "hwloc2.dtd"> (1.x: "hwloc.dtd") in every
     * export: that exact declaration is accepted and never loaded (no DTD loading
     * option, hook_external_subset does nothing); any other external DTD is refused. */
    if (!ext_id && sys_id && name && !strcmp((const char *)name, "topology") &&
        (!strcmp((const char *)sys_id, "hwloc2.dtd") || !strcmp((const char *)sys_id, "hwloc.dtd"))) {
        xmlSAX2InternalSubset(ctx, name, NULL, NULL);
        return;
    }
    if (ext_id || sys_id) {
        REFUSE(st, TT_ERR_PARSE, "external DTD '%s' is not allowed (topology files need no DTD)",
               sys_id ? (const char *)sys_id : (const char *)ext_id);
        return;
    }
    xmlSAX2InternalSubset(ctx, name, ext_id, sys_id);
}

static void hook_external_subset(void *ctx, const xmlChar *name, const xmlChar *ext_id,
                                 const xmlChar *sys_id)
{
    /* never load an external DTD */
    (void)ctx; (void)name; (void)ext_id; (void)sys_id;
}

static void hook_entity_decl(void *ctx, const xmlChar *name, int type, const xmlChar *public_id,
                             const xmlChar *system_id, xmlChar *content)
{
    read_state *st = state_of(ctx);
    (void)type; (void)public_id; (void)system_id; (void)content;
    REFUSE(st, TT_ERR_PARSE, "entity declarations are not allowed (entity '%s')",
           name ? (const char *)name : "?");
}

static void hook_unparsed_entity_decl(void *ctx, const xmlChar *name, const xmlChar *public_id,
                                      const xmlChar *system_id, const xmlChar *notation)
{
    read_state *st = state_of(ctx);
    (void)public_id; (void)system_id; (void)notation;
    REFUSE(st, TT_ERR_PARSE, "entity declarations are not allowed (entity '%s')",
           name ? (const char *)name : "?");
}

static void hook_reference(void *ctx, const xmlChar *name)
{
    read_state *st = state_of(ctx);
    REFUSE(st, TT_ERR_PARSE,
           "entity reference '&%s;' is not allowed: entity declarations are not allowed, only the "
           "five predefined entities and character references",
           name ? (const char *)name : "?");
}

/* Only reached for names that are not one of the five predefined entities
 * (libxml2 resolves those itself first): nothing else is ever defined. */
static xmlEntityPtr hook_get_entity(void *ctx, const xmlChar *name)
{
    read_state *st = state_of(ctx);
    REFUSE(st, TT_ERR_PARSE,
           "entity reference '&%s;' is not allowed: entity declarations are not allowed, only the "
           "five predefined entities and character references",
           name ? (const char *)name : "?");
    return NULL;
}

static xmlEntityPtr hook_get_parameter_entity(void *ctx, const xmlChar *name)
{
    read_state *st = state_of(ctx);
    REFUSE(st, TT_ERR_PARSE, "parameter entity reference '%%%s;' is not allowed: entity declarations are "
           "not allowed", name ? (const char *)name : "?");
    return NULL;
}

static xmlParserInputPtr hook_resolve_entity(void *ctx, const xmlChar *public_id,
                                             const xmlChar *system_id)
{
    read_state *st = state_of(ctx);
    (void)public_id;
    REFUSE(st, TT_ERR_PARSE, "external entity '%s' is not allowed: entity declarations are not allowed",
           system_id ? (const char *)system_id : "?");
    return NULL;
}

static void hook_start_element(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                               const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                               int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    read_state *st = state_of(ctx);
    /* Limits are enforced even after a non-fatal libxml2 error was recorded
     * (parsing goes on then), so the DOM never grows past them. */
    if (st->depth >= st->lim.max_depth) {
        REFUSE(st, TT_ERR_LIMIT, "element <%s> is nested deeper than the limit of %d levels",
               (const char *)localname, st->lim.max_depth);
        return;
    }
    if (st->nodes >= st->lim.max_nodes) {
        REFUSE(st, TT_ERR_LIMIT, "element <%s> is beyond the limit of %d elements per document",
               (const char *)localname, st->lim.max_nodes);
        return;
    }
    st->depth++;
    st->nodes++;
    xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
                          nb_defaulted, attributes);
    /* libxml2 2.9 stores element lines in 16 bits; above 65535 xmlGetLineNo
     * borrows a neighbour's line.  Keep the exact line (the same value
     * libxml2 uses below 65535) in the node's application field. */
    if (st->ctxt->node && st->ctxt->node->type == XML_ELEMENT_NODE)
        st->ctxt->node->_private = (void *)(intptr_t)ctxt_line(st->ctxt);
}

static void hook_end_element(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                             const xmlChar *uri)
{
    read_state *st = state_of(ctx);
    if (st->depth > 0)
        st->depth--;
    xmlSAX2EndElementNs(ctx, localname, prefix, uri);
}

/* ------------------------------------------------------ DOM -> tt_xml */

static int all_space(const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return 0;
    return 1;
}

static char *qualified(const xmlChar *prefix, const xmlChar *local)
{
    char *s = NULL;
    if (prefix && *prefix) {
        if (asprintf(&s, "%s:%s", (const char *)prefix, (const char *)local) < 0)
            return NULL;
        return s;
    }
    return tt_strdup((const char *)local);
}

static tt_status convert_attrs(read_state *st, xmlNodePtr x, tt_xml_node *n)
{
    xmlNsPtr ns;
    xmlAttrPtr a;
    tt_status s;
    for (ns = x->nsDef; ns; ns = ns->next) {
        char *an = qualified(ns->prefix ? BAD_CAST "xmlns" : NULL, ns->prefix ? ns->prefix : BAD_CAST "xmlns");
        if (!an)
            return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", st->name);
        s = tt_xml_set(n, an, ns->href ? (const char *)ns->href : "");
        free(an);
        if (s != TT_OK)
            return s;
    }
    for (a = x->properties; a; a = a->next) {
        tt_strbuf v;
        xmlNodePtr c;
        char *an;
        tt_strbuf_init(&v);
        for (c = a->children; c; c = c->next) {
            if (c->type == XML_TEXT_NODE && c->content) {
                tt_strbuf_append(&v, (const char *)c->content);
            } else if (c->type == XML_ENTITY_REF_NODE) {
                tt_strbuf_free(&v);
                return tt_error_set(TT_ERR_PARSE,
                                    "%s:%d: <%s> attribute '%s': entity reference '&%s;' is not "
                                    "allowed: entity declarations are not allowed",
                                    st->name, n->line, n->name, (const char *)a->name,
                                    (const char *)c->name);
            }
        }
        if (tt_strbuf_status(&v) != TT_OK) {
            tt_strbuf_free(&v);
            return TT_ERR_NOMEM;
        }
        an = qualified(a->ns ? a->ns->prefix : NULL, a->name);
        if (!an) {
            tt_strbuf_free(&v);
            return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", st->name);
        }
        s = tt_xml_set(n, an, v.data ? v.data : "");
        free(an);
        tt_strbuf_free(&v);
        if (s != TT_OK)
            return s;
    }
    return TT_OK;
}

/* Recursion depth is bounded by max_depth (and libxml2's own 256 cap). */
/* TT_XML_READ_KEEP_TEXT: text content goes to the attribute TT_XML_TEXT_ATTR
 * (a name no XML attribute can have), pieces joined by one space. */
static tt_status append_text(tt_xml_node *n, const char *text)
{
    const char *old = tt_xml_get(n, TT_XML_TEXT_ATTR);
    char *joined;
    tt_status s;
    if (!old)
        return tt_xml_set(n, TT_XML_TEXT_ATTR, text);
    joined = malloc(strlen(old) + strlen(text) + 2);
    if (!joined)
        return TT_ERR_NOMEM;
    sprintf(joined, "%s %s", old, text);
    s = tt_xml_set(n, TT_XML_TEXT_ATTR, joined);
    free(joined);
    return s;
}

static tt_status convert_element(read_state *st, xmlNodePtr x, tt_xml_node **out)
{
    tt_xml_node *n;
    xmlNodePtr c;
    char *name;
    tt_status s;

    *out = NULL;
    name = qualified(x->ns ? x->ns->prefix : NULL, x->name);
    n = name ? tt_xml_node_new(name) : NULL;
    free(name);
    if (!n)
        return tt_error_set(TT_ERR_NOMEM, "%s: out of memory building the tree", st->name);
    n->line = x->_private ? (int)(intptr_t)x->_private : (int)xmlGetLineNo(x);
    if (n->line < 0)
        n->line = 0;
    s = convert_attrs(st, x, n);
    for (c = x->children; s == TT_OK && c; c = c->next) {
        switch (c->type) {
        case XML_ELEMENT_NODE: {
            tt_xml_node *child;
            s = convert_element(st, c, &child);
            if (s == TT_OK && (s = tt_xml_append(n, child)) != TT_OK)
                tt_xml_node_free(child);
            break;
        }
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
            if (c->content && (st->flags & TT_XML_READ_KEEP_TEXT) &&
                !all_space((const char *)c->content, strlen((const char *)c->content))) {
                s = append_text(n, (const char *)c->content);
                if (s != TT_OK)
                    s = tt_error_set(TT_ERR_NOMEM, "%s: out of memory building the tree", st->name);
            } else if (c->content && !all_space((const char *)c->content, strlen((const char *)c->content)))
                TT_INFO(XML_SUBSYS, "%s:%ld: ignoring text content inside <%s>", st->name,
                        xmlGetLineNo(c), n->name);
            break;
        case XML_ENTITY_REF_NODE:
            s = tt_error_set(TT_ERR_PARSE,
                             "%s:%d: entity reference '&%s;' inside <%s> is not allowed: entity "
                             "declarations are not allowed",
                             st->name, n->line, (const char *)c->name, n->name);
            break;
        default: /* comments, processing instructions: ignored */
            break;
        }
    }
    if (s != TT_OK) {
        tt_xml_node_free(n);
        return s;
    }
    *out = n;
    return TT_OK;
}

/* ------------------------------------------------------------- parsing */

static tt_status parse_memory(read_state *st, const char *buf, size_t len, xmlDocPtr *docp)
{
    xmlParserCtxtPtr ctxt;
    xmlDocPtr doc;
    xmlStructuredErrorFunc old_serror;
    void *old_sctx;
    xmlGenericErrorFunc old_generic;
    void *old_gctx;
    const int options = XML_PARSE_NONET | XML_PARSE_BIG_LINES;

    *docp = NULL;
    ctxt = xmlNewParserCtxt();
    if (!ctxt || !ctxt->sax)
        return tt_error_set(TT_ERR_NOMEM, "%s: cannot create an XML parser", st->name);
    st->ctxt = ctxt;
    ctxt->_private = st;
    ctxt->sax->serror = ctxt_serror;
    ctxt->sax->error = NULL;
    ctxt->sax->warning = NULL;
    ctxt->sax->fatalError = NULL;
    ctxt->sax->internalSubset = hook_internal_subset;
    ctxt->sax->externalSubset = hook_external_subset;
    ctxt->sax->entityDecl = hook_entity_decl;
    ctxt->sax->unparsedEntityDecl = hook_unparsed_entity_decl;
    ctxt->sax->reference = hook_reference;
    ctxt->sax->getEntity = hook_get_entity;
    ctxt->sax->getParameterEntity = hook_get_parameter_entity;
    ctxt->sax->resolveEntity = hook_resolve_entity;
    ctxt->sax->startElementNs = hook_start_element;
    ctxt->sax->endElementNs = hook_end_element;
    ctxt->vctxt.error = NULL;
    ctxt->vctxt.warning = NULL;

    /* Per-thread libxml2 handlers, for diagnostics raised without a context. */
    old_serror = xmlStructuredError;
    old_sctx = xmlStructuredErrorContext;
    old_generic = xmlGenericError;
    old_gctx = xmlGenericErrorContext;
    xmlSetStructuredErrorFunc(st, global_serror);
    xmlSetGenericErrorFunc(st, global_generic);

    doc = xmlCtxtReadMemory(ctxt, buf, (int)len, NULL, NULL, options);

    xmlSetStructuredErrorFunc(old_sctx, old_serror);
    xmlSetGenericErrorFunc(old_gctx, old_generic);

    if (st->code == TT_OK && !doc)
        state_fail(st, TT_ERR_PARSE, ctxt_line(ctxt), "document is not well-formed XML");
    if (st->code == TT_OK && ctxt->wellFormed == 0)
        state_fail(st, TT_ERR_PARSE, ctxt_line(ctxt), "document is not well-formed XML");
    st->ctxt = NULL;
    xmlFreeParserCtxt(ctxt);
    if (st->code != TT_OK) {
        if (doc)
            xmlFreeDoc(doc);
        return tt_error_set(st->code, "%s", st->msg);
    }
    *docp = doc;
    return TT_OK;
}

tt_status tt_xml_read_buffer(const char *buf, size_t len, const char *name,
                             const tt_xml_limits *lim, tt_xml_doc **out)
{
    return tt_xml_read_buffer_flags(buf, len, name, lim, 0, out);
}

tt_status tt_xml_read_buffer_flags(const char *buf, size_t len, const char *name,
                                   const tt_xml_limits *lim, unsigned flags, tt_xml_doc **out)
{
    read_state st;
    xmlDocPtr xdoc = NULL;
    xmlNodePtr xroot;
    tt_xml_doc *doc;
    tt_status s;

    if (out)
        *out = NULL;
    if (!out || (!buf && len))
        return tt_error_set(TT_ERR_INVALID, "xml read: NULL buffer or output");
    memset(&st, 0, sizeof st);
    st.name = name ? name : "<buffer>";
    st.flags = flags;
    if (lim)
        st.lim = *lim;
    else
        tt_xml_limits_default(&st.lim);
    if (st.lim.max_depth <= 0 || st.lim.max_nodes <= 0)
        return tt_error_set(TT_ERR_INVALID, "%s: xml limits must be positive (max_depth %d, max_nodes %d)",
                            st.name, st.lim.max_depth, st.lim.max_nodes);
    if (st.lim.max_bytes && len > st.lim.max_bytes)
        return tt_error_set(TT_ERR_LIMIT, "%s: document is %zu bytes, larger than the %zu-byte limit",
                            st.name, len, st.lim.max_bytes);
    if (len > (size_t)INT_MAX)
        return tt_error_set(TT_ERR_LIMIT, "%s: document is %zu bytes, larger than libxml2 accepts",
                            st.name, len);
    if (!buf || all_space(buf, len))
        return tt_error_set(TT_ERR_PARSE, "%s:1: document is empty", st.name);

    pthread_once(&xml_init_once, xml_init);
    s = parse_memory(&st, buf, len, &xdoc);
    if (s != TT_OK)
        return s;
    xroot = xmlDocGetRootElement(xdoc);
    if (!xroot) {
        xmlFreeDoc(xdoc);
        return tt_error_set(TT_ERR_PARSE, "%s:1: document is empty", st.name);
    }
    doc = tt_xml_doc_new(NULL, st.name);
    if (!doc) {
        xmlFreeDoc(xdoc);
        return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", st.name);
    }
    s = convert_element(&st, xroot, &doc->root);
    xmlFreeDoc(xdoc);
    if (s != TT_OK) {
        tt_xml_doc_free(doc);
        return s;
    }
    TT_TRACE(XML_SUBSYS, "%s: read %d elements", st.name, st.nodes);
    *out = doc;
    return TT_OK;
}

tt_status tt_xml_read_file(const char *path, const tt_xml_limits *lim, tt_xml_doc **out)
{
    tt_xml_limits l;
    char *buf = NULL;
    size_t len = 0;
    tt_status s;

    if (out)
        *out = NULL;
    if (!path || !out)
        return tt_error_set(TT_ERR_INVALID, "xml read: NULL path or output");
    if (lim)
        l = *lim;
    else
        tt_xml_limits_default(&l);
    s = tt_read_file(path, l.max_bytes, &buf, &len);
    if (s != TT_OK)
        return s;
    s = tt_xml_read_buffer(buf, len, path, &l, out);
    free(buf);
    return s;
}
