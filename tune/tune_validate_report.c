/*
 * tune_validate_report.c - the report of topo-exec --validate (tune_validate_run.c measured and
 * judged it): the text table (a header, one line per size, the summary with the ranges where
 * the table is wrong and how to fix it) and the -J document (nccl-tests' JSON of every measured
 * candidate with the "validate" member of tune_verdict.c).  The caller prints or writes it.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

/* ---------------------------------------------------------------- text */
void tt_validate_report_header(tt_strbuf *b, const tt_validate_run *r)
{
    tt_strbuf_printf(b, "# topo-exec --validate (topotune %s) collective: %s, %d ranks (%s)\n", TT_VERSION_STRING,
                     r->coll_name, r->nranks, r->transport);
    if (r->setup[0]) tt_strbuf_printf(b, "# ranks: %s\n", r->setup);
    tt_strbuf_printf(b, "# table: %s\n", r->table_desc);
    if (r->ranked)
        tt_strbuf_printf(b, "# runner-ups: the %d nearest by predicted time; %s\n", r->runners_up, r->model_desc);
    else
        tt_strbuf_printf(b, "# runner-ups: %s\n", r->model_desc);
    if (r->host_channels_note)
        tt_strbuf_append(b, "# note: the table asks for several channels; host transports run one, so its choice runs "
                            "on one\n");
    tt_strbuf_printf(b, "# per size and candidate: %d warmup + %d timed iterations (x%d aggregated), %d check(s), "
                        "out-of-place and in-place; time = the faster placement; candidates of one size run back "
                        "to back",
                     r->warmup, r->iters, r->agg, r->check);
    if (r->rounds > 1) tt_strbuf_printf(b, ", %d interleaved rounds (fastest kept)", r->rounds);
    tt_strbuf_append(b, "\n");
    tt_strbuf_printf(b, "# verdict: RIGHT = the choice was fastest; within noise = slower by <= %g%%; WRONG by X%% = "
                        "slower by more\n", r->margin * 100);
    tt_strbuf_printf(b, "#%11s  %-24s %10s  %-24s %10s %8s  %-22s %s\n", "size", "choice", "time(us)",
                     "fastest measured", "time(us)", "loss", "verdict", "runner-ups: time(us) [pred]");
}

void tt_validate_report_size(tt_strbuf *b, const tt_validate_size *z)
{
    if (z->nc == 0 || z->verdict == TT_VERDICT_SKIP) {
        tt_strbuf_printf(b, "%12llu  not judged: %s\n", (unsigned long long)z->bytes, z->note);
        return;
    }
    char cn[64], bn[64], verdict[48], loss[24];
    tt_validate_cand_name(cn, sizeof cn, &z->c[0]);
    tt_validate_cand_name(bn, sizeof bn, &z->c[z->best]);
    switch (z->verdict) {
    case TT_VERDICT_RIGHT: snprintf(verdict, sizeof verdict, "RIGHT"); break;
    case TT_VERDICT_ONLY: snprintf(verdict, sizeof verdict, "RIGHT (only candidate)"); break;
    case TT_VERDICT_NOISE: snprintf(verdict, sizeof verdict, "within noise"); break;
    default: snprintf(verdict, sizeof verdict, "WRONG by %.1f%%", z->loss * 100); break;
    }
    snprintf(loss, sizeof loss, "%+.1f%%", z->loss * 100);
    tt_strbuf_printf(b, "%12llu  %-24s %10.2f  %-24s %10.2f %8s  %-22s", (unsigned long long)z->bytes, cn,
                     tt_validate_cand_time(&z->c[0]), bn, tt_validate_cand_time(&z->c[z->best]), loss, verdict);
    for (int k = 1; k < z->nc; k++) {
        tt_validate_cand_name(cn, sizeof cn, &z->c[k]);
        tt_strbuf_printf(b, "%s%s %.2f", k > 1 ? ", " : "", cn, tt_validate_cand_time(&z->c[k]));
        if (z->c[k].pred_us > 0) tt_strbuf_printf(b, " [%.2f]", z->c[k].pred_us);
    }
    for (int k = 0; k < z->nc; k++)
        for (int p = 0; p < 2; p++)
            if (z->c[k].wrong[p] > 0) {
                tt_validate_cand_name(cn, sizeof cn, &z->c[k]);
                tt_strbuf_printf(b, "  (%s: %lld WRONG RESULT(S) %s)", cn, z->c[k].wrong[p],
                                 p ? "in place" : "out of place");
            }
    tt_strbuf_append(b, "\n");
}

