/*
 * mpi_allreduce_example.c - a library user's MPI program (built by
 * tests/cli/test_topo_exec_mpi.sh with mpicc against the build's libtopotune;
 * also the example docs/exec.md points to).
 *
 *   mpirun -np N mpi_allreduce_example [ok|badaddr]
 *
 * ok:      tt_comm_init_mpi on MPI_COMM_WORLD and on a split communicator
 *          (even/odd ranks, both at once), AllReduce checked exactly against
 *          tt_verify_expected and bit for bit against MPI_Allreduce, plus the
 *          errors before MPI_Init, on MPI_COMM_NULL and after MPI_Finalize.
 * badaddr: TOPOTUNE_BOOTSTRAP_ADDR names an address rank 0 cannot bind:
 *          every rank must get an error naming rank 0 (nobody hangs).
 * Prints "rank R: PASS ..." per rank and exits 0, or "rank R: FAIL ..." and 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_exec_mpi.h"

static int me = -1;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        printf("rank %d: FAIL ", me);                                                              \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
        MPI_Abort(MPI_COMM_WORLD, 1); /* a test program: stop every rank at once */               \
        return 1;                                                                                  \
    } while (0)

/* AllReduce of count floats on c, checked two ways; 0 when right */
static int check_allreduce(tt_comm *c, MPI_Comm mc, size_t count, uint64_t seed, char *why, size_t n)
{
    int r = tt_comm_rank(c), nr = tt_comm_nranks(c);
    float *in = malloc(count * sizeof *in), *out = malloc(count * sizeof *out),
          *want = malloc(count * sizeof *want), *mpi = malloc(count * sizeof *mpi);
    int bad = 0;
    if (!in || !out || !want || !mpi) {
        snprintf(why, n, "out of memory");
        bad = 1;
        goto done;
    }
    tt_verify_fill(in, count, TT_FLOAT, TT_SUM, r, seed, 0);
    if (tt_allreduce(in, out, count, TT_FLOAT, TT_SUM, c) != TT_OK || tt_comm_wait(c) != TT_OK) {
        snprintf(why, n, "tt_allreduce: %s", tt_error_message());
        bad = 1;
        goto done;
    }
    tt_verify_expected(want, count, TT_FLOAT, TT_SUM, nr, seed, 0);
    size_t wrong = tt_verify_count_wrong(out, want, count, TT_FLOAT);
    MPI_Allreduce(in, mpi, (int)count, MPI_FLOAT, MPI_SUM, mc);
    size_t differ = tt_verify_count_wrong(out, mpi, count, TT_FLOAT);
    if (wrong || differ) {
        snprintf(why, n, "%zu of %zu elements wrong, %zu differ from MPI_Allreduce", wrong, count, differ);
        bad = 1;
    }
done:
    free(in);
    free(out);
    free(want);
    free(mpi);
    return bad;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    tt_comm *c = NULL, *sub = NULL;
    char why[512];
    /* before MPI_Init: a clear error, no crash */
    if (tt_comm_init_mpi(&c, MPI_COMM_WORLD) == TT_OK || !strstr(tt_error_message(), "not initialized")) {
        printf("FAIL before MPI_Init: expected 'not initialized', got '%s'\n", tt_error_message());
        return 1;
    }
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (!strcmp(mode, "badaddr")) {
        tt_status st = tt_comm_init_mpi(&c, MPI_COMM_WORLD);
        if (st == TT_OK || c)
            FAIL("badaddr: tt_comm_init_mpi succeeded");
        if (!strstr(tt_error_message(), "rank 0 could not create the rendezvous"))
            FAIL("badaddr: message does not name rank 0: '%s'", tt_error_message());
        printf("rank %d: PASS badaddr: %s\n", me, tt_error_message());
        MPI_Finalize();
        return 0;
    }

    if (tt_comm_init_mpi(&c, MPI_COMM_NULL) == TT_OK || !strstr(tt_error_message(), "MPI_COMM_NULL"))
        FAIL("MPI_COMM_NULL: expected an error naming it, got '%s'", tt_error_message());
    if (tt_comm_init_mpi(&c, MPI_COMM_WORLD) != TT_OK)
        FAIL("tt_comm_init_mpi(MPI_COMM_WORLD): %s", tt_error_message());
    if (tt_comm_rank(c) != me || tt_comm_nranks(c) != size)
        FAIL("rank/size %d/%d, MPI says %d/%d", tt_comm_rank(c), tt_comm_nranks(c), me, size);
    /* below and above the tree/ring switch, and not a multiple of the rank count */
    if (check_allreduce(c, MPI_COMM_WORLD, 1000, 1, why, sizeof why) ||
        check_allreduce(c, MPI_COMM_WORLD, 300001, 2, why, sizeof why))
        FAIL("world AllReduce: %s", why);

    /* a second communicator over a subset, alive at the same time */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    if (tt_comm_init_mpi(&sub, half) != TT_OK)
        FAIL("tt_comm_init_mpi(split): %s", tt_error_message());
    if (tt_comm_rank(sub) != hr || tt_comm_nranks(sub) != hs)
        FAIL("split rank/size %d/%d, MPI says %d/%d", tt_comm_rank(sub), tt_comm_nranks(sub), hr, hs);
    if (check_allreduce(sub, half, 4097, 3, why, sizeof why))
        FAIL("split AllReduce: %s", why);
    if (check_allreduce(c, MPI_COMM_WORLD, 77, 4, why, sizeof why))
        FAIL("world AllReduce after the split: %s", why);
    if (tt_comm_destroy(sub) != TT_OK || tt_comm_destroy(c) != TT_OK)
        FAIL("tt_comm_destroy: %s", tt_error_message());
    MPI_Comm_free(&half);
    printf("rank %d: PASS %d ranks over %s, split %d of %d\n", me, size, "tt_comm_init_mpi", hr, hs);
    fflush(stdout);
    MPI_Finalize();
    if (tt_comm_init_mpi(&c, MPI_COMM_WORLD) == TT_OK || !strstr(tt_error_message(), "finalized")) {
        printf("rank %d: FAIL after MPI_Finalize: expected 'finalized', got '%s'\n", me, tt_error_message());
        return 1;
    }
    return 0;
}
