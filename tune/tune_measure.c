/*
 * tune_measure.c - measurement sets: format detection, repeats merged, repeatability (the rows and the
 * helpers every reader shares: tune_measure_row.c).
 *
 * Formats (detected from the content, not the file name):
 *   '{' ... "tool": "topo-exec"        topo-exec -J JSON        (tune_measure_json.c)
 *   '{' ... "results" without "tool"   nccl-tests -J JSON       (tune_measure_json.c)
 *   "# topotune published result"      our fact tables of published results (tune_measure_facts.c;
 *                                      tests/fixtures/published/README.md)
 *   anything else                      nccl-tests / topo-exec text tables (tune_measure_text.c,
 *                                      columns tune_measure_cols.c, prefixes tune_measure_prefix.c)
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_measure_internal.h"

/* the identity of a measurement (rows equal in it measured the same thing), as an order */
static int key_order(const tt_measurement *a, const tt_measurement *b)
{
    const int d[] = {a->coll - b->coll, a->nranks - b->nranks, a->nodes - b->nodes, a->algo - b->algo,
                     a->proto - b->proto, a->channels - b->channels, a->exec_kind - b->exec_kind,
                     a->topotune_tree - b->topotune_tree};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (d[i]) return d[i] < 0 ? -1 : 1;
    return a->bytes < b->bytes ? -1 : a->bytes > b->bytes;
}

/* sorting pointers into one array: equal keys keep the order of the rows (the first leads) */
static int ptr_cmp(const void *pa, const void *pb)
{
    const tt_measurement *a = *(const tt_measurement *const *)pa, *b = *(const tt_measurement *const *)pb;
    int k = key_order(a, b);
    return k ? k : (a > b) - (a < b);
}

static double min_time(double a, double b)
{
    if (a <= 0) return b;
    if (b <= 0) return a;
    return a < b ? a : b;
}

/* merge the repeats among rows [from, set->n): each group keeps its first row (its place and
 * "file:line"), with the fastest time of each placement; O(n log n) */
static tt_status merge_repeats(tt_measure_set *set, int from)
{
    int n = set->n - from, merged = 0;
    if (n < 2) return TT_OK;
    tt_measurement **p = malloc(sizeof(*p) * (size_t)n);
    if (!p) return tt_error_set(TT_ERR_NOMEM, "out of memory reading measurements");
    for (int i = 0; i < n; i++) p[i] = &set->m[from + i];
    qsort(p, (size_t)n, sizeof(*p), ptr_cmp);
    for (int i = 1, lead = 0; i < n; i++) {
        if (key_order(p[lead], p[i])) {
            lead = i;
            continue;
        }
        tt_measurement *l = p[lead], *m = p[i];
        int par = (i - lead) % 2; /* the group is in file order (ptr_cmp): repeat i - lead + 1 */
        l->parity_us[par] = min_time(l->parity_us[par], m->time_us);
        if (m->time_us < l->time_us) l->busbw = m->busbw; /* the busbw of the fastest row */
        l->time_oop_us = min_time(l->time_oop_us, m->time_oop_us);
        l->time_ip_us = min_time(l->time_ip_us, m->time_ip_us);
        tm_finish_times(l);
        if (m->slowest_us > l->slowest_us) l->slowest_us = m->slowest_us;
        l->repeats += m->repeats;
        m->repeats = 0; /* dropped below */
        merged = 1;
    }
    free(p);
    if (merged) {
        int w = from;
        for (int i = from; i < set->n; i++)
            if (set->m[i].repeats > 0) set->m[w++] = set->m[i];
        set->n = w;
    }
    return TT_OK;
}

/* a text line starting with "[1,0]<stdout>:" or "[0] " is not a JSON array */
static int launcher_prefix(const char *s, size_t n)
{
    char first[128];
    size_t k = 0;
    while (k < n && k + 1 < sizeof first && s[k] != '\n') {
        first[k] = s[k];
        k++;
    }
    first[k] = 0;
    tm_prefix p;
    tm_prefix_strip(first, &p);
    return p.kind == TM_PFX_OMPI || p.kind == TM_PFX_BRACKET;
}

