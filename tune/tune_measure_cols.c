/*
 * tune_measure_cols.c - where the figures of a text result row are.
 *
 * The forms nccl-tests has printed (github.com/NVIDIA/nccl-tests, src/common.cu and the
 * per-collective src/<coll>.cu, read for the facts only):
 *
 *   v1.x (2017 - 2019) "bytes N type op | time algbw busbw res" per placement; the leading columns
 *                      depend on the collective (all_gather "bytes N type", broadcast "bytes N type
 *                      root" and out-of-place only, reduce "bytes N type op root"); time in
 *                      MILLISECONDS ("%7.3f"), res the largest deviation ("1e-07").
 *   v2.0 - v2.11       "size count type redop | time algbw busbw error" per placement, time in us
 *                      (at most 2 decimals), leading columns again per collective (all_gather
 *                      "size count type", broadcast "size count type root", reduce "... redop root");
 *                      error like "2e-07", "0e+00" or "N/A".  all_gather / reduce_scatter algbw was
 *                      size x (n-1)/n / time then (busbw the same as today).  (2019 - 2022)
 *   v2.13 - today      "size count type redop root | time algbw busbw #wrong" for every collective
 *                      (#wrong a count or N/A); "cputime" instead of "time" with -C (v2.13.4 on;
 *                      CPU launch time, refused); development builds of 2024-2025 with side work
 *                      had "copybw" before #wrong (in no release); -I 1 (v2.19.2 on) adds "i_min
 *                      i_max i_p99 i_cv%" after #wrong; -S 1 (v2.17.6 on) a timestamp
 *                      ("2025-10-28 12:00:00") at the end of the row.
 *   topo-exec          today's form, optionally "pred err%" after #wrong and an "algo/proto/ch"
 *                      column ("ring/ll/2") at the end.
 *
 * With a column header every index comes from the header's words.  Without one the row's own shape
 * decides: the 4th and 5th tokens (redop and root, redop and time, root and time, or time and algbw)
 * and the number of columns; a row no layout explains, or a time with 3 decimals (the 2017 form,
 * whose unit only its header tells), is refused with file:line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_measure_internal.h"

static int num_tok(const char *tok, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(tok, &end);
    if (end == tok || *end || errno || !isfinite(x)) return 0;
    *v = x;
    return 1;
}

static int uint_tok(const char *tok, uint64_t *v)
{
    if (!isdigit((unsigned char)tok[0])) return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(tok, &end, 10);
    if (*end || errno) return 0;
    *v = x;
    return 1;
}

static int int_tok(const char *tok)
{
    const char *p = tok;
    if (*p == '-' || *p == '+') p++;
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) p++;
    return *p == 0;
}

/* decimals of a number token ("17.850" -> 3) */
static int decimals(const char *tok)
{
    const char *d = strchr(tok, '.');
    if (!d || strpbrk(tok, "eE")) return 0;
    int n = 0;
    for (d++; isdigit((unsigned char)*d); d++) n++;
    return n;
}

