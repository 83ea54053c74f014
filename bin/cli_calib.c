/*
 * cli_calib.c - topo-tune's measurement modes (docs/calibration.md):
 *   --calibrate FILE...        fit the model constants, write a calibration file, report the
 *                              prediction error before and after;
 *   --judge-choices FILE...    was the table's choice the fastest measured candidate?
 *   --expect [--measured F]    expected busbw envelope; PASS/WARN/FAIL of a measured run;
 *   --from-measured FILE...    a tuning table of the fastest measured candidates (NCCL's own
 *                              choice kept unless one beats it by --margin).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_calib.h"
#include "cli_common.h"

static tt_status load_all(const tt_cli_calib_args *a, tt_measure_set *ms)
{
    if (a->nfiles == 0) return tt_error_set(TT_ERR_INVALID, "no measurement file given");
    for (int i = 0; i < a->nfiles; i++) {
        tt_status st = tt_measure_load(a->files[i], &a->mopts, ms);
        if (st != TT_OK) return st;
    }
    return TT_OK;
}

static int emit(const char *path, tt_strbuf *sb)
{
    tt_status st = tt_strbuf_status(sb);
    if (st == TT_OK) st = tt_cli_write_output(path, sb->data ? sb->data : "", sb->len);
    return st == TT_OK ? 0 : tt_cli_fail(st);
}

/* robust alpha-beta per (collective, algorithm, protocol, ranks) */
static void report_alpha_beta(const tt_measure_set *ms, tt_strbuf *r)
{
    tt_alpha_beta_group *g;
    int n;
    if (tt_fit_alpha_beta_groups(ms, &g, &n) != TT_OK) return;
    tt_strbuf_printf(r, "\n# robust straight line per group (Theil-Sen): time = a + bytes / (1000 b)\n");
    tt_strbuf_printf(r, "%-14s %6s %-16s %6s %12s %12s\n", "collective", "ranks", "algo/proto", "sizes", "a (us)", "b (GB/s)");
    for (int i = 0; i < n; i++) {
        char cb[48];
        const tt_measurement *m = g[i].first;
        tt_measure_cand_name(m, cb, sizeof cb);
        if (g[i].ok)
            tt_strbuf_printf(r, "%-14s %6d %-16s %6d %12.2f %12.4g\n", tt_coll_name(m->coll), m->nranks, cb, g[i].nrows,
                             g[i].a_us, g[i].b_GBps);
        else
            tt_strbuf_printf(r, "%-14s %6d %-16s %6d %12s %12s\n", tt_coll_name(m->coll), m->nranks, cb, g[i].nrows, "-",
                             "-");
    }
    free(g);
}

static int calibrate_nccl_rows(const tt_cli_calib_args *a);

