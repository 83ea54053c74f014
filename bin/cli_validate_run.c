/*
 * cli_validate_run.c - topo-exec --validate: tune's validation loop (tt_validate_measure: per
 * size the candidates in rounds, the verdicts; tt_validate_report_*: the text and the -J
 * document) over exec's measurement of candidates: tt_sweep_candidates (any engine) or
 * tt_sweep_candidates_host (host ranks, threads or one per process).  This file hands one round
 * of a size's candidates to exec, prints the progress line, the report as it comes, and names
 * the rank that refused or planned differently (tt_comm_agree, tune's tt_validate_fingerprint).
 * Host ranks: tt_cli_validate_host; GPU ranks: cli_validate_gpu.c.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_validate_internal.h"

void vld_init(vctx *x, const tt_cli_validate_opts *v, const tt_cli_sweep *s, int nranks, const char *transport,
              int print)
{
    memset(x, 0, sizeof *x);
    x->v = v;
    x->s = s;
    x->print = print;
    x->r = (tt_validate_run){.coll_name = tt_sweep_coll_name(s->coll), .coll = s->coll,
                             .type_name = tt_dtype_name(s->dtype), .op_name = tt_redop_name(s->op),
                             .root = s->root, .nranks = nranks, .transport = transport, .minb = s->minb,
                             .maxb = s->maxb, .stepb = s->stepb, .factor = s->factor, .warmup = s->warmup,
                             .iters = s->iters, .agg = s->agg, .check = s->check, .chunk_bytes = s->chunk_bytes,
                             .margin = v->margin, .runners_up = v->runners_up, .rounds = v->rounds, .topo = v->topo,
                             .json = s->json, .argc = s->argc, .argv = s->argv};
    tt_validate_start_time(x->r.start, sizeof x->r.start);
}

tt_sweep_opts vld_sweep_opts(const tt_cli_sweep *s)
{
    return (tt_sweep_opts){.coll = s->coll, .dtype = s->dtype, .op = s->op, .root = s->root, .minb = s->minb,
                           .maxb = s->maxb, .stepb = s->stepb, .factor = s->factor, .iters = s->iters,
                           .warmup = s->warmup, .agg = s->agg, .check = s->check, .plan = TT_PLAN_DEFAULT};
}

/* ---------------------------------------------------------------- printing */
static void put(tt_strbuf *b, int flush)
{
    if (b->data) fputs(b->data, stdout);
    if (flush) fflush(stdout);
    tt_strbuf_free(b);
    tt_strbuf_init(b);
}

void vld_print_header(const vctx *x)
{
    tt_strbuf b;
    tt_strbuf_init(&b);
    tt_validate_report_header(&b, &x->r);
    put(&b, 1);
}

/* ---------------------------------------------------------------- measurements (exec) */
typedef struct {
    vctx *x;
    tt_sweep_engine *e;  /* or NULL: host ranks comms */
    tt_comm **comms;
    int nlocal;
    size_t chunk_bytes;
    int i;               /* the size being measured */
} vmeasure;

static void on_progress(void *user, int size, int nsizes, int k, int round)
{
    const vmeasure *m = user;
    (void)size, (void)nsizes, (void)round;
    if (!m->x->tty) return;
    char cn[64];
    const tt_validate_size *z = &m->x->r.sz[m->i];
    tt_validate_cand_name(cn, sizeof cn, &z->c[k]);
    fprintf(stderr, "\r\033[K# validate %d/%d: %llu bytes, %s ...", m->i + 1, m->x->r.nsz,
            (unsigned long long)z->bytes, cn);
    fflush(stderr);
}

/* one round of size i's candidates c, as sweep rows */
static tt_status measure(void *user, const tt_validate_run *r, int i, int round, tt_validate_cand *c)
{
    vmeasure *m = user;
    const tt_validate_size *z = &r->sz[i];
    (void)round;
    tt_sweep_cand sc[VMAXC];
    memset(sc, 0, sizeof sc);
    for (int k = 0; k < z->nc; k++) sc[k].plan = (tt_plan){c[k].algo, c[k].proto, c[k].channels, m->chunk_bytes};
    tt_sweep_cand_size ms = {z->bytes, z->count, z->nc, sc};
    tt_sweep_cands_opts co = {vld_sweep_opts(m->x->s), 1, on_progress, NULL, m};
    m->i = i;
    tt_status st = m->e ? tt_sweep_candidates(m->e, &co, &ms, 1)
                        : tt_sweep_candidates_host(m->comms, m->nlocal, &co, &ms, 1);
    for (int k = 0; k < z->nc; k++)
        for (int p = 0; p < 2; p++) {
            c[k].t[p] = sc[k].time_us[p];
            c[k].algbw[p] = sc[k].algbw[p];
            c[k].busbw[p] = sc[k].busbw[p];
            c[k].wrong[p] = sc[k].wrong[p];
        }
    if (st != TT_OK && m->x->tty) fprintf(stderr, "\r\033[K");
    return st;
}

