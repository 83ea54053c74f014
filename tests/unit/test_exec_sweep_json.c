/* test_exec_sweep_json.c - a sweep's results as nccl-tests' JSON (tt_sweep_report_json) and the
 * summary (tt_sweep_summary): the keys nccl-tests' readers look for, and topotune's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "tt_exec.h"

static void rows2(tt_sweep_result r[2])
{
    memset(r, 0, 2 * sizeof *r);
    for (int i = 0; i < 2; i++) {
        r[i].m.bytes = 1024u << i;
        r[i].m.count = 256u << i;
        r[i].m.time_us[0] = r[i].m.time_us[1] = 10;
        r[i].m.busbw[0] = 1 + i;
        r[i].m.busbw[1] = 3 + i;
        r[i].m.wrong[0] = 0;
        r[i].m.wrong[1] = i ? 5 : -1;
        snprintf(r[i].algo, sizeof r[i].algo, "ring");
    }
    r[0].pred_us[0] = 12;
}

static void test_summary(void **st)
{
    (void)st;
    tt_sweep_result r[2];
    rows2(r);
    double avg = -1;
    assert_int_equal(tt_sweep_summary(r, 2, &avg), 1); /* one wrong placement */
    assert_true(avg == (1 + 3 + 2 + 4) / 4.0);
    assert_int_equal(tt_sweep_summary(NULL, 0, &avg), 0);
    assert_true(avg == 0);
}

/* nccl-tests' CI gate: below 0.9 x NCCL_TESTS_MIN_BW fails, unset or not a number is unchecked */
static void test_min_bw_gate(void **st)
{
    (void)st;
    const char *w;
    unsetenv("NCCL_TESTS_MIN_BW");
    assert_int_equal(tt_sweep_min_bw_check(5.0, &w), -1);
    assert_string_equal(w, "");
    setenv("NCCL_TESTS_MIN_BW", "10", 1);
    assert_int_equal(tt_sweep_min_bw_check(8.99, &w), 0);
    assert_string_equal(w, "FAILED");
    assert_int_equal(tt_sweep_min_bw_check(9.0, &w), 1); /* 0.9 x 10 exactly: met */
    assert_string_equal(w, "OK");
    setenv("NCCL_TESTS_MIN_BW", "fast", 1);
    assert_int_equal(tt_sweep_min_bw_check(0.0, &w), -1);
    assert_string_equal(w, "");
    setenv("NCCL_TESTS_MIN_BW", "-1", 1);
    assert_int_equal(tt_sweep_min_bw_check(0.0, &w), -1);
    unsetenv("NCCL_TESTS_MIN_BW");
}

static void test_report(void **st)
{
    (void)st;
    tt_sweep_result r[2];
    rows2(r);
    tt_sweep_opts o;
    memset(&o, 0, sizeof o);
    o.coll = TT_COLL_ALLREDUCE;
    o.dtype = TT_FLOAT;
    o.op = TT_SUM;
    o.minb = 1024;
    o.maxb = 2048;
    o.factor = 2;
    o.iters = 5;
    o.plan = TT_PLAN_DEFAULT;
    char *argv[] = {"prog", "-b", "1K"};
    const char *env[] = {"TOPOTUNE_SPIN_US=5"};
    tt_sweep_device dev[1] = {{42, 0, "host0", "CPU", ""}};
    tt_sweep_report rep = {&o, "prog", "prog", "all_reduce", 3, argv, env, 1, 2, 0, 2, "shm", dev, 1,
                           "2026-01-01 00:00:00", r, 2, NULL, 1, -1};
    char *txt = NULL;
    size_t len = 0;
    assert_int_equal(tt_sweep_report_json(&rep, &txt, &len), TT_OK);
    /* nccl-tests' form: one line, no final newline */
    assert_true(len > 0 && txt[len] == '\0' && txt[len - 1] == '}' && !strchr(txt, '\n'));
    cJSON *j = cJSON_Parse(txt);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "version")->valueint, 3);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "args")), 3);
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "env"), 0)->valuestring, "TOPOTUNE_SPIN_US=5");
    cJSON *cfg = cJSON_GetObjectItem(j, "config");
    assert_string_equal(cJSON_GetObjectItem(cfg, "collective")->valuestring, "all_reduce");
    assert_int_equal(cJSON_GetObjectItem(cfg, "step_factor")->valueint, 2);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cfg, "devices")), 1);
    cJSON *res = cJSON_GetObjectItem(j, "results");
    assert_int_equal(cJSON_GetArraySize(res), 2);
    cJSON *r0 = cJSON_GetArrayItem(res, 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(r0, "in_place"), "nwrong")));
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r0, "out_of_place"), "predicted_time")->valueint, 12);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "out_of_bounds"), "count")->valueint, 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "errors")), 1); /* nccl-tests' [""] */
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "errors"), 0)->valuestring, "");
    cJSON_Delete(j);
    free(txt);
    assert_int_equal(tt_sweep_report_json(NULL, &txt, &len), TT_ERR_INVALID);
}