int tt_cli_calibrate(const tt_cli_calib_args *a)
{
    tt_measure_set ms = {0};
    tt_calib_report rep;
    tt_model_params fitted;
    tt_strbuf js, r;
    tt_strbuf_init(&js);
    tt_strbuf_init(&r);
    int rc = TT_CLI_EXIT_ERROR;
    if (a->model == TT_MODEL_NCCL) return calibrate_nccl_rows(a);
    tt_status st = load_all(a, &ms);
    if (st != TT_OK) { rc = tt_cli_fail(st); goto out0; }
    if ((st = tt_calibrate(a->topo, &a->cl, &ms, &a->params, &fitted, &rep)) != TT_OK) { rc = tt_cli_fail(st); goto out0; }
    tt_strbuf_printf(&r, "# calibration of the topotune model: %d rows used, %d skipped, %d parameters, start: %s\n",
                     rep.npoints, rep.nskipped, rep.nparams, a->params.source);
    tt_strbuf_printf(&r, "%-28s %12s %12s   %s\n", "parameter", "before", "after", "bounds");
    for (int j = 0; j < rep.nparams; j++)
        tt_strbuf_printf(&r, "%-28s %12.6g %12.6g   [%g, %g]%s\n", rep.name[j], rep.before[j], rep.after[j], rep.lo[j],
                         rep.hi[j], fabs(rep.after[j] - rep.hi[j]) < 1e-9 * rep.hi[j] || fabs(rep.after[j] - rep.lo[j]) < 1e-12 ? "  at bound" : "");
    /* executor-shaped constants: spread and the rows that set them */
    {
        int any = 0;
        for (int j = 0; j < rep.nparams; j++) {
            if (strncmp(rep.name[j], "exec.", 5)) continue;
            if (!any++)
                tt_strbuf_printf(&r, "\n# executor-shaped constants: fitted value, leave-one-sweep-out range, rows that set "
                                     "it (its term >= 30%% of the time)\n%-32s %12s %25s   %s\n",
                                 "constant", "fitted", "spread", "set by");
            char sp[64];
            snprintf(sp, sizeof sp, "%.4g .. %.4g", rep.spread_lo[j], rep.spread_hi[j]);
            tt_strbuf_printf(&r, "%-32s %12.6g %25s   %s\n", rep.name[j], rep.after[j], sp, rep.setby[j]);
        }
        for (int g = 0; g < rep.ngroups; g++)
            tt_strbuf_printf(&r, "# fitted range exec.%s.%s: %d rows from %d sweeps, %llu .. %llu bytes, %d .. %d ranks; "
                                 "outside it the model extrapolates\n",
                             tt_exec_kind_name((tt_exec_kind)rep.group[g].kind),
                             tt_proto_name((tt_proto)rep.group[g].proto), rep.group[g].nrows, rep.group[g].nsweeps,
                             (unsigned long long)rep.group[g].min_bytes, (unsigned long long)rep.group[g].max_bytes,
                             rep.group[g].min_ranks, rep.group[g].max_ranks);
    }
    tt_strbuf_printf(&r, "\n# per row: |pred - meas| / meas\n%-14s %6s %-14s %12s %12s %12s %8s %12s %8s\n", "collective",
                     "ranks", "algo/proto", "bytes", "meas us", "before us", "err", "after us", "err");
    for (int i = 0; i < ms.n; i++) {
        const tt_measurement *m = &ms.m[i];
        char cb[48];
        if (rep.row[i] < 0) {
            tt_strbuf_printf(&r, "%-14s %6d %-14s %12llu %12.2f   skipped (%s)\n", tt_coll_name(m->coll), m->nranks,
                             tt_measure_cand_name(m, cb, sizeof cb), (unsigned long long)m->bytes, m->time_us, m->where);
            continue;
        }
        double eb = fabs(rep.pred_before[i] - m->time_us) / m->time_us, ea = fabs(rep.pred_after[i] - m->time_us) / m->time_us;
        tt_strbuf_printf(&r, "%-14s %6d %-14s %12llu %12.2f %12.2f %7.1f%% %12.2f %7.1f%%\n", tt_coll_name(m->coll),
                         m->nranks, tt_measure_cand_name(m, cb, sizeof cb), (unsigned long long)m->bytes, m->time_us,
                         rep.pred_before[i], eb * 100, rep.pred_after[i], ea * 100);
    }
    tt_strbuf_printf(&r, "\n# error over %d rows: median %.1f%% -> %.1f%%, worst %.1f%% -> %.1f%%\n", rep.npoints,
                     rep.med_before * 100, rep.med_after * 100, rep.worst_before * 100, rep.worst_after * 100);
    {
        tt_calib_cv cv;
        if (tt_calib_cross_validate(&ms, &a->params, &cv) == TT_OK && cv.n > 0) {
            tt_strbuf_printf(&r, "\n# cross-validation (rows of our executor; errors |pred - meas| / meas of the rows "
                                 "left out of the fit; start = the same rows with the start constants)\n"
                                 "%-10s %-8s %6s %-26s %-40s %5s %8s %8s %10s %10s %6s\n",
                             "test", "kind", "ranks", "fit on", "predicted", "rows", "median", "worst", "start med",
                             "start worst", "extrap");
            for (int i = 0; i < cv.n; i++) {
                const tt_cv_line *l = &cv.l[i];
                tt_strbuf_printf(&r, "cv %-7s %-8s %6d %-26s %-40s %5d %7.1f%% %7.1f%% %9.1f%% %9.1f%% %6d\n", l->test,
                                 tt_exec_kind_name((tt_exec_kind)l->kind), l->nranks, l->fit_on, l->predicted, l->nrows,
                                 l->median * 100, l->worst * 100, l->med_start * 100, l->worst_start * 100,
                                 l->extrapolated);
                if (l->worst_row[0]) tt_strbuf_printf(&r, "#   worst held-out row: %s\n", l->worst_row);
                if (l->extrapolated > 0 && l->extrapolated < l->nrows)
                    tt_strbuf_printf(&r, "#   worst of the %d held-out rows inside the fitted range: %.1f %%\n",
                                     l->nrows - l->extrapolated, l->worst_inside * 100);
                if (l->nspread > 0)
                    tt_strbuf_printf(&r, "#   own spread of the %d held-out rows measured more than once: median %.1f %%; "
                                         "%d of them predicted within it\n",
                                     l->nspread, l->spread_median * 100, l->within_spread);
                tt_repeatability rp;
                if (strcmp(l->test, "algorithm") && tt_measure_repeatability(&ms, l->kind, l->nranks, &rp) == TT_OK &&
                    rp.nrows > 0)
                    tt_strbuf_printf(&r, "#   repeatability of the %d ranks' rows (fastest of the odd against the even "
                                         "repeats, %d rows): median %.1f %%, worst %.1f %% (%s)\n",
                                     l->nranks, rp.nrows, rp.median * 100, rp.worst * 100, rp.worst_row);
            }
            tt_strbuf_printf(&r, "# extrap: held-out rows outside the fitted sizes or rank counts (an extrapolation)\n");
        }
        tt_calib_cv_free(&cv);
    }
    report_alpha_beta(&ms, &r);
    char comment[512];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tmv);
    int off = snprintf(comment, sizeof comment, "topo-tune --calibrate, %s, %d rows (median error %.1f%% -> %.1f%%) from",
                       date, rep.npoints, rep.med_before * 100, rep.med_after * 100);
    for (int i = 0; i < a->nfiles && off > 0 && (size_t)off < sizeof comment - 1; i++)
        off += snprintf(comment + off, sizeof comment - (size_t)off, " %s", a->files[i]);
    if ((st = tt_model_params_write_json(&fitted, comment, &js)) != TT_OK) { rc = tt_cli_fail(st); goto out; }
    if ((rc = emit(a->outpath, &js)) != 0) goto out;
    /* the report goes to stdout when the file went elsewhere, else to stderr */
    if (a->outpath && strcmp(a->outpath, "-")) {
        if ((rc = emit(NULL, &r)) != 0) goto out;
    } else {
        fputs(r.data ? r.data : "", stderr);
    }
    rc = TT_CLI_EXIT_OK;
