/*
 * tune_table_set.c - a table per communicator shape (topo-tune --shapes): build, JSON set, human
 * tables one after the other.  The CSV form is in tune_table_csv.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "tune_internal.h"

void tt_tune_set_free(tt_tune_set *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        if (s->tab) tt_tune_table_free(&s->tab[i]);
        if (s->ctx) tt_tune_ctx_free(s->ctx[i]);
    }
    free(s->shapes);
    free(s->ctx);
    free(s->tab);
    memset(s, 0, sizeof *s);
}

tt_status tt_tune_set_build(const tt_topo *topo, const tt_cluster *base, const tt_tune_shape *shapes, int n,
                            const tt_tune_set_opts *o, tt_tune_set *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1 || n > 256) return tt_error_set(TT_ERR_INVALID, "tune: a table set holds 1..256 shapes, not %d", n);
    for (int i = 0; i < n; i++) {
        const tt_tune_shape *s = &shapes[i];
        if (s->nnodes < 1 || s->nranks < s->nnodes || s->nranks % s->nnodes)
            return tt_error_set(TT_ERR_INVALID, "shape %dx%d: the rank count must be a positive multiple of the node count "
                                "(ranks x nodes, e.g. 16x2 = 8 GPUs on each of 2 nodes)", s->nranks, s->nnodes);
        for (int j = 0; j < i; j++)
            if (shapes[j].nranks == s->nranks && shapes[j].nnodes == s->nnodes)
                return tt_error_set(TT_ERR_INVALID, "shape %dx%d is listed twice", s->nranks, s->nnodes);
    }
    out->shapes = calloc((size_t)n, sizeof *out->shapes);
    out->ctx = calloc((size_t)n, sizeof *out->ctx);
    out->tab = calloc((size_t)n, sizeof *out->tab);
    if (!out->shapes || !out->ctx || !out->tab) {
        tt_tune_set_free(out);
        return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
    }
    tt_status st = TT_OK;
    for (int i = 0; i < n && st == TT_OK; i++) {
        const tt_tune_shape *s = &shapes[i];
        tt_cluster c = *base;
        c.nodes = s->nnodes;
        c.gpus_per_node = s->nranks / s->nnodes;
        out->shapes[i] = *s;
        out->n = i + 1;
        if ((st = tt_tune_ctx_new(topo, &c, o->model, o->params, &out->ctx[i])) != TT_OK) break;
        st = o->keep_margin >= 0
                 ? tt_tune_table_build_keep_nccl(out->ctx[i], o->colls, o->min_size, o->max_size, o->keep_margin, &out->tab[i])
                 : tt_tune_table_build(out->ctx[i], o->colls, o->min_size, o->max_size, o->nccl_only, &out->tab[i]);
    }
    if (st != TT_OK) {
        const tt_tune_shape *s = &shapes[out->n - 1];
        tt_tune_set_free(out);
        return tt_error_prefix(st, "shape %dx%d (%d ranks on %d node(s))", s->nranks, s->nnodes, s->nranks, s->nnodes);
    }
    return TT_OK;
}

tt_status tt_tune_set_write_json(const tt_tune_set *s, tt_strbuf *out)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
    cJSON_AddStringToObject(root, "schema", "topotune-tuning-table-set");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "generator", "topo-tune " TT_VERSION_STRING);
    cJSON_AddStringToObject(root, "shapes_note",
                            "one table per communicator shape (ranks x nodes); the tuner plugin takes the table whose "
                            "ranks and nodes are the communicator's");
    cJSON *tabs = cJSON_AddArrayToObject(root, "tables");
    for (int i = 0; i < s->n; i++) {
        cJSON *t = tune_table_json(s->ctx[i], &s->tab[i]);
        if (!t) {
            cJSON_Delete(root);
            return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
        }
        cJSON_AddItemToArray(tabs, t);
    }
    return tune_json_print(root, out);
}

tt_status tt_tune_set_write_text(const tt_tune_set *s, tt_strbuf *out)
{
    for (int i = 0; i < s->n; i++) {
        tt_strbuf_printf(out, "%s== shape %dx%d: %d ranks on %d node(s) ==\n", i ? "\n" : "", s->shapes[i].nranks,
                         s->shapes[i].nnodes, s->shapes[i].nranks, s->shapes[i].nnodes);
        tt_status st = tt_tune_write_text(s->ctx[i], &s->tab[i], out);
        if (st != TT_OK) return st;
    }
    return tt_strbuf_status(out);
}

tt_status tt_tune_shapes_parse(const char *s, tt_tune_shape **out, int *n)
{
    *out = NULL;
    *n = 0;
    size_t len = strlen(s);
    char *copy = malloc(len + 1);
    tt_tune_shape *sh = calloc(len / 2 + 1, sizeof *sh);
    if (!copy || !sh) {
        free(copy);
        free(sh);
        return tt_error_set(TT_ERR_NOMEM, "out of memory");
    }
    memcpy(copy, s, len + 1);
    int k = 0, bad = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && !bad; tok = strtok_r(NULL, ",", &save)) {
        char *x = strchr(tok, 'x');
        long long r = 0, nd = 0;
        if (!x) { bad = 1; break; }
        *x = 0;
        bad = tt_parse_ll(tok, &r) != TT_OK || tt_parse_ll(x + 1, &nd) != TT_OK || r < 1 || nd < 1 || r > 1000000 ||
              nd > 65536;
        sh[k].nranks = (int)r;
        sh[k].nnodes = (int)nd;
        k += !bad;
    }
    free(copy);
    if (bad || k == 0 || s[0] == ',' || (len && s[len - 1] == ',') || strstr(s, ",,")) {
        free(sh);
        return tt_error_set(TT_ERR_INVALID, "'%s': want a comma-separated list of RANKSxNODES, e.g. 2x1,4x1,8x1,16x2", s);
    }
    *out = sh;
    *n = k;
    return TT_OK;
}
