/*
 * cli_tune_shapes.c - topo-tune --shapes: parse the list, print the sanity warnings per shape,
 * write the table set (tune/tune_table_set.c builds it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_tune_shapes.h"

int tt_cli_parse_shapes(const char *s, tt_tune_shape **out, int *n)
{
    *out = NULL;
    *n = 0;
    size_t len = strlen(s);
    char *copy = malloc(len + 1);
    tt_tune_shape *sh = calloc(len / 2 + 1, sizeof *sh);
    if (!copy || !sh) {
        free(copy);
        free(sh);
        return tt_cli_usage_error("out of memory");
    }
    memcpy(copy, s, len + 1);
    int k = 0, rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *x = strchr(tok, 'x');
        long long r, nd;
        if (!x) { rc = -1; break; }
        *x = 0;
        if (tt_parse_ll(tok, &r) != TT_OK || tt_parse_ll(x + 1, &nd) != TT_OK || r < 1 || nd < 1 || r > 1000000 ||
            nd > 65536) {
            *x = 'x';
            rc = -1;
            break;
        }
        sh[k].nranks = (int)r;
        sh[k].nnodes = (int)nd;
        k++;
    }
    if (rc || k == 0 || s[0] == ',' || (len && s[len - 1] == ',') || strstr(s, ",,")) {
        free(copy);
        free(sh);
        return tt_cli_usage_error("--shapes '%s': want a comma-separated list of RANKSxNODES, e.g. 2x1,4x1,8x1,16x2", s);
    }
    free(copy);
    *out = sh;
    *n = k;
    return 0;
}

int tt_cli_tune_shapes(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a, const tt_tune_shape *shapes,
                       int n)
{
    tt_tune_set set;
    tt_strbuf out;
    tt_strbuf_init(&out);
    tt_tune_set_opts o = {a->model, a->params, a->colls, a->min_size, a->max_size, a->nccl_only, a->keep_margin};
    tt_status st = tt_tune_set_build(topo, cl, shapes, n, &o, &set);
    if (st != TT_OK) return tt_cli_fail(st);
    int nwarn = 0, rc = TT_CLI_EXIT_ERROR;
    for (int i = 0; i < set.n && st == TT_OK; i++) {
        tt_findings w;
        tt_findings_init(&w);
        if ((st = tt_tune_sanity_check(set.ctx[i], &w)) == TT_OK)
            for (int j = 0; j < w.n; j++)
                fprintf(stderr, "%s: warning: shape %dx%d: %s: %s\n", tt_cli_prog(), set.shapes[i].nranks,
                        set.shapes[i].nnodes, w.items[j].code, w.items[j].message);
        nwarn += w.n;
        tt_findings_free(&w);
    }
    if (st != TT_OK) goto fail;
    if (a->strict && nwarn > 0) {
        fprintf(stderr, "%s: --strict: %d warning%s about the prediction; nothing written\n", tt_cli_prog(), nwarn,
                nwarn == 1 ? "" : "s");
        rc = TT_CLI_EXIT_WARN;
        goto done;
    }
    st = a->fmt == 1 ? tt_tune_set_write_json(&set, &out) : a->fmt == 2 ? tt_tune_set_write_csv(&set, &out)
                                                                         : tt_tune_set_write_text(&set, &out);
    if (st != TT_OK) goto fail;
    if ((st = tt_cli_write_output(a->outpath, out.data ? out.data : "", out.len)) != TT_OK) goto fail;
    rc = TT_CLI_EXIT_OK;
    goto done;
fail:
    rc = tt_cli_fail(st);
done:
    tt_strbuf_free(&out);
    tt_tune_set_free(&set);
    return rc;
}
