/*
 * copy_layout_probe.cu - GPU-machine measurement: what limits the copy of the
 * collectives' channels (issue #14, "Copy efficiency")?  Times the executor's
 * own block-level reduce_copy (exec/exec_cuda_prims.cuh) over one 1-source
 * float copy of SIZE bytes in several layouts against cudaMemcpy D2D:
 *   grid   blocks of 512 threads (64 = the channels of a one-rank collective,
 *          132 = one per SM, what tt_gpu_reduce_copy uses)
 *   piece  block b copies pieces b, b + grid, b + 2 grid, ... of PIECE bytes;
 *          "contig" = one contiguous share per block (the layout the channels
 *          had up to 2026-12-02)
 *   U      16-byte loads in flight per thread (reduce_copy's unroll)
 *   sync   after every piece: none, a block barrier, __threadfence in every thread +
 *          barrier (what a Simple protocol step adds), or barrier + one thread's fence +
 *          barrier (an alternative ordering, measured only)
 * and, for a few of them, how the blocks' own durations spread (globaltimer at
 * each block's start and end): min / median / max block time over the kernel's
 * span tells stragglers (late blocks) from a uniformly slower rate.
 * Built on the development machine (no GPU needed), from the repository root:
 *   nvcc -O3 -arch=sm_90 -std=c++17 -Icommon -Iexec -DTT_HAVE_CUDA=1 \
 *        tests/gpu/copy_layout_probe.cu -o copy_layout_probe
 * Run on the GPU machine: ./copy_layout_probe [SIZE_MiB ...] (default 256 1024).
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#include "exec_cuda_prims.cuh"

#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "copy_layout_probe: %s: %s\n", #x, cudaGetErrorString(e_));          \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

enum { SYNC_NONE = 0, SYNC_BAR = 1, SYNC_FENCE = 2, SYNC_FENCE1 = 3 };

template <int U, int SYNC>
__global__ void __launch_bounds__(GPU_THREADS) probe_kernel(float *dst, const float *src, size_t count, size_t piece,
                                                            unsigned long long *times)
{
    unsigned long long t0 = gpu_time_ns();
    for (size_t lo = (size_t)blockIdx.x * piece; lo < count; lo += (size_t)gridDim.x * piece) {
        size_t n = count - lo < piece ? count - lo : piece;
        const float *s[1] = {src + lo};
        float *d[1] = {dst + lo};
        reduce_copy<float, TT_SUM, U, 0>(threadIdx.x, blockDim.x, 1, s, 0, 1, d, n, 0);
        if (SYNC == SYNC_FENCE) __threadfence();
        if (SYNC != SYNC_NONE) __syncthreads();
        if (SYNC == SYNC_FENCE1) { /* one thread fences after the barrier, a second barrier holds the rest */
            if (threadIdx.x == 0) __threadfence();
            __syncthreads();
        }
    }
    if (times) {
        __syncthreads();
        if (threadIdx.x == 0) {
            times[2 * blockIdx.x] = t0;
            times[2 * blockIdx.x + 1] = gpu_time_ns();
        }
    }
}

typedef void (*probe_fn)(float *, const float *, size_t, size_t, unsigned long long *);

struct config {
    const char *name;
    int grid;
    size_t piece_bytes; /* 0: contiguous share per block */
    probe_fn fn;
    int spread;         /* also report the blocks' durations */
};

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <class F> static float time_ms(int iters, F fn)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; i++) fn();
    std::vector<float> v(iters);
    for (int i = 0; i < iters; i++) {
        CK(cudaEventRecord(a, 0));
        fn();
        CK(cudaEventRecord(b, 0));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&v[i], a, b));
    }
    CK(cudaGetLastError());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return median(v);
}

/* one more launch with per-block times: block durations over the kernel's span */
static void block_spread(const config &c, float *dst, const float *src, size_t count, size_t piece,
                         unsigned long long *dtimes)
{
    c.fn<<<c.grid, GPU_THREADS>>>(dst, src, count, piece, dtimes);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> t(2 * (size_t)c.grid);
    CK(cudaMemcpy(t.data(), dtimes, t.size() * sizeof(t[0]), cudaMemcpyDeviceToHost));
    unsigned long long s0 = ~0ull, e1 = 0;
    std::vector<float> dur, late;
    for (int b = 0; b < c.grid; b++) {
        s0 = std::min(s0, t[2 * b]);
        e1 = std::max(e1, t[2 * b + 1]);
    }
    for (int b = 0; b < c.grid; b++) {
        dur.push_back((float)(t[2 * b + 1] - t[2 * b]));
        late.push_back((float)(t[2 * b] - s0));
    }
    float span = (float)(e1 - s0);
    std::sort(dur.begin(), dur.end());
    std::sort(late.begin(), late.end());
    printf("#   spread %-22s span %8.1f us; block time min/median/max = %5.1f%% / %5.1f%% / %5.1f%% of the span; "
           "last block start +%.1f us\n",
           c.name, span / 1e3, 100 * dur.front() / span, 100 * dur[dur.size() / 2] / span, 100 * dur.back() / span,
           late.back() / 1e3);
}

