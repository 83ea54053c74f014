/*
 * topo-exec - run collectives with the topotune executor and report them in
 * nccl-tests' table layout (time, algbw, busbw, #wrong; out-of-place and
 * in-place), with exact correctness checks.
 *
 *   topo-exec                         short validated AllReduce sweep, 4 host ranks
 *   topo-exec --host 8 -t all_gather -b 1K -e 64M -f 2
 *   topo-exec --rank R --nranks N --master 127.0.0.1:PORT ...   (one rank per process)
 *   RANK=.. WORLD_SIZE=.. MASTER_ADDR=.. MASTER_PORT=.. topo-exec ...  (torchrun)
 *   mpirun -np N topo-exec ...        (build with MPI: bin/topo_exec_mpi.h)
 *   topo-exec --validate --table T.json --host 8 -b 1K -e 64M -f 4   (was the table's choice right?)
 *
 * Exit status: 0 all results right, 1 runtime failure (timeout, peer died),
 * 2 usage error, 3 (--validate) the tuning table's choice lost somewhere, 7 wrong
 * results (nccl-tests' code).  See docs/cli-topo-exec.md.
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_validate.h"
#include "tt_common.h"
#include "tt_exec.h"
#include "tt_tune.h"

/* Prediction hook.  Anything linked into topo-exec (e.g. a tune-module CLI
 * helper) may define this function; when it exists, the table gains a
 * predicted-time column and the prediction error per placement.  Return 0
 * and set *us for a prediction, non-zero for "no prediction" (N/A). */
extern int topo_exec_predict_us(const char *coll, size_t bytes, int nranks, const char *algo,
                                const char *proto, double *us) __attribute__((weak));
/* Optional: whether the prediction source is configured (bin/cli_predict.c). */
extern int topo_exec_predict_enabled(void) __attribute__((weak));
/* --validate (bin/cli_validate.c); weak so that a program embedding topo-exec.c without it
 * still links (the option is then refused). */
extern void tt_cli_validate_defaults(tt_cli_validate_opts *v) __attribute__((weak));
extern int tt_cli_validate_option(tt_cli_validate_opts *v, const char *name, const char *value) __attribute__((weak));
extern int tt_cli_validate_host(const tt_cli_validate_opts *v, const tt_cli_sweep *s, tt_comm **comms, int nlocal)
    __attribute__((weak));
extern int tt_cli_validate_gpu(const tt_cli_validate_opts *v, const tt_cli_sweep *s, int ngpus) __attribute__((weak));

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_WRONG = 7 };

typedef struct {
    uint64_t minb, maxb, stepb;
    long long factor;
    int iters, warmup, agg, check;
    tt_dtype dtype;
    tt_redop op;
    int root;
    tt_coll coll;
    tt_plan plan;
    const char *algo_src, *proto_src;
    int host_ranks;
    int mp, rank, nranks; /* mp: 0 threads, 1 --rank/--master, 2 env, 3 MPI */
    char master[160];
    const char *json;
    int timeout_ms;
    int progress;
    const char *table;   /* --table FILE: plans per size from a topo-tune table */
    char table_desc[512];
    int argc;
    char **argv;
    tt_cli_validate_opts val; /* --validate (bin/cli_validate.c) */
    int ngpus;                /* -g with --validate */
} opts;

typedef struct {
    size_t size, count;
    double time_us[2], algbw[2], busbw[2], pred_us[2];
    long long wrong[2]; /* -1 = not checked */
    char algo[32];
} row;

typedef struct {
    const opts *o;
    row *rows;
    int nrows, cap;
    pthread_mutex_t mu;
    int failed;
    char err[1200];
} shared;

static const char *cli_name(tt_coll c)
{
    static const char *const n[TT_COLL_COUNT] = {
        [TT_COLL_ALLREDUCE] = "all_reduce", [TT_COLL_REDUCESCATTER] = "reduce_scatter",
        [TT_COLL_ALLGATHER] = "all_gather", [TT_COLL_BROADCAST] = "broadcast", [TT_COLL_REDUCE] = "reduce"};
    return (unsigned)c < TT_COLL_COUNT ? n[c] : "?";
}

#include "topo_exec_mpi.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* nccl-tests' number fitting: %.2f, then fewer decimals, then exponent. */
static void fnum(char *b, size_t n, int w, double v)
{
    char t[64];
    for (int prec = 2; prec >= 0; prec--) {
        snprintf(t, sizeof t, "%*.*f", w, prec, v);
        if ((int)strlen(t) <= w) {
            snprintf(b, n, "%s", t);
            return;
        }
    }
    snprintf(t, sizeof t, "%*.1e", w, v);
    if ((int)strlen(t) > w)
        snprintf(t, sizeof t, "%*.0e", w, v);
    snprintf(b, n, "%s", t);
}

