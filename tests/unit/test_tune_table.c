/*
 * test_tune_table.c - tuning tables: ranges, merging, crossovers, JSON schema and reader,
 * NCCL CSV column order, determinism, explain, env hints.
 */
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>

#include "tt_tune.h"
#include "tune_testtopo.h"

static tt_tune_ctx *mk(tt_topo *t, int nodes, tt_model_kind m)
{
    tt_cluster c;
    assert_int_equal(tt_cluster_from_topo(t, &c), TT_OK);
    c.nodes = nodes;
    tt_tune_ctx *ctx = NULL;
    assert_int_equal(tt_tune_ctx_new(t, &c, m, NULL, &ctx), TT_OK);
    return ctx;
}

#define ALL ((1u << TT_COLL_COUNT) - 1)

static void test_ranges_nccl_1x8(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = mk(t, 1, TT_MODEL_NCCL);
    tt_tune_table tab;
    assert_int_equal(tt_tune_table_build(ctx, ALL, TT_TUNE_MIN_SIZE, TT_TUNE_MAX_SIZE, 1, &tab), TT_OK);
    /* every collective's ranges are contiguous from 0 to 32 GiB - 1 */
    int seen[TT_COLL_COUNT] = {0};
    for (int i = 0; i < tab.n; i++) {
        const tt_tune_entry *e = &tab.entries[i];
        assert_true(e->algo < TT_ALGO_NCCL_COUNT);
        if (i == 0 || tab.entries[i - 1].coll != e->coll) {
            assert_int_equal(e->min_bytes, 0);
            assert_false(seen[e->coll]);
            seen[e->coll] = 1;
        } else {
            assert_int_equal(e->min_bytes, tab.entries[i - 1].max_bytes + 1);
            /* merged: neighbours differ in algorithm, protocol or channels */
            const tt_tune_entry *p = &tab.entries[i - 1];
            assert_true(p->algo != e->algo || p->proto != e->proto || p->channels != e->channels);
        }
        if (i == tab.n - 1 || tab.entries[i + 1].coll != e->coll) assert_int_equal(e->max_bytes, (32ULL << 30) - 1);
    }
    for (int c = 0; c < TT_COLL_COUNT; c++) assert_true(seen[c]);
    /* allreduce first; ring/LL at 1 MiB (24 ch), NVLS from 2 MiB (crossover 1.14 MB) */
    assert_int_equal(tab.entries[0].coll, TT_COLL_ALLREDUCE);
    int found_1m = 0, found_2m = 0;
    for (int i = 0; i < tab.n; i++) {
        const tt_tune_entry *e = &tab.entries[i];
        if (e->coll != TT_COLL_ALLREDUCE) continue;
        if (e->min_bytes <= (1u << 20) && (1u << 20) <= e->max_bytes) {
            found_1m = 1;
            assert_int_equal(e->algo, TT_ALGO_RING);
            assert_int_equal(e->proto, TT_PROTO_LL);
            assert_int_equal(e->channels, 24);
            assert_int_equal(e->min_bytes, 1u << 20);
            assert_float_equal(e->predicted_us, 28.01, 0.006);
        }
        if (e->min_bytes == (2u << 20)) {
            found_2m = 1;
            assert_int_equal(e->algo, TT_ALGO_NVLS);
        }
    }
    assert_true(found_1m && found_2m);
    /* broadcast: ring only in NCCL */
    for (int i = 0; i < tab.n; i++)
        if (tab.entries[i].coll == TT_COLL_BROADCAST) assert_int_equal(tab.entries[i].algo, TT_ALGO_RING);

    /* CSV: NCCL example plugin column order */
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    assert_int_equal(tt_tune_write_csv(ctx, &tab, &sb), TT_OK);
    assert_non_null(strstr(sb.data, "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n"));
    assert_non_null(strstr(sb.data, "\nallreduce,0,65535,ring,ll,1,1,8,-1,-1\n"));
    assert_non_null(strstr(sb.data, "\nallreduce,1048576,2097151,ring,ll,24,1,8,-1,-1\n"));
    assert_non_null(strstr(sb.data, "\nallreduce,2097152,34359738367,nvls,simple,16,1,8,-1,-1\n"));
    tt_strbuf_free(&sb);

    /* JSON: schema fields, and the reader gets the same entries back */
    tt_strbuf_init(&sb);
    assert_int_equal(tt_tune_write_json(ctx, &tab, &sb), TT_OK);
    cJSON *root = cJSON_Parse(sb.data);
    assert_non_null(root);
    assert_string_equal(cJSON_GetObjectItem(root, "schema")->valuestring, "topotune-tuning-table");
    assert_int_equal(cJSON_GetObjectItem(root, "version")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(root, "nodes")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(root, "ranks")->valueint, 8);
    assert_string_equal(cJSON_GetObjectItem(root, "model")->valuestring, "nccl");
    cJSON *topo = cJSON_GetObjectItem(root, "topology");
    assert_non_null(topo);
    assert_int_equal(cJSON_GetObjectItem(topo, "gpus_per_node")->valueint, 8);
    cJSON *ents = cJSON_GetObjectItem(root, "entries");
    assert_int_equal(cJSON_GetArraySize(ents), tab.n);
    cJSON *e0 = cJSON_GetArrayItem(ents, 0);
    static const char *keys[] = {"collective", "min_bytes", "max_bytes", "algorithm", "protocol", "channels",
                                 "predicted_us", "algbw", "busbw"};
    for (int k = 0; k < 9; k++) assert_non_null(cJSON_GetObjectItem(e0, keys[k]));
    cJSON_Delete(root);
    tt_tune_table ld;
    assert_int_equal(tt_tune_table_parse(sb.data, "t.json", &ld), TT_OK);
    assert_int_equal(ld.n, tab.n);
    assert_int_equal(ld.ranks, 8);
    for (int i = 0; i < tab.n; i++) {
        assert_int_equal(ld.entries[i].coll, tab.entries[i].coll);
        assert_int_equal(ld.entries[i].algo, tab.entries[i].algo);
        assert_int_equal(ld.entries[i].proto, tab.entries[i].proto);
        assert_int_equal(ld.entries[i].min_bytes, tab.entries[i].min_bytes);
        assert_int_equal(ld.entries[i].max_bytes, tab.entries[i].max_bytes);
        assert_int_equal(ld.entries[i].channels, tab.entries[i].channels);
    }
    tt_tune_table_free(&ld);
    /* determinism: a second build writes the same bytes */
    tt_tune_table tab2;
    tt_strbuf sb2;
    tt_strbuf_init(&sb2);
    assert_int_equal(tt_tune_table_build(ctx, ALL, TT_TUNE_MIN_SIZE, TT_TUNE_MAX_SIZE, 1, &tab2), TT_OK);
    assert_int_equal(tt_tune_write_json(ctx, &tab2, &sb2), TT_OK);
    assert_string_equal(sb.data, sb2.data);
    tt_strbuf_free(&sb2);
    tt_tune_table_free(&tab2);
    tt_strbuf_free(&sb);
    tt_tune_table_free(&tab);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

/* Tables for NCCL never force a candidate the model is not sure of: on 2, 4 and 16 nodes of every fabric,
 * a forced size is one where the model's fastest NCCL candidate beats NCCL's own choice by more than the
 * model's worst error in the size's measured regime allows; an unmeasured regime forces nothing; the
 * entries are exactly the forced sizes.  With calibrated constants the margin alone decides. */
static int check_keep_table(tt_tune_ctx *ctx, double margin, int calibrated)
{
    tt_tune_table tab;
    assert_int_equal(tt_tune_table_build_keep_nccl(ctx, ALL, 8, 1ULL << 34, margin, &tab), TT_OK);
    assert_int_equal(tab.ndec, 5 * 32); /* 8 B .. 16 GiB, five collectives */
    int forced = 0;
    for (int i = 0; i < tab.ndec; i++) {
        const tt_tune_decision *d = &tab.dec[i];
        tt_trust tr;
        assert_int_equal(tt_model_trust(ctx, d->bytes, &tr), TT_OK);
        int same = d->best_algo == d->nccl_algo && d->best_proto == d->nccl_proto;
        if (calibrated) {
            assert_true(d->forced == (!same && d->gain > margin));
        } else if (!tr.exact) {
            if (d->forced) fail_msg("%s: forced in a regime never measured (%s)", d->why, d->regime);
            assert_true(d->need < 0);
        } else {
            double need = fmax(margin, (1 + tr.worst) / (1 - tr.worst) - 1);
            assert_float_equal(d->need, need, 1e-12);
            assert_true(d->forced == (!same && d->gain > need));
        }
        if (d->forced) {
            forced++;
            assert_non_null(strstr(d->why, "force"));
            const tt_tune_entry *e = tt_tune_table_find(&tab, d->coll, d->bytes);
            assert_non_null(e);
            assert_int_equal(e->algo, d->best_algo);
            assert_int_equal(e->proto, d->best_proto);
        } else {
            assert_non_null(strstr(d->why, "keep"));
            assert_null(tt_tune_table_find(&tab, d->coll, d->bytes));
        }
    }
    tt_tune_table_free(&tab);
    return forced;
}

static void test_keep_nccl_no_harm(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    static const int nodes[] = {1, 2, 4, 16};
    for (int f = 0; f < TT_FABRIC_COUNT; f++)
        for (size_t k = 0; k < sizeof nodes / sizeof nodes[0]; k++) {
            tt_cluster_overrides ov = TT_CLUSTER_OVERRIDES_NONE;
            ov.fabric = f;
            tt_cluster c;
            assert_int_equal(tt_cluster_for_topo(t, nodes[k], &ov, &c), TT_OK);
            tt_tune_ctx *ctx = NULL;
            assert_int_equal(tt_tune_ctx_new(t, &c, TT_MODEL_TOPOTUNE, NULL, &ctx), TT_OK);
            check_keep_table(ctx, 0.15, 0);
            tt_tune_ctx_free(ctx);
        }
    /* constants calibrated on the user's machine: the margin alone decides, and with no margin every size
     * where the model's fastest differs from NCCL's choice is forced (the check above is not vacuous) */
    tt_model_params p;
    tt_model_params_default(&p);
    snprintf(p.source, sizeof p.source, "cal.json");
    tt_cluster c;
    assert_int_equal(tt_cluster_for_topo(t, 2, NULL, &c), TT_OK);
    tt_tune_ctx *ctx = NULL;
    assert_int_equal(tt_tune_ctx_new(t, &c, TT_MODEL_TOPOTUNE, &p, &ctx), TT_OK);
    int f15 = check_keep_table(ctx, 0.15, 1), f0 = check_keep_table(ctx, 0.0, 1);
    assert_true(f0 > 0 && f0 >= f15);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

static void test_csv_refuses_topotune_algos(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = mk(t, 1, TT_MODEL_TOPOTUNE);
    tt_tune_table tab;
    assert_int_equal(tt_tune_table_build(ctx, 1u << TT_COLL_ALLREDUCE, 8, 1 << 20, 0, &tab), TT_OK);
    assert_int_equal(tab.entries[0].algo, TT_ALGO_RD); /* fastest at 8 B in our model */
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    assert_int_equal(tt_tune_write_csv(ctx, &tab, &sb), TT_ERR_INVALID);
    assert_non_null(strstr(tt_error_message(), "'rd'"));
    tt_strbuf_free(&sb);
    tt_tune_table_free(&tab);
    /* text table shows crossovers */
    assert_int_equal(tt_tune_table_build(ctx, 1u << TT_COLL_ALLREDUCE, 8, 1ULL << 30, 0, &tab), TT_OK);
    tt_strbuf_init(&sb);
    assert_int_equal(tt_tune_write_text(ctx, &tab, &sb), TT_OK);
    assert_non_null(strstr(sb.data, "crossovers"));
    assert_non_null(strstr(sb.data, "-> nvls/simple"));
    tt_strbuf_free(&sb);
    tt_tune_table_free(&tab);
    /* bad ranges */
    assert_int_equal(tt_tune_table_build(ctx, 1, 1024, 8, 0, &tab), TT_ERR_INVALID);
    assert_int_equal(tt_tune_table_build(ctx, 0, 8, 1024, 0, &tab), TT_ERR_INVALID);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

static void test_explain(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = mk(t, 4, TT_MODEL_NCCL);
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    assert_int_equal(tt_tune_write_explain(ctx, 1u << TT_COLL_ALLREDUCE, 65536, &sb), TT_OK);
    /* 64 KiB on 4x8: tree/LL 47.80 is the fastest; NVLS off with the reason */
    assert_non_null(strstr(sb.data, "tree/ll"));
    assert_non_null(strstr(sb.data, "47.80"));
    assert_non_null(strstr(sb.data, "<= fastest"));
    assert_non_null(strstr(sb.data, "nvls/simple            disabled: NVLS on several nodes needs CollNet"));
    assert_non_null(strstr(sb.data, "disabled: not an NCCL algorithm"));
    tt_strbuf_free(&sb);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

static void test_table_parse_errors(void **state)
{
    (void)state;
    tt_tune_table ld;
    assert_int_equal(tt_tune_table_parse("{", "x.json", &ld), TT_ERR_PARSE);
    assert_int_equal(tt_tune_table_parse("{\"schema\":\"other\",\"version\":1}", "x.json", &ld), TT_ERR_PARSE);
    assert_int_equal(tt_tune_table_parse("{\"schema\":\"topotune-tuning-table\",\"version\":1,\"nodes\":1,\"ranks\":8,"
                                         "\"entries\":[{\"collective\":\"allreduce\",\"min_bytes\":10,\"max_bytes\":5,"
                                         "\"algorithm\":\"ring\",\"protocol\":\"ll\"}]}", "x.json", &ld), TT_ERR_PARSE);
    assert_non_null(strstr(tt_error_message(), "entries[0]"));
    /* channels outside 0..64 are refused, not silently read as 0 (issue #16) */
    static const char *const chans[] = {"100000", "-3", "1.5", "\"8\"", "65"};
    for (size_t k = 0; k < sizeof chans / sizeof *chans; k++) {
        char doc[512];
        snprintf(doc, sizeof doc,
                 "{\"schema\":\"topotune-tuning-table\",\"version\":1,\"nodes\":1,\"ranks\":8,\"entries\":[{"
                 "\"collective\":\"allreduce\",\"min_bytes\":0,\"max_bytes\":5,\"algorithm\":\"ring\","
                 "\"protocol\":\"ll\",\"channels\":%s}]}", chans[k]);
        assert_int_equal(tt_tune_table_parse(doc, "x.json", &ld), TT_ERR_PARSE);
        assert_non_null(strstr(tt_error_message(), "channels must be a whole number 0..64"));
    }
    assert_int_equal(tt_tune_table_parse("{\"schema\":\"topotune-tuning-table\",\"version\":1,\"nodes\":1,"
                                         "\"ranks\":8,\"entries\":[{\"collective\":\"allreduce\",\"min_bytes\":0,"
                                         "\"max_bytes\":5,\"algorithm\":\"ring\",\"protocol\":\"ll\",\"channels\":64}]}",
                                         "x.json", &ld), TT_OK);
    assert_int_equal(ld.entries[0].channels, 64);
    tt_tune_table_free(&ld);
}

static void test_env_hints(void **state)
{
    (void)state;
    tt_topo *t = tb_hgx_h100(8, 400, 1);
    tt_tune_ctx *ctx = mk(t, 2, TT_MODEL_TOPOTUNE);
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    assert_int_equal(tt_tune_write_env(t, ctx, &sb), TT_OK);
    assert_non_null(strstr(sb.data, "export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1\n"));
    assert_non_null(strstr(sb.data, "GPU0->mlx5_0(PIX)"));
    assert_non_null(strstr(sb.data, "export NCCL_SOCKET_IFNAME=^lo"));
    assert_non_null(strstr(sb.data, "export NCCL_CROSS_NIC=0"));
    assert_null(strstr(sb.data, "NCCL_TOPO_FILE"));
    /* every export line follows a "# reason" comment line */
    {
        const char *prev = NULL, *line = sb.data;
        int nexp = 0;
        while (*line) {
            const char *nl = strchr(line, '\n');
            if (!strncmp(line, "export ", 7)) {
                assert_non_null(prev);
                assert_int_equal(prev[0], '#');
                nexp++;
            }
            prev = line;
            if (!nl) break;
            line = nl + 1;
        }
        assert_int_equal(nexp, 3);
    }
    tt_strbuf_free(&sb);
    tt_tune_ctx_free(ctx);
    tb_free(t);
    /* PCIe box without NUMA ids: P2P level note and topology file advice */
    t = tb_pcie4();
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].type == TT_NODE_CPU) t->nodes[i].u.cpu.numaid = -1;
    ctx = mk(t, 1, TT_MODEL_TOPOTUNE);
    tt_strbuf_init(&sb);
    assert_int_equal(tt_tune_write_env(t, ctx, &sb), TT_OK);
    assert_non_null(strstr(sb.data, "NCCL_TOPO_FILE"));
    assert_non_null(strstr(sb.data, "No NVLink"));
    assert_non_null(strstr(sb.data, "NCCL_P2P_LEVEL=SYS"));
    assert_non_null(strstr(sb.data, "lists no NIC"));
    tt_strbuf_free(&sb);
    tt_tune_ctx_free(ctx);
    tb_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges_nccl_1x8), cmocka_unit_test(test_keep_nccl_no_harm), cmocka_unit_test(test_csv_refuses_topotune_algos),
        cmocka_unit_test(test_explain),         cmocka_unit_test(test_table_parse_errors),
        cmocka_unit_test(test_env_hints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
