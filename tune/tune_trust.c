/*
 * tune_trust.c - how far the default model is from real clusters, per regime, as measured on the
 * corpus of published results (tests/fixtures/published/, scripts/bench/cluster-truth.sh,
 * docs/benchmarks.md "Cluster truth").
 *
 * A regime is (size class, nodes, fabric): sizes <= 64 KiB, 64 KiB .. 16 MiB, >= 16 MiB; one
 * node, two nodes, three or more; the fabric between the nodes.  For each regime the corpus
 * gives the model's time error on NCCL's own choice: the median, the 90th percentile and the
 * worst, over how many sweeps.  Two things rest on it:
 *   - tables for NCCL force a candidate only where the model's predicted gain is larger than
 *     what the model has been wrong by in that regime (tt_tune_table_build_keep_nccl);
 *   - --expect's bands: a healthy machine is within the regime's error of the model.
 * A regime the corpus has no sweep of is unknown: nothing is forced there; --expect's bands use
 * the measured multi-node regimes of that size class pooled (exact = 0).  The figures are MEASUREMENTS of the model, not assumptions of it; they are
 * re-measured by cluster-truth.sh whenever the model changes (its "trust" lines are this table).
 */
#include <stdio.h>
#include <string.h>

#include "tune_internal.h"

static const char *const class_names[TT_SIZE_CLASS_COUNT] = {"<= 64 KiB", "64 KiB-16 MiB", ">= 16 MiB"};

tt_size_class tt_size_class_of(uint64_t bytes)
{
    return bytes <= (64ULL << 10) ? TT_SIZE_SMALL : bytes >= (16ULL << 20) ? TT_SIZE_LARGE : TT_SIZE_MEDIUM;
}

const char *tt_size_class_name(tt_size_class c) { return (unsigned)c < TT_SIZE_CLASS_COUNT ? class_names[c] : "?"; }

/* nodes: 1, 2, 3 = three or more; fabric -1 = any (one node) */
typedef struct {
    int nodes;
    int fabric;
    tt_size_class size;
    int sweeps;
    double median, p90, worst;
} trust_row;

/* Measured by scripts/bench/cluster-truth.sh (its "trust" lines; docs/benchmarks.md "Cluster truth"):
 * nodes, fabric, size class, sweeps, median, p90, worst */
static const trust_row trust[] = {
    /* scripts/bench/cluster_fit.py --cv 5 on tests/fixtures/published/ (28 sweeps), 2026-12-03 21:20 UTC: the
     * errors of the sweeps each fold held out; regimes with fewer than 2 sweeps or 6 rows are left out (unknown) */
    {1, -1, TT_SIZE_LARGE, 7, 0.035, 0.123, 0.276}, /* 72 rows */
    {1, -1, TT_SIZE_MEDIUM, 7, 0.102, 0.328, 0.603}, /* 49 rows */
    {1, -1, TT_SIZE_SMALL, 7, 0.067, 0.195, 0.296}, /* 74 rows */
    {2, TT_FABRIC_EFA, TT_SIZE_LARGE, 3, 0.061, 0.371, 0.449}, /* 28 rows */
    {2, TT_FABRIC_EFA, TT_SIZE_MEDIUM, 3, 0.371, 0.535, 0.565}, /* 21 rows */
    {2, TT_FABRIC_EFA, TT_SIZE_SMALL, 3, 0.154, 0.450, 0.490}, /* 42 rows */
    {2, TT_FABRIC_IB, TT_SIZE_LARGE, 6, 0.026, 0.108, 0.239}, /* 57 rows */
    {2, TT_FABRIC_IB, TT_SIZE_MEDIUM, 6, 0.139, 0.269, 0.456}, /* 42 rows */
    {2, TT_FABRIC_IB, TT_SIZE_SMALL, 6, 0.161, 0.238, 0.335}, /* 84 rows */
    {2, TT_FABRIC_ROCE, TT_SIZE_LARGE, 5, 0.073, 0.121, 0.415}, /* 45 rows */
    {2, TT_FABRIC_ROCE, TT_SIZE_MEDIUM, 4, 0.213, 0.317, 0.409}, /* 22 rows */
    {2, TT_FABRIC_ROCE, TT_SIZE_SMALL, 3, 0.083, 0.517, 0.533}, /* 28 rows */
    {2, TT_FABRIC_TCPX, TT_SIZE_LARGE, 3, 0.017, 0.127, 0.516}, /* 30 rows */
    {2, TT_FABRIC_TCPX, TT_SIZE_MEDIUM, 3, 0.151, 0.290, 0.371}, /* 15 rows */
    {2, TT_FABRIC_TCPX, TT_SIZE_SMALL, 2, 0.125, 0.204, 0.267}, /* 23 rows */
    {3, TT_FABRIC_EFA, TT_SIZE_LARGE, 3, 0.132, 0.233, 0.394}, /* 27 rows */
};

tt_status tt_model_trust(const tt_tune_ctx *ctx, uint64_t bytes, tt_trust *out)
{
    memset(out, 0, sizeof(*out));
    const tt_cluster *c = &ctx->cl;
    int nodes = c->nodes <= 1 ? 1 : c->nodes == 2 ? 2 : 3;
    int fabric = nodes == 1 ? -1 : (int)c->fabric;
    out->size = tt_size_class_of(bytes);
    snprintf(out->regime, sizeof out->regime, "%s, %s%s%s", tt_size_class_name(out->size),
             nodes == 1 ? "1 node" : nodes == 2 ? "2 nodes" : ">= 3 nodes", nodes == 1 ? "" : ", ",
             nodes == 1 ? "" : tt_fabric_name(c->fabric));
    if (ctx->model != TT_MODEL_TOPOTUNE || c->xgmi) return TT_OK; /* measured for the default model,
                                                                                * NVIDIA GPUs only */
    for (size_t i = 0; i < sizeof trust / sizeof trust[0]; i++) {
        const trust_row *r = &trust[i];
        if (r->nodes != nodes || r->fabric != fabric || r->size != out->size) continue;
        out->sweeps = r->sweeps;
        out->median = r->median;
        out->p90 = r->p90;
        out->worst = r->worst;
        out->exact = 1;
        return TT_OK;
    }
    /* a multi-node regime the corpus has no sweeps of: the measured multi-node regimes of the size class,
     * pooled, stand in (for --expect's bands only: nothing is forced on it) */
    if (nodes > 1)
        for (size_t i = 0; i < sizeof trust / sizeof trust[0]; i++) {
            const trust_row *r = &trust[i];
            if (r->nodes < 2 || r->size != out->size || r->sweeps < 1) continue;
            out->sweeps += r->sweeps; /* medians and 90th percentiles weighted by sweeps; the worst of the worst */
            out->median += r->median * r->sweeps;
            out->p90 += r->p90 * r->sweeps;
            if (r->worst > out->worst) out->worst = r->worst;
        }
    if (out->sweeps) {
        out->median /= out->sweeps;
        out->p90 /= out->sweeps;
    }
    if (out->sweeps) {
        size_t l = strlen(out->regime);
        snprintf(out->regime + l, sizeof out->regime - l, " (unmeasured: the measured multi-node regimes pooled)");
    }
    return TT_OK;
}