static void bus_factor(tt_coll c, int n, double *alg_mult, double *bus)
{
    *alg_mult = 1;
    switch (c) {
    case TT_COLL_ALLREDUCE: *bus = 2.0 * (n - 1) / n; break;
    case TT_COLL_REDUCESCATTER:
    case TT_COLL_ALLGATHER: *alg_mult = n; *bus = (double)(n - 1) / n; break;
    default: *bus = 1; break;
    }
}

static tt_status issue(tt_comm *c, const opts *o, void *sb, void *rb, size_t count)
{
    switch (o->coll) {
    case TT_COLL_ALLREDUCE: return tt_allreduce(sb, rb, count, o->dtype, o->op, c);
    case TT_COLL_REDUCESCATTER: return tt_reducescatter(sb, rb, count, o->dtype, o->op, c);
    case TT_COLL_ALLGATHER: return tt_allgather(sb, rb, count, o->dtype, c);
    case TT_COLL_BROADCAST: return tt_broadcast(sb, rb, count, o->dtype, o->root, c);
    default: return tt_reduce_coll(sb, rb, count, o->dtype, o->op, o->root, c);
    }
}

static int has_pred(void)
{
    static int cached = -1;
    if (cached < 0)
        cached = topo_exec_predict_us != NULL && (!topo_exec_predict_enabled || topo_exec_predict_enabled());
    return cached;
}

static void print_header(const opts *o, int n, const char *transport)
{
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    printf("# topo-exec (topotune %s) collective: %s\n", TT_VERSION_STRING, cli_name(o->coll));
    printf("# nThread 1 nGpus 0 minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d iters: %d "
           "agg iters: %d validation: %d graph: 0\n",
           (unsigned long long)o->minb, (unsigned long long)o->maxb,
           (unsigned long long)(o->factor > 1 ? (uint64_t)o->factor : o->stepb), o->factor > 1 ? "factor" : "bytes",
           o->warmup, o->iters, o->agg, o->check);
    printf("#\n# Using devices\n");
    for (int r = 0; r < n; r++) {
        int pid = o->mp ? -1 : (int)getpid();
        const char *h = o->mp ? "-" : host;
        mpi_ident_of(r, &pid, &h); /* MPI mode: every rank's own */
        printf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [host] %s\n", r, pid, h, -1, transport);
    }
    printf("# plan: algo %s%s%s, proto %s%s%s, channels 1, chunk %zu bytes\n",
           o->plan.algo == TT_ALGO_DEFAULT ? "default (tree up to 64 KiB AllReduce, ring otherwise)"
                                           : tt_algo_label(o->plan.algo),
           o->algo_src ? " from " : "", o->algo_src ? o->algo_src : "",
           o->plan.proto == TT_PROTO_DEFAULT ? "simple" : tt_proto_name(o->plan.proto),
           o->proto_src ? " from " : "", o->proto_src ? o->proto_src : "", o->plan.chunk_bytes);
    if (o->table)
        printf("# plan table: %s; per size it fills what --algo/--proto leave open\n", o->table_desc);
    /* the three header lines of nccl-tests, column for column; with a
     * prediction source each placement gains "pred" and "err%" columns */
    int pw = has_pred() ? 17 : 0; /* width of the prediction columns */
    char l1[256], l2[256], l3[256];
    memset(l1, ' ', sizeof l1);
    l1[0] = '#';
    memcpy(l1 + 63, "out-of-place", 12);
    memcpy(l1 + 98 + pw, "in-place", 8);
    l1[106 + pw] = '\0';
    snprintf(l2, sizeof l2, "#       size         count      type   redop    root");
    snprintf(l3, sizeof l3, "#        (B)    (elements)                          ");
    for (int p = 0; p < 2; p++) {
        strcat(l2, "     time   algbw   busbw  #wrong");
        strcat(l3, "     (us)  (GB/s)  (GB/s)        ");
        if (pw) {
            strcat(l2, "     pred    err%");
            strcat(l3, "     (us)        ");
        }
    }
    for (char *l = l3 + strlen(l3); l > l3 && l[-1] == ' ';)
        *--l = '\0';
    printf("#\n%s\n%s\n%s\n", l1, l2, l3);
    fflush(stdout);
}

