/*
 * tune_measured.c - a tuning table taken from measurements instead of the model.
 *
 * Input: runs of one communicator shape (ranks, nodes) where each candidate (algorithm,
 * protocol) was forced for a whole sweep (topo-exec --engine nccl --algo A --proto P, or
 * nccl-tests under NCCL_ALGO/NCCL_PROTO written by topo-exec), plus, optionally, runs with
 * NCCL's own choice (rows whose algorithm is not recorded) as the baseline.
 *
 * Per collective and measured size: repeats of one candidate are reduced to their median;
 * the fastest candidate is forced when it beats the baseline by at least `margin` (a
 * fraction), otherwise the size is left to NCCL (no entry: the tuner plugin keeps NCCL's
 * choice there).  Without a baseline at a size, the fastest candidate is forced.
 * Each measured size s_i decides for [m_(i-1), m_i - 1], m_i = the geometric midpoint of
 * s_i and s_(i+1) (an interpolation assumption: nothing between two measured sizes was
 * seen); the first measured size starts its range, the last ends it: sizes outside the
 * measured span are left to NCCL.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include "tune_internal.h"

typedef struct {
    double *v;
    int n, cap;
} dvec;

static int dvec_push(dvec *d, double x)
{
    if (d->n == d->cap) {
        int nc = d->cap ? 2 * d->cap : 8;
        double *p = realloc(d->v, (size_t)nc * sizeof *p);
        if (!p) return -1;
        d->v = p;
        d->cap = nc;
    }
    d->v[d->n++] = x;
    return 0;
}

static double dvec_median(dvec *d) { return d->n ? tt_median(d->v, (size_t)d->n) : -1; }

static int cmpu64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Candidates are (algo, proto) pairs; index TT_ALGO_COUNT*TT_PROTO_COUNT is the baseline. */
#define NCAND (TT_ALGO_COUNT * TT_PROTO_COUNT)

tt_status tt_tune_measured_build(const tt_measure_set *ms, double margin, int nccl_only, tt_measured_table *out)
{
    memset(out, 0, sizeof *out);
    if (!(margin >= 0) || margin >= 1)
        return tt_error_set(TT_ERR_INVALID, "measured table: margin %g must be in [0, 1) (0.03 = 3%%)", margin);
    if (!ms->n) return tt_error_set(TT_ERR_INVALID, "measured table: no measurement rows");
    const tt_measurement *first = &ms->m[0];
    for (int i = 0; i < ms->n; i++) {
        const tt_measurement *m = &ms->m[i];
        if (m->nranks != first->nranks || m->nodes != first->nodes)
            return tt_error_set(TT_ERR_INVALID,
                                "measured table: one table serves one communicator shape, but %s has %d ranks on %d "
                                "node(s) and %s has %d ranks on %d node(s)",
                                first->where, first->nranks, first->nodes, m->where, m->nranks, m->nodes);
        if (m->algo >= 0 && nccl_only && m->algo >= TT_ALGO_NCCL_COUNT)
            return tt_error_set(TT_ERR_INVALID, "measured table: %s ran '%s', which NCCL cannot run (tables for NCCL "
                                "take NCCL's algorithms only)", m->where, tt_algo_name((tt_algo)m->algo));
        if (m->algo >= 0 && m->proto < 0)
            return tt_error_set(TT_ERR_INVALID, "measured table: %s names algorithm '%s' but no protocol; force both "
                                "(NCCL_ALGO and NCCL_PROTO) for every candidate sweep", m->where,
                                tt_algo_name((tt_algo)m->algo));
    }
    if (first->nranks <= 0)
        return tt_error_set(TT_ERR_INVALID, "measured table: %s does not say how many ranks ran", first->where);
    out->nranks = first->nranks;
    out->nodes = first->nodes > 0 ? first->nodes : 1;
    out->margin = margin;
    /* distinct (collective, size) points */
    uint64_t *sizes = malloc((size_t)ms->n * sizeof *sizes);
    out->rows = calloc((size_t)ms->n, sizeof *out->rows);
    dvec *cand = calloc(NCAND + 1, sizeof *cand);
    tt_status st = TT_OK;
    if (!sizes || !out->rows || !cand) {
        st = tt_error_set(TT_ERR_NOMEM, "measured table: out of memory");
        goto done;
    }
    for (int c = 0; c < TT_COLL_COUNT; c++) {
        int ns = 0;
        for (int i = 0; i < ms->n; i++)
            if ((int)ms->m[i].coll == c) sizes[ns++] = ms->m[i].bytes;
        if (!ns) continue;
        qsort(sizes, (size_t)ns, sizeof *sizes, cmpu64);
        int u = 0;
        for (int i = 0; i < ns; i++)
            if (!u || sizes[i] != sizes[u - 1]) sizes[u++] = sizes[i];
        ns = u;
        for (int k = 0; k < ns; k++) {
            for (int j = 0; j <= NCAND; j++) cand[j].n = 0;
            for (int i = 0; i < ms->n; i++) {
                const tt_measurement *m = &ms->m[i];
                if ((int)m->coll != c || m->bytes != sizes[k]) continue;
                int j = m->algo < 0 ? NCAND : m->algo * TT_PROTO_COUNT + m->proto;
                if (dvec_push(&cand[j], m->time_us)) {
                    st = tt_error_set(TT_ERR_NOMEM, "measured table: out of memory");
                    goto done;
                }
            }
            tt_measured_row *r = &out->rows[out->n++];
            r->coll = (tt_coll)c;
            r->bytes = sizes[k];
            r->base_us = dvec_median(&cand[NCAND]);
            r->best_us = -1;
            r->algo = TT_ALGO_DEFAULT;
            r->proto = TT_PROTO_DEFAULT;
            for (int j = 0; j < NCAND; j++) {
                if (!cand[j].n) continue;
                double t = dvec_median(&cand[j]);
                r->ncand++;
                if (r->best_us < 0 || t < r->best_us) {
                    r->best_us = t;
                    r->algo = (tt_algo)(j / TT_PROTO_COUNT);
                    r->proto = (tt_proto)(j % TT_PROTO_COUNT);
                }
            }
            r->forced = r->ncand > 0 && (r->base_us < 0 || r->best_us <= r->base_us * (1 - margin));
            /* range this size decides for */
            r->min_bytes = k == 0 ? sizes[0] : (uint64_t)ceil(sqrt((double)sizes[k - 1] * (double)sizes[k]));
            r->max_bytes = k == ns - 1 ? sizes[k] : (uint64_t)ceil(sqrt((double)sizes[k] * (double)sizes[k + 1])) - 1;
            if (r->max_bytes < r->min_bytes) r->max_bytes = r->min_bytes;
        }
    }
done:
    for (int j = 0; cand && j <= NCAND; j++) free(cand[j].v);
    free(cand);
    free(sizes);
    if (st != TT_OK) tt_measured_table_free(out);
    return st;
}