int main(int argc, char **argv)
{
    std::vector<size_t> sizes;
    for (int i = 1; i < argc; i++) sizes.push_back((size_t)strtoull(argv[i], NULL, 0) << 20);
    if (sizes.empty()) sizes = {(size_t)256 << 20, (size_t)1 << 30};
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const size_t K = 1024;
    const config cfgs[] = {
        {"g132 tile32K u4", sms, 32 * K, probe_kernel<4, SYNC_NONE>, 1},
        {"g64 tile32K u4", 64, 32 * K, probe_kernel<4, SYNC_NONE>, 0},
        {"g64 tile64K u8", 64, 64 * K, probe_kernel<8, SYNC_NONE>, 0},
        {"g64 tile32K u8", 64, 32 * K, probe_kernel<8, SYNC_NONE>, 0},
        {"g64 contig u4", 64, 0, probe_kernel<4, SYNC_NONE>, 1},
        {"g64 contig u8", 64, 0, probe_kernel<8, SYNC_NONE>, 1},
        {"g132 contig u4", sms, 0, probe_kernel<4, SYNC_NONE>, 1},
        {"g64 piece256K u4", 64, 256 * K, probe_kernel<4, SYNC_NONE>, 1},
        {"g64 piece256K u8", 64, 256 * K, probe_kernel<8, SYNC_NONE>, 1},
        {"g64 piece1M u8", 64, 1024 * K, probe_kernel<8, SYNC_NONE>, 0},
        {"g64 piece120K u4", 64, 120 * K, probe_kernel<4, SYNC_NONE>, 0},
        {"g64 piece120K u8", 64, 120 * K, probe_kernel<8, SYNC_NONE>, 0},
        {"g64 piece100K u8", 64, 100 * K, probe_kernel<8, SYNC_NONE>, 0},
        {"g64 piece256K u8 bar", 64, 256 * K, probe_kernel<8, SYNC_BAR>, 0},
        {"g64 piece256K u8 fence", 64, 256 * K, probe_kernel<8, SYNC_FENCE>, 0},
        {"g64 piece256K u8 fence1", 64, 256 * K, probe_kernel<8, SYNC_FENCE1>, 0},
        {"g32 piece256K u8", 32, 256 * K, probe_kernel<8, SYNC_NONE>, 0},
        {"g128 piece256K u4", 128, 256 * K, probe_kernel<4, SYNC_NONE>, 0},
    };
    printf("# copy_layout_probe on %s (%d SMs, L2 %d MiB): float copy, 1 source, median of 20; GB/s = (read + "
           "written bytes) / time\n",
           prop.name, sms, prop.l2CacheSize >> 20);
    for (size_t bytes : sizes) {
        size_t count = bytes / sizeof(float);
        float *a, *c;
        unsigned long long *dt;
        CK(cudaMalloc(&a, bytes));
        CK(cudaMalloc(&c, bytes));
        CK(cudaMalloc(&dt, 2 * sizeof(unsigned long long) * 1024));
        /* non-zero data */
        std::vector<float> h((size_t)1 << 22);
        for (size_t i = 0; i < h.size(); i++) h[i] = (float)((i * 2654435761u >> 7) % 17) - 8.0f;
        for (size_t off = 0; off < count; off += h.size())
            CK(cudaMemcpy(a + off, h.data(), std::min(h.size(), count - off) * sizeof(float), cudaMemcpyHostToDevice));
        float tm = time_ms(20, [&] { cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice, 0); });
        double gm = 2.0 * bytes / (tm * 1e6);
        printf("# %zu MiB: cudaMemcpy D2D %.1f GB/s (%.1f us)\n", bytes >> 20, gm, tm * 1e3);
        printf("%-24s %8s %10s %10s %9s\n", "# layout", "MiB", "us", "GB/s", "/memcpy");
        for (const config &cf : cfgs) {
            size_t piece = cf.piece_bytes / sizeof(float);
            if (!piece) {
                piece = (count + cf.grid - 1) / cf.grid;
                piece = (piece + 3) / 4 * 4;
            }
            CK(cudaMemset(c, 0, bytes));
            float t = time_ms(20, [&] { cf.fn<<<cf.grid, GPU_THREADS>>>(c, a, count, piece, nullptr); });
            /* the copy is checked: a layout that skips or repeats elements would show here */
            std::vector<float> got(h.size());
            size_t at = count - got.size();
            CK(cudaMemcpy(got.data(), c + at, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
            size_t bad = 0;
            for (size_t i = 0; i < got.size(); i++) bad += got[i] != h[(at + i) % h.size()];
            double g = 2.0 * bytes / (t * 1e6);
            printf("  %-22s %8zu %10.1f %10.1f %8.1f%%%s\n", cf.name, bytes >> 20, t * 1e3, g, 100 * g / gm,
                   bad ? " WRONG" : "");
            if (cf.spread) block_spread(cf, c, a, count, piece, dt);
        }
        cudaFree(a);
        cudaFree(c);
        cudaFree(dt);
    }
    return 0;
}
