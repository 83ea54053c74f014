/*
 * tt_exec_mpi.h - build a topotune communicator over the processes of an MPI
 * communicator (optional; for programs that already use MPI, e.g. started by
 * mpirun).
 *
 *   MPI_Init(&argc, &argv);
 *   tt_comm *c;
 *   if (tt_comm_init_mpi(&c, MPI_COMM_WORLD) != TT_OK) { report tt_error_message() }
 *   ... tt_allreduce(..., c); tt_comm_wait(c); ...
 *   tt_comm_destroy(c);
 *   MPI_Finalize();
 *
 * Header only, on purpose: libtopotune (and the NCCL tuner plugin built from
 * it) must not depend on libmpi, so the few MPI calls live here and are
 * compiled into the caller's program (build it with mpicc, or with
 * `pkg-config --cflags --libs ompi-c topotune`).  MPI is used only to hand
 * out the rendezvous id and to agree on the outcome; the data moves over
 * topotune's own transports (shared memory between the processes of a host,
 * TCP otherwise), exactly as with tt_comm_init_rank.
 *
 * What it does (collective over mpi_comm; every rank must call it):
 *   1. rank 0 picks the rendezvous address: TOPOTUNE_BOOTSTRAP_ADDR when set,
 *      127.0.0.1 when every rank shares rank 0's node (MPI_COMM_TYPE_SHARED),
 *      else tt_host_address(); it makes an id there (tt_get_unique_id);
 *   2. MPI_Bcast of the id, rank 0's status and rank count;
 *   3. every rank calls tt_comm_init_rank(comm, size, id, rank) (rank and
 *      size are those of mpi_comm, so topotune rank r is MPI rank r);
 *   4. the ranks agree on the outcome (MPI_Allreduce): when any rank failed,
 *      every rank returns an error naming the lowest failing rank and its
 *      message, and no rank keeps a half-built communicator.
 * Every step on our side is bounded by the communicator timeout
 * (TOPOTUNE_TIMEOUT_MS); the MPI calls are small collectives.
 *
 * Errors (tt_status + tt_error_message(), never an abort): MPI not
 * initialised or already finalised, MPI_COMM_NULL, more than 1024 ranks,
 * rank 0 could not bind the address, rendezvous failures of any rank.
 * Thread level: MPI is called only by the calling thread (MPI_THREAD_FUNNELED
 * is enough; topotune's worker threads never call MPI).
 */
#ifndef TT_EXEC_MPI_H
#define TT_EXEC_MPI_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline tt_status tt_comm_init_mpi(tt_comm **comm, MPI_Comm mpi_comm)
{
    /* what rank 0 sends to every rank (bytes: all ranks run this same code) */
    struct {
        int32_t status, nranks;
        char msg[400];
        tt_unique_id id;
    } boot;
    int inited = 0, finalized = 0, rank = -1, size = 0;
    if (!comm)
        return tt_error_set(TT_ERR_INVALID, "tt_comm_init_mpi: NULL comm");
    *comm = NULL;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized)
        return tt_error_set(TT_ERR_INVALID, "tt_comm_init_mpi: MPI is %s (call MPI_Init first)",
                            finalized ? "already finalized" : "not initialized");
    if (mpi_comm == MPI_COMM_NULL)
        return tt_error_set(TT_ERR_INVALID, "tt_comm_init_mpi: MPI_COMM_NULL");
    if (MPI_Comm_rank(mpi_comm, &rank) != MPI_SUCCESS || MPI_Comm_size(mpi_comm, &size) != MPI_SUCCESS)
        return tt_error_set(TT_ERR_INVALID, "tt_comm_init_mpi: MPI_Comm_rank/size failed on the communicator");
    /* the limit of tt_comm_init_rank; every rank sees the same size, so every
     * rank returns here together */
    if (size > 1024)
        return tt_error_set(TT_ERR_LIMIT, "tt_comm_init_mpi: %d MPI ranks, topotune supports up to 1024",
                            size);

    /* 1. one node or several?  (the processes that can share memory) */
    MPI_Comm node;
    int node_size = 0, all_local = 0;
    if (MPI_Comm_split_type(mpi_comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &node_size);
        MPI_Comm_free(&node);
    }
    int local = node_size == size; /* same answer on every rank of one node */
    MPI_Allreduce(&local, &all_local, 1, MPI_INT, MPI_LAND, mpi_comm);

    memset(&boot, 0, sizeof boot);
    if (rank == 0) {
        const char *addr = tt_setting("TOPOTUNE_BOOTSTRAP_ADDR");
        char found[64];
        tt_status st = TT_OK;
        if (!addr || !*addr) {
            if (all_local) {
                addr = "127.0.0.1";
            } else {
                st = tt_host_address(found, sizeof found);
                addr = found;
            }
        }
        if (st == TT_OK)
            st = tt_get_unique_id(&boot.id, addr);
        boot.status = (int32_t)st;
        boot.nranks = size;
        if (st != TT_OK)
            snprintf(boot.msg, sizeof boot.msg, "%s", tt_error_message());
    }
    /* 2. the id */
    MPI_Bcast(&boot, (int)sizeof boot, MPI_BYTE, 0, mpi_comm);
    boot.msg[sizeof boot.msg - 1] = '\0';
    if (boot.status != TT_OK)
        return tt_error_set((tt_status)boot.status, "rank %d: rank 0 could not create the rendezvous: %s", rank,
                            boot.msg);
    if (boot.nranks != size) /* cannot happen within one MPI communicator; checked all the same */
        return tt_error_set(TT_ERR_MISMATCH, "rank %d: MPI communicator has %d ranks here, %d on rank 0", rank,
                            size, (int)boot.nranks);

    /* 3. the rendezvous and the connections (bounded by the timeout) */
    tt_status st = tt_comm_init_rank(comm, size, &boot.id, rank);
    char mine[400];
    snprintf(mine, sizeof mine, "%s", st == TT_OK ? "" : tt_error_message());

    /* 4. everyone learns whether everyone made it; the lowest failing rank
     * tells its reason */
    struct {
        int failed, rank;
    } in = {st != TT_OK, rank}, out = {0, 0};
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, mpi_comm);
    if (!out.failed)
        return TT_OK;
    char why[400];
    snprintf(why, sizeof why, "%s", mine);
    MPI_Bcast(why, (int)sizeof why, MPI_CHAR, out.rank, mpi_comm);
    why[sizeof why - 1] = '\0';
    if (st != TT_OK)
        return tt_error_set(st, "%s", mine);
    tt_comm_destroy(*comm);
    *comm = NULL;
    return tt_error_set(TT_ERR_REMOTE, "rank %d: rank %d could not join the communicator: %s", rank, out.rank,
                        why);
}

#ifdef __cplusplus
}
#endif
#endif
