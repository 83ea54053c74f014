/* topo_test_util.h - helpers shared by the test_topo_*.c programs (static, header only). */
#ifndef TOPO_TEST_UTIL_H
#define TOPO_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tt_topo.h"

static inline const char *tu_fixture(const char *rel)
{
    static char path[1024];
    const char *root = getenv("TOPOTUNE_ROOT");
    snprintf(path, sizeof path, "%s/tests/fixtures/%s", root ? root : ".", rel);
    return path;
}

/* Load a fixture into a graph (doc kept in *doc). Fails the test on error. */
static inline tt_topo *tu_load(const char *rel, const tt_topo_options *o, tt_xml_doc **doc)
{
    tt_topo *t = NULL;
    tt_status st = tt_xml_read_file(tu_fixture(rel), NULL, doc);
    if (st != TT_OK)
        fail_msg("reading %s: %s", rel, tt_error_message());
    st = tt_topo_from_xml(*doc, o, &t);
    if (st != TT_OK)
        fail_msg("building %s: %s", rel, tt_error_message());
    return t;
}

/* Build from text; returns the status, *out NULL on error. */
static inline tt_status tu_build_text(const char *text, const tt_topo_options *o, tt_topo **out,
                                      tt_xml_doc **doc)
{
    tt_status st = tt_xml_read_buffer(text, strlen(text), "t.xml", NULL, doc);
    *out = NULL;
    if (st != TT_OK)
        fail_msg("XML text did not parse: %s", tt_error_message());
    return tt_topo_from_xml(*doc, o, out);
}

static inline int tu_node(const tt_topo *t, tt_node_type type, int id)
{
    int i = tt_topo_node_index(t, type, id);
    if (i < 0)
        fail_msg("no %s%d", tt_node_type_name(type), id);
    return i;
}

static inline const tt_path *tu_path(const tt_topo *t, int a, int b)
{
    const tt_path *p = tt_topo_path(t, a, b);
    if (!p)
        fail_msg("no path %d -> %d", a, b);
    return p;
}

static inline int tu_net(const tt_topo *t, const char *name)
{
    int i = tt_topo_find_net(t, name);
    if (i < 0)
        fail_msg("no NET %s", name);
    return i;
}

static inline int tu_route_has(const tt_path *p, int node)
{
    for (int i = 0; i <= p->nhops; i++)
        if (p->route[i] == node)
            return 1;
    return 0;
}

#define assert_bw(x, want) assert_true((x) > (want) - 1e-6 && (x) < (want) + 1e-6)

#endif