static void print_row(const opts *o, const row *r)
{
    char t[32], a[32], b[32];
    const char *redop = (o->coll == TT_COLL_ALLGATHER || o->coll == TT_COLL_BROADCAST) ? "none" : tt_redop_name(o->op);
    int root = (o->coll == TT_COLL_BROADCAST || o->coll == TT_COLL_REDUCE) ? o->root : -1;
    printf("%12zu  %12zu  %8s  %6s  %6d", r->size, r->count, tt_dtype_name(o->dtype), redop, root);
    for (int p = 0; p < 2; p++) {
        fnum(t, sizeof t, 7, r->time_us[p]);
        fnum(a, sizeof a, 6, r->algbw[p]);
        fnum(b, sizeof b, 6, r->busbw[p]);
        if (r->wrong[p] < 0)
            printf("  %7s  %6s  %6s  %6s", t, a, b, "N/A");
        else
            printf("  %7s  %6s  %6s  %6lld", t, a, b, r->wrong[p]);
        if (has_pred()) {
            if (r->pred_us[p] > 0) {
                char pu[32], pe[32];
                fnum(pu, sizeof pu, 7, r->pred_us[p]);
                fnum(pe, sizeof pe, 6, 100.0 * (r->pred_us[p] - r->time_us[p]) / r->time_us[p]);
                printf("  %7s  %6s", pu, pe);
            } else {
                printf("  %7s  %6s", "N/A", "N/A");
            }
        }
    }
    printf("\n");
    fflush(stdout);
}

