/*
 * cli_exec_opts.c - topo-exec's options: usage text, the one parser of both modes (host ranks and
 * GPU mode, bin/cli_gpu.c) filling tt_cli_exec_opts, the launcher detection and the sweep
 * options handed to the library.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_exec.h"
#include "cli_predict.h"

/* A launcher that an MPI library can join (not just rank variables, which
 * tests and users may set by hand): PMIx (Open MPI 4/5 mpirun, srun
 * --mpi=pmix), Open MPI's ORTE, or a PMI-1/2 server (MPICH Hydra, srun). */
int tt_cli_mpi_launched(void)
{
    return tt_setting("PMIX_RANK") || tt_setting("OMPI_MCA_orte_hnp_uri") ||
           (tt_setting("PMI_RANK") && tt_setting("PMI_SIZE") && (tt_setting("PMI_FD") || tt_setting("PMI_PORT")));
}

void tt_cli_exec_usage(FILE *f)
{
    fprintf(f,
            "usage: topo-exec [options]\n"
            "  -t, --op-name COLL     all_reduce (default), reduce_scatter, all_gather, broadcast, reduce\n"
            "  -b, --minbytes SIZE    smallest size (K/M/G suffixes, 1024-based; default 32M)\n"
            "  -e, --maxbytes SIZE    largest size (default 32M)\n"
            "  -f, --stepfactor N     multiply the size by N (default 1: use -i)\n"
            "  -i, --stepbytes SIZE   add SIZE when -f is 1 (default 1M)\n"
            "  -n, --iters N          timed iterations per size (default 20)\n"
            "  -w, --warmup_iters N   warmup iterations per size (default 1)\n"
            "  -m, --agg_iters N      operations per iteration, in one group (default 1)\n"
            "  -c, --check N          correctness iterations per size (default 1; 0 = #wrong N/A)\n"
            "  -o, --op OP            sum (default), prod, min, max, avg\n"
            "  -d, --datatype TYPE    int8 uint8 int32 uint32 int64 uint64 half bfloat16 float (default) double\n"
            "  -r, --root N           root of broadcast/reduce (default 0)\n"
            "  -g, --ngpus N          N ranks on GPUs (GPU mode, docs/gpu-executor.md; exit 2 without GPUs, 1 if unusable)\n"
            "      --host N           N host ranks as threads of this process (default 4)\n"
            "      --algo NAME        ring, tree, halving-doubling, hierarchical (also NCCL_ALGO)\n"
            "      --proto NAME       simple, ll, ll128 (also NCCL_PROTO)\n"
            "      --chunk SIZE       pipeline chunk (default 512K)\n"
            "  -T, --timeout SEC      per-wait deadline (default TOPOTUNE_TIMEOUT_MS or 30 s)\n"
            "  -J, --output_file F    also write the results as JSON to F\n"
            "      --rank R --nranks N --master HOST:PORT   one rank per process, TCP rendezvous\n"
            "                         (or RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun sets them;\n"
            "                         under srun Slurm's variables: no MASTER_ADDR needed;\n"
            "                         an IPv6 address in brackets: --master [::1]:29500)\n"
            "      --mpi              one rank per MPI process (automatic under mpirun/srun when built with MPI)\n"
            "      --no-progress      no live progress line on stderr\n"
            "      --cycles N         run the whole sweep N times (0: until killed; nccl-tests' -N)\n"
            "      --average MODE     time across ranks: avg (default), rank0, min, max (nccl-tests' -a)\n"
            "      --bind POLICY      host ranks' worker threads: auto (default: a core per rank when this\n"
            "                         host's ranks fit the cores of the CPU mask), core (one per core first),\n"
            "                         cpu (in CPU order), none; also TOPOTUNE_HOST_BIND\n"
            "  -V, --version          print the version\n"
            "      --predict TOPO     add the topotune model's predicted time and its error per row, for the\n"
            "                         topology TOPO (topo-dump output; also TOPOTUNE_PREDICT_TOPO)\n"
            "      --calibration F    model constants for --predict and --validate (topo-tune --calibrate output)\n"
            "      --table FILE       plans per size from a topo-tune JSON table (--algo/--proto still win;\n"
            "                         rules the host transports cannot run fall back and are counted)\n"
            "      --validate         per size, run the tuning table's choice (--table) and its nearest runner-ups\n"
            "                         back to back and report whether the choice was right (exit 3 when it lost)\n"
            "      --topo FILE        with --validate: topology for the model (default: built-in host stand-in);\n"
            "                         without --table the table is computed from it\n"
            "      --validate-margin PCT   a choice within PCT%% of the fastest is within noise (default 5)\n"
            "      --validate-runners-up N runner-ups measured per size (default 2; 0..7)\n"
            "      --validate-rounds N     measure the candidates of a size N times, interleaved (default 1)\n"
            "  -h, --help\n"
            "GPU mode only (-g N, --engine or --gpu-copy-bench without --host/--validate; docs/gpu-executor.md;\n"
            "host mode refuses these, and GPU mode refuses -m, --chunk, --cycles, --average, --bind, --mpi):\n"
            "      --engine E         topotune (default) or nccl (libnccl.so.2)\n"
            "      --channels N       channels of the GPU executor (1..64)\n"
            "      --check-max SIZE   sizes above SIZE are not checked (default 256M)\n"
            "      --gpu-copy-bench SIZE   reduce-copy against cudaMemcpy device-to-device\n"
            "      --gpu-transport T  GPU process ranks: auto (default; net when the hosts differ), host, net\n"
            "                         (pinned FIFOs + proxy over the host transports; also TOPOTUNE_GPU_TRANSPORT)\n"
            "Without arguments: a short validated AllReduce sweep on this machine's GPUs (-g <all> -b 8 -e 64M -f 8\n"
            "-n 20 -w 5 -c 1) or, without a usable GPU, on host ranks (--host 4 -b 1K -e 1M -f 4 -n 10 -w 2 -c 1).\n"
            "Started as all_reduce_perf, all_gather_perf, reduce_scatter_perf, broadcast_perf or reduce_perf: nccl-tests'\n"
            "options and output (all_reduce_perf --help; docs/cli-topo-exec.md, \"nccl-tests drop-in\").\n");
}

