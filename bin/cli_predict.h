/*
 * cli_predict.h - the prediction source of topo-exec --predict (bin/cli_predict.c): the topotune
 * model's time for a row, configured by the environment (TOPOTUNE_PREDICT_TOPO,
 * TOPOTUNE_CALIBRATION, TOPOTUNE_PREDICT_NODES).  See docs/cli-topo-exec.md, "Predicted time".
 * Tests link a fake object with these three functions in place of cli_predict.o.
 */
#ifndef TT_CLI_PREDICT_H
#define TT_CLI_PREDICT_H

#include <stddef.h>

/* 1 when TOPOTUNE_PREDICT_TOPO names a usable topology (loaded once), else 0. */
int topo_exec_predict_enabled(void);
/* Predicted time of a host-rank row (one channel): 0 and *us, or non-zero for "no prediction". */
int topo_exec_predict_us(const char *coll, size_t bytes, int nranks, const char *algo, const char *proto, double *us);
/* The same on `channels` channels (GPU mode: the plan's; 0 = the model's best for NCCL's choice),
 * for rows of `kind` (tt_exec_kind: TT_RANKS_GPU, TT_RANKS_VIRTUAL for ranks sharing one GPU,
 * TT_RANKS_NONE for NCCL's runs): our executor's rows take the executor-shaped model. */
int topo_exec_predict_plan_us(const char *coll, size_t bytes, int nranks, const char *algo, const char *proto,
                              int channels, int kind, double *us);

#endif
