/*
 * tune_validate.c - the plan of topo-exec --validate: the sizes of the sweep, the model that
 * ranks the candidates (topology, live scan or the host stand-in, plus a calibration), and per
 * size the table's choice with its nearest runner-ups by predicted time (tt_validate_plan), and the
 * plan's fingerprint that process ranks compare.  The caller (bin/) asks the executor which
 * candidates it can run (tt_validate_engine, over exec's tt_exec_runnable_plans) and measures them
 * (tt_sweep_candidates of tt_exec.h); tune_verdict.c judges the measurements.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

tt_status tt_validate_sizes(tt_coll coll, int nranks, size_t elem_bytes, uint64_t minb, uint64_t maxb,
                            uint64_t stepb, long long factor, tt_validate_size **out, int *n)
{
    *out = NULL;
    *n = 0;
    if (elem_bytes == 0 || nranks < 1 || (factor <= 1 && stepb == 0))
        return tt_error_set(TT_ERR_INVALID, "validate: sweep with element size %zu, %d ranks, step %llu, factor %lld",
                            elem_bytes, nranks, (unsigned long long)stepb, factor);
    int per_rank = coll == TT_COLL_ALLGATHER || coll == TT_COLL_REDUCESCATTER;
    tt_validate_size *sz = NULL;
    int cnt = 0, cap = 0;
    for (uint64_t size = minb; size <= maxb; size = factor > 1 ? size * (uint64_t)factor : size + stepb) {
        if (cnt == cap) {
            cap = cap ? cap * 2 : 32;
            tt_validate_size *p = realloc(sz, (size_t)cap * sizeof *p);
            if (!p) {
                free(sz);
                return tt_error_set(TT_ERR_NOMEM, "out of memory");
            }
            sz = p;
        }
        tt_validate_size *z = &sz[cnt++];
        memset(z, 0, sizeof *z);
        z->count = (size_t)(size / elem_bytes / (per_rank ? (size_t)nranks : 1));
        z->bytes = (uint64_t)z->count * elem_bytes * (per_rank ? (uint64_t)nranks : 1);
    }
    *out = sz;
    *n = cnt;
    return TT_OK;
}

/* ---------------------------------------------------------------- model */
void tt_validate_model_free(tt_validate_model *m)
{
    if (!m) return;
    tt_topo_free(m->topo);
    tt_xml_doc_free(m->doc);
    memset(m, 0, sizeof *m);
}

tt_status tt_validate_model_load(tt_validate_model *m, const char *topo, int gpu, int nranks, const char *cal,
                                 char *desc, size_t dl)
{
    memset(m, 0, sizeof *m);
    tt_model_params_default(&m->params);
    tt_status st;
    if (cal && *cal && (st = tt_model_params_load(cal, &m->params)) != TT_OK)
        return tt_error_prefix(st, "--calibration %s", cal);
    const char *what;
    if (topo) {
        if ((st = tt_topo_read_file(topo, &m->doc, NULL)) != TT_OK) return tt_error_prefix(st, "--topo %s", topo);
        what = topo;
    } else if (gpu) {
        tt_scan_options so;
        tt_scan_options_default(&so);
        if ((st = tt_topo_scan_report(&so, &m->doc, NULL)) != TT_OK) return tt_error_prefix(st, "live scan");
        what = "live scan";
    } else {
        /* MODEL ASSUMPTION: host ranks move data through host memory, which the topotune model
         * maps to the PCI link class (tt_topo_synth_host) */
        if ((st = tt_topo_synth_host(nranks, &m->doc)) != TT_OK) return st;
        what = NULL;
    }
    if ((st = tt_topo_from_xml(m->doc, NULL, &m->topo)) != TT_OK ||
        (st = tt_topo_check_one_vendor(m->topo)) != TT_OK || /* NVIDIA and AMD: no one communicator */
        (st = tt_cluster_from_topo(m->topo, &m->base)) != TT_OK)
        return tt_error_prefix(st, "%s", what ? what : TT_TOPO_SYNTH_HOST_SOURCE);
    if (m->base.topo_gpus < nranks && !(gpu && !topo))
        return tt_error_set(TT_ERR_INVALID, "%s has %d GPU(s) but the run has %d ranks on one node (give --topo with "
                            "at least %d GPUs)", what ? what : "stand-in", m->base.topo_gpus, nranks, nranks);
    m->exec_kind = !gpu ? TT_RANKS_HOST : nranks > m->base.topo_gpus ? TT_RANKS_VIRTUAL : TT_RANKS_NONE;
    m->base.gpus_per_node = nranks <= m->base.topo_gpus ? nranks : m->base.topo_gpus;
    m->base.nodes = 1;
    if (m->exec_kind != TT_RANKS_NONE)
        snprintf(desc, dl, "executor-shaped model (%s ranks), %s", tt_exec_kind_name((tt_exec_kind)m->exec_kind),
                 cal && *cal ? cal : "built-in constants");
    else if (what)
        snprintf(desc, dl, "topotune model on %s, %s", what, cal && *cal ? cal : "built-in constants");
    else
        snprintf(desc, dl, "topotune model on the built-in host stand-in (%d PCIe GPUs, one CPU), %s", nranks,
                 cal && *cal ? cal : "built-in constants");
    m->ok = 1;
    return TT_OK;
}