/* the ranges where the table is wrong and what won there; how many */
static int wrong_ranges(tt_strbuf *b, const tt_validate_run *r)
{
    tt_validate_range *w = calloc((size_t)(r->nsz ? r->nsz : 1), sizeof *w);
    int nr = w ? tt_validate_wrong_ranges(r->sz, r->nsz, w) : 0;
    for (int i = 0; i < nr; i++) {
        char lo[24], hi[24], cn[64], win[600], pct[48];
        tt_validate_size_label(lo, sizeof lo, r->sz[w[i].lo].bytes);
        tt_validate_size_label(hi, sizeof hi, r->sz[w[i].hi].bytes);
        tt_validate_cand_name(cn, sizeof cn, &r->sz[w[i].lo].c[0]);
        tt_validate_range_winners(r->sz, &w[i], win, sizeof win);
        if (w[i].maxloss - w[i].minloss < 0.0005) snprintf(pct, sizeof pct, "%.1f%%", w[i].maxloss * 100);
        else snprintf(pct, sizeof pct, "%.1f-%.1f%%", w[i].minloss * 100, w[i].maxloss * 100);
        tt_strbuf_printf(b, "# table wrong for %s%s%s (%s, %d ranks): its choice %s is %s slower than %s\n", lo,
                         w[i].lo == w[i].hi ? "" : "-", w[i].lo == w[i].hi ? "" : hi, r->coll_name, r->nranks, cn, pct,
                         win);
    }
    free(w);
    return nr;
}

void tt_validate_report_summary(tt_strbuf *b, const tt_validate_run *r)
{
    if (r->failed) {
        tt_strbuf_printf(b, "# validation FAILED: %s\n", r->err);
        return;
    }
    int cnt[TT_VERDICT_COUNT];
    tt_validate_count(r->sz, r->nsz, cnt);
    tt_strbuf_printf(b, "# %d size(s) judged: %d right, %d within noise (%g%%), %d wrong; %d not judged\n",
                     cnt[TT_VERDICT_RIGHT] + cnt[TT_VERDICT_ONLY] + cnt[TT_VERDICT_NOISE] + cnt[TT_VERDICT_WRONG],
                     cnt[TT_VERDICT_RIGHT] + cnt[TT_VERDICT_ONLY], cnt[TT_VERDICT_NOISE], r->margin * 100,
                     cnt[TT_VERDICT_WRONG], cnt[TT_VERDICT_SKIP]);
    if (wrong_ranges(b, r)) {
        const char *topo = r->topo ? r->topo : "TOPO";
        if (r->json)
            tt_strbuf_printf(b, "# fix: re-run topo-tune --calibrate %s --input %s -o cal.json, then rebuild the table "
                                "with --calibration cal.json\n", r->json, topo);
        else
            tt_strbuf_printf(b, "# fix: re-run with -J FILE and feed it to topo-tune --calibrate FILE --input %s -o "
                                "cal.json, then rebuild the table with --calibration cal.json\n", topo);
    } else if (cnt[TT_VERDICT_WRONG] == 0) {
        tt_strbuf_append(b, "# the table's choice was right (or within noise) at every judged size\n");
    }
}

void tt_validate_report_oob(tt_strbuf *b, const tt_validate_run *r)
{
    int oob = tt_validate_oob(r);
    if (oob) tt_strbuf_printf(b, "# Out of bounds values : %d FAILED (the times of wrong results do not count)\n", oob);
}

/* ---------------------------------------------------------------- JSON (-J) */
static cJSON *place_json(const tt_validate_cand *c, int p, double pred)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "time", c->t[p]);
    cJSON_AddNumberToObject(o, "alg_bw", c->algbw[p]);
    cJSON_AddNumberToObject(o, "bus_bw", c->busbw[p]);
    if (c->wrong[p] >= 0) cJSON_AddNumberToObject(o, "nwrong", (double)c->wrong[p]);
    else cJSON_AddNullToObject(o, "nwrong");
    if (pred > 0) cJSON_AddNumberToObject(o, "predicted_time", pred);
    return o;
}