static void fail_shared(shared *sh, const char *msg)
{
    pthread_mutex_lock(&sh->mu);
    if (!sh->failed) {
        sh->failed = 1;
        snprintf(sh->err, sizeof sh->err, "%s", msg);
    }
    pthread_mutex_unlock(&sh->mu);
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        tt_status st_ = (expr);                                                                    \
        if (st_ == TT_OK)                                                                          \
            st_ = tt_comm_wait(c);                                                                 \
        if (st_ != TT_OK) {                                                                        \
            fail_shared(sh, tt_error_message());                                                   \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

/* One rank's whole sweep.  Rank 0 collects and prints the rows. */
static int bench_rank(tt_comm *c, shared *sh)
{
    const opts *o = sh->o;
    int n = tt_comm_nranks(c), me = tt_comm_rank(c);
    size_t es = tt_dtype_size(o->dtype);
    int per_rank = o->coll == TT_COLL_ALLGATHER || o->coll == TT_COLL_REDUCESCATTER;
    size_t maxcount = (size_t)(o->maxb / es / (per_rank ? (size_t)n : 1));
    size_t in_max = o->coll == TT_COLL_REDUCESCATTER ? maxcount * n : maxcount;
    size_t out_max = o->coll == TT_COLL_ALLGATHER ? maxcount * n : maxcount;
    size_t big = (in_max > out_max ? in_max : out_max) * es + 64;
    unsigned char *sbuf = malloc(big), *rbuf = malloc(big), *exp = malloc(out_max * es + 64);
    int rc = EXIT_OK;
    int tty = o->progress && me == 0 && isatty(2);
    if (!sbuf || !rbuf || !exp) {
        char m[200];
        snprintf(m, sizeof m, "rank %d: cannot allocate 3 buffers of %zu bytes (reduce -e)", me, big);
        fail_shared(sh, m);
        rc = EXIT_RUNTIME;
        goto out;
    }
    memset(sbuf, 0, big);
    memset(rbuf, 0, big);
    double alg_mult, bus;
    bus_factor(o->coll, n, &alg_mult, &bus);
    int nsizes = 0;
    for (uint64_t s = o->minb; s <= o->maxb; s = o->factor > 1 ? s * (uint64_t)o->factor : s + o->stepb)
        nsizes++;
    int idx = 0;
    for (uint64_t size = o->minb; size <= o->maxb;
         size = o->factor > 1 ? size * (uint64_t)o->factor : size + o->stepb, idx++) {
        size_t count = (size_t)(size / es / (per_rank ? (size_t)n : 1));
        row r = {0};
        r.count = count;
        r.size = count * es * (per_rank ? (size_t)n : 1);
        tt_plan eff;
        if (tt_comm_resolve_plan(c, o->coll, count, o->dtype, &eff) == TT_OK)
            snprintf(r.algo, sizeof r.algo, "%s", tt_algo_label(eff.algo));
        for (int place = 0; place < 2; place++) {
            unsigned char *sb = sbuf, *rb = rbuf;
            size_t in_elems = o->coll == TT_COLL_REDUCESCATTER ? count * n : count;
            size_t out_elems = o->coll == TT_COLL_ALLGATHER ? count * n : count;
            if (place == 1) {
                if (o->coll == TT_COLL_REDUCESCATTER)
                    rb = sbuf + (size_t)me * count * es;
                else if (o->coll == TT_COLL_ALLGATHER) {
                    rb = sbuf;
                    sb = sbuf + (size_t)me * count * es;
                } else
                    rb = sbuf;
            }
            if (tty) {
                fprintf(stderr, "\r\033[K# %s %d/%d: %zu bytes %s ...", cli_name(o->coll), idx + 1, nsizes, r.size,
                        place ? "in-place" : "out-of-place");
                fflush(stderr);
            }
            tt_verify_fill(sb, in_elems, o->dtype, o->op, me, 0, 0);
            for (int w = 0; w < o->warmup; w++)
                CHECK(issue(c, o, sb, rb, count));
            double t0 = now_s();
            for (int it = 0; it < o->iters; it++) {
                tt_group_start();
                tt_status st = TT_OK;
                for (int a = 0; a < o->agg && st == TT_OK; a++)
                    st = issue(c, o, sb, rb, count);
                tt_group_end();
                if (st != TT_OK) {
                    fail_shared(sh, tt_error_message());
                    goto out;
                }
            }
            CHECK(TT_OK);
            double sec = (now_s() - t0) / ((double)o->iters * o->agg);
            /* average over ranks (nccl-tests' default -a 1) */
            CHECK(tt_allreduce(&sec, &sec, 1, TT_DOUBLE, TT_SUM, c));
            sec /= n;
            long long wrong = -1;
            if (o->check > 0) {
                wrong = 0;
                for (int k = 0; k < o->check && wrong == 0; k++) {
                    uint64_t seed = (uint64_t)k + 1;
                    tt_verify_fill(sb, in_elems, o->dtype, o->op, me, seed, 0);
                    CHECK(issue(c, o, sb, rb, count));
                    long long w = 0;
                    switch (o->coll) {
                    case TT_COLL_ALLREDUCE:
                        tt_verify_expected(exp, count, o->dtype, o->op, n, seed, 0);
                        break;
                    case TT_COLL_REDUCESCATTER:
                        tt_verify_expected(exp, count, o->dtype, o->op, n, seed, (size_t)me * count);
                        break;
                    case TT_COLL_ALLGATHER:
                        for (int q = 0; q < n; q++)
                            tt_verify_fill(exp + (size_t)q * count * es, count, o->dtype, o->op, q, seed, 0);
                        break;
                    case TT_COLL_BROADCAST:
                        tt_verify_fill(exp, count, o->dtype, o->op, o->root, seed, 0);
                        break;
                    default:
                        if (me == o->root)
                            tt_verify_expected(exp, count, o->dtype, o->op, n, seed, 0);
                        break;
                    }
                    if (o->coll != TT_COLL_REDUCE || me == o->root)
                        w = (long long)tt_verify_count_wrong(rb, exp, out_elems, o->dtype);
                    int64_t w64 = w;
                    CHECK(tt_allreduce(&w64, &w64, 1, TT_INT64, TT_SUM, c));
                    wrong = w64;
                }
            }
            r.time_us[place] = sec * 1e6;
            double gb = (double)count * es * alg_mult / 1e9;
            r.algbw[place] = sec > 0 ? gb / sec : 0;
            r.busbw[place] = r.algbw[place] * bus;
            r.wrong[place] = wrong;
            r.pred_us[place] = 0;
            double pu;
            if (has_pred() &&
                topo_exec_predict_us(cli_name(o->coll), r.size, n, r.algo,
                                     tt_proto_name(eff.proto), &pu) == 0 && pu > 0)
                r.pred_us[place] = pu;
        }
        if (me == 0) {
            if (tty)
                fprintf(stderr, "\r\033[K");
            print_row(o, &r);
            pthread_mutex_lock(&sh->mu);
            if (sh->nrows == sh->cap) {
                int nc = sh->cap ? sh->cap * 2 : 32;
                row *p = realloc(sh->rows, (size_t)nc * sizeof *p);
                if (p) {
                    sh->rows = p;
                    sh->cap = nc;
                }
            }
            if (sh->nrows < sh->cap)
                sh->rows[sh->nrows++] = r;
            pthread_mutex_unlock(&sh->mu);
        }
    }
out:
    if (tty)
        fprintf(stderr, "\r\033[K");
    free(sbuf);
    free(rbuf);
    free(exp);
    if (sh->failed && rc == EXIT_OK)
        rc = EXIT_RUNTIME;
    return rc;
}

typedef struct {
    tt_comm *c;
    shared *sh;
    int rc;
} thr_arg;

static void *thr_main(void *p)
{
    thr_arg *a = p;
    a->rc = bench_rank(a->c, a->sh);
    return NULL;
}

/* MemAvailable from /proc/meminfo in bytes, 0 when unknown. */
static uint64_t mem_available(void)
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

static void usage(FILE *f)
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
            "      --host N           N host ranks as threads of this process (default 4)\n"
            "      --algo NAME        ring, tree, halving-doubling, hierarchical (also NCCL_ALGO)\n"
            "      --proto NAME       simple, ll, ll128 (also NCCL_PROTO)\n"
            "      --chunk SIZE       pipeline chunk (default 512K)\n"
            "  -T, --timeout SEC      per-wait deadline (default TOPOTUNE_TIMEOUT_MS or 30 s)\n"
            "  -J, --output_file F    also write the results as JSON to F\n"
            "      --rank R --nranks N --master HOST:PORT   one rank per process, TCP rendezvous\n"
            "                         (or RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun sets them)\n"
            "      --mpi              one rank per MPI process (automatic under mpirun/srun when built with MPI)\n"
            "      --no-progress      no live progress line on stderr\n"
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
            "-n 20 -w 5 -c 1) or, without a usable GPU, on host ranks (--host 4 -b 1K -e 1M -f 4 -n 10 -w 2 -c 1).\n");
}

