/*
 * tune_calibrate.c - fit the topotune model's constants to measurements.
 *
 * Each measured row is predicted with the model itself (tt_tune_eval on a context built for
 * the cluster the row was measured on), so every fitted number lands exactly where the model
 * uses it.  Parameters live in log space, clamped to their bounds:
 *   link alpha_us           [0.001, 1e4] us        (no negative latency)
 *   link efficiency         [0.001, 1]             (never above the topology's bandwidth)
 *   link beta_GBps          [0.001, physical]      (when the start value sets beta)
 *   protocol base_us        [0.001, 1e4] us
 *   protocol per_channel    [0.001, 1e5] GB/s      (rows of one protocol with >= 2 channel counts)
 *   LL/LL128 efficiency     [0.001, 1]             (rows of that protocol and of Simple, the reference)
 *   nvls efficiency/alpha   [0.001, 1] / [0.001, 1e4]
 * Objective: sum over rows of the Cauchy loss s^2 log(1 + (r/s)^2) of r = log(pred/meas),
 * with s annealed 1.0 -> 0.3 -> 0.1 (a row 3x off weighs little in the end: outliers do not
 * drag the fit), plus a weak pull 1e-5 * rows * (x - x0)^2 towards the start so directions
 * the data cannot tell apart (e.g. base_us vs alpha with a single rank count) stay put.
 * Minimiser: Nelder-Mead with restarts (derivative-free; the model has kinks where the
 * channel count or a cap switches).  MODEL ASSUMPTION: protocol step_us, Simple's efficiency
 * (1, the reference) and chunk sizes are not fitted (collinear with the link constants on the
 * data a sweep gives); docs/calibration.md.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

typedef struct {
    int nodes, gpn;
    tt_tune_ctx *ctx;
} cl_ctx;

typedef struct {
    const tt_measure_set *ms;
    cl_ctx *cls;
    int ncls;
    int *row_cls;          /* per row: cluster index or -1 */
    const char *isexec;    /* per row: 1 = fitted by the executor-shaped model instead */
    int np;
    size_t off[TT_CALIB_MAX_PARAMS]; /* offset of the double in tt_model_params */
    double lo[TT_CALIB_MAX_PARAMS], hi[TT_CALIB_MAX_PARAMS], x0[TT_CALIB_MAX_PARAMS];
    tt_model_params p;     /* working copy */
    double scale;          /* Cauchy scale */
    double lambda;
    long evals;
} fit_state;

/* prediction of one row on a prepared context whose params are already set */
static tt_status predict_ctx(tt_tune_ctx *ctx, const tt_measurement *m, double *us)
{
    int saved = ctx->params.max_channels;
    if (m->channels > 0) ctx->params.max_channels = m->channels;
    ctx->binary_tree = m->topotune_tree;
    double best = -1;
    if (!m->topotune_tree && !(m->algo >= 0 && m->proto >= 0)) {
        /* a row of NCCL that chose (part of) its candidate: what NCCL runs, timed by the model */
        tt_algo a;
        tt_proto p;
        tt_tune_estimate e;
        tt_status st = tune_row_candidate(ctx, m, &a, &p);
        if (st == TT_OK) st = tt_tune_eval(ctx, m->coll, a, p, m->bytes, &e);
        ctx->params.max_channels = saved;
        ctx->binary_tree = 0;
        if (st != TT_OK) return st;
        if (!e.enabled)
            return tt_error_set(TT_ERR_UNSUPPORTED, "%s: the model cannot evaluate NCCL's choice %s/%s: %s", m->where,
                                tt_algo_name(a), tt_proto_name(p), e.reason);
        *us = e.time_us + tune_row_launch_us(&ctx->params, m);
        return TT_OK;
    }
    int a0 = m->algo >= 0 ? m->algo : 0, a1 = m->algo >= 0 ? m->algo + 1 : TT_ALGO_NCCL_COUNT;
    int p0 = m->proto >= 0 ? m->proto : 0, p1 = m->proto >= 0 ? m->proto + 1 : TT_PROTO_COUNT;
    tt_status st = TT_OK;
    char why[120] = "";
    for (int a = a0; a < a1 && st == TT_OK; a++)
        for (int p = p0; p < p1; p++) {
            tt_tune_estimate e;
            if ((st = tt_tune_eval(ctx, m->coll, (tt_algo)a, (tt_proto)p, m->bytes, &e)) != TT_OK) break;
            if (!e.enabled) {
                snprintf(why, sizeof why, "%s", e.reason);
                continue;
            }
            if (best < 0 || e.time_us < best) best = e.time_us;
        }
    ctx->params.max_channels = saved;
    ctx->binary_tree = 0;
    if (st != TT_OK) return st;
    if (best <= 0)
        return tt_error_set(TT_ERR_UNSUPPORTED, "%s: the model cannot evaluate %s %s/%s: %s", m->where,
                            tt_coll_name(m->coll), m->algo >= 0 ? tt_algo_name((tt_algo)m->algo) : "any",
                            m->proto >= 0 ? tt_proto_name((tt_proto)m->proto) : "any", why);
    *us = best;
    return TT_OK;
}

