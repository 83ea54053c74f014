/* exec_gpu_hier.h - the hierarchical GPU AllReduce's plan, without CUDA (exec_gpu_hier_plan.c):
 * which ranks share a host (from a process-mode communicator's per-pair transports), the
 * intra-host and inter-host groups, and how a count splits into per-local-rank shards and a
 * tail.  The CUDA side (exec_cuda_hier.cu) builds the sub-communicators from it.  Internal. */
#ifndef EXEC_GPU_HIER_H
#define EXEC_GPU_HIER_H

#include <stddef.h>

#include "tt_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXEC_HIER_MAX 64 /* ranks (GPU_MAX_RANKS) */

typedef struct {
    int n;                      /* ranks */
    int nhosts, L;              /* hosts, ranks per host (every host has L) */
    int host_of[EXEC_HIER_MAX]; /* host of every rank (hosts numbered by their lowest rank) */
    int local_of[EXEC_HIER_MAX];/* index of every rank among its host's ranks (ascending order) */
    int member[EXEC_HIER_MAX];  /* member[h * L + i]: rank with local index i on host h */
} exec_gpu_hier_groups;

/* Hosts from a "same host" relation: same[a * n + b] != 0 when ranks a and b share a host (the
 * pair is not on the net transport).  TT_ERR_INVALID when the relation is not an equivalence
 * (a shares with b and b with c, but a not with c: names the ranks), TT_ERR_UNSUPPORTED when the
 * hosts hold different numbers of ranks (names two hosts and their counts). */
tt_status exec_gpu_hier_group(int n, const unsigned char *same, exec_gpu_hier_groups *out);

/* Ranks of the intra-host group of `rank` (its host's, local index order) and of its inter-host
 * group (the ranks with its local index, host order) into out; returns how many (L / nhosts),
 * *me = rank's index in that group. */
int exec_gpu_hier_intra(const exec_gpu_hier_groups *hg, int rank, int *out, int *me);
int exec_gpu_hier_inter(const exec_gpu_hier_groups *hg, int rank, int *out, int *me);

/* What the three phases run for `count` elements on L ranks per host: the first L * shard
 * elements as L shards of `shard` (ReduceScatter, AllReduce of shard `local`, AllGather), the
 * `tail` = count - L * shard (< L) elements after them by AllReduce in both groups. */
typedef struct {
    size_t shard, tail, tail_off;
} exec_gpu_hier_split;
exec_gpu_hier_split exec_gpu_hier_shards(size_t count, int L);

/* 1: the plan is really hierarchical (several hosts with several ranks each); 0: it reduces to a
 * flat AllReduce of the whole communicator (one host, or one rank per host). */
int exec_gpu_hier_applies(const exec_gpu_hier_groups *hg);

#ifdef __cplusplus
}
#endif
#endif
