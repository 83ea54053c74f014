/*
 * cli_gpu.c - topo-exec's GPU mode: its options and its table (bin/cli_exec.h declares
 * topo_exec_gpu_main, which topo-exec calls first).  The sweep, the GPU engine and the NCCL
 * engine are the library's (tt_sweep_* in exec/tt_exec.h); rows print through cli_exec_print.c.
 *
 *   topo-exec -g N [...]          N ranks on GPUs (on one GPU: N VIRTUAL ranks)
 *   topo-exec -g N --engine nccl  the same sweep through libnccl.so.2 (dlopen)
 *   topo-exec --gpu-copy-bench SIZE   reduce-copy vs cudaMemcpy device-to-device
 *   topo-exec -g 1 --rank R --nranks N --master HOST:PORT   process ranks on GPUs
 *                                 (one GPU rank per process, CUDA IPC between them;
 *                                 also RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT or
 *                                 OMPI_COMM_WORLD_* as tt_comm_init_env reads them)
 *
 * Output follows nccl-tests' table (size, count, type, redop, root, time,
 * algbw, busbw, #wrong out of place and in place).  Every collective (-t all_reduce,
 * all_gather, reduce_scatter, broadcast, reduce; -r root); the NCCL engine all_reduce only.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_exec.h"
#include "cli_predict.h"
#include "tt_common.h"
#include "tt_exec.h"
#include "tt_tune.h"

enum { GX_OK = EXIT_OK, GX_RUNTIME = EXIT_RUNTIME, GX_USAGE = EXIT_USAGE, GX_WRONG = EXIT_WRONG };

typedef struct {
    uint64_t minb, maxb, stepb, check_max;
    long long factor;
    int iters, warmup, check, ngpus, channels;
    tt_dtype dtype;
    tt_redop op;
    tt_coll coll;
    int root;
    tt_plan plan;
    int nccl;
    int predict;       /* --predict given: pred/err% columns and an error summary */
    const char *table; /* --table FILE: plans per size from a topo-tune table */
    uint64_t copy_bench;
    int mp, rank, nranks;   /* process ranks: 1 = --rank/--nranks/--master, 2 = launcher environment */
    char master[160];
    const char *json;       /* -J FILE: nccl-tests' JSON (cli_exec_print.c) */
    int argc;
    char **argv;
} gopts;


/* Is this a GPU-mode command line?  (--host always means host ranks.) */
static int wants_gpu(int argc, char **argv)
{
    int gpu = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--host") || !strncmp(a, "--host=", 7)) return 0;
        if (!strcmp(a, "--validate")) return 0; /* topo-exec parses it; GPU ranks run in bin/cli_validate.c */
        if (!strcmp(a, "-g") || !strncmp(a, "--ngpus", 7) || !strncmp(a, "--engine", 8) ||
            !strncmp(a, "--gpu-copy-bench", 16) || (a[0] == '-' && a[1] == 'g' && a[2] >= '0' && a[2] <= '9'))
            gpu = 1;
    }
    return gpu;
}

