/*
 * topo_schema.c - the one typed reader of topology XML attributes.
 *
 * Element and attribute names are the TT_ELEM_* / TT_ATTR_* constants of
 * tt_xml.h.  Every topo reader of the raw tree (topo_build.c, topo_validate.c,
 * topo_check.c) parses attribute values here:
 *   tt_topo__read_*  classify a value (absent, empty, not a number, negative)
 *                    without setting an error: the validator turns the
 *                    result into a finding, the health checks into a default;
 *   tt_topo__get_*   the builder's strict getters: absent or empty gives the
 *                    default, anything malformed or out of range sets
 *                    "file:line: <elem> attribute 'x': why" (tt_topo__attr_error).
 */
#include "tt_topo.h"
#include "topo_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- raw */

const char *tt_topo__attr(const tt_xml_node *n, const char *name)
{
    for (int i = 0; i < n->nattrs; i++)
        if (n->attrs[i].name && strcmp(n->attrs[i].name, name) == 0)
            return n->attrs[i].value ? n->attrs[i].value : "";
    return NULL;
}

const char *tt_topo__attr_ne(const tt_xml_node *n, const char *name)
{
    const char *v = tt_topo__attr(n, name);
    return v && *v ? v : NULL;
}

int tt_topo__is(const tt_xml_node *n, const char *elem)
{
    return n && n->name && strcmp(n->name, elem) == 0;
}

/* ---------------------------------------------------------- classify */

tt_attr_read tt_topo__read_ll(const tt_xml_node *n, const char *name, long long *out,
                              const char **raw)
{
    const char *v = tt_topo__attr(n, name);
    if (raw)
        *raw = v;
    if (!v)
        return TT_ATTR_ABSENT;
    if (!*v)
        return TT_ATTR_EMPTY;
    if (tt_parse_ll(v, out) != TT_OK) {
        tt_error_clear();
        return TT_ATTR_NOT_NUMBER;
    }
    return TT_ATTR_OK;
}

tt_attr_read tt_topo__read_double(const tt_xml_node *n, const char *name, double *out,
                                  const char **raw)
{
    const char *v = tt_topo__attr(n, name);
    if (raw)
        *raw = v;
    if (!v)
        return TT_ATTR_ABSENT;
    if (!*v)
        return TT_ATTR_EMPTY;
    if (tt_parse_double(v, out) != TT_OK) {
        tt_error_clear();
        return TT_ATTR_NOT_NUMBER;
    }
    return TT_ATTR_OK;
}

/* hex ("0x..") or decimal; a leading '-' is TT_ATTR_NEGATIVE (strtoull would wrap it) */
tt_attr_read tt_topo__read_u64(const tt_xml_node *n, const char *name, uint64_t *out,
                               const char **raw)
{
    const char *v = tt_topo__attr(n, name);
    char *end;
    unsigned long long x;
    if (raw)
        *raw = v;
    if (!v)
        return TT_ATTR_ABSENT;
    if (!*v)
        return TT_ATTR_EMPTY;
    if (*v == '-')
        return TT_ATTR_NEGATIVE;
    errno = 0;
    x = strtoull(v, &end, 0);
    if (end == v || *end || errno == ERANGE)
        return TT_ATTR_NOT_NUMBER;
    if (out)
        *out = x;
    return TT_ATTR_OK;
}

/* -------------------------------------------------------- lenient */

int tt_topo__attr_int_or(const tt_xml_node *n, const char *name, int dflt)
{
    const char *v = tt_xml_get(n, name);
    char *end;
    long x;
    if (!v || !*v)
        return dflt;
    x = strtol(v, &end, 0);
    return *end ? dflt : (int)x;
}

double tt_topo__attr_gts(const tt_xml_node *n, const char *name)
{
    const char *s = tt_xml_get(n, name);
    char *end;
    double v;
    if (!s)
        return -1;
    v = strtod(s, &end);
    return (end == s || v <= 0) ? -1 : v;
}

/* --------------------------------------------------------- strict */

tt_status tt_topo__attr_error(const char *src, const tt_xml_node *n, tt_status code,
                              const char *aname, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (aname)
        return tt_error_set(code, "%s:%d: <%s> attribute '%s': %s", src, n->line,
                            n->name ? n->name : "?", aname, msg);
    return tt_error_set(code, "%s:%d: <%s>: %s", src, n->line, n->name ? n->name : "?", msg);
}

tt_status tt_topo__get_int(const char *src, const tt_xml_node *n, const char *name, long long lo,
                           long long hi, long long def, long long *out, int *present)
{
    const char *v;
    long long x;
    tt_attr_read r = tt_topo__read_ll(n, name, &x, &v);
    if (present)
        *present = r != TT_ATTR_ABSENT && r != TT_ATTR_EMPTY;
    if (r == TT_ATTR_ABSENT || r == TT_ATTR_EMPTY) {
        *out = def;
        return TT_OK;
    }
    if (r != TT_ATTR_OK)
        return tt_topo__attr_error(src, n, TT_ERR_PARSE, name, "'%s' is not an integer", v);
    if (x < lo || x > hi)
        return tt_topo__attr_error(src, n, TT_ERR_INVALID, name,
                                   "%lld is out of range [%lld, %lld]", x, lo, hi);
    *out = x;
    return TT_OK;
}

tt_status tt_topo__get_double(const char *src, const tt_xml_node *n, const char *name, double lo,
                              double hi, double def, double *out, int *present)
{
    const char *v;
    double x;
    tt_attr_read r = tt_topo__read_double(n, name, &x, &v);
    if (present)
        *present = r != TT_ATTR_ABSENT && r != TT_ATTR_EMPTY;
    if (r == TT_ATTR_ABSENT || r == TT_ATTR_EMPTY) {
        *out = def;
        return TT_OK;
    }
    if (r != TT_ATTR_OK)
        return tt_topo__attr_error(src, n, TT_ERR_PARSE, name, "'%s' is not a number", v);
    if (x < lo || x > hi)
        return tt_topo__attr_error(src, n, TT_ERR_INVALID, name, "%g is out of range [%g, %g]",
                                   x, lo, hi);
    *out = x;
    return TT_OK;
}

tt_status tt_topo__get_u64(const char *src, const tt_xml_node *n, const char *name,
                           uint64_t *out, int *present)
{
    const char *v;
    tt_attr_read r;
    *out = 0;
    r = tt_topo__read_u64(n, name, out, &v);
    if (present)
        *present = r != TT_ATTR_ABSENT && r != TT_ATTR_EMPTY;
    switch (r) {
    case TT_ATTR_OK:
    case TT_ATTR_ABSENT:
    case TT_ATTR_EMPTY:
        return TT_OK;
    case TT_ATTR_NEGATIVE:
        return tt_topo__attr_error(src, n, TT_ERR_INVALID, name, "'%s' is negative", v);
    default:
        return tt_topo__attr_error(src, n, TT_ERR_PARSE, name,
                                   "'%s' is not a 64-bit unsigned integer", v);
    }
}

tt_status tt_topo__get_busid(const char *src, const tt_xml_node *n, const char *name,
                             char out[32])
{
    const char *v = tt_topo__attr_ne(n, name);
    out[0] = '\0';
    if (!v)
        return TT_OK;
    if (!tt_topo__norm_busid(v, out))
        return tt_topo__attr_error(src, n, TT_ERR_PARSE, name,
                                   "'%s' is not a PCI bus id (dddd:bb:dd.f)", v);
    return TT_OK;
}
