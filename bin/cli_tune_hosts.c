/* cli_tune_hosts.c - topo-tune's table output with the sanity gate, and clusters of
 * different hosts (docs/cli-topo-tune.md, "Clusters of different hosts"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_tune_hosts.h"
#include "tt_topo.h"

int tt_cli_tune_write(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a,
                      const tt_tune_json_extra *x)
{
    tt_tune_ctx *ctx = NULL;
    tt_findings warn;
    tt_strbuf out;
    tt_findings_init(&warn);
    tt_strbuf_init(&out);
    int rc = TT_CLI_EXIT_ERROR;
    tt_status st;
    if ((st = tt_tune_ctx_new(topo, cl, a->model, a->params, &ctx)) != TT_OK) goto fail;
    if ((st = tt_tune_sanity_check(ctx, &warn)) != TT_OK) goto fail;
    for (int i = 0; i < warn.n; i++)
        fprintf(stderr, "%s: warning: %s: %s\n", tt_cli_prog(), warn.items[i].code, warn.items[i].message);
    if (a->strict && warn.n > 0) {
        fprintf(stderr, "%s: --strict: %d warning%s about the prediction; nothing written\n", tt_cli_prog(), warn.n,
                warn.n == 1 ? "" : "s");
        rc = TT_CLI_EXIT_WARN;
        goto done;
    }
    if (a->explain) {
        st = tt_tune_write_explain(ctx, a->colls, a->explain_bytes, &out);
        if (st == TT_OK && x && x->hosts && x->slowest)
            tt_strbuf_printf(&out, "\ncluster: %s\n", x->slowest->why);
        if (st == TT_OK && warn.n > 0) {
            tt_strbuf_append(&out, "\nsanity checks (the prediction may be wrong):\n");
            for (int i = 0; i < warn.n; i++)
                tt_strbuf_printf(&out, "  warning %s: %s\n", warn.items[i].code, warn.items[i].message);
            st = tt_strbuf_status(&out);
        }
    } else if (a->fmt == 3) {
        st = tt_tune_write_env(topo, ctx, &out);
    } else {
        tt_tune_table tab;
        if ((st = a->keep_margin >= 0
                      ? tt_tune_table_build_keep_nccl(ctx, a->colls, a->min_size, a->max_size, a->keep_margin, &tab)
                      : tt_tune_table_build(ctx, a->colls, a->min_size, a->max_size, a->nccl_only, &tab)) != TT_OK)
            goto fail;
        tt_tune_json_extra ex = x ? *x : (tt_tune_json_extra){0};
        ex.warnings = warn.n > 0 ? &warn : NULL;
        st = a->fmt == 1 ? tt_tune_write_json_ex(ctx, &tab, &ex, &out)
             : a->fmt == 2 ? tt_tune_write_csv(ctx, &tab, &out)
                           : tt_tune_write_text(ctx, &tab, &out);
        tt_tune_table_free(&tab);
    }
    if (st != TT_OK) goto fail;
    if ((st = tt_cli_write_output(a->outpath, out.data ? out.data : "", out.len)) != TT_OK) goto fail;
    rc = TT_CLI_EXIT_OK;
    goto done;
fail:
    rc = tt_cli_fail(st);
done:
    tt_strbuf_free(&out);
    tt_findings_free(&warn);
    tt_tune_ctx_free(ctx);
    return rc;
}

int tt_cli_tune_hosts(const tt_cli_tune_args *a)
{
    tt_hostset hs;
    tt_findings diffs;
    tt_slowest_host slow;
    tt_hostset_init(&hs);
    tt_findings_init(&diffs);
    memset(&slow, 0, sizeof slow);
    int rc = TT_CLI_EXIT_ERROR;
    tt_status st = TT_OK;
    for (int i = 0; i < a->ninputs && st == TT_OK; i++) st = tt_hostset_add_file(&hs, a->inputs[i]);
    if (st != TT_OK) goto fail;
    if (a->nodes > 0 && a->nodes != hs.n) {
        tt_cli_bad("--nodes %d but the input describes %d host%s (%s%s): a cluster of different hosts is tuned "
                   "for one node per host; drop --nodes, or give one file per node",
                   a->nodes, hs.n, hs.n == 1 ? "" : "s", hs.hosts[0].name, hs.n > 1 ? ", ..." : "");
        goto done;
    }
    if ((st = tt_hostset_compare(&hs, &diffs)) != TT_OK) goto fail;
    for (int i = 0; i < diffs.n; i++)
        fprintf(stderr, "%s: host %s differs: %s\n", tt_cli_prog(), diffs.items[i].where, diffs.items[i].message);
    for (int i = 0; i < hs.n; i++)
        if (hs.hosts[i].down > 0)
            fprintf(stderr, "%s: host %s: NET port%s %s recorded down, left out of its graph\n", tt_cli_prog(),
                    hs.hosts[i].name, hs.hosts[i].down == 1 ? "" : "s", hs.hosts[i].down_names);
    if ((st = tt_tune_slowest_host(&hs, hs.n, &a->ov, a->model, a->params, &slow)) != TT_OK) goto fail;
    int *flags = calloc((size_t)hs.n, sizeof *flags), ndiff = 0;
    if (!flags) {
        st = tt_error_set(TT_ERR_NOMEM, "out of memory");
        goto fail;
    }
    tt_hostset_differing(&hs, &diffs, flags);
    for (int i = 0; i < hs.n; i++) ndiff += flags[i];
    free(flags);
    fprintf(stderr, "%s: %d host%s, %d differ%s from the majority; %s\n", tt_cli_prog(), hs.n, hs.n == 1 ? "" : "s",
            ndiff, ndiff == 1 ? "s" : "", slow.why);
    tt_tune_json_extra x = {&hs, &slow, &diffs, NULL};
    rc = tt_cli_tune_write(hs.hosts[slow.chosen].topo, &slow.cluster, a, &x);
    goto done;
fail:
    rc = tt_cli_fail(st);
done:
    tt_slowest_host_free(&slow);
    tt_findings_free(&diffs);
    tt_hostset_free(&hs);
    return rc;
}