void tt_cli_exec_set_timeout(const tt_cli_exec_opts *o)
{
    if (o->timeout_ms <= 0)
        return;
    char b[32];
    snprintf(b, sizeof b, "%d", o->timeout_ms);
    tt_cli_exec_set("TOPOTUNE_TIMEOUT_MS", b); /* the communicators' deadline (exec_comm.c, exec_cuda_comm.cu) */
}

/* Is this a GPU-mode command line?  (--host always means host ranks; --validate is parsed as
 * host mode and runs its GPU ranks itself, bin/cli_validate.c.) */
static int wants_gpu(int argc, char **argv)
{
    int gpu = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--host") || !strncmp(a, "--host=", 7)) return 0;
        if (!strcmp(a, "--validate")) return 0;
        if (!strcmp(a, "-g") || !strncmp(a, "--ngpus", 7) || !strncmp(a, "--engine", 8) ||
            !strncmp(a, "--gpu-copy-bench", 16) || (a[0] == '-' && a[1] == 'g' && a[2] >= '0' && a[2] <= '9'))
            gpu = 1;
    }
    return gpu;
}

enum { O_HOST = 1000, O_ALGO, O_PROTO, O_RANK, O_NRANKS, O_MASTER, O_CHUNK, O_NOPROG, O_PREDICT, O_CALIB, O_TABLE,
       O_MPI, O_VALIDATE, O_TOPO, O_VMARGIN, O_VRUNNERS, O_VROUNDS, O_CYCLES, O_AVERAGE, O_BIND, O_ENGINE, O_CHAN,
       O_COPY, O_CHKMAX, O_GPUTP };
enum { M_HOST = 1, M_GPU = 2, M_BOTH = 3 };