static int parse_args(int argc, char **argv, opts *o)
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
           O_MPI, O_VALIDATE, O_TOPO, O_VMARGIN, O_VRUNNERS, O_VROUNDS };
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
        {"validate-rounds", 1, 0, O_VROUNDS}, {0, 0, 0, 0}};
    int ch, ngpus = 0, have_nranks = 0, host_given = 0, predict_given = 0, mpi_given = 0, val_given = 0;
    if (tt_cli_validate_defaults)
        tt_cli_validate_defaults(&o->val);
    long long v;
    uint64_t u;
    const char *algo_s = NULL, *proto_s = NULL;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:b:e:f:i:n:w:m:c:o:d:r:g:T:J:h", lo, NULL)) != -1) {
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
        case 'h': usage(stdout); exit(0);
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
        case O_MASTER: snprintf(o->master, sizeof o->master, "%s", optarg); break;
        case O_NOPROG: o->progress = 0; break;
        case O_MPI: mpi_given = 1; break;
        /* read by the prediction source (bin/cli_predict.c) */
        case O_PREDICT: setenv("TOPOTUNE_PREDICT_TOPO", optarg, 1); predict_given = 1; break;
        case O_CALIB: setenv("TOPOTUNE_CALIBRATION", optarg, 1); break;
        case O_VALIDATE:
            if (!tt_cli_validate_host || !tt_cli_validate_gpu)
                return tt_cli_bad("--validate is not part of this build (bin/cli_validate.c)");
            o->val.on = 1;
            break;
        case O_TABLE: o->table = o->val.table = optarg; break; /* a plan table, or the table --validate judges */
        case O_TOPO: o->val.topo = optarg; val_given = 1; break;
        case O_VMARGIN:
        case O_VRUNNERS:
        case O_VROUNDS:
            if (!tt_cli_validate_option)
                return tt_cli_bad("--validate is not part of this build (bin/cli_validate.c)");
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
    if (predict_given && !has_pred())
        return tt_cli_bad("--predict: no prediction possible with that topology/calibration (reason above)");
    if (algo_s && tt_algo_parse(algo_s, &o->plan.algo) != TT_OK)
        return tt_cli_bad("%s: %s (one algorithm; lists and ^exclusions are not supported)", o->algo_src,
                   tt_error_message());
    if (proto_s && tt_proto_parse(proto_s, &o->plan.proto) != TT_OK)
        return tt_cli_bad("%s: %s (one protocol; lists are not supported)", o->proto_src, tt_error_message());
    if (!o->plan.chunk_bytes) {
        const char *cb = getenv("TOPOTUNE_CHUNK_BYTES");
        o->plan.chunk_bytes = (cb && tt_parse_size(cb, &u) == TT_OK && u >= 64) ? (size_t)u : 512 * 1024;
    }
    if (o->plan.chunk_bytes < 64)
        return tt_cli_bad("--chunk must be at least 64 bytes");
    if (o->minb == 0 || o->maxb == 0)
        return tt_cli_bad("sizes must be positive (-b %llu, -e %llu)", (unsigned long long)o->minb,
                   (unsigned long long)o->maxb);
    if (o->maxb < o->minb)
        return tt_cli_bad("-e (maxbytes) is smaller than -b (minbytes)");
    if (o->factor <= 1 && o->stepb == 0)
        return tt_cli_bad("-i 0 with -f 1 would never reach -e");
    /* multi-process: options, --mpi, torchrun's variables, else an MPI launcher */
    if (mpi_given && !TOPO_EXEC_HAVE_MPI)
        return tt_cli_bad("--mpi: this topo-exec was built without MPI (install libopenmpi-dev and rebuild, or use "
                          "mpirun -x MASTER_ADDR=host -x MASTER_PORT=port without --mpi)");
    if (mpi_given && (o->rank >= 0 || have_nranks || o->master[0] || host_given))
        return tt_cli_bad("--mpi cannot be combined with --rank/--nranks/--master or --host");
    if (mpi_given) {
        o->mp = 3;
    } else if (o->rank >= 0 || have_nranks || o->master[0]) {
        if (o->rank < 0 || !have_nranks || !o->master[0])
            return tt_cli_bad("multi-process mode needs all of --rank, --nranks and --master");
        if (o->rank >= o->nranks)
            return tt_cli_bad("--rank must be below --nranks");
        o->mp = 1;
    } else if (getenv("MASTER_ADDR") && getenv("MASTER_PORT") && tt_env_rank_vars(NULL, NULL)) {
        o->mp = 2; /* tt_comm_init_env */
    } else if (TOPO_EXEC_HAVE_MPI && !host_given && mpi_launched()) {
        o->mp = 3; /* MPI_Init + tt_comm_init_mpi */
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

static cJSON *place_json(const row *r, int p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "time", r->time_us[p]);
    cJSON_AddNumberToObject(o, "alg_bw", r->algbw[p]);
    cJSON_AddNumberToObject(o, "bus_bw", r->busbw[p]);
    if (r->wrong[p] >= 0)
        cJSON_AddNumberToObject(o, "nwrong", (double)r->wrong[p]);
    else
        cJSON_AddNullToObject(o, "nwrong");
    if (r->pred_us[p] > 0)
        cJSON_AddNumberToObject(o, "predicted_time", r->pred_us[p]);
    return o;
}

