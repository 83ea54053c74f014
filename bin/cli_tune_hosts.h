/* cli_tune_hosts.h - topo-tune's table output with the sanity gate, for one host file or a
 * cluster of different hosts (several --input files or a merged <cluster> file). */
#ifndef CLI_TUNE_HOSTS_H
#define CLI_TUNE_HOSTS_H

#include "tt_topo.h"
#include "tt_tune.h"
#include "tt_tune.h"

typedef struct {
    const char *const *inputs;  /* host files (or one merged <cluster> file) */
    int ninputs;
    int nodes;                  /* --nodes, 0 = not given (one node per host) */
    tt_cluster_overrides ov;
    tt_model_kind model;
    const tt_model_params *params;
    unsigned colls;
    uint64_t min_size, max_size, explain_bytes;
    int nccl_only, fmt;         /* fmt: 0 table, 1 json, 2 nccl-csv, 3 env */
    int explain;                /* 1: --explain explain_bytes */
    int strict;                 /* --strict: a sanity warning exits 1, nothing written */
    const char *outpath;
    double keep_margin;         /* >= 0: conservative table for NCCL (tt_tune_table_build_keep_nccl); < 0 off */
} tt_cli_tune_args;

/* Build the context for (topo, cluster), run the sanity gate (warnings on stderr), write the
 * table / explanation / env hints.  `x` NULL for one host. */
int tt_cli_tune_write(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a,
                      const tt_tune_json_extra *x);
/* Several hosts: load, name the differing ones, pick the slowest, tune for it. */
int tt_cli_tune_hosts(const tt_cli_tune_args *a);

#endif
