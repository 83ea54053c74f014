/*
 * tune_judge.c - was the table's choice right?  Compares, per (collective, size, ranks), the
 * measured time of the candidate the table picks with the fastest measured candidate.
 *
 * Rows whose algorithm is not recorded (nccl-tests: NCCL chose) cannot be attributed and are
 * ignored.  When one candidate was measured several times (several files), its fastest time
 * counts.  The protocol of a row without one is taken as the table's (host runs: simple).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

void tt_judge_report_free(tt_judge_report *r)
{
    if (!r) return;
    free(r->rows);
    free(r->fix);
    memset(r, 0, sizeof(*r));
}

static int cmp_row(const void *a, const void *b)
{
    const tt_judge_row *x = a, *y = b;
    if (x->coll != y->coll) return (int)x->coll - (int)y->coll;
    if (x->nranks != y->nranks) return x->nranks - y->nranks;
    return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

tt_status tt_tune_judge(const tt_tune_entry *entries, int nentries, const tt_measure_set *ms, double tol,
                        tt_judge_report *out)
{
    memset(out, 0, sizeof(*out));
    if (!(tol >= 0) || tol > 10) return tt_error_set(TT_ERR_INVALID, "judge: tolerance %g must be in 0..10", tol);
    out->rows = calloc((size_t)(ms->n ? ms->n : 1), sizeof(tt_judge_row));
    out->fix = calloc((size_t)(ms->n ? ms->n : 1), sizeof(tt_judge_fix));
    if (!out->rows || !out->fix) {
        tt_judge_report_free(out);
        return tt_error_set(TT_ERR_NOMEM, "judge: out of memory");
    }
    for (int i = 0; i < ms->n; i++) {
        const tt_measurement *m = &ms->m[i];
        if (m->algo < 0) continue;
        const tt_tune_entry *e = tt_tune_entry_find(entries, nentries, m->coll, m->bytes);
        if (!e) {
            TT_WARN("tune", "%s: the table has no entry for %s at %llu bytes", m->where, tt_coll_name(m->coll),
                    (unsigned long long)m->bytes);
            continue;
        }
        int proto = m->proto >= 0 ? m->proto : (int)e->proto;
        int k;
        for (k = 0; k < out->n; k++)
            if (out->rows[k].coll == m->coll && out->rows[k].bytes == m->bytes && out->rows[k].nranks == m->nranks) break;
        tt_judge_row *r = &out->rows[k];
        if (k == out->n) {
            out->n++;
            r->coll = m->coll;
            r->bytes = m->bytes;
            r->nranks = m->nranks;
            r->table_algo = e->algo;
            r->table_proto = e->proto;
            r->table_us = -1;
            r->best_us = -1;
        }
        int is_table = m->algo == (int)e->algo && proto == (int)e->proto;
        if (is_table && (r->table_us < 0 || m->time_us < r->table_us)) r->table_us = m->time_us;
        if (r->best_us < 0 || m->time_us < r->best_us) {
            r->best_us = m->time_us;
            r->best_algo = m->algo;
            r->best_proto = proto;
        }
        r->ncand++; /* rows, not distinct candidates; refined below */
    }
    /* distinct candidates per row */
    for (int k = 0; k < out->n; k++) {
        tt_judge_row *r = &out->rows[k];
        int seen[TT_ALGO_COUNT][TT_PROTO_COUNT] = {{0}};
        int nc = 0;
        for (int i = 0; i < ms->n; i++) {
            const tt_measurement *m = &ms->m[i];
            if (m->algo < 0 || m->coll != r->coll || m->bytes != r->bytes || m->nranks != r->nranks) continue;
            int proto = m->proto >= 0 ? m->proto : r->table_proto;
            if (!seen[m->algo][proto]++) nc++;
        }
        r->ncand = nc;
        if (r->table_us < 0) {
            r->verdict = 2;
            out->nunmeasured++;
        } else {
            r->loss = r->table_us / r->best_us - 1;
            if (r->loss > tol) {
                r->verdict = 1;
                out->nwrong++;
            } else {
                r->verdict = 0;
                out->nright++;
            }
        }
    }
    qsort(out->rows, (size_t)out->n, sizeof(tt_judge_row), cmp_row);
    /* ranges to fix: consecutive wrong sizes with the same better candidate */
    for (int k = 0; k < out->n; k++) {
        const tt_judge_row *r = &out->rows[k];
        if (r->verdict != 1) continue;
        tt_judge_fix *f = out->nfix ? &out->fix[out->nfix - 1] : NULL;
        int cont = f && k > 0 && out->rows[k - 1].verdict == 1 && f->coll == r->coll && f->nranks == r->nranks &&
                   f->best_algo == r->best_algo && f->best_proto == r->best_proto &&
                   f->table_algo == r->table_algo && f->table_proto == r->table_proto;
        if (cont) {
            f->hi = r->bytes;
            if (r->loss > f->worst_loss) f->worst_loss = r->loss;
            continue;
        }
        f = &out->fix[out->nfix++];
        f->coll = r->coll;
        f->lo = f->hi = r->bytes;
        f->nranks = r->nranks;
        f->table_algo = r->table_algo;
        f->table_proto = r->table_proto;
        f->best_algo = r->best_algo;
        f->best_proto = r->best_proto;
        f->worst_loss = r->loss;
    }
    if (out->n == 0) {
        tt_judge_report_free(out);
        return tt_error_set(TT_ERR_INVALID,
                            "judge: no measured row names its algorithm (nccl-tests rows cannot be attributed; "
                            "use topo-exec --algo runs)");
    }
    return TT_OK;
}

