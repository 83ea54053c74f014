/*
 * exec_measure_nccl.c - NCCL as a measuring engine (docs/exec.md, "Measuring"): libnccl.so.2
 * loaded with dlopen (no build-time dependency).  Thread mode: one NCCL communicator per rank of
 * a tt_gpu_comm (ncclCommInitAll on its devices), each collective launched by one thread for
 * every GPU inside ncclGroupStart/End.  Process mode (one GPU rank per process, the ranks of a
 * host communicator on one or several hosts): rank 0 makes NCCL's unique id, our host
 * communicator broadcasts it (NCCL's own bootstrap is not used for that step), every process
 * calls ncclCommInitRank.  All five collectives.  Buffers, timing and checks are the GPU
 * engine's (exec_measure_gpu.c).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "exec_measure_internal.h"

#define NCCL_MAX_RANKS 64
#define NCCL_ID_BYTES 128 /* ncclUniqueId: 128 opaque bytes (nccl.h, NCCL_UNIQUE_ID_BYTES) */

struct nccl_id {
    char b[NCCL_ID_BYTES];
};

typedef struct {
    void *h;
    int (*comm_init_all)(void **comms, int ndev, const int *devlist);
    int (*get_unique_id)(void *id);
    int (*comm_init_rank)(void **comm, int nranks, /* ncclUniqueId by value: */ struct nccl_id id, int rank);
    int (*all_reduce)(const void *, void *, size_t, int, int, void *, void *);
    int (*all_gather)(const void *, void *, size_t, int, void *, void *);
    int (*reduce_scatter)(const void *, void *, size_t, int, int, void *, void *);
    int (*broadcast)(const void *, void *, size_t, int, int, void *, void *);
    int (*reduce)(const void *, void *, size_t, int, int, int, void *, void *);
    int (*comm_destroy)(void *);
    const char *(*err_string)(int);
    int (*group_start)(void);
    int (*group_end)(void);
    int n;
    int dev[NCCL_MAX_RANKS];
    void *comms[NCCL_MAX_RANKS];
} nccl_eng;

static tt_status nccl_load(nccl_eng *n)
{
    n->h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!n->h) return tt_error_set(TT_ERR_UNSUPPORTED, "cannot load libnccl.so.2: %s", dlerror());
    *(void **)&n->comm_init_all = dlsym(n->h, "ncclCommInitAll");
    *(void **)&n->all_reduce = dlsym(n->h, "ncclAllReduce");
    *(void **)&n->get_unique_id = dlsym(n->h, "ncclGetUniqueId");
    *(void **)&n->comm_init_rank = dlsym(n->h, "ncclCommInitRank");
    *(void **)&n->all_gather = dlsym(n->h, "ncclAllGather");
    *(void **)&n->reduce_scatter = dlsym(n->h, "ncclReduceScatter");
    *(void **)&n->broadcast = dlsym(n->h, "ncclBroadcast");
    *(void **)&n->reduce = dlsym(n->h, "ncclReduce");
    *(void **)&n->comm_destroy = dlsym(n->h, "ncclCommDestroy");
    *(void **)&n->err_string = dlsym(n->h, "ncclGetErrorString");
    *(void **)&n->group_start = dlsym(n->h, "ncclGroupStart");
    *(void **)&n->group_end = dlsym(n->h, "ncclGroupEnd");
    if (!n->comm_init_all || !n->get_unique_id || !n->comm_init_rank || !n->all_reduce || !n->all_gather ||
        !n->reduce_scatter || !n->broadcast || !n->reduce || !n->comm_destroy || !n->err_string ||
        !n->group_start || !n->group_end) {
        dlclose(n->h);
        n->h = NULL;
        return tt_error_set(TT_ERR_UNSUPPORTED, "libnccl.so.2 lacks one of ncclCommInitAll/ncclGetUniqueId/"
                                                "ncclCommInitRank/ncclAllReduce/ncclAllGather/ncclReduceScatter/"
                                                "ncclBroadcast/ncclReduce/ncclCommDestroy/ncclGetErrorString/"
                                                "ncclGroupStart/ncclGroupEnd (NCCL 2.x needed)");
    }
    return TT_OK;
}

/* NCCL's enum values (nccl.h): types int8 uint8 int32 uint32 int64 uint64 float16 float32 float64
 * bfloat16; ops sum prod max min avg */
static int nccl_type(tt_dtype t)
{
    static const int m[TT_NDTYPES] = {0, 1, 2, 3, 4, 5, 6, 9, 7, 8};
    return m[t];
}
static int nccl_op(tt_redop o)
{
    static const int m[TT_NREDOPS] = {0, 1, 3, 2, 4};
    return m[o];
}

/* one collective on one rank's communicator (counts as tt_gpu_collective's: AllGather sendcount,
 * ReduceScatter recvcount per rank - NCCL's own conventions) */
static int nccl_one(nccl_eng *n, void *comm, const void *src, void *dst, size_t count, const tt_sweep_opts *o)
{
    int t = nccl_type(o->dtype), op = nccl_op(o->op);
    switch (o->coll) {
    case TT_COLL_ALLGATHER: return n->all_gather(src, dst, count, t, comm, NULL);
    case TT_COLL_REDUCESCATTER: return n->reduce_scatter(src, dst, count, t, op, comm, NULL);
    case TT_COLL_BROADCAST: return n->broadcast(src, dst, count, t, o->root, comm, NULL);
    case TT_COLL_REDUCE: return n->reduce(src, dst, count, t, op, o->root, comm, NULL);
    default: return n->all_reduce(src, dst, count, t, op, comm, NULL);
    }
}

