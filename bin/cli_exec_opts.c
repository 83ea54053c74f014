/*
 * cli_exec_opts.c - topo-exec's options: usage text, the host-mode command line (GPU mode's is
 * bin/cli_gpu.c), the launcher detection and the sweep options handed to the library.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_exec.h"

/* A launcher that an MPI library can join (not just rank variables, which
 * tests and users may set by hand): PMIx (Open MPI 4/5 mpirun, srun
 * --mpi=pmix), Open MPI's ORTE, or a PMI-1/2 server (MPICH Hydra, srun). */
int tt_cli_mpi_launched(void)
{
    return getenv("PMIX_RANK") || getenv("OMPI_MCA_orte_hnp_uri") ||
           (getenv("PMI_RANK") && getenv("PMI_SIZE") && (getenv("PMI_FD") || getenv("PMI_PORT")));
}

/* MemAvailable from /proc/meminfo in bytes, 0 when unknown. */
uint64_t tt_cli_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
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
            "  -g, --ngpus N          N ranks on GPUs (GPU mode, docs/gpu-executor.md; refused without a usable GPU)\n"
            "      --gpu-transport T  GPU process ranks: auto (default; net when the hosts differ), host, net\n"
            "                         (pinned FIFOs + proxy over the host transports; also TOPOTUNE_GPU_TRANSPORT)\n"
            "      --host N           N host ranks as threads of this process (default 4)\n"
            "      --algo NAME        ring, tree, halving-doubling, hierarchical (also NCCL_ALGO)\n"
            "      --proto NAME       simple, ll, ll128 (also NCCL_PROTO)\n"
            "      --chunk SIZE       pipeline chunk (default 512K)\n"
            "  -T, --timeout SEC      per-wait deadline (default TOPOTUNE_TIMEOUT_MS or 30 s)\n"
            "  -J, --output_file F    also write the results as JSON to F\n"
            "      --rank R --nranks N --master HOST:PORT   one rank per process, TCP rendezvous\n"
            "                         (or RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun sets them;\n"
            "                         under srun Slurm's variables: no MASTER_ADDR needed)\n"
            "      --mpi              one rank per MPI process (automatic under mpirun/srun when built with MPI)\n"
            "      --no-progress      no live progress line on stderr\n"
            "      --cycles N         run the whole sweep N times (0: until killed; nccl-tests' -N)\n"
            "      --average MODE     time across ranks: avg (default), rank0, min, max (nccl-tests' -a)\n"
            "      --bind POLICY      host ranks' worker threads: none (default), core (one per core first),\n"
            "                         cpu (in CPU order); also TOPOTUNE_HOST_BIND\n"
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
            "Without arguments: a short validated AllReduce sweep on this machine's GPUs (-g <all> -b 8 -e 64M -f 8\n"
            "-n 20 -w 5 -c 1) or, without a usable GPU, on host ranks (--host 4 -b 1K -e 1M -f 4 -n 10 -w 2 -c 1).\n"
            "Started as all_reduce_perf, all_gather_perf, reduce_scatter_perf, broadcast_perf or reduce_perf: nccl-tests'\n"
            "options and output (all_reduce_perf --help; docs/cli-topo-exec.md, \"nccl-tests drop-in\").\n");
}

