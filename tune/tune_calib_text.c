/*
 * tune_calib_text.c - the measurement modes' inputs and reports as text (topo-tune --calibrate,
 * --expect; docs/calibration.md): loading several measurement files, the calibration report
 * (constants before/after, per-row errors, cross-validation, the robust line per group), and the
 * expectation rows of a sweep or of a measured run with their text table.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

tt_status tt_measure_load_files(const char *const *files, int n, const tt_measure_opts *o, tt_measure_set *ms)
{
    if (n == 0) return tt_error_set(TT_ERR_INVALID, "no measurement file given");
    for (int i = 0; i < n; i++) {
        tt_status st = tt_measure_load(files[i], o, ms);
        if (st != TT_OK) return st;
    }
    return TT_OK;
}

/* robust alpha-beta per (collective, algorithm, protocol, ranks) */
static void write_alpha_beta(const tt_measure_set *ms, tt_strbuf *r)
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

/* the fitted constants, the executor-shaped ones with their spread and fitted ranges */
static void write_constants(const tt_calib_report *rep, const tt_model_params *start, tt_strbuf *r)
{
    tt_strbuf_printf(r, "# calibration of the topotune model: %d rows used, %d skipped, %d parameters, start: %s\n",
                     rep->npoints, rep->nskipped, rep->nparams, start->source);
    tt_strbuf_printf(r, "%-28s %12s %12s   %s\n", "parameter", "before", "after", "bounds");
    for (int j = 0; j < rep->nparams; j++)
        tt_strbuf_printf(r, "%-28s %12.6g %12.6g   [%g, %g]%s\n", rep->name[j], rep->before[j], rep->after[j],
                         rep->lo[j], rep->hi[j],
                         fabs(rep->after[j] - rep->hi[j]) < 1e-9 * rep->hi[j] || fabs(rep->after[j] - rep->lo[j]) < 1e-12
                             ? "  at bound" : "");
    int any = 0;
    for (int j = 0; j < rep->nparams; j++) {
        if (strncmp(rep->name[j], "exec.", 5)) continue;
        if (!any++)
            tt_strbuf_printf(r, "\n# executor-shaped constants: fitted value, leave-one-sweep-out range, rows that set "
                                "it (its term >= 30%% of the time)\n%-32s %12s %25s   %s\n",
                             "constant", "fitted", "spread", "set by");
        char sp[64];
        snprintf(sp, sizeof sp, "%.4g .. %.4g", rep->spread_lo[j], rep->spread_hi[j]);
        tt_strbuf_printf(r, "%-32s %12.6g %25s   %s\n", rep->name[j], rep->after[j], sp, rep->setby[j]);
    }
    for (int g = 0; g < rep->ngroups; g++)
        tt_strbuf_printf(r, "# fitted range exec.%s.%s: %d rows from %d sweeps, %llu .. %llu bytes, %d .. %d ranks; "
                            "outside it the model extrapolates\n",
                         tt_exec_kind_name((tt_exec_kind)rep->group[g].kind),
                         tt_proto_name((tt_proto)rep->group[g].proto), rep->group[g].nrows, rep->group[g].nsweeps,
                         (unsigned long long)rep->group[g].min_bytes, (unsigned long long)rep->group[g].max_bytes,
                         rep->group[g].min_ranks, rep->group[g].max_ranks);
}

