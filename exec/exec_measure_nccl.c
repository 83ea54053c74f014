/*
 * exec_measure_nccl.c - NCCL as a measuring engine (docs/exec.md, "Measuring"): libnccl.so.2
 * loaded with dlopen (no build-time dependency), one NCCL communicator per rank of a
 * tt_gpu_comm in thread mode (ncclCommInitAll on its devices), AllReduce launched by one thread
 * for every GPU inside ncclGroupStart/End.  Buffers, timing and checks are the GPU engine's
 * (exec_measure_gpu.c).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "exec_measure_internal.h"

#define NCCL_MAX_RANKS 64

typedef struct {
    void *h;
    int (*comm_init_all)(void **comms, int ndev, const int *devlist);
    int (*all_reduce)(const void *, void *, size_t, int, int, void *, void *);
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
    *(void **)&n->comm_destroy = dlsym(n->h, "ncclCommDestroy");
    *(void **)&n->err_string = dlsym(n->h, "ncclGetErrorString");
    *(void **)&n->group_start = dlsym(n->h, "ncclGroupStart");
    *(void **)&n->group_end = dlsym(n->h, "ncclGroupEnd");
    if (!n->comm_init_all || !n->all_reduce || !n->comm_destroy || !n->err_string || !n->group_start ||
        !n->group_end) {
        dlclose(n->h);
        n->h = NULL;
        return tt_error_set(TT_ERR_UNSUPPORTED, "libnccl.so.2 lacks ncclCommInitAll/ncclAllReduce/ncclCommDestroy/"
                                                "ncclGetErrorString/ncclGroupStart/ncclGroupEnd");
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

/* one thread drives every GPU: the calls of one collective must be grouped, or the first
 * rank's call waits for the others */
static tt_status nccl_launch(void *ctx, tt_gpu_comm *g, const void *const *src, void *const *dst, size_t count,
                             const tt_sweep_opts *o)
{
    (void)g;
    nccl_eng *n = ctx;
    tt_status st = TT_OK;
    if (o->coll != TT_COLL_ALLREDUCE)
        return tt_error_set(TT_ERR_UNSUPPORTED, "the NCCL engine runs AllReduce only; %s was requested (topotune's "
                                                "own GPU engine, the default, runs every collective)",
                            tt_coll_label(o->coll));
    n->group_start();
    for (int r = 0; r < n->n; r++) {
        exec_gpu_set_device(n->dev[r]);
        int e = n->all_reduce(src[r], dst[r], count, nccl_type(o->dtype), nccl_op(o->op), n->comms[r], NULL);
        if (e && st == TT_OK) st = tt_error_set(TT_ERR_INTERNAL, "ncclAllReduce: %s", n->err_string(e));
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

tt_status tt_sweep_engine_nccl(tt_sweep_engine *e, tt_gpu_comm *g)
{
    if (!e || !g) return tt_error_set(TT_ERR_INVALID, "tt_sweep_engine_nccl: NULL argument");
    memset(e, 0, sizeof *e);
    int nr = tt_gpu_comm_nranks(g);
    if (tt_gpu_comm_nlocal(g) != nr)
        return tt_error_set(TT_ERR_UNSUPPORTED, "NCCL runs every rank in one process; it cannot run with process ranks");
    if (nr > NCCL_MAX_RANKS) return tt_error_set(TT_ERR_LIMIT, "NCCL engine: %d ranks; at most %d", nr, NCCL_MAX_RANKS);
    nccl_eng *n = calloc(1, sizeof *n);
    if (!n) return tt_error_set(TT_ERR_NOMEM, "measure: out of memory");
    tt_status st = nccl_load(n);
    if (st != TT_OK) {
        free(n);
        return st;
    }
    n->n = nr;
    for (int r = 0; r < nr; r++) n->dev[r] = tt_gpu_comm_device(g, r);
    int err = n->comm_init_all(n->comms, nr, n->dev);
    if (err) {
        st = tt_error_set(TT_ERR_INTERNAL, "ncclCommInitAll: %s", n->err_string(err));
        memset(n->comms, 0, sizeof n->comms);
        nccl_release(n);
        return st;
    }
    exec_measure_launcher l = {"nccl", nccl_launch, nccl_sync, nccl_release, n};
    if ((st = exec_measure_engine_gpu_with(e, g, NULL, &l)) != TT_OK) nccl_release(n);
    return st;
}
