/* test_findings.c - the findings list and its text/JSON renderings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <cJSON.h>

#include "tt_topo.h"

static void test_empty(void **state)
{
    tt_findings f;
    tt_strbuf sb;
    (void)state;
    tt_findings_init(&f);
    tt_strbuf_init(&sb);
    assert_int_equal(tt_findings_max_severity(&f), -1);
    assert_int_equal(tt_findings_write_text(&f, "x.xml", &sb), TT_OK);
    assert_int_equal(sb.len, 0);
    tt_findings_free(&f);
    tt_strbuf_free(&sb);
}

static void test_add_and_severity(void **state)
{
    tt_findings f;
    int i;
    (void)state;
    tt_findings_init(&f);
    assert_int_equal(tt_findings_add(&f, TT_SEV_INFO, "a", 1, "w", "m%d", 1), TT_OK);
    assert_int_equal(tt_findings_max_severity(&f), TT_SEV_INFO);
    assert_int_equal(tt_findings_add(&f, TT_SEV_WARN, "b", 2, "w", "m"), TT_OK);
    assert_int_equal(tt_findings_max_severity(&f), TT_SEV_WARN);
    assert_int_equal(tt_findings_add(&f, TT_SEV_ERROR, "c", 3, "w", "m"), TT_OK);
    assert_int_equal(tt_findings_add(&f, TT_SEV_INFO, "d", 4, "w", "m"), TT_OK);
    assert_int_equal(tt_findings_max_severity(&f), TT_SEV_ERROR);
    /* growth past the first allocation keeps every item */
    for (i = 0; i < 100; i++)
        assert_int_equal(tt_findings_add(&f, TT_SEV_INFO, "many", i, "", "n=%d", i), TT_OK);
    assert_int_equal(f.n, 104);
    assert_string_equal(f.items[0].message, "m1");
    assert_string_equal(f.items[103].message, "n=99");
    assert_int_equal(f.items[103].line, 99);
    /* bad severity refused */
    assert_int_equal(tt_findings_add(&f, (tt_severity)7, "x", 0, "", "m"), TT_ERR_INVALID);
    assert_int_equal(f.n, 104);
    tt_findings_free(&f);
    assert_int_equal(f.n, 0);
    assert_null(f.items);
}

static void test_truncation(void **state)
{
    tt_findings f;
    char longs[1000];
    (void)state;
    memset(longs, 'x', sizeof longs - 1);
    longs[sizeof longs - 1] = '\0';
    tt_findings_init(&f);
    assert_int_equal(tt_findings_add(&f, TT_SEV_WARN, longs, -5, longs, "%s", longs), TT_OK);
    assert_int_equal(strlen(f.items[0].code), sizeof f.items[0].code - 1);
    assert_int_equal(strlen(f.items[0].where), sizeof f.items[0].where - 1);
    assert_int_equal(strlen(f.items[0].message), sizeof f.items[0].message - 1);
    assert_int_equal(f.items[0].line, 0);
    tt_findings_free(&f);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(tt_severity_name(TT_SEV_INFO), "info");
    assert_string_equal(tt_severity_name(TT_SEV_WARN), "warning");
    assert_string_equal(tt_severity_name(TT_SEV_ERROR), "error");
}

static void test_text(void **state)
{
    tt_findings f;
    tt_strbuf sb;
    (void)state;
    tt_findings_init(&f);
    tt_strbuf_init(&sb);
    tt_findings_add(&f, TT_SEV_WARN, "unknown-numa", 2, "cpu numaid=-1", "no NUMA information");
    tt_findings_add(&f, TT_SEV_ERROR, "bad-root", 0, "", "not a topology");
    tt_findings_add(&f, TT_SEV_INFO, "note", 7, "pci 0000:18:00.0", "fyi");
    assert_int_equal(tt_findings_write_text(&f, "t.xml", &sb), TT_OK);
    assert_string_equal(sb.data,
                        "t.xml:2: warning: [unknown-numa] cpu numaid=-1: no NUMA information\n"
                        "t.xml: error: [bad-root] not a topology\n"
                        "t.xml:7: info: [note] pci 0000:18:00.0: fyi\n");
    tt_strbuf_free(&sb);
    tt_strbuf_init(&sb);
    assert_int_equal(tt_findings_write_text(&f, NULL, &sb), TT_OK);
    assert_non_null(strstr(sb.data, "<input>:2: warning:"));
    tt_strbuf_free(&sb);
    tt_findings_free(&f);
}

static void test_json(void **state)
{
    tt_findings f;
    tt_strbuf sb;
    cJSON *j, *arr, *it, *counts;
    (void)state;
    tt_findings_init(&f);
    tt_strbuf_init(&sb);
    tt_findings_add(&f, TT_SEV_WARN, "unknown-numa", 2, "cpu numaid=-1", "say \"quoted\"");
    tt_findings_add(&f, TT_SEV_ERROR, "bad-root", 0, "", "x");
    tt_findings_add(&f, TT_SEV_ERROR, "bad-busid", 9, "pci zz", "y");
    assert_int_equal(tt_findings_write_json(&f, "dir/t.xml", &sb), TT_OK);
    j = cJSON_Parse(sb.data);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "schema")->valuestring, "topotune-findings");
    assert_int_equal(cJSON_GetObjectItem(j, "version")->valueint, 1);
    assert_string_equal(cJSON_GetObjectItem(j, "source")->valuestring, "dir/t.xml");
    arr = cJSON_GetObjectItem(j, "findings");
    assert_int_equal(cJSON_GetArraySize(arr), 3);
    it = cJSON_GetArrayItem(arr, 0);
    assert_string_equal(cJSON_GetObjectItem(it, "severity")->valuestring, "warning");
    assert_string_equal(cJSON_GetObjectItem(it, "code")->valuestring, "unknown-numa");
    assert_int_equal(cJSON_GetObjectItem(it, "line")->valueint, 2);
    assert_string_equal(cJSON_GetObjectItem(it, "where")->valuestring, "cpu numaid=-1");
    assert_string_equal(cJSON_GetObjectItem(it, "message")->valuestring, "say \"quoted\"");
    it = cJSON_GetArrayItem(arr, 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(it, "line")));
    counts = cJSON_GetObjectItem(j, "counts");
    assert_int_equal(cJSON_GetObjectItem(counts, "error")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(counts, "warning")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(counts, "info")->valueint, 0);
    cJSON_Delete(j);
    tt_strbuf_free(&sb);
    tt_findings_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),      cmocka_unit_test(test_add_and_severity),
        cmocka_unit_test(test_truncation), cmocka_unit_test(test_names),
        cmocka_unit_test(test_text),       cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
