/*
 * tune_hosts.c - clusters of different hosts: the cluster description of one topology
 * (with topo-tune's overrides), the slowest host every collective waits for, and the
 * JSON table that records the hosts, the chosen one and the sanity findings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "tt_tune.h"
#include "tune_internal.h"

tt_status tt_cluster_for_topo(const tt_topo *t, int nodes, const tt_cluster_overrides *o, tt_cluster *out)
{
    tt_status st = tt_cluster_from_topo(t, out);
    if (st != TT_OK) return st;
    out->nodes = nodes > 0 ? nodes : 1;
    if (!o) return TT_OK;
    if (o->gpus_per_node > 0) out->gpus_per_node = o->gpus_per_node;
    if (o->nics_per_node >= 0) {
        out->nics_per_node = o->nics_per_node;
        if (o->rails <= 0) out->rails = o->nics_per_node > 0 ? o->nics_per_node : 1;
    }
    if (o->nic_gbps > 0) out->nic_gbps = o->nic_gbps;
    if (o->rails > 0) out->rails = o->rails;
    if (o->fabric >= 0 && o->fabric < TT_FABRIC_COUNT) {
        out->fabric = (tt_fabric)o->fabric;
        out->fabric_origin = TT_FABRIC_GIVEN;
        snprintf(out->fabric_why, sizeof out->fabric_why, "--fabric or TOPOTUNE_FABRIC");
    }
    return TT_OK;
}

void tt_slowest_host_free(tt_slowest_host *s)
{
    if (!s) return;
    free(s->busbw);
    memset(s, 0, sizeof *s);
}

tt_status tt_tune_slowest_host(const tt_hostset *hs, int nodes, const tt_cluster_overrides *o, tt_model_kind model,
                               const tt_model_params *params, tt_slowest_host *out)
{
    memset(out, 0, sizeof *out);
    if (!hs || hs->n < 1) return tt_error_set(TT_ERR_INVALID, "cluster: no host");
    tt_cluster_overrides ov = o ? *o : TT_CLUSTER_OVERRIDES_NONE;
    if (nodes <= 0) nodes = hs->n;
    /* ranks per node: given (every host must have them) or the fewest GPUs of any host */
    int fewest = 0;
    for (int i = 0; i < hs->n; i++) {
        if (ov.gpus_per_node > 0 && hs->hosts[i].gpus < ov.gpus_per_node)
            return tt_error_set(TT_ERR_INVALID,
                                "cluster: %d ranks per node asked but host %s (%s) has %d GPUs; give -g %d or leave "
                                "the host out",
                                ov.gpus_per_node, hs->hosts[i].name, hs->hosts[i].source, hs->hosts[i].gpus,
                                hs->hosts[i].gpus);
        if (hs->hosts[i].gpus < hs->hosts[fewest].gpus) fewest = i;
    }
    if (ov.gpus_per_node <= 0) ov.gpus_per_node = hs->hosts[fewest].gpus;
    out->busbw = calloc((size_t)hs->n, sizeof *out->busbw);
    if (!out->busbw) return tt_error_set(TT_ERR_NOMEM, "cluster: out of memory");
    out->n = hs->n;
    out->bytes = TT_SANITY_BYTES;
    tt_status st = TT_OK;
    int lo = 0, hi = 0;
    for (int i = 0; i < hs->n && st == TT_OK; i++) {
        tt_cluster c;
        tt_tune_ctx *ctx = NULL;
        tt_algo a;
        tt_proto p;
        tt_tune_estimate e;
        if ((st = tt_cluster_for_topo(hs->hosts[i].topo, nodes, &ov, &c)) == TT_OK &&
            (st = tt_tune_ctx_new(hs->hosts[i].topo, &c, model, params, &ctx)) == TT_OK &&
            (st = tt_tune_best(ctx, TT_COLL_ALLREDUCE, out->bytes, 0, &a, &p, &e)) == TT_OK) {
            out->busbw[i] = e.busbw;
            if (e.busbw < out->busbw[lo]) lo = i;
            if (e.busbw > out->busbw[hi]) hi = i;
            if (i == 0 || lo == i) out->cluster = c;
        }
        tt_tune_ctx_free(ctx);
        if (st != TT_OK) st = tt_error_prefix(st, "host %s (%s)", hs->hosts[i].name, hs->hosts[i].source);
    }
    if (st != TT_OK) {
        tt_slowest_host_free(out);
        return st;
    }
    out->chosen = lo;
    /* the chosen host's cluster again (the loop kept the one of the lowest so far) */
    if ((st = tt_cluster_for_topo(hs->hosts[lo].topo, nodes, &ov, &out->cluster)) != TT_OK) {
        tt_slowest_host_free(out);
        return st;
    }
    char ranks[200] = "";
    if (hs->hosts[fewest].gpus < hs->hosts[hi].gpus && !(o && o->gpus_per_node > 0))
        snprintf(ranks, sizeof ranks, "; %d ranks per node, the GPUs of host %s, which has the fewest",
                 ov.gpus_per_node, hs->hosts[fewest].name);
    if (out->busbw[lo] >= out->busbw[hi])
        snprintf(out->why, sizeof out->why,
                 "all %d hosts predict AllReduce busbw %.1f GB/s at 1 GiB for %d nodes; the table uses host %s's "
                 "topology%s",
                 hs->n, out->busbw[lo], nodes, hs->hosts[lo].name, ranks);
    else
        snprintf(out->why, sizeof out->why,
                 "host %s is the slowest: predicted AllReduce busbw %.1f GB/s at 1 GiB for %d nodes, where host %s "
                 "reaches %.1f GB/s; every collective waits for the slowest host, so the table is computed with its "
                 "topology%s",
                 hs->hosts[lo].name, out->busbw[lo], nodes, hs->hosts[hi].name, out->busbw[hi], ranks);
    return TT_OK;
}

