/*
 * tune_verdict.c - verdicts of topo-exec --validate (tune_validate.c planned the sizes, the caller
 * measured them): per size RIGHT / within noise / WRONG by X %, the ranges where the table is
 * wrong with what won there, counts, and the "validate" member of the -J report.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

void tt_validate_cand_name(char *b, size_t n, const tt_validate_cand *c)
{
    snprintf(b, n, "%s/%s", tt_algo_label(c->algo), tt_proto_name(c->proto));
}

double tt_validate_cand_time(const tt_validate_cand *c)
{
    double a = c->t[0], b = c->t[1];
    if (a > 0 && (b <= 0 || a <= b)) return a;
    return b > 0 ? b : -1;
}

void tt_validate_size_label(char *b, size_t n, uint64_t v)
{
    static const char suf[] = "KMGT";
    int k = -1;
    while (k < 3 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        k++;
    }
    if (k < 0) snprintf(b, n, "%lluB", (unsigned long long)v);
    else snprintf(b, n, "%llu%c", (unsigned long long)v, suf[k]);
}

void tt_validate_judge_size(tt_validate_size *z, double margin)
{
    if (z->nc == 0) {
        z->verdict = TT_VERDICT_SKIP;
        return;
    }
    int best = -1;
    for (int k = 0; k < z->nc; k++) {
        double t = tt_validate_cand_time(&z->c[k]);
        if (t > 0 && (best < 0 || t < tt_validate_cand_time(&z->c[best]))) best = k;
    }
    double tc = tt_validate_cand_time(&z->c[0]);
    if (best < 0 || tc <= 0) {
        z->verdict = TT_VERDICT_SKIP;
        snprintf(z->note, sizeof z->note, "no time measured");
        return;
    }
    z->best = best;
    z->loss = tc / tt_validate_cand_time(&z->c[best]) - 1;
    if (z->nc == 1) z->verdict = TT_VERDICT_ONLY;
    else if (best == 0) z->verdict = TT_VERDICT_RIGHT;
    else if (z->loss <= margin) z->verdict = TT_VERDICT_NOISE;
    else z->verdict = TT_VERDICT_WRONG;
}

const char *tt_verdict_word(int v)
{
    static const char *const w[TT_VERDICT_COUNT] = {"not judged", "right", "within noise", "wrong", "only candidate"};
    return v >= 0 && v < TT_VERDICT_COUNT ? w[v] : "?";
}

void tt_validate_count(const tt_validate_size *sz, int n, int cnt[TT_VERDICT_COUNT])
{
    memset(cnt, 0, sizeof(int) * TT_VERDICT_COUNT);
    for (int i = 0; i < n; i++)
        if (sz[i].verdict >= 0 && sz[i].verdict < TT_VERDICT_COUNT) cnt[sz[i].verdict]++;
}

int tt_validate_wrong_ranges(const tt_validate_size *sz, int nsz, tt_validate_range *r)
{
    int n = 0;
    for (int i = 0; i < nsz; i++) {
        const tt_validate_size *z = &sz[i];
        if (z->verdict != TT_VERDICT_WRONG) continue;
        tt_validate_range *p = n ? &r[n - 1] : NULL;
        if (p && p->hi == i - 1 && sz[p->hi].c[0].algo == z->c[0].algo && sz[p->hi].c[0].proto == z->c[0].proto) {
            p->hi = i;
            if (z->loss < p->minloss) p->minloss = z->loss;
            if (z->loss > p->maxloss) p->maxloss = z->loss;
            continue;
        }
        r[n++] = (tt_validate_range){i, i, z->loss, z->loss};
    }
    return n;
}

void tt_validate_range_winners(const tt_validate_size *sz, const tt_validate_range *r, char *b, size_t bl)
{
    size_t len = 0;
    b[0] = '\0';
    for (int i = r->lo; i <= r->hi; i++) {
        const tt_validate_cand *w = &sz[i].c[sz[i].best];
        int seen = 0;
        for (int j = r->lo; j < i; j++) {
            const tt_validate_cand *u = &sz[j].c[sz[j].best];
            seen |= u->algo == w->algo && u->proto == w->proto;
        }
        if (seen) continue;
        char wn[64], sizes[160] = "";
        tt_validate_cand_name(wn, sizeof wn, w);
        size_t sl = 0;
        int cnt = 0;
        for (int j = i; j <= r->hi; j++) {
            const tt_validate_cand *u = &sz[j].c[sz[j].best];
            if (u->algo != w->algo || u->proto != w->proto) continue;
            char sn[24];
            tt_validate_size_label(sn, sizeof sn, sz[j].bytes);
            if (cnt++ < 6 && sl < sizeof sizes - 30)
                sl += (size_t)snprintf(sizes + sl, sizeof sizes - sl, "%s%s", sl ? " " : "", sn);
        }
        if (cnt > 6 && sl < sizeof sizes - 8) snprintf(sizes + sl, sizeof sizes - sl, " ...");
        if (len < bl)
            len += (size_t)snprintf(b + len, bl - len, "%s%s at %s", len ? "; " : "", wn, sizes);
    }
}

cJSON *tt_validate_json(const tt_validate_size *sz, int nsz, const char *table_desc, const char *model_desc,
                        double margin, int runners_up, int rounds, int exit_code)
{
    cJSON *va = cJSON_CreateObject();
    if (!va) return NULL;
    cJSON_AddStringToObject(va, "table", table_desc);
    cJSON_AddStringToObject(va, "model", model_desc);
    cJSON_AddNumberToObject(va, "margin_percent", margin * 100);
    cJSON_AddNumberToObject(va, "runners_up", runners_up);
    cJSON_AddNumberToObject(va, "rounds", rounds);
    cJSON *sizes = cJSON_AddArrayToObject(va, "sizes");
    for (int i = 0; i < nsz; i++) {
        const tt_validate_size *z = &sz[i];
        cJSON *o = cJSON_CreateObject();
        char cn[64];
        cJSON_AddNumberToObject(o, "size", (double)z->bytes);
        cJSON_AddStringToObject(o, "verdict", tt_verdict_word(z->verdict));
        if (z->verdict != TT_VERDICT_SKIP) {
            tt_validate_cand_name(cn, sizeof cn, &z->c[0]);
            cJSON_AddStringToObject(o, "choice", cn);
            cJSON_AddNumberToObject(o, "choice_time", tt_validate_cand_time(&z->c[0]));
            tt_validate_cand_name(cn, sizeof cn, &z->c[z->best]);
            cJSON_AddStringToObject(o, "fastest", cn);
            cJSON_AddNumberToObject(o, "fastest_time", tt_validate_cand_time(&z->c[z->best]));
            cJSON_AddNumberToObject(o, "loss_percent", z->loss * 100);
        } else {
            cJSON_AddStringToObject(o, "note", z->note);
        }
        cJSON_AddItemToArray(sizes, o);
    }
    tt_validate_range *r = calloc((size_t)(nsz ? nsz : 1), sizeof *r);
    int nr = r ? tt_validate_wrong_ranges(sz, nsz, r) : 0;
    cJSON *wr = cJSON_AddArrayToObject(va, "wrong_ranges");
    for (int i = 0; i < nr; i++) {
        cJSON *o = cJSON_CreateObject();
        char cn[64], win[600];
        cJSON_AddNumberToObject(o, "min_bytes", (double)sz[r[i].lo].bytes);
        cJSON_AddNumberToObject(o, "max_bytes", (double)sz[r[i].hi].bytes);
        tt_validate_cand_name(cn, sizeof cn, &sz[r[i].lo].c[0]);
        cJSON_AddStringToObject(o, "choice", cn);
        tt_validate_range_winners(sz, &r[i], win, sizeof win);
        cJSON_AddStringToObject(o, "faster", win);
        cJSON_AddNumberToObject(o, "min_loss_percent", r[i].minloss * 100);
        cJSON_AddNumberToObject(o, "max_loss_percent", r[i].maxloss * 100);
        cJSON_AddItemToArray(wr, o);
    }
    free(r);
    cJSON_AddNumberToObject(va, "exit", exit_code);
    return va;
}
