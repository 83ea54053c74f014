/*
 * exec_measure_text.c - a sweep's results as nccl-tests' text (tt_sweep_text_*): the preamble, the
 * rank lines, the three column heads, one row per size (time, algbw, busbw, #wrong out of place and
 * in place, optionally the predicted time and its error), the closing lines.  What topo-exec and
 * its nccl-tests drop-ins (all_reduce_perf, ...) print, for any program that runs tt_sweep_*; every
 * function appends to a tt_strbuf and the caller prints it.
 */
#include <stdio.h>
#include <string.h>

#include "exec_measure_internal.h"

const char *tt_sweep_coll_name(tt_coll c)
{
    static const char *const n[TT_COLL_COUNT] = {
        [TT_COLL_ALLREDUCE] = "all_reduce", [TT_COLL_REDUCESCATTER] = "reduce_scatter",
        [TT_COLL_ALLGATHER] = "all_gather", [TT_COLL_BROADCAST] = "broadcast", [TT_COLL_REDUCE] = "reduce"};
    return (unsigned)c < TT_COLL_COUNT ? n[c] : "?";
}

/* nccl-tests' number fitting in w columns: %.2f, then fewer decimals, then an exponent (%.1e in 7
 * columns or more, else %.0e), cut to w characters as nccl-tests' buffer of w + 1 bytes cuts it */
static void fnum(char *b, size_t n, int w, double v)
{
    char t[64];
    for (int prec = 2; prec >= 0; prec--) {
        snprintf(t, sizeof t, "%*.*f", w, prec, v);
        if ((int)strlen(t) <= w) {
            snprintf(b, n, "%s", t);
            return;
        }
    }
    snprintf(t, sizeof t, w >= 7 ? "%*.1e" : "%*.0e", w, v);
    t[w] = '\0';
    snprintf(b, n, "%s", t);
}

/* The version nccl-tests' own first line carries (its src/common.h), whose form ours keeps. */
#define NCCL_TESTS_FORM "2.19.6"

void tt_sweep_text_preamble(tt_strbuf *sb, const tt_sweep_text_run *h, const tt_sweep_opts *o)
{
    unsigned long long step = o->factor > 1 ? (unsigned long long)o->factor : (unsigned long long)o->stepb;
    const char *unit = o->factor > 1 ? "factor" : "bytes";
    if (h->prog) {
        if (h->json)
            tt_strbuf_printf(sb, "# Writing JSON output to %s\n", h->json);
        /* nccl-tests' preamble, line for line.  The first line keeps the shape parsers look for
         * ("# nccl-tests version V nccl-headers=N nccl-library=N"); V says whose it is (the form of
         * nccl-tests 2.19.6, topotune's executor: 2.19.6+topotune.X.Y.Z, a semver build tag) and 0 that
         * no NCCL was compiled in or loaded */
        tt_strbuf_printf(sb, "# nccl-tests version %s+topotune.%s nccl-headers=0 nccl-library=0\n", NCCL_TESTS_FORM,
                         TT_VERSION_STRING);
        tt_strbuf_printf(sb, "# Collective test starting: %s\n", h->prog);
        tt_strbuf_printf(sb, "# nThread %d nGpus %d minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d "
                         "iters: %d agg iters: %d validation: %d graph: 0 unalign: 0\n",
                         h->nthreads, h->ngpus, (unsigned long long)o->minb, (unsigned long long)o->maxb, step, unit,
                         o->warmup, o->iters, o->agg, o->check);
        if (o->per_iter) { /* nccl-tests' -I line, saying how ours are timed (its says "CUDA event timing") */
            tt_strbuf_append(sb, "# Per-Iteration Report: host clock timing; i_* uses max over process rows");
            if (o->per_iter_skip)
                tt_strbuf_printf(sb, "; summary skips first %d iterations", o->per_iter_skip);
            tt_strbuf_append(sb, " \n");
        }
        if (h->extra && h->note)
            tt_strbuf_printf(sb, "%s\n", h->note);
        if (h->extra && h->engine)
            tt_strbuf_printf(sb, "# engine %s; checked up to %llu bytes\n", h->engine,
                             (unsigned long long)o->check_max);
    } else if (h->engine) {
        tt_strbuf_printf(sb, "# topo-exec (topotune %s) collective: %s, engine %s\n", TT_VERSION_STRING,
                         tt_sweep_coll_name(o->coll), h->engine);
        tt_strbuf_printf(sb, "# nThread %d nGpus %d minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d "
                         "iters: %d validation: %d (sizes up to %llu bytes)\n",
                         h->nthreads, h->ngpus, (unsigned long long)o->minb, (unsigned long long)o->maxb, step, unit,
                         o->warmup, o->iters, o->check, (unsigned long long)o->check_max);
    } else {
        tt_strbuf_printf(sb, "# topo-exec (topotune %s) collective: %s\n", TT_VERSION_STRING,
                         tt_sweep_coll_name(o->coll));
        tt_strbuf_printf(sb, "# nThread %d nGpus %d minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d "
                         "iters: %d agg iters: %d validation: %d graph: 0\n",
                         h->nthreads, h->ngpus, (unsigned long long)o->minb, (unsigned long long)o->maxb, step, unit,
                         o->warmup, o->iters, o->agg, o->check);
    }
}

