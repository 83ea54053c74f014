/*
 * tune_bench.c - how long full tables take to build (topo-tune --bench, hidden): the channel
 * search, the model and every collective at every size of the default sweep with every
 * candidate, for one topology and node count, best and worst of a few repeats.
 */
#include "tune_internal.h"

tt_status tt_tune_bench_tables(const tt_topo *t, int nodes, tt_model_kind m, int reps, tt_tune_bench *out)
{
    tt_cluster c;
    tt_status st = tt_cluster_from_topo(t, &c);
    if (st != TT_OK) return st;
    c.nodes = nodes;
    if (nodes > 1 && c.nics_per_node == 0) { /* a GPU-only box: one 400 Gb/s NIC per GPU */
        c.nics_per_node = c.gpus_per_node;
        c.nic_gbps = 400;
        c.rails = c.nics_per_node;
    }
    out->best_s = 1e30;
    out->worst_s = 0;
    out->ranks = nodes * c.gpus_per_node;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = tt_now_s();
        tt_tune_ctx *ctx = NULL;
        if ((st = tt_tune_ctx_new(t, &c, m, NULL, &ctx)) != TT_OK) return st;
        tt_tune_table tab;
        st = tt_tune_table_build(ctx, (1u << TT_COLL_COUNT) - 1, TT_TUNE_MIN_SIZE, TT_TUNE_MAX_SIZE, 0, &tab);
        if (st != TT_OK) {
            tt_tune_ctx_free(ctx);
            return st;
        }
        double dt = tt_now_s() - t0;
        out->rows = tab.n;
        tt_tune_table_free(&tab);
        tt_tune_ctx_free(ctx);
        if (dt < out->best_s) out->best_s = dt;
        if (dt > out->worst_s) out->worst_s = dt;
    }
    return TT_OK;
}
