/*
 * tune_exec_fit.c - fitting the executor-shaped model's constants (tune_exec_fit) to measured
 * rows of one (kind of ranks, protocol).
 *
 * The model is linear in its eight coefficients (launch, step, hop, 1/chan, 1/shared, peer,
 * 1/xfer, 1/dram: tune_model_exec.c), so the fit is a robust non-negative linear regression:
 * least absolute RELATIVE deviation (a row 3x off weighs like any other row's error, not its
 * square) by iteratively reweighted least squares, each step a non-negative least-squares solve
 * (Lawson and Hanson's active-set method on the weighted normal equations).  The one non-linear
 * constant, the host ranks' cache size, is chosen by a grid search: the cache size whose linear
 * fit has the least total relative deviation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

#define N TT_EXEC_NPARAM
#define IRLS_ITERS 40
/* host cache sizes tried (MiB): powers of two, 1 MiB .. 256 MiB */
static const double cache_grid[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};

/* solve the d x d system A y = b (Gauss with partial pivoting); 0 = ok */
static int solve(int d, double A[N][N], const double *b, double *y)
{
    double M[N][N + 1];
    for (int i = 0; i < d; i++) {
        for (int j = 0; j < d; j++) M[i][j] = A[i][j];
        M[i][d] = b[i];
    }
    for (int c = 0; c < d; c++) {
        int pv = c;
        for (int i = c + 1; i < d; i++)
            if (fabs(M[i][c]) > fabs(M[pv][c])) pv = i;
        if (fabs(M[pv][c]) < 1e-14) return -1;
        if (pv != c)
            for (int j = 0; j <= d; j++) {
                double t = M[c][j]; M[c][j] = M[pv][j]; M[pv][j] = t;
            }
        for (int i = c + 1; i < d; i++) {
            double q = M[i][c] / M[c][c];
            for (int j = c; j <= d; j++) M[i][j] -= q * M[c][j];
        }
    }
    for (int i = d - 1; i >= 0; i--) {
        double s = M[i][d];
        for (int j = i + 1; j < d; j++) s -= M[i][j] * y[j];
        y[i] = s / M[i][i];
    }
    return 0;
}

/* unconstrained least squares on the passive set: G[P,P] z[P] = h[P]; 0 = ok */
static int solve_passive(const double G[N][N], const double *h, const int *passive, double *z)
{
    int idx[N], d = 0;
    for (int j = 0; j < N; j++) {
        z[j] = 0;
        if (passive[j]) idx[d++] = j;
    }
    if (!d) return 0;
    double A[N][N], b[N], y[N];
    for (int a = 0; a < d; a++) {
        b[a] = h[idx[a]];
        for (int c = 0; c < d; c++) A[a][c] = G[idx[a]][idx[c]];
        A[a][a] *= 1 + 1e-12;
    }
    if (solve(d, A, b, y)) return -1;
    for (int a = 0; a < d; a++) z[idx[a]] = y[a];
    return 0;
}

/* min |A x - b|^2 (weighted), x >= 0, over the free columns, given the normal equations
 * G = A'WA, h = A'Wb (columns scaled to comparable size by the caller): Lawson-Hanson */
static void nnls(const double G[N][N], const double *h, unsigned free_mask, double *x)
{
    int passive[N] = {0};
    double z[N];
    for (int j = 0; j < N; j++) x[j] = 0;
    for (int outer = 0; outer < 3 * N; outer++) {
        /* gradient of the objective's negative: w = h - G x */
        int best = -1;
        double wmax = 1e-12;
        for (int j = 0; j < N; j++) {
            if (!(free_mask & (1u << j)) || passive[j]) continue;
            double w = h[j];
            for (int k = 0; k < N; k++) w -= G[j][k] * x[k];
            if (w > wmax) { wmax = w; best = j; }
        }
        if (best < 0) return;
        passive[best] = 1;
        for (int inner = 0; inner < 3 * N; inner++) {
            if (solve_passive(G, h, passive, z)) { passive[best] = 0; return; }
            int ok = 1;
            for (int j = 0; j < N; j++)
                if (passive[j] && z[j] <= 0) ok = 0;
            if (ok) {
                memcpy(x, z, sizeof z);
                break;
            }
            /* step back to the feasible boundary and drop the columns that reach zero */
            double alpha = 1;
            for (int j = 0; j < N; j++)
                if (passive[j] && z[j] <= 0 && x[j] - z[j] > 0) {
                    double a = x[j] / (x[j] - z[j]);
                    if (a < alpha) alpha = a;
                }
            for (int j = 0; j < N; j++) {
                if (!passive[j]) continue;
                x[j] += alpha * (z[j] - x[j]);
                if (x[j] <= 1e-15) { x[j] = 0; passive[j] = 0; }
            }
        }
    }
}

/* parameter vector: the time coefficient of each column */
static void to_x(const tt_exec_params *e, double x[N])
{
    for (int j = 0; j < N; j++) x[j] = tune_exec_coef(e, j);
}

static void from_x(const double x[N], tt_exec_params *e)
{
    for (int j = 0; j < N; j++) {
        if (!tune_exec_param_is_rate(j)) tune_exec_param_set(e, j, x[j]);
        /* a bandwidth the data cannot bound stays finite: at most 1e7 GB/s */
        else tune_exec_param_set(e, j, x[j] > 1e-10 ? 1.0 / (x[j] * 1e3) : 1e7);
    }
}

typedef struct {
    int k;                 /* rows used */
    double (*F)[N];        /* their columns */
    double *t, *w, *tr;    /* times, weights, targets less the fixed columns */
} fit_rows;