/* nccl-tests' keys only (extra 0), with nccl-tests' value types: booleans and root as strings, every
 * measured figure "%lf", average_bus_bandwidth.okay from NCCL_TESTS_MIN_BW's verdict */
static void test_nccl_form(void **st)
{
    (void)st;
    tt_sweep_result r[2];
    rows2(r);
    tt_sweep_opts o;
    memset(&o, 0, sizeof o);
    o.coll = TT_COLL_BROADCAST;
    o.dtype = TT_FLOAT;
    o.root = 1;
    o.minb = 1024;
    o.maxb = 2048;
    o.stepb = 1024;
    o.iters = 5;
    o.plan = TT_PLAN_DEFAULT;
    char *argv[] = {"broadcast_perf"};
    tt_sweep_device dev[1] = {{42, -1, "host0", "CPU", ""}};
    tt_sweep_report rep = {&o, "prog", "", "broadcast", 1, argv, NULL, 0, 2, 0, 2, "shm", dev, 1,
                           "2026-01-01 00:00:00", r, 2, NULL, 0, 0};
    char *txt = NULL;
    size_t len = 0;
    assert_int_equal(tt_sweep_report_json(&rep, &txt, &len), TT_OK);
    assert_non_null(strstr(txt, "{\"version\":3,\"start_time\":\"2026-01-01 00:00:00\",\"args\":[\"broadcast_perf\"],"
                                "\"env\":[],\"nccl_version\":0,\"config\":{\"nthreads\":2,\"ngpus\":0,"));
    assert_non_null(strstr(txt, "\"step_bytes\":1024,\"warmup_iters\":0,\"iterations\":5,\"aggregated_iterations\":0,"
                                "\"validation\":0,\"graph\":0,\"blocking_collectives\":\"false\",\"per_iter_timing\":"
                                "\"false\",\"per_iter_skip\":0,\"parallel_init\":\"false\",\"devices\":[{\"rank\":0,"
                                "\"group\":0,\"pid\":42,\"hostname\":\"host0\",\"device\":-1,\"device_hex\":"
                                "\"0000:00:00\",\"device_info\":\"CPU\"}]},\"results\":[{\"size\":1024,\"count\":256,"
                                "\"type\":\"float\",\"redop\":\"none\",\"root\":\"     1\",\"out_of_place\":{\"time\":"
                                "10.000000,\"alg_bw\":0.000000,\"bus_bw\":1.000000,\"nwrong\":0.000000},\"in_place\":"
                                "{\"time\":10.000000,\"alg_bw\":0.000000,\"bus_bw\":3.000000,\"nwrong\":null},"
                                "\"actual_iterations\":5,\"experiment_name\":\"\"},"));
    assert_non_null(strstr(txt, "\"out_of_bounds\":{\"count\":1,\"okay\":\"false\"},\"average_bus_bandwidth\":"
                                "{\"bandwidth\":2.500000,\"okay\":\"false\"},\"errors\":[\"\"],\"end_time\":\""));
    assert_null(strstr(txt, "\"tool\""));
    assert_null(strstr(txt, "\"algo\""));
    assert_null(strstr(txt, "predicted_time"));
    free(txt);
    rep.bw_check = -1;
    rep.nrows = 1;
    assert_int_equal(tt_sweep_report_json(&rep, &txt, &len), TT_OK);
    assert_non_null(strstr(txt, "\"out_of_bounds\":{\"count\":0,\"okay\":\"true\"},\"average_bus_bandwidth\":"
                                "{\"bandwidth\":2.000000,\"okay\":\"unchecked\"},"));
    free(txt);
    rep.bw_check = 1;
    assert_int_equal(tt_sweep_report_json(&rep, &txt, &len), TT_OK);
    assert_non_null(strstr(txt, "\"bandwidth\":2.000000,\"okay\":\"true\"}"));
    free(txt);
    /* a GPU's PCI address, when the caller knows it */
    snprintf(dev[0].hex, sizeof dev[0].hex, "0000:1b:00");
    assert_int_equal(tt_sweep_report_json(&rep, &txt, &len), TT_OK);
    assert_non_null(strstr(txt, "\"device_hex\":\"0000:1b:00\""));
    free(txt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_min_bw_gate),
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_nccl_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