/* Every option of topo-exec and the modes that take it; the other mode treats it as unknown (as
 * getopt_long does, abbreviations included, the table is filtered per mode). */
static const struct {
    struct option o;
    int modes;
} all_options[] = {
    {{"op-name", 1, 0, 't'}, M_BOTH}, {{"minbytes", 1, 0, 'b'}, M_BOTH}, {{"maxbytes", 1, 0, 'e'}, M_BOTH},
    {{"stepfactor", 1, 0, 'f'}, M_BOTH}, {{"stepbytes", 1, 0, 'i'}, M_BOTH}, {{"iters", 1, 0, 'n'}, M_BOTH},
    {{"warmup_iters", 1, 0, 'w'}, M_BOTH}, {{"agg_iters", 1, 0, 'm'}, M_HOST}, {{"check", 1, 0, 'c'}, M_BOTH},
    {{"op", 1, 0, 'o'}, M_BOTH}, {{"datatype", 1, 0, 'd'}, M_BOTH}, {{"root", 1, 0, 'r'}, M_BOTH},
    {{"ngpus", 1, 0, 'g'}, M_BOTH}, {{"timeout", 1, 0, 'T'}, M_BOTH}, {{"output_file", 1, 0, 'J'}, M_BOTH},
    {{"help", 0, 0, 'h'}, M_HOST}, {{"host", 1, 0, O_HOST}, M_HOST}, {{"algo", 1, 0, O_ALGO}, M_BOTH},
    {{"proto", 1, 0, O_PROTO}, M_BOTH}, {{"rank", 1, 0, O_RANK}, M_BOTH}, {{"nranks", 1, 0, O_NRANKS}, M_BOTH},
    {{"master", 1, 0, O_MASTER}, M_BOTH}, {{"chunk", 1, 0, O_CHUNK}, M_HOST},
    {{"no-progress", 0, 0, O_NOPROG}, M_BOTH}, {{"predict", 1, 0, O_PREDICT}, M_BOTH},
    {{"calibration", 1, 0, O_CALIB}, M_BOTH}, {{"table", 1, 0, O_TABLE}, M_BOTH}, {{"mpi", 0, 0, O_MPI}, M_HOST},
    {{"validate", 0, 0, O_VALIDATE}, M_HOST}, {{"topo", 1, 0, O_TOPO}, M_HOST},
    {{"validate-margin", 1, 0, O_VMARGIN}, M_HOST}, {{"validate-runners-up", 1, 0, O_VRUNNERS}, M_HOST},
    {{"validate-rounds", 1, 0, O_VROUNDS}, M_HOST}, {{"cycles", 1, 0, O_CYCLES}, M_HOST},
    {{"average", 1, 0, O_AVERAGE}, M_HOST}, {{"bind", 1, 0, O_BIND}, M_HOST}, {{"version", 0, 0, 'V'}, M_HOST},
    {{"engine", 1, 0, O_ENGINE}, M_GPU}, {{"channels", 1, 0, O_CHAN}, M_GPU},
    {{"gpu-copy-bench", 1, 0, O_COPY}, M_GPU}, {{"check-max", 1, 0, O_CHKMAX}, M_GPU},
    {{"gpu-transport", 1, 0, O_GPUTP}, M_GPU},
};
enum { NOPTS = sizeof all_options / sizeof *all_options };

/* Whether ARG ("--name" or "--name=value") is an option of GPU mode only (for host mode's message). */
static int gpu_only(const char *arg)
{
    if (!arg || strncmp(arg, "--", 2))
        return 0;
    size_t len = strcspn(arg + 2, "=");
    for (int i = 0; i < NOPTS; i++)
        if (all_options[i].modes == M_GPU && strlen(all_options[i].o.name) == len &&
            !strncmp(all_options[i].o.name, arg + 2, len))
            return 1;
    return 0;
}

/* What the command line said beyond the options struct (checked after the loop). */
typedef struct {
    const char *algo_s, *proto_s;
    int have_nranks, host_given, predict_given, mpi_given, val_given;
} given;

