/*
 * tune_table.c - tuning table: fastest candidate per power-of-two size, merged into ranges;
 * the reader of the JSON form (topo-exec --table, --validate, the NCCL tuner plugin) and the
 * lookup by size.
 *
 * Ranges: the choice made at sweep size s applies to [s, 2s - 1]; the first range of a
 * collective starts at 0 (sizes below the sweep take the smallest size's choice) and the
 * last ends at 2 * max_size - 1.  Consecutive sizes with the same (algorithm, protocol,
 * channels) are merged; predicted_us/algbw/busbw are those of the range's first size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "tune_internal.h"

static tt_status push(tt_tune_table *t, const tt_tune_entry *e)
{
    if (t->n == t->cap) {
        int nc = t->cap ? t->cap * 2 : 64;
        tt_tune_entry *ne = realloc(t->entries, (size_t)nc * sizeof(*ne));
        if (!ne) return tt_error_set(TT_ERR_NOMEM, "tune: out of memory building the table");
        t->entries = ne;
        t->cap = nc;
    }
    t->entries[t->n++] = *e;
    return TT_OK;
}

tt_status tt_tune_table_build(const tt_tune_ctx *ctx, unsigned colls, uint64_t min_size, uint64_t max_size,
                              int nccl_only, tt_tune_table *out)
{
    memset(out, 0, sizeof(*out));
    if (min_size < 1 || max_size < min_size || max_size > (1ULL << 50))
        return tt_error_set(TT_ERR_INVALID, "tune: size range %llu..%llu is invalid",
                            (unsigned long long)min_size, (unsigned long long)max_size);
    if (colls == 0 || colls >= (1u << TT_COLL_COUNT))
        return tt_error_set(TT_ERR_INVALID, "tune: no collective selected");
    out->nodes = tt_tune_ctx_cluster(ctx)->nodes;
    out->ranks = tt_tune_ctx_nranks(ctx);
    snprintf(out->model, sizeof out->model, "%s", tt_model_name(tt_tune_ctx_model(ctx)));
    out->min_size = min_size;
    out->max_size = max_size;
    out->nccl_only = nccl_only;
    out->colls = colls;
    /* order: allreduce, allgather, reducescatter, broadcast, reduce */
    static const tt_coll order[TT_COLL_COUNT] = {TT_COLL_ALLREDUCE, TT_COLL_ALLGATHER, TT_COLL_REDUCESCATTER,
                                                 TT_COLL_BROADCAST, TT_COLL_REDUCE};
    for (int oi = 0; oi < TT_COLL_COUNT; oi++) {
        tt_coll c = order[oi];
        if (!(colls & (1u << c))) continue;
        int first = 1;
        for (uint64_t s = min_size; s <= max_size; s *= 2) {
            tt_algo a;
            tt_proto p;
            tt_tune_estimate e;
            tt_status st = tt_tune_best(ctx, c, s, nccl_only, &a, &p, &e);
            if (st != TT_OK) { tt_tune_table_free(out); return st; }
            tt_tune_entry *last = out->n > 0 ? &out->entries[out->n - 1] : NULL;
            if (!first && last && last->algo == a && last->proto == p && last->channels == e.channels) {
                last->max_bytes = 2 * s - 1;
            } else {
                tt_tune_entry ne = {c, first ? 0 : s, 2 * s - 1, a, p, e.channels, e.time_us, e.algbw, e.busbw};
                if ((st = push(out, &ne)) != TT_OK) { tt_tune_table_free(out); return st; }
            }
            first = 0;
            if (s > max_size / 2) break;
        }
    }
    return TT_OK;
}

static tt_status push_decision(tt_tune_table *t, const tt_tune_decision *d)
{
    if (t->ndec == t->capdec) {
        int nc = t->capdec ? 2 * t->capdec : 64;
        tt_tune_decision *nd = realloc(t->dec, sizeof(*nd) * (size_t)nc);
        if (!nd) return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
        t->dec = nd;
        t->capdec = nc;
    }
    t->dec[t->ndec++] = *d;
    return TT_OK;
}

