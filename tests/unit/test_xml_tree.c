/* test_xml_tree.c - in-memory tree: attributes, typed getters, structure
 * edits, clone, navigation, walk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_xml.h"

static void test_attr_set_replace_order(void **state)
{
    tt_xml_node *n = tt_xml_node_new("pci");
    (void)state;
    assert_non_null(n);
    assert_int_equal(tt_xml_set(n, "busid", "0000:18:00.0"), TT_OK);
    assert_int_equal(tt_xml_set(n, "class", "0x030200"), TT_OK);
    assert_int_equal(tt_xml_setf(n, "link_width", "%d", 16), TT_OK);
    assert_int_equal(n->nattrs, 3);
    /* replace keeps position */
    assert_int_equal(tt_xml_set(n, "class", "0x060400"), TT_OK);
    assert_int_equal(n->nattrs, 3);
    assert_string_equal(n->attrs[0].name, "busid");
    assert_string_equal(n->attrs[1].name, "class");
    assert_string_equal(n->attrs[1].value, "0x060400");
    assert_string_equal(n->attrs[2].name, "link_width");
    assert_string_equal(tt_xml_get(n, "link_width"), "16");
    assert_null(tt_xml_get(n, "nope"));
    /* unset keeps the order of the rest; new attributes go last */
    tt_xml_unset(n, "busid");
    tt_xml_unset(n, "absent");
    assert_int_equal(n->nattrs, 2);
    assert_string_equal(n->attrs[0].name, "class");
    assert_int_equal(tt_xml_set(n, "busid", "x"), TT_OK);
    assert_string_equal(n->attrs[2].name, "busid");
    /* many attributes (array growth) */
    for (int i = 0; i < 40; i++)
        assert_int_equal(tt_xml_setf(n, "a", "%d", i), TT_OK);
    assert_int_equal(n->nattrs, 4);
    assert_string_equal(tt_xml_get(n, "a"), "39");
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        assert_int_equal(tt_xml_set(n, name, name), TT_OK);
    }
    assert_int_equal(n->nattrs, 44);
    assert_string_equal(n->attrs[43].value, "x39");
    /* bad arguments */
    assert_int_equal(tt_xml_set(n, NULL, "v"), TT_ERR_INVALID);
    assert_int_equal(tt_xml_set(n, "a", NULL), TT_ERR_INVALID);
    assert_int_equal(tt_xml_set(n, "", "v"), TT_ERR_INVALID);
    tt_xml_node_free(n);
}

static void test_typed_getters(void **state)
{
    tt_xml_doc *d = tt_xml_doc_new("system", "topo.xml");
    tt_xml_node *g = tt_xml_node_new("gpu");
    long long v = 0;
    double x = 0;
    (void)state;
    assert_non_null(d);
    assert_int_equal(tt_xml_append(d->root, g), TT_OK);
    g->line = 12;
    tt_xml_set(g, "dev", "3");
    tt_xml_set(g, "guid", "0x1f");
    tt_xml_set(g, "sm", "9O");
    tt_xml_set(g, "bw", "20.5");
    tt_xml_set(g, "speed", "fast");
    assert_int_equal(tt_xml_get_ll(d, g, "dev", &v), TT_OK);
    assert_int_equal(v, 3);
    assert_int_equal(tt_xml_get_ll(d, g, "guid", &v), TT_OK);
    assert_int_equal(v, 31);
    assert_int_equal(tt_xml_get_double(d, g, "bw", &x), TT_OK);
    assert_true(x == 20.5);
    tt_error_clear();
    assert_int_equal(tt_xml_get_ll(d, g, "missing", &v), TT_ERR_NOT_FOUND);
    assert_string_equal(tt_error_message(), "");
    v = 77;
    assert_int_equal(tt_xml_get_ll(d, g, "sm", &v), TT_ERR_PARSE);
    assert_int_equal(v, 77); /* untouched on error */
    assert_string_equal(tt_error_message(), "topo.xml:12: <gpu> attribute 'sm'='9O' is not an integer");
    assert_int_equal(tt_xml_get_ll(d, g, "bw", &v), TT_ERR_PARSE);
    assert_string_equal(tt_error_message(), "topo.xml:12: <gpu> attribute 'bw'='20.5' is not an integer");
    assert_int_equal(tt_xml_get_double(d, g, "speed", &x), TT_ERR_PARSE);
    assert_string_equal(tt_error_message(), "topo.xml:12: <gpu> attribute 'speed'='fast' is not a number");
    /* built in memory (line 0): no line in the message */
    g->line = 0;
    assert_int_equal(tt_xml_get_ll(d, g, "sm", &v), TT_ERR_PARSE);
    assert_string_equal(tt_error_message(), "topo.xml: <gpu> attribute 'sm'='9O' is not an integer");
    tt_xml_doc_free(d);
}