static double r3(double v) { return (double)(long long)(v * 1000.0 + (v >= 0 ? 0.5 : -0.5)) / 1000.0; }

tt_status tt_tune_write_json_ex(const tt_tune_ctx *ctx, const tt_tune_table *tab, const tt_tune_json_extra *x,
                                tt_strbuf *out)
{
    cJSON *root = tune_table_json(ctx, tab);
    if (!root) return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
    if (x && x->hosts && x->slowest) {
        const tt_hostset *hs = x->hosts;
        cJSON *topo = cJSON_GetObjectItemCaseSensitive(root, "topology");
        cJSON *cl = cJSON_AddObjectToObject(topo, "cluster");
        cJSON *arr = cJSON_AddArrayToObject(cl, "hosts");
        int *flags = calloc((size_t)hs->n, sizeof *flags);
        if (!flags) {
            cJSON_Delete(root);
            return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
        }
        if (x->differences) tt_hostset_differing(hs, x->differences, flags);
        for (int i = 0; i < hs->n; i++) {
            cJSON *h = cJSON_CreateObject();
            cJSON_AddStringToObject(h, "name", hs->hosts[i].name);
            cJSON_AddStringToObject(h, "source", hs->hosts[i].source);
            cJSON_AddNumberToObject(h, "gpus", hs->hosts[i].gpus);
            cJSON_AddNumberToObject(h, "busbw_GBps", i < x->slowest->n ? r3(x->slowest->busbw[i]) : 0);
            cJSON_AddBoolToObject(h, "differs", flags[i]);
            cJSON_AddItemToArray(arr, h);
        }
        free(flags);
        cJSON_AddStringToObject(cl, "chosen", hs->hosts[x->slowest->chosen].name);
        cJSON_AddStringToObject(cl, "reason", x->slowest->why);
        cJSON_AddNumberToObject(cl, "rank_bytes", (double)x->slowest->bytes);
        cJSON *d = cJSON_AddArrayToObject(cl, "differences");
        for (int k = 0; x->differences && k < x->differences->n; k++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "host", x->differences->items[k].where);
            cJSON_AddStringToObject(o, "message", x->differences->items[k].message);
            cJSON_AddItemToArray(d, o);
        }
    }
    if (x && x->warnings) {
        cJSON *w = cJSON_AddArrayToObject(root, "warnings");
        for (int k = 0; k < x->warnings->n; k++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "code", x->warnings->items[k].code);
            cJSON_AddStringToObject(o, "where", x->warnings->items[k].where);
            cJSON_AddStringToObject(o, "message", x->warnings->items[k].message);
            cJSON_AddItemToArray(w, o);
        }
    }
    return tune_json_print(root, out);
}