out:
    tt_calib_report_free(&rep);
out0:
    tt_strbuf_free(&js);
    tt_strbuf_free(&r);
    tt_measure_set_free(&ms);
    return rc;
}

int tt_cli_judge(const tt_cli_calib_args *a)
{
    tt_measure_set ms = {0};
    tt_judge_report rep = {0};
    tt_tune_table ld = {0};
    tt_tune_table tab = {0};
    tt_tune_ctx *ctx = NULL;
    tt_strbuf out;
    tt_strbuf_init(&out);
    int rc = TT_CLI_EXIT_ERROR;
    tt_status st = load_all(a, &ms);
    if (st != TT_OK) { rc = tt_cli_fail(st); goto out; }
    const tt_tune_entry *entries;
    int nentries;
    if (a->table) {
        if ((st = tt_tune_table_load(a->table, &ld)) != TT_OK) { rc = tt_cli_fail(st); goto out; }
        entries = ld.entries;
        nentries = ld.n;
        for (int i = 0; i < ms.n; i++)
            if (ms.m[i].nranks > 0 && ld.ranks > 0 && ms.m[i].nranks != ld.ranks) {
                rc = tt_cli_fail(tt_error_set(TT_ERR_INVALID, "%s: measured with %d ranks, the table %s is for %d",
                                              ms.m[i].where, ms.m[i].nranks, a->table, ld.ranks));
                goto out;
            }
    } else if (a->among_measured) {
        entries = NULL;
        nentries = 0;
    } else {
        tt_cluster c = a->cl;
        if (!a->gpn_given && ms.m[0].nranks > 0 && ms.m[0].nranks % c.nodes == 0) c.gpus_per_node = ms.m[0].nranks / c.nodes;
        if ((st = tt_tune_ctx_new(a->topo, &c, a->model, &a->params, &ctx)) != TT_OK) { rc = tt_cli_fail(st); goto out; }
        if ((st = tt_tune_table_build(ctx, (1u << TT_COLL_COUNT) - 1, a->min_size, a->max_size, a->nccl_only, &tab)) != TT_OK) {
            rc = tt_cli_fail(st);
            goto out;
        }
        entries = tab.entries;
        nentries = tab.n;
    }
    if (a->among_measured) st = tt_tune_judge_model_kind(a->topo, &a->cl, a->model, &a->params, &ms, a->tolerance, &rep);
    else st = tt_tune_judge(entries, nentries, &ms, a->tolerance, &rep);
    if (st != TT_OK) { rc = tt_cli_fail(st); goto out; }
    if ((st = tt_judge_write_text(&rep, a->tolerance, &out)) != TT_OK) { rc = tt_cli_fail(st); goto out; }
    if ((rc = emit(a->outpath, &out)) != 0) goto out;
    rc = rep.nwrong ? TT_CLI_EXIT_WARN : TT_CLI_EXIT_OK;
out:
    tt_judge_report_free(&rep);
    tt_tune_table_free(&ld);
    tt_tune_table_free(&tab);
    tt_tune_ctx_free(ctx);
    tt_strbuf_free(&out);
    tt_measure_set_free(&ms);
    return rc;
}

