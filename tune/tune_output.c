/*
 * tune_output.c - table writers: JSON, human table, --explain (the NCCL tuner CSV: tune_table_csv.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "tune_internal.h"

static double r3(double v) { return round(v * 1000.0) / 1000.0; }

static void human_size(uint64_t b, char *buf, size_t n)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    uint64_t v = b;
    while (i < 4 && v >= 1024 && v % 1024 == 0) { v /= 1024; i++; }
    if (v >= 1024 && i < 4) {
        double d = (double)b;
        i = 0;
        while (i < 4 && d >= 1024) { d /= 1024; i++; }
        snprintf(buf, n, "%.2f %s", d, u[i]);
    } else {
        snprintf(buf, n, "%llu %s", (unsigned long long)v, u[i]);
    }
}

cJSON *tune_entry_json(const tt_tune_entry *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "collective", tt_coll_name(e->coll));
    cJSON_AddNumberToObject(o, "min_bytes", (double)e->min_bytes);
    cJSON_AddNumberToObject(o, "max_bytes", (double)e->max_bytes);
    cJSON_AddStringToObject(o, "algorithm", tt_algo_name(e->algo));
    cJSON_AddStringToObject(o, "protocol", tt_proto_name(e->proto));
    cJSON_AddNumberToObject(o, "channels", e->channels);
    cJSON_AddNumberToObject(o, "predicted_us", r3(e->predicted_us));
    cJSON_AddNumberToObject(o, "algbw", r3(e->algbw));
    cJSON_AddNumberToObject(o, "busbw", r3(e->busbw));
    return o;
}

static cJSON *graph_json(const tt_graph_info *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "found", g->found);
    cJSON_AddNumberToObject(o, "nchannels", g->nchannels);
    cJSON_AddNumberToObject(o, "bw_intra", r3(g->bw_intra));
    cJSON_AddNumberToObject(o, "bw_inter", r3(g->bw_inter));
    cJSON_AddStringToObject(o, "type_intra", tune_path_name(g->type_intra));
    cJSON_AddStringToObject(o, "type_inter", tune_path_name(g->type_inter));
    cJSON_AddNumberToObject(o, "pattern", g->pattern);
    return o;
}

cJSON *tune_table_json(const tt_tune_ctx *ctx, const tt_tune_table *tab)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    const tt_cluster *c = &ctx->cl;
    const tt_tune_channels *ch = &ctx->ch;
    cJSON_AddStringToObject(root, "schema", "topotune-tuning-table");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "generator", "topo-tune " TT_VERSION_STRING);
    cJSON *topo = cJSON_AddObjectToObject(root, "topology");
    cJSON_AddStringToObject(topo, "source", ctx->topo->source);
    cJSON_AddNumberToObject(topo, "gpus_per_node", c->gpus_per_node);
    cJSON_AddNumberToObject(topo, "nics_per_node", c->nics_per_node);
    cJSON_AddNumberToObject(topo, "nic_gbps", r3(c->nic_gbps));
    cJSON_AddNumberToObject(topo, "rails", c->rails);
    cJSON_AddNumberToObject(topo, "sm_min", c->min_sm);
    cJSON_AddNumberToObject(topo, "sm_max", c->max_sm);
    cJSON_AddBoolToObject(topo, "nvswitch", c->nvswitch);
    cJSON_AddNumberToObject(topo, "node_net_GBps", r3(ch->node_net_bw));
    if (ctx->nnodes > 1) {
        cJSON *fb = cJSON_AddObjectToObject(topo, "fabric");
        cJSON_AddStringToObject(fb, "name", tt_fabric_name(c->fabric));
        cJSON_AddStringToObject(fb, "origin", tt_fabric_origin_name(c->fabric_origin));
        cJSON_AddStringToObject(fb, "why", c->fabric_why);
    }
    cJSON *graphs = cJSON_AddObjectToObject(topo, "graphs");
    cJSON_AddItemToObject(graphs, "ring", graph_json(&ch->ring));
    cJSON_AddItemToObject(graphs, "tree", graph_json(&ch->tree));
    cJSON_AddItemToObject(graphs, "nvls", graph_json(&ch->nvls));
    cJSON_AddNumberToObject(topo, "comm_channels", ch->comm_channels);
    cJSON_AddNumberToObject(root, "nodes", ctx->nnodes);
    cJSON_AddNumberToObject(root, "ranks", ctx->nranks);
    cJSON_AddStringToObject(root, "model", tt_model_name(ctx->model));
    cJSON_AddStringToObject(root, "calibration", ctx->model == TT_MODEL_TOPOTUNE ? ctx->params.source : "n/a");
    cJSON_AddBoolToObject(root, "nccl_only", tab->nccl_only);
    cJSON_AddNumberToObject(root, "min_size", (double)tab->min_size);
    cJSON_AddNumberToObject(root, "max_size", (double)tab->max_size);
    if (tab->keeps_nccl) {
        cJSON_AddNumberToObject(root, "keep_nccl_margin", tab->keep_margin);
        cJSON_AddStringToObject(root, "keep_nccl",
                                "sizes without an entry are left to NCCL's own choice; an entry forces a candidate the "
                                "model predicts faster than NCCL's choice by more than the model's worst error on real "
                                "clusters in that regime allows (and by more than keep_nccl_margin); decisions[] says "
                                "why per size");
    }
    cJSON *ents = cJSON_AddArrayToObject(root, "entries");
    for (int i = 0; i < tab->n; i++) cJSON_AddItemToArray(ents, tune_entry_json(&tab->entries[i]));
    if (tab->keeps_nccl) {
        cJSON *dec = cJSON_AddArrayToObject(root, "decisions");
        for (int i = 0; dec && i < tab->ndec; i++) {
            const tt_tune_decision *d = &tab->dec[i];
            cJSON *o = cJSON_CreateObject();
            char nc[48], bc[48];
            snprintf(nc, sizeof nc, "%s/%s", tt_algo_name(d->nccl_algo), tt_proto_name(d->nccl_proto));
            snprintf(bc, sizeof bc, "%s/%s", tt_algo_name(d->best_algo), tt_proto_name(d->best_proto));
            cJSON_AddStringToObject(o, "collective", tt_coll_name(d->coll));
            cJSON_AddNumberToObject(o, "bytes", (double)d->bytes);
            cJSON_AddStringToObject(o, "nccl", nc);
            cJSON_AddNumberToObject(o, "nccl_us", r3(d->nccl_us));
            cJSON_AddStringToObject(o, "best", bc);
            cJSON_AddNumberToObject(o, "best_us", r3(d->best_us));
            cJSON_AddNumberToObject(o, "gain", r3(d->gain));
            cJSON_AddStringToObject(o, "regime", d->regime);
            if (d->error >= 0) cJSON_AddNumberToObject(o, "model_error", r3(d->error));
            else cJSON_AddNullToObject(o, "model_error");
            if (d->need >= 0) cJSON_AddNumberToObject(o, "gain_needed", r3(d->need));
            else cJSON_AddNullToObject(o, "gain_needed");
            cJSON_AddBoolToObject(o, "forced", d->forced);
            cJSON_AddStringToObject(o, "why", d->why);
            cJSON_AddItemToArray(dec, o);
        }
    }
    return root;
}

tt_status tune_json_print(cJSON *root, tt_strbuf *out)
{
    if (!root) return tt_error_set(TT_ERR_NOMEM, "tune: out of memory");
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) return tt_error_set(TT_ERR_NOMEM, "tune: out of memory writing JSON");
    tt_strbuf_append(out, s);
    tt_strbuf_append(out, "\n");
    cJSON_free(s);
    return tt_strbuf_status(out);
}

tt_status tt_tune_write_json(const tt_tune_ctx *ctx, const tt_tune_table *tab, tt_strbuf *out)
{
    return tune_json_print(tune_table_json(ctx, tab), out);
}

tt_status tt_tune_write_text(const tt_tune_ctx *ctx, const tt_tune_table *tab, tt_strbuf *out)
{
    const tt_tune_channels *ch = &ctx->ch;
    tt_strbuf_printf(out, "topo-tune: %s, %d node(s) x %d GPU(s) = %d ranks, %d NIC(s)/node at %g Gb/s, model %s\n",
                     ctx->topo->source, ctx->nnodes, ctx->cl.gpus_per_node, ctx->nranks, ctx->cl.nics_per_node,
                     ctx->cl.nic_gbps, tt_model_name(ctx->model));
    if (ctx->nnodes > 1)
        tt_strbuf_printf(out, "fabric: %s (%s: %s)\n", tt_fabric_title(ctx->cl.fabric),
                         tt_fabric_origin_name(ctx->cl.fabric_origin), ctx->cl.fabric_why);
    tt_strbuf_printf(out, "graphs: ring %d x %.1f/%.1f GB/s (%s/%s), tree %d x %.1f/%.1f GB/s, nvls %s%d x %.1f/%.1f GB/s; runtime channels %d\n",
                     ch->ring.nchannels, ch->ring.bw_intra, ch->ring.bw_inter, tune_path_name(ch->ring.type_intra),
                     tune_path_name(ch->ring.type_inter), ch->tree.nchannels, ch->tree.bw_intra, ch->tree.bw_inter,
                     ch->nvls_support ? "" : "(none) ", ch->nvls.nchannels, ch->nvls.bw_intra, ch->nvls.bw_inter,
                     ch->comm_channels);
    if (tab->keeps_nccl) {
        tt_strbuf_append(out, "sizes not listed are left to NCCL's own choice: a size is forced only where the model's "
                              "predicted gain is larger than its worst error on real clusters in that regime allows\n");
        /* why sizes were kept, counted by reason */
        int agree = 0, unknown = 0, small = 0, forced = 0;
        for (int i = 0; i < tab->ndec; i++) {
            const tt_tune_decision *d = &tab->dec[i];
            if (d->forced) forced++;
            else if (d->best_algo == d->nccl_algo && d->best_proto == d->nccl_proto) agree++;
            else if (d->need < 0) unknown++;
            else small++;
        }
        tt_strbuf_printf(out, "decisions: %d size(s) forced; kept: %d where the model agrees with NCCL, %d where the "
                         "gain is within the model's error, %d in regimes never measured (-f json: decisions[])\n",
                         forced, agree, small, unknown);
        if (tab->n == 0) tt_strbuf_append(out, "\n(no entry: NCCL's choice everywhere)\n");
    }
    tt_coll cur = TT_COLL_COUNT;
    for (int i = 0; i < tab->n; i++) {
        const tt_tune_entry *e = &tab->entries[i];
        char lo[32], hi[32];
        if (e->coll != cur) {
            cur = e->coll;
            tt_strbuf_printf(out, "\n%s\n  %-12s %-12s %-16s %8s %12s %10s %10s\n", tt_coll_name(cur), "from", "to",
                             "algorithm/proto", "channels", "time(us)", "algbw", "busbw");
        }
        human_size(e->min_bytes, lo, sizeof lo);
        human_size(e->max_bytes + 1, hi, sizeof hi);
        char ap[48];
        snprintf(ap, sizeof ap, "%s/%s", tt_algo_name(e->algo), tt_proto_name(e->proto));
        tt_strbuf_printf(out, "  %-12s <%-11s %-16s %8d %12.2f %10.2f %10.2f\n", lo, hi, ap, e->channels,
                         e->predicted_us, e->algbw, e->busbw);
    }
    /* crossovers: where the algorithm or protocol changes */
    tt_strbuf_append(out, "\ncrossovers (first size where the algorithm/protocol changes, by bisection):\n");
    for (int i = 1; i < tab->n; i++) {
        const tt_tune_entry *p = &tab->entries[i - 1], *e = &tab->entries[i];
        if (p->coll != e->coll || (p->algo == e->algo && p->proto == e->proto)) continue;
        if (tab->keeps_nccl && p->max_bytes + 1 != e->min_bytes) continue; /* NCCL's range between them */
        /* exact switch point between the two sweep sizes */
        uint64_t x = 0;
        if (e->min_bytes >= 2 && tt_tune_crossover(ctx, e->coll, e->min_bytes / 2, e->min_bytes, tab->nccl_only, &x) != TT_OK)
            x = 0;
        if (x == 0) x = e->min_bytes;
        char at[32];
        human_size(x, at, sizeof at);
        tt_strbuf_printf(out, "  %-14s at %12llu B (%s)  %s/%s -> %s/%s\n", tt_coll_name(e->coll),
                         (unsigned long long)x, at, tt_algo_name(p->algo), tt_proto_name(p->proto),
                         tt_algo_name(e->algo), tt_proto_name(e->proto));
    }
    return tt_strbuf_status(out);
}