static void write_rows(const tt_calib_report *rep, const tt_measure_set *ms, tt_strbuf *r)
{
    tt_strbuf_printf(r, "\n# per row: |pred - meas| / meas\n%-14s %6s %-14s %12s %12s %12s %8s %12s %8s\n", "collective",
                     "ranks", "algo/proto", "bytes", "meas us", "before us", "err", "after us", "err");
    for (int i = 0; i < ms->n; i++) {
        const tt_measurement *m = &ms->m[i];
        char cb[48];
        if (rep->row[i] < 0) {
            tt_strbuf_printf(r, "%-14s %6d %-14s %12llu %12.2f   skipped (%s)\n", tt_coll_name(m->coll), m->nranks,
                             tt_measure_cand_name(m, cb, sizeof cb), (unsigned long long)m->bytes, m->time_us, m->where);
            continue;
        }
        double eb = fabs(rep->pred_before[i] - m->time_us) / m->time_us;
        double ea = fabs(rep->pred_after[i] - m->time_us) / m->time_us;
        tt_strbuf_printf(r, "%-14s %6d %-14s %12llu %12.2f %12.2f %7.1f%% %12.2f %7.1f%%\n", tt_coll_name(m->coll),
                         m->nranks, tt_measure_cand_name(m, cb, sizeof cb), (unsigned long long)m->bytes, m->time_us,
                         rep->pred_before[i], eb * 100, rep->pred_after[i], ea * 100);
    }
    tt_strbuf_printf(r, "\n# error over %d rows: median %.1f%% -> %.1f%%, worst %.1f%% -> %.1f%%\n", rep->npoints,
                     rep->med_before * 100, rep->med_after * 100, rep->worst_before * 100, rep->worst_after * 100);
}

static void write_cv_line(const tt_cv_line *l, const tt_measure_set *ms, tt_strbuf *r)
{
    tt_strbuf_printf(r, "cv %-7s %-8s %6d %-26s %-40s %5d %7.1f%% %7.1f%% %9.1f%% %9.1f%% %6d\n", l->test,
                     tt_exec_kind_name((tt_exec_kind)l->kind), l->nranks, l->fit_on, l->predicted, l->nrows,
                     l->median * 100, l->worst * 100, l->med_start * 100, l->worst_start * 100, l->extrapolated);
    if (l->worst_row[0]) tt_strbuf_printf(r, "#   worst held-out row: %s\n", l->worst_row);
    if (l->extrapolated > 0 && l->extrapolated < l->nrows)
        tt_strbuf_printf(r, "#   worst of the %d held-out rows inside the fitted range: %.1f %%\n",
                         l->nrows - l->extrapolated, l->worst_inside * 100);
    if (l->nspread > 0)
        tt_strbuf_printf(r, "#   own spread of the %d held-out rows measured more than once: median %.1f %%; "
                            "%d of them predicted within it\n",
                         l->nspread, l->spread_median * 100, l->within_spread);
    tt_repeatability rp;
    if (strcmp(l->test, "algorithm") && tt_measure_repeatability(ms, l->kind, l->nranks, &rp) == TT_OK && rp.nrows > 0)
        tt_strbuf_printf(r, "#   repeatability of the %d ranks' rows (fastest of the odd against the even "
                            "repeats, %d rows): median %.1f %%, worst %.1f %% (%s)\n",
                         l->nranks, rp.nrows, rp.median * 100, rp.worst * 100, rp.worst_row);
}

static void write_cv(const tt_measure_set *ms, const tt_model_params *start, tt_strbuf *r)
{
    tt_calib_cv cv;
    if (tt_calib_cross_validate(ms, start, &cv) == TT_OK && cv.n > 0) {
        tt_strbuf_printf(r, "\n# cross-validation (rows of our executor; errors |pred - meas| / meas of the rows "
                            "left out of the fit; start = the same rows with the start constants)\n"
                            "%-10s %-8s %6s %-26s %-40s %5s %8s %8s %10s %10s %6s\n",
                         "test", "kind", "ranks", "fit on", "predicted", "rows", "median", "worst", "start med",
                         "start worst", "extrap");
        for (int i = 0; i < cv.n; i++) write_cv_line(&cv.l[i], ms, r);
        tt_strbuf_printf(r, "# extrap: held-out rows outside the fitted sizes or rank counts (an extrapolation)\n");
    }
    tt_calib_cv_free(&cv);
}

