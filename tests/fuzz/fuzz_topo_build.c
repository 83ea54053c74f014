/* fuzz_topo_build.c - XML -> typed graph -> all-pairs paths -> validation,
 * health checks -> views -> (when there are GPUs) the cost model's best choice.
 *
 * Invariants: a failed build sets a message and returns no graph; every path
 * of a built graph is either unreachable (nhops -1, bw 0) or a route of
 * nhops+1 valid node indices from `from` to `to` whose consecutive nodes are
 * linked; validate/check/views never fail on a built graph except for NOMEM.
 */
#include <math.h>

#include "fuzz_common.h"
#include "tt_topo.h"
#include "tt_tune.h"

/* Paths are O(n^2) per input: keep graphs to a few hundred nodes (NCCL's own
 * files hold at most 256 elements). */
#define FTB_MAX_NODES 600

static int ftb_linked(const tt_topo *t, int a, int b)
{
    for (int k = 0; k < t->nodes[a].nlinks; k++)
        if (t->nodes[a].links[k].peer == b)
            return 1;
    return 0;
}

static void ftb_paths(const tt_topo *t)
{
    for (int i = 0; i < t->nnodes; i++) {
        const tt_node *n = &t->nodes[i];
        for (int k = 0; k < n->nlinks; k++)
            FUZZ_CHECK(n->links[k].peer >= 0 && n->links[k].peer < t->nnodes,
                       "node %d link %d peer %d out of range", i, k, n->links[k].peer);
        for (int j = 0; j < t->nnodes; j++) {
            const tt_path *p = tt_topo_path(t, i, j);
            FUZZ_CHECK(p != NULL, "no path slot %d->%d", i, j);
            if (p->nhops < 0) {
                FUZZ_CHECK(p->bw == 0, "unreachable path %d->%d with bandwidth %g", i, j, p->bw);
                continue;
            }
            FUZZ_CHECK(p->route != NULL || p->nhops == 0, "path %d->%d without a route", i, j);
            if (!p->route)
                continue;
            FUZZ_CHECK(p->route[0] == i && p->route[p->nhops] == j,
                       "path %d->%d route ends at %d->%d", i, j, p->route[0], p->route[p->nhops]);
            FUZZ_CHECK(p->bw >= 0, "path %d->%d negative bandwidth %g", i, j, p->bw);
            for (int h = 0; h < p->nhops; h++) {
                int a = p->route[h], b = p->route[h + 1];
                FUZZ_CHECK(a >= 0 && a < t->nnodes && b >= 0 && b < t->nnodes,
                           "path %d->%d hop %d out of range", i, j, h);
                FUZZ_CHECK(ftb_linked(t, a, b), "path %d->%d hop %d: %d-%d not linked", i, j, h, a, b);
            }
        }
        (void)tt_topo_local_cpu(t, i);
    }
}

static void ftb_ok_or_nomem(tt_status st, const char *what)
{
    FUZZ_CHECK(st == TT_OK || st == TT_ERR_NOMEM, "%s failed on a built graph: %s (%s)", what,
               tt_status_name(st), tt_error_message());
}

static void ftb_views(const tt_topo *t)
{
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    ftb_ok_or_nomem(tt_topo_write_json(t, &sb), "json view");
    tt_strbuf_free(&sb);
    tt_strbuf_init(&sb);
    ftb_ok_or_nomem(tt_topo_write_dot(t, &sb), "dot view");
    tt_strbuf_free(&sb);
    tt_strbuf_init(&sb);
    ftb_ok_or_nomem(tt_topo_write_matrix(t, &sb), "matrix view");
    tt_strbuf_free(&sb);
}

static void ftb_findings(const tt_xml_doc *doc)
{
    tt_findings f;
    tt_strbuf sb;
    tt_findings_init(&f);
    if (tt_topo_validate(doc, &f) == TT_OK) {
        tt_strbuf_init(&sb);
        ftb_ok_or_nomem(tt_findings_write_text(&f, doc->source, &sb), "findings text");
        tt_strbuf_free(&sb);
        tt_strbuf_init(&sb);
        ftb_ok_or_nomem(tt_findings_write_json(&f, doc->source, &sb), "findings json");
        tt_strbuf_free(&sb);
    }
    tt_findings_free(&f);
    tt_findings_init(&f);
    (void)tt_topo_check(doc, &f);
    tt_findings_free(&f);
}

/* The cost model over whatever graph the builder accepted. */
static void ftb_tune(const tt_topo *t)
{
    tt_cluster c;
    tt_tune_ctx *ctx = NULL;
    tt_algo a;
    tt_proto p;
    tt_tune_estimate e;
    if (tt_cluster_from_topo(t, &c) != TT_OK || tt_cluster_validate(&c) != TT_OK)
        return;
    for (int m = 0; m < 2; m++) {
        if (tt_tune_ctx_new(t, &c, m ? TT_MODEL_NCCL : TT_MODEL_TOPOTUNE, NULL, &ctx) != TT_OK)
            continue;
        for (int coll = 0; coll < TT_COLL_COUNT; coll++) {
            tt_status st = tt_tune_best(ctx, (tt_coll)coll, 1 << 20, 0, &a, &p, &e);
            if (st == TT_OK)
                /* 0 is right for one rank (nothing to move) */
                FUZZ_CHECK(e.time_us >= 0 && isfinite(e.time_us),
                           "best choice with time %g us", e.time_us);
        }
        tt_tune_ctx_free(ctx);
        ctx = NULL;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tt_xml_limits lim;
    tt_xml_doc *doc = NULL;
    tt_topo *t = NULL;
    tt_status st;

    tt_xml_limits_default(&lim);
    lim.max_nodes = FTB_MAX_NODES;
    if (tt_xml_read_buffer((const char *)data, size, "<fuzz>", &lim, &doc) != TT_OK)
        return 0;
    ftb_findings(doc);
    tt_error_clear();
    st = tt_topo_from_xml(doc, NULL, &t);
    if (st != TT_OK) {
        FUZZ_CHECK(t == NULL, "failed build returned a graph");
        FUZZ_CHECK(tt_error_message()[0] != '\0', "build failed (%s) without a message",
                   tt_status_name(st));
    } else {
        FUZZ_CHECK(t != NULL, "build succeeded without a graph");
        ftb_paths(t);
        ftb_views(t);
        ftb_tune(t);
        tt_topo_free(t);
    }
    tt_xml_doc_free(doc);
    return 0;
}