static int parse(int argc, char **argv, gopts *o)
{
    memset(o, 0, sizeof *o);
    o->minb = o->maxb = 32u << 20;
    o->stepb = 1u << 20;
    o->factor = 1;
    o->iters = 20;
    o->warmup = 1;
    o->check = 1;
    o->check_max = 256u << 20;
    o->dtype = TT_FLOAT;
    o->op = TT_SUM;
    o->coll = TT_COLL_ALLREDUCE;
    o->plan = TT_PLAN_DEFAULT;
    enum { O_ALGO = 1000, O_PROTO, O_ENGINE, O_CHAN, O_COPY, O_CHKMAX, O_NOPROG, O_PREDICT, O_CALIB, O_TABLE,
           O_RANK, O_NRANKS, O_MASTER, O_GPUTP };
    static const struct option lo[] = {
        {"op-name", 1, 0, 't'}, {"minbytes", 1, 0, 'b'}, {"maxbytes", 1, 0, 'e'}, {"stepfactor", 1, 0, 'f'},
        {"stepbytes", 1, 0, 'i'}, {"iters", 1, 0, 'n'}, {"warmup_iters", 1, 0, 'w'}, {"check", 1, 0, 'c'},
        {"op", 1, 0, 'o'}, {"datatype", 1, 0, 'd'}, {"root", 1, 0, 'r'}, {"ngpus", 1, 0, 'g'}, {"timeout", 1, 0, 'T'},
        {"output_file", 1, 0, 'J'}, {"algo", 1, 0, O_ALGO}, {"proto", 1, 0, O_PROTO}, {"engine", 1, 0, O_ENGINE},
        {"channels", 1, 0, O_CHAN}, {"gpu-copy-bench", 1, 0, O_COPY}, {"check-max", 1, 0, O_CHKMAX},
        {"no-progress", 0, 0, O_NOPROG}, {"predict", 1, 0, O_PREDICT}, {"calibration", 1, 0, O_CALIB},
        {"table", 1, 0, O_TABLE}, {"rank", 1, 0, O_RANK}, {"nranks", 1, 0, O_NRANKS},
        {"master", 1, 0, O_MASTER}, {"gpu-transport", 1, 0, O_GPUTP}, {0, 0, 0, 0}};
    o->rank = -1;
    int have_nranks = 0;
    const char *algo_s = NULL, *proto_s = NULL;
    long long v;
    uint64_t u;
    int ch;
    o->argc = argc;
    o->argv = argv;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:b:e:f:i:n:w:c:o:d:r:g:T:J:", lo, NULL)) != -1) {
        switch (ch) {
        case 't':
            if (tt_coll_parse(optarg, &o->coll) != TT_OK) return tt_cli_bad("-t: %s", tt_error_message());
            break;
        case 'r': if (tt_cli_int_option("-r", optarg, 0, 63, &v)) return GX_USAGE; o->root = (int)v; break;
        case 'b': case 'e': case 'i': case O_COPY: case O_CHKMAX:
            if (tt_parse_size(optarg, &u) != TT_OK || u == 0)
                return tt_cli_bad("'%s' is not a positive size (number with optional K/M/G)", optarg);
            if (ch == 'b') o->minb = u;
            else if (ch == 'e') o->maxb = u;
            else if (ch == 'i') o->stepb = u;
            else if (ch == O_COPY) o->copy_bench = u;
            else o->check_max = u;
            break;
        case 'f': if (tt_cli_int_option("-f", optarg, 1, 1 << 20, &o->factor)) return GX_USAGE; break;
        case 'n': if (tt_cli_int_option("-n", optarg, 1, 1 << 30, &v)) return GX_USAGE; o->iters = (int)v; break;
        case 'w': if (tt_cli_int_option("-w", optarg, 0, 1 << 30, &v)) return GX_USAGE; o->warmup = (int)v; break;
        case 'c': if (tt_cli_int_option("-c", optarg, 0, 1 << 20, &v)) return GX_USAGE; o->check = (int)v; break;
        case 'o': if (tt_redop_parse(optarg, &o->op) != TT_OK) return tt_cli_bad("-o: %s", tt_error_message()); break;
        case 'd': if (tt_dtype_parse(optarg, &o->dtype) != TT_OK) return tt_cli_bad("-d: %s", tt_error_message()); break;
        case 'g': if (tt_cli_int_option("-g", optarg, 1, 64, &v)) return GX_USAGE; o->ngpus = (int)v; break;
        case 'T': {
            if (tt_cli_int_option("-T (seconds)", optarg, 1, 86400, &v)) return GX_USAGE;
            char b[32];
            snprintf(b, sizeof b, "%lld", v * 1000);
            setenv("TOPOTUNE_TIMEOUT_MS", b, 1);
            break;
        }
        case 'J': o->json = optarg; break;
        case O_ALGO: algo_s = optarg; break;
        case O_PROTO: proto_s = optarg; break;
        case O_ENGINE:
            if (!strcmp(optarg, "nccl")) o->nccl = 1;
            else if (strcmp(optarg, "topotune")) return tt_cli_bad("--engine '%s': valid values are topotune, nccl", optarg);
            break;
        case O_CHAN: if (tt_cli_int_option("--channels", optarg, 1, 64, &v)) return GX_USAGE; o->channels = (int)v; break;
        case O_NOPROG: break;
        /* read by the prediction source (bin/cli_predict.c), as in host mode */
        case O_PREDICT: setenv("TOPOTUNE_PREDICT_TOPO", optarg, 1); o->predict = 1; break;
        case O_CALIB: setenv("TOPOTUNE_CALIBRATION", optarg, 1); break;
        case O_TABLE: o->table = optarg; break;
        case O_RANK: if (tt_cli_int_option("--rank", optarg, 0, 63, &v)) return GX_USAGE; o->rank = (int)v; break;
        case O_NRANKS:
            if (tt_cli_int_option("--nranks", optarg, 1, 64, &v)) return GX_USAGE;
            o->nranks = (int)v;
            have_nranks = 1;
            break;
        case O_MASTER: snprintf(o->master, sizeof o->master, "%s", optarg); break;
        case O_GPUTP: /* read by the library (tt_gpu_comm_init_procs), as the environment variable */
            if (strcmp(optarg, "auto") && strcmp(optarg, "host") && strcmp(optarg, "net"))
                return tt_cli_bad("--gpu-transport '%s': valid values are auto, host, net", optarg);
            setenv("TOPOTUNE_GPU_TRANSPORT", optarg, 1);
            break;
        case ':': return tt_cli_bad("option %s needs a value", argv[optind - 1]);
        default:
            return tt_cli_bad("option '%s' is not available in GPU mode (-g); see docs/gpu-executor.md", argv[optind - 1]);
        }
    }
    if (optind < argc) return tt_cli_bad("unexpected argument '%s'", argv[optind]);
    if (!algo_s && getenv("NCCL_ALGO") && *getenv("NCCL_ALGO")) algo_s = getenv("NCCL_ALGO");
    if (!proto_s && getenv("NCCL_PROTO") && *getenv("NCCL_PROTO")) proto_s = getenv("NCCL_PROTO");
    if (algo_s && tt_algo_parse(algo_s, &o->plan.algo) != TT_OK) return tt_cli_bad("--algo: %s", tt_error_message());
    if (proto_s && tt_proto_parse(proto_s, &o->plan.proto) != TT_OK) return tt_cli_bad("--proto: %s", tt_error_message());
    o->plan.channels = o->channels;
    if (o->maxb < o->minb) return tt_cli_bad("-e (maxbytes) is smaller than -b (minbytes)");
    if (!o->copy_bench && o->ngpus == 0) o->ngpus = 1;
    if (o->predict && !topo_exec_predict_enabled())
        return tt_cli_bad("--predict: no prediction possible with that topology/calibration (reason above)");
    /* process ranks: the options, else a launcher's environment (as host mode) */
    if (o->rank >= 0 || have_nranks || o->master[0]) {
        if (o->rank < 0 || !have_nranks || !o->master[0])
            return tt_cli_bad("process ranks on GPUs need all of --rank, --nranks and --master");
        if (o->rank >= o->nranks) return tt_cli_bad("--rank must be below --nranks");
        o->mp = 1;
    } else if ((getenv("MASTER_ADDR") && getenv("MASTER_PORT") && tt_env_rank_vars(NULL, NULL)) ||
               tt_env_slurm_step()) {
        o->mp = 2;
    }
    if (o->mp && !o->copy_bench) {
        if (o->ngpus != 1)
            return tt_cli_bad("-g %d with process ranks: each process drives one GPU rank; use -g 1 and start one "
                              "process per rank", o->ngpus);
    }
    return 0;
}

