/*
 * cli_validate_report.c - topo-exec --validate: the text table, the summary with the ranges where
 * the table is wrong, the JSON file and the exit code.  The verdicts, ranges and the "validate"
 * member of the JSON are tune's (tune/tune_verdict.c).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_validate_internal.h"

/* ---------------------------------------------------------------- verdicts and output */
void vld_judge_size(const vctx *x, vsize *z)
{
    tt_validate_judge_size(z, x->v->margin);
}

void vld_print_header(const vctx *x)
{
    const tt_cli_sweep *s = x->s;
    printf("# topo-exec --validate (topotune %s) collective: %s, %d ranks (%s)\n", TT_VERSION_STRING,
           tt_cli_coll_name(s->coll), x->nranks, x->transport);
    if (x->setup[0]) printf("# ranks: %s\n", x->setup);
    printf("# table: %s\n", x->table_desc);
    if (x->ranked)
        printf("# runner-ups: the %d nearest by predicted time; %s\n", x->v->runners_up, x->model_desc);
    else
        printf("# runner-ups: %s\n", x->model_desc);
    if (x->host_channels_note)
        printf("# note: the table asks for several channels; host transports run one, so its choice runs on one\n");
    printf("# per size and candidate: %d warmup + %d timed iterations (x%d aggregated), %d check(s), out-of-place and "
           "in-place; time = the faster placement; candidates of one size run back to back",
           s->warmup, s->iters, s->agg, s->check);
    if (x->v->rounds > 1) printf(", %d interleaved rounds (fastest kept)", x->v->rounds);
    printf("\n");
    printf("# verdict: RIGHT = the choice was fastest; within noise = slower by <= %g%%; WRONG by X%% = slower by more\n",
           x->v->margin * 100);
    printf("#%11s  %-24s %10s  %-24s %10s %8s  %-22s %s\n", "size", "choice", "time(us)", "fastest measured",
           "time(us)", "loss", "verdict", "runner-ups: time(us) [pred]");
    fflush(stdout);
}

void vld_print_size(const vctx *x, const vsize *z)
{
    char b[32];
    if (z->nc == 0 || z->verdict == V_SKIP) {
        printf("%12llu  not judged: %s\n", (unsigned long long)z->bytes, z->note);
        fflush(stdout);
        return;
    }
    char cn[64], bn[64], verdict[48], loss[24];
    tt_validate_cand_name(cn, sizeof cn, &z->c[0]);
    tt_validate_cand_name(bn, sizeof bn, &z->c[z->best]);
    switch (z->verdict) {
    case V_RIGHT: snprintf(verdict, sizeof verdict, "RIGHT"); break;
    case V_ONLY: snprintf(verdict, sizeof verdict, "RIGHT (only candidate)"); break;
    case V_NOISE: snprintf(verdict, sizeof verdict, "within noise"); break;
    default: snprintf(verdict, sizeof verdict, "WRONG by %.1f%%", z->loss * 100); break;
    }
    snprintf(loss, sizeof loss, "%+.1f%%", z->loss * 100);
    printf("%12llu  %-24s %10.2f  %-24s %10.2f %8s  %-22s", (unsigned long long)z->bytes, cn, tt_validate_cand_time(&z->c[0]), bn,
           tt_validate_cand_time(&z->c[z->best]), loss, verdict);
    for (int k = 1; k < z->nc; k++) {
        tt_validate_cand_name(cn, sizeof cn, &z->c[k]);
        printf("%s%s %.2f", k > 1 ? ", " : "", cn, tt_validate_cand_time(&z->c[k]));
        if (z->c[k].pred_us > 0) {
            snprintf(b, sizeof b, "%.2f", z->c[k].pred_us);
            printf(" [%s]", b);
        }
    }
    for (int k = 0; k < z->nc; k++)
        for (int p = 0; p < 2; p++)
            if (z->c[k].wrong[p] > 0) {
                tt_validate_cand_name(cn, sizeof cn, &z->c[k]);
                printf("  (%s: %lld WRONG RESULT(S) %s)", cn, z->c[k].wrong[p], p ? "in place" : "out of place");
            }
    printf("\n");
    fflush(stdout);
}