double tt_validate_predict(const tt_validate_model *m, tt_coll coll, uint64_t bytes, int nranks,
                           const tt_validate_cand *c)
{
    if (!m || !m->ok) return -1;
    tt_measurement x;
    memset(&x, 0, sizeof x);
    x.coll = coll;
    x.bytes = bytes;
    x.nranks = nranks;
    x.nodes = 1;
    x.exec_kind = m->exec_kind;
    x.algo = c->algo;
    x.proto = c->proto;
    /* the channels the executor will run (the caller resolved them), so that the model ranks
     * what actually runs: on GPUs the default plan gives small sizes one channel */
    x.channels = c->channels > 0 ? c->channels : c->ran_channels > 0 ? c->ran_channels : 0;
    x.time_us = 1;
    snprintf(x.where, sizeof x.where, "validate %llu bytes", (unsigned long long)bytes);
    double us;
    return tt_calib_predict(m->topo, &m->base, &m->params, &x, &us) == TT_OK && us > 0 ? us : -1;
}

/* ---------------------------------------------------------------- candidates */
static int cmp_pred(const void *a, const void *b)
{
    const tt_validate_cand *x = a, *y = b;
    if ((x->pred_us < 0) != (y->pred_us < 0)) return x->pred_us < 0 ? 1 : -1;
    if (x->pred_us != y->pred_us) return x->pred_us < y->pred_us ? -1 : 1;
    if (x->algo != y->algo) return (int)x->algo - (int)y->algo;
    return (int)x->proto - (int)y->proto;
}

void tt_validate_rank(const tt_validate_model *m, tt_coll coll, uint64_t bytes, int nranks, tt_validate_cand *c,
                      int n)
{
    for (int k = 0; k < n; k++) c[k].pred_us = tt_validate_predict(m, coll, bytes, nranks, &c[k]);
    if (m && m->ok && n > 1) qsort(c, (size_t)n, sizeof *c, cmp_pred);
}

int tt_validate_plan_size(tt_validate_size *z, const tt_validate_cand *choice, const tt_validate_cand *ranked,
                          int nranked, int model_ok, int runners_up)
{
    z->nc = 0;
    tt_validate_cand ch;
    if (choice) {
        ch = *choice;
    } else {
        if (nranked == 0 || ranked[0].pred_us < 0) {
            snprintf(z->note, sizeof z->note, "the model predicts none of the candidates this engine runs");
            return 0;
        }
        ch = ranked[0];
    }
    z->c[z->nc++] = ch;
    int limit = model_ok ? runners_up : TT_VALIDATE_MAXC - 1;
    for (int k = 0; k < nranked && z->nc - 1 < limit && z->nc < TT_VALIDATE_MAXC; k++)
        if (ranked[k].algo != ch.algo || ranked[k].proto != ch.proto) z->c[z->nc++] = ranked[k];
    return z->nc;
}

int tt_validate_plan(tt_validate_size *sz, int n, const tt_tune_table *tab, const tt_validate_model *m, tt_coll coll,
                     int nranks, int runners_up, const tt_validate_engine *e)
{
    int judged = 0;
    for (int i = 0; i < n; i++) {
        tt_validate_size *z = &sz[i];
        tt_validate_cand run[TT_VALIDATE_MAXC];
        int nrun = e->candidates(e->user, z->count, run, TT_VALIDATE_MAXC);
        if (nrun > TT_VALIDATE_MAXC) nrun = TT_VALIDATE_MAXC;
        tt_validate_rank(m, coll, z->bytes, nranks, run, nrun);
        if (z->count == 0) {
            snprintf(z->note, sizeof z->note, "size below one element per rank");
            continue;
        }
        tt_validate_cand choice, *cp = NULL;
        if (tab) {
            const tt_tune_entry *te = tt_tune_table_find(tab, coll, z->bytes);
            if (!te) {
                snprintf(z->note, sizeof z->note, "the table has no entry for this size");
                continue;
            }
            choice = (tt_validate_cand){.algo = te->algo, .proto = te->proto, .channels = te->channels};
            char why[400] = "";
            if (!e->choice_runs(e->user, z->count, &choice, why, sizeof why)) {
                char cn[64];
                tt_validate_cand_name(cn, sizeof cn, &choice);
                snprintf(z->note, sizeof z->note, "table choice %s not runnable here: %s", cn, why);
                continue;
            }
            choice.pred_us = tt_validate_predict(m, coll, z->bytes, nranks, &choice);
            cp = &choice;
        }
        judged += tt_validate_plan_size(z, cp, run, nrun, m && m->ok, runners_up) > 0;
    }
    return judged;
}

int64_t tt_validate_fingerprint(const tt_validate_size *sz, int n, const long long *settings, int nsettings)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a, one 64-bit value at a time */
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
    MIX(n);
    for (int i = 0; i < nsettings; i++) MIX(settings[i]);
    for (int i = 0; i < n; i++) {
        MIX(sz[i].bytes);
        MIX(sz[i].nc);
        for (int k = 0; k < sz[i].nc; k++) {
            MIX(sz[i].c[k].algo);
            MIX(sz[i].c[k].proto);
            MIX(sz[i].c[k].channels);
        }
    }
#undef MIX
    return (int64_t)(h >> 2);
}