/* one thread drives every local GPU: the calls of one collective must be grouped, or the first
 * rank's call waits for the others */
static tt_status nccl_launch(void *ctx, tt_gpu_comm *g, const void *const *src, void *const *dst, size_t count,
                             const tt_sweep_opts *o)
{
    (void)g;
    nccl_eng *n = ctx;
    tt_status st = TT_OK;
    n->group_start();
    for (int r = 0; r < n->n; r++) {
        exec_gpu_set_device(n->dev[r]);
        int e = nccl_one(n, n->comms[r], src[r], dst[r], count, o);
        if (e && st == TT_OK) st = tt_error_set(TT_ERR_INTERNAL, "NCCL %s: %s", tt_coll_label(o->coll), n->err_string(e));
    }
    int e = n->group_end();
    if (e && st == TT_OK) st = tt_error_set(TT_ERR_INTERNAL, "ncclGroupEnd: %s", n->err_string(e));
    return st;
}

/* wait for every rank's GPU */
static tt_status nccl_sync(void *ctx, tt_gpu_comm *g)
{
    (void)g;
    nccl_eng *n = ctx;
    tt_status st = TT_OK;
    for (int r = 0; r < n->n; r++) {
        tt_status s2 = exec_gpu_set_device(n->dev[r]);
        if (s2 == TT_OK) s2 = exec_gpu_device_sync(n->dev[r]);
        if (s2 != TT_OK && st == TT_OK) st = s2;
    }
    return st;
}

static void nccl_release(void *ctx)
{
    nccl_eng *n = ctx;
    if (!n) return;
    for (int r = 0; r < n->n; r++)
        if (n->comms[r]) n->comm_destroy(n->comms[r]);
    /* libnccl stays loaded: its threads may outlive the communicators */
    free(n);
}

/* process mode: NCCL's unique id from rank 0 through our host communicator, then
 * ncclCommInitRank on this process's GPU */
static tt_status nccl_init_procs(nccl_eng *n, tt_gpu_comm *g, tt_comm *host)
{
    int me = tt_comm_rank(host), nr = tt_comm_nranks(host);
    struct nccl_id id;
    memset(&id, 0, sizeof id);
    tt_status st;
    if (me == 0) {
        int e = n->get_unique_id(&id);
        if (e) return tt_error_set(TT_ERR_INTERNAL, "rank 0: ncclGetUniqueId: %s", n->err_string(e));
    }
    if ((st = tt_broadcast(&id, &id, sizeof id, TT_UINT8, 0, host)) != TT_OK ||
        (st = tt_comm_wait(host)) != TT_OK)
        return tt_error_prefix(st, "rank %d: sending NCCL's unique id", me);
    n->n = 1;
    n->dev[0] = tt_gpu_comm_device(g, me);
    if ((st = exec_gpu_set_device(n->dev[0])) != TT_OK) return st;
    int e = n->comm_init_rank(&n->comms[0], nr, id, me);
    if (e) {
        n->comms[0] = NULL;
        return tt_error_set(TT_ERR_INTERNAL, "rank %d: ncclCommInitRank (%d ranks): %s", me, nr, n->err_string(e));
    }
    return TT_OK;
}

tt_status tt_sweep_engine_nccl(tt_sweep_engine *e, tt_gpu_comm *g, tt_comm *host)
{
    if (!e || !g) return tt_error_set(TT_ERR_INVALID, "tt_sweep_engine_nccl: NULL argument");
    memset(e, 0, sizeof *e);
    int nr = tt_gpu_comm_nranks(g);
    int procs = tt_gpu_comm_nlocal(g) != nr;
    if (procs && !host)
        return tt_error_set(TT_ERR_INVALID, "NCCL engine: GPU ranks in several processes need their host communicator");
    if (procs && (tt_gpu_comm_nlocal(g) != 1 || tt_comm_nranks(host) != nr))
        return tt_error_set(TT_ERR_UNSUPPORTED, "NCCL engine: one GPU rank per process (%d local of %d)",
                            tt_gpu_comm_nlocal(g), nr);
    if (tt_gpu_comm_is_virtual(g))
        return tt_error_set(TT_ERR_UNSUPPORTED, "NCCL runs one rank per GPU; these %d ranks share a GPU", nr);
    if (nr > NCCL_MAX_RANKS && !procs)
        return tt_error_set(TT_ERR_LIMIT, "NCCL engine: %d ranks; at most %d", nr, NCCL_MAX_RANKS);
    nccl_eng *n = calloc(1, sizeof *n);
    if (!n) return tt_error_set(TT_ERR_NOMEM, "measure: out of memory");
    tt_status st = nccl_load(n);
    if (st != TT_OK) {
        free(n);
        return st;
    }
    if (procs) {
        if ((st = nccl_init_procs(n, g, host)) != TT_OK) {
            nccl_release(n);
            return st;
        }
    } else {
        n->n = nr;
        for (int r = 0; r < nr; r++) n->dev[r] = tt_gpu_comm_device(g, r);
        int err = n->comm_init_all(n->comms, nr, n->dev);
        if (err) {
            st = tt_error_set(TT_ERR_INTERNAL, "ncclCommInitAll: %s", n->err_string(err));
            memset(n->comms, 0, sizeof n->comms);
            nccl_release(n);
            return st;
        }
    }
    exec_measure_launcher l = {"nccl", nccl_launch, nccl_sync, nccl_release, n};
    if ((st = exec_measure_engine_gpu_with(e, g, procs ? host : NULL, &l)) != TT_OK) nccl_release(n);
    return st;
}