static int write_json(const opts *o, const shared *sh, int nranks, const char *transport, double avg_bw,
                      int oob, const char *start)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "version", 1);
    cJSON_AddStringToObject(j, "tool", "topo-exec");
    cJSON_AddStringToObject(j, "topotune_version", TT_VERSION_STRING);
    cJSON_AddStringToObject(j, "start_time", start);
    cJSON *args = cJSON_AddArrayToObject(j, "args");
    for (int i = 0; i < o->argc; i++)
        cJSON_AddItemToArray(args, cJSON_CreateString(o->argv[i]));
    cJSON *cfg = cJSON_AddObjectToObject(j, "config");
    cJSON_AddStringToObject(cfg, "collective", cli_name(o->coll));
    cJSON_AddNumberToObject(cfg, "nranks", nranks);
    cJSON_AddStringToObject(cfg, "transport", transport);
    cJSON_AddNumberToObject(cfg, "minimum_bytes", (double)o->minb);
    cJSON_AddNumberToObject(cfg, "maximum_bytes", (double)o->maxb);
    if (o->factor > 1)
        cJSON_AddNumberToObject(cfg, "step_factor", (double)o->factor);
    else
        cJSON_AddNumberToObject(cfg, "step_bytes", (double)o->stepb);
    cJSON_AddNumberToObject(cfg, "warmup_iters", o->warmup);
    cJSON_AddNumberToObject(cfg, "iterations", o->iters);
    cJSON_AddNumberToObject(cfg, "aggregated_iterations", o->agg);
    cJSON_AddNumberToObject(cfg, "validation", o->check);
    cJSON_AddStringToObject(cfg, "algo_requested", tt_algo_label(o->plan.algo));
    cJSON_AddStringToObject(cfg, "proto_requested", tt_proto_name(o->plan.proto));
    cJSON_AddNumberToObject(cfg, "chunk_bytes", (double)o->plan.chunk_bytes);
    cJSON *res = cJSON_AddArrayToObject(j, "results");
    for (int i = 0; i < sh->nrows; i++) {
        const row *r = &sh->rows[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "size", (double)r->size);
        cJSON_AddNumberToObject(x, "count", (double)r->count);
        cJSON_AddStringToObject(x, "type", tt_dtype_name(o->dtype));
        cJSON_AddStringToObject(x, "redop", (o->coll == TT_COLL_ALLGATHER || o->coll == TT_COLL_BROADCAST) ? "none"
                                                                                              : tt_redop_name(o->op));
        cJSON_AddNumberToObject(x, "root", (o->coll == TT_COLL_BROADCAST || o->coll == TT_COLL_REDUCE) ? o->root : -1);
        cJSON_AddStringToObject(x, "algo", r->algo);
        cJSON_AddItemToObject(x, "out_of_place", place_json(r, 0));
        cJSON_AddItemToObject(x, "in_place", place_json(r, 1));
        cJSON_AddItemToArray(res, x);
    }
    cJSON *ob = cJSON_AddObjectToObject(j, "out_of_bounds");
    cJSON_AddNumberToObject(ob, "count", oob);
    cJSON_AddBoolToObject(ob, "okay", oob == 0);
    cJSON *ab = cJSON_AddObjectToObject(j, "average_bus_bandwidth");
    cJSON_AddNumberToObject(ab, "bandwidth", avg_bw);
    cJSON *errs = cJSON_AddArrayToObject(j, "errors");
    if (sh->failed)
        cJSON_AddItemToArray(errs, cJSON_CreateString(sh->err));
    tt_status st = tt_cli_write_json(o->json, j);
    cJSON_Delete(j);
    if (st != TT_OK) {
        fprintf(stderr, "topo-exec: -J %s: %s\n", o->json, tt_error_message());
        return EXIT_RUNTIME;
    }
    return 0;
}