/* system > [cpu0 > [pci0 > [gpu], nic], cpu1] */
static tt_xml_doc *sample(void)
{
    tt_xml_doc *d = tt_xml_doc_new("system", NULL);
    tt_xml_node *cpu0 = tt_xml_node_new("cpu"), *cpu1 = tt_xml_node_new("cpu");
    tt_xml_node *pci = tt_xml_node_new("pci"), *gpu = tt_xml_node_new("gpu"), *nic = tt_xml_node_new("nic");
    tt_xml_set(cpu0, "numaid", "0");
    tt_xml_set(cpu1, "numaid", "1");
    tt_xml_set(pci, "busid", "0000:18:00.0");
    tt_xml_set(gpu, "dev", "0");
    tt_xml_append(d->root, cpu0);
    tt_xml_append(d->root, cpu1);
    tt_xml_append(cpu0, pci);
    tt_xml_append(pci, gpu);
    tt_xml_append(cpu0, nic);
    return d;
}

static void test_structure_and_navigation(void **state)
{
    tt_xml_doc *d = sample();
    tt_xml_node *r = d->root, *cpu0, *cpu1, *pci, *gpu, *nic, *n;
    (void)state;
    assert_string_equal(d->source, "<memory>");
    cpu0 = tt_xml_first_child(r, "cpu");
    cpu1 = tt_xml_next_sibling(cpu0, "cpu");
    assert_non_null(cpu1);
    assert_string_equal(tt_xml_get(cpu1, "numaid"), "1");
    assert_null(tt_xml_next_sibling(cpu1, NULL));
    pci = tt_xml_first_child(cpu0, NULL);
    nic = tt_xml_first_child(cpu0, "nic");
    assert_ptr_equal(tt_xml_next_sibling(pci, NULL), nic);
    assert_null(tt_xml_first_child(cpu0, "gpu"));
    gpu = tt_xml_find(r, "gpu", NULL, NULL);
    assert_ptr_equal(gpu->parent, pci);
    assert_int_equal(tt_xml_depth(r), 0);
    assert_int_equal(tt_xml_depth(gpu), 3);
    assert_int_equal(tt_xml_count(r), 6);
    assert_int_equal(tt_xml_count(cpu0), 4);
    assert_ptr_equal(tt_xml_find(r, "cpu", "numaid", "1"), cpu1);
    assert_ptr_equal(tt_xml_find(r, NULL, "busid", NULL), pci);
    assert_null(tt_xml_find(r, "cpu", "numaid", "7"));
    assert_ptr_equal(tt_xml_find(r, "system", NULL, NULL), r);

    /* pre-order walk, confined to the subtree given as top */
    const char *order[] = {"system", "cpu", "pci", "gpu", "nic", "cpu"};
    int i = 0;
    for (n = r; n; n = tt_xml_walk_next(r, n), i++)
        assert_string_equal(n->name, order[i]);
    assert_int_equal(i, 6);
    i = 0;
    for (n = pci; n; n = tt_xml_walk_next(pci, n))
        i++;
    assert_int_equal(i, 2); /* pci, gpu - not nic */

    /* insert / detach / cycles */
    tt_xml_node *x = tt_xml_node_new("pci");
    assert_int_equal(tt_xml_insert(cpu0, 0, x), TT_OK);
    assert_ptr_equal(cpu0->children[0], x);
    assert_ptr_equal(cpu0->children[1], pci);
    assert_int_equal(tt_xml_insert(cpu0, 1, x), TT_ERR_INVALID); /* has a parent */
    tt_xml_detach(x);
    assert_null(x->parent);
    assert_int_equal(cpu0->nchildren, 2);
    assert_int_equal(tt_xml_insert(cpu0, 5, x), TT_ERR_INVALID);
    assert_int_equal(tt_xml_insert(cpu0, -1, x), TT_ERR_INVALID);
    assert_int_equal(tt_xml_insert(cpu0, 2, x), TT_OK); /* at the end */
    assert_ptr_equal(cpu0->children[2], x);
    tt_xml_detach(cpu0);
    assert_int_equal(tt_xml_append(gpu, cpu0), TT_ERR_INVALID); /* would be a cycle */
    assert_int_equal(tt_xml_append(cpu0, cpu0), TT_ERR_INVALID);
    assert_int_equal(tt_xml_count(r), 2);
    tt_xml_node_free(cpu0); /* frees cpu0's subtree */
    /* free of an attached node detaches it first */
    tt_xml_node_free(cpu1);
    assert_int_equal(r->nchildren, 0);
    tt_xml_doc_free(d);
}