static void cand(char *b, size_t n, int a, int p)
{
    snprintf(b, n, "%s/%s", tt_algo_name((tt_algo)a), tt_proto_name((tt_proto)p));
}

tt_status tt_judge_write_text(const tt_judge_report *r, double tol, tt_strbuf *out)
{
    tt_strbuf_printf(out, "# table choice vs fastest measured candidate (right when within %.0f%%)\n", tol * 100);
    tt_strbuf_printf(out, "%-14s %6s %12s  %-18s %11s  %-18s %11s %6s %7s  %s\n", "collective", "ranks", "bytes",
                     "table choice", "its us", "fastest", "its us", "cands", "loss", "verdict");
    for (int k = 0; k < r->n; k++) {
        const tt_judge_row *w = &r->rows[k];
        char tc[40], bc[40], tu[24];
        cand(tc, sizeof tc, w->table_algo, w->table_proto);
        cand(bc, sizeof bc, w->best_algo, w->best_proto);
        if (w->table_us >= 0) snprintf(tu, sizeof tu, "%.2f", w->table_us);
        else snprintf(tu, sizeof tu, "-");
        char loss[24];
        if (w->verdict == 2) snprintf(loss, sizeof loss, "-");
        else snprintf(loss, sizeof loss, "%+.1f%%", w->loss * 100);
        tt_strbuf_printf(out, "%-14s %6d %12llu  %-18s %11s  %-18s %11.2f %6d %7s  %s\n", tt_coll_name(w->coll), w->nranks,
                         (unsigned long long)w->bytes, tc, tu, bc, w->best_us, w->ncand, loss,
                         w->verdict == 0 ? "right" : w->verdict == 1 ? "WRONG" : "table choice not measured");
    }
    tt_strbuf_printf(out, "# %d right, %d wrong, %d without a measurement of the table's choice\n", r->nright, r->nwrong,
                     r->nunmeasured);
    for (int i = 0; i < r->nfix; i++) {
        const tt_judge_fix *f = &r->fix[i];
        char tc[40], bc[40];
        cand(tc, sizeof tc, f->table_algo, f->table_proto);
        cand(bc, sizeof bc, f->best_algo, f->best_proto);
        tt_strbuf_printf(out, "fix: %s, %d ranks, sizes %llu..%llu bytes: use %s instead of %s (up to %.1f%% faster)\n",
                         tt_coll_name(f->coll), f->nranks, (unsigned long long)f->lo, (unsigned long long)f->hi, bc, tc,
                         f->worst_loss / (1 + f->worst_loss) * 100);
    }
    return tt_strbuf_status(out);
}

/* ---- the model's ranking among the candidates that were measured ---- */
static int cand_seen(const tt_tune_entry *e, int n, const tt_measurement *m)
{
    for (int i = 0; i < n; i++)
        if (e[i].coll == m->coll && e[i].min_bytes == m->bytes) return i;
    return -1;
}

tt_status tt_tune_judge_model(const tt_topo *t, const tt_cluster *base, const tt_model_params *p,
                              const tt_measure_set *ms, double tol, tt_judge_report *out)
{
    return tt_tune_judge_model_kind(t, base, TT_MODEL_TOPOTUNE, p, ms, tol, out);
}