static int copy_bench(const gopts *o)
{
    char why[256];
    int n = tt_gpu_available(why, sizeof why);
    if (!n) {
        fprintf(stderr, "topo-exec: --gpu-copy-bench: %s\n", why);
        return GX_USAGE;
    }
    printf("# reduce-copy vs cudaMemcpy device-to-device on device 0, %llu bytes per buffer, median of %d\n",
           (unsigned long long)o->copy_bench, o->iters);
    printf("# GB/s = (bytes read + bytes written) / time\n");
    printf("# variant: tiled = 32/64 KiB tiles round robin over blocks (tt_gpu_reduce_copy: tiled u4, 1 block/SM);\n"
           "#          contig = one contiguous share per block (the channels' layout up to 2026-12-02);\n"
           "#          u4/u8 = 16-byte accesses in flight per thread; stream = evict-first cache hints\n");
    printf("# variant              blocks/SM   memcpy(GB/s)   copy(GB/s)  copy/memcpy   a+b->c(GB/s)  a+b/memcpy\n");
    static const char *vn[] = {"tiled u4 (default)", "tiled u8", "contig u4", "contig u8", "contig u4 stream",
                               "contig u8 stream"};
    for (int var = 0; var < 6; var++)
    for (int bps = 1; bps <= 4; bps *= 2) {
        double g[3];
        if (tt_gpu_bench_copy(0, (size_t)o->copy_bench, o->iters, bps, var, g) != TT_OK) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            return GX_RUNTIME;
        }
        printf("  %-18s %11d  %13.1f  %11.1f  %10.1f%%  %13.1f  %9.1f%%\n", vn[var], bps, g[0], g[1], 100 * g[1] / g[0], g[2],
               100 * g[2] / g[0]);
    }
    return GX_OK;
}

