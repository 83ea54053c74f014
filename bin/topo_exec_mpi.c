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
#include <errno.h>
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

/* the options every rank must share, with their names (MPI mode: tt_cli_mpi_agree; rendezvous
 * modes: agree_options in topo-exec.c): everything that changes the sequence or the content of
 * the collectives (issue #32 item 7), compared before the first one */
const char *const tt_cli_mpi_opt_name[MPI_NOPT] = {
    "-t (collective)", "-b (minbytes)", "-e (maxbytes)", "-i (stepbytes)", "-f (stepfactor)",
    "-n (iters)", "-w (warmup_iters)", "-m (agg_iters)", "-c (check)", "-d (datatype)",
    "-o (op)", "-r (root)", "--algo/NCCL_ALGO", "--proto/NCCL_PROTO", "--chunk/TOPOTUNE_CHUNK_BYTES",
    "--cycles", "--average", "--table", "--validate", "--validate-runners-up", "--validate-rounds",
    "--validate-margin", "--topo", "--calibration/TOPOTUNE_CALIBRATION", "-g (ngpus)"};
enum { O_CYCLES = 15, O_AVERAGE, O_TABLE, O_VALIDATE, O_VRUNNERS, O_VROUNDS, O_VMARGIN, O_TOPO, O_CALIB, O_NGPUS };
_Static_assert(O_NGPUS + 1 == MPI_NOPT, "one name per compared option");

/* A file's content as one number: 0 no file, 1 a file that cannot be read (its use fails later,
 * naming it), else FNV-1a of the bytes (never 0 or 1): the same table under two names agrees. */
static uint64_t file_print(const char *path)
{
    if (!path || !*path)
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    uint64_t h = 1469598103934665603ull;
    unsigned char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 1099511628211ull;
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return 1;
    return h < 2 ? h + 2 : h;
}

void tt_cli_mpi_opt_values(const opts *o, uint64_t v[MPI_NOPT])
{
    const tt_cli_validate_opts *val = &o->val;
    uint64_t margin = 0;
    double m = val->on ? val->margin : 0;
    memcpy(&margin, &m, sizeof m < sizeof margin ? sizeof m : sizeof margin);
    const char *calib = val->on ? tt_setting("TOPOTUNE_CALIBRATION") : NULL; /* --calibration sets it */
    uint64_t x[MPI_NOPT] = {(uint64_t)o->coll, o->minb, o->maxb, o->stepb, (uint64_t)o->factor,
                            (uint64_t)o->iters, (uint64_t)o->warmup, (uint64_t)o->agg, (uint64_t)o->check,
                            (uint64_t)o->dtype, (uint64_t)o->op, (uint64_t)o->root, (uint64_t)o->plan.algo,
                            (uint64_t)o->plan.proto, (uint64_t)o->plan.chunk_bytes,
                            (uint64_t)o->cycles, (uint64_t)o->time_of, file_print(o->table), (uint64_t)val->on,
                            (uint64_t)(val->on ? val->runners_up : 0), (uint64_t)(val->on ? val->rounds : 0), margin,
                            val->on ? file_print(val->topo) : 0, file_print(calib), (uint64_t)o->ngpus};
    memcpy(v, x, sizeof x);
}

static void file_text(uint64_t v, const char *what, char *b, size_t n)
{
    if (v == 0) snprintf(b, n, "none");
    else if (v == 1) snprintf(b, n, "a file that cannot be read");
    else snprintf(b, n, "a %s (content %016llx)", what, (unsigned long long)v);
}

void tt_cli_mpi_opt_note(const opts *o, int i, char *b, size_t n)
{
    const char *path = i == O_TABLE ? o->table : i == O_TOPO ? o->val.topo
                     : i == O_CALIB ? tt_setting("TOPOTUNE_CALIBRATION") : NULL;
    b[0] = '\0';
    FILE *f = path && *path ? fopen(path, "rb") : NULL;
    if (path && *path && !f)
        snprintf(b, n, " (here %s cannot be read: %s)", path, strerror(errno));
    if (f)
        fclose(f);
}

void tt_cli_mpi_opt_text(int i, uint64_t v, char *b, size_t n)
{
    static const char *const avg[] = {"avg", "rank0", "min", "max"};
    double d;
    switch (i) {
    case 0: snprintf(b, n, "%s", tt_sweep_coll_name((tt_coll)v)); break;
    case 9: snprintf(b, n, "%s", tt_dtype_name((tt_dtype)v)); break;
    case 10: snprintf(b, n, "%s", tt_redop_name((tt_redop)v)); break;
    case 12: snprintf(b, n, "%s", tt_algo_label((tt_algo)v)); break;
    case 13: snprintf(b, n, "%s", tt_proto_name((tt_proto)v)); break;
    case O_CYCLES: snprintf(b, n, v ? "%llu" : "0 (until killed)", (unsigned long long)v); break;
    case O_AVERAGE: snprintf(b, n, "%s", v < 4 ? avg[v] : "?"); break;
    case O_VALIDATE: snprintf(b, n, "%s", v ? "on" : "off"); break;
    case O_VMARGIN:
        memcpy(&d, &v, sizeof d < sizeof v ? sizeof d : sizeof v);
        snprintf(b, n, "%g%%", d * 100);
        break;
    case O_TABLE: file_text(v, "table", b, n); break;
    case O_TOPO: file_text(v, "topology", b, n); break;
    case O_CALIB: file_text(v, "calibration", b, n); break;
    default: snprintf(b, n, "%llu", (unsigned long long)v); break;
    }
}

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
