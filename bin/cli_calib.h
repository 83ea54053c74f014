/*
 * cli_calib.h - the measurement modes of topo-tune: --calibrate, --judge-choices, --expect,
 * --from-measured.
 * See docs/calibration.md.
 */
#ifndef TT_CLI_CALIB_H
#define TT_CLI_CALIB_H

#include "tt_topo.h"
#include "tt_tune.h"

typedef struct {
    const tt_topo *topo;         /* NULL for --judge-choices with --table */
    tt_cluster cl;               /* from the command line */
    int gpn_given;               /* --gpus-per-node was given */
    tt_model_params params;      /* start values (built-in or --calibration) */
    const char *const *files;    /* measurement files */
    int nfiles;
    tt_measure_opts mopts;
    const char *outpath;         /* -o */
    const char *table;           /* --table (judge) */
    double tolerance;            /* judge */
    int among_measured;          /* judge: the model's choice among the measured candidates */
    unsigned colls;              /* --expect without --measured */
    uint64_t min_size, max_size;
    int nccl_only;
    double margin;               /* --from-measured */
    int format;                  /* --from-measured: 0 table, 1 json, 2 nccl-csv; --expect: 0 text, 1 json */
    tt_model_kind model;         /* --model: NCCL rows with NCCL's structure (nccl) or ours */
} tt_cli_calib_args;

int tt_cli_calibrate(const tt_cli_calib_args *a);
int tt_cli_judge(const tt_cli_calib_args *a);
int tt_cli_expect(const tt_cli_calib_args *a);
int tt_cli_from_measured(const tt_cli_calib_args *a);

#endif