/* What the rows of rank 0 need: the options, the prediction errors, the summary. */
typedef struct {
    const gopts *o;
    tt_gpu_comm *g;
    int n;
    double *perr; /* |pred - meas| / meas per placement, for the summary */
    int nperr, cperr;
    int oob, nbw;
    double bwsum;
    unsigned long tfallback, fb_seen; /* sizes that ran a table fallback; the communicator's count */
    tt_cli_exec_row *rows;            /* for -J */
    int nrows, crows;
    int virt;                         /* ranks share a GPU (the model's virtual-rank rows) */
} grows;

static void gpu_row(void *user, const tt_sweep_row *m)
{
    grows *x = user;
    const gopts *o = x->o;
    tt_cli_exec_row r;
    memset(&r, 0, sizeof r);
    r.m = *m;
    unsigned long fb = tt_gpu_comm_plan_table_fallbacks(x->g); /* counted per call: here per size */
    if (fb > x->fb_seen) x->tfallback++;
    x->fb_seen = fb;
    const tt_plan *eff = &m->plan;
    for (int ip = 0; ip < 2; ip++) {
        x->bwsum += m->busbw[ip];
        x->nbw++;
        if (m->wrong[ip] > 0) x->oob++;
        double pu;
        if (o->predict &&
            topo_exec_predict_plan_us(tt_cli_coll_name(o->coll), (size_t)m->bytes, x->n, o->nccl ? "default" : tt_algo_label(eff->algo),
                                      o->nccl ? "default" : tt_proto_name(eff->proto), o->nccl ? 0 : eff->channels,
                                      o->nccl ? TT_RANKS_NONE : x->virt ? TT_RANKS_VIRTUAL : TT_RANKS_GPU, &pu) == 0 && pu > 0 && m->time_us[ip] > 0) {
            r.pred_us[ip] = pu;
            if (x->nperr == x->cperr) {
                int ncap = x->cperr ? 2 * x->cperr : 64;
                double *q = realloc(x->perr, (size_t)ncap * sizeof *q);
                if (q) { x->perr = q; x->cperr = ncap; }
            }
            if (x->nperr < x->cperr) x->perr[x->nperr++] = fabs(pu - m->time_us[ip]) / m->time_us[ip];
        }
    }
    if (x->nrows == x->crows) {
        int ncap = x->crows ? 2 * x->crows : 32;
        tt_cli_exec_row *q = realloc(x->rows, (size_t)ncap * sizeof *q);
        if (q) { x->rows = q; x->crows = ncap; }
    }
    if (x->nrows < x->crows) {
        snprintf(r.algo, sizeof r.algo, "%s", o->nccl ? "nccl" : tt_algo_label(eff->algo));
        x->rows[x->nrows++] = r;
    }
    char tail[96];
    if (tt_cli_perf_prog() && !tt_cli_perf_extra()) tail[0] = '\0'; /* the drop-in: nccl-tests' columns only */
    else if (o->nccl) snprintf(tail, sizeof tail, "  nccl");
    else snprintf(tail, sizeof tail, "  %s/%s/%d", tt_algo_label(eff->algo), tt_proto_name(eff->proto), eff->channels);
    tt_cli_exec_print_row(o->coll, o->dtype, o->op, o->root, &r, o->predict, tail);
}

