/*
 * cli_plan_table.c - topo-exec --table FILE: a topo-tune JSON table turned into the
 * executor's plan rules (tt_plan_rule), for host ranks and GPU mode alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "tt_exec.h"
#include "tt_tune.h"

int tt_cli_plan_table_load(const char *path, int nranks, tt_plan_rule **rules, int *n, char *desc, size_t dl);

/* 0 and the rules, or an exit status after printing the reason (2: the file is unusable). */
int tt_cli_plan_table_load(const char *path, int nranks, tt_plan_rule **rules, int *n, char *desc, size_t dl)
{
    char *buf = NULL;
    size_t len = 0;
    tt_tune_loaded ld;
    memset(&ld, 0, sizeof ld);
    *rules = NULL;
    *n = 0;
    if (tt_read_file(path, 64u << 20, &buf, &len) != TT_OK || tt_tune_table_parse(buf, path, &ld) != TT_OK) {
        free(buf);
        return tt_cli_bad("--table: %s", tt_error_message());
    }
    free(buf);
    if (ld.ranks != nranks) {
        int nr = ld.ranks;
        tt_tune_loaded_free(&ld);
        return tt_cli_bad("--table %s was built for %d ranks but this run has %d (build one for %d ranks with "
                          "topo-tune, or run %d ranks)", path, nr, nranks, nranks, nr);
    }
    tt_plan_rule *r = calloc((size_t)(ld.n ? ld.n : 1), sizeof *r);
    if (!r) {
        tt_tune_loaded_free(&ld);
        return tt_cli_bad("--table: out of memory");
    }
    for (int i = 0; i < ld.n; i++) {
        r[i].coll = ld.entries[i].coll;
        r[i].min_bytes = ld.entries[i].min_bytes;
        r[i].max_bytes = ld.entries[i].max_bytes;
        r[i].plan = TT_PLAN_DEFAULT;
        r[i].plan.algo = ld.entries[i].algo;
        r[i].plan.proto = ld.entries[i].proto;
        r[i].plan.channels = ld.entries[i].channels > 0 ? ld.entries[i].channels : 0;
    }
    snprintf(desc, dl, "%s (%d rules, model %s)", path, ld.n, ld.model[0] ? ld.model : "?");
    *rules = r;
    *n = ld.n;
    tt_tune_loaded_free(&ld);
    return 0;
}
