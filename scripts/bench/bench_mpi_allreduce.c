/* bench_mpi_allreduce.c - the Open MPI side of scripts/bench/bench-exec-vs-mpi.sh:
 * MPI_Allreduce (float, sum, out-of-place) timed like topo-exec: per size,
 * WARMUP untimed calls, then ITERS calls between two barriers-free wall-clock
 * reads, averaged over ranks.  Prints "size time_us busbw_GBps" per size. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    long long minb = argc > 1 ? atoll(argv[1]) : 1024, maxb = argc > 2 ? atoll(argv[2]) : 1 << 20;
    int factor = argc > 3 ? atoi(argv[3]) : 4, iters = argc > 4 ? atoi(argv[4]) : 20;
    int warmup = argc > 5 ? atoi(argv[5]) : 2;
    float *s = malloc((size_t)maxb), *r = malloc((size_t)maxb);
    for (long long i = 0; i < maxb / 4; i++)
        s[i] = (float)((i + rank) % 17 - 8);
    for (long long b = minb; b <= maxb; b *= factor) {
        int count = (int)(b / 4);
        for (int w = 0; w < warmup; w++)
            MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double dt = (MPI_Wtime() - t0) / iters, sum;
        MPI_Allreduce(&dt, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        dt = sum / n;
        /* a cheap correctness probe: element 0 */
        double want = 0;
        for (int q = 0; q < n; q++)
            want += (double)(q % 17 - 8);
        if (rank == 0)
            printf("%lld %.2f %.4f %s\n", b, dt * 1e6, (double)b / dt / 1e9 * 2.0 * (n - 1) / n,
                   r[0] == (float)want ? "ok" : "WRONG");
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