/* the columns of every usable row under p; returns the rows used */
static int gather(const tt_model_params *p, const tt_measurement *const *rows, int nr, int kind, int proto, fit_rows *fr)
{
    fr->k = 0;
    for (int i = 0; i < nr; i++) {
        int pr, al;
        char why[120];
        if (rows[i]->exec_kind != kind || !(rows[i]->time_us > 0)) continue;
        if (tune_exec_terms(p, rows[i], fr->F[fr->k], &pr, &al, why, sizeof why) || pr != proto) continue;
        fr->t[fr->k++] = rows[i]->time_us;
    }
    return fr->k;
}

/* IRLS for the least absolute relative deviation from start x (in/out); returns that deviation's
 * sum; *mask_out: the columns some row exercises (fitted), the others keep their start value */
static double irls(fit_rows *fr, double x[N], unsigned *mask_out)
{
    int k = fr->k;
    double colmax[N] = {0}, scale[N];
    for (int i = 0; i < k; i++)
        for (int j = 0; j < N; j++)
            if (fr->F[i][j] > colmax[j]) colmax[j] = fr->F[i][j];
    unsigned mask = 0;
    for (int j = 0; j < N; j++) {
        if (colmax[j] > 0 && k >= 2) mask |= 1u << j;
        scale[j] = colmax[j] > 0 ? 1.0 / colmax[j] : 1;
    }
    for (int i = 0; i < k; i++) {
        fr->tr[i] = fr->t[i];
        for (int j = 0; j < N; j++)
            if (!(mask & (1u << j))) fr->tr[i] -= fr->F[i][j] * x[j];
        fr->w[i] = 1.0 / (fr->t[i] * fr->t[i]);
    }
    for (int it = 0; it < IRLS_ITERS && mask; it++) {
        double G[N][N] = {{0}}, h[N] = {0}, y[N];
        for (int i = 0; i < k; i++)
            for (int a = 0; a < N; a++) {
                if (!(mask & (1u << a))) continue;
                double fa = fr->F[i][a] * scale[a] * fr->w[i];
                h[a] += fa * fr->tr[i];
                for (int c = 0; c < N; c++)
                    if (mask & (1u << c)) G[a][c] += fa * fr->F[i][c] * scale[c];
            }
        nnls((const double (*)[N])G, h, mask, y);
        for (int j = 0; j < N; j++)
            if (mask & (1u << j)) x[j] = y[j] * scale[j];
        for (int i = 0; i < k; i++) {
            double pr = 0;
            for (int j = 0; j < N; j++) pr += fr->F[i][j] * x[j];
            double r = fabs(pr - fr->t[i]) / fr->t[i];
            fr->w[i] = 1.0 / (fr->t[i] * fr->t[i] * (r > 0.01 ? r : 0.01));
        }
    }
    double dev = 0;
    for (int i = 0; i < k; i++) {
        double pr = 0;
        for (int j = 0; j < N; j++) pr += fr->F[i][j] * x[j];
        dev += fabs(pr - fr->t[i]) / fr->t[i];
    }
    *mask_out = mask;
    return dev;
}

int tune_exec_fit(const tt_model_params *p, const tt_measurement *const *rows, int nr, int kind, int proto,
                  tt_exec_params *out, unsigned *identified)
{
    *identified = 0;
    if (nr <= 0) return 0;
    fit_rows fr;
    fr.F = malloc(sizeof(*fr.F) * (size_t)nr);
    fr.t = malloc(sizeof(double) * (size_t)nr);
    fr.w = malloc(sizeof(double) * (size_t)nr);
    fr.tr = malloc(sizeof(double) * (size_t)nr);
    if (!fr.F || !fr.t || !fr.w || !fr.tr) {
        free(fr.F); free(fr.t); free(fr.w); free(fr.tr);
        return -1;
    }
    const tt_exec_params st = p->exec[kind][proto];
    /* the cache size matters to host rows only (the GPU kinds' L2 is a fixed assumption) */
    int ngrid = kind == TT_RANKS_HOST ? (int)(sizeof cache_grid / sizeof cache_grid[0]) : 1;
    tt_model_params q = *p;
    double best_dev = -1, best_x[N] = {0}, best_cache = st.cache_MiB;
    unsigned best_mask = 0;
    int used = 0;
    for (int g = 0; g < ngrid; g++) {
        if (kind == TT_RANKS_HOST) q.exec[kind][proto].cache_MiB = cache_grid[g];
        if (gather(&q, rows, nr, kind, proto, &fr) == 0) break;
        used = fr.k;
        double x[N];
        unsigned mask;
        to_x(&st, x);
        double dev = irls(&fr, x, &mask);
        if (best_dev < 0 || dev < best_dev) {
            best_dev = dev;
            memcpy(best_x, x, sizeof x);
            best_mask = mask;
            best_cache = q.exec[kind][proto].cache_MiB;
        }
    }
    tt_exec_params e = st;
    if (used > 0) {
        from_x(best_x, &e);
        /* a column that no row exercises keeps its start value exactly */
        for (int j = 0; j < N; j++)
            if (!(best_mask & (1u << j))) tune_exec_param_set(&e, j, tune_exec_param_get(&st, j));
        e.cache_MiB = best_cache;
        *identified = best_mask;
        /* the cache size was chosen when the terms it scales were fitted */
        if (kind == TT_RANKS_HOST && (best_mask & ((1u << EXEC_SHARED) | (1u << EXEC_DRAM)))) *identified |= 1u << EXEC_CACHE;
    }
    *out = e;
    free(fr.F); free(fr.t); free(fr.w); free(fr.tr);
    return used;
}
