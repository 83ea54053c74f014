/*
 * cli_tune.c - topo-tune's runs once the options are parsed: tables with the sanity gate (one
 * host, a cluster of different hosts, --shapes) and the measurement modes (docs/calibration.md).
 * tune/ does the work; this file prints warnings, writes the output and picks the exit code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_common.h"
#include "cli_tune.h"
#include "cli_vendor.h"

/* write sb (after st) to path, or say why not: 0 or TT_CLI_EXIT_ERROR */
static int emit(tt_status st, const char *path, const tt_strbuf *sb)
{
    if (st == TT_OK) st = tt_strbuf_status(sb);
    if (st == TT_OK) st = tt_cli_write_output(path, sb->data ? sb->data : "", sb->len);
    return st == TT_OK ? 0 : tt_cli_fail(st);
}

/* --strict: any sanity warning exits 1 and writes nothing */
static int strict_gate(const tt_cli_tune_args *a, int nwarn)
{
    if (!a->strict || nwarn == 0) return 0;
    fprintf(stderr, "%s: --strict: %d warning%s about the prediction; nothing written\n", tt_cli_prog(), nwarn,
            nwarn == 1 ? "" : "s");
    return TT_CLI_EXIT_WARN;
}

/* ------------------------------------------------------------- tables */

int tt_cli_tune_write(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a, const tt_tune_json_extra *x)
{
    tt_tune_ctx *ctx = NULL;
    tt_findings warn;
    tt_strbuf out;
    tt_findings_init(&warn);
    tt_strbuf_init(&out);
    int rc;
    tt_status st = tt_tune_ctx_new(topo, cl, a->model, a->params, &ctx);
    if (st == TT_OK) st = tt_tune_sanity_check(ctx, &warn);
    for (int i = 0; st == TT_OK && i < warn.n; i++)
        fprintf(stderr, "%s: warning: %s: %s\n", tt_cli_prog(), warn.items[i].code, warn.items[i].message);
    if (st == TT_OK && (rc = strict_gate(a, warn.n)) != 0) goto done;
    tt_tune_json_extra ex = x ? *x : (tt_tune_json_extra){0};
    ex.warnings = warn.n > 0 ? &warn : NULL;
    if (st == TT_OK) st = tt_tune_write_output(topo, ctx, &a->w, &ex, &out);
    rc = emit(st, a->outpath, &out);
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
    int rc = TT_CLI_EXIT_ERROR, ndiff = 0;
    hs.opts = a->topts; /* --gpu-part applies to every host, as TOPOTUNE_GPU_PART does */
    tt_status st = tt_hostset_add_files(&hs, a->inputs, a->ninputs);
    if (st == TT_OK && a->nodes > 0 && a->nodes != hs.n) {
        tt_cli_bad("--nodes %d but the input describes %d host%s (%s%s): a cluster of different hosts is tuned "
                   "for one node per host; drop --nodes, or give one file per node",
                   a->nodes, hs.n, hs.n == 1 ? "" : "s", hs.hosts[0].name, hs.n > 1 ? ", ..." : "");
        goto done;
    }
    if (st == TT_OK) st = tt_hostset_compare(&hs, &diffs);
    for (int i = 0; st == TT_OK && i < diffs.n; i++)
        fprintf(stderr, "%s: host %s differs: %s\n", tt_cli_prog(), diffs.items[i].where, diffs.items[i].message);
    for (int i = 0; st == TT_OK && i < hs.n; i++)
        if (hs.hosts[i].down > 0)
            fprintf(stderr, "%s: host %s: NET port%s %s recorded down, left out of its graph\n", tt_cli_prog(),
                    hs.hosts[i].name, hs.hosts[i].down == 1 ? "" : "s", hs.hosts[i].down_names);
    if (st == TT_OK) st = tt_tune_slowest_host(&hs, hs.n, &a->ov, a->model, a->params, &slow);
    if (st == TT_OK) st = tt_hostset_count_differing(&hs, &diffs, &ndiff);
    if (st != TT_OK) {
        rc = tt_cli_fail(st);
        goto done;
    }
    fprintf(stderr, "%s: %d host%s, %d differ%s from the majority; %s\n", tt_cli_prog(), hs.n, hs.n == 1 ? "" : "s",
            ndiff, ndiff == 1 ? "s" : "", slow.why);
    tt_cli_print_assumptions(hs.hosts[slow.chosen].topo); /* what --gpu-part filled in for the table's host */
    tt_tune_json_extra x = {&hs, &slow, &diffs, NULL};
    rc = tt_cli_tune_write(hs.hosts[slow.chosen].topo, &slow.cluster, a, &x);
done:
    tt_slowest_host_free(&slow);
    tt_findings_free(&diffs);
    tt_hostset_free(&hs);
    return rc;
}