static void defaults(tt_cli_exec_opts *o, int argc, char **argv)
{
    static const tt_cli_exec_opts d = {
        .minb = 32u << 20, .maxb = 32u << 20, .stepb = 1u << 20, .factor = 1, .iters = 20, .warmup = 1, .agg = 1,
        .check = 1, .check_max = 256u << 20, .dtype = TT_FLOAT, .op = TT_SUM, .coll = TT_COLL_ALLREDUCE,
        .plan = {TT_ALGO_DEFAULT, TT_PROTO_DEFAULT, 0, 0}, .host_ranks = 4, .rank = -1, .progress = 1, .cycles = 1};
    *o = d;
    o->gpu = wants_gpu(argc, argv);
    o->argc = argc;
    o->argv = argv;
    tt_cli_validate_defaults(&o->val);
    if (argc == 1) { /* host mode without arguments: a short sweep */
        o->minb = 1024;
        o->maxb = 1u << 20;
        o->factor = 4;
        o->iters = 10;
        o->warmup = 2;
    }
}

/* A size option: host mode names the option, GPU mode also refuses 0 (as each mode always did). */
static int size_option(const tt_cli_exec_opts *o, int ch, const char *s, uint64_t *u)
{
    if (o->gpu) {
        if (tt_parse_size(s, u) != TT_OK || *u == 0)
            return tt_cli_bad("'%s' is not a positive size (number with optional K/M/G)", s);
        return 0;
    }
    if (tt_parse_size(s, u) != TT_OK)
        return tt_cli_bad("-%s: '%s' is not a size (number with optional K/M/G)",
                          ch == 'b' ? "b" : ch == 'e' ? "e" : ch == 'i' ? "i" : "-chunk", s);
    /* --chunk 0 would be indistinguishable from no --chunk (the default): refused, never silently the default */
    if (ch == O_CHUNK && (*u < 64 || *u > (1u << 30)))
        return tt_cli_bad("--chunk %s: the pipeline chunk must be 64 bytes..1G (leave --chunk out for the default: "
                          "TOPOTUNE_CHUNK_BYTES or 512K)", s);
    return 0;
}

/* the options of the GPU engines and the validation (one option each) */
static int gpu_or_validate_option(tt_cli_exec_opts *o, given *g, int ch, const char *a)
{
    long long v;
    switch (ch) {
    case O_ENGINE:
        if (!strcmp(a, "nccl")) o->nccl = 1;
        else if (strcmp(a, "topotune")) return tt_cli_bad("--engine '%s': valid values are topotune, nccl", a);
        return 0;
    case O_CHAN:
        if (tt_cli_int_option("--channels", a, 1, 64, &v)) return EXIT_USAGE;
        o->channels = (int)v;
        return 0;
    case O_GPUTP: /* the setting the library reads (tt_gpu_comm_init_procs), as the environment variable */
        if (strcmp(a, "auto") && strcmp(a, "host") && strcmp(a, "net"))
            return tt_cli_bad("--gpu-transport '%s': valid values are auto, host, net", a);
        tt_cli_exec_set("TOPOTUNE_GPU_TRANSPORT", a);
        return 0;
    case O_VALIDATE: o->val.on = 1; return 0;
    case O_TOPO: o->val.topo = a; g->val_given = 1; return 0;
    default: /* O_VMARGIN, O_VRUNNERS, O_VROUNDS */
        g->val_given = 1;
        return tt_cli_validate_option(&o->val, ch == O_VMARGIN    ? "--validate-margin"
                                               : ch == O_VRUNNERS ? "--validate-runners-up"
                                                                  : "--validate-rounds", a)
                   ? EXIT_USAGE
                   : 0;
    }
}

