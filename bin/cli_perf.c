/*
 * cli_perf.c - the nccl-tests drop-in: topo-exec started as all_reduce_perf, all_gather_perf,
 * reduce_scatter_perf, broadcast_perf or reduce_perf (symbolic links made by the build and by
 * make install) takes nccl-tests' options with their meanings and prints nccl-tests' output.
 * The options are translated into topo-exec's own spelling (the rest of topo-exec runs as
 * usual); an nccl-tests option we cannot honour is refused with the reason, never ignored.
 * See docs/cli-topo-exec.md, "nccl-tests drop-in".
 *
 * Ranks: nccl-tests runs nprocs x threads (-t) x GPUs per thread (-g).  Here -t T -g G with a
 * usable GPU is GPU mode with T x G GPU ranks; -g 0 (or no -g on a machine without any NVIDIA GPU)
 * is T host ranks per process.  A machine whose GPUs cannot be used (no driver, ...) fails with
 * the reason, whatever -g says but 0; an explicit -g G > 0 on a machine without GPUs is refused.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_exec.h"

static const struct {
    const char *prog;
    const char *coll; /* topo-exec's -t name */
} perf_names[] = {{"all_reduce_perf", "all_reduce"},
                  {"all_gather_perf", "all_gather"},
                  {"reduce_scatter_perf", "reduce_scatter"},
                  {"broadcast_perf", "broadcast"},
                  {"reduce_perf", "reduce"}};

static const char *perf_prog;     /* the drop-in's name, NULL for topo-exec */
static int perf_extra;            /* --topotune: plan line, algorithm column */
static char perf_note[640];       /* a header comment (how the ranks were chosen) */
static char **perf_argv;          /* the translated command line, freed at exit */
static int perf_per_iter;         /* -I 1: per-iteration timing (host ranks) */
static int perf_per_iter_skip;    /* -K N: iterations left out of -I's statistics */

static void perf_argv_free(void)
{
    free(perf_argv);
    perf_argv = NULL;
}

const char *tt_cli_perf_prog(void) { return perf_prog; }
int tt_cli_perf_per_iter(int *skip)
{
    *skip = perf_per_iter ? perf_per_iter_skip : 0;
    return perf_per_iter;
}
int tt_cli_perf_extra(void) { return perf_extra; }
/* the note is a header line with --topotune only; without it nccl-tests' lines stay alone on standard
 * output and the note goes to standard error (tt_cli_perf_translate) */
const char *tt_cli_perf_note(void) { return perf_note[0] && perf_extra ? perf_note : NULL; }

static void perf_usage(const char *prog)
{
    printf("usage: %s [nccl-tests options]   (topotune %s; topo-exec with nccl-tests' options and output)\n"
           "  -t,--nthreads N        host ranks (threads) per process; GPU mode: T x G GPU ranks (default 1)\n"
           "  -g,--ngpus N           GPUs per thread (default 1; on a machine without any NVIDIA GPU: host ranks;\n"
           "                         -g 0: host ranks; GPUs that cannot be used (no driver, ...) fail the run)\n"
           "  -b,--minbytes SIZE     smallest size (default 32M)    -e,--maxbytes SIZE   largest size (default 32M)\n"
           "  -i,--stepbytes SIZE    additive step (default 1M)     -f,--stepfactor N    multiplicative step\n"
           "  -n,--iters N           timed iterations (default 20)  -w,--warmup_iters N  warmup iterations (default 1)\n"
           "  -m,--agg_iters N       operations per iteration (host ranks)\n"
           "  -N,--run_cycles N      repeat the sweep N times (host ranks; 0 = until killed)\n"
           "  -p,--parallel_init 0/1 accepted (ranks always start together here)\n"
           "  -c,--check N           correctness iterations per size (default 1; 0: #wrong N/A)\n"
           "  -o,--op OP             sum prod min max avg        -d,--datatype TYPE  int8 ... double, bfloat16\n"
           "  -r,--root N            root of broadcast/reduce (-1, all roots, is refused)\n"
           "  -a,--average N         time across ranks: 0 rank 0, 1 average (default), 2 min, 3 max\n"
           "  -T,--timeout SEC       deadline                    -J,--output_file F.json  JSON results\n"
           "  -I,--per_iter_timing 0/1  each iteration timed (host clock; host ranks): i_min i_max i_p99 i_cv%% columns,\n"
           "                         -J's *_per_iter objects      -K,--per_iter_skip N  leave N out of their statistics\n"
           "  -z 0, -y 0, -G 0, -C 0, -R 0, -D 0, -M 0, -u 0, -S 0: accepted; other values are refused\n"
           "                         (blocking mode, NULL stream, CUDA graphs, CPU time, registration, device API,\n"
           "                         memory report, unaligned buffers, timestamps); -x refused\n"
           "  --topotune             add topotune's lines, columns and -J keys (plan, algorithm, notes); without it\n"
           "                         standard output and -J have nccl-tests' form only\n"
           "  --predict TOPO, --calibration F, --table F, --algo A, --proto P: as topo-exec\n"
           "  -h,--help, --version\n",
           prog, TT_VERSION_STRING);
}