tt_status tt_calib_predict(const tt_topo *t, const tt_cluster *base, const tt_model_params *p, const tt_measurement *m,
                           double *pred_us)
{
    /* rows our executor ran follow its schedules (tune_model_exec.c), whatever the topology */
    if (m->exec_kind > TT_RANKS_NONE) return tt_exec_predict(p, m, pred_us);
    tt_cluster c;
    tt_status st = tune_row_cluster(base, m, &c);
    if (st != TT_OK) return st;
    tt_tune_ctx *ctx = NULL;
    if ((st = tt_tune_ctx_new(t, &c, TT_MODEL_TOPOTUNE, p, &ctx)) != TT_OK) return st;
    st = predict_ctx(ctx, m, pred_us);
    tt_tune_ctx_free(ctx);
    return st;
}

static double *pp(tt_model_params *p, size_t off) { return (double *)((char *)p + off); }

static void apply(fit_state *f, const double *x)
{
    for (int j = 0; j < f->np; j++) {
        double v = exp(x[j]);
        if (v < f->lo[j]) v = f->lo[j];
        if (v > f->hi[j]) v = f->hi[j];
        *pp(&f->p, f->off[j]) = v;
    }
    for (int k = 0; k < f->ncls; k++) {
        int mc = f->cls[k].ctx->params.max_channels;
        f->cls[k].ctx->params = f->p;
        f->cls[k].ctx->params.max_channels = mc;
    }
}

static double objective(fit_state *f, const double *x)
{
    f->evals++;
    apply(f, x);
    double s2 = f->scale * f->scale, sum = 0;
    for (int i = 0; i < f->ms->n; i++) {
        if (f->row_cls[i] < 0 || f->isexec[i]) continue;
        const tt_measurement *m = &f->ms->m[i];
        double pr;
        if (predict_ctx(f->cls[f->row_cls[i]].ctx, m, &pr) != TT_OK) return 1e300;
        double r = log(pr / m->time_us);
        sum += s2 * log1p(r * r / s2);
    }
    for (int j = 0; j < f->np; j++) {
        double xl = log(f->lo[j]), xh = log(f->hi[j]);
        double xc = x[j] < xl ? xl : x[j] > xh ? xh : x[j];
        sum += f->lambda * (xc - f->x0[j]) * (xc - f->x0[j]);
        sum += 1e-3 * (x[j] - xc) * (x[j] - xc); /* keep the simplex near the box */
    }
    return sum;
}

/* Nelder-Mead from x (in/out), initial step `step` per coordinate */
static double nelder_mead(fit_state *f, double *x, double step, int maxit)
{
    int d = f->np;
    double S[TT_CALIB_MAX_PARAMS + 1][TT_CALIB_MAX_PARAMS], F[TT_CALIB_MAX_PARAMS + 1];
    for (int i = 0; i <= d; i++) {
        memcpy(S[i], x, sizeof(double) * d);
        if (i) S[i][i - 1] += step;
        F[i] = objective(f, S[i]);
    }
    double c[TT_CALIB_MAX_PARAMS], xr[TT_CALIB_MAX_PARAMS], xe[TT_CALIB_MAX_PARAMS];
    for (int it = 0; it < maxit; it++) {
        /* order: best 0 .. worst d */
        for (int i = 1; i <= d; i++)
            for (int k = i; k > 0 && F[k] < F[k - 1]; k--) {
                double tf = F[k]; F[k] = F[k - 1]; F[k - 1] = tf;
                for (int j = 0; j < d; j++) { double t = S[k][j]; S[k][j] = S[k - 1][j]; S[k - 1][j] = t; }
            }
        if (fabs(F[d] - F[0]) <= 1e-12 * (fabs(F[0]) + 1e-12)) {
            double spread = 0;
            for (int i = 1; i <= d; i++)
                for (int j = 0; j < d; j++) spread = fmax(spread, fabs(S[i][j] - S[0][j]));
            if (spread < 1e-7) break;
        }
        for (int j = 0; j < d; j++) {
            c[j] = 0;
            for (int i = 0; i < d; i++) c[j] += S[i][j] / d;
        }
        for (int j = 0; j < d; j++) xr[j] = c[j] + (c[j] - S[d][j]);
        double fr = objective(f, xr);
        if (fr < F[0]) {
            for (int j = 0; j < d; j++) xe[j] = c[j] + 2 * (c[j] - S[d][j]);
            double fe = objective(f, xe);
            if (fe < fr) { memcpy(S[d], xe, sizeof(double) * d); F[d] = fe; }
            else { memcpy(S[d], xr, sizeof(double) * d); F[d] = fr; }
        } else if (fr < F[d - 1]) {
            memcpy(S[d], xr, sizeof(double) * d);
            F[d] = fr;
        } else {
            int outside = fr < F[d];
            for (int j = 0; j < d; j++) xe[j] = outside ? c[j] + 0.5 * (xr[j] - c[j]) : c[j] + 0.5 * (S[d][j] - c[j]);
            double fc = objective(f, xe);
            if (fc < (outside ? fr : F[d])) {
                memcpy(S[d], xe, sizeof(double) * d);
                F[d] = fc;
            } else {
                for (int i = 1; i <= d; i++) {
                    for (int j = 0; j < d; j++) S[i][j] = S[0][j] + 0.5 * (S[i][j] - S[0][j]);
                    F[i] = objective(f, S[i]);
                }
            }
        }
    }
    int b = 0;
    for (int i = 1; i <= d; i++)
        if (F[i] < F[b]) b = i;
    memcpy(x, S[b], sizeof(double) * d);
    return F[b];
}