int tt_cli_exec_parse(int argc, char **argv, int have_mpi, tt_cli_exec_opts *o)
{
    memset(o, 0, sizeof *o);
    o->minb = o->maxb = 32u << 20;
    o->stepb = 1u << 20;
    o->factor = 1;
    o->iters = 20;
    o->warmup = 1;
    o->agg = 1;
    o->check = 1;
    o->dtype = TT_FLOAT;
    o->op = TT_SUM;
    o->coll = TT_COLL_ALLREDUCE;
    o->plan = TT_PLAN_DEFAULT;
    o->host_ranks = 4;
    o->rank = -1;
    o->progress = 1;
    o->cycles = 1;
    o->argc = argc;
    o->argv = argv;
    if (argc == 1) {
        o->minb = 1024;
        o->maxb = 1u << 20;
        o->factor = 4;
        o->iters = 10;
        o->warmup = 2;
    }
    enum { O_HOST = 1000, O_ALGO, O_PROTO, O_RANK, O_NRANKS, O_MASTER, O_CHUNK, O_NOPROG, O_PREDICT, O_CALIB, O_TABLE,
           O_MPI, O_VALIDATE, O_TOPO, O_VMARGIN, O_VRUNNERS, O_VROUNDS, O_CYCLES, O_AVERAGE, O_BIND };
    static const struct option lo[] = {
        {"op-name", 1, 0, 't'}, {"minbytes", 1, 0, 'b'}, {"maxbytes", 1, 0, 'e'},
        {"stepfactor", 1, 0, 'f'}, {"stepbytes", 1, 0, 'i'}, {"iters", 1, 0, 'n'},
        {"warmup_iters", 1, 0, 'w'}, {"agg_iters", 1, 0, 'm'}, {"check", 1, 0, 'c'},
        {"op", 1, 0, 'o'}, {"datatype", 1, 0, 'd'}, {"root", 1, 0, 'r'}, {"ngpus", 1, 0, 'g'},
        {"timeout", 1, 0, 'T'}, {"output_file", 1, 0, 'J'}, {"help", 0, 0, 'h'},
        {"host", 1, 0, O_HOST}, {"algo", 1, 0, O_ALGO}, {"proto", 1, 0, O_PROTO},
        {"rank", 1, 0, O_RANK}, {"nranks", 1, 0, O_NRANKS}, {"master", 1, 0, O_MASTER},
        {"chunk", 1, 0, O_CHUNK}, {"no-progress", 0, 0, O_NOPROG},
        {"predict", 1, 0, O_PREDICT}, {"calibration", 1, 0, O_CALIB}, {"table", 1, 0, O_TABLE},
        {"mpi", 0, 0, O_MPI}, {"validate", 0, 0, O_VALIDATE}, {"topo", 1, 0, O_TOPO},
        {"validate-margin", 1, 0, O_VMARGIN}, {"validate-runners-up", 1, 0, O_VRUNNERS},
        {"validate-rounds", 1, 0, O_VROUNDS}, {"cycles", 1, 0, O_CYCLES}, {"average", 1, 0, O_AVERAGE},
        {"bind", 1, 0, O_BIND}, {"version", 0, 0, 'V'}, {0, 0, 0, 0}};
    int ch, ngpus = 0, have_nranks = 0, host_given = 0, predict_given = 0, mpi_given = 0, val_given = 0;
    tt_cli_validate_defaults(&o->val);
    long long v;
    uint64_t u;
    const char *algo_s = NULL, *proto_s = NULL;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:b:e:f:i:n:w:m:c:o:d:r:g:T:J:hV", lo, NULL)) != -1) {
        switch (ch) {
        case 't':
            if (tt_coll_parse(optarg, &o->coll) != TT_OK)
                return tt_cli_bad("-t: %s", tt_error_message());
            break;
        case 'b':
        case 'e':
        case 'i':
        case O_CHUNK:
            if (tt_parse_size(optarg, &u) != TT_OK)
                return tt_cli_bad("-%s: '%s' is not a size (number with optional K/M/G)",
                           ch == 'b' ? "b" : ch == 'e' ? "e" : ch == 'i' ? "i" : "-chunk", optarg);
            if (ch == 'b') o->minb = u;
            else if (ch == 'e') o->maxb = u;
            else if (ch == 'i') o->stepb = u;
            else o->plan.chunk_bytes = (size_t)u;
            break;
        case 'f':
            if (tt_cli_int_option("-f", optarg, 1, 1 << 20, &o->factor)) return EXIT_USAGE;
            break;
        case 'n':
            if (tt_cli_int_option("-n (iterations)", optarg, 1, 1 << 30, &v)) return EXIT_USAGE;
            o->iters = (int)v;
            break;
        case 'w':
            if (tt_cli_int_option("-w", optarg, 0, 1 << 30, &v)) return EXIT_USAGE;
            o->warmup = (int)v;
            break;
        case 'm':
            if (tt_cli_int_option("-m", optarg, 1, 1 << 20, &v)) return EXIT_USAGE;
            o->agg = (int)v;
            break;
        case 'c':
            if (tt_cli_int_option("-c", optarg, 0, 1 << 20, &v)) return EXIT_USAGE;
            o->check = (int)v;
            break;
        case 'o':
            if (tt_redop_parse(optarg, &o->op) != TT_OK)
                return tt_cli_bad("-o: %s", tt_error_message());
            break;
        case 'd':
            if (tt_dtype_parse(optarg, &o->dtype) != TT_OK)
                return tt_cli_bad("-d: %s", tt_error_message());
            break;
        case 'r':
            if (tt_cli_int_option("-r", optarg, 0, 1 << 20, &v)) return EXIT_USAGE;
            o->root = (int)v;
            break;
        case 'g':
            if (tt_cli_int_option("-g", optarg, 0, 1024, &v)) return EXIT_USAGE;
            ngpus = (int)v;
            break;
        case 'T':
            if (tt_cli_int_option("-T (seconds)", optarg, 1, 86400, &v)) return EXIT_USAGE;
            o->timeout_ms = (int)(v * 1000);
            break;
        case 'J': o->json = optarg; break;
        case 'h': tt_cli_exec_usage(stdout); exit(0);
        case 'V': exit(tt_cli_print_version());
        case O_CYCLES:
            if (tt_cli_int_option("--cycles", optarg, 0, 1 << 30, &o->cycles)) return EXIT_USAGE;
            break;
        case O_AVERAGE: {
            static const char *const modes[] = {"avg", "rank0", "min", "max", NULL};
            int m = tt_cli_choice("--average", optarg, modes);
            if (m < 0) return EXIT_USAGE;
            o->time_of = m; /* TT_SWEEP_TIME_* in this order */
            break;
        }
        case O_BIND: {
            static const char *const pol[] = {"none", "core", "cpu", NULL};
            if (tt_cli_choice("--bind", optarg, pol) < 0) return EXIT_USAGE;
            setenv("TOPOTUNE_HOST_BIND", optarg, 1); /* read by the communicators (exec_bind.c) */
            break;
        }
        case O_HOST:
            if (tt_cli_int_option("--host", optarg, 1, 1024, &v)) return EXIT_USAGE;
            o->host_ranks = (int)v;
            host_given = 1;
            break;
        case O_ALGO: algo_s = optarg; o->algo_src = "--algo"; break;
        case O_PROTO: proto_s = optarg; o->proto_src = "--proto"; break;
        case O_RANK:
            if (tt_cli_int_option("--rank", optarg, 0, 1023, &v)) return EXIT_USAGE;
            o->rank = (int)v;
            break;
        case O_NRANKS:
            if (tt_cli_int_option("--nranks", optarg, 1, 1024, &v)) return EXIT_USAGE;
            o->nranks = (int)v;
            have_nranks = 1;
            break;
        case O_MASTER:
            if (strlen(optarg) >= sizeof o->master)
                return tt_cli_bad("--master: '%.40s...' is longer than %zu characters", optarg, sizeof o->master - 1);
            snprintf(o->master, sizeof o->master, "%s", optarg);
            break;
        case O_NOPROG: o->progress = 0; break;
        case O_MPI: mpi_given = 1; break;
        /* read by the prediction source (bin/cli_predict.c) */
        case O_PREDICT: setenv("TOPOTUNE_PREDICT_TOPO", optarg, 1); predict_given = 1; break;
        case O_CALIB: setenv("TOPOTUNE_CALIBRATION", optarg, 1); break;
        case O_VALIDATE:
            o->val.on = 1;
            break;
        case O_TABLE: o->table = o->val.table = optarg; break; /* a plan table, or the table --validate judges */
        case O_TOPO: o->val.topo = optarg; val_given = 1; break;
        case O_VMARGIN:
        case O_VRUNNERS:
        case O_VROUNDS:
            if (tt_cli_validate_option(&o->val,
                                       ch == O_VMARGIN    ? "--validate-margin"
                                       : ch == O_VRUNNERS ? "--validate-runners-up"
                                                          : "--validate-rounds",
                                       optarg))
                return EXIT_USAGE;
            val_given = 1;
            break;
        case ':': return tt_cli_bad("option %s needs a value", argv[optind - 1]);
        default: return tt_cli_bad("unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return tt_cli_bad("unexpected argument '%s'", argv[optind]);
    if (val_given && !o->val.on)
        return tt_cli_bad("--topo and the --validate-* options need --validate");
    o->ngpus = ngpus;
    if (ngpus > 0 && !o->val.on)
        return tt_cli_bad("-g %d: GPU ranks need the CUDA executor, which this build does not have yet; "
                   "use --host N for host ranks", ngpus);
    if (!algo_s && getenv("NCCL_ALGO") && *getenv("NCCL_ALGO")) {
        algo_s = getenv("NCCL_ALGO");
        o->algo_src = "NCCL_ALGO";
    }
    if (!proto_s && getenv("NCCL_PROTO") && *getenv("NCCL_PROTO")) {
        proto_s = getenv("NCCL_PROTO");
        o->proto_src = "NCCL_PROTO";
    }
    if (o->val.on && (algo_s || proto_s))
        return tt_cli_bad("--validate runs the table's choice and its runner-ups; drop %s (it would fix one algorithm "
                          "or protocol)", algo_s ? o->algo_src : o->proto_src);
    if (predict_given && !tt_cli_exec_has_pred())
        return tt_cli_bad("--predict: no prediction possible with that topology/calibration (reason above)");
    if (algo_s && tt_algo_parse(algo_s, &o->plan.algo) != TT_OK)
        return tt_cli_bad("%s: %s (one algorithm; lists and ^exclusions are not supported)", o->algo_src,
                   tt_error_message());
    if (proto_s && tt_proto_parse(proto_s, &o->plan.proto) != TT_OK)
        return tt_cli_bad("%s: %s (one protocol; lists are not supported)", o->proto_src, tt_error_message());
    if (tt_cli_exec_check_env())
        return EXIT_USAGE;
    if (!o->plan.chunk_bytes) {
        const char *cb = getenv("TOPOTUNE_CHUNK_BYTES"); /* checked just above */
        o->plan.chunk_bytes = (cb && *cb && tt_parse_size(cb, &u) == TT_OK) ? (size_t)u : 512 * 1024;
    } else if (o->plan.chunk_bytes < 64 || o->plan.chunk_bytes > (1u << 30)) {
        return tt_cli_bad("--chunk %zu: the pipeline chunk must be 64 bytes..1G", o->plan.chunk_bytes);
    }
    if (o->minb == 0 || o->maxb == 0)
        return tt_cli_bad("sizes must be positive (-b %llu, -e %llu)", (unsigned long long)o->minb,
                   (unsigned long long)o->maxb);
    if (o->maxb < o->minb)
        return tt_cli_bad("-e (maxbytes) is smaller than -b (minbytes)");
    if (o->factor <= 1 && o->stepb == 0)
        return tt_cli_bad("-i 0 with -f 1 would never reach -e");
    /* multi-process: options, --mpi, torchrun's variables, else an MPI launcher */
    if (mpi_given && !have_mpi)
        return tt_cli_bad("--mpi: this topo-exec was built without MPI (install libopenmpi-dev and rebuild, or use "
                          "mpirun -x MASTER_ADDR=host -x MASTER_PORT=port without --mpi)");
    if (mpi_given && (o->rank >= 0 || have_nranks || o->master[0] || host_given))
        return tt_cli_bad("--mpi cannot be combined with --rank/--nranks/--master or --host");
    if (mpi_given) {
        o->mp = 3;
    } else if (o->rank >= 0 || have_nranks || o->master[0]) {
        if (o->rank < 0 || !have_nranks || !o->master[0])
            return tt_cli_bad("multi-process mode needs all of --rank, --nranks and --master");
        if (host_given)
            return tt_cli_bad("--host N runs N ranks as threads of this process; it cannot be combined with "
                              "--rank/--nranks/--master (one rank per process)");
        if (o->rank >= o->nranks)
            return tt_cli_bad("--rank must be below --nranks");
        o->mp = 1;
    } else if (getenv("MASTER_ADDR") && getenv("MASTER_PORT") && tt_env_rank_vars(NULL, NULL)) {
        o->mp = 2; /* tt_comm_init_env */
    } else if (have_mpi && !host_given && tt_cli_mpi_launched()) {
        o->mp = 3; /* MPI_Init + tt_comm_init_mpi */
    } else if (!host_given && tt_env_slurm_step()) {
        o->mp = 2; /* srun without MASTER_ADDR: tt_comm_init_env reads Slurm's node list */
    } else if (!host_given) {
        /* started by a launcher but without a rendezvous address: refuse
         * rather than run one unrelated job per process (nccl-tests#27) */
        static const char *const sz[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
        for (size_t i = 0; i < sizeof sz / sizeof *sz; i++) {
            const char *v2 = getenv(sz[i]);
            if (v2 && atoi(v2) > 1)
                return tt_cli_bad("%s=%s says this process is one of several ranks, but MASTER_ADDR and MASTER_PORT "
                           "are not both set: set them (e.g. mpirun -x MASTER_ADDR=host -x MASTER_PORT=29500), "
                           "or pass --host N to run independent host ranks in each process", sz[i], v2);
        }
    }
    int nr = o->mp == 1 ? o->nranks : o->host_ranks;
    if ((o->coll == TT_COLL_BROADCAST || o->coll == TT_COLL_REDUCE) && o->mp < 2 && o->root >= nr) {
        return tt_cli_bad("-r %d: root must be below the number of ranks (%d)", o->root, nr);
    }
    return 0;
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
    return s;
}
