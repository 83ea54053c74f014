/* exec_algos.c - the host executor's dispatch table: the schedule (exec_algo_*.c) that runs each
 * (algorithm, collective) the registry's host rows name (common_algos.c), keyed by the same id.
 * An (algorithm, collective) without a schedule is an error of exec_run_op (exec_run.c), never
 * another algorithm (tests/unit/test_exec_caps.c checks that every host row has a schedule and
 * every schedule a row). */
#include "exec_internal.h"

static const struct {
    tt_algo algo;
    exec_schedule run[TT_COLL_COUNT];
} schedules[] = {
    {TT_ALGO_TREE, {[TT_COLL_ALLREDUCE] = exec_tree_allreduce}},
    {TT_ALGO_RING,
     {[TT_COLL_BROADCAST] = exec_ring_broadcast, [TT_COLL_REDUCE] = exec_ring_reduce,
      [TT_COLL_ALLGATHER] = exec_ring_allgather, [TT_COLL_REDUCESCATTER] = exec_ring_reducescatter,
      [TT_COLL_ALLREDUCE] = exec_ring_allreduce}},
    {TT_ALGO_RHD, {[TT_COLL_ALLREDUCE] = exec_rhd_allreduce}},
    {TT_ALGO_RD, {[TT_COLL_ALLREDUCE] = exec_rd_allreduce}},
    {TT_ALGO_HIER, {[TT_COLL_ALLREDUCE] = exec_hier_allreduce}},
};

exec_schedule exec_algo_schedule(tt_algo algo, tt_coll coll)
{
    if ((unsigned)coll >= TT_COLL_COUNT)
        return NULL;
    for (size_t i = 0; i < sizeof schedules / sizeof *schedules; i++)
        if (schedules[i].algo == algo)
            return schedules[i].run[coll];
    return NULL;
}