tt_status tt_measure_parse(const char *text, size_t len, const char *name, const tt_measure_opts *opts,
                           tt_measure_set *set)
{
    tt_measure_opts o = opts ? *opts : TT_MEASURE_OPTS_DEFAULT;
    if (!text || len == 0) return tt_error_set(TT_ERR_PARSE, "%s: empty file, no measurements", name);
    if (memchr(text, 0, len)) return tt_error_set(TT_ERR_PARSE, "%s: binary data (NUL byte), not a measurement file", name);
    size_t i = 0;
    while (i < len && isspace((unsigned char)text[i])) i++;
    if (i == len) return tt_error_set(TT_ERR_PARSE, "%s: empty file, no measurements", name);
    int before = set->n, zero = 0;
    size_t magic = strlen(TM_FACTS_MAGIC);
    tt_status st;
    if (text[i] == '{' || (text[i] == '[' && !launcher_prefix(text + i, len - i))) st = tm_parse_json(text, len, name, &o, set, &zero);
    else if (len - i >= magic && !memcmp(text + i, TM_FACTS_MAGIC, magic)) st = tm_parse_facts(text, len, name, &o, set, &zero);
    else st = tm_parse_text(text, len, name, &o, set, &zero);
    if (st != TT_OK) {
        set->n = before; /* nothing appended on failure */
        return st;
    }
    if (set->n == before && zero)
        return tt_error_set(TT_ERR_PARSE, "%s: only size-0 rows (%d; nothing is timed at size 0), no measurements", name,
                            zero);
    if (set->n == before) return tt_error_set(TT_ERR_PARSE, "%s: no result rows found", name);
    for (int k = before; k < set->n; k++) {
        set->m[k].repeats = 1;
        set->m[k].slowest_us = set->m[k].time_us;
        set->m[k].parity_us[0] = set->m[k].time_us;
        set->m[k].parity_us[1] = 0;
    }
    if ((st = merge_repeats(set, before)) != TT_OK) set->n = before;
    return st;
}

tt_status tt_measure_load(const char *path, const tt_measure_opts *opts, tt_measure_set *set)
{
    char *buf = NULL;
    size_t len = 0;
    tt_status st = tt_read_file(path, 64u << 20, &buf, &len);
    if (st != TT_OK) return st;
    st = tt_measure_parse(buf, len, path, opts, set);
    free(buf);
    return st;
}

tt_status tt_measure_repeatability(const tt_measure_set *ms, int exec_kind, int nranks, tt_repeatability *out)
{
    memset(out, 0, sizeof *out);
    double *d = malloc(sizeof(double) * (size_t)(ms->n + 1));
    if (!d) return tt_error_set(TT_ERR_NOMEM, "repeatability: out of memory");
    for (int i = 0; i < ms->n; i++) {
        const tt_measurement *m = &ms->m[i];
        double a = m->parity_us[0], b = m->parity_us[1];
        if (m->repeats < 2 || !(a > 0) || !(b > 0)) continue;
        if ((exec_kind && m->exec_kind != exec_kind) || (nranks && m->nranks != nranks)) continue;
        double r = fabs(a - b) / (a < b ? a : b);
        if (r > out->worst || out->nrows == 0) {
            char cn[48];
            out->worst = r;
            snprintf(out->worst_row, sizeof out->worst_row, "%s %llu B, %d ranks: %.2f us against %.2f us",
                     tt_measure_cand_name(m, cn, sizeof cn), (unsigned long long)m->bytes, m->nranks, a, b);
        }
        d[out->nrows++] = r;
    }
    if (out->nrows) out->median = tt_median(d, (size_t)out->nrows);
    free(d);
    return TT_OK;
}