/* One option of either mode: 0 or the exit code after a message. */
static int one_option(tt_cli_exec_opts *o, given *g, int ch, const char *a, char **argv)
{
    long long v;
    uint64_t u;
    int gpu = o->gpu;
    switch (ch) {
    case 't': return tt_coll_parse(a, &o->coll) != TT_OK ? tt_cli_bad("-t: %s", tt_error_message()) : 0;
    case 'b': case 'e': case 'i': case O_CHUNK: case O_COPY: case O_CHKMAX:
        if (size_option(o, ch, a, &u)) return EXIT_USAGE;
        if (ch == 'b') o->minb = u;
        else if (ch == 'e') o->maxb = u;
        else if (ch == 'i') o->stepb = u;
        else if (ch == O_CHUNK) o->plan.chunk_bytes = (size_t)u;
        else if (ch == O_COPY) o->copy_bench = u;
        else o->check_max = u;
        return 0;
    case 'f': return tt_cli_int_option("-f", a, 1, 1 << 20, &o->factor) ? EXIT_USAGE : 0;
    case 'n': if (tt_cli_int_option(gpu ? "-n" : "-n (iterations)", a, 1, 1 << 30, &v)) return EXIT_USAGE; o->iters = (int)v; return 0;
    case 'w': if (tt_cli_int_option("-w", a, 0, 1 << 30, &v)) return EXIT_USAGE; o->warmup = (int)v; return 0;
    case 'm': if (tt_cli_int_option("-m", a, 1, 1 << 20, &v)) return EXIT_USAGE; o->agg = (int)v; return 0;
    case 'c': if (tt_cli_int_option("-c", a, 0, 1 << 20, &v)) return EXIT_USAGE; o->check = (int)v; return 0;
    case 'o': return tt_redop_parse(a, &o->op) != TT_OK ? tt_cli_bad("-o: %s", tt_error_message()) : 0;
    case 'd': return tt_dtype_parse(a, &o->dtype) != TT_OK ? tt_cli_bad("-d: %s", tt_error_message()) : 0;
    case 'r': if (tt_cli_int_option("-r", a, 0, gpu ? 63 : 1 << 20, &v)) return EXIT_USAGE; o->root = (int)v; return 0;
    case 'g': if (tt_cli_int_option("-g", a, gpu, gpu ? 64 : 1024, &v)) return EXIT_USAGE; o->ngpus = (int)v; return 0;
    case 'T':
        /* -T 0: nccl-tests' "no timeout"; here the library's own deadline per wait without progress stays
         * (TOPOTUNE_TIMEOUT_MS, 30 s): a healthy run never meets it, a dead peer is still named */
        if (tt_cli_int_option("-T (seconds)", a, 0, 86400, &v)) return EXIT_USAGE;
        o->timeout_ms = (int)(v * 1000);
        if (gpu) tt_cli_exec_set_timeout(o); /* host mode: after the check of the environment's value */
        return 0;
    case 'J': o->json = a; return 0;
    case 'h': tt_cli_exec_usage(stdout); exit(0);
    case 'V': exit(tt_cli_print_version());
    case O_CYCLES: return tt_cli_int_option("--cycles", a, 0, 1 << 30, &o->cycles) ? EXIT_USAGE : 0;
    case O_AVERAGE: {
        static const char *const modes[] = {"avg", "rank0", "min", "max", NULL};
        int m = tt_cli_choice("--average", a, modes);
        if (m < 0) return EXIT_USAGE;
        o->time_of = m; /* TT_SWEEP_TIME_* in this order */
        return 0;
    }
    case O_BIND: {
        static const char *const pol[] = {"auto", "core", "cpu", "none", NULL};
        if (tt_cli_choice("--bind", a, pol) < 0) return EXIT_USAGE;
        tt_cli_exec_set("TOPOTUNE_HOST_BIND", a); /* the communicators' setting (exec_bind.c) */
        return 0;
    }
    case O_HOST:
        if (tt_cli_int_option("--host", a, 1, 1024, &v)) return EXIT_USAGE;
        o->host_ranks = (int)v;
        g->host_given = 1;
        return 0;
    case O_ALGO: g->algo_s = a; o->algo_src = "--algo"; return 0;
    case O_PROTO: g->proto_s = a; o->proto_src = "--proto"; return 0;
    case O_RANK: if (tt_cli_int_option("--rank", a, 0, gpu ? 63 : 1023, &v)) return EXIT_USAGE; o->rank = (int)v; return 0;
    case O_NRANKS:
        if (tt_cli_int_option("--nranks", a, 1, gpu ? 64 : 1024, &v)) return EXIT_USAGE;
        o->nranks = (int)v;
        g->have_nranks = 1;
        return 0;
    case O_MASTER:
        if (!gpu && strlen(a) >= sizeof o->master)
            return tt_cli_bad("--master: '%.40s...' is longer than %zu characters", a, sizeof o->master - 1);
        snprintf(o->master, sizeof o->master, "%s", a);
        return 0;
    case O_NOPROG: o->progress = 0; return 0;
    case O_MPI: g->mpi_given = 1; return 0;
    /* the prediction source's settings (bin/cli_predict.c) */
    case O_PREDICT: tt_cli_exec_set("TOPOTUNE_PREDICT_TOPO", a); g->predict_given = o->predict = 1; return 0;
    case O_CALIB: tt_cli_exec_set("TOPOTUNE_CALIBRATION", a); return 0;
    case O_TABLE: o->table = o->val.table = a; return 0; /* a plan table, or the table --validate judges */
    case ':': return tt_cli_bad("option %s needs a value", argv[optind - 1]);
    case '?':
        if (gpu)
            return tt_cli_bad("option '%s' is not available in GPU mode (-g); see docs/gpu-executor.md", argv[optind - 1]);
        if (gpu_only(argv[optind - 1]))
            return tt_cli_bad("option '%s' belongs to GPU mode (-g N without --host/--validate; docs/gpu-executor.md), "
                              "not to host ranks", argv[optind - 1]);
        return tt_cli_bad("unknown option '%s' (see --help)", argv[optind - 1]);
    default: return gpu_or_validate_option(o, g, ch, a);
    }
}