/* GPU-mode hook (added by the GPU executor, bin/cli_gpu.c): -g N, --engine,
 * --gpu-copy-bench run there; it returns -1 for host-mode command lines. */
extern int topo_exec_gpu_main(int argc, char **argv) __attribute__((weak));

int main(int argc, char **argv)
{
    tt_cli_init("topo-exec");
    if (topo_exec_gpu_main) {
        /* (without arguments GPU mode takes the machine's GPUs when any is usable) */
        int grc = topo_exec_gpu_main(argc, argv);
        if (grc >= 0)
            return grc;
    }
    opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    if (o.timeout_ms > 0) {
        char b[32];
        snprintf(b, sizeof b, "%d", o.timeout_ms);
        setenv("TOPOTUNE_TIMEOUT_MS", b, 1);
    }
    tt_cli_sweep sweep = {o.coll, o.dtype, o.op, o.root, o.minb, o.maxb, o.stepb, o.factor, o.iters, o.warmup,
                          o.agg, o.check, o.plan.chunk_bytes, o.progress, o.json, o.argc, o.argv};
    if (o.val.on && o.ngpus > 0)
        return tt_cli_validate_gpu(&o.val, &sweep, o.ngpus);
    char start[64];
    time_t t = time(NULL);
    strftime(start, sizeof start, "%Y-%m-%d %H:%M:%S", gmtime(&t));

    shared sh = {.o = &o};
    pthread_mutex_init(&sh.mu, NULL);
    int nranks, me = 0;
    const char *transport;
    tt_comm **comms = NULL;
    if (o.mp) {
        comms = calloc(1, sizeof *comms);
        tt_status st;
        if (o.mp == 1) {
            tt_unique_id id;
            st = tt_unique_id_from_addr(&id, o.master);
            if (st == TT_OK)
                st = tt_comm_init_rank(&comms[0], o.nranks, &id, o.rank);
        } else if (o.mp == 3) {
            st = mpi_comm_init(&comms[0]); /* every rank learns if any failed */
        } else {
            st = tt_comm_init_env(&comms[0]);
        }
        if (st != TT_OK) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            free(comms);
            mpi_finish();
            return st == TT_ERR_INVALID ? EXIT_USAGE : EXIT_RUNTIME;
        }
        nranks = tt_comm_nranks(comms[0]);
        me = tt_comm_rank(comms[0]);
    } else {
        nranks = o.host_ranks;
        comms = calloc((size_t)nranks, sizeof *comms);
        if (!comms || tt_comm_init_threads(nranks, comms) != TT_OK) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            free(comms);
            return EXIT_RUNTIME;
        }
    }
    transport = tt_comm_transport(comms[0]);
    int nlocal = o.mp ? 1 : nranks;
    {
        /* each local rank holds send, receive and expected buffers of the
         * largest size: refuse up front instead of being killed by the OOM
         * killer half-way (nccl-tests would silently shrink -e) */
        size_t es = tt_dtype_size(o.dtype);
        int per_rank = o.coll == TT_COLL_ALLGATHER || o.coll == TT_COLL_REDUCESCATTER;
        double cnt = (double)(o.maxb / es / (per_rank ? (uint64_t)nranks : 1));
        double in = o.coll == TT_COLL_REDUCESCATTER ? cnt * nranks : cnt;
        double out = o.coll == TT_COLL_ALLGATHER ? cnt * nranks : cnt;
        double need = ((in > out ? in : out) * 2 + out) * (double)es * nlocal;
        uint64_t avail = mem_available();
        if (avail && need > 0.9 * (double)avail) {
            fprintf(stderr, "topo-exec: -e %llu needs about %.0f MiB of buffers for %d local rank(s) but only "
                            "%llu MiB are available; lower -e or run fewer ranks per host\n",
                    (unsigned long long)o.maxb, need / 1048576.0, nlocal, (unsigned long long)(avail >> 20));
            rc = EXIT_USAGE;
            goto checked;
        }
    }
    if ((o.coll == TT_COLL_BROADCAST || o.coll == TT_COLL_REDUCE) && o.root >= nranks) {
        fprintf(stderr, "topo-exec: -r %d: root must be below the number of ranks (%d)\n", o.root, nranks);
        rc = EXIT_USAGE;
        goto checked;
    }
    if (o.val.on)
        goto checked; /* --validate sets the plan of every candidate itself (bin/cli_validate_run.c) */
    for (int r = 0; r < nlocal; r++)
        tt_comm_set_plan(comms[r], &o.plan);
    if (o.table) {
        tt_tune_table tab;
        if (tt_tune_table_load_for(o.table, nranks, 0, &tab) != TT_OK) {
            rc = tt_cli_bad("--table: %s", tt_error_message());
            goto done;
        }
        snprintf(o.table_desc, sizeof o.table_desc, "%s (%d rules, model %s)", o.table, tab.n,
                 tab.model[0] ? tab.model : "?");
        for (int r = 0; r < nlocal && rc == 0; r++)
            if (tt_comm_set_plan_table(comms[r], tab.entries, tab.n, TT_PLAN_TABLE_FALLBACK) != TT_OK) {
                fprintf(stderr, "topo-exec: %s\n", tt_error_message());
                rc = EXIT_RUNTIME;
            }
        tt_tune_table_free(&tab);
        if (rc) goto done;
    }
    /* an override that cannot apply is reported up front, never ignored */
    {
        tt_plan eff;
        size_t es = tt_dtype_size(o.dtype);
        if (tt_comm_resolve_plan(comms[0], o.coll, (size_t)(o.maxb / es), o.dtype, &eff) != TT_OK) {
            fprintf(stderr, "topo-exec: %s (requested: algorithm %s from %s, protocol %s from %s)\n",
                    tt_error_message(), tt_algo_label(o.plan.algo), o.algo_src ? o.algo_src : "default",
                    tt_proto_name(o.plan.proto), o.proto_src ? o.proto_src : "default");
            rc = EXIT_USAGE;
            goto checked;
        }
    }