static int summary(const vctx *x, int *nwrong_out)
{
    int cnt[TT_VERDICT_COUNT];
    tt_validate_count(x->sz, x->nsz, cnt);
    printf("# %d size(s) judged: %d right, %d within noise (%g%%), %d wrong; %d not judged\n",
           cnt[V_RIGHT] + cnt[V_ONLY] + cnt[V_NOISE] + cnt[V_WRONG], cnt[V_RIGHT] + cnt[V_ONLY], cnt[V_NOISE],
           x->v->margin * 100, cnt[V_WRONG], cnt[V_SKIP]);
    tt_validate_range *r = calloc((size_t)(x->nsz ? x->nsz : 1), sizeof *r);
    int nr = r ? tt_validate_wrong_ranges(x->sz, x->nsz, r) : 0;
    for (int i = 0; i < nr; i++) {
        char lo[24], hi[24], cn[64], win[600];
        tt_validate_size_label(lo, sizeof lo, x->sz[r[i].lo].bytes);
        tt_validate_size_label(hi, sizeof hi, x->sz[r[i].hi].bytes);
        tt_validate_cand_name(cn, sizeof cn, &x->sz[r[i].lo].c[0]);
        tt_validate_range_winners(x->sz, &r[i], win, sizeof win);
        char pct[48];
        if (r[i].maxloss - r[i].minloss < 0.0005) snprintf(pct, sizeof pct, "%.1f%%", r[i].maxloss * 100);
        else snprintf(pct, sizeof pct, "%.1f-%.1f%%", r[i].minloss * 100, r[i].maxloss * 100);
        printf("# table wrong for %s%s%s (%s, %d ranks): its choice %s is %s slower than %s\n", lo,
               r[i].lo == r[i].hi ? "" : "-", r[i].lo == r[i].hi ? "" : hi, tt_cli_coll_name(x->s->coll), x->nranks, cn, pct,
               win);
    }
    if (nr) {
        const char *topo = x->v->topo ? x->v->topo : "TOPO";
        if (x->s->json)
            printf("# fix: re-run topo-tune --calibrate %s --input %s -o cal.json, then rebuild the table with "
                   "--calibration cal.json\n", x->s->json, topo);
        else
            printf("# fix: re-run with -J FILE and feed it to topo-tune --calibrate FILE --input %s -o cal.json, then "
                   "rebuild the table with --calibration cal.json\n", topo);
    } else if (cnt[V_WRONG] == 0) {
        printf("# the table's choice was right (or within noise) at every judged size\n");
    }
    fflush(stdout);
    free(r);
    *nwrong_out = cnt[V_WRONG];
    return nr;
}

static cJSON *place_json(const vcand *c, int p, double pred)
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

