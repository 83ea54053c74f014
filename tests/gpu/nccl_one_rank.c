/*
 * nccl_one_rank.c - GPU-machine check: NCCL initialises a communicator over
 * every visible GPU (one process, ncclCommInitAll) and runs a float sum
 * all-reduce whose result is checked exactly.  Run it with
 * NCCL_TOPO_FILE=<our NCCL-mode XML> NCCL_DEBUG=INFO to prove NCCL accepts the
 * file.  Built on the GPU machine only (needs nccl.h and libnccl):
 *   gcc -I/usr/local/cuda/include tests/gpu/nccl_one_rank.c \
 *       -L/usr/local/cuda/lib64 -lcudart -lnccl -o nccl_one_rank
 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "nccl_one_rank: %s failed: %s\n", #x, cudaGetErrorString(e_)); return 2; } } while (0)
#define CHECK_NCCL(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { \
    fprintf(stderr, "nccl_one_rank: %s failed: %s\n", #x, ncclGetErrorString(r_)); return 2; } } while (0)

int main(int argc, char **argv)
{
    int ndev = 0, version = 0;
    size_t count = argc > 1 ? strtoull(argv[1], NULL, 0) : (1u << 20);
    CHECK_CUDA(cudaGetDeviceCount(&ndev));
    if (ndev < 1) {
        fprintf(stderr, "nccl_one_rank: no GPU\n");
        return 77;
    }
    if (ndev > 16)
        ndev = 16;
    CHECK_NCCL(ncclGetVersion(&version));
    printf("nccl_one_rank: NCCL version code %d, %d GPU(s), %zu floats\n", version, ndev, count);

    ncclComm_t comms[16];
    int devs[16];
    float *buf[16];
    cudaStream_t streams[16];
    for (int i = 0; i < ndev; i++)
        devs[i] = i;
    CHECK_NCCL(ncclCommInitAll(comms, ndev, devs));
    float *host = malloc(count * sizeof(float));
    if (!host)
        return 2;
    for (int i = 0; i < ndev; i++) {
        CHECK_CUDA(cudaSetDevice(i));
        CHECK_CUDA(cudaMalloc((void **)&buf[i], count * sizeof(float)));
        CHECK_CUDA(cudaStreamCreate(&streams[i]));
        for (size_t k = 0; k < count; k++)
            host[k] = (float)((k % 7) + i);
        CHECK_CUDA(cudaMemcpy(buf[i], host, count * sizeof(float), cudaMemcpyHostToDevice));
    }
    CHECK_NCCL(ncclGroupStart());
    for (int i = 0; i < ndev; i++)
        CHECK_NCCL(ncclAllReduce(buf[i], buf[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
    CHECK_NCCL(ncclGroupEnd());
    long wrong = 0;
    for (int i = 0; i < ndev; i++) {
        CHECK_CUDA(cudaSetDevice(i));
        CHECK_CUDA(cudaStreamSynchronize(streams[i]));
        CHECK_CUDA(cudaMemcpy(host, buf[i], count * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t k = 0; k < count; k++) {
            float want = (float)((k % 7) * ndev + ndev * (ndev - 1) / 2);
            if (host[k] != want)
                wrong++;
        }
    }
    for (int i = 0; i < ndev; i++) {
        ncclCommDestroy(comms[i]);
        cudaFree(buf[i]);
    }
    free(host);
    printf("nccl_one_rank: all-reduce %s (%ld wrong)\n", wrong ? "FAILED" : "OK", wrong);
    return wrong ? 1 : 0;
}