int tt_cli_tune_shapes(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a,
                       const tt_tune_shape *shapes, int n)
{
    tt_tune_set set;
    tt_strbuf out;
    tt_strbuf_init(&out);
    tt_tune_set_opts o = {a->model, a->params, a->w.colls, a->w.min_size, a->w.max_size, a->w.nccl_only,
                          a->w.keep_margin};
    tt_status st = tt_tune_set_build(topo, cl, shapes, n, &o, &set);
    if (st != TT_OK) return tt_cli_fail(st);
    int nwarn = 0, rc;
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
    if (st != TT_OK || (rc = strict_gate(a, nwarn)) == 0)
        rc = emit(st == TT_OK ? tt_tune_set_write(&set, a->w.format, &out) : st, a->outpath, &out);
    tt_strbuf_free(&out);
    tt_tune_set_free(&set);
    return rc;
}

/* ------------------------------------------------------------- measurement modes */

/* --calibrate --model nccl: NCCL rows with NCCL's structure.  NCCL's own constants are not
 * fitted (they are NCCL's); the report gives every row's error with NCCL's model as is and with
 * the built-in absolute-time layer of the part (out of the box), split into NCCL's own choice
 * (rows without algorithm/protocol) and forced rows. */
static int calibrate_nccl_rows(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a)
{
    if (a->outpath && strcmp(a->outpath, "-"))
        return tt_cli_fail(tt_error_set(TT_ERR_INVALID,
                                        "--calibrate --model nccl reports the error of NCCL's structure; it writes no "
                                        "calibration file (drop -o)"));
    tt_measure_set ms = {0};
    tt_strbuf r;
    tt_strbuf_init(&r);
    tt_status st = tt_measure_load_files(a->files, a->nfiles, &a->mopts, &ms);
    if (st == TT_OK) st = tt_nccl_rows_report(topo, cl, &ms, &r, NULL);
    int rc = emit(st, NULL, &r);
    tt_strbuf_free(&r);
    tt_measure_set_free(&ms);
    return rc;
}

/* the calibration file's comment: when, how many rows, the error before and after, the files */
static void calib_comment(const tt_calib_report *rep, const tt_cli_tune_args *a, char *comment, size_t n)
{
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tmv);
    int off = snprintf(comment, n, "topo-tune --calibrate, %s, %d rows (median error %.1f%% -> %.1f%%) from", date,
                       rep->npoints, rep->med_before * 100, rep->med_after * 100);
    for (int i = 0; i < a->nfiles && off > 0 && (size_t)off < n - 1; i++)
        off += snprintf(comment + off, n - (size_t)off, " %s", a->files[i]);
}