static int write_json(const vctx *x, const char *start, int oob, int rc, const char *err)
{
    const tt_cli_sweep *s = x->s;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "version", 1);
    cJSON_AddStringToObject(j, "tool", "topo-exec");
    cJSON_AddStringToObject(j, "topotune_version", TT_VERSION_STRING);
    cJSON_AddStringToObject(j, "start_time", start);
    cJSON *args = cJSON_AddArrayToObject(j, "args");
    for (int i = 0; i < s->argc; i++) cJSON_AddItemToArray(args, cJSON_CreateString(s->argv[i]));
    cJSON *cfg = cJSON_AddObjectToObject(j, "config");
    cJSON_AddStringToObject(cfg, "collective", tt_cli_coll_name(s->coll));
    cJSON_AddNumberToObject(cfg, "nranks", x->nranks);
    cJSON_AddStringToObject(cfg, "transport", x->transport);
    cJSON_AddNumberToObject(cfg, "minimum_bytes", (double)s->minb);
    cJSON_AddNumberToObject(cfg, "maximum_bytes", (double)s->maxb);
    if (s->factor > 1) cJSON_AddNumberToObject(cfg, "step_factor", (double)s->factor);
    else cJSON_AddNumberToObject(cfg, "step_bytes", (double)s->stepb);
    cJSON_AddNumberToObject(cfg, "warmup_iters", s->warmup);
    cJSON_AddNumberToObject(cfg, "iterations", s->iters);
    cJSON_AddNumberToObject(cfg, "aggregated_iterations", s->agg);
    cJSON_AddNumberToObject(cfg, "validation", s->check);
    cJSON_AddStringToObject(cfg, "algo_requested", "validate");
    cJSON_AddStringToObject(cfg, "proto_requested", "default"); /* per result: "proto" */
    cJSON_AddNumberToObject(cfg, "chunk_bytes", (double)s->chunk_bytes);
    cJSON *res = cJSON_AddArrayToObject(j, "results");
    double bw = 0;
    int nbw = 0;
    for (int i = 0; i < x->nsz; i++) {
        const vsize *z = &x->sz[i];
        for (int k = 0; k < z->nc; k++) {
            const vcand *c = &z->c[k];
            if (c->t[0] <= 0 && c->t[1] <= 0) continue; /* not reached (failure) */
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "size", (double)z->bytes);
            cJSON_AddNumberToObject(o, "count", (double)z->count);
            cJSON_AddStringToObject(o, "type", tt_dtype_name(s->dtype));
            cJSON_AddStringToObject(o, "redop", (s->coll == TT_COLL_ALLGATHER || s->coll == TT_COLL_BROADCAST)
                                                    ? "none" : tt_redop_name(s->op));
            cJSON_AddNumberToObject(o, "root", (s->coll == TT_COLL_BROADCAST || s->coll == TT_COLL_REDUCE) ? s->root : -1);
            cJSON_AddStringToObject(o, "algo", tt_algo_label(c->algo));
            cJSON_AddStringToObject(o, "proto", tt_proto_name(c->proto));
            cJSON_AddNumberToObject(o, "channels", c->ran_channels > 0 ? c->ran_channels : 1);
            cJSON_AddStringToObject(o, "role", k == 0 ? "choice" : "runner-up");
            cJSON_AddItemToObject(o, "out_of_place", place_json(c, 0, c->pred_us));
            cJSON_AddItemToObject(o, "in_place", place_json(c, 1, c->pred_us));
            cJSON_AddItemToArray(res, o);
            bw += c->busbw[0] + c->busbw[1];
            nbw += 2;
        }
    }
    cJSON *ob = cJSON_AddObjectToObject(j, "out_of_bounds");
    cJSON_AddNumberToObject(ob, "count", oob);
    cJSON_AddBoolToObject(ob, "okay", oob == 0);
    cJSON *ab = cJSON_AddObjectToObject(j, "average_bus_bandwidth");
    cJSON_AddNumberToObject(ab, "bandwidth", nbw ? bw / nbw : 0);
    cJSON *errs = cJSON_AddArrayToObject(j, "errors");
    if (err) cJSON_AddItemToArray(errs, cJSON_CreateString(err));
    cJSON *va = tt_validate_json(x->sz, x->nsz, x->table_desc, x->model_desc, x->v->margin, x->v->runners_up,
                                 x->v->rounds, rc);
    if (va) cJSON_AddItemToObject(j, "validate", va);
    tt_status st = tt_cli_write_json(s->json, j);
    cJSON_Delete(j);
    if (st != TT_OK) {
        tt_cli_bad("-J %s: %s", s->json, tt_error_message());
        return VX_RUNTIME;
    }
    return VX_OK;
}

/* Everything after the measurements (rank 0 of the process that prints). */
int vld_finish(vctx *x, int rc, const char *start)
{
    int print = x->print;
    int oob = 0, nwrong = 0;
    for (int i = 0; i < x->nsz; i++)
        for (int k = 0; k < x->sz[i].nc; k++)
            for (int p = 0; p < 2; p++) oob += x->sz[i].c[k].wrong[p] > 0;
    if (print) {
        if (x->failed) printf("# validation FAILED: %s\n", x->err);
        else summary(x, &nwrong);
        if (oob) printf("# Out of bounds values : %d FAILED (the times of wrong results do not count)\n", oob);
    } else {
        for (int i = 0; i < x->nsz; i++) nwrong += x->sz[i].verdict == V_WRONG;
    }
    if (x->failed && !rc) rc = VX_RUNTIME;
    if (!rc && oob) rc = VX_WRONG_RESULTS;
    if (!rc && nwrong) rc = TT_CLI_EXIT_TABLE_WRONG;
    if (print && x->s->json) {
        int jr = write_json(x, start, oob, rc, x->failed ? x->err : NULL);
        if (jr && !rc) rc = jr;
    }
    return rc;
}
