/* common_algos.c - the algorithm registry: one row per algorithm (name, label, what each executor
 * runs of it, the default-plan rule).  The names and parsers (common_names.c), the executors'
 * capability query (exec/exec_caps.c), their default plan and the executor-shaped model's copy of
 * it all read this table; the schedules are in exec/exec_algos.c, the cost hooks in
 * tune/tune_algos.c (docs/contributing.md, "Adding an algorithm"). */
#include "tt_common.h"

#define AR TT_COLL_BIT(TT_COLL_ALLREDUCE)
#define NONE {0, 0, 0}

/* enum order: row i describes algorithm i */
static const tt_algo_info algos[TT_ALGO_COUNT] = {
    /* algo, name, label, {host, GPU}: {collectives, pow2, list order}, small_pref, small_min_ranks, fallback */
    {TT_ALGO_TREE, "tree", "tree", {{AR, 0, 1}, {AR, 0, 2}}, 2, 3, 0},
    {TT_ALGO_RING, "ring", "ring", {{TT_COLLS_ALL, 0, 2}, {TT_COLLS_ALL, 0, 1}}, 0, 0, 1},
    {TT_ALGO_COLLNET_DIRECT, "collnet_direct", "collnet_direct", {NONE, NONE}, 0, 0, 0},
    {TT_ALGO_COLLNET_CHAIN, "collnet_chain", "collnet_chain", {NONE, NONE}, 0, 0, 0},
    {TT_ALGO_NVLS, "nvls", "nvls", {NONE, NONE}, 0, 0, 0},
    {TT_ALGO_NVLS_TREE, "nvls_tree", "nvls_tree", {NONE, NONE}, 0, 0, 0},
    {TT_ALGO_PAT, "pat", "pat", {NONE, NONE}, 0, 0, 0},
    {TT_ALGO_RHD, "rhd", "halving-doubling", {{AR, 1, 3}, NONE}, 0, 0, 0},
    {TT_ALGO_RD, "rd", "recursive-doubling", {{AR, 1, 4}, NONE}, 1, 0, 0},
    /* GPU: the hierarchical plan depends on the communicator (exec_gpu_algos.c), not in this table */
    {TT_ALGO_HIER, "hier", "hierarchical", {{AR, 0, 5}, NONE}, 0, 0, 0},
};

const tt_algo_info *tt_algo_info_of(tt_algo a)
{
    return (unsigned)a < TT_ALGO_COUNT ? &algos[a] : NULL;
}

static int pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

int tt_algo_runs(tt_algo a, int run, tt_coll coll, int nranks)
{
    const tt_algo_info *r = tt_algo_info_of(a);
    if (!r || run < 0 || run >= TT_RUN_COUNT || (unsigned)coll >= TT_COLL_COUNT)
        return 0;
    const tt_algo_run *x = &r->run[run];
    return (x->colls & TT_COLL_BIT(coll)) && (!x->pow2 || nranks <= 0 || pow2(nranks));
}

tt_algo tt_algo_default(int run, tt_coll coll, uint64_t bytes, int nranks)
{
    tt_algo fallback = TT_ALGO_RING;
    for (int i = 0; i < TT_ALGO_COUNT; i++)
        if (algos[i].fallback)
            fallback = algos[i].algo;
    if (coll != TT_COLL_ALLREDUCE || bytes > TT_PLAN_SMALL_MAX)
        return fallback;
    for (int pref = 1; pref <= TT_ALGO_COUNT; pref++)
        for (int i = 0; i < TT_ALGO_COUNT; i++)
            if (algos[i].small_pref == pref && nranks >= algos[i].small_min_ranks &&
                tt_algo_runs(algos[i].algo, run, coll, nranks))
                return algos[i].algo;
    return fallback;
}

tt_proto tt_proto_default(int run, uint64_t bytes)
{
    return run == TT_RUN_GPU && bytes <= TT_PLAN_SMALL_MAX ? TT_PROTO_LL : TT_PROTO_SIMPLE;
}