/* the default model's terms behind a prediction at `bytes`, which are assumptions, and its measured error there */
static void write_assumptions(const struct tt_tune_ctx *ctx, uint64_t bytes, tt_strbuf *out)
{
    const tt_model_params *P = &ctx->params;
    const tt_cluster *c = &ctx->cl;
    const tt_tune_channels *ch = &ctx->ch;
    int calibrated = strcmp(P->source, "built-in") != 0;
    tt_strbuf_printf(out, "model terms (docs/model.md section 4; %s):\n",
                     calibrated ? "constants from the calibration file" : "MODEL ASSUMPTIONS, not measured on this machine");
    tt_strbuf_printf(out, "  NCCL's structure: its candidates and graphs (ring %d x %.1f, tree %d x %.1f, nvls %d x %.1f/%.1f GB/s "
                     "per channel), its protocol factors and per-channel caps\n",
                     ch->ring.nchannels, ch->ring.bw_intra, ch->tree.nchannels, ch->tree.bw_intra, ch->nvls.nchannels,
                     ch->nvls.bw_intra, ch->nvls.bw_inter);
    tt_link_class cin = tune_link_class_of(ch->ring.type_intra);
    tt_strbuf_printf(out, "  launch LL %.1f / LL128 %.1f / Simple %.1f us; %s hop %.2f us + step LL %.1f / LL128 %.1f / Simple "
                     "%.1f us; NVLS step %.1f us each way\n",
                     P->nccl[0].base_us, P->nccl[1].base_us, P->nccl[2].base_us, tt_link_class_name(cin),
                     P->link[cin].alpha_us, P->nccl[0].step_us, P->nccl[1].step_us, P->nccl[2].step_us, P->nvls_alpha_us);
    if (ctx->nnodes > 1) {
        const tt_fabric_params *fp = &P->fabric[c->fabric];
        tt_strbuf_printf(out, "  fabric %s (%s: %s): network hop LL %.1f / LL128 %.1f / Simple %.1f us, %.0f %% of the ports' %g "
                         "Gb/s (%.0f GB/s per node)%s\n",
                         tt_fabric_title(c->fabric), tt_fabric_origin_name(c->fabric_origin), c->fabric_why, fp->hop_us[0],
                         fp->hop_us[1], fp->hop_us[2], fp->efficiency * 100, c->nic_gbps, ch->node_net_bw * fp->efficiency,
                         calibrated ? "" : " (public figures, docs/model.md \"Fabrics\")");
    }
    tt_trust tr;
    if (tt_model_trust(ctx, bytes, &tr) == TT_OK) {
        if (tr.sweeps > 0)
            tt_strbuf_printf(out, "  measured error of this model in %s: median %.0f %%, 90th percentile %.0f %%, worst %.0f %% "
                             "(%d published sweeps)\n", tr.regime, tr.median * 100, tr.p90 * 100, tr.worst * 100, tr.sweeps);
        else
            tt_strbuf_printf(out, "  this model was never measured against real clusters in %s\n", tr.regime);
    }
}