/* nccl-tests' options that are accepted with their default value 0 only, and what they would do */
static const struct {
    char opt;
    const char *what;
} zero_only[] = {
    {'z', "blocking mode (a synchronisation after every operation)"},
    {'y', "the NULL CUDA stream"},
    {'G', "CUDA graph launches"},
    {'C', "reporting CPU launch time instead of latency"},
    {'R', "buffer registration (ncclCommRegister)"},
    {'D', "NCCL's device API kernels"},
    {'M', "the GPU memory usage report"},
    {'u', "unaligned buffers"},
    {'S', "the timestamp column"},
};

/* The option is nccl-tests' but not honoured here: refuse unless it has its default value.
 * 1: ch is one of them (*rc: 0 or the exit code), 0: it is not. */
static int refuse_unless_zero(int ch, const char *val, int *rc)
{
    for (size_t i = 0; i < sizeof zero_only / sizeof *zero_only; i++) {
        if (zero_only[i].opt != ch) continue;
        char *e, opt[3] = {'-', (char)ch, 0};
        long v = strtol(val, &e, 10);
        *rc = 0;
        if (*e || v != 0)
            *rc = tt_cli_bad("%s %s (%s): not supported by the topotune executor; run without it (or with %s 0)", opt,
                             val, zero_only[i].what, opt);
        return 1;
    }
    return 0;
}

/* What the nccl-tests options said about the ranks, and the translated command line so far. */
typedef struct {
    long long threads, gpus, cycles, avg, agg, iters;
    int predict;
    char **out;
    int n;
} perf_cmd;

enum { O_TT = 1000, O_PREDICT, O_CALIB, O_TABLE, O_ALGO, O_PROTO, O_VERSION, O_NOPROG };

/* the options topo-exec takes as they are, with its own spelling */
static int pass_through(perf_cmd *c, int ch, char *arg)
{
    static char switches[256][3]; /* "-b", "-e", ...: one per option letter, never freed */
    static const struct {
        int ch;
        const char *as;
    } renamed[] = {{O_PREDICT, "--predict"}, {O_CALIB, "--calibration"}, {O_TABLE, "--table"}, {O_ALGO, "--algo"},
                   {O_PROTO, "--proto"}, {O_NOPROG, "--no-progress"}};
    if (ch == 'd' && !strcmp(arg, "all"))
        return tt_cli_bad("-d all: one data type per run here; run once per type (-d float, -d half, ...)");
    if (ch == 'o' && (!strcmp(arg, "all") || !strcmp(arg, "mulsum")))
        return tt_cli_bad("-o %s: not supported; run once per operation (sum, prod, min, max, avg)", arg);
    if (ch == 'r' && (!strcmp(arg, "-1") || !strcmp(arg, "all")))
        return tt_cli_bad("-r %s: all roots in one run is not supported; run once per root (-r 0, -r 1, ...)", arg);
    c->predict |= ch == O_PREDICT;
    for (size_t i = 0; i < sizeof renamed / sizeof *renamed; i++)
        if (renamed[i].ch == ch) {
            c->out[c->n++] = (char *)renamed[i].as;
            if (ch != O_NOPROG) c->out[c->n++] = arg;
            return 0;
        }
    /* -b -e -i -f -n -w -c -T -J -d -o -r: the same letter */
    switches[(unsigned char)ch][0] = '-';
    switches[(unsigned char)ch][1] = (char)ch;
    c->out[c->n++] = switches[(unsigned char)ch];
    c->out[c->n++] = arg;
    return 0;
}

