/*
 * exec_plan_table.c - plans per message size from a tuning table (docs/exec.md, "Plans").
 *
 * A table is a list of tuning-table entries (tt_tune_entry: collective, [min_bytes, max_bytes],
 * algorithm, protocol, channels); the first entry of
 * the call's collective whose range holds the call's bytes supplies the fields the explicit
 * plan (tt_comm_set_plan, NCCL_ALGO/NCCL_PROTO in topo-exec) leaves at default.  A rule the
 * communicator cannot run is not silently replaced: resolving reports it (see
 * tt_comm_resolve_plan) unless the caller asked to fall back (TT_PLAN_TABLE_FALLBACK).
 */
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

tt_status tt_comm_set_plan_table(tt_comm *comm, const tt_tune_entry *rules, int n, unsigned flags)
{
    if (!comm || n < 0 || (n > 0 && !rules))
        return tt_error_set(TT_ERR_INVALID, "tt_comm_set_plan_table: NULL communicator or rules");
    for (int i = 0; i < n; i++) {
        const tt_tune_entry *r = &rules[i];
        if ((unsigned)r->coll >= TT_COLL_COUNT || r->min_bytes > r->max_bytes ||
            (r->algo != TT_ALGO_DEFAULT && (unsigned)r->algo >= TT_ALGO_COUNT) ||
            (r->proto != TT_PROTO_DEFAULT && (unsigned)r->proto >= TT_PROTO_COUNT) || r->channels < 0)
            return tt_error_set(TT_ERR_INVALID, "plan table rule %d: collective, byte range, algorithm, protocol or "
                                "channels out of range", i);
    }
    tt_tune_entry *copy = NULL;
    if (n > 0) {
        copy = malloc((size_t)n * sizeof *copy);
        if (!copy) return tt_error_set(TT_ERR_NOMEM, "plan table: out of memory");
        memcpy(copy, rules, (size_t)n * sizeof *copy);
    }
    free(comm->rules);
    comm->rules = copy;
    comm->nrules = n;
    comm->rule_flags = flags;
    return TT_OK;
}