tt_status tt_calib_write_text(const tt_calib_report *rep, const tt_measure_set *ms, const tt_model_params *start,
                              tt_strbuf *out)
{
    write_constants(rep, start, out);
    write_rows(rep, ms, out);
    write_cv(ms, start, out);
    write_alpha_beta(ms, out);
    return tt_strbuf_status(out);
}

/* ---- expectations ---- */

tt_status tt_expect_cluster(const tt_measure_set *ms, tt_cluster *c)
{
    const tt_measurement *m0 = &ms->m[0];
    if (m0->nranks <= 0) return TT_OK;
    if (m0->nodes > 0 && c->nodes == 1) c->nodes = m0->nodes;
    if (m0->nranks % c->nodes)
        return tt_error_set(TT_ERR_INVALID, "%s: %d ranks do not split over %d nodes", m0->where, m0->nranks, c->nodes);
    c->gpus_per_node = m0->nranks / c->nodes;
    return TT_OK;
}

tt_status tt_expect_rows_sweep(const tt_tune_ctx *ctx, unsigned colls, uint64_t min_size, uint64_t max_size,
                               tt_expect_row **out, int *n)
{
    static const tt_coll order[] = {TT_COLL_ALLREDUCE, TT_COLL_ALLGATHER, TT_COLL_REDUCESCATTER, TT_COLL_BROADCAST,
                                    TT_COLL_REDUCE};
    int cap = 0;
    *n = 0;
    for (uint64_t s = min_size; s <= max_size && s; s *= 2) {
        cap += TT_COLL_COUNT;
        if (s > UINT64_MAX / 2) break;
    }
    if (!(*out = calloc((size_t)cap + 1, sizeof **out))) return tt_error_set(TT_ERR_NOMEM, "out of memory");
    for (int cc = 0; cc < TT_COLL_COUNT; cc++) {
        if (!(colls & (1u << order[cc]))) continue;
        for (uint64_t s = min_size; s <= max_size && s; s *= 2) {
            tt_status st = tt_expect_row_compute(ctx, order[cc], s, NULL, &(*out)[(*n)++]);
            if (st != TT_OK) return st;
            if (s > UINT64_MAX / 2) break;
        }
    }
    return TT_OK;
}

tt_status tt_expect_rows_judge(const tt_tune_ctx *ctx, const tt_measure_set *ms, tt_expect_row **out, int *n)
{
    *n = 0;
    if (!(*out = calloc((size_t)ms->n + 1, sizeof **out))) return tt_error_set(TT_ERR_NOMEM, "out of memory");
    for (int i = 0; i < ms->n; i++) {
        tt_status st = tt_expect_judge(ctx, &ms->m[i], NULL, &(*out)[(*n)++]);
        if (st != TT_OK) return st;
    }
    return TT_OK;
}

tt_expect_verdict tt_expect_rows_verdict(const tt_expect_row *rows, int n, int counts[3])
{
    int worst = TT_EXPECT_PASS;
    counts[0] = counts[1] = counts[2] = 0;
    for (int i = 0; i < n; i++) {
        counts[rows[i].verdict]++;
        if ((int)rows[i].verdict > worst) worst = rows[i].verdict;
    }
    return (tt_expect_verdict)worst;
}

static void write_expect_sweep(const tt_expect_row *rows, int n, tt_strbuf *out)
{
    tt_strbuf_printf(out, "%-14s %12s  %-16s %12s %12s %12s %12s %12s  %s\n", "collective", "bytes", "algo/proto",
                     "pred us", "pred busbw", "pass >=", "fail <", "warn >", "regime");
    for (int i = 0; i < n; i++) {
        const tt_expect_row *r = &rows[i];
        char cb[40];
        snprintf(cb, sizeof cb, "%s/%s", tt_algo_name(r->algo), tt_proto_name(r->proto));
        tt_strbuf_printf(out, "%-14s %12llu  %-16s %12.2f %12.3f %12.3f %12.3f %12.3f  %s%s\n", tt_coll_name(r->coll),
                         (unsigned long long)r->bytes, cb, r->pred_us, r->pred_busbw, r->pass_busbw, r->fail_busbw,
                         r->above_busbw, r->regime, r->trusted ? "" : " (never measured: wide band)");
    }
}