tt_status tt_tune_write_explain(const tt_tune_ctx *ctx, unsigned colls, uint64_t bytes, tt_strbuf *out)
{
    char sz[32];
    human_size(bytes, sz, sizeof sz);
    tt_strbuf_printf(out, "explain: %llu bytes (%s), %d node(s) x %d GPU(s), model %s\n",
                     (unsigned long long)bytes, sz, ctx->nnodes, ctx->cl.gpus_per_node, tt_model_name(ctx->model));
    if (ctx->nnodes > 1 && ctx->model != TT_MODEL_TOPOTUNE) /* the default model's terms name it below */
        tt_strbuf_printf(out, "fabric: %s (%s: %s)\n", tt_fabric_title(ctx->cl.fabric),
                         tt_fabric_origin_name(ctx->cl.fabric_origin), ctx->cl.fabric_why);
    /* a partial vendor file: what the topology's fabric rests on (topo_parts.c) */
    if (ctx->topo) {
        const tt_topo *t = ctx->topo;
        for (int i = 0; i < t->assumed.n; i++)
            tt_strbuf_printf(out, "assumed: [%s] %s: %s\n", t->assumed.items[i].code, t->assumed.items[i].where,
                             t->assumed.items[i].message);
        if (t->gpu_fabric_unknown > 0)
            tt_strbuf_printf(out, "GPU interconnect unknown: modelled as PCIe (%d GPU(s) without NVLink information)\n",
                             t->gpu_fabric_unknown);
    }
    if (ctx->model == TT_MODEL_TOPOTUNE && ctx->nranks > 1) write_assumptions(ctx, bytes, out);
    for (int c = 0; c < TT_COLL_COUNT; c++) {
        if (!(colls & (1u << c))) continue;
        tt_algo ba = TT_ALGO_RING;
        tt_proto bp = TT_PROTO_SIMPLE;
        tt_tune_estimate be;
        int have = tt_tune_best(ctx, (tt_coll)c, bytes, 0, &ba, &bp, &be) == TT_OK;
        tt_algo na = TT_ALGO_RING;
        tt_proto np = TT_PROTO_SIMPLE;
        tt_tune_estimate ne;
        int haven = tt_tune_best(ctx, (tt_coll)c, bytes, 1, &na, &np, &ne) == TT_OK;
        tt_error_clear();
        tt_strbuf_printf(out, "\n%s\n  %-22s %12s %10s %10s %10s %8s\n", tt_coll_name((tt_coll)c), "candidate",
                         "time(us)", "lat(us)", "algbw", "busbw", "channels");
        for (int a = 0; a < TT_ALGO_COUNT; a++)
            for (int p = 0; p < TT_PROTO_COUNT; p++) {
                tt_tune_estimate e;
                tt_status st = tt_tune_eval(ctx, (tt_coll)c, (tt_algo)a, (tt_proto)p, bytes, &e);
                if (st != TT_OK) return st;
                char ap[48];
                snprintf(ap, sizeof ap, "%s/%s", tt_algo_name((tt_algo)a), tt_proto_name((tt_proto)p));
                if (!e.enabled) {
                    tt_strbuf_printf(out, "  %-22s disabled: %s\n", ap, e.reason);
                    continue;
                }
                const char *mark = (have && ba == (tt_algo)a && bp == (tt_proto)p) ? "  <= fastest"
                                   : (haven && na == (tt_algo)a && np == (tt_proto)p) ? "  <= fastest NCCL can run"
                                                                                        : "";
                tt_strbuf_printf(out, "  %-22s %12.2f %10.2f %10.2f %10.2f %8d%s\n", ap, e.time_us, e.lat_us, e.algbw,
                                 e.busbw, e.channels, mark);
            }
        if (ctx->model == TT_MODEL_TOPOTUNE && ctx->nranks > 1) {
            /* what a table for NCCL does at this size, and why */
            tt_tune_decision d;
            tt_tune_estimate be2;
            if (tune_decide(ctx, (tt_coll)c, bytes, 0.15, &d, &be2) == TT_OK)
                tt_strbuf_printf(out, "  NCCL runs %s/%s here; a table for NCCL (-f nccl-csv, --nccl-only) would %s\n",
                                 tt_algo_name(d.nccl_algo), tt_proto_name(d.nccl_proto), d.why);
            tt_error_clear();
        }
    }
    return tt_strbuf_status(out);
}