/* one size of a table for NCCL: force the model's fastest NCCL candidate, or keep NCCL's choice */
tt_status tune_decide(const tt_tune_ctx *ctx, tt_coll c, uint64_t s, double margin, tt_tune_decision *d,
                     tt_tune_estimate *best)
{
    memset(d, 0, sizeof(*d));
    d->coll = c;
    d->bytes = s;
    tt_tune_estimate e0;
    tt_status st;
    if ((st = tt_tune_best(ctx, c, s, 1, &d->best_algo, &d->best_proto, best)) != TT_OK) return st;
    if ((st = tt_nccl_choice(ctx, c, s, &d->nccl_algo, &d->nccl_proto)) != TT_OK) return st;
    if ((st = tt_tune_eval(ctx, c, d->nccl_algo, d->nccl_proto, s, &e0)) != TT_OK) return st;
    d->best_us = best->time_us;
    d->nccl_us = e0.enabled ? e0.time_us : -1;
    tt_trust tr;
    if ((st = tt_model_trust(ctx, s, &tr)) != TT_OK) return st;
    snprintf(d->regime, sizeof d->regime, "%s", tr.regime);
    d->error = tr.exact ? tr.worst : -1;
    d->need = tr.exact && tr.worst < 1 ? fmax(margin, (1 + tr.worst) / (1 - tr.worst) - 1) : -1;
    if (d->best_algo == d->nccl_algo && d->best_proto == d->nccl_proto) {
        snprintf(d->why, sizeof d->why, "keep: the model agrees with NCCL's choice");
        return TT_OK;
    }
    if (!e0.enabled) {
        snprintf(d->why, sizeof d->why, "keep: the model cannot time NCCL's choice (%s)", e0.reason);
        return TT_OK;
    }
    d->gain = d->nccl_us / d->best_us - 1;
    if (strcmp(ctx->params.source, "built-in")) {
        /* constants calibrated on the user's own machine: the corpus's errors are not this model's; the
         * margin alone decides, as for tables from measurements */
        d->error = -1;
        d->need = margin;
        d->forced = d->gain > margin;
        snprintf(d->why, sizeof d->why, "%s: predicted %.0f %% faster than NCCL's choice with the calibrated constants "
                 "(%.80s; the margin is %.0f %%)", d->forced ? "force" : "keep", d->gain * 100, ctx->params.source,
                 margin * 100);
        return TT_OK;
    }
    if (d->need < 0) {
        snprintf(d->why, sizeof d->why, "keep: predicted %.0f %% faster, but the model was never measured on real "
                 "clusters in this regime (%s)", d->gain * 100, d->regime);
        return TT_OK;
    }
    if (d->gain <= d->need) {
        snprintf(d->why, sizeof d->why, "keep: predicted %.0f %% faster, within what the model can be wrong by here "
                 "(worst error %.0f %% in %s: forcing takes > %.0f %%)", d->gain * 100, d->error * 100, d->regime,
                 d->need * 100);
        return TT_OK;
    }
    d->forced = 1;
    snprintf(d->why, sizeof d->why, "force: predicted %.0f %% faster than NCCL's choice, above the %.0f %% the model's "
             "worst error in %s (%.0f %%) allows", d->gain * 100, d->need * 100, d->regime, d->error * 100);
    return TT_OK;
}