static int add_param(fit_state *f, tt_calib_report *rep, size_t off, double lo, double hi, const char *name)
{
    for (int j = 0; j < f->np; j++)
        if (f->off[j] == off) {
            if (hi < f->hi[j]) f->hi[j] = hi; /* tightest physical bound of all clusters */
            return 0;
        }
    if (f->np >= TT_CALIB_MAX_PARAMS) return -1;
    int j = f->np++;
    f->off[j] = off;
    f->lo[j] = lo;
    f->hi[j] = hi;
    snprintf(rep->name[j], sizeof rep->name[j], "%s", name);
    return 0;
}

static double median(double *v, int n) { return n > 0 ? tt_median(v, (size_t)n) : 0; }

static void err_stats(const tt_calib_report *rep, const tt_measure_set *ms, const double *pred, double *med, double *worst)
{
    double *e = malloc(sizeof(double) * (size_t)(rep->nrows ? rep->nrows : 1));
    int n = 0;
    *worst = 0;
    for (int i = 0; i < rep->nrows; i++) {
        if (rep->row[i] < 0 || !e) continue;
        double r = fabs(pred[i] - ms->m[i].time_us) / ms->m[i].time_us;
        e[n++] = r;
        if (r > *worst) *worst = r;
    }
    *med = e ? median(e, n) : 0;
    free(e);
}

void tt_calib_report_free(tt_calib_report *rep)
{
    if (!rep) return;
    free(rep->row);
    free(rep->pred_before);
    free(rep->pred_after);
    memset(rep, 0, sizeof(*rep));
}

/* ---- executor-shaped constants: one robust linear fit per (kind, protocol) ---- */

static const char *const exec_pname[TT_PROTO_COUNT] = {"LL", "LL128", "Simple"};
static double exec_get(const tt_exec_params *e, int j) { return tune_exec_param_get(e, j); }

/* length of the file part of "file:line" */
static size_t sweep_len(const char *where)
{
    const char *c = strrchr(where, ':');
    return c ? (size_t)(c - where) : strlen(where);
}

static int same_sweep(const tt_measurement *a, const tt_measurement *b)
{
    size_t la = sweep_len(a->where);
    return la == sweep_len(b->where) && !strncmp(a->where, b->where, la) && a->nranks == b->nranks;
}

static void fmt_size(uint64_t b, char *o, size_t ol)
{
    if (b >= (1ULL << 30) && !(b % (1ULL << 30))) snprintf(o, ol, "%llu GiB", (unsigned long long)(b >> 30));
    else if (b >= (1ULL << 20) && !(b % (1ULL << 20))) snprintf(o, ol, "%llu MiB", (unsigned long long)(b >> 20));
    else if (b >= 1024 && !(b % 1024)) snprintf(o, ol, "%llu KiB", (unsigned long long)(b >> 10));
    else snprintf(o, ol, "%llu B", (unsigned long long)b);
}

