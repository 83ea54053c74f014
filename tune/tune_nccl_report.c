/*
 * tune_nccl_report.c - how well NCCL's own structure explains measured NCCL rows
 * (topo-tune --calibrate --model nccl): per row, the candidate NCCL ran (forced, or NCCL's
 * choice), NCCL's model time and the time with the absolute-time layer of a known part
 * (tune_nccl_rows.c), then median and worst error for rows of NCCL's own choice and for
 * forced rows.  Nothing is fitted: this reports the structure's error as it stands.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tune_internal.h"

/* one row: its time by NCCL's model (raw) and with the absolute-time layer (abs) */
static tt_status eval_row(const tt_topo *t, const tt_cluster *base, const tt_measurement *m, double *raw_us,
                          double *abs_us, tt_algo *al, tt_proto *pr, const char **part)
{
    if (!(m->time_us > 0)) return tt_error_set(TT_ERR_INVALID, "%s: no positive time", m->where);
    tt_cluster c = *base;
    int nodes = m->nodes > 0 ? m->nodes : c.nodes, nranks = m->nranks > 0 ? m->nranks : c.nodes * c.gpus_per_node;
    c.nodes = nodes;
    c.gpus_per_node = nodes > 0 && nranks % nodes == 0 ? nranks / nodes : 0;
    tt_tune_ctx *ctx = NULL;
    tt_tune_estimate e;
    tt_status st = tt_tune_ctx_new(t, &c, TT_MODEL_NCCL, NULL, &ctx);
    if (st == TT_OK) st = tt_nccl_row_eval(ctx, m, abs_us, al, pr);
    if (st == TT_OK) st = tt_tune_eval(ctx, m->coll, *al, *pr, m->bytes, &e);
    if (st == TT_OK && !*part) *part = tt_nccl_part_name(ctx, m->coll);
    if (st == TT_OK) *raw_us = e.time_us;
    tt_tune_ctx_free(ctx);
    return st;
}

tt_status tt_nccl_rows_report(const tt_topo *t, const tt_cluster *base, const tt_measure_set *ms, tt_strbuf *r,
                              tt_nccl_rows_summary *sum)
{
    tt_nccl_rows_summary s = {0};
    double *e[2][2] = {{NULL}}; /* [default, forced][raw, corrected] */
    tt_status st = TT_OK;
    for (int g = 0; g < 2; g++)
        for (int k = 0; k < 2; k++)
            if (!(e[g][k] = malloc(sizeof(double) * (size_t)(ms->n > 0 ? ms->n : 1)))) {
                st = tt_error_set(TT_ERR_NOMEM, "out of memory");
                goto out;
            }
    tt_strbuf_printf(r, "# NCCL rows with NCCL's structure: its choice (rows without algorithm) or the forced candidate, "
                        "NCCL's model time, and with the built-in absolute-time layer (docs/model.md)\n");
    tt_strbuf_printf(r, "%-14s %6s %-14s %-14s %12s %12s %12s %8s %12s %8s\n", "collective", "ranks", "row",
                     "ran (model)", "bytes", "meas us", "nccl us", "err", "abs us", "err");
    for (int i = 0; i < ms->n; i++) {
        const tt_measurement *m = &ms->m[i];
        char cb[48], rb[48];
        double raw = 0, us = 0;
        tt_algo al = TT_ALGO_DEFAULT;
        tt_proto pr = TT_PROTO_DEFAULT;
        if (eval_row(t, base, m, &raw, &us, &al, &pr, &s.part) != TT_OK) {
            tt_strbuf_printf(r, "%-14s %6d %-14s %-14s %12llu %12.2f   skipped (%s)\n", tt_coll_name(m->coll), m->nranks,
                             tt_measure_cand_name(m, cb, sizeof cb), "-", (unsigned long long)m->bytes, m->time_us, tt_error_message());
            s.skipped++;
            continue;
        }
        snprintf(rb, sizeof rb, "%s/%s", tt_algo_name(al), tt_proto_name(pr));
        double er = fabs(raw - m->time_us) / m->time_us, ea = fabs(us - m->time_us) / m->time_us;
        int g = m->algo >= 0 || m->proto >= 0;
        e[g][0][s.rows[g]] = er;
        e[g][1][s.rows[g]] = ea;
        s.rows[g]++;
        s.used++;
        tt_strbuf_printf(r, "%-14s %6d %-14s %-14s %12llu %12.2f %12.2f %7.1f%% %12.2f %7.1f%%\n", tt_coll_name(m->coll),
                         m->nranks, tt_measure_cand_name(m, cb, sizeof cb), rb, (unsigned long long)m->bytes, m->time_us, raw,
                         er * 100, us, ea * 100);
    }
    if (s.used == 0) {
        st = tt_error_set(TT_ERR_INVALID, "--model nccl: none of the %d rows is an NCCL run it can evaluate", ms->n);
        goto out;
    }
    tt_strbuf_printf(r, "\n# NCCL rows: %d used, %d skipped; part: %s\n", s.used, s.skipped, s.part ? s.part : "-");
    static const char *const gname[2] = {"NCCL's own choice", "forced algorithm/protocol"};
    for (int g = 0; g < 2; g++) {
        if (!s.rows[g]) continue;
        for (int k = 0; k < 2; k++) {
            for (int j = 0; j < s.rows[g]; j++)
                if (e[g][k][j] > s.worst[g][k]) s.worst[g][k] = e[g][k][j];
            s.median[g][k] = tt_median(e[g][k], (size_t)s.rows[g]);
        }
        tt_strbuf_printf(r, "# error over %d rows (%s): NCCL's model median %.1f%%, worst %.1f%%; with the absolute-time "
                            "layer median %.1f%%, worst %.1f%%\n", s.rows[g], gname[g], s.median[g][0] * 100,
                         s.worst[g][0] * 100, s.median[g][1] * 100, s.worst[g][1] * 100);
    }
out:
    for (int g = 0; g < 2; g++)
        for (int k = 0; k < 2; k++) free(e[g][k]);
    if (sum) *sum = s;
    return st;
}