/* nccl-tests' command line: 0, or the exit code after a message */
static int perf_options(perf_cmd *c, int ac, char **av)
{
    static const struct option lo[] = {
        {"nthreads", 1, 0, 't'}, {"ngpus", 1, 0, 'g'}, {"minbytes", 1, 0, 'b'}, {"maxbytes", 1, 0, 'e'},
        {"stepbytes", 1, 0, 'i'}, {"stepfactor", 1, 0, 'f'}, {"iters", 1, 0, 'n'}, {"agg_iters", 1, 0, 'm'},
        {"warmup_iters", 1, 0, 'w'}, {"run_cycles", 1, 0, 'N'}, {"parallel_init", 1, 0, 'p'},
        {"per_iter_timing", 1, 0, 'I'}, {"per_iter_skip", 1, 0, 'K'}, {"check", 1, 0, 'c'}, {"op", 1, 0, 'o'},
        {"datatype", 1, 0, 'd'}, {"root", 1, 0, 'r'}, {"blocking", 1, 0, 'z'}, {"stream_null", 1, 0, 'y'},
        {"timeout", 1, 0, 'T'}, {"cudagraph", 1, 0, 'G'}, {"report_cputime", 1, 0, 'C'}, {"average", 1, 0, 'a'},
        {"local_register", 1, 0, 'R'}, {"cta_policy", 1, 0, 'x'}, {"device_implementation", 1, 0, 'D'},
        {"device_cta_count", 1, 0, 'V'}, {"memory", 1, 0, 'M'}, {"unalign", 1, 0, 'u'},
        {"report_timestamps", 1, 0, 'S'}, {"output_file", 1, 0, 'J'}, {"help", 0, 0, 'h'},
        {"topotune", 0, 0, O_TT}, {"predict", 1, 0, O_PREDICT}, {"calibration", 1, 0, O_CALIB},
        {"table", 1, 0, O_TABLE}, {"algo", 1, 0, O_ALGO}, {"proto", 1, 0, O_PROTO}, {"version", 0, 0, O_VERSION},
        {"no-progress", 0, 0, O_NOPROG}, {0, 0, 0, 0}};
    long long v;
    int ch, rc;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(ac, av, ":t:g:b:e:i:f:n:m:w:N:p:I:K:c:o:d:r:z:y:T:hG:C:a:R:x:D:V:J:S:M:u:", lo, NULL)) !=
           -1) {
        switch (ch) {
        case 't': if (tt_cli_int_option("-t (threads)", optarg, 1, 1024, &c->threads)) return EXIT_USAGE; break;
        case 'g': if (tt_cli_int_option("-g (GPUs per thread)", optarg, 0, 64, &c->gpus)) return EXIT_USAGE; break;
        case 'm': if (tt_cli_int_option("-m", optarg, 1, 1 << 20, &c->agg)) return EXIT_USAGE; break;
        case 'N': if (tt_cli_int_option("-N (run cycles)", optarg, 0, 1 << 30, &c->cycles)) return EXIT_USAGE; break;
        case 'a':
            if (tt_cli_int_option("-a (0 rank 0, 1 average, 2 min, 3 max)", optarg, 0, 3, &c->avg)) return EXIT_USAGE;
            break;
        case 'p': if (tt_cli_int_option("-p", optarg, 0, 1, &v)) return EXIT_USAGE; break;
        case 'I':
            if (tt_cli_int_option("-I (per-iteration timing: 0 or 1)", optarg, 0, 1, &v)) return EXIT_USAGE;
            perf_per_iter = (int)v;
            break;
        case 'K':
            if (tt_cli_int_option("-K (iterations left out of -I's statistics)", optarg, 0, 1 << 30, &v))
                return EXIT_USAGE;
            perf_per_iter_skip = (int)v;
            break;
        case 'V': break; /* the CTA count of -D's kernels: without -D nccl-tests ignores it too */
        case 'x': return tt_cli_bad("-x %s: NCCL's CTA policy is not supported by the topotune executor", optarg);
        case 'h': perf_usage(perf_prog); exit(0);
        case O_VERSION: exit(tt_cli_print_version());
        case O_TT: perf_extra = 1; break;
        case ':': return tt_cli_bad("option %s needs a value", av[optind - 1]);
        case '?': return tt_cli_bad("unknown option '%s' (see --help)", av[optind - 1]);
        default:
            if (ch == 'n') c->iters = strtoll(optarg, NULL, 10); /* for -K's check (topo-exec checks -n) */
            if (refuse_unless_zero(ch, optarg, &rc)) {
                if (rc) return EXIT_USAGE;
            } else if ((rc = pass_through(c, ch, optarg))) {
                return rc;
            }
        }
    }
    if (optind < ac) return tt_cli_bad("unexpected argument '%s'", av[optind]);
    if (perf_per_iter_skip && !perf_per_iter)
        return tt_cli_bad("-K %d: skips iterations of -I's statistics; add -I 1", perf_per_iter_skip);
    if (perf_per_iter_skip && perf_per_iter_skip >= c->iters)
        return tt_cli_bad("-K %d: must be below the iterations (-n %lld)", perf_per_iter_skip, c->iters);
    return 0;
}