static tt_status exec_fit_all(tt_model_params *p, const tt_measure_set *ms, const char *isexec, tt_calib_report *rep)
{
    const tt_measurement **rows = malloc(sizeof(*rows) * (size_t)ms->n);
    const tt_measurement **sub = malloc(sizeof(*sub) * (size_t)ms->n);
    if (!rows || !sub) {
        free(rows);
        free(sub);
        return tt_error_set(TT_ERR_NOMEM, "calibration: out of memory");
    }
    const tt_model_params start = *p;
    for (int kind = 1; kind < TT_RANKS_KIND_COUNT; kind++)
        for (int q = 0; q < TT_PROTO_COUNT; q++) {
            int nr = 0;
            for (int i = 0; i < ms->n; i++) {
                double fv[TT_EXEC_NPARAM];
                int pr, al;
                char why[120];
                if (!isexec[i] || ms->m[i].exec_kind != kind) continue;
                if (tune_exec_terms(&start, &ms->m[i], fv, &pr, &al, why, sizeof why) || pr != q) continue;
                rows[nr++] = &ms->m[i];
            }
            if (nr == 0) continue;
            tt_exec_params e;
            unsigned mask;
            if (tune_exec_fit(&start, rows, nr, kind, q, &e, &mask) < 0) {
                free(rows);
                free(sub);
                return tt_error_set(TT_ERR_NOMEM, "calibration: out of memory");
            }
            p->exec[kind][q] = e;
            /* what the group was fitted on */
            if (rep->ngroups < (int)(sizeof rep->group / sizeof rep->group[0])) {
                tt_calib_group *g = &rep->group[rep->ngroups++];
                memset(g, 0, sizeof *g);
                g->kind = kind;
                g->proto = q;
                g->nrows = nr;
                g->min_bytes = UINT64_MAX;
                for (int i = 0; i < nr; i++) {
                    const tt_measurement *m = rows[i];
                    if (m->bytes < g->min_bytes) g->min_bytes = m->bytes;
                    if (m->bytes > g->max_bytes) g->max_bytes = m->bytes;
                    if (!g->min_ranks || m->nranks < g->min_ranks) g->min_ranks = m->nranks;
                    if (m->nranks > g->max_ranks) g->max_ranks = m->nranks;
                    int first = 1;
                    for (int k = 0; k < i && first; k++)
                        if (same_sweep(rows[k], m)) first = 0;
                    g->nsweeps += first;
                }
            }
            /* spread: leave one sweep out */
            double lo[TT_EXEC_NCONST], hi[TT_EXEC_NCONST];
            for (int j = 0; j < TT_EXEC_NCONST; j++) lo[j] = hi[j] = exec_get(&e, j);
            for (int i = 0; i < nr; i++) {
                int first = 1;
                for (int k = 0; k < i && first; k++)
                    if (same_sweep(rows[k], rows[i])) first = 0;
                if (!first) continue;
                int ns = 0;
                for (int k = 0; k < nr; k++)
                    if (!same_sweep(rows[k], rows[i])) sub[ns++] = rows[k];
                if (ns < 2) continue;
                tt_exec_params e2;
                unsigned m2;
                if (tune_exec_fit(&start, sub, ns, kind, q, &e2, &m2) < 0) continue;
                for (int j = 0; j < TT_EXEC_NCONST; j++)
                    if ((m2 & mask) & (1u << j)) {
                        double v = exec_get(&e2, j);
                        if (v < lo[j]) lo[j] = v;
                        if (v > hi[j]) hi[j] = v;
                    }
            }
            /* rows that set each constant: its term >= 30% of the predicted time */
            for (int j = 0; j < TT_EXEC_NCONST && rep->nparams < TT_CALIB_MAX_PARAMS; j++) {
                /* a constant with no term in this kind's schedule (tune_exec_param_applies): not reported */
                if (!tune_exec_param_applies(j, kind)) continue;
                int idx = rep->nparams++;
                snprintf(rep->name[idx], sizeof rep->name[idx], "exec.%s.%s.%s", tt_exec_kind_name((tt_exec_kind)kind),
                         exec_pname[q], tune_exec_param_name(j));
                rep->before[idx] = exec_get(&start.exec[kind][q], j);
                rep->after[idx] = exec_get(&e, j);
                tune_exec_param_range(j, &rep->lo[idx], &rep->hi[idx]);
                rep->spread_lo[idx] = lo[j];
                rep->spread_hi[idx] = hi[j];
                if (!(mask & (1u << j))) {
                    snprintf(rep->setby[idx], sizeof rep->setby[idx], "not exercised: start value kept");
                    continue;
                }
                int cnt = 0, rmask = 0;
                uint64_t bmin = UINT64_MAX, bmax = 0;
                for (int i = 0; i < nr; i++) {
                    double fv[TT_EXEC_NPARAM];
                    int pr, al;
                    char why[120];
                    if (tune_exec_terms(p, rows[i], fv, &pr, &al, why, sizeof why)) continue;
                    double tot = tune_exec_value(&e, fv);
                    /* the cache size sets the terms it scales (shared and dram) */
                    double part = 0;
                    for (int c = 0; c < TT_EXEC_NPARAM; c++)
                        if (c == j || (j == EXEC_CACHE && (c == EXEC_SHARED || c == EXEC_DRAM))) part += fv[c] * tune_exec_coef(&e, c);
                    if (tot > 0 && part >= 0.3 * tot) {
                        cnt++;
                        if (rows[i]->bytes < bmin) bmin = rows[i]->bytes;
                        if (rows[i]->bytes > bmax) bmax = rows[i]->bytes;
                        if (rows[i]->nranks < 31) rmask |= 1 << rows[i]->nranks;
                    }
                }
                rep->nset[idx] = cnt;
                if (!cnt) {
                    snprintf(rep->setby[idx], sizeof rep->setby[idx], "no row where it is >= 30%% of the time");
                    continue;
                }
                char a[24], b[24], rk[40] = "";
                fmt_size(bmin, a, sizeof a);
                fmt_size(bmax, b, sizeof b);
                for (int r = 1, o = 0; r < 31; r++)
                    if (rmask & (1 << r)) o += snprintf(rk + o, sizeof rk - (size_t)o, "%s%d", o ? "," : "", r);
                snprintf(rep->setby[idx], sizeof rep->setby[idx], "%d rows, %s .. %s, ranks %s", cnt, a, b, rk);
            }
        }
    free(rows);
    free(sub);
    return TT_OK;
}