static void write_expect_judged(const tt_expect_row *rows, int n, tt_strbuf *out)
{
    tt_strbuf_printf(out, "%-14s %12s %-16s %12s %12s %12s %8s  %-7s %s\n", "collective", "bytes", "algo/proto",
                     "meas busbw", "pred busbw", "pass >=", "ratio", "verdict", "row");
    for (int i = 0; i < n; i++) {
        const tt_expect_row *r = &rows[i];
        char cb[40];
        snprintf(cb, sizeof cb, "%s/%s", tt_algo_name(r->algo), tt_proto_name(r->proto));
        tt_strbuf_printf(out, "%-14s %12llu %-16s %12.3f %12.3f %12.3f %7.0f%%  %-7s %s%s%s\n", tt_coll_name(r->coll),
                         (unsigned long long)r->bytes, cb, r->meas_busbw, r->pred_busbw, r->pass_busbw, r->ratio * 100,
                         tt_expect_verdict_name(r->verdict), r->where, r->note[0] ? ": " : "", r->note);
    }
    int counts[3];
    tt_expect_verdict worst = tt_expect_rows_verdict(rows, n, counts);
    tt_strbuf_printf(out, "# %d PASS, %d WARN, %d FAIL -> %s\n", counts[0], counts[1], counts[2],
                     tt_expect_verdict_name(worst));
}

tt_status tt_expect_write_text(const tt_tune_ctx *ctx, const tt_cluster *c, tt_model_kind model,
                               const tt_model_params *params, const tt_expect_row *rows, int n, int judged,
                               tt_strbuf *out)
{
    tt_strbuf_printf(out, "# expected busbw, %d node(s) x %d GPU(s)%s%s%s, %s model (%s): NCCL's own choice per size; "
                          "PASS within the model's measured error in the size's regime (docs/calibration.md)\n",
                     c->nodes, c->gpus_per_node, c->nodes > 1 ? ", " : "", c->nodes > 1 ? tt_fabric_title(c->fabric) : "",
                     c->nodes > 1 ? (c->fabric_origin == TT_FABRIC_ASSUMED ? " (assumed)" : "") : "",
                     tt_model_name(model), model == TT_MODEL_NCCL ? tt_nccl_part_name(ctx, TT_COLL_ALLREDUCE) : params->source);
    if (judged) write_expect_judged(rows, n, out);
    else write_expect_sweep(rows, n, out);
    return tt_strbuf_status(out);
}

tt_status tt_expect_report(const tt_expect_opts *o, const tt_measure_set *ms, tt_strbuf *out, tt_expect_verdict *worst)
{
    tt_tune_ctx *ctx = NULL;
    tt_expect_row *rows = NULL;
    int n = 0, counts[3];
    tt_cluster c = *o->base;
    tt_status st = ms && !o->gpn_given ? tt_expect_cluster(ms, &c) : TT_OK;
    *worst = TT_EXPECT_PASS;
    if (st == TT_OK) st = tt_tune_ctx_new(o->topo, &c, o->model, o->params, &ctx);
    if (st == TT_OK)
        st = ms ? tt_expect_rows_judge(ctx, ms, &rows, &n) : tt_expect_rows_sweep(ctx, o->colls, o->min_size, o->max_size, &rows, &n);
    if (st == TT_OK)
        st = o->json ? tt_expect_write_json(ctx, rows, n, ms != NULL, out)
                     : tt_expect_write_text(ctx, &c, o->model, o->params, rows, n, ms != NULL, out);
    if (st == TT_OK && ms) *worst = tt_expect_rows_verdict(rows, n, counts);
    free(rows);
    tt_tune_ctx_free(ctx);
    return st;
}