/* nccl-tests' ranks (-t threads x -g GPUs, or one per process under a launcher) as topo-exec's */
static int perf_ranks(perf_cmd *c)
{
    static char bufs[8][32];
    int nb = 0;
    /* a launcher with several processes: each process is one rank (as nccl-tests under mpirun with -t 1) */
    const char *rv = NULL, *sv = NULL;
    int launched = tt_env_rank_vars(&rv, &sv) && atoi(tt_setting(sv)) > 1;
    launched = launched || (tt_setting("PMIX_RANK") != NULL);
    long long threads = c->threads, gpus = c->gpus;
    tt_gpu_health h = {.state = TT_GPU_ABSENT};
    if (gpus != 0) tt_gpu_health_check(&h);
    int ngpu = h.ncuda;
    /* a GPU node whose GPUs cannot be used fails, as nccl-tests does: a health check must not pass
     * on host ranks; those run only when asked (-g 0) or on a machine without any NVIDIA GPU */
    if (h.state == TT_GPU_BROKEN) {
        fprintf(stderr, "%s: %s; -g 0 runs host ranks instead\n", perf_prog, h.why);
        return EXIT_RUNTIME;
    }
    if (gpus > 0 && ngpu <= 0)
        return tt_cli_bad("-g %lld: refused, %s; -g 0 -t %lld runs %lld host rank(s) instead", gpus, h.why,
                          gpus * threads, gpus * threads);
    if (ngpu > 0) {
        /* GPU mode: one process drives T x G GPU ranks (or one GPU rank per process under a launcher) */
        long long g = gpus < 0 ? 1 : gpus;
        if (launched && threads * g != 1)
            return tt_cli_bad("-t %lld -g %lld under a launcher: each process drives one GPU rank here; use -t 1 -g 1",
                              threads, g);
        if (c->agg != 1) return tt_cli_bad("-m %lld: aggregated operations are not supported on GPU ranks", c->agg);
        if (c->cycles != 1) return tt_cli_bad("-N %lld: run cycles are supported on host ranks only", c->cycles);
        if (perf_per_iter) return tt_cli_bad("-I 1: per-iteration timing is supported on host ranks only (-g 0)");
        if (c->avg != 1 && launched)
            return tt_cli_bad("-a %lld: GPU ranks of several processes report the average time only", c->avg);
        snprintf(bufs[nb], sizeof bufs[nb], "%lld", threads * g);
        c->out[c->n++] = "-g";
        c->out[c->n++] = bufs[nb++];
        return 0;
    }
    if (gpus < 0)
        snprintf(perf_note, sizeof perf_note, "# %s: host ranks, %lld thread(s) per process (-g 0)", h.why, threads);
    if (launched && threads != 1)
        return tt_cli_bad("-t %lld under a launcher: each process is one host rank here; use -t 1", threads);
    if (!launched) {
        snprintf(bufs[nb], sizeof bufs[nb], "%lld", threads);
        c->out[c->n++] = "--host";
        c->out[c->n++] = bufs[nb++];
    }
    if (c->agg != 1) {
        snprintf(bufs[nb], sizeof bufs[nb], "%lld", c->agg);
        c->out[c->n++] = "-m";
        c->out[c->n++] = bufs[nb++];
    }
    if (c->cycles != 1) {
        snprintf(bufs[nb], sizeof bufs[nb], "%lld", c->cycles);
        c->out[c->n++] = "--cycles";
        c->out[c->n++] = bufs[nb++];
    }
    if (c->avg != 1) {
        static const char *const names[] = {"rank0", "avg", "min", "max"};
        c->out[c->n++] = "--average";
        c->out[c->n++] = (char *)names[c->avg];
    }
    return 0;
}

int tt_cli_perf_translate(int *argc, char ***argv)
{
    const char *base = strrchr((*argv)[0], '/');
    base = base ? base + 1 : (*argv)[0];
    const char *coll = NULL;
    for (size_t i = 0; i < sizeof perf_names / sizeof *perf_names; i++)
        if (!strcmp(base, perf_names[i].prog)) {
            perf_prog = perf_names[i].prog;
            coll = perf_names[i].coll;
        }
    if (!perf_prog) return -1;
    tt_cli_init(perf_prog);
    int ac = *argc;
    char **av = *argv;
    /* the translated command line: at most two words per option, plus ours */
    char **out = calloc((size_t)ac * 2 + 24, sizeof *out);
    if (!out) return tt_cli_bad("out of memory translating the command line");
    perf_argv = out;
    atexit(perf_argv_free);
    perf_cmd c = {1, -1, 1, 1, 1, 20, 0, out, 0};
    out[c.n++] = av[0];
    out[c.n++] = "--op-name";
    out[c.n++] = (char *)coll;
    int rc = perf_options(&c, ac, av);
    if (rc) return rc;
    if (!c.predict) tt_cli_exec_set("TOPOTUNE_PREDICT_TOPO", NULL); /* prediction columns only behind --predict */
    if ((rc = perf_ranks(&c))) return rc;
    if (perf_note[0] && !perf_extra) fprintf(stderr, "%s: %s\n", perf_prog, perf_note + 2); /* without its "# " */
    out[c.n] = NULL;
    optind = 1;
    *argc = c.n;
    *argv = out;
    return 0;
}
