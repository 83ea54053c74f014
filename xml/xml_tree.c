/* xml_tree.c - the in-memory XML tree: nodes, attributes, navigation.
 *
 * Every traversal here is iterative (no recursion), so trees of any depth
 * built in memory can be freed, cloned, counted and walked without risking
 * the stack.
 */
#include "tt_xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XML_SUBSYS "xml"

/* ---------------------------------------------------------------- nodes */

tt_xml_node *tt_xml_node_new(const char *name)
{
    tt_xml_node *n;
    if (!name || !*name)
        return NULL;
    n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->name = tt_strdup(name);
    if (!n->name) {
        free(n);
        return NULL;
    }
    return n;
}

static void node_free_one(tt_xml_node *n)
{
    int i;
    for (i = 0; i < n->nattrs; i++) {
        free(n->attrs[i].name);
        free(n->attrs[i].value);
    }
    free(n->attrs);
    free(n->children);
    free(n->name);
    free(n);
}

void tt_xml_node_free(tt_xml_node *node)
{
    tt_xml_node *cur;
    if (!node)
        return;
    if (node->parent)
        tt_xml_detach(node);
    /* Free leaves bottom-up: always descend into the last child, free a
     * childless node and pop it from its parent. */
    cur = node;
    while (cur) {
        tt_xml_node *up;
        if (cur->nchildren > 0) {
            cur = cur->children[cur->nchildren - 1];
            continue;
        }
        up = (cur == node) ? NULL : cur->parent;
        if (up)
            up->nchildren--;
        node_free_one(cur);
        cur = up;
    }
}

tt_xml_doc *tt_xml_doc_new(const char *root_name, const char *source)
{
    tt_xml_doc *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->source = tt_strdup(source ? source : "<memory>");
    if (!d->source) {
        free(d);
        return NULL;
    }
    if (root_name) {
        d->root = tt_xml_node_new(root_name);
        if (!d->root) {
            free(d->source);
            free(d);
            return NULL;
        }
    }
    return d;
}

void tt_xml_doc_free(tt_xml_doc *doc)
{
    if (!doc)
        return;
    tt_xml_node_free(doc->root);
    free(doc->source);
    free(doc);
}

/* Is `a` equal to `n` or one of its ancestors? */
static int is_ancestor_or_self(const tt_xml_node *a, const tt_xml_node *n)
{
    for (; n; n = n->parent)
        if (n == a)
            return 1;
    return 0;
}

tt_status tt_xml_insert(tt_xml_node *parent, int index, tt_xml_node *child)
{
    if (!parent || !child)
        return tt_error_set(TT_ERR_INVALID, "xml insert: NULL parent or child");
    if (child->parent)
        return tt_error_set(TT_ERR_INVALID, "xml insert: <%s> already has a parent <%s>; detach it first",
                            child->name, child->parent->name);
    /* Only a node with children can be a proper ancestor of `parent`; the
     * shortcut keeps building deep chains linear. */
    if (child == parent || (child->nchildren > 0 && is_ancestor_or_self(child, parent)))
        return tt_error_set(TT_ERR_INVALID, "xml insert: <%s> cannot become a descendant of itself",
                            child->name);
    if (index < 0 || index > parent->nchildren)
        return tt_error_set(TT_ERR_INVALID, "xml insert: index %d out of range 0..%d under <%s>", index,
                            parent->nchildren, parent->name);
    if (parent->nchildren == parent->cap_children) {
        int ncap = parent->cap_children ? parent->cap_children * 2 : 4;
        tt_xml_node **p = realloc(parent->children, (size_t)ncap * sizeof *p);
        if (!p)
            return tt_error_set(TT_ERR_NOMEM, "xml insert: out of memory");
        parent->children = p;
        parent->cap_children = ncap;
    }
    memmove(parent->children + index + 1, parent->children + index,
            (size_t)(parent->nchildren - index) * sizeof *parent->children);
    parent->children[index] = child;
    parent->nchildren++;
    child->parent = parent;
    return TT_OK;
}

tt_status tt_xml_append(tt_xml_node *parent, tt_xml_node *child)
{
    if (!parent)
        return tt_error_set(TT_ERR_INVALID, "xml append: NULL parent");
    return tt_xml_insert(parent, parent->nchildren, child);
}

/* Position of `n` in its parent's child array.  A one-entry per-thread cache
 * makes sibling-by-sibling iteration O(1) per step even under a node with
 * very many children; it is only a hint and is always verified. */
static __thread const tt_xml_node *idx_cache_parent;
static __thread int idx_cache_i;

