/*
 * exec_gpu_stub.c - the GPU API of tt_exec.h in builds without CUDA (no
 * nvcc at build time): every call answers TT_ERR_UNSUPPORTED saying so, and
 * exec_gpu_cuda_probe() says that CUDA is not built in (exec_gpu_health.c explains).
 */
#include <stdio.h>
#include <string.h>

#include "exec_gpu_health.h"
#include "exec_measure_internal.h"
#include "tt_exec.h"

#ifndef TT_HAVE_CUDA
#define NO_CUDA "this build of topotune has no CUDA support (nvcc was not found at build time)"

/* no CUDA in this build: the health check (exec_gpu_health.c) says so */
void exec_gpu_cuda_probe(exec_gpu_cuda_state *s)
{
    memset(s, 0, sizeof *s);
}
tt_status tt_gpu_device_ident(int device, char *pci, size_t pcilen, char *name, size_t namelen)
{
    (void)device;
    (void)pci;
    (void)pcilen;
    (void)name;
    (void)namelen;
    return tt_error_set(TT_ERR_UNSUPPORTED, "%s", NO_CUDA);
}
tt_status tt_gpu_comm_init(tt_gpu_comm **out, int nranks, const int *devices)
{
    (void)nranks;
    (void)devices;
    *out = NULL;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU communicator: %s", NO_CUDA);
}
tt_status tt_gpu_comm_init_procs(tt_gpu_comm **out, tt_comm *host, int device)
{
    (void)host;
    (void)device;
    *out = NULL;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU communicator: %s", NO_CUDA);
}
tt_status tt_gpu_comm_destroy(tt_gpu_comm *g) { (void)g; return TT_OK; }
int tt_gpu_comm_nlocal(const tt_gpu_comm *g) { (void)g; return 0; }
int tt_gpu_comm_local_rank(const tt_gpu_comm *g, int i) { (void)g; (void)i; return -1; }
int tt_gpu_comm_nranks(const tt_gpu_comm *g) { (void)g; return 0; }
int tt_gpu_comm_is_virtual(const tt_gpu_comm *g) { (void)g; return 0; }
int tt_gpu_comm_device(const tt_gpu_comm *g, int rank) { (void)g; (void)rank; return -1; }
int tt_gpu_comm_max_channels(const tt_gpu_comm *g) { (void)g; return 0; }
const char *tt_gpu_comm_link(const tt_gpu_comm *g, int from, int to) { (void)g; (void)from; (void)to; return "none"; }
int tt_gpu_comm_net_pairs(const tt_gpu_comm *g) { (void)g; return 0; }
int tt_gpu_comm_hosts(const tt_gpu_comm *g) { (void)g; return 0; }
void tt_gpu_comm_set_timeout(tt_gpu_comm *g, int timeout_ms) { (void)g; (void)timeout_ms; }
tt_status tt_gpu_comm_set_hier_algo(tt_gpu_comm *g, tt_algo inter)
{
    (void)g; (void)inter;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU communicator: %s", NO_CUDA);
}
tt_status tt_gpu_comm_resolve_plan(const tt_gpu_comm *g, tt_coll coll, size_t count, tt_dtype t,
                                   const tt_plan *req, tt_plan *effective)
{
    (void)g; (void)coll; (void)count; (void)t; (void)req; (void)effective;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU plan: %s", NO_CUDA);
}
tt_status tt_gpu_comm_set_plan_table(tt_gpu_comm *g, const tt_tune_entry *entries, int n, unsigned flags)
{
    (void)g; (void)entries; (void)n; (void)flags;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU plan table: %s", NO_CUDA);
}
unsigned long tt_gpu_comm_plan_table_fallbacks(const tt_gpu_comm *g) { (void)g; return 0; }
tt_status tt_gpu_allreduce(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                           size_t count, tt_dtype t, tt_redop op, const tt_plan *plan)
{
    (void)g; (void)sendbufs; (void)recvbufs; (void)count; (void)t; (void)op; (void)plan;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU AllReduce: %s", NO_CUDA);
}
tt_status tt_gpu_allgather(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                           size_t sendcount, tt_dtype t, const tt_plan *plan)
{
    (void)g; (void)sendbufs; (void)recvbufs; (void)sendcount; (void)t; (void)plan;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU AllGather: %s", NO_CUDA);
}
tt_status tt_gpu_reducescatter(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                               size_t recvcount, tt_dtype t, tt_redop op, const tt_plan *plan)
{
    (void)g; (void)sendbufs; (void)recvbufs; (void)recvcount; (void)t; (void)op; (void)plan;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU ReduceScatter: %s", NO_CUDA);
}
tt_status tt_gpu_broadcast(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                           size_t count, tt_dtype t, int root, const tt_plan *plan)
{
    (void)g; (void)sendbufs; (void)recvbufs; (void)count; (void)t; (void)root; (void)plan;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU Broadcast: %s", NO_CUDA);
}
tt_status tt_gpu_reduce(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                        size_t count, tt_dtype t, tt_redop op, int root, const tt_plan *plan)
{
    (void)g; (void)sendbufs; (void)recvbufs; (void)count; (void)t; (void)op; (void)root; (void)plan;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU Reduce: %s", NO_CUDA);
}
tt_status tt_gpu_collective(tt_gpu_comm *g, tt_coll coll, const void *const *sendbufs,
                            void *const *recvbufs, size_t count, tt_dtype t, tt_redop op, int root,
                            const tt_plan *plan)
{
    (void)g; (void)coll; (void)sendbufs; (void)recvbufs; (void)count; (void)t; (void)op; (void)root; (void)plan;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU collective: %s", NO_CUDA);
}
tt_status tt_gpu_comm_sync(tt_gpu_comm *g) { (void)g; return tt_error_set(TT_ERR_UNSUPPORTED, "%s", NO_CUDA); }
tt_status tt_gpu_alloc(tt_gpu_comm *g, int rank, size_t bytes, void **ptr)
{
    (void)g; (void)rank; (void)bytes;
    *ptr = NULL;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU memory: %s", NO_CUDA);
}
void tt_gpu_free(tt_gpu_comm *g, int rank, void *ptr) { (void)g; (void)rank; (void)ptr; }
tt_status tt_gpu_memcpy(void *dst, const void *src, size_t bytes)
{
    (void)dst; (void)src; (void)bytes;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU copy: %s", NO_CUDA);
}
tt_status tt_gpu_memset(void *dst, int byte, size_t bytes)
{
    (void)dst; (void)byte; (void)bytes;
    return tt_error_set(TT_ERR_UNSUPPORTED, "GPU memset: %s", NO_CUDA);
}
tt_status tt_gpu_reduce_copy(int device, void *dst, const void *src0, const void *src1, size_t count,
                             tt_dtype t, tt_redop op)
{
    (void)device; (void)dst; (void)src0; (void)src1; (void)count; (void)t; (void)op;
    return tt_error_set(TT_ERR_UNSUPPORTED, "reduce-copy: %s", NO_CUDA);
}
tt_status tt_gpu_bench_copy(int device, size_t bytes, int iters, int blocks_per_sm, int variant, double gbs[3])
{
    (void)device; (void)bytes; (void)iters; (void)blocks_per_sm; (void)variant; (void)gbs;
    return tt_error_set(TT_ERR_UNSUPPORTED, "copy benchmark: %s", NO_CUDA);
}
tt_status exec_gpu_set_device(int device)
{
    (void)device;
    return tt_error_set(TT_ERR_UNSUPPORTED, "cudaSetDevice: %s", NO_CUDA);
}
tt_status exec_gpu_device_sync(int device)
{
    (void)device;
    return tt_error_set(TT_ERR_UNSUPPORTED, "cudaDeviceSynchronize: %s", NO_CUDA);
}
#else
/* CUDA builds: the implementation is in exec_cuda_comm.cu. */
typedef int exec_gpu_stub_unused;
#endif