tt_status tt_tune_table_build_keep_nccl(const tt_tune_ctx *ctx, unsigned colls, uint64_t min_size, uint64_t max_size,
                                        double margin, tt_tune_table *out)
{
    memset(out, 0, sizeof(*out));
    if (!(margin >= 0) || margin >= 10) return tt_error_set(TT_ERR_INVALID, "tune: keep-NCCL margin %g must be in [0, 10)", margin);
    tt_tune_table full;
    tt_status st = tt_tune_table_build(ctx, colls, min_size, max_size, 1, &full); /* checks the arguments */
    if (st != TT_OK) return st;
    tt_tune_table_free(&full);
    out->nodes = ctx->nnodes;
    out->ranks = ctx->nranks;
    snprintf(out->model, sizeof out->model, "%s", tt_model_name(ctx->model));
    out->min_size = min_size;
    out->max_size = max_size;
    out->nccl_only = 1;
    out->colls = colls;
    out->keeps_nccl = 1;
    out->keep_margin = margin;
    static const tt_coll order[TT_COLL_COUNT] = {TT_COLL_ALLREDUCE, TT_COLL_ALLGATHER, TT_COLL_REDUCESCATTER,
                                                 TT_COLL_BROADCAST, TT_COLL_REDUCE};
    for (int oi = 0; oi < TT_COLL_COUNT && st == TT_OK; oi++) {
        tt_coll c = order[oi];
        if (!(colls & (1u << c))) continue;
        int first = 1, prev_forced = 0;
        for (uint64_t s = min_size; s <= max_size; s *= 2) {
            tt_tune_decision d;
            tt_tune_estimate e;
            if ((st = tune_decide(ctx, c, s, margin, &d, &e)) != TT_OK) break;
            if ((st = push_decision(out, &d)) != TT_OK) break;
            tt_tune_entry *last = out->n > 0 ? &out->entries[out->n - 1] : NULL;
            if (d.forced && prev_forced && last && last->algo == d.best_algo && last->proto == d.best_proto) {
                last->max_bytes = 2 * s - 1;
            } else if (d.forced) {
                tt_tune_entry ne = {c, first ? 0 : s, 2 * s - 1, d.best_algo, d.best_proto, 0, e.time_us, e.algbw, e.busbw};
                if ((st = push(out, &ne)) != TT_OK) break;
            }
            prev_forced = d.forced;
            first = 0;
            if (s > max_size / 2) break;
        }
    }
    if (st != TT_OK) tt_tune_table_free(out);
    return st;
}

void tt_tune_table_free(tt_tune_table *t)
{
    if (!t) return;
    free(t->entries);
    free(t->dec);
    memset(t, 0, sizeof(*t));
}

static int get_num(const cJSON *o, const char *k, double *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(it)) return 0;
    *v = it->valuedouble;
    return 1;
}

int tune_json_line(const char *text, const char *at, size_t len)
{
    int line = 1;
    for (const char *p = text; p < at && p < text + len; p++)
        if (*p == '\n') line++;
    return line;
}