/* NCCL_ALGO / NCCL_PROTO stand in for --algo / --proto (NCCL's variables, read as NCCL reads them). */
static void nccl_env_plan(tt_cli_exec_opts *o, given *g)
{
    if (!g->algo_s && tt_setting("NCCL_ALGO") && *tt_setting("NCCL_ALGO")) {
        g->algo_s = tt_setting("NCCL_ALGO");
        if (!o->gpu) o->algo_src = "NCCL_ALGO";
    }
    if (!g->proto_s && tt_setting("NCCL_PROTO") && *tt_setting("NCCL_PROTO")) {
        g->proto_s = tt_setting("NCCL_PROTO");
        if (!o->gpu) o->proto_src = "NCCL_PROTO";
    }
}

/* GPU mode after the options: the plan, sizes, prediction, process ranks. */
static int finish_gpu(tt_cli_exec_opts *o, given *g)
{
    nccl_env_plan(o, g);
    if (g->algo_s && tt_algo_parse(g->algo_s, &o->plan.algo) != TT_OK) return tt_cli_bad("--algo: %s", tt_error_message());
    if (g->proto_s && tt_proto_parse(g->proto_s, &o->plan.proto) != TT_OK) return tt_cli_bad("--proto: %s", tt_error_message());
    o->plan.channels = o->channels;
    if (o->maxb < o->minb) return tt_cli_bad("-e (maxbytes) is smaller than -b (minbytes)");
    if (!o->copy_bench && o->ngpus == 0) o->ngpus = 1;
    if (o->predict && !topo_exec_predict_enabled())
        return tt_cli_bad("--predict: no prediction possible with that topology/calibration (reason above)");
    /* process ranks: the options, else a launcher's environment (as host mode) */
    if (o->rank >= 0 || g->have_nranks || o->master[0]) {
        if (o->rank < 0 || !g->have_nranks || !o->master[0])
            return tt_cli_bad("process ranks on GPUs need all of --rank, --nranks and --master");
        if (o->rank >= o->nranks) return tt_cli_bad("--rank must be below --nranks");
        o->mp = 1;
    } else if ((tt_setting("MASTER_ADDR") && tt_setting("MASTER_PORT") && tt_env_rank_vars(NULL, NULL)) ||
               tt_env_slurm_step()) {
        o->mp = 2;
    }
    if (o->mp && !o->copy_bench && o->ngpus != 1)
        return tt_cli_bad("-g %d with process ranks: each process drives one GPU rank; use -g 1 and start one "
                          "process per rank", o->ngpus);
    return 0;
}