void tt_measured_table_free(tt_measured_table *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}

/* Forced rows as table entries, consecutive equal choices merged. */
static int entries_of(const tt_measured_table *t, tt_tune_entry *e)
{
    int n = 0;
    for (int i = 0; i < t->n; i++) {
        const tt_measured_row *r = &t->rows[i];
        if (!r->forced) continue;
        if (n && e[n - 1].coll == r->coll && e[n - 1].algo == r->algo && e[n - 1].proto == r->proto &&
            i > 0 && t->rows[i - 1].forced && t->rows[i - 1].coll == r->coll && e[n - 1].max_bytes + 1 == r->min_bytes) {
            e[n - 1].max_bytes = r->max_bytes;
            continue;
        }
        memset(&e[n], 0, sizeof e[n]);
        e[n].coll = r->coll;
        e[n].min_bytes = r->min_bytes;
        e[n].max_bytes = r->max_bytes;
        e[n].algo = r->algo;
        e[n].proto = r->proto;
        e[n].channels = 0; /* not measured apart: NCCL keeps its channel count */
        e[n].predicted_us = r->best_us;
        n++;
    }
    return n;
}

tt_status tt_measured_write_json(const tt_measured_table *t, const char *sources, tt_strbuf *out)
{
    tt_tune_entry *e = calloc((size_t)(t->n ? t->n : 1), sizeof *e);
    cJSON *root = cJSON_CreateObject();
    if (!e || !root) {
        free(e);
        cJSON_Delete(root);
        return tt_error_set(TT_ERR_NOMEM, "measured table: out of memory");
    }
    int ne = entries_of(t, e);
    cJSON_AddStringToObject(root, "schema", "topotune-tuning-table");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "generator", "topo-tune " TT_VERSION_STRING " --from-measured");
    cJSON *topo = cJSON_AddObjectToObject(root, "topology");
    cJSON_AddStringToObject(topo, "source", "measurements");
    cJSON_AddNumberToObject(root, "nodes", t->nodes);
    cJSON_AddNumberToObject(root, "ranks", t->nranks);
    cJSON_AddStringToObject(root, "model", "measured");
    cJSON_AddStringToObject(root, "calibration", sources ? sources : "");
    cJSON_AddBoolToObject(root, "nccl_only", 1);
    cJSON_AddNumberToObject(root, "margin", t->margin);
    cJSON *ents = cJSON_AddArrayToObject(root, "entries");
    for (int i = 0; i < ne; i++) cJSON_AddItemToArray(ents, tune_entry_json(&e[i]));
    /* every measured size and why it was (not) forced, for people and tools */
    cJSON *dec = cJSON_AddArrayToObject(root, "decisions");
    for (int i = 0; i < t->n; i++) {
        const tt_measured_row *r = &t->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "collective", tt_coll_name(r->coll));
        cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
        cJSON_AddStringToObject(o, "fastest", r->ncand ? tt_algo_name(r->algo) : "none");
        cJSON_AddStringToObject(o, "protocol", r->ncand ? tt_proto_name(r->proto) : "none");
        cJSON_AddNumberToObject(o, "fastest_us", r->best_us);
        cJSON_AddNumberToObject(o, "nccl_choice_us", r->base_us);
        cJSON_AddBoolToObject(o, "forced", r->forced);
        cJSON_AddItemToArray(dec, o);
    }
    free(e);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) return tt_error_set(TT_ERR_NOMEM, "measured table: out of memory");
    tt_strbuf_append(out, s);
    tt_strbuf_append(out, "\n");
    cJSON_free(s);
    return tt_strbuf_status(out);
}