checked:
    if (o.mp == 3) /* MPI: same options everywhere, and all ranks go on or stop together */
        rc = mpi_agree(&o, me, nranks, rc);
    if (rc)
        goto done;
    if (o.val.on) {
        rc = tt_cli_validate_host(&o.val, &sweep, comms, nlocal);
        goto done;
    }
    if (me == 0)
        print_header(&o, nranks, transport);
    if (o.mp) {
        rc = bench_rank(comms[0], &sh);
    } else {
        pthread_t *th = calloc((size_t)nranks, sizeof *th);
        thr_arg *ta = calloc((size_t)nranks, sizeof *ta);
        for (int r = 0; r < nranks; r++) {
            ta[r] = (thr_arg){comms[r], &sh, 0};
            pthread_create(&th[r], NULL, thr_main, &ta[r]);
        }
        for (int r = 0; r < nranks; r++) {
            pthread_join(th[r], NULL);
            if (ta[r].rc && !rc)
                rc = ta[r].rc;
        }
        free(th);
        free(ta);
    }
    if (sh.failed) {
        fprintf(stderr, "topo-exec: %s\n", sh.err);
        rc = EXIT_RUNTIME;
    }
    if (me == 0) {
        int oob = 0, nbw = 0;
        double bw = 0;
        for (int i = 0; i < sh.nrows; i++)
            for (int p = 0; p < 2; p++) {
                oob += sh.rows[i].wrong[p] > 0;
                bw += sh.rows[i].busbw[p];
                nbw++;
            }
        double avg = nbw ? bw / nbw : 0;
        if (!sh.failed) {
            printf("# Out of bounds values : %d %s\n", oob, oob ? "FAILED" : "OK");
            printf("# Avg bus bandwidth    : %g \n", avg);
            if (o.table) {
                unsigned long fb = 0;
                for (int r = 0; r < nlocal; r++) fb += tt_comm_plan_table_fallbacks(comms[r]);
                printf("# plan table: %lu call(s) on this process ran a fallback (rules the host transports cannot "
                       "run: LL/LL128, several channels, an algorithm not possible here)\n", fb);
            }
            printf("#\n# Collective test concluded: %s\n", cli_name(o.coll));
        } else {
            printf("# Collective test FAILED after %d size(s): %s\n", sh.nrows, sh.err);
        }
        fflush(stdout);
        if (oob && !rc)
            rc = EXIT_WRONG;
        if (o.json) {
            int jr = write_json(&o, &sh, nranks, transport, avg, oob, start);
            if (jr && !rc)
                rc = jr;
        }
    }
done:
    for (int r = 0; r < nlocal; r++) {
        if (tt_comm_destroy(comms[r]) != TT_OK && !rc && !sh.failed) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            rc = EXIT_RUNTIME;
        }
    }
    free(comms);
    free(sh.rows);
    mpi_finish();
    return rc;
}