int tt_cli_calibrate(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a)
{
    if (a->model == TT_MODEL_NCCL) return calibrate_nccl_rows(topo, cl, a);
    tt_measure_set ms = {0};
    tt_calib_report rep;
    tt_model_params fitted;
    tt_strbuf js, r;
    tt_strbuf_init(&js);
    tt_strbuf_init(&r);
    int rc;
    tt_status st = tt_measure_load_files(a->files, a->nfiles, &a->mopts, &ms);
    if (st == TT_OK) st = tt_calibrate(topo, cl, &ms, a->params, &fitted, &rep);
    if (st != TT_OK) {
        rc = tt_cli_fail(st);
        goto out;
    }
    char comment[512];
    calib_comment(&rep, a, comment, sizeof comment);
    tt_calib_write_text(&rep, &ms, a->params, &r);
    rc = emit(tt_model_params_write_json(&fitted, comment, &js), a->outpath, &js);
    /* the report goes to stdout when the file went elsewhere, else to stderr */
    if (rc == 0 && a->outpath && strcmp(a->outpath, "-")) rc = emit(TT_OK, NULL, &r);
    else if (rc == 0) fputs(r.data ? r.data : "", stderr);
    tt_calib_report_free(&rep);
out:
    tt_strbuf_free(&js);
    tt_strbuf_free(&r);
    tt_measure_set_free(&ms);
    return rc;
}

int tt_cli_judge(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a)
{
    tt_measure_set ms = {0};
    tt_judge_report rep = {0};
    tt_strbuf out;
    tt_strbuf_init(&out);
    tt_judge_opts jo = {topo, cl, a->gpn_given, a->model, a->params, a->table, a->among_measured, a->tolerance,
                        a->w.min_size, a->w.max_size, a->w.nccl_only};
    tt_status st = tt_measure_load_files(a->files, a->nfiles, &a->mopts, &ms);
    if (st == TT_OK) st = tt_tune_judge_choices(&jo, &ms, &rep);
    if (st == TT_OK) st = tt_judge_write_text(&rep, a->tolerance, &out);
    int rc = emit(st, a->outpath, &out);
    if (rc == 0 && rep.nwrong) rc = TT_CLI_EXIT_WARN;
    tt_judge_report_free(&rep);
    tt_strbuf_free(&out);
    tt_measure_set_free(&ms);
    return rc;
}

int tt_cli_expect(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a)
{
    tt_measure_set ms = {0};
    tt_strbuf out;
    tt_strbuf_init(&out);
    tt_expect_opts eo = {topo, cl, a->gpn_given, a->model, a->params, a->w.colls, a->w.min_size, a->w.max_size,
                         a->w.format == TT_TUNE_FMT_JSON};
    tt_expect_verdict worst = TT_EXPECT_PASS;
    tt_status st = a->nfiles ? tt_measure_load_files(a->files, a->nfiles, &a->mopts, &ms) : TT_OK;
    if (st == TT_OK) st = tt_expect_report(&eo, a->nfiles ? &ms : NULL, &out, &worst);
    int rc = emit(st, a->outpath, &out);
    if (rc == 0) rc = (int)worst; /* 0 PASS, 1 WARN, 2 FAIL */
    tt_strbuf_free(&out);
    tt_measure_set_free(&ms);
    return rc;
}

int tt_cli_from_measured(const tt_cli_tune_args *a)
{
    tt_measure_set ms = {0};
    tt_measured_table t;
    memset(&t, 0, sizeof t);
    tt_strbuf sb, src;
    tt_strbuf_init(&sb);
    tt_strbuf_init(&src);
    tt_status st = tt_measure_load_files(a->files, a->nfiles, &a->mopts, &ms);
    if (st == TT_OK) st = tt_tune_measured_build(&ms, a->margin, 1, &t);
    for (int i = 0; st == TT_OK && i < a->nfiles; i++) tt_strbuf_printf(&src, "%s%s", i ? " " : "measured: ", a->files[i]);
    if (st == TT_OK)
        st = a->w.format == TT_TUNE_FMT_JSON ? tt_measured_write_json(&t, src.data, &sb)
             : a->w.format == TT_TUNE_FMT_CSV ? tt_measured_write_csv(&t, &sb)
                                              : tt_measured_write_text(&t, &sb);
    int rc = emit(st, a->outpath, &sb);
    tt_measured_table_free(&t);
    tt_measure_set_free(&ms);
    tt_strbuf_free(&sb);
    tt_strbuf_free(&src);
    return rc;
}