static void test_clone(void **state)
{
    tt_xml_doc *d = sample();
    tt_xml_node *c, *a, *b;
    (void)state;
    d->root->line = 1;
    tt_xml_find(d->root, "gpu", NULL, NULL)->line = 4;
    c = tt_xml_clone(d->root);
    assert_non_null(c);
    assert_null(c->parent);
    assert_int_equal(tt_xml_count(c), 6);
    /* same shape, names, attributes, lines; distinct memory */
    for (a = d->root, b = c; a && b; a = tt_xml_walk_next(d->root, a), b = tt_xml_walk_next(c, b)) {
        assert_ptr_not_equal(a, b);
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->line, b->line);
        assert_int_equal(a->nattrs, b->nattrs);
        assert_int_equal(a->nchildren, b->nchildren);
        assert_int_equal(tt_xml_depth(a), tt_xml_depth(b));
        for (int i = 0; i < a->nattrs; i++) {
            assert_string_equal(a->attrs[i].name, b->attrs[i].name);
            assert_string_equal(a->attrs[i].value, b->attrs[i].value);
            assert_ptr_not_equal(a->attrs[i].value, b->attrs[i].value);
        }
    }
    assert_null(a);
    assert_null(b);
    /* changing the clone does not touch the original */
    tt_xml_set(tt_xml_find(c, "cpu", "numaid", "0"), "numaid", "5");
    assert_non_null(tt_xml_find(d->root, "cpu", "numaid", "0"));
    /* clone of an inner subtree */
    tt_xml_node *sub = tt_xml_clone(tt_xml_find(d->root, "pci", NULL, NULL));
    assert_int_equal(tt_xml_count(sub), 2);
    assert_string_equal(sub->children[0]->name, "gpu");
    tt_xml_node_free(sub);
    tt_xml_node_free(c);
    tt_xml_doc_free(d);
}

/* Deep and wide trees built in memory: free/clone/count/walk must not
 * recurse, and sibling iteration must stay linear. */
static void test_deep_and_wide(void **state)
{
    tt_xml_node *top = tt_xml_node_new("a"), *cur = top, *c, *n;
    int i, cnt = 0;
    (void)state;
    for (i = 0; i < 100000; i++) {
        tt_xml_node *k = tt_xml_node_new("a");
        assert_int_equal(tt_xml_append(cur, k), TT_OK);
        cur = k;
    }
    assert_int_equal(tt_xml_count(top), 100001);
    assert_int_equal(tt_xml_depth(cur), 100000);
    c = tt_xml_clone(top);
    assert_int_equal(tt_xml_count(c), 100001);
    tt_xml_node_free(c);
    tt_xml_node_free(top);

    top = tt_xml_node_new("w");
    for (i = 0; i < 100000; i++)
        tt_xml_append(top, tt_xml_node_new("k"));
    for (n = tt_xml_first_child(top, NULL); n; n = tt_xml_next_sibling(n, NULL))
        cnt++;
    assert_int_equal(cnt, 100000);
    assert_int_equal(tt_xml_count(top), 100001);
    tt_xml_node_free(top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attr_set_replace_order),
        cmocka_unit_test(test_typed_getters),
        cmocka_unit_test(test_structure_and_navigation),
        cmocka_unit_test(test_clone),
        cmocka_unit_test(test_deep_and_wide),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
