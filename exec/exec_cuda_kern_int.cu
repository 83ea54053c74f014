/* exec_cuda_kern_int.cu - the kernels of the integer types. */
#include "exec_cuda_coll.cuh"

void exec_gpu_fill_int(exec_ar_fn (*ar)[4], exec_rc_fn (*rc)[4])
{
    exec_fill_row<int8_t>(ar[TT_INT8], rc[TT_INT8]);
    exec_fill_row<uint8_t>(ar[TT_UINT8], rc[TT_UINT8]);
    exec_fill_row<int32_t>(ar[TT_INT32], rc[TT_INT32]);
    exec_fill_row<uint32_t>(ar[TT_UINT32], rc[TT_UINT32]);
    exec_fill_row<int64_t>(ar[TT_INT64], rc[TT_INT64]);
    exec_fill_row<uint64_t>(ar[TT_UINT64], rc[TT_UINT64]);
}
