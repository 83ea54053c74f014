/*
 * tune_calib_cv.c - cross-validation of the executor-shaped fit (tt_calib_cross_validate):
 * held-out sizes, held-out rank count, held-out algorithm.  Every fit here is the one
 * topo-tune --calibrate makes (tune_exec_fit per (kind, protocol)) on a subset of the rows; the
 * errors are those of the rows left out.  bin/ only prints the lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

typedef int (*row_pred)(const tt_measurement *m, int arg);

/* the held-out-sizes split: the distinct sizes of one kind in ascending order, alternately in
 * one half and the other (every other size, whatever factor the sweeps used: log2 parity put
 * every size of an x4 sweep from 8 B in one half and left the other empty) */
static int size_half(const tt_measure_set *ms, int kind, uint64_t bytes)
{
    int below = 0;
    for (int i = 0; i < ms->n; i++) {
        const tt_measurement *m = &ms->m[i];
        if (m->exec_kind != kind || m->bytes >= bytes) continue;
        int dup = 0;
        for (int j = 0; j < i && !dup; j++)
            dup = ms->m[j].exec_kind == kind && ms->m[j].bytes == m->bytes;
        below += !dup;
    }
    return below % 2;
}

static int resolved_algo(const tt_model_params *p, const tt_measurement *m)
{
    double f[TT_EXEC_NPARAM];
    int pr, al;
    char why[120];
    return tune_exec_terms(p, m, f, &pr, &al, why, sizeof why) ? -1 : al;
}

/* fit every (kind, protocol) on rows[0..nr) starting from *start */
static tt_status fit_subset(const tt_model_params *start, const tt_measurement **rows, int nr, tt_model_params *out)
{
    *out = *start;
    for (int k = 1; k < TT_RANKS_KIND_COUNT; k++)
        for (int q = 0; q < TT_PROTO_COUNT; q++) {
            tt_exec_params e;
            unsigned mask;
            int used = tune_exec_fit(start, rows, nr, k, q, &e, &mask);
            if (used < 0) return tt_error_set(TT_ERR_NOMEM, "cross-validation: out of memory");
            if (used > 0) out->exec[k][q] = e;
        }
    return TT_OK;
}

static int add_line(tt_calib_cv *cv, const tt_cv_line *l)
{
    tt_cv_line *p = realloc(cv->l, sizeof(*p) * (size_t)(cv->n + 1));
    if (!p) return -1;
    cv->l = p;
    cv->l[cv->n++] = *l;
    return 0;
}

/* errors of `held` under p and under start; extrapolated counted against the fit rows' range */
/* the held-out row with the worst error, for the report's "worst held-out row" line */
/* a row's own spread over its repeats (slowest / fastest - 1), < 0 when it was measured once */
static double row_spread(const tt_measurement *m)
{
    return m->repeats > 1 && m->slowest_us >= m->time_us ? m->slowest_us / m->time_us - 1 : -1;
}

static void name_worst(tt_cv_line *l, const tt_measurement *w, double pred_us)
{
    char cn[48];
    int o = snprintf(l->worst_row, sizeof l->worst_row, "%s %llu B, %d ranks: measured %.2f us, predicted %.2f us",
                     tt_measure_cand_name(w, cn, sizeof cn), (unsigned long long)w->bytes, w->nranks, w->time_us,
                     pred_us);
    double sp = row_spread(w);
    if (sp >= 0 && o > 0 && (size_t)o < sizeof l->worst_row)
        snprintf(l->worst_row + o, sizeof l->worst_row - (size_t)o, "; its %d repeats spread %.1f %%", w->repeats,
                 sp * 100);
}

/* the fitted rows' sizes and rank counts: a held-out row outside them is an extrapolation */
typedef struct {
    uint64_t bmin, bmax;
    int rmin, rmax;
} fit_range;

static fit_range range_of(const tt_measurement **fit, int nf)
{
    fit_range g = {UINT64_MAX, 0, 1 << 30, 0};
    for (int i = 0; i < nf; i++) {
        if (fit[i]->bytes < g.bmin) g.bmin = fit[i]->bytes;
        if (fit[i]->bytes > g.bmax) g.bmax = fit[i]->bytes;
        if (fit[i]->nranks < g.rmin) g.rmin = fit[i]->nranks;
        if (fit[i]->nranks > g.rmax) g.rmax = fit[i]->nranks;
    }
    return g;
}

static int outside(const fit_range *g, const tt_measurement *m)
{
    return m->bytes < g->bmin || m->bytes > g->bmax || m->nranks < g->rmin || m->nranks > g->rmax;
}