void tt_sweep_text_devices(tt_strbuf *sb)
{
    tt_strbuf_append(sb, "#\n# Using devices\n");
}

void tt_sweep_text_rank(tt_strbuf *sb, int rank, int pid, const char *host, int device, const char *bus,
                        const char *info)
{
    tt_strbuf_printf(sb, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s\n", rank, pid, host, device, bus,
                     info);
}

/* where the host ranks' workers run: "# bound (default: a core per rank; ...): rank 0 cpu 0 ...",
 * or "# not bound (default: 3 ranks on this host, 2 cores in this process's CPU mask)" with the
 * reason (tt_comm_bind_note: "default" or the TOPOTUNE_HOST_BIND value chosen, --bind sets it) */
void tt_sweep_text_binding(tt_strbuf *sb, tt_comm **comms, int n)
{
    int any = 0;
    if (n < 1 || !comms[0]) return;
    for (int i = 0; i < n; i++) any |= tt_comm_bound_cpu(comms[i]) >= 0;
    if (!any) {
        tt_strbuf_printf(sb, "# not bound (%s)\n", tt_comm_bind_note(comms[0]));
        return;
    }
    tt_strbuf_printf(sb, "# bound (%s):", tt_comm_bind_note(comms[0]));
    for (int i = 0; i < n; i++)
        if (tt_comm_bound_cpu(comms[i]) >= 0)
            tt_strbuf_printf(sb, " rank %d cpu %d", tt_comm_rank(comms[i]), tt_comm_bound_cpu(comms[i]));
    tt_strbuf_append(sb, "\n");
}

/* the GPU mode's heads with its plan column (as topo-exec has printed them; their columns sit
 * left of the rows' own) */
static void plan_column_header(tt_strbuf *sb, int pred)
{
    if (!pred) {
        tt_strbuf_append(sb, "#\n#                                                    out-of-place                       in-place\n");
        tt_strbuf_append(sb, "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong  algo/proto/ch\n");
        tt_strbuf_append(sb, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)               (us)  (GB/s)  (GB/s)\n");
    } else {
        tt_strbuf_append(sb, "#\n#                                                    out-of-place                                        in-place\n");
        tt_strbuf_append(sb, "#       size         count      type   redop    root     time   algbw   busbw  #wrong     pred    err%     time   algbw   busbw  #wrong     pred    err%  algo/proto/ch\n");
        tt_strbuf_append(sb, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)               (us)                 (us)  (GB/s)  (GB/s)               (us)\n");
    }
}

/* one head line: the five leading columns, then per placement the four of nccl-tests, -I's four, the
 * prediction's two (c: the 15 labels in that order); nccl-tests ends it in a space */
static void head_line(tt_strbuf *sb, const char *const c[15], int iter, int pred)
{
    tt_strbuf_printf(sb, "# %10s  %12s  %8s  %6s  %6s", c[0], c[1], c[2], c[3], c[4]);
    for (int p = 0; p < 2; p++) {
        tt_strbuf_printf(sb, "  %7s  %6s  %6s  %6s", c[5], c[6], c[7], c[8]);
        if (iter) tt_strbuf_printf(sb, "  %7s  %7s  %7s  %7s", c[9], c[10], c[11], c[12]);
        if (pred) tt_strbuf_printf(sb, "  %7s  %6s", c[13], c[14]);
    }
    tt_strbuf_append(sb, " \n");
}