tt_status tt_measured_write_csv(const tt_measured_table *t, tt_strbuf *out)
{
    tt_tune_entry *e = calloc((size_t)(t->n ? t->n : 1), sizeof *e);
    if (!e) return tt_error_set(TT_ERR_NOMEM, "measured table: out of memory");
    int ne = entries_of(t, e);
    tt_strbuf_printf(out, "# topotune tuning table from measurements for NCCL's example tuner plugin (NCCL_TUNER_CONFIG_FILE)\n"
                          "# %d ranks on %d node(s); sizes not listed keep NCCL's choice\n"
                          "# channels -1: not measured (topotune's plugin keeps NCCL's count; NCCL's example plugin runs 1 channel)\n",
                     t->nranks, t->nodes);
    tt_strbuf_append(out, "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n");
    for (int i = 0; i < ne; i++) tune_entry_csv(&e[i], t->nodes, t->nranks, out);
    free(e);
    return tt_strbuf_status(out);
}

tt_status tt_measured_write_text(const tt_measured_table *t, tt_strbuf *out)
{
    tt_strbuf_printf(out, "# tuning table from measurements: %d ranks on %d node(s); a size is forced when its fastest "
                          "candidate beats NCCL's own choice by %.1f%% or more, else left to NCCL\n",
                     t->nranks, t->nodes, t->margin * 100);
    tt_strbuf_printf(out, "%-14s %12s %24s  %-14s %11s %13s %8s  %s\n", "collective", "bytes", "range", "fastest",
                     "its us", "NCCL's us", "gain", "decision");
    int nf = 0;
    for (int i = 0; i < t->n; i++) {
        const tt_measured_row *r = &t->rows[i];
        char fb[40], bu[24], gain[24], range[48];
        snprintf(fb, sizeof fb, "%s/%s", r->ncand ? tt_algo_name(r->algo) : "-", r->ncand ? tt_proto_name(r->proto) : "-");
        if (r->base_us >= 0) snprintf(bu, sizeof bu, "%.2f", r->base_us);
        else snprintf(bu, sizeof bu, "-");
        if (r->base_us > 0 && r->best_us > 0) snprintf(gain, sizeof gain, "%+.1f%%", 100 * (r->base_us - r->best_us) / r->base_us);
        else snprintf(gain, sizeof gain, "-");
        snprintf(range, sizeof range, "%llu..%llu", (unsigned long long)r->min_bytes, (unsigned long long)r->max_bytes);
        tt_strbuf_printf(out, "%-14s %12llu %24s  %-14s %11.2f %13s %8s  %s\n", tt_coll_name(r->coll),
                         (unsigned long long)r->bytes, range, fb, r->best_us, bu, gain,
                         r->forced ? (r->base_us < 0 ? "force (no baseline measured)" : "force") : "leave to NCCL");
        nf += r->forced;
    }
    tt_strbuf_printf(out, "# %d of %d sizes forced\n", nf, t->n);
    return tt_strbuf_status(out);
}