int tt_cli_expect(const tt_cli_calib_args *a)
{
    tt_measure_set ms = {0};
    tt_tune_ctx *ctx = NULL;
    tt_expect_row *rows = NULL;
    tt_strbuf out;
    tt_strbuf_init(&out);
    int rc = TT_CLI_EXIT_ERROR, nrows = 0;
    tt_status st;
    tt_cluster c = a->cl;
    if (a->nfiles) {
        if ((st = load_all(a, &ms)) != TT_OK) { rc = tt_cli_fail(st); goto out; }
        const tt_measurement *m0 = &ms.m[0];
        if (!a->gpn_given && m0->nranks > 0) {
            if (m0->nodes > 0 && c.nodes == 1) c.nodes = m0->nodes;
            if (m0->nranks % c.nodes) {
                rc = tt_cli_fail(tt_error_set(TT_ERR_INVALID, "%s: %d ranks do not split over %d nodes", m0->where,
                                              m0->nranks, c.nodes));
                goto out;
            }
            c.gpus_per_node = m0->nranks / c.nodes;
        }
    }
    if ((st = tt_tune_ctx_new(a->topo, &c, a->model, &a->params, &ctx)) != TT_OK) { rc = tt_cli_fail(st); goto out; }
    /* the rows: every sweep size, or every measured row */
    if (!a->nfiles) {
        static const tt_coll order[] = {TT_COLL_ALLREDUCE, TT_COLL_ALLGATHER, TT_COLL_REDUCESCATTER, TT_COLL_BROADCAST,
                                        TT_COLL_REDUCE};
        int cap = 0;
        for (uint64_t s = a->min_size; s <= a->max_size && s; s *= 2) {
            cap += TT_COLL_COUNT;
            if (s > UINT64_MAX / 2) break;
        }
        if (!(rows = calloc((size_t)cap + 1, sizeof *rows))) { rc = tt_cli_fail(tt_error_set(TT_ERR_NOMEM, "out of memory")); goto out; }
        for (int cc = 0; cc < TT_COLL_COUNT; cc++) {
            if (!(a->colls & (1u << order[cc]))) continue;
            for (uint64_t s = a->min_size; s <= a->max_size && s; s *= 2) {
                if ((st = tt_expect_row_compute(ctx, order[cc], s, NULL, &rows[nrows++])) != TT_OK) { rc = tt_cli_fail(st); goto out; }
                if (s > UINT64_MAX / 2) break;
            }
        }
    } else {
        if (!(rows = calloc((size_t)ms.n + 1, sizeof *rows))) { rc = tt_cli_fail(tt_error_set(TT_ERR_NOMEM, "out of memory")); goto out; }
        for (int i = 0; i < ms.n; i++)
            if ((st = tt_expect_judge(ctx, &ms.m[i], NULL, &rows[nrows++])) != TT_OK) { rc = tt_cli_fail(st); goto out; }
    }
    int worst = TT_EXPECT_PASS, counts[3] = {0};
    for (int i = 0; a->nfiles && i < nrows; i++) {
        counts[rows[i].verdict]++;
        if ((int)rows[i].verdict > worst) worst = rows[i].verdict;
    }
    if (a->format == 1) {
        if ((st = tt_expect_write_json(ctx, rows, nrows, a->nfiles > 0, &out)) != TT_OK) { rc = tt_cli_fail(st); goto out; }
    } else {
        tt_strbuf_printf(&out, "# expected busbw, %d node(s) x %d GPU(s)%s%s%s, %s model (%s): NCCL's own choice per size; "
                         "PASS within the model's measured error in the size's regime (docs/calibration.md)\n",
                         c.nodes, c.gpus_per_node, c.nodes > 1 ? ", " : "", c.nodes > 1 ? tt_fabric_title(c.fabric) : "",
                         c.nodes > 1 ? (c.fabric_origin == TT_FABRIC_ASSUMED ? " (assumed)" : "") : "",
                         tt_model_name(a->model),
                         a->model == TT_MODEL_NCCL ? tt_nccl_part_name(ctx, TT_COLL_ALLREDUCE) : a->params.source);
        if (!a->nfiles) {
            tt_strbuf_printf(&out, "%-14s %12s  %-16s %12s %12s %12s %12s %12s  %s\n", "collective", "bytes", "algo/proto",
                             "pred us", "pred busbw", "pass >=", "fail <", "warn >", "regime");
            for (int i = 0; i < nrows; i++) {
                const tt_expect_row *r = &rows[i];
                char cb[40];
                snprintf(cb, sizeof cb, "%s/%s", tt_algo_name(r->algo), tt_proto_name(r->proto));
                tt_strbuf_printf(&out, "%-14s %12llu  %-16s %12.2f %12.3f %12.3f %12.3f %12.3f  %s%s\n",
                                 tt_coll_name(r->coll), (unsigned long long)r->bytes, cb, r->pred_us, r->pred_busbw,
                                 r->pass_busbw, r->fail_busbw, r->above_busbw, r->regime,
                                 r->trusted ? "" : " (never measured: wide band)");
            }
        } else {
            tt_strbuf_printf(&out, "%-14s %12s %-16s %12s %12s %12s %8s  %-7s %s\n", "collective", "bytes", "algo/proto",
                             "meas busbw", "pred busbw", "pass >=", "ratio", "verdict", "row");
            for (int i = 0; i < nrows; i++) {
                const tt_expect_row *r = &rows[i];
                char cb[40];
                snprintf(cb, sizeof cb, "%s/%s", tt_algo_name(r->algo), tt_proto_name(r->proto));
                tt_strbuf_printf(&out, "%-14s %12llu %-16s %12.3f %12.3f %12.3f %7.0f%%  %-7s %s%s%s\n",
                                 tt_coll_name(r->coll), (unsigned long long)r->bytes, cb, r->meas_busbw, r->pred_busbw,
                                 r->pass_busbw, r->ratio * 100, tt_expect_verdict_name(r->verdict), r->where,
                                 r->note[0] ? ": " : "", r->note);
            }
            tt_strbuf_printf(&out, "# %d PASS, %d WARN, %d FAIL -> %s\n", counts[0], counts[1], counts[2],
                             tt_expect_verdict_name((tt_expect_verdict)worst));
        }
    }
    if ((rc = emit(a->outpath, &out)) != 0) goto out;
    rc = a->nfiles ? worst : TT_CLI_EXIT_OK; /* 0 PASS, 1 WARN, 2 FAIL */
out:
    free(rows);
    tt_tune_ctx_free(ctx);
    tt_strbuf_free(&out);
    tt_measure_set_free(&ms);
    return rc;
}