static void add_config(cJSON *j, const tt_validate_run *r)
{
    cJSON *cfg = cJSON_AddObjectToObject(j, "config");
    cJSON_AddStringToObject(cfg, "collective", r->coll_name);
    cJSON_AddNumberToObject(cfg, "nranks", r->nranks);
    cJSON_AddStringToObject(cfg, "transport", r->transport);
    cJSON_AddNumberToObject(cfg, "minimum_bytes", (double)r->minb);
    cJSON_AddNumberToObject(cfg, "maximum_bytes", (double)r->maxb);
    if (r->factor > 1) cJSON_AddNumberToObject(cfg, "step_factor", (double)r->factor);
    else cJSON_AddNumberToObject(cfg, "step_bytes", (double)r->stepb);
    cJSON_AddNumberToObject(cfg, "warmup_iters", r->warmup);
    cJSON_AddNumberToObject(cfg, "iterations", r->iters);
    cJSON_AddNumberToObject(cfg, "aggregated_iterations", r->agg);
    cJSON_AddNumberToObject(cfg, "validation", r->check);
    cJSON_AddStringToObject(cfg, "algo_requested", "validate");
    cJSON_AddStringToObject(cfg, "proto_requested", "default"); /* per result: "proto" */
    cJSON_AddNumberToObject(cfg, "chunk_bytes", (double)r->chunk_bytes);
}

static cJSON *result_json(const tt_validate_run *r, const tt_validate_size *z, int k)
{
    const tt_validate_cand *c = &z->c[k];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "size", (double)z->bytes);
    cJSON_AddNumberToObject(o, "count", (double)z->count);
    cJSON_AddStringToObject(o, "type", r->type_name);
    cJSON_AddStringToObject(o, "redop", (r->coll == TT_COLL_ALLGATHER || r->coll == TT_COLL_BROADCAST) ? "none"
                                                                                                     : r->op_name);
    cJSON_AddNumberToObject(o, "root", (r->coll == TT_COLL_BROADCAST || r->coll == TT_COLL_REDUCE) ? r->root : -1);
    cJSON_AddStringToObject(o, "algo", tt_algo_label(c->algo));
    cJSON_AddStringToObject(o, "proto", tt_proto_name(c->proto));
    cJSON_AddNumberToObject(o, "channels", c->ran_channels > 0 ? c->ran_channels : 1);
    cJSON_AddStringToObject(o, "role", k == 0 ? "choice" : "runner-up");
    cJSON_AddItemToObject(o, "out_of_place", place_json(c, 0, c->pred_us));
    cJSON_AddItemToObject(o, "in_place", place_json(c, 1, c->pred_us));
    return o;
}

cJSON *tt_validate_report_json(const tt_validate_run *r, int exit_code)
{
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    cJSON_AddNumberToObject(j, "version", 1);
    cJSON_AddStringToObject(j, "tool", "topo-exec");
    cJSON_AddStringToObject(j, "topotune_version", TT_VERSION_STRING);
    cJSON_AddStringToObject(j, "start_time", r->start);
    cJSON *args = cJSON_AddArrayToObject(j, "args");
    for (int i = 0; i < r->argc; i++) cJSON_AddItemToArray(args, cJSON_CreateString(r->argv[i]));
    add_config(j, r);
    cJSON *res = cJSON_AddArrayToObject(j, "results");
    double bw = 0;
    int nbw = 0;
    for (int i = 0; i < r->nsz; i++)
        for (int k = 0; k < r->sz[i].nc; k++) {
            const tt_validate_cand *c = &r->sz[i].c[k];
            if (c->t[0] <= 0 && c->t[1] <= 0) continue; /* not reached (failure) */
            cJSON_AddItemToArray(res, result_json(r, &r->sz[i], k));
            bw += c->busbw[0] + c->busbw[1];
            nbw += 2;
        }
    int oob = tt_validate_oob(r);
    cJSON *ob = cJSON_AddObjectToObject(j, "out_of_bounds");
    cJSON_AddNumberToObject(ob, "count", oob);
    cJSON_AddBoolToObject(ob, "okay", oob == 0);
    cJSON *ab = cJSON_AddObjectToObject(j, "average_bus_bandwidth");
    cJSON_AddNumberToObject(ab, "bandwidth", nbw ? bw / nbw : 0);
    cJSON *errs = cJSON_AddArrayToObject(j, "errors");
    if (r->failed) cJSON_AddItemToArray(errs, cJSON_CreateString(r->err));
    cJSON *va = tt_validate_json(r->sz, r->nsz, r->table_desc, r->model_desc, r->margin, r->runners_up, r->rounds,
                                 exit_code);
    if (va) cJSON_AddItemToObject(j, "validate", va);
    return j;
}