/* a column after the figures: topo-exec's plan "ring/ll/2", a -S timestamp "2025-10-28" "12:00:00" */
static int extra_tok(const char *t)
{
    const char *a = strchr(t, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    if (a && b && !strchr(b + 1, '/')) return 1; /* not N/A */
    if (strlen(t) == 10 && isdigit((unsigned char)t[0]) && t[4] == '-' && t[7] == '-') return 1;
    if (strlen(t) == 8 && isdigit((unsigned char)t[0]) && t[2] == ':' && t[5] == ':') return 1;
    return 0;
}

static void cols_clear(tm_cols *c)
{
    memset(c, 0, sizeof *c);
    c->size = c->count = c->type = c->root = -1;
    for (int p = 0; p < 2; p++) c->time[p] = c->algbw[p] = c->busbw[p] = c->err[p] = c->tend[p] = -1;
    c->unit_us = 1;
}

static void cols_last(tm_cols *c)
{
    int last = -1;
    const int *all[] = {&c->size, &c->count, &c->type, &c->root};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (*all[i] > last) last = *all[i];
    for (int p = 0; p < c->nplace; p++) {
        const int v[] = {c->time[p], c->algbw[p], c->busbw[p], c->err[p]};
        for (int k = 0; k < 4; k++)
            if (v[k] > last) last = v[k];
    }
    c->last = last + 1;
}

static int word_is(const char *w, const char *const *names)
{
    for (; *names; names++)
        if (!strcmp(w, *names)) return 1;
    return 0;
}

tt_status tm_cols_header(const char *hdr, const char *name, int line, tm_cols *c, int *is_header)
{
    *is_header = 0;
    if (hdr[0] != '#') return TT_OK;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", hdr);
    char *w[64];
    int we[64], nw = 0;
    for (char *sv = NULL, *t = strtok_r(buf + 1, " \t\r", &sv); t && nw < 64; t = strtok_r(NULL, " \t\r", &sv)) {
        w[nw] = t;
        we[nw++] = (int)(t - buf) + (int)strlen(t);
    }
    if (nw < 4 || (strcmp(w[0], "size") && strcmp(w[0], "bytes"))) return TT_OK;
    int has_time = 0;
    for (int k = 1; k < nw; k++)
        if (!strcmp(w[k], "time") || !strcmp(w[k], "cputime")) has_time = 1;
    if (!has_time) return TT_OK; /* "# size ..." prose, not the column header */
    static const char *const count_w[] = {"count", "N", NULL}, *const err_w[] = {"#wrong", "error", "res", "wrong", NULL};
    tm_cols h;
    cols_clear(&h);
    h.from_header = 1;
    h.size = 0;
    h.ncols = nw;
    if (!strcmp(w[0], "bytes")) h.unit_us = 1000; /* 2017 - early 2019: milliseconds */
    for (int k = 1; k < nw; k++) {
        int p = h.nplace - 1;
        if (!strcmp(w[k], "cputime"))
            return tt_error_set(TT_ERR_PARSE,
                                "%s:%d: the table reports 'cputime' (nccl-tests -C: CPU launch time, not the "
                                "collective's latency); rerun without -C",
                                name, line);
        if (!strcmp(w[k], "time")) {
            if (h.nplace == 2)
                return tt_error_set(TT_ERR_PARSE, "%s:%d: column header names 'time' more than twice", name, line);
            h.time[h.nplace] = k;
            h.tend[h.nplace] = we[k];
            h.nplace++;
        } else if (p < 0) {
            if (word_is(w[k], count_w)) h.count = k;
            else if (!strcmp(w[k], "type")) h.type = k;
            else if (!strcmp(w[k], "root")) h.root = k;
            /* redop / op: not needed */
        } else if (!strcmp(w[k], "algbw")) {
            h.algbw[p] = k;
        } else if (!strcmp(w[k], "busbw")) {
            h.busbw[p] = k;
        } else if (word_is(w[k], err_w)) {
            h.err[p] = k;
        } /* copybw, i_min .. i_cv%, pred, err%, timestamp, algo/proto/ch: not read here */
    }
    for (int p = 0; p < h.nplace; p++)
        if (h.busbw[p] < 0)
            return tt_error_set(TT_ERR_PARSE, "%s:%d: column header has no busbw after its %s time", name, line,
                                p ? "second" : "first");
    snprintf(h.form, sizeof h.form, "the column header of line %d", line);
    cols_last(&h);
    *c = h;
    *is_header = 1;
    return TT_OK;
}

enum { TK_WORD, TK_INT, TK_FLOAT };
static int tok_class(const char *t)
{
    double v;
    if (int_tok(t)) return TK_INT;
    return num_tok(t, &v) ? TK_FLOAT : TK_WORD;
}

tt_status tm_cols_infer(char *const *tok, int nt, const char *name, int line, tm_cols *c)
{
    uint64_t u;
    if (nt >= 2 && !uint_tok(tok[1], &u))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: count '%s' is not an integer", name, line, tok[1]);
    if (nt >= 3 && !tm_type_size(tok[2]))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: unknown data type '%s' in the type column", name, line, tok[2]);
    int m = nt;
    while (m > 0 && extra_tok(tok[m - 1])) m--;
    int lead = 0, width = 4;
    const char *what = "";
    if (m >= 7) {
        int c3 = tok_class(tok[3]), c4 = tok_class(tok[4]);
        if (c3 == TK_WORD && c4 == TK_INT && (m - 5 == 4 || m - 5 == 8)) {
            lead = 5, what = "size count type redop root";
        } else if (c3 == TK_WORD && c4 == TK_INT && m - 5 == 16) {
            lead = 5, width = 8, what = "size count type redop root, -I 1 per-iteration columns";
        } else if (c3 == TK_WORD && c4 != TK_WORD && (m - 4 == 4 || m - 4 == 8)) {
            lead = 4, what = "size count type redop (nccl-tests 2.0 - 2.11)";
        } else if (c3 == TK_INT && (m - 4 == 4 || m - 4 == 8)) {
            lead = 4, what = "size count type root (nccl-tests 2.0 - 2.11)";
        } else if (c3 != TK_WORD && c4 != TK_WORD && (m - 3 == 4 || m - 3 == 8)) {
            lead = 3, what = "size count type (all_gather of nccl-tests 2.0 - 2.11)";
        }
    }
    if (!lead)
        return tt_error_set(TT_ERR_PARSE,
                            "%s:%d: result row has %d columns and no column header; its shape matches no nccl-tests "
                            "layout ('size count type redop root' then 'time algbw busbw #wrong' per placement: 9 or "
                            "13 columns; nccl-tests 2.0 - 2.11 without root or redop: 7, 8, 11 or 12); keep the "
                            "'#  size count type ...' header line",
                            name, line, nt);
    tm_cols h;
    cols_clear(&h);
    h.size = 0, h.count = 1, h.type = 2;
    if (lead == 5) h.root = 4;
    else if (lead == 4 && tok_class(tok[3]) == TK_INT) h.root = 3;
    h.nplace = (m - lead) / width;
    for (int p = 0; p < h.nplace; p++) {
        int b = lead + p * width;
        h.time[p] = b, h.algbw[p] = b + 1, h.busbw[p] = b + 2, h.err[p] = b + 3;
        if (decimals(tok[b]) >= 3)
            return tt_error_set(TT_ERR_PARSE,
                                "%s:%d: time '%s' has 3 decimals: nccl-tests 1.x ('bytes N type op' tables, 2017 - 2019) "
                                "printed milliseconds, later versions microseconds with at most 2; without the column "
                                "header the unit is unknown; keep the '#  bytes N type ...' header line",
                                name, line, tok[b]);
    }
    h.ncols = nt;
    snprintf(h.form, sizeof h.form, "the row's shape (%d columns: %s)", nt, what);
    cols_last(&h);
    *c = h;
    return TT_OK;
}

tt_status tm_cols_row(const tm_cols *c, char *const *tok, const int *tend, int nt, const char *name, int line,
                      tt_measurement *m, int *zero, int *hint)
{
    *zero = 0;
    *hint = 0;
    uint64_t count = 0;
    int esize = 0;
    if (!uint_tok(tok[c->size], &m->bytes))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: size '%s' is not an integer", name, line, tok[c->size]);
    if (m->bytes == 0) { /* nccl-tests prints them (-b 0, all_gather below nranks elements): nothing was timed */
        *zero = 1;
        return TT_OK;
    }
    /* which placements the row has: all, or (a header of two) only one half, the other left blank */
    int map[2] = {0, 1}, np = c->nplace, shift = 0, used = c->last;
    if (nt < c->last) {
        int half = 0;
        if (c->from_header && c->nplace == 2 && nt > c->time[0]) {
            int p = abs(tend[c->time[0]] - c->tend[0]) <= abs(tend[c->time[0]] - c->tend[1]) ? 0 : 1;
            int hi = c->busbw[p] > c->err[p] ? c->busbw[p] : c->err[p];
            if (c->algbw[p] > hi) hi = c->algbw[p];
            int need = c->time[0] + (hi - c->time[p]) + 1, k = need;
            while (k < nt && extra_tok(tok[k])) k++;
            if (nt >= need && k == nt) {
                half = 1;
                np = 1;
                map[0] = p;
                shift = c->time[p] - c->time[0];
                used = need;
            }
        }
        if (!half)
            return tt_error_set(TT_ERR_PARSE, "%s:%d: result row has %d columns, the column header names %d", name,
                                line, nt, c->ncols);
    }
    if (c->count >= 0 && !uint_tok(tok[c->count], &count))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: count '%s' is not an integer", name, line, tok[c->count]);
    if (c->type >= 0 && !(esize = tm_type_size(tok[c->type])))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: unknown data type '%s' in the type column", name, line, tok[c->type]);
    if (c->root >= 0 && !int_tok(tok[c->root]))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: root '%s' is not a number", name, line, tok[c->root]);
    double busbw[2] = {0, 0};
    for (int k = 0; k < np; k++) {
        int p = map[k];
        const char *what = p ? "in-place" : "out-of-place";
        int ti = c->time[p] - shift, ai = c->algbw[p] >= 0 ? c->algbw[p] - shift : -1, bi = c->busbw[p] - shift,
            ei = c->err[p] >= 0 ? c->err[p] - shift : -1;
        double tm, alg = -1, bus;
        if (!num_tok(tok[ti], &tm))
            return tt_error_set(TT_ERR_PARSE, "%s:%d: %s time '%s' is not a number", name, line, what, tok[ti]);
        if (!(tm > 0)) return tt_error_set(TT_ERR_PARSE, "%s:%d: %s time %s must be above 0", name, line, what, tok[ti]);
        if ((ai >= 0 && !num_tok(tok[ai], &alg)) || !num_tok(tok[bi], &bus))
            return tt_error_set(TT_ERR_PARSE, "%s:%d: %s algbw/busbw '%s %s' are not numbers", name, line, what,
                                ai >= 0 ? tok[ai] : "-", tok[bi]);
        if (ei >= 0 && strcmp(tok[ei], "N/A")) {
            char *end;
            (void)strtod(tok[ei], &end);
            if (end == tok[ei] || *end)
                return tt_error_set(TT_ERR_PARSE, "%s:%d: %s #wrong '%s' is not a number or N/A", name, line, what,
                                    tok[ei]);
        }
        double us = tm * c->unit_us;
        /* algbw = size / time in every version (all_gather / reduce_scatter before 2.13: x (n-1)/n):
         * a row whose time and algbw disagree was read from the wrong columns */
        if (alg >= 0.5) {
            double r = alg * us * 1e3 / (double)m->bytes;
            if (r < 0.45 || r > 1.1)
                return tt_error_set(TT_ERR_PARSE,
                                    "%s:%d: %s time %s %s and algbw %s GB/s disagree with the size %llu B (size / time "
                                    "= %.3g GB/s): the columns are not where %s puts them",
                                    name, line, what, tok[ti], c->unit_us > 1 ? "ms" : "us", tok[ai],
                                    (unsigned long long)m->bytes, (double)m->bytes / (us * 1e3), c->form);
        }
        if (p) m->time_ip_us = us;
        else m->time_oop_us = us;
        busbw[p] = bus;
    }
    tm_finish_times(m);
    m->busbw = m->time_us == m->time_oop_us ? busbw[0] : busbw[1];
    /* topo-exec's GPU mode ends a row with the plan it ran, "ring/ll/4" (algorithm/protocol/
     * channels); "nccl" there means NCCL chose */
    for (int k = used; k < nt; k++) {
        char a[64], pr[32];
        int chn;
        tt_algo al;
        tt_proto pp;
        if (sscanf(tok[k], "%63[^/]/%31[^/]/%d", a, pr, &chn) == 3 && tt_measure_algo_parse(a, &al) == TT_OK &&
            tt_proto_parse(pr, &pp) == TT_OK && chn > 0) {
            m->algo = (int)al;
            m->proto = (int)pp;
            m->channels = chn;
        }
    }
    /* all_gather / reduce_scatter: size = count x type size x nranks gives the ranks when the
     * table lacks the "#  Rank" lines */
    if (count > 0 && esize > 0 && m->bytes % (count * (uint64_t)esize) == 0) {
        uint64_t r = m->bytes / (count * (uint64_t)esize);
        if (r >= 2 && r < 1000000) *hint = (int)r;
    }
    return TT_OK;
}
