/*
 * exec_measure_internal.h - what the measuring files share (exec_measure*.c): the clock, the
 * GPU engine's launcher (topotune's kernels or NCCL) and two CUDA runtime calls the NCCL
 * engine needs (exec_cuda_comm.cu; exec_gpu_stub.c without CUDA).  Internal.
 */
#ifndef EXEC_MEASURE_INTERNAL_H
#define EXEC_MEASURE_INTERNAL_H

#include "tt_exec.h"

#ifdef __cplusplus
extern "C" {
#endif


/* How the GPU engine launches one AllReduce on every local rank and waits for them. */
typedef struct {
    const char *name;
    tt_status (*launch)(void *ctx, tt_gpu_comm *g, const void *const *src, void *const *dst, size_t count,
                        const tt_sweep_opts *o);
    tt_status (*sync)(void *ctx, tt_gpu_comm *g);
    void (*release)(void *ctx);
    void *ctx;
} exec_measure_launcher;

/* The GPU engine over a launcher (NULL: topotune's tt_gpu_allreduce). */
tt_status exec_measure_engine_gpu_with(tt_sweep_engine *e, tt_gpu_comm *g, tt_comm *host,
                                       const exec_measure_launcher *l);

/* Run fn on every local host rank: one thread per communicator (n = 1: in the calling thread, e.g.
 * one rank per process); keep = 1 for comms[0], the rank that keeps results.  Returns the first
 * failure of any rank with its message (set again in the calling thread). */
typedef tt_status (*exec_rank_fn)(tt_comm *c, int keep, void *user);
tt_status exec_host_ranks(tt_comm **comms, int n, exec_rank_fn fn, void *user);

/* nccl-tests' -I statistics of one placement of a row (exec_measure_json.c): the max over ranks of
 * each iteration (max_us, iter_n values; rows of procs processes: ranks / procs each), and over the
 * iterations after skip min, max, avg, p50, p95, p99, population stdev and cv% (stdev / avg).
 * 0, or -1 without iteration times. */
typedef struct {
    double min, max, avg, p50, p95, p99, stdev, cv;
} exec_iter_stats;
int exec_iter_stats_of(const tt_sweep_row *m, int place, int skip, double *max_us, exec_iter_stats *s);

/* CUDA runtime: make `device` current / wait for all its work (TT_ERR_UNSUPPORTED without CUDA). */
tt_status exec_gpu_set_device(int device);
tt_status exec_gpu_device_sync(int device);

#ifdef __cplusplus
}
#endif
#endif