tt_status tt_tune_table_parse(const char *json, const char *name, tt_tune_table *out)
{
    memset(out, 0, sizeof(*out));
    cJSON *root = cJSON_Parse(json);
    if (!root) {
        const char *e = cJSON_GetErrorPtr();
        size_t len = strlen(json);
        return tt_error_set(TT_ERR_PARSE, "%s:%d: not valid JSON (a tuning table is topo-tune --format json output)",
                            name, e && e >= json && e <= json + len ? tune_json_line(json, e, len) : 1);
    }
    tt_status st = TT_OK;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    const cJSON *ents = cJSON_GetObjectItemCaseSensitive(root, "entries");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    double nodes = 0, ranks = 0;
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "topotune-tuning-table")) {
        st = tt_error_set(TT_ERR_PARSE, "%s: \"schema\" is not \"topotune-tuning-table\"", name);
        goto out;
    }
    if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
        st = tt_error_set(TT_ERR_PARSE, "%s: unsupported \"version\" (want 1)", name);
        goto out;
    }
    /* bounds before the casts below: a double out of int range is undefined behaviour */
    if (!get_num(root, "nodes", &nodes) || !get_num(root, "ranks", &ranks) || !(nodes >= 1 && nodes <= 1e6) ||
        !(ranks >= 1 && ranks <= 1e8)) {
        st = tt_error_set(TT_ERR_PARSE, "%s: \"nodes\" (1..1e6) and \"ranks\" (1..1e8) must be positive numbers in range", name);
        goto out;
    }
    if (!cJSON_IsArray(ents)) {
        st = tt_error_set(TT_ERR_PARSE, "%s: \"entries\" must be an array", name);
        goto out;
    }
    out->nodes = (int)nodes;
    out->ranks = (int)ranks;
    if (cJSON_IsString(model)) strncpy(out->model, model->valuestring, sizeof(out->model) - 1);
    int n = cJSON_GetArraySize(ents);
    out->entries = calloc((size_t)n + 1, sizeof(*out->entries));
    if (!out->entries) { st = tt_error_set(TT_ERR_NOMEM, "%s: out of memory", name); goto out; }
    int i = 0;
    for (const cJSON *e = ents->child; e; e = e->next, i++) {
        tt_tune_entry *t = &out->entries[i];
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "collective");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "algorithm");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "protocol");
        double mn, mx, chn = 0;
        if (!cJSON_IsString(c) || tt_coll_parse(c->valuestring, &t->coll) != TT_OK ||
            !cJSON_IsString(a) || tt_algo_parse(a->valuestring, &t->algo) != TT_OK ||
            !cJSON_IsString(p) || tt_proto_parse(p->valuestring, &t->proto) != TT_OK ||
            t->algo == TT_ALGO_DEFAULT || t->proto == TT_PROTO_DEFAULT ||
            !get_num(e, "min_bytes", &mn) || !get_num(e, "max_bytes", &mx) || !(mn >= 0) || mx < mn ||
            mx > 18446744073709549568.0 /* largest double below 2^64 */) {
            st = tt_error_set(TT_ERR_PARSE,
                              "%s: entries[%d]: needs collective, algorithm, protocol (not \"default\"), "
                              "0 <= min_bytes <= max_bytes < 2^64",
                              name, i);
            goto out;
        }
        if (cJSON_GetObjectItemCaseSensitive(e, "channels") &&
            (!get_num(e, "channels", &chn) || !(chn >= 0 && chn <= 64) || chn != (double)(int)chn)) {
            /* 0 (or no member) is "the library's choice"; anything else must be a channel count NCCL can use */
            st = tt_error_set(TT_ERR_PARSE, "%s: entries[%d]: channels must be a whole number 0..64 (0: automatic)",
                              name, i);
            goto out;
        }
        t->min_bytes = (uint64_t)mn;
        t->max_bytes = (uint64_t)mx;
        t->channels = chn > 0 && chn <= 64 ? (int)chn : 0;
        get_num(e, "predicted_us", &t->predicted_us);
        get_num(e, "algbw", &t->algbw);
        get_num(e, "busbw", &t->busbw);
    }
    out->n = out->cap = n;
out:
    if (st != TT_OK) tt_tune_table_free(out);
    cJSON_Delete(root);
    return st;
}

tt_status tt_tune_table_load(const char *path, tt_tune_table *out)
{
    memset(out, 0, sizeof(*out));
    char *text = NULL;
    size_t len = 0;
    tt_status st = tt_read_file(path, 64u << 20, &text, &len);
    if (st != TT_OK) return st;
    st = tt_tune_table_parse(text, path, out); /* errors name path:line or the entry */
    free(text);
    return st;
}

tt_status tt_tune_table_load_for(const char *path, int nranks, int nodes, tt_tune_table *out)
{
    tt_status st = tt_tune_table_load(path, out);
    if (st != TT_OK) return st;
    if (out->ranks != nranks || (nodes > 0 && out->nodes != nodes)) {
        int r = out->ranks, nd = out->nodes;
        tt_tune_table_free(out);
        if (r == nranks) /* nodes differ */
            return tt_error_set(TT_ERR_INVALID,
                                "%s was built for %d ranks on %d node(s) but this run has %d ranks on %d node(s) (build "
                                "one with topo-tune --nodes %d)", path, r, nd, nranks, nodes, nodes);
        return tt_error_set(TT_ERR_INVALID,
                            "%s was built for %d ranks but this run has %d (build one for %d ranks with topo-tune, "
                            "or run %d ranks)", path, r, nranks, nranks, r);
    }
    return TT_OK;
}

const tt_tune_entry *tt_tune_table_find(const tt_tune_table *t, tt_coll coll, uint64_t bytes)
{
    return t ? tt_tune_entry_find(t->entries, t->n, coll, bytes) : NULL;
}
