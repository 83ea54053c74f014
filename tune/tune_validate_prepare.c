/*
 * tune_validate_prepare.c - everything topo-exec --validate decides before it measures: the table
 * (topo-tune's JSON) loaded and checked against the run (its ranks, its nodes against the hosts
 * GPU ranks span, an entry for the collective), the model that ranks the runner-ups, the sizes
 * of the sweep and the plan of every size over the executor's answers (tune_validate.c).
 */
#include <stdio.h>
#include <string.h>

#include "tune_internal.h"

/* the table against the run: its ranks, its nodes (hosts > 0), an entry for the collective */
static tt_status check_table(const tt_validate_run *r, const char *path, const tt_tune_table *tab, int hosts)
{
    if (tab->ranks != r->nranks)
        return tt_error_set(TT_ERR_MISMATCH, "--table %s: the table is for %d ranks (%d node(s)) but this run has %d "
                            "ranks; build it with topo-tune --gpus-per-node/--nodes for %d ranks", path, tab->ranks,
                            tab->nodes, r->nranks, r->nranks);
    /* GPU ranks: the table's nodes are the hosts the ranks span (emulated hosts count), so that a
     * topo-tune --nodes N table is looked up only for N hosts of ranks/N ranks each */
    if (hosts > 0 && tab->nodes != hosts)
        return tt_error_set(TT_ERR_MISMATCH, "--table %s: the table is for %d ranks on %d node(s) but these %d GPU "
                            "ranks span %d host(s); build it with topo-tune --nodes %d --gpus-per-node %d", path,
                            tab->ranks, tab->nodes, r->nranks, hosts, hosts, r->nranks / hosts);
    int has = 0;
    for (int i = 0; i < tab->n; i++) has |= tab->entries[i].coll == r->coll;
    if (!has)
        return tt_error_set(TT_ERR_MISMATCH, "--table %s: no entry for %s (build it with topo-tune -C all or -C %s)",
                            path, tt_coll_name(r->coll), tt_coll_name(r->coll));
    return TT_OK;
}

static tt_status prepare(tt_validate_run *r, const char *table_file, const char *calibration, int gpu_ranks, int hosts,
                         size_t elem_bytes, const tt_validate_engine *e, tt_tune_table *tab, tt_validate_model *m)
{
    tt_status st;
    if (table_file) {
        if (tt_tune_table_load(table_file, tab) != TT_OK) return TT_ERR_PARSE; /* its message names path:line */
        if ((st = check_table(r, table_file, tab, hosts)) != TT_OK) return st;
        snprintf(r->table_desc, sizeof r->table_desc, "%s (%d ranks, %d node(s), model %s, %d entries)", table_file,
                 tab->ranks, tab->nodes, tab->model[0] ? tab->model : "?", tab->n);
        if (r->topo && tt_validate_model_load(m, r->topo, gpu_ranks, r->nranks, calibration, r->model_desc,
                                              sizeof r->model_desc) != TT_OK)
            return TT_ERR_INVALID;
        if (!m->ok)
            snprintf(r->model_desc, sizeof r->model_desc,
                     "none (no --topo): every candidate this engine runs is measured");
    } else {
        if (tt_validate_model_load(m, r->topo, gpu_ranks, r->nranks, calibration, r->model_desc,
                                   sizeof r->model_desc) != TT_OK)
            return TT_ERR_INVALID;
        snprintf(r->table_desc, sizeof r->table_desc,
                 "computed: the model's fastest candidate that this engine runs, per size");
    }
    r->ranked = m->ok;
    if (tt_validate_sizes(r->coll, r->nranks, elem_bytes, r->minb, r->maxb, r->stepb, r->factor, &r->sz, &r->nsz) !=
        TT_OK)
        return TT_ERR_MISMATCH; /* its message says why */
    if (!tt_validate_plan(r->sz, r->nsz, table_file ? tab : NULL, m, r->coll, r->nranks, r->runners_up, e))
        return tt_error_set(TT_ERR_MISMATCH, "--validate: nothing to run: %s at every size of the sweep",
                            r->nsz ? r->sz[0].note : "no size");
    return TT_OK;
}

tt_status tt_validate_prepare(tt_validate_run *r, const char *table_file, const char *calibration, int gpu_ranks,
                              int hosts, size_t elem_bytes, const tt_validate_engine *e)
{
    tt_validate_model m;
    memset(&m, 0, sizeof m);
    tt_tune_table tab;
    memset(&tab, 0, sizeof tab);
    tt_status st = prepare(r, table_file, calibration, gpu_ranks, hosts, elem_bytes, e, &tab, &m);
    tt_tune_table_free(&tab);
    tt_validate_model_free(&m);
    return st;
}