static int child_index(const tt_xml_node *n)
{
    const tt_xml_node *p = n->parent;
    int i;
    if (!p)
        return -1;
    if (idx_cache_parent == p) {
        for (i = idx_cache_i; i <= idx_cache_i + 1; i++) {
            if (i >= 0 && i < p->nchildren && p->children[i] == n) {
                idx_cache_i = i;
                return i;
            }
        }
    }
    for (i = 0; i < p->nchildren; i++) {
        if (p->children[i] == n) {
            idx_cache_parent = p;
            idx_cache_i = i;
            return i;
        }
    }
    return -1; /* inconsistent tree; callers treat as "no position" */
}

void tt_xml_detach(tt_xml_node *node)
{
    tt_xml_node *p;
    int i;
    if (!node || !node->parent)
        return;
    p = node->parent;
    i = child_index(node);
    if (i >= 0) {
        memmove(p->children + i, p->children + i + 1,
                (size_t)(p->nchildren - i - 1) * sizeof *p->children);
        p->nchildren--;
    }
    node->parent = NULL;
}

/* Copy name, line and attributes (no children). */
static tt_xml_node *clone_one(const tt_xml_node *src)
{
    tt_xml_node *n = tt_xml_node_new(src->name);
    int i;
    if (!n)
        return NULL;
    n->line = src->line;
    if (src->nattrs > 0) {
        n->attrs = calloc((size_t)src->nattrs, sizeof *n->attrs);
        if (!n->attrs) {
            node_free_one(n);
            return NULL;
        }
        n->cap_attrs = src->nattrs;
        for (i = 0; i < src->nattrs; i++) {
            n->attrs[i].name = tt_strdup(src->attrs[i].name);
            n->attrs[i].value = tt_strdup(src->attrs[i].value);
            n->nattrs = i + 1;
            if (!n->attrs[i].name || !n->attrs[i].value) {
                node_free_one(n);
                return NULL;
            }
        }
    }
    return n;
}

tt_xml_node *tt_xml_clone(const tt_xml_node *node)
{
    const tt_xml_node *s;
    tt_xml_node *top, *c;
    if (!node)
        return NULL;
    top = clone_one(node);
    if (!top)
        return NULL;
    /* Walk the source in pre-order, keeping `c` = clone of `s`. */
    s = node;
    c = top;
    for (;;) {
        const tt_xml_node *next = tt_xml_walk_next(node, s);
        tt_xml_node *cp, *nc;
        if (!next)
            break;
        /* next's parent is s or one of s's ancestors: climb in tandem. */
        while (s != next->parent) {
            s = s->parent;
            c = c->parent;
        }
        cp = c;
        nc = clone_one(next);
        if (!nc || tt_xml_append(cp, nc) != TT_OK) {
            if (nc)
                node_free_one(nc);
            tt_xml_node_free(top);
            return NULL;
        }
        s = next;
        c = nc;
    }
    return top;
}

/* ----------------------------------------------------------- attributes */

static int attr_index(const tt_xml_node *node, const char *attr)
{
    int i;
    if (!node || !attr)
        return -1;
    for (i = 0; i < node->nattrs; i++)
        if (!strcmp(node->attrs[i].name, attr))
            return i;
    return -1;
}

const char *tt_xml_get(const tt_xml_node *node, const char *attr)
{
    int i = attr_index(node, attr);
    return i < 0 ? NULL : node->attrs[i].value;
}

tt_status tt_xml_set(tt_xml_node *node, const char *attr, const char *value)
{
    int i;
    char *v;
    if (!node || !attr || !*attr || !value)
        return tt_error_set(TT_ERR_INVALID, "xml set: NULL node, attribute name or value");
    v = tt_strdup(value);
    if (!v)
        return tt_error_set(TT_ERR_NOMEM, "xml set: out of memory");
    i = attr_index(node, attr);
    if (i >= 0) { /* replace in place: the attribute keeps its position */
        free(node->attrs[i].value);
        node->attrs[i].value = v;
        return TT_OK;
    }
    if (node->nattrs == node->cap_attrs) {
        int ncap = node->cap_attrs ? node->cap_attrs * 2 : 4;
        tt_xml_attr *p = realloc(node->attrs, (size_t)ncap * sizeof *p);
        if (!p) {
            free(v);
            return tt_error_set(TT_ERR_NOMEM, "xml set: out of memory");
        }
        node->attrs = p;
        node->cap_attrs = ncap;
    }
    node->attrs[node->nattrs].name = tt_strdup(attr);
    if (!node->attrs[node->nattrs].name) {
        free(v);
        return tt_error_set(TT_ERR_NOMEM, "xml set: out of memory");
    }
    node->attrs[node->nattrs].value = v;
    node->nattrs++;
    return TT_OK;
}