static void on_judged(void *user, const tt_validate_run *r, int i)
{
    const vmeasure *m = user;
    if (!m->x->print) return;
    if (m->x->tty) fprintf(stderr, "\r\033[K");
    tt_strbuf b;
    tt_strbuf_init(&b);
    tt_validate_report_size(&b, &r->sz[i]);
    put(&b, 1);
}

int vld_measure(vctx *x, tt_sweep_engine *e, tt_comm **comms, int nlocal, size_t chunk_bytes)
{
    vmeasure m = {x, e, comms, nlocal, chunk_bytes, 0};
    tt_validate_measurer vm = {measure, on_judged, &m};
    return tt_validate_measure(&x->r, &vm) ? VX_RUNTIME : VX_OK;
}

/* ---------------------------------------------------------------- report */
int vld_finish(vctx *x, int rc)
{
    if (x->print) {
        tt_strbuf b;
        tt_strbuf_init(&b);
        tt_validate_report_summary(&b, &x->r);
        put(&b, !x->r.failed);
        tt_validate_report_oob(&b, &x->r);
        put(&b, 0);
    }
    rc = tt_validate_exit_code(&x->r, rc);
    if (x->print && x->s->json) {
        cJSON *j = tt_validate_report_json(&x->r, rc);
        tt_status st = j ? tt_cli_write_json(x->s->json, j) : tt_error_set(TT_ERR_NOMEM, "out of memory");
        cJSON_Delete(j);
        if (st != TT_OK) {
            tt_cli_bad("-J %s: %s", x->s->json, tt_error_message());
            if (!rc) rc = VX_RUNTIME;
        }
    }
    return rc;
}

/* ---------------------------------------------------------------- process ranks */
int vld_agree(const vctx *x, tt_comm *c, int rc)
{
    const tt_cli_sweep *s = x->s;
    const long long settings[] = {s->coll, s->dtype, s->op, s->root, s->iters, s->warmup, s->agg, s->check,
                                  x->v->rounds};
    int me = tt_comm_rank(c), who, code;
    int64_t fp = tt_validate_fingerprint(x->r.sz, x->r.nsz, settings, (int)(sizeof settings / sizeof *settings));
    if (tt_comm_agree(c, rc, fp, &who, &code) != TT_OK) {
        tt_cli_bad("rank %d: %s", me, tt_error_message());
        return VX_RUNTIME;
    }
    if (who < 0) return VX_OK;
    if (code) { /* that rank refused: its message is its own */
        if (me == 0 && who != 0)
            tt_cli_bad("nothing measured: rank %d refused to validate (exit %d; its message is on its standard error)",
                       who, code);
        return code;
    }
    if (me == 0 || me == who)
        tt_cli_bad("rank %d: the ranks derived different candidates to validate (rank %d's plan differs from rank 0's); "
                   "give every rank the same --table/--topo/--calibration and sweep options", who, who);
    return VX_USAGE;
}

/* ---------------------------------------------------------------- host ranks */
int tt_cli_validate_host(const tt_cli_validate_opts *v, const tt_cli_sweep *s, tt_comm **comms, int nlocal)
{
    vctx x;
    vld_init(&x, v, s, tt_comm_nranks(comms[0]), tt_comm_transport(comms[0]), tt_comm_rank(comms[0]) == 0);
    vengine e = {0, comms[0], NULL};
    int rc = vld_plan_sizes(&x, &e);
    if (nlocal == 1) rc = vld_agree(&x, comms[0], rc); /* process ranks: every rank the same plan */
    if (!rc) {
        x.tty = s->progress && x.print && isatty(2);
        if (x.print) vld_print_header(&x);
        rc = vld_measure(&x, NULL, comms, nlocal, s->chunk_bytes);
        if (x.r.failed) tt_cli_bad("%s", x.r.err);
        rc = vld_finish(&x, rc);
    }
    free(x.r.sz);
    return rc;
}