void tt_sweep_text_header(tt_strbuf *sb, int flags)
{
    int pred = (flags & TT_SWEEP_TEXT_PRED) != 0;
    if (flags & TT_SWEEP_TEXT_PLAN_COLUMN) {
        plan_column_header(sb, pred);
        return;
    }
    /* nccl-tests' three heads, column for column and space for space (the trailing ones too: the
     * first line ends in ten spaces, the second in one, the third in seven, where nccl-tests' empty
     * timestamp column is); a prediction adds "pred" and "err%" to each placement */
    int iter = (flags & TT_SWEEP_TEXT_PER_ITER) != 0;
    tt_strbuf_append(sb, "#\n");
    tt_strbuf_printf(sb, "# %10s  %12s  %8s  %6s  %6s", "", "", "", "", "");
    if (iter) /* nccl-tests' -I heads */
        tt_strbuf_printf(sb, "              out-of-place (+ per-iteration)                                %sin-place "
                         "(+ per-iteration)\n", pred ? "                 " : "");
    else
        tt_strbuf_printf(sb, "           out-of-place                       %sin-place          %s\n",
                         pred ? "                 " : "", pred ? "                 " : "");
    static const char *const names[] = {"size", "count", "type", "redop", "root", "time", "algbw", "busbw",
                                        "#wrong", "i_min", "i_max", "i_p99", "i_cv%", "pred", "err%"};
    static const char *const units[] = {"(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)",
                                        "", "(us)", "(us)", "(us)", "(%)", "(us)", "(%)"};
    head_line(sb, names, iter, pred);
    head_line(sb, units, iter, pred);
}

void tt_sweep_text_row(tt_strbuf *sb, const tt_sweep_opts *o, const tt_sweep_result *r, int pred,
                       const char *tail)
{
    char t[32], a[32], b[32];
    tt_coll coll = o->coll;
    const char *redop = (coll == TT_COLL_ALLGATHER || coll == TT_COLL_BROADCAST) ? "none" : tt_redop_name(o->op);
    int root = (coll == TT_COLL_BROADCAST || coll == TT_COLL_REDUCE) ? o->root : -1;
    tt_strbuf_printf(sb, "%12llu  %12zu  %8s  %6s  %6d", (unsigned long long)r->m.bytes, r->m.count,
                     tt_dtype_name(o->dtype), redop, root);
    for (int p = 0; p < 2; p++) {
        fnum(t, sizeof t, 7, r->m.time_us[p]);
        fnum(a, sizeof a, 6, r->m.algbw[p]);
        fnum(b, sizeof b, 6, r->m.busbw[p]);
        if (r->m.wrong[p] < 0)
            tt_strbuf_printf(sb, "  %7s  %6s  %6s    N/A", t, a, b);
        else /* nccl-tests prints the count as a double (%g): 1e+06 wrong elements, not 1000000 */
            tt_strbuf_printf(sb, "  %7s  %6s  %6s  %6g", t, a, b, (double)r->m.wrong[p]);
        exec_iter_stats is;
        if (o->per_iter && exec_iter_stats_of(&r->m, p, o->per_iter_skip, NULL, &is) == 0) {
            char s1[32], s2[32], s3[32], s4[32];
            fnum(s1, sizeof s1, 7, is.min);
            fnum(s2, sizeof s2, 7, is.max);
            fnum(s3, sizeof s3, 7, is.p99);
            fnum(s4, sizeof s4, 7, is.cv);
            tt_strbuf_printf(sb, "  %7s  %7s  %7s  %7s", s1, s2, s3, s4);
        } else if (o->per_iter) {
            tt_strbuf_printf(sb, "  %7s  %7s  %7s  %7s", "N/A", "N/A", "N/A", "N/A");
        }
        if (!pred)
            continue;
        if (r->pred_us[p] > 0 && r->m.time_us[p] > 0) {
            char pu[32], pe[32];
            fnum(pu, sizeof pu, 7, r->pred_us[p]);
            fnum(pe, sizeof pe, 6, 100.0 * (r->pred_us[p] - r->m.time_us[p]) / r->m.time_us[p]);
            tt_strbuf_printf(sb, "  %7s  %6s", pu, pe);
        } else {
            tt_strbuf_printf(sb, "  %7s  %6s", "N/A", "N/A");
        }
    }
    tt_strbuf_printf(sb, "%s\n", tail ? tail : "");
}

void tt_sweep_text_footer(tt_strbuf *sb, int oob, double avg_busbw, const char *note)
{
    /* nccl-tests' "# %-20s : ..." lines; the average line ends in a space when nothing follows */
    tt_strbuf_printf(sb, "# %-20s : %d %s\n", "Out of bounds values", oob, oob ? "FAILED" : "OK");
    tt_strbuf_printf(sb, "# %-20s : %g %s\n", "Avg bus bandwidth", avg_busbw, note ? note : "");
}

void tt_sweep_text_end(tt_strbuf *sb, const char *name, const char *err, int nrows)
{
    if (err)
        tt_strbuf_printf(sb, "# Collective test FAILED after %d size(s): %s\n", nrows, err);
    else
        /* nccl-tests' closing: the concluded line between "#" lines, then the empty line its error
         * report leaves when there was none */
        tt_strbuf_printf(sb, "#\n# Collective test concluded: %s\n#\n\n", name);
}