tt_status tt_calibrate(const tt_topo *t, const tt_cluster *base, const tt_measure_set *ms, const tt_model_params *start,
                       tt_model_params *fitted, tt_calib_report *rep)
{
    memset(rep, 0, sizeof(*rep));
    if (!ms || ms->n == 0) return tt_error_set(TT_ERR_INVALID, "calibration: no measurements");
    fit_state f;
    char *isexec = NULL;
    memset(&f, 0, sizeof f);
    f.ms = ms;
    if (start) f.p = *start;
    else tt_model_params_default(&f.p);
    tt_status st = TT_OK;
    rep->nrows = ms->n;
    rep->row = malloc(sizeof(int) * (size_t)ms->n);
    rep->pred_before = calloc((size_t)ms->n, sizeof(double));
    rep->pred_after = calloc((size_t)ms->n, sizeof(double));
    f.row_cls = rep->row;
    f.cls = calloc((size_t)ms->n, sizeof(cl_ctx));
    if (!rep->row || !rep->pred_before || !rep->pred_after || !f.cls) {
        st = tt_error_set(TT_ERR_NOMEM, "calibration: out of memory");
        goto out;
    }
    isexec = calloc((size_t)ms->n, 1);
    if (!isexec) {
        st = tt_error_set(TT_ERR_NOMEM, "calibration: out of memory");
        goto out;
    }
    f.isexec = isexec;
    int nexec = 0;
    int any_unknown_proto = 0, proto_seen[TT_PROTO_COUNT] = {0}, nvls_rows = 0;
    int chan_seen[TT_PROTO_COUNT][2] = {{0}}; /* two distinct known channel counts per protocol */
    int own_rows = 0;                         /* rows of topotune's own algorithms (link bandwidths, per-channel) */
    int nccl_rows = 0;                        /* rows of NCCL's algorithms (tune_model_cluster.c) */
    for (int i = 0; i < ms->n; i++) {
        const tt_measurement *m = &ms->m[i];
        rep->row[i] = -1;
        if (!(m->time_us > 0)) {
            TT_WARN("tune", "calibration: row skipped: %s: no positive time", m->where);
            rep->nskipped++;
            continue;
        }
        if (m->exec_kind > TT_RANKS_NONE) {
            double pr;
            if (tt_exec_predict(&f.p, m, &pr) != TT_OK) {
                TT_WARN("tune", "calibration: row skipped: %s", tt_error_message());
                rep->nskipped++;
                continue;
            }
            isexec[i] = 1;
            rep->row[i] = 0;
            rep->pred_before[i] = pr;
            nexec++;
            continue;
        }
        tt_cluster c;
        if (tune_row_cluster(base, m, &c) != TT_OK) {
            TT_WARN("tune", "calibration: row skipped: %s", tt_error_message());
            rep->nskipped++;
            continue;
        }
        int k;
        for (k = 0; k < f.ncls; k++)
            if (f.cls[k].nodes == c.nodes && f.cls[k].gpn == c.gpus_per_node) break;
        if (k == f.ncls) {
            if ((st = tt_tune_ctx_new(t, &c, TT_MODEL_TOPOTUNE, &f.p, &f.cls[k].ctx)) != TT_OK) goto out;
            f.cls[k].nodes = c.nodes;
            f.cls[k].gpn = c.gpus_per_node;
            f.ncls++;
        }
        double pr;
        if (predict_ctx(f.cls[k].ctx, m, &pr) != TT_OK) {
            TT_WARN("tune", "calibration: row skipped: %s", tt_error_message());
            rep->nskipped++;
            continue;
        }
        rep->row[i] = k;
        rep->pred_before[i] = pr;
        rep->npoints++;
        if (m->proto < 0) any_unknown_proto = 1;
        else proto_seen[m->proto] = 1;
        if (m->proto >= 0 && m->channels > 0) {
            int *cs = chan_seen[m->proto];
            if (!cs[0]) cs[0] = m->channels;
            else if (cs[0] != m->channels) cs[1] = m->channels;
        }
        if (m->algo == TT_ALGO_NVLS || m->algo == TT_ALGO_NVLS_TREE ||
            (m->algo < 0 && f.cls[k].ctx->ch.nvls_support))
            nvls_rows = 1;
        /* parameters this cluster exercises: NCCL's algorithms (tune_model_cluster.c) use the in-node hop
         * latency, the fabric's hops and efficiency; topotune's own algorithms (rd, rhd, hier, the
         * executor's binary tree) the links' bandwidths and the NET link */
        const tt_tune_channels *ch = &f.cls[k].ctx->ch;
        int own = m->topotune_tree || m->algo >= TT_ALGO_NCCL_COUNT;
        if (own) own_rows = 1;
        else nccl_rows = 1;
        if (c.gpus_per_node > 1) {
            tt_link_class cin = tune_link_class_of(ch->ring.type_intra);
            char nm[40];
            snprintf(nm, sizeof nm, "links.%s.alpha_us", tt_link_class_name(cin));
            add_param(&f, rep, offsetof(tt_model_params, link[0].alpha_us) + cin * sizeof(tt_link_params), 1e-3, 1e4, nm);
            if (!own) {
                /* no bandwidth of NCCL's algorithms rests on the link constants */
            } else if (f.p.link[cin].beta_GBps > 0) {
                double phys = ch->ring.nchannels * ch->ring.bw_intra;
                snprintf(nm, sizeof nm, "links.%s.beta_GBps", tt_link_class_name(cin));
                add_param(&f, rep, offsetof(tt_model_params, link[0].beta_GBps) + cin * sizeof(tt_link_params), 1e-3,
                          phys > 1e-3 ? phys : 1e5, nm);
            } else {
                snprintf(nm, sizeof nm, "links.%s.efficiency", tt_link_class_name(cin));
                add_param(&f, rep, offsetof(tt_model_params, link[0].efficiency) + cin * sizeof(tt_link_params), 1e-3, 1,
                          nm);
            }
        }
        if (c.nodes > 1 && !own) {
            char nm[48];
            size_t fo = offsetof(tt_model_params, fabric[0]) + (size_t)c.fabric * sizeof(tt_fabric_params);
            snprintf(nm, sizeof nm, "fabrics.%s.efficiency", tt_fabric_name(c.fabric));
            add_param(&f, rep, fo + offsetof(tt_fabric_params, efficiency), 1e-3, 1, nm);
            for (int q = 0; q < TT_PROTO_COUNT; q++)
                if (m->proto < 0 || m->proto == q) {
                    static const char *const hn[TT_PROTO_COUNT] = {"hop_LL_us", "hop_LL128_us", "hop_Simple_us"};
                    snprintf(nm, sizeof nm, "fabrics.%s.%s", tt_fabric_name(c.fabric), hn[q]);
                    add_param(&f, rep, fo + offsetof(tt_fabric_params, hop_us) + (size_t)q * sizeof(double), 1e-3, 1e4, nm);
                }
        }
        if (c.nodes > 1 && own) {
            add_param(&f, rep, offsetof(tt_model_params, link[TT_LCLASS_NET].alpha_us), 1e-3, 1e4, "links.NET.alpha_us");
            if (f.p.link[TT_LCLASS_NET].beta_GBps > 0) {
                double phys = c.nics_per_node > 0 ? ch->node_net_bw / c.nics_per_node : 1e5;
                add_param(&f, rep, offsetof(tt_model_params, link[TT_LCLASS_NET].beta_GBps), 1e-3,
                          phys > 1e-3 ? phys : 1e5, "links.NET.beta_GBps");
            } else {
                add_param(&f, rep, offsetof(tt_model_params, link[TT_LCLASS_NET].efficiency), 1e-3, 1,
                          "links.NET.efficiency");
            }
        }
    }
    if (rep->npoints == 0 && nexec == 0) {
        st = tt_error_set(TT_ERR_INVALID, "calibration: none of the %d rows can be evaluated (first: %s)", ms->n,
                          ms->m[0].where);
        goto out;
    }
    for (int p = 0; p < TT_PROTO_COUNT; p++)
        if (proto_seen[p] || any_unknown_proto) {
            char nm[40];
            const char *pn2 = p == TT_PROTO_LL ? "LL" : p == TT_PROTO_LL128 ? "LL128" : "Simple";
            /* the launch of the algorithms the rows ran: NCCL's (tune_model_cluster.c) or topotune's own */
            if (nccl_rows) {
                snprintf(nm, sizeof nm, "nccl.%s.base_us", pn2);
                add_param(&f, rep, offsetof(tt_model_params, nccl[0].base_us) + (size_t)p * sizeof(tt_nccl_proto_params),
                          1e-3, 1e4, nm);
            }
            if (own_rows) {
                snprintf(nm, sizeof nm, "protocols.%s.base_us", pn2);
                add_param(&f, rep, offsetof(tt_model_params, proto[0].base_us) + (size_t)p * sizeof(tt_proto_params), 1e-3,
                          1e4, nm);
            }
        }
    static const char *const pname[TT_PROTO_COUNT] = {"LL", "LL128", "Simple"};
    for (int p = 0; p < TT_PROTO_COUNT; p++) {
        char nm[40];
        /* per-channel limit: identifiable only when the rows ran different channel counts */
        if (chan_seen[p][1] && own_rows) {
            snprintf(nm, sizeof nm, "protocols.%s.per_channel_GBps", pname[p]);
            add_param(&f, rep, offsetof(tt_model_params, proto[0].per_channel_GBps) + (size_t)p * sizeof(tt_proto_params),
                      1e-3, 1e5, nm);
        }
        /* payload efficiency of LL/LL128 relative to Simple (Simple = 1 is the reference that
         * makes it separable from the link efficiency) */
        if (p != TT_PROTO_SIMPLE && proto_seen[p] && proto_seen[TT_PROTO_SIMPLE]) {
            snprintf(nm, sizeof nm, "protocols.%s.efficiency", pname[p]);
            add_param(&f, rep, offsetof(tt_model_params, proto[0].efficiency) + (size_t)p * sizeof(tt_proto_params), 1e-3,
                      1, nm);
        }
    }
    if (nvls_rows) {
        add_param(&f, rep, offsetof(tt_model_params, nvls_efficiency), 1e-3, 1, "nvls.efficiency");
        add_param(&f, rep, offsetof(tt_model_params, nvls_alpha_us), 1e-3, 1e4, "nvls.alpha_us");
    }
    rep->nparams = f.np;
    double x[TT_CALIB_MAX_PARAMS];
    for (int j = 0; j < f.np; j++) {
        double v = *pp(&f.p, f.off[j]);
        if (v < f.lo[j]) v = f.lo[j];
        if (v > f.hi[j]) v = f.hi[j];
        rep->before[j] = *pp(&f.p, f.off[j]);
        rep->lo[j] = f.lo[j];
        rep->hi[j] = f.hi[j];
        x[j] = f.x0[j] = log(v);
    }
    f.lambda = 1e-5 * rep->npoints;
    static const double scales[] = {1.0, 0.3, 0.1};
    for (int s = 0; s < 3 && rep->npoints > 0; s++) {
        f.scale = scales[s];
        double prev = 1e300;
        for (int r = 0; r < 6; r++) {
            double v = nelder_mead(&f, x, r == 0 ? 0.7 : 0.1, 400 * (f.np + 1));
            if (prev - v < 1e-10 * fabs(v) + 1e-14) break;
            prev = v;
        }
    }
    apply(&f, x);
    for (int j = 0; j < f.np; j++) rep->after[j] = *pp(&f.p, f.off[j]);
    if (nexec > 0 && (st = exec_fit_all(&f.p, ms, isexec, rep)) != TT_OK) goto out;
    for (int i = 0; i < ms->n; i++) {
        if (rep->row[i] < 0) continue;
        if (isexec[i]) {
            if ((st = tt_exec_predict(&f.p, &ms->m[i], &rep->pred_after[i])) != TT_OK) goto out;
            continue;
        }
        if ((st = predict_ctx(f.cls[rep->row[i]].ctx, &ms->m[i], &rep->pred_after[i])) != TT_OK) goto out;
    }
    for (int j = 0; j < f.np; j++) rep->spread_lo[j] = rep->spread_hi[j] = rep->after[j];
    rep->npoints += nexec;
    err_stats(rep, ms, rep->pred_before, &rep->med_before, &rep->worst_before);
    err_stats(rep, ms, rep->pred_after, &rep->med_after, &rep->worst_after);
    TT_INFO("tune", "calibration: %d rows, %d parameters, %ld model evaluations", rep->npoints, f.np, f.evals);
    *fitted = f.p;
out:
    for (int k = 0; k < f.ncls; k++) tt_tune_ctx_free(f.cls[k].ctx);
    free(f.cls);
    free(isexec);
    if (st != TT_OK) tt_calib_report_free(rep);
    return st;
}