tt_status tt_tune_judge_model_kind(const tt_topo *t, const tt_cluster *base, tt_model_kind model,
                                   const tt_model_params *p, const tt_measure_set *ms, double tol, tt_judge_report *out)
{
    memset(out, 0, sizeof(*out));
    tt_judge_report acc = {0};
    tt_status st = TT_OK;
    tt_measure_set sub = {0};
    tt_tune_entry *ent = NULL;
    char *done = calloc((size_t)(ms->n ? ms->n : 1), 1);
    sub.m = malloc(sizeof(tt_measurement) * (size_t)(ms->n ? ms->n : 1));
    ent = malloc(sizeof(tt_tune_entry) * (size_t)(ms->n ? ms->n : 1));
    acc.rows = malloc(sizeof(tt_judge_row) * (size_t)(ms->n ? ms->n : 1));
    acc.fix = malloc(sizeof(tt_judge_fix) * (size_t)(ms->n ? ms->n : 1));
    if (!done || !sub.m || !ent || !acc.rows || !acc.fix) {
        st = tt_error_set(TT_ERR_NOMEM, "judge: out of memory");
        goto out;
    }
    for (int i = 0; i < ms->n; i++) {
        if (done[i] || ms->m[i].algo < 0) continue;
        int nr = ms->m[i].nranks;
        /* one rank count at a time: a table is for one communicator size */
        sub.n = 0;
        for (int j = i; j < ms->n; j++)
            if (!done[j] && ms->m[j].algo >= 0 && ms->m[j].nranks == nr) {
                done[j] = 1;
                sub.m[sub.n] = ms->m[j];
                if (sub.m[sub.n].proto < 0) sub.m[sub.n].proto = TT_PROTO_SIMPLE; /* host runs */
                sub.n++;
            }
        int ne = 0;
        double *best = malloc(sizeof(double) * (size_t)sub.n);
        if (!best) { st = tt_error_set(TT_ERR_NOMEM, "judge: out of memory"); goto out; }
        for (int j = 0; j < sub.n; j++) {
            double us;
            if (tt_rows_predict(t, base, model, p, &sub.m[j], &us) != TT_OK) {
                /* the model cannot rank it (e.g. an algorithm it lacks): not a choice it makes */
                TT_WARN("tune", "judge: %s", tt_error_message());
                continue;
            }
            int k = cand_seen(ent, ne, &sub.m[j]);
            if (k < 0) {
                k = ne++;
                ent[k] = (tt_tune_entry){sub.m[j].coll, sub.m[j].bytes, sub.m[j].bytes, (tt_algo)sub.m[j].algo,
                                         (tt_proto)sub.m[j].proto, sub.m[j].channels, us, 0, 0};
                best[k] = us;
            } else if (us < best[k]) {
                best[k] = us;
                ent[k].algo = (tt_algo)sub.m[j].algo;
                ent[k].proto = (tt_proto)sub.m[j].proto;
                ent[k].predicted_us = us;
            }
        }
        free(best);
        tt_judge_report r;
        if ((st = tt_tune_judge(ent, ne, &sub, tol, &r)) != TT_OK) goto out;
        memcpy(acc.rows + acc.n, r.rows, sizeof(tt_judge_row) * (size_t)r.n);
        acc.n += r.n;
        memcpy(acc.fix + acc.nfix, r.fix, sizeof(tt_judge_fix) * (size_t)r.nfix);
        acc.nfix += r.nfix;
        acc.nright += r.nright;
        acc.nwrong += r.nwrong;
        acc.nunmeasured += r.nunmeasured;
        tt_judge_report_free(&r);
    }
    if (acc.n == 0) {
        st = tt_error_set(TT_ERR_INVALID, "judge: no measured row names its algorithm (use topo-exec --algo runs)");
        goto out;
    }
    *out = acc;
    memset(&acc, 0, sizeof acc);
out:
    tt_judge_report_free(&acc);
    free(done);
    free(sub.m);
    free(ent);
    return st;
}

tt_status tt_tune_judge_choices(const tt_judge_opts *o, const tt_measure_set *ms, tt_judge_report *out)
{
    tt_tune_table tab = {0};
    tt_tune_ctx *ctx = NULL;
    tt_status st = TT_OK;
    if (o->table) {
        st = tt_tune_table_load(o->table, &tab);
        for (int i = 0; st == TT_OK && i < ms->n; i++)
            if (ms->m[i].nranks > 0 && tab.ranks > 0 && ms->m[i].nranks != tab.ranks)
                st = tt_error_set(TT_ERR_INVALID, "%s: measured with %d ranks, the table %s is for %d", ms->m[i].where,
                                  ms->m[i].nranks, o->table, tab.ranks);
    } else if (!o->among_measured) { /* the model's table, with the measured ranks per node */
        tt_cluster c = *o->base;
        if (!o->gpn_given && ms->m[0].nranks > 0 && ms->m[0].nranks % c.nodes == 0)
            c.gpus_per_node = ms->m[0].nranks / c.nodes;
        st = tt_tune_ctx_new(o->topo, &c, o->model, o->params, &ctx);
        if (st == TT_OK)
            st = tt_tune_table_build(ctx, (1u << TT_COLL_COUNT) - 1, o->min_size, o->max_size, o->nccl_only, &tab);
    }
    if (st == TT_OK)
        st = o->among_measured
                 ? tt_tune_judge_model_kind(o->topo, o->base, o->model, o->params, ms, o->tol, out)
                 : tt_tune_judge(tab.entries, tab.n, ms, o->tol, out);
    tt_tune_table_free(&tab);
    tt_tune_ctx_free(ctx);
    return st;
}