/* the held-out rows' errors of one line, gathered over one or more folds (held-out sizes pools two) */
typedef struct {
    double *e, *e0, *sp; /* error under the fit, under the start constants; own spread of rows measured twice */
    int n, nsp;
} cv_acc;

static int acc_init(cv_acc *c, int cap)
{
    memset(c, 0, sizeof *c);
    size_t k = (size_t)(cap > 0 ? cap : 1);
    c->e = malloc(sizeof(double) * 3 * k);
    if (!c->e) return -1;
    c->e0 = c->e + k;
    c->sp = c->e0 + k;
    return 0;
}

/* predict the held-out rows of one fold under p (and start) into l and c */
static void score(const tt_model_params *p, const tt_model_params *start, const tt_measurement **held, int nh,
                  const tt_measurement **fit, int nf, tt_cv_line *l, cv_acc *c)
{
    fit_range g = range_of(fit, nf);
    for (int i = 0; i < nh; i++) {
        double a, b;
        if (tt_exec_predict(p, held[i], &a) != TT_OK || tt_exec_predict(start, held[i], &b) != TT_OK) continue;
        double t = held[i]->time_us, e = fabs(a - t) / t;
        c->e[c->n] = e;
        c->e0[c->n++] = fabs(b - t) / t;
        if (e > l->worst) {
            l->worst = e;
            name_worst(l, held[i], a);
        }
        if (fabs(b - t) / t > l->worst_start) l->worst_start = fabs(b - t) / t;
        if (outside(&g, held[i])) l->extrapolated++;
        else if (e > l->worst_inside) l->worst_inside = e;
        double sp = row_spread(held[i]);
        if (sp >= 0) {
            c->sp[c->nsp++] = sp;
            if (e <= sp) l->within_spread++;
        }
    }
}

/* the line's medians from everything scored into c; frees c */
static void acc_finish(tt_cv_line *l, cv_acc *c)
{
    l->nrows = c->n;
    l->median = c->n ? tt_median(c->e, (size_t)c->n) : 0;
    l->med_start = c->n ? tt_median(c->e0, (size_t)c->n) : 0;
    l->nspread = c->nsp;
    l->spread_median = c->nsp ? tt_median(c->sp, (size_t)c->nsp) : -1;
    free(c->e);
    memset(c, 0, sizeof *c);
}

/* one fold makes the whole line (held-out rank count, held-out algorithm); -1 when out of memory */
static int score_line(const tt_model_params *p, const tt_model_params *start, const tt_measurement **held, int nh,
                      const tt_measurement **fit, int nf, tt_cv_line *l)
{
    cv_acc c;
    if (acc_init(&c, nh)) return -1;
    score(p, start, held, nh, fit, nf, l, &c);
    acc_finish(l, &c);
    return 0;
}

