/*
 * cli_exec_agree.c - the options every rank of topo-exec must share (issue #32 item 7): everything that
 * changes the sequence or the content of the collectives, as numbers (a file option as a print of its
 * content), with their names and texts for the message; compared before the first collective by MPI mode
 * (tt_cli_mpi_agree, bin/topo_exec_mpi.c) and by the rendezvous modes of host and GPU ranks
 * (tt_cli_exec_agree, over the communicator itself).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_exec.h"
#include "tt_common.h"
#include "tt_exec.h"

#define MPI_NOPT TT_CLI_MPI_NOPT
typedef tt_cli_exec_opts opts;

/* the options every rank must share, with their names */
const char *const tt_cli_mpi_opt_name[MPI_NOPT] = {
    "-t (collective)", "-b (minbytes)", "-e (maxbytes)", "-i (stepbytes)", "-f (stepfactor)",
    "-n (iters)", "-w (warmup_iters)", "-m (agg_iters)", "-c (check)", "-d (datatype)",
    "-o (op)", "-r (root)", "--algo/NCCL_ALGO", "--proto/NCCL_PROTO", "--chunk/TOPOTUNE_CHUNK_BYTES",
    "--cycles", "--average", "--table", "--validate", "--validate-runners-up", "--validate-rounds",
    "--validate-margin", "--topo", "--calibration/TOPOTUNE_CALIBRATION", "-g (ngpus)", "--engine",
    "--channels", "--check-max", "--gpu-transport/TOPOTUNE_GPU_TRANSPORT"};
enum { O_CYCLES = 15, O_AVERAGE, O_TABLE, O_VALIDATE, O_VRUNNERS, O_VROUNDS, O_VMARGIN, O_TOPO, O_CALIB, O_NGPUS,
       O_ENGINE, O_CHANNELS, O_CHKMAX, O_GPUTP };
_Static_assert(O_GPUTP + 1 == MPI_NOPT, "one name per compared option");
static const char *const gpu_tp[] = {"auto", "host", "net"};

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
    const char *tp = tt_setting("TOPOTUNE_GPU_TRANSPORT"); /* --gpu-transport sets it */
    uint64_t tpv = 0;
    for (int i = 1; tp && i < 3; i++)
        if (!strcmp(tp, gpu_tp[i])) tpv = (uint64_t)i;
    uint64_t x[MPI_NOPT] = {(uint64_t)o->coll, o->minb, o->maxb, o->stepb, (uint64_t)o->factor,
                            (uint64_t)o->iters, (uint64_t)o->warmup, (uint64_t)o->agg, (uint64_t)o->check,
                            (uint64_t)o->dtype, (uint64_t)o->op, (uint64_t)o->root, (uint64_t)o->plan.algo,
                            (uint64_t)o->plan.proto, (uint64_t)o->plan.chunk_bytes,
                            (uint64_t)o->cycles, (uint64_t)o->time_of, file_print(o->table), (uint64_t)val->on,
                            (uint64_t)(val->on ? val->runners_up : 0), (uint64_t)(val->on ? val->rounds : 0), margin,
                            val->on ? file_print(val->topo) : 0, file_print(calib), (uint64_t)o->ngpus,
                            (uint64_t)o->nccl, (uint64_t)o->channels, o->gpu ? o->check_max : 0, o->gpu ? tpv : 0};
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
    case O_ENGINE: snprintf(b, n, "%s", v ? "nccl" : "topotune"); break;
    case O_GPUTP: snprintf(b, n, "%s", v < 3 ? gpu_tp[v] : "?"); break;
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

/* Rendezvous modes (--master, torchrun's variables; host and GPU ranks): what tt_cli_mpi_agree does
 * under MPI, over the communicator itself, before the first measured collective: every rank's options against rank 0's (an AllGather with
 * the default plan, whatever --algo says) plus every rank's verdict so far (rc), so that ranks started
 * differently stop together with exit 2 instead of rank 0 printing a passing table and failing after it.
 * The agreed exit code; *why: the reason (for -J). */
int tt_cli_exec_agree(const opts *o, tt_comm *c, int rc, char *why, size_t whyn)
{
    int me = tt_comm_rank(c), n = tt_comm_nranks(c);
    enum { W = TT_CLI_MPI_NOPT + 1 };
    uint64_t mine[W];
    uint64_t *all = calloc((size_t)n * W, sizeof *all);
    if (!all) {
        snprintf(why, whyn, "out of memory comparing the options of the ranks");
        return EXIT_RUNTIME;
    }
    tt_cli_mpi_opt_values(o, mine);
    mine[TT_CLI_MPI_NOPT] = (uint64_t)rc;
    tt_status st = tt_allgather(mine, all, W, TT_UINT64, c);
    if (st == TT_OK)
        st = tt_comm_wait(c);
    if (st != TT_OK) {
        snprintf(why, whyn, "comparing the options of the ranks: %s", tt_error_message());
        fprintf(stderr, "topo-exec: %s\n", why);
        free(all);
        return EXIT_RUNTIME;
    }
    int out = 0;
    for (int r = 1; r < n; r++)
        for (int i = 0; i < TT_CLI_MPI_NOPT; i++)
            if (all[(size_t)r * W + i] != all[i]) {
                char a[64], b[64];
                tt_cli_mpi_opt_text(i, all[(size_t)r * W + i], a, sizeof a);
                tt_cli_mpi_opt_text(i, all[i], b, sizeof b);
                snprintf(why, whyn, "rank %d: option %s is %s there but %s on rank 0; start every rank with the "
                         "same options (nothing measured)", r, tt_cli_mpi_opt_name[i], a, b);
                char note[600] = "";
                if (me == 0 || me == r) /* a file this rank cannot read: where and why, from here */
                    tt_cli_mpi_opt_note(o, i, note, sizeof note);
                if (note[0])
                    fprintf(stderr, "topo-exec: %s; rank %d%s\n", why, me, note);
                else if (me == 0 || me == r)
                    fprintf(stderr, "topo-exec: %s\n", why);
                out = EXIT_USAGE;
                r = n; /* the first difference is enough */
                break;
            }
    for (int r = 0; !out && r < n; r++)
        if (all[(size_t)r * W + TT_CLI_MPI_NOPT]) {
            out = (int)all[(size_t)r * W + TT_CLI_MPI_NOPT];
            snprintf(why, whyn, "nothing measured: rank %d refused to start (exit %d; its message is on its "
                     "standard error)", r, out);
            if (me == 0 && r != me)
                fprintf(stderr, "topo-exec: %s\n", why);
        }
    free(all);
    return out;
}