tt_status tt_xml_setf(tt_xml_node *node, const char *attr, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    int n;
    tt_status st;
    if (!fmt)
        return tt_error_set(TT_ERR_INVALID, "xml setf: NULL format");
    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return tt_error_set(TT_ERR_NOMEM, "xml setf: out of memory");
    st = tt_xml_set(node, attr, s);
    free(s);
    return st;
}

void tt_xml_unset(tt_xml_node *node, const char *attr)
{
    int i = attr_index(node, attr);
    if (i < 0)
        return;
    free(node->attrs[i].name);
    free(node->attrs[i].value);
    memmove(node->attrs + i, node->attrs + i + 1, (size_t)(node->nattrs - i - 1) * sizeof *node->attrs);
    node->nattrs--;
}

static tt_status typed_error(const tt_xml_doc *doc, const tt_xml_node *node, const char *attr,
                             const char *value, const char *what)
{
    const char *src = (doc && doc->source) ? doc->source : "<memory>";
    if (node->line > 0)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: <%s> attribute '%s'='%s' is not %s", src, node->line,
                            node->name, attr, value, what);
    return tt_error_set(TT_ERR_PARSE, "%s: <%s> attribute '%s'='%s' is not %s", src, node->name, attr,
                        value, what);
}

tt_status tt_xml_get_ll(const tt_xml_doc *doc, const tt_xml_node *node, const char *attr,
                        long long *out)
{
    const char *v = tt_xml_get(node, attr);
    long long x;
    if (!v)
        return TT_ERR_NOT_FOUND;
    if (tt_parse_ll(v, &x) != TT_OK)
        return typed_error(doc, node, attr, v, "an integer");
    *out = x;
    return TT_OK;
}

tt_status tt_xml_get_double(const tt_xml_doc *doc, const tt_xml_node *node, const char *attr,
                            double *out)
{
    const char *v = tt_xml_get(node, attr);
    double x;
    if (!v)
        return TT_ERR_NOT_FOUND;
    if (tt_parse_double(v, &x) != TT_OK)
        return typed_error(doc, node, attr, v, "a number");
    *out = x;
    return TT_OK;
}

/* ----------------------------------------------------------- navigation */

static int name_matches(const tt_xml_node *n, const char *name)
{
    return !name || !strcmp(n->name, name);
}

tt_xml_node *tt_xml_first_child(const tt_xml_node *node, const char *name)
{
    int i;
    if (!node)
        return NULL;
    for (i = 0; i < node->nchildren; i++)
        if (name_matches(node->children[i], name))
            return node->children[i];
    return NULL;
}

tt_xml_node *tt_xml_next_sibling(const tt_xml_node *node, const char *name)
{
    const tt_xml_node *p;
    int i;
    if (!node || !node->parent)
        return NULL;
    p = node->parent;
    i = child_index(node);
    if (i < 0)
        return NULL;
    for (i = i + 1; i < p->nchildren; i++)
        if (name_matches(p->children[i], name))
            return p->children[i];
    return NULL;
}

tt_xml_node *tt_xml_walk_next(const tt_xml_node *top, const tt_xml_node *cur)
{
    if (!top || !cur)
        return NULL;
    if (cur->nchildren > 0)
        return cur->children[0];
    while (cur && cur != top) {
        const tt_xml_node *p = cur->parent;
        int i;
        if (!p)
            return NULL;
        i = child_index(cur);
        if (i >= 0 && i + 1 < p->nchildren)
            return p->children[i + 1];
        cur = p;
    }
    return NULL;
}

tt_xml_node *tt_xml_find(const tt_xml_node *node, const char *name, const char *attr,
                         const char *value)
{
    const tt_xml_node *n;
    for (n = node; n; n = tt_xml_walk_next(node, n)) {
        if (!name_matches(n, name))
            continue;
        if (attr) {
            const char *v = tt_xml_get(n, attr);
            if (!v || (value && strcmp(v, value)))
                continue;
        }
        return (tt_xml_node *)n;
    }
    return NULL;
}

int tt_xml_depth(const tt_xml_node *node)
{
    int d = 0;
    if (!node)
        return -1;
    for (node = node->parent; node; node = node->parent)
        d++;
    return d;
}

int tt_xml_count(const tt_xml_node *node)
{
    const tt_xml_node *n;
    int c = 0;
    for (n = node; n; n = tt_xml_walk_next(node, n))
        c++;
    return c;
}
