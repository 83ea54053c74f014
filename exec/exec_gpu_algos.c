/*
 * exec_gpu_algos.c - the algorithms one GPU communicator runs for a collective: the GPU mode's
 * list of the capability table (tt_exec_algos, exec_caps.c) and, for AllReduce, the hierarchical
 * plan where this communicator's own resolve says it applies (it is not in the mode-wide table
 * because it depends on the communicator: exec_cuda_comm.cu).  Public calls only, so a build
 * without CUDA answers through the stubs (no communicator: nothing).
 */
#include "tt_exec.h"

int tt_gpu_comm_algos(const tt_gpu_comm *g, tt_coll coll, tt_algo *out, int max)
{
    if (!g) return 0;
    tt_algo a[TT_ALGO_COUNT + 1];
    int n = tt_exec_algos(TT_EXEC_GPU, coll, tt_gpu_comm_nranks(g), a, TT_ALGO_COUNT);
    if (n > TT_ALGO_COUNT) n = TT_ALGO_COUNT;
    if (coll == TT_COLL_ALLREDUCE) {
        /* one host or one rank per host: the executor resolves hierarchical to the flat plan, which
         * is not another algorithm; any count shows it (the layout does not depend on the size) */
        tt_plan req = TT_PLAN_DEFAULT, eff;
        req.algo = TT_ALGO_HIER;
        if (tt_gpu_comm_resolve_plan(g, coll, 1024, TT_FLOAT, &req, &eff) == TT_OK && eff.algo == TT_ALGO_HIER)
            a[n++] = TT_ALGO_HIER;
    }
    for (int i = 0; out && i < n && i < max; i++) out[i] = a[i];
    return n;
}
