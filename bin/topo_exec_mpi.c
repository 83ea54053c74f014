/*
 * topo_exec_mpi.c - topo-exec's MPI launch mode (declared in bin/cli_exec.h; linked into
 * topo-exec only, the one program built with MPI; the launcher test is tt_cli_mpi_launched
 * in bin/cli_exec_opts.c).
 *
 * In a build with MPI (Makefile MPI=1, the default when Open MPI is found;
 * -DTT_HAVE_MPI=1 only for topo-exec) a topo-exec started by an MPI launcher
 * (mpirun/mpiexec, srun --mpi=pmix), or given --mpi, calls MPI_Init, builds
 * its communicator with tt_comm_init_mpi (exec/tt_exec_mpi.h), checks that
 * every rank got the same options, lets rank 0 print the table and calls
 * MPI_Finalize - what nccl-tests built with MPI=1 does.  MPI carries only the
 * bootstrap and these few agreements; the collectives run on topotune's own
 * transports.  Without MPI in the build the functions below are stand-ins
 * and mpirun still works through OMPI_COMM_WORLD_* + MASTER_ADDR/PORT.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_exec.h"
#include "tt_common.h"
#include "tt_exec.h"

#define MPI_NOPT TT_CLI_MPI_NOPT
typedef tt_cli_exec_opts opts;

#ifdef TT_HAVE_MPI
#include <mpi.h>

#include "tt_exec_mpi.h"

const int tt_cli_have_mpi = 1;

static int mpi_up;
typedef struct {
    int32_t pid;
    char host[64];
} mpi_ident;
/* rank 0: every rank's pid and host, for the header */
static mpi_ident *mpi_ids;

tt_status tt_cli_mpi_comm_init(tt_comm **c)
{
    int provided = 0;
    /* FUNNELED: only the main thread calls MPI; topotune's workers never do */
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return tt_error_set(TT_ERR_SYSTEM, "MPI_Init_thread failed");
    mpi_up = 1;
    return tt_comm_init_mpi(c, MPI_COMM_WORLD);
}

/* All ranks, once, before the sweep: compare the options with rank 0's and
 * combine every rank's verdict (rc: 0 or its exit code), so that all ranks
 * stop together with the same exit code instead of meeting a deadline
 * later.  Rank 0 also learns every rank's pid and host. */
int tt_cli_mpi_agree(const opts *o, int me, int nranks, int rc)
{
    uint64_t mine[MPI_NOPT], r0[MPI_NOPT];
    tt_cli_mpi_opt_values(o, mine);
    memcpy(r0, mine, sizeof r0);
    MPI_Bcast(r0, MPI_NOPT, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    for (int i = 0; i < MPI_NOPT; i++)
        if (mine[i] != r0[i]) {
            char a[64], b[64];
            tt_cli_mpi_opt_text(i, mine[i], a, sizeof a);
            tt_cli_mpi_opt_text(i, r0[i], b, sizeof b);
            char note[600];
            tt_cli_mpi_opt_note(o, i, note, sizeof note);
            fprintf(stderr, "topo-exec: rank %d: option %s is %s here%s but %s on rank 0; start every rank with "
                            "the same options\n", me, tt_cli_mpi_opt_name[i], a, note, b);
            rc = EXIT_USAGE;
            break;
        }
    struct {
        int rc, rank;
    } in = {rc, me}, out = {0, 0};
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    if (out.rc && !rc && me == 0)
        fprintf(stderr, "topo-exec: nothing run: rank %d refused to start (its message above)\n", out.rank);
    mpi_ident id = {(int32_t)getpid(), ""};
    gethostname(id.host, sizeof id.host - 1);
    mpi_ident *all = me == 0 ? calloc((size_t)nranks, sizeof *all) : NULL;
    MPI_Gather(&id, (int)sizeof id, MPI_BYTE, all, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(mpi_ids);
    mpi_ids = all;
    return out.rc;
}

void tt_cli_mpi_ident_of(int r, int *pid, const char **host)
{
    if (mpi_ids) {
        *pid = mpi_ids[r].pid;
        mpi_ids[r].host[sizeof mpi_ids[r].host - 1] = '\0';
        *host = mpi_ids[r].host;
    }
}

void tt_cli_mpi_finish(void)
{
    free(mpi_ids);
    mpi_ids = NULL;
    if (mpi_up)
        MPI_Finalize();
    mpi_up = 0;
}

#else /* no MPI in this build */

const int tt_cli_have_mpi = 0;

tt_status tt_cli_mpi_comm_init(tt_comm **c)
{
    *c = NULL;
    return tt_error_set(TT_ERR_UNSUPPORTED, "this topo-exec was built without MPI");
}
int tt_cli_mpi_agree(const opts *o, int me, int nranks, int rc) { return rc; }
void tt_cli_mpi_ident_of(int r, int *pid, const char **host) {}
void tt_cli_mpi_finish(void) {}

#endif