/* ---- robust straight line (Theil-Sen) ---- */
tt_status tt_fit_alpha_beta(const double *bytes, const double *us, int n, double *a_us, double *b_GBps)
{
    if (n < 2) return tt_error_set(TT_ERR_INVALID, "alpha-beta fit: need at least 2 sizes, have %d", n);
    size_t np = (size_t)n * (size_t)(n - 1) / 2;
    double *sl = malloc(sizeof(double) * (np ? np : 1));
    double *ic = malloc(sizeof(double) * (size_t)n);
    if (!sl || !ic) {
        free(sl);
        free(ic);
        return tt_error_set(TT_ERR_NOMEM, "alpha-beta fit: out of memory");
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (bytes[j] != bytes[i]) sl[k++] = (us[j] - us[i]) / (bytes[j] - bytes[i]);
    if (k == 0) {
        free(sl);
        free(ic);
        return tt_error_set(TT_ERR_INVALID, "alpha-beta fit: all rows have the same size");
    }
    double s = median(sl, k);
    if (s < 1e-12) s = 1e-12; /* bandwidth bounded: time never falls with size */
    for (int i = 0; i < n; i++) ic[i] = us[i] - s * bytes[i];
    double a = median(ic, n);
    *a_us = a > 0 ? a : 0;
    *b_GBps = 1.0 / (s * 1e3);
    free(sl);
    free(ic);
    return TT_OK;
}

tt_status tt_fit_alpha_beta_groups(const tt_measure_set *ms, tt_alpha_beta_group **out, int *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = (size_t)(ms->n ? ms->n : 1);
    char *done = calloc(cap, 1);
    double *x = malloc(sizeof(double) * cap), *y = malloc(sizeof(double) * cap);
    tt_alpha_beta_group *g = calloc(cap, sizeof *g);
    if (!done || !x || !y || !g) {
        free(done);
        free(x);
        free(y);
        free(g);
        return tt_error_set(TT_ERR_NOMEM, "alpha-beta fit: out of memory");
    }
    for (int i = 0; i < ms->n; i++) {
        if (done[i]) continue;
        const tt_measurement *m = &ms->m[i];
        int k = 0;
        for (int j = i; j < ms->n; j++) {
            const tt_measurement *q = &ms->m[j];
            if (done[j] || q->coll != m->coll || q->algo != m->algo || q->proto != m->proto || q->nranks != m->nranks)
                continue;
            done[j] = 1;
            x[k] = (double)q->bytes;
            y[k++] = q->time_us;
        }
        tt_alpha_beta_group *o = &g[(*n)++];
        o->first = m;
        o->nrows = k;
        o->ok = tt_fit_alpha_beta(x, y, k, &o->a_us, &o->b_GBps) == TT_OK;
    }
    free(done);
    free(x);
    free(y);
    *out = g;
    return TT_OK;
}

/* ---- writer ---- */

/* A constant as the calibration file has always carried it: 9 significant digits. */
static double sig9(double v)
{
    char b[64];
    snprintf(b, sizeof b, "%.9g", v);
    return strtod(b, NULL);
}

static int add_nums(cJSON *obj, const char *const *keys, const double *vals, int n)
{
    for (int i = 0; i < n; i++)
        if (!cJSON_AddNumberToObject(obj, keys[i], sig9(vals[i])))
            return 0;
    return 1;
}

tt_status tt_model_params_write_json(const tt_model_params *p, const char *comment, tt_strbuf *out)
{
    static const char *pn[TT_PROTO_COUNT] = {"LL", "LL128", "Simple"};
    static const char *const link_keys[] = {"alpha_us", "beta_GBps", "efficiency"};
    static const char *const proto_keys[] = {"base_us", "step_us", "efficiency", "per_channel_GBps",
                                             "chunk_bytes"};
    static const char *const nccl_keys[] = {"base_us", "step_us", "pipeline"};
    static const char *const nvls_keys[] = {"efficiency", "alpha_us"};
    cJSON *root = cJSON_CreateObject(), *links, *protos, *o;
    char *text;
    if (!root || !cJSON_AddStringToObject(root, "schema", "topotune-calibration") ||
        !cJSON_AddNumberToObject(root, "version", 1) || !(links = cJSON_AddObjectToObject(root, "links")))
        goto nomem;
    for (int c = 0; c < TT_LCLASS_COUNT; c++) {
        const double v[] = {p->link[c].alpha_us, p->link[c].beta_GBps, p->link[c].efficiency};
        if (!(o = cJSON_AddObjectToObject(links, tt_link_class_name((tt_link_class)c))) ||
            !add_nums(o, link_keys, v, 3))
            goto nomem;
    }
    if (!(protos = cJSON_AddObjectToObject(root, "protocols")))
        goto nomem;
    for (int q = 0; q < TT_PROTO_COUNT; q++) {
        const double v[] = {p->proto[q].base_us, p->proto[q].step_us, p->proto[q].efficiency,
                            p->proto[q].per_channel_GBps, p->proto[q].chunk_bytes};
        if (!(o = cJSON_AddObjectToObject(protos, pn[q])) || !add_nums(o, proto_keys, v, 5))
            goto nomem;
    }
    {
        const double v[] = {p->nvls_efficiency, p->nvls_alpha_us};
        if (!(o = cJSON_AddObjectToObject(root, "nvls")) || !add_nums(o, nvls_keys, v, 2))
            goto nomem;
    }
    {
        cJSON *nc = cJSON_AddObjectToObject(root, "nccl");
        if (!nc) goto nomem;
        for (int q = 0; q < TT_PROTO_COUNT; q++) {
            const double v[] = {p->nccl[q].base_us, p->nccl[q].step_us, p->nccl[q].pipeline};
            if (!(o = cJSON_AddObjectToObject(nc, pn[q])) || !add_nums(o, nccl_keys, v, 3)) goto nomem;
        }
        if (!cJSON_AddNumberToObject(nc, "pipeline_cap", sig9(p->nccl_pipeline_cap))) goto nomem;
    }
    {
        static const char *const fk[] = {"hop_LL_us", "hop_LL128_us", "hop_Simple_us", "efficiency", "hop_scale_pre_sm90"};
        cJSON *fb = cJSON_AddObjectToObject(root, "fabrics");
        if (!fb) goto nomem;
        for (int f = 0; f < TT_FABRIC_COUNT; f++) {
            const tt_fabric_params *q = &p->fabric[f];
            const double v[] = {q->hop_us[0], q->hop_us[1], q->hop_us[2], q->efficiency, q->hop_scale_pre_sm90};
            if (!(o = cJSON_AddObjectToObject(fb, tt_fabric_name((tt_fabric)f))) || !add_nums(o, fk, v, 5)) goto nomem;
        }
    }
    {
        cJSON *ex = cJSON_AddObjectToObject(root, "exec"), *kd;
        if (!ex) goto nomem;
        for (int k = 1; k < TT_RANKS_KIND_COUNT; k++) {
            if (!(kd = cJSON_AddObjectToObject(ex, tt_exec_kind_name((tt_exec_kind)k)))) goto nomem;
            for (int q = 0; q < TT_PROTO_COUNT; q++) {
                const tt_exec_params *e = &p->exec[k][q];
                /* each kind's own constants only (tune_exec_param_applies) */
                int nc = 0;
                const char *ek[TT_EXEC_NCONST];
                double v[TT_EXEC_NCONST];
                for (int j = 0; j < TT_EXEC_NCONST; j++) {
                    if (!tune_exec_param_applies(j, k)) continue;
                    ek[nc] = tune_exec_param_name(j);
                    v[nc++] = exec_get(e, j);
                }
                if (!(o = cJSON_AddObjectToObject(kd, pn[q])) || !add_nums(o, ek, v, nc)) goto nomem;
            }
        }
        if (!cJSON_AddNumberToObject(root, "host_cores", p->host_cores)) goto nomem;
    }
    if (!cJSON_AddNumberToObject(root, "channel_us", sig9(p->channel_us)) ||
        !cJSON_AddNumberToObject(root, "group_launch_us", sig9(p->group_launch_us)) ||
        !cJSON_AddNumberToObject(root, "max_channels", p->max_channels) ||
        (comment && !cJSON_AddStringToObject(root, "comment", comment)))
        goto nomem;
    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return tt_error_set(TT_ERR_NOMEM, "calibrate: out of memory writing JSON");
    tt_strbuf_append_json(out, text);
    cJSON_free(text);
    return tt_strbuf_status(out);
nomem:
    cJSON_Delete(root);
    return tt_error_set(TT_ERR_NOMEM, "calibrate: out of memory writing JSON");
}