int tt_cli_from_measured(const tt_cli_calib_args *a)
{
    tt_measure_set ms = {0};
    tt_measured_table t;
    memset(&t, 0, sizeof t);
    tt_strbuf sb, src;
    tt_strbuf_init(&sb);
    tt_strbuf_init(&src);
    tt_status st = load_all(a, &ms);
    if (st == TT_OK) st = tt_tune_measured_build(&ms, a->margin, 1, &t);
    if (st == TT_OK) {
        for (int i = 0; i < a->nfiles; i++) tt_strbuf_printf(&src, "%s%s", i ? " " : "measured: ", a->files[i]);
        st = a->format == 1 ? tt_measured_write_json(&t, src.data, &sb)
             : a->format == 2 ? tt_measured_write_csv(&t, &sb)
                              : tt_measured_write_text(&t, &sb);
    }
    int rc = st == TT_OK ? emit(a->outpath, &sb) : tt_cli_fail(st);
    tt_measured_table_free(&t);
    tt_measure_set_free(&ms);
    tt_strbuf_free(&sb);
    tt_strbuf_free(&src);
    return rc;
}

/* --calibrate --model nccl: NCCL rows with NCCL's structure.  NCCL's own constants are not
 * fitted (they are NCCL's); the report gives every row's error with NCCL's model as is and with
 * the built-in absolute-time layer of the part (out of the box), split into NCCL's own choice
 * (rows without algorithm/protocol) and forced rows. */
static int calibrate_nccl_rows(const tt_cli_calib_args *a)
{
    if (a->outpath && strcmp(a->outpath, "-"))
        return tt_cli_fail(tt_error_set(TT_ERR_INVALID,
                                        "--calibrate --model nccl reports the error of NCCL's structure; it writes no "
                                        "calibration file (drop -o)"));
    tt_measure_set ms = {0};
    tt_strbuf r;
    tt_strbuf_init(&r);
    int rc;
    tt_status st = load_all(a, &ms);
    if (st == TT_OK) st = tt_nccl_rows_report(a->topo, &a->cl, &ms, &r, NULL);
    if (st != TT_OK) rc = tt_cli_fail(st);
    else if ((rc = emit(NULL, &r)) == 0) rc = TT_CLI_EXIT_OK;
    tt_strbuf_free(&r);
    tt_measure_set_free(&ms);
    return rc;
}