tt_status tt_calib_cross_validate(const tt_measure_set *ms, const tt_model_params *start, tt_calib_cv *out)
{
    memset(out, 0, sizeof *out);
    tt_model_params st0;
    if (start) st0 = *start;
    else tt_model_params_default(&st0);
    const tt_measurement **fit = malloc(sizeof(*fit) * (size_t)(ms->n + 1));
    const tt_measurement **held = malloc(sizeof(*held) * (size_t)(ms->n + 1));
    tt_status st = TT_OK;
    if (!fit || !held) {
        st = tt_error_set(TT_ERR_NOMEM, "cross-validation: out of memory");
        goto out;
    }
    for (int kind = 1; kind < TT_RANKS_KIND_COUNT; kind++) {
        int ranks[64], nrk = 0;
        for (int i = 0; i < ms->n; i++) {
            const tt_measurement *m = &ms->m[i];
            if (m->exec_kind != kind || !(m->time_us > 0) || resolved_algo(&st0, m) < 0) continue;
            int seen = 0;
            for (int r = 0; r < nrk; r++) seen |= ranks[r] == m->nranks;
            if (!seen && nrk < 64) ranks[nrk++] = m->nranks;
        }
        if (nrk == 0) continue;
        for (int a = 0; a < nrk; a++) /* ascending */
            for (int b = a + 1; b < nrk; b++)
                if (ranks[b] < ranks[a]) { int t = ranks[a]; ranks[a] = ranks[b]; ranks[b] = t; }
        /* held-out sizes: fit on one parity of log2(size) (all rank counts), predict the other */
        for (int r = 0; r < nrk; r++) {
            tt_cv_line L;
            memset(&L, 0, sizeof L);
            snprintf(L.test, sizeof L.test, "sizes");
            L.kind = kind;
            L.nranks = ranks[r];
            snprintf(L.fit_on, sizeof L.fit_on, "every other size, then the rest");
            snprintf(L.predicted, sizeof L.predicted, "the other half, %d ranks", ranks[r]);
            /* two folds pooled into one line */
            cv_acc acc;
            if (acc_init(&acc, ms->n)) { st = tt_error_set(TT_ERR_NOMEM, "cross-validation: out of memory"); goto out; }
            for (int par = 0; par < 2; par++) {
                int nf = 0, nh = 0;
                for (int i = 0; i < ms->n; i++) {
                    const tt_measurement *m = &ms->m[i];
                    if (m->exec_kind != kind || !(m->time_us > 0) || resolved_algo(&st0, m) < 0) continue;
                    if (size_half(ms, kind, m->bytes) == par) fit[nf++] = m;
                    else if (m->nranks == ranks[r]) held[nh++] = m;
                }
                tt_model_params p;
                if ((st = fit_subset(&st0, fit, nf, &p)) != TT_OK) {
                    acc_finish(&L, &acc);
                    goto out;
                }
                score(&p, &st0, held, nh, fit, nf, &L, &acc);
            }
            acc_finish(&L, &acc);
            if (add_line(out, &L)) { st = tt_error_set(TT_ERR_NOMEM, "cross-validation: out of memory"); goto out; }
        }
        /* held-out rank count: fit on the smaller counts, predict the largest */
        if (nrk >= 2) {
            tt_cv_line L;
            memset(&L, 0, sizeof L);
            snprintf(L.test, sizeof L.test, "ranks");
            L.kind = kind;
            L.nranks = ranks[nrk - 1];
            int o = snprintf(L.fit_on, sizeof L.fit_on, "ranks ");
            for (int r = 0; r < nrk - 1 && o < (int)sizeof L.fit_on; r++)
                o += snprintf(L.fit_on + o, sizeof L.fit_on - (size_t)o, "%s%d", r ? "+" : "", ranks[r]);
            snprintf(L.predicted, sizeof L.predicted, "%d ranks, every size", ranks[nrk - 1]);
            int nf = 0, nh = 0;
            for (int i = 0; i < ms->n; i++) {
                const tt_measurement *m = &ms->m[i];
                if (m->exec_kind != kind || !(m->time_us > 0) || resolved_algo(&st0, m) < 0) continue;
                if (m->nranks < ranks[nrk - 1]) fit[nf++] = m;
                else held[nh++] = m;
            }
            tt_model_params p;
            if ((st = fit_subset(&st0, fit, nf, &p)) != TT_OK) goto out;
            if (score_line(&p, &st0, held, nh, fit, nf, &L) || add_line(out, &L)) { st = tt_error_set(TT_ERR_NOMEM, "cross-validation: out of memory"); goto out; }
        }
        /* held-out algorithm: fit on ring rows, predict tree rows */
        {
            int nf = 0, nh = 0;
            for (int i = 0; i < ms->n; i++) {
                const tt_measurement *m = &ms->m[i];
                if (m->exec_kind != kind || !(m->time_us > 0)) continue;
                int al = resolved_algo(&st0, m);
                if (al == TT_ALGO_RING) fit[nf++] = m;
                else if (al == TT_ALGO_TREE) held[nh++] = m;
            }
            if (nf > 0 && nh > 0) {
                tt_cv_line L;
                memset(&L, 0, sizeof L);
                snprintf(L.test, sizeof L.test, "algorithm");
                L.kind = kind;
                snprintf(L.fit_on, sizeof L.fit_on, "ring rows");
                snprintf(L.predicted, sizeof L.predicted, "tree rows (hop cost = ring step cost)");
                tt_model_params p;
                if ((st = fit_subset(&st0, fit, nf, &p)) != TT_OK) goto out;
                for (int q = 0; q < TT_PROTO_COUNT; q++) p.exec[kind][q].hop_us = p.exec[kind][q].step_us;
                if (score_line(&p, &st0, held, nh, fit, nf, &L) || add_line(out, &L)) { st = tt_error_set(TT_ERR_NOMEM, "cross-validation: out of memory"); goto out; }
            }
        }
    }
out:
    free(fit);
    free(held);
    if (st != TT_OK) tt_calib_cv_free(out);
    return st;
}

void tt_calib_cv_free(tt_calib_cv *cv)
{
    if (!cv) return;
    free(cv->l);
    memset(cv, 0, sizeof *cv);
}