int topo_exec_gpu_main(int argc, char **argv)
{
    if (argc == 1) {
        /* no arguments: a short validated sweep on whatever the machine has - its GPUs when any
         * is usable, else host ranks (topo-exec.c); not under a launcher, where several
         * processes must not each take every GPU */
        char why[256], gn[16];
        int launched = tt_env_rank_vars(NULL, NULL) || getenv("PMIX_RANK");
        int ngpu = launched ? 0 : tt_gpu_available(why, sizeof why);
        if (ngpu <= 0) {
            if (!launched) printf("# topo-exec without arguments: no usable GPU (%s): 4 host ranks\n", why);
            return -1;
        }
        snprintf(gn, sizeof gn, "%d", ngpu > 64 ? 64 : ngpu);
        char *gargv[] = {argv[0], "-g", gn, "-b", "8", "-e", "64M", "-f", "8", "-n", "20", "-w", "5", "-c", "1", NULL};
        printf("# topo-exec without arguments: %s GPU rank(s), one per GPU (-g %s -b 8 -e 64M -f 8 -n 20 -w 5 -c 1)\n",
               gn, gn);
        return topo_exec_gpu_main((int)(sizeof gargv / sizeof gargv[0]) - 1, gargv);
    }
    if (!wants_gpu(argc, argv)) return -1;
    gopts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc;
    if (!getenv("NCCL_NVLS_ENABLE")) setenv("NCCL_NVLS_ENABLE", "0", 1); /* never NVLink SHARP here */
    if (o.copy_bench) return copy_bench(&o);
    char why[256];
    int ndev = tt_gpu_available(why, sizeof why);
    if (!ndev) {
        /* a usage error, as before the GPU executor existed: this machine (or
         * build) cannot run GPU ranks; the message names the way out */
        fprintf(stderr, "topo-exec: -g %d: %s; use --host N for host ranks\n", o.ngpus, why);
        return GX_USAGE;
    }
    int n = o.ngpus;
    size_t es = tt_dtype_size(o.dtype);
    tt_gpu_comm *g = NULL;
    tt_sweep_engine eng;
    memset(&eng, 0, sizeof eng);
    char tdesc[512] = "";
    tt_comm *hc = NULL; /* process ranks: the host communicator (rendezvous, handles, results) */
    int virt = 0, me = 0;
    tt_status st;
    if (o.mp) {
        tt_unique_id id;
        st = o.mp == 1 ? tt_unique_id_from_addr(&id, o.master) : TT_OK;
        if (st == TT_OK) st = o.mp == 1 ? tt_comm_init_rank(&hc, o.nranks, &id, o.rank) : tt_comm_init_env(&hc);
        if (st != TT_OK) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            return st == TT_ERR_INVALID ? GX_USAGE : GX_RUNTIME;
        }
        n = tt_comm_nranks(hc);
        me = tt_comm_rank(hc);
        if (n > 64) {
            fprintf(stderr, "topo-exec: %d process ranks: GPU mode runs at most 64\n", n);
            tt_comm_destroy(hc);
            return GX_USAGE;
        }
        st = tt_gpu_comm_init_procs(&g, hc, -1);
    } else {
        st = tt_gpu_comm_init(&g, n, NULL);
    }
    if (st != TT_OK) {
        fprintf(stderr, "topo-exec: %s\n", tt_error_message());
        tt_comm_destroy(hc);
        return GX_RUNTIME;
    }
    virt = tt_gpu_comm_is_virtual(g);
    if ((o.coll == TT_COLL_BROADCAST || o.coll == TT_COLL_REDUCE) && o.root >= n) {
        tt_gpu_comm_destroy(g);
        tt_comm_destroy(hc);
        return tt_cli_bad("-r %d: root must be below the number of ranks (%d)", o.root, n);
    }
    if (o.table && !o.nccl) {
        tt_tune_table tab;
        if (tt_tune_table_load_for(o.table, n, 0, &tab) != TT_OK) {
            tt_gpu_comm_destroy(g);
            tt_comm_destroy(hc);
            return tt_cli_bad("--table: %s", tt_error_message());
        }
        snprintf(tdesc, sizeof tdesc, "%s (%d rules, model %s)", o.table, tab.n, tab.model[0] ? tab.model : "?");
        /* the rule fills what --algo/--proto leave open; its channel count is NCCL's (topo-tune
         * models NCCL's channels), so the executor keeps its own per size */
        st = tt_gpu_comm_set_plan_table(g, tab.entries, tab.n, TT_PLAN_TABLE_FALLBACK | TT_PLAN_TABLE_NO_CHANNELS);
        tt_tune_table_free(&tab);
        if (st != TT_OK) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            tt_gpu_comm_destroy(g);
            tt_comm_destroy(hc);
            return GX_RUNTIME;
        }
    }
    if (o.nccl) {
        if (virt && !hc) {
            fprintf(stderr, "topo-exec: --engine nccl: NCCL runs one rank per GPU; -g %d needs %d GPUs but this "
                            "machine has %d\n", n, n, ndev);
            tt_gpu_comm_destroy(g);
            return GX_USAGE;
        }
        if (virt) {
            fprintf(stderr, "topo-exec: rank %d: --engine nccl: NCCL runs one rank per GPU, but the %d processes "
                            "share a GPU (give each process its own GPU, e.g. CUDA_VISIBLE_DEVICES)\n", me, n);
            tt_gpu_comm_destroy(g);
            tt_comm_destroy(hc);
            return GX_USAGE;
        }
        if (o.plan.algo != TT_ALGO_DEFAULT) setenv("NCCL_ALGO", o.plan.algo == TT_ALGO_TREE ? "Tree" : "Ring", 1);
        if (o.plan.proto != TT_PROTO_DEFAULT)
            setenv("NCCL_PROTO", o.plan.proto == TT_PROTO_LL ? "LL" : o.plan.proto == TT_PROTO_LL128 ? "LL128" : "Simple", 1);
        if ((st = tt_sweep_engine_nccl(&eng, g, hc)) != TT_OK) {
            /* libnccl.so.2 missing or incomplete: name the option; NCCL's own failures speak for themselves */
            fprintf(stderr, "topo-exec: %s%s\n", st == TT_ERR_UNSUPPORTED ? "--engine nccl: " : "", tt_error_message());
            tt_gpu_comm_destroy(g);
            tt_comm_destroy(hc);
            return GX_RUNTIME;
        }
    } else {
        tt_plan eff;
        if (tt_gpu_comm_resolve_plan(g, o.coll, (size_t)(o.maxb / es), o.dtype, &o.plan, &eff) != TT_OK) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            tt_gpu_comm_destroy(g);
            tt_comm_destroy(hc);
            return GX_USAGE;
        }
        if ((st = tt_sweep_engine_gpu(&eng, g, hc)) != TT_OK) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            tt_gpu_comm_destroy(g);
            tt_comm_destroy(hc);
            return GX_RUNTIME;
        }
    }
    tt_sweep_opts so;
    memset(&so, 0, sizeof so);
    so.coll = o.coll;
    so.dtype = o.dtype;
    so.op = o.op;
    so.root = o.root;
    so.minb = o.minb;
    so.maxb = o.maxb;
    so.stepb = o.stepb;
    so.factor = o.factor;
    so.iters = o.iters;
    so.warmup = o.warmup;
    so.agg = 1;
    so.check = o.check ? 1 : 0;
    so.check_max = o.check_max;
    so.plan = o.plan;
    grows rows = {&o, g, n, NULL, 0, 0, 0, 0, 0, 0, tt_gpu_comm_plan_table_fallbacks(g), NULL, 0, 0, virt};
    so.on_row = gpu_row;
    so.user = &rows;
    /* buffers: send, receive of the largest size per rank (before anything is printed) */
    rc = GX_OK;
    char gstart[64];
    time_t t0 = time(NULL);
    strftime(gstart, sizeof gstart, "%Y-%m-%d %H:%M:%S", gmtime(&t0));
    if (tt_sweep_prepare(&eng, &so, tt_sweep_count(&so, n, o.maxb)) != TT_OK) {
        fprintf(stderr, "topo-exec: %s\n", tt_error_message());
        rc = GX_RUNTIME;
        goto out;
    }
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    int pids[64];
    for (int r = 0; r < n; r++) pids[r] = (int)getpid();
    if (hc) { /* every process's pid for the device lines */
        int32_t mine = (int32_t)getpid(), all[64];
        if (tt_allgather(&mine, all, 1, TT_INT32, hc) != TT_OK || tt_comm_wait(hc) != TT_OK) {
            fprintf(stderr, "topo-exec: rank %d: %s\n", me, tt_error_message());
            rc = GX_RUNTIME;
            goto out;
        }
        for (int r = 0; r < n; r++) pids[r] = all[r];
    }
    const char *perf = tt_cli_perf_prog();
    int plain = perf && !tt_cli_perf_extra(); /* the drop-in: nccl-tests' columns only */
    if (me == 0) {
    if (perf) {
        tt_cli_perf_print_preamble(1, hc ? 1 : n, o.minb, o.maxb, o.factor > 1 ? (uint64_t)o.factor : o.stepb,
                                   o.factor > 1, o.warmup, o.iters, 1, o.check);
        printf("# engine %s; checked up to %llu bytes\n", o.nccl ? "nccl (libnccl.so.2 via dlopen)" : "topotune GPU executor",
               (unsigned long long)o.check_max);
    } else {
    printf("# topo-exec (topotune %s) collective: %s, engine %s\n", TT_VERSION_STRING, tt_cli_coll_name(o.coll),
           o.nccl ? "nccl (libnccl.so.2 via dlopen)" : "topotune GPU executor");
    printf("# nThread 1 nGpus %d minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d iters: %d "
           "validation: %d (sizes up to %llu bytes)\n", n, (unsigned long long)o.minb, (unsigned long long)o.maxb,
           (unsigned long long)(o.factor > 1 ? (uint64_t)o.factor : o.stepb), o.factor > 1 ? "factor" : "bytes",
           o.warmup, o.iters, o.check, (unsigned long long)o.check_max);
    }
    if (hc) {
        /* all net, all IPC/shm, or mixed (IPC inside a host, net between hosts) */
        int npairs = n * (n - 1), nnet = tt_gpu_comm_net_pairs(g);
        if (nnet && nnet < npairs)
            printf("# process ranks on GPUs: %d processes, one GPU rank each (mixed: CUDA IPC inside a host, net "
                   "transport between hosts; %d of %d directed pairs on net)\n", n, nnet, npairs);
        else
            printf("# process ranks on GPUs: %d processes, one GPU rank each (%s between them)\n", n,
                   nnet ? "net transport: pinned host FIFOs and a proxy thread over the host connections"
                        : "CUDA IPC or shared memory");
    }
    if (virt)
        printf("# VIRTUAL RANKS: %d ranks share %s GPU(s): separate buffers and connections, real kernels; "
               "bandwidths are NOT those of %d GPUs\n", n, ndev == 1 ? "1" : "some", n);
    printf("#\n# Using devices\n");
    for (int r = 0; r < n; r++) {
        /* virtual: this rank shares its GPU with another rank (same device, or IPC on the same GPU) */
        int rv = 0;
        for (int q = 0; q < n && !rv; q++)
            if (q != r && (hc ? strstr(tt_gpu_comm_link(g, r, q), "same GPU") != NULL
                              : tt_gpu_comm_device(g, q) == tt_gpu_comm_device(g, r)))
                rv = 1;
        printf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [gpu%s] %s -> rank %d\n", r, pids[r], host,
               tt_gpu_comm_device(g, r), rv ? ", virtual" : "", tt_gpu_comm_link(g, r, (r + 1) % n), (r + 1) % n);
        tt_cli_exec_note_device(r, pids[r], host, tt_gpu_comm_device(g, r), rv ? "GPU (virtual rank)" : "GPU");
    }
    if (!plain)
    printf("# plan: algo %s, proto %s, channels %s\n",
           o.plan.algo == TT_ALGO_DEFAULT ? "default" : tt_algo_label(o.plan.algo),
           o.plan.proto == TT_PROTO_DEFAULT ? "default" : tt_proto_name(o.plan.proto),
           o.channels ? "as given" : "default");
    if (o.table)
        printf("# plan table: %s%s\n", o.nccl ? o.table : tdesc,
               o.nccl ? " NOT used: NCCL decides (use NCCL_TUNER_PLUGIN with TOPOTUNE_TUNER_TABLE)" :
                        "; per size it fills the algorithm/protocol --algo/--proto leave open");
    if (o.predict)
        printf("# predicted: topotune model for the plan of each row, topology %s, calibration %s\n",
               getenv("TOPOTUNE_PREDICT_TOPO"), getenv("TOPOTUNE_CALIBRATION") ? getenv("TOPOTUNE_CALIBRATION") : "built-in");
    if (plain && !o.predict) {
        printf("#\n#                                                              out-of-place                       in-place\n");
        printf("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n");
        printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)\n");
    } else if (!o.predict) {
        printf("#\n#                                                    out-of-place                       in-place\n");
        printf("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong  algo/proto/ch\n");
        printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)               (us)  (GB/s)  (GB/s)\n");
    } else {
        printf("#\n#                                                    out-of-place                                        in-place\n");
        printf("#       size         count      type   redop    root     time   algbw   busbw  #wrong     pred    err%%     time   algbw   busbw  #wrong     pred    err%%  algo/proto/ch\n");
        printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)               (us)                 (us)  (GB/s)  (GB/s)               (us)\n");
    }
    fflush(stdout);
    }
    rows.fb_seen = tt_gpu_comm_plan_table_fallbacks(g);
    st = tt_sweep_run(&eng, &so);
    if (st != TT_OK) {
        /* a plan the executor cannot run is a usage error; anything else failed at run time */
        fprintf(stderr, "topo-exec: %s\n", tt_error_message());
        rc = st == TT_ERR_UNSUPPORTED ? GX_USAGE : GX_RUNTIME;
    }
    if (rc == GX_OK && me == 0) {
        printf("# Out of bounds values : %d %s\n", rows.oob, rows.oob ? "FAILED" : "OK");
        printf("# Avg bus bandwidth    : %g %s\n", rows.nbw ? rows.bwsum / rows.nbw : 0, virt ? "(virtual ranks)" : "");
        if (o.table && !o.nccl)
            printf("# plan table: %lu size(s) had a rule this executor cannot run (NVLS, LL128 without NVLink, ...): default plan used\n",
                   rows.tfallback);
        if (o.predict && rows.nperr) {
            double med = tt_median(rows.perr, (size_t)rows.nperr); /* sorts: the worst is last */
            printf("# Prediction error |pred - meas| / meas: median %.1f%%, worst %.1f%% over %d placements\n",
                   100 * med, 100 * rows.perr[rows.nperr - 1], rows.nperr);
        }
        printf("#\n# Collective test concluded: %s\n", perf ? perf : tt_cli_coll_name(o.coll));
    }
    if (me == 0 && o.json && (rc == GX_OK || rows.nrows)) {
        /* -J in GPU mode: the host writer's layout (nccl-tests' schema) */
        tt_cli_exec_opts jo;
        memset(&jo, 0, sizeof jo);
        jo.coll = o.coll;
        jo.dtype = o.dtype;
        jo.op = o.op;
        jo.root = o.root;
        jo.minb = o.minb;
        jo.maxb = o.maxb;
        jo.stepb = o.stepb;
        jo.factor = o.factor;
        jo.iters = o.iters;
        jo.warmup = o.warmup;
        jo.agg = 1;
        jo.check = o.check;
        jo.plan = o.plan;
        jo.host_ranks = 1;
        jo.ngpus = n;
        jo.mp = hc ? 2 : 0;
        jo.json = o.json;
        jo.argc = o.argc;
        jo.argv = o.argv;
        int jr = tt_cli_exec_write_json(&jo, rows.rows, rows.nrows, rc == GX_OK ? NULL : tt_error_message(), n,
                                        o.nccl ? "nccl" : "gpu", rows.nbw ? rows.bwsum / rows.nbw : 0, rows.oob,
                                        gstart);
        if (jr && rc == GX_OK) rc = jr;
    }
    if (rc == GX_OK && rows.oob) rc = GX_WRONG;
out:
    free(rows.perr);
    free(rows.rows);
    tt_sweep_engine_release(&eng);
    tt_gpu_comm_destroy(g);
    tt_comm_destroy(hc);
    return rc;
}
