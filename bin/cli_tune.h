/*
 * cli_tune.h - what topo-tune runs once its options are parsed: the table output with the sanity
 * gate (one host, a cluster of different hosts, one table per shape) and the measurement modes
 * (--calibrate, --judge-choices, --expect, --from-measured; docs/calibration.md).  The work is
 * tune's (tt_tune.h); here it is printed and written.
 */
#ifndef TT_CLI_TUNE_H
#define TT_CLI_TUNE_H

#include "tt_topo.h"
#include "tt_tune.h"

typedef struct {
    const char *const *inputs;   /* host files (or one merged <cluster> file) */
    int ninputs;
    const tt_topo_options *topts; /* every host's graph (--gpu-part); NULL = defaults */
    const char *const *files;    /* measurement files */
    int nfiles;
    int nodes;                   /* --nodes, 0 = not given (one node per host) */
    int gpn_given;               /* --gpus-per-node was given */
    tt_cluster_overrides ov;
    tt_model_kind model;
    const tt_model_params *params; /* built-in or --calibration */
    tt_tune_write_opts w;        /* format (measurement modes: 0 text, 1 json, 2 nccl-csv), sweep, --explain */
    int strict;                  /* --strict: a sanity warning exits 1, nothing written */
    const char *outpath;         /* -o */
    tt_measure_opts mopts;
    const char *table;           /* --table (judge) */
    double tolerance;            /* judge */
    int among_measured;          /* judge: the model's choice among the measured candidates */
    double margin;               /* --from-measured */
} tt_cli_tune_args;

/* Tables: sanity warnings on stderr, then the table / explanation / env hints (`x` NULL for
 * one host); several hosts: load, name the differing ones, tune for the slowest; --shapes. */
int tt_cli_tune_write(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a,
                      const tt_tune_json_extra *x);
int tt_cli_tune_hosts(const tt_cli_tune_args *a);
int tt_cli_tune_shapes(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a,
                       const tt_tune_shape *shapes, int n);

/* Measurement modes; topo NULL for --judge-choices --table without --input. */
int tt_cli_calibrate(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a);
int tt_cli_judge(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a);
int tt_cli_expect(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a);
int tt_cli_from_measured(const tt_cli_tune_args *a);

#endif
