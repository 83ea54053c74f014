/* exec_cuda_kern_float.cu - the kernels of the floating types. */
#include "exec_cuda_coll.cuh"

void exec_gpu_fill_float(exec_ar_fn (*ar)[4], exec_rc_fn (*rc)[4])
{
    exec_fill_row<tt_f16>(ar[TT_HALF], rc[TT_HALF]);
    exec_fill_row<tt_bf16>(ar[TT_BFLOAT16], rc[TT_BFLOAT16]);
    exec_fill_row<float>(ar[TT_FLOAT], rc[TT_FLOAT]);
    exec_fill_row<double>(ar[TT_DOUBLE], rc[TT_DOUBLE]);
}