/* Host mode: how the ranks meet (options, --mpi, torchrun's variables, else an MPI launcher). */
static int host_ranks_mode(tt_cli_exec_opts *o, const given *g, int have_mpi)
{
    if (g->mpi_given && !have_mpi)
        return tt_cli_bad("--mpi: this topo-exec was built without MPI (install libopenmpi-dev and rebuild, or use "
                          "mpirun -x MASTER_ADDR=host -x MASTER_PORT=port without --mpi)");
    if (g->mpi_given && (o->rank >= 0 || g->have_nranks || o->master[0] || g->host_given))
        return tt_cli_bad("--mpi cannot be combined with --rank/--nranks/--master or --host");
    if (g->mpi_given) {
        o->mp = 3;
    } else if (o->rank >= 0 || g->have_nranks || o->master[0]) {
        if (o->rank < 0 || !g->have_nranks || !o->master[0])
            return tt_cli_bad("multi-process mode needs all of --rank, --nranks and --master");
        if (g->host_given)
            return tt_cli_bad("--host N runs N ranks as threads of this process; it cannot be combined with "
                              "--rank/--nranks/--master (one rank per process)");
        if (o->rank >= o->nranks)
            return tt_cli_bad("--rank must be below --nranks");
        o->mp = 1;
    } else if (tt_setting("MASTER_ADDR") && tt_setting("MASTER_PORT") && tt_env_rank_vars(NULL, NULL)) {
        o->mp = 2; /* tt_comm_init_env */
    } else if (have_mpi && !g->host_given && tt_cli_mpi_launched()) {
        o->mp = 3; /* MPI_Init + tt_comm_init_mpi */
    } else if (!g->host_given && tt_env_slurm_step()) {
        o->mp = 2; /* srun without MASTER_ADDR: tt_comm_init_env reads Slurm's node list */
    } else if (!g->host_given) {
        /* started by a launcher but without a rendezvous address: refuse
         * rather than run one unrelated job per process (nccl-tests#27) */
        static const char *const sz[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
        for (size_t i = 0; i < sizeof sz / sizeof *sz; i++) {
            const char *v2 = tt_setting(sz[i]);
            if (v2 && atoi(v2) > 1)
                return tt_cli_bad("%s=%s says this process is one of several ranks, but MASTER_ADDR and MASTER_PORT "
                           "are not both set: set them (e.g. mpirun -x MASTER_ADDR=host -x MASTER_PORT=29500), "
                           "or pass --host N to run independent host ranks in each process", sz[i], v2);
        }
    }
    return 0;
}

/* Host mode after the options: validation, the plan, the settings, sizes, the ranks. */
static int finish_host(tt_cli_exec_opts *o, given *g, int have_mpi)
{
    if (g->val_given && !o->val.on)
        return tt_cli_bad("--topo and the --validate-* options need --validate");
    if (o->ngpus > 0 && !o->val.on)
        return tt_cli_bad("-g %d: GPU ranks need the CUDA executor, which this build does not have yet; "
                   "use --host N for host ranks", o->ngpus);
    nccl_env_plan(o, g);
    if (o->val.on && (g->algo_s || g->proto_s))
        return tt_cli_bad("--validate runs the table's choice and its runner-ups; drop %s (it would fix one algorithm "
                          "or protocol)", g->algo_s ? o->algo_src : o->proto_src);
    if (g->predict_given && !tt_cli_exec_has_pred())
        return tt_cli_bad("--predict: no prediction possible with that topology/calibration (reason above)");
    if (g->algo_s && tt_algo_parse(g->algo_s, &o->plan.algo) != TT_OK)
        return tt_cli_bad("%s: %s (one algorithm; lists and ^exclusions are not supported)", o->algo_src,
                   tt_error_message());
    if (g->proto_s && tt_proto_parse(g->proto_s, &o->plan.proto) != TT_OK)
        return tt_cli_bad("%s: %s (one protocol; lists are not supported)", o->proto_src, tt_error_message());
    if (tt_settings_check() != TT_OK) /* the executor's TOPOTUNE_* settings, before anything runs */
        return tt_cli_bad("%s", tt_error_message());
    uint64_t u;
    if (!o->plan.chunk_bytes) { /* no --chunk (its range is checked with the option: 0 is refused there) */
        const char *cb = tt_setting("TOPOTUNE_CHUNK_BYTES"); /* checked just above */
        o->plan.chunk_bytes = (cb && *cb && tt_parse_size(cb, &u) == TT_OK) ? (size_t)u : 512 * 1024;
    }
    if (o->minb == 0 || o->maxb == 0)
        return tt_cli_bad("sizes must be positive (-b %llu, -e %llu)", (unsigned long long)o->minb,
                   (unsigned long long)o->maxb);
    if (o->maxb < o->minb)
        return tt_cli_bad("-e (maxbytes) is smaller than -b (minbytes)");
    if (o->factor <= 1 && o->stepb == 0)
        return tt_cli_bad("-i 0 with -f 1 would never reach -e");
    int rc = host_ranks_mode(o, g, have_mpi);
    if (rc)
        return rc;
    int nr = o->mp == 1 ? o->nranks : o->host_ranks;
    if ((o->coll == TT_COLL_BROADCAST || o->coll == TT_COLL_REDUCE) && o->mp < 2 && o->root >= nr)
        return tt_cli_bad("-r %d: root must be below the number of ranks (%d)", o->root, nr);
    return 0;
}

int tt_cli_exec_parse(int argc, char **argv, int have_mpi, tt_cli_exec_opts *o)
{
    defaults(o, argc, argv);
    int mode = o->gpu ? M_GPU : M_HOST, n = 0;
    struct option lo[NOPTS + 1];
    for (int i = 0; i < NOPTS; i++)
        if (all_options[i].modes & mode)
            lo[n++] = all_options[i].o;
    memset(&lo[n], 0, sizeof lo[n]);
    given g;
    memset(&g, 0, sizeof g);
    int ch, rc;
    optind = 1;
    opterr = 0;
    const char *shorts = o->gpu ? ":t:b:e:f:i:n:w:c:o:d:r:g:T:J:" : ":t:b:e:f:i:n:w:m:c:o:d:r:g:T:J:hV";
    while ((ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1)
        if ((rc = one_option(o, &g, ch, optarg, argv)))
            return rc;
    if (optind < argc)
        return tt_cli_bad("unexpected argument '%s'", argv[optind]);
    return o->gpu ? finish_gpu(o, &g) : finish_host(o, &g, have_mpi);
}

tt_sweep_opts tt_cli_exec_sweep_opts(const tt_cli_exec_opts *o)
{
    tt_sweep_opts s;
    memset(&s, 0, sizeof s);
    s.coll = o->coll;
    s.dtype = o->dtype;
    s.op = o->op;
    s.root = o->root;
    s.minb = o->minb;
    s.maxb = o->maxb;
    s.stepb = o->stepb;
    s.factor = o->factor;
    s.iters = o->iters;
    s.warmup = o->warmup;
    s.agg = o->agg;
    s.check = o->check;
    s.plan = o->plan;
    s.time_of = o->time_of;
    s.per_iter = tt_cli_perf_per_iter(&s.per_iter_skip); /* the drop-in's -I / -K */
    return s;
}
