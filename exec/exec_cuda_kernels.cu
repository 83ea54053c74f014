/*
 * exec_cuda_kernels.cu - launch side of the GPU kernels (exec_cuda_coll.cuh):
 * the table of kernels per (type, op), launches, occupancy.
 */
#include <cuda_runtime.h>

#include "exec_cuda_coll.cuh"

/* ---- dispatch over (type, op) ---------------------------------------- */
typedef exec_ar_fn ar_fn;
typedef exec_rc_fn rc_fn;

/* avg runs the sum kernel (the division is a flag of the arguments) */
static int op_index(tt_redop op) { return op == TT_AVG ? (int)TT_SUM : (int)op; }

static ar_fn g_ar[TT_NDTYPES][4];
static rc_fn g_rc[TT_NDTYPES][4];
static int g_table_ready;

static void table_init(void)
{
    if (g_table_ready) return;
    exec_gpu_fill_int(g_ar, g_rc);
    exec_gpu_fill_float(g_ar, g_rc);
    g_table_ready = 1;
}

static tt_status cuda_fail(cudaError_t e, const char *what)
{
    return tt_error_set(TT_ERR_SYSTEM, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

tt_status exec_gpu_launch_coll(const gpu_kargs *a, tt_dtype t, tt_redop op, cudaStream_t s)
{
    table_init();
    if ((int)t < 0 || t >= TT_NDTYPES || (int)op < 0 || op >= TT_NREDOPS)
        return tt_error_set(TT_ERR_INVALID, "GPU %s: bad type %d or op %d", tt_coll_label((tt_coll)a->coll), (int)t,
                            (int)op);
    ar_fn f = g_ar[t][op_index(op)];
    gpu_kargs copy = *a;
    void *args[] = {&copy};
    cudaError_t e = cudaLaunchKernel((const void *)f, dim3(a->nloc * a->nch), dim3(GPU_THREADS), args, 0, s);
    return e == cudaSuccess ? TT_OK : cuda_fail(e, "GPU collective kernel launch");
}

tt_status exec_gpu_launch_reduce_copy(void *dst, const void *src0, const void *src1, size_t count, tt_dtype t,
                                      tt_redop op, int blocks, cudaStream_t s)
{
    table_init();
    if ((int)t < 0 || t >= TT_NDTYPES || (int)op < 0 || op >= TT_NREDOPS)
        return tt_error_set(TT_ERR_INVALID, "reduce-copy: bad type %d or op %d", (int)t, (int)op);
    rc_fn f = g_rc[t][op_index(op)];
    void *args[] = {&dst, (void *)&src0, (void *)&src1, &count};
    cudaError_t e = cudaLaunchKernel((const void *)f, dim3(blocks), dim3(GPU_THREADS), args, 0, s);
    return e == cudaSuccess ? TT_OK : cuda_fail(e, "reduce-copy kernel launch");
}

int exec_gpu_max_blocks_per_sm(tt_dtype t, tt_redop op)
{
    table_init();
    int nb = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, (const void *)g_ar[t][op_index(op)], GPU_THREADS, 0) !=
        cudaSuccess)
        return 0;
    return nb;
}

/* Benchmark variants of the float-sum reduce-copy: 0/1 tiled round robin
 * with unroll 4/8 (0 = what tt_gpu_reduce_copy runs), 2/3 contiguous share
 * per block (the channel layout) unroll 4/8, 4/5 the same with streaming
 * cache hints. */
tt_status exec_gpu_launch_reduce_copy_variant(int variant, void *dst, const void *src0, const void *src1,
                                              size_t count, int blocks, cudaStream_t s)
{
    static const rc_fn v[6] = {reduce_copy_kernel<float, TT_SUM, 4>,          reduce_copy_kernel<float, TT_SUM, 8>,
                               reduce_copy_block_kernel<float, TT_SUM, 4, 0>, reduce_copy_block_kernel<float, TT_SUM, 8, 0>,
                               reduce_copy_block_kernel<float, TT_SUM, 4, 1>, reduce_copy_block_kernel<float, TT_SUM, 8, 1>};
    if (variant < 0 || variant > 5) return tt_error_set(TT_ERR_INVALID, "reduce-copy variant %d (0..5)", variant);
    void *args[] = {&dst, (void *)&src0, (void *)&src1, &count};
    cudaError_t e = cudaLaunchKernel((const void *)v[variant], dim3(blocks), dim3(GPU_THREADS), args, 0, s);
    return e == cudaSuccess ? TT_OK : cuda_fail(e, "reduce-copy kernel launch");
}
