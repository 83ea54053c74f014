/*
 * cli_gpu.c - topo-exec's GPU mode: its run and its table (bin/cli_exec.h declares
 * tt_cli_gpu_run, which topo-exec calls for options that cli_exec_opts.c parsed as GPU mode).
 * The sweep, the GPU engine and the NCCL engine are the library's (tt_sweep_* in
 * exec/tt_exec.h), and so is the text of the table (tt_sweep_text_*).
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
typedef tt_cli_exec_opts gopts;

static int copy_bench(const gopts *o)
{
    tt_gpu_health h;
    tt_gpu_health_check(&h);
    if (!h.ncuda) {
        fprintf(stderr, "topo-exec: --gpu-copy-bench: %s\n", h.why);
        return h.state == TT_GPU_BROKEN ? GX_RUNTIME : GX_USAGE;
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
            topo_exec_predict_plan_us(tt_sweep_coll_name(o->coll), (size_t)m->bytes, x->n, o->nccl ? "default" : tt_algo_label(eff->algo),
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
    tt_sweep_opts so = tt_cli_exec_sweep_opts(o);
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_sweep_text_row(&sb, &so, &r, o->predict, tail);
    tt_cli_exec_out(&sb);
}

/* topo-exec without arguments: a short validated sweep on whatever the machine has - its GPUs
 * when any is usable (1: argc/argv are that GPU command line), else host ranks (0); not under a
 * launcher, where several processes must not each take every GPU. */
int tt_cli_gpu_no_args(int *argc, char ***argv)
{
    static char gn[16];
    int launched = tt_env_rank_vars(NULL, NULL) || tt_setting("PMIX_RANK");
    tt_gpu_health h = {.state = TT_GPU_ABSENT};
    if (!launched) tt_gpu_health_check(&h);
    int ngpu = h.ncuda;
    if (ngpu <= 0) { /* the README's main job keeps its fallback, and says why loudly when GPUs are broken */
        if (h.state == TT_GPU_BROKEN)
            fprintf(stderr, "topo-exec: WARNING: this machine's GPUs cannot be used: %s; running 4 host ranks "
                    "instead (a health check runs topo-exec -g N or all_reduce_perf, which fail here)\n", h.why);
        if (!launched)
            printf("# topo-exec without arguments: %s%s: 4 host ranks\n",
                   h.state == TT_GPU_BROKEN ? "GPUs not usable: " : "", h.why);
        return 0;
    }
    snprintf(gn, sizeof gn, "%d", ngpu > 64 ? 64 : ngpu);
    static char *gargv[] = {NULL, "-g", gn, "-b", "8", "-e", "64M", "-f", "8", "-n", "20", "-w", "5", "-c", "1", NULL};
    gargv[0] = (*argv)[0];
    printf("# topo-exec without arguments: %s GPU rank(s), one per GPU (-g %s -b 8 -e 64M -f 8 -n 20 -w 5 -c 1)\n",
           gn, gn);
    *argc = (int)(sizeof gargv / sizeof gargv[0]) - 1;
    *argv = gargv;
    return 1;
}

/* A GPU run's communicators and engine. */
typedef struct {
    gopts *o;
    tt_gpu_comm *g;
    tt_comm *hc;      /* process ranks: the host communicator (rendezvous, handles, results) */
    int n, me, virt, ndev;
    char tdesc[512];  /* --table: what was loaded */
    tt_sweep_engine eng;
} gpu_run;

/* 0, or the exit code after a message with everything closed */
static int gpu_fail(gpu_run *r, int rc)
{
    tt_gpu_comm_destroy(r->g);
    tt_comm_destroy(r->hc);
    return rc;
}

static int gpu_error(gpu_run *r, int rc)
{
    fprintf(stderr, "topo-exec: %s\n", tt_error_message());
    return gpu_fail(r, rc);
}

/* The GPU communicator: thread ranks, or one rank per process over a host communicator. */
static int gpu_open(gpu_run *r)
{
    const gopts *o = r->o;
    tt_status st;
    r->n = o->ngpus;
    if (o->mp) {
        tt_unique_id id;
        st = o->mp == 1 ? tt_unique_id_from_addr(&id, o->master) : TT_OK;
        if (st == TT_OK) st = o->mp == 1 ? tt_comm_init_rank(&r->hc, o->nranks, &id, o->rank) : tt_comm_init_env(&r->hc);
        if (st != TT_OK) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            return st == TT_ERR_INVALID ? GX_USAGE : GX_RUNTIME;
        }
        r->n = tt_comm_nranks(r->hc);
        r->me = tt_comm_rank(r->hc);
        char why[640]; /* every process's options against rank 0's before any collective (issue #32 item 7) */
        int arc = tt_cli_exec_agree(o, r->hc, 0, why, sizeof why);
        if (arc) {
            tt_comm_destroy(r->hc);
            r->hc = NULL;
            return arc;
        }
        if (r->n > 64) {
            fprintf(stderr, "topo-exec: %d process ranks: GPU mode runs at most 64\n", r->n);
            tt_comm_destroy(r->hc);
            return GX_USAGE;
        }
        st = tt_gpu_comm_init_procs(&r->g, r->hc, -1);
    } else {
        st = tt_gpu_comm_init(&r->g, r->n, NULL);
    }
    if (st != TT_OK) {
        fprintf(stderr, "topo-exec: %s\n", tt_error_message());
        tt_comm_destroy(r->hc);
        return GX_RUNTIME;
    }
    r->virt = tt_gpu_comm_is_virtual(r->g);
    if ((o->coll == TT_COLL_BROADCAST || o->coll == TT_COLL_REDUCE) && o->root >= r->n) {
        gpu_fail(r, 0);
        return tt_cli_bad("-r %d: root must be below the number of ranks (%d)", o->root, r->n);
    }
    return 0;
}

/* --table (our engine): the rules fill what --algo/--proto leave open */
static int gpu_table(gpu_run *r)
{
    const gopts *o = r->o;
    tt_tune_table tab;
    if (tt_tune_table_load_for(o->table, r->n, 0, &tab) != TT_OK) {
        gpu_fail(r, 0);
        return tt_cli_bad("--table: %s", tt_error_message());
    }
    snprintf(r->tdesc, sizeof r->tdesc, "%s (%d rules, model %s)", o->table, tab.n, tab.model[0] ? tab.model : "?");
    /* its channel count is NCCL's (topo-tune models NCCL's channels), so the executor keeps its own per size */
    tt_status st = tt_gpu_comm_set_plan_table(r->g, tab.entries, tab.n, TT_PLAN_TABLE_FALLBACK | TT_PLAN_TABLE_NO_CHANNELS);
    tt_tune_table_free(&tab);
    return st != TT_OK ? gpu_error(r, GX_RUNTIME) : 0;
}

/* The engine: NCCL (libnccl.so.2) or topotune's GPU executor. */
static int gpu_engine(gpu_run *r)
{
    gopts *o = r->o;
    tt_status st;
    if (o->nccl) {
        if (r->virt && !r->hc) {
            fprintf(stderr, "topo-exec: --engine nccl: NCCL runs one rank per GPU; -g %d needs %d GPUs but this "
                            "machine has %d\n", r->n, r->n, r->ndev);
            return gpu_fail(r, GX_USAGE);
        }
        if (r->virt) {
            fprintf(stderr, "topo-exec: rank %d: --engine nccl: NCCL runs one rank per GPU, but the %d processes "
                            "share a GPU (give each process its own GPU, e.g. CUDA_VISIBLE_DEVICES)\n", r->me, r->n);
            return gpu_fail(r, GX_USAGE);
        }
        /* NCCL's own variables, for the real NCCL this engine loads: its interface, not a setting of ours */
        if (o->plan.algo != TT_ALGO_DEFAULT) tt_cli_exec_setenv_nccl("NCCL_ALGO", o->plan.algo == TT_ALGO_TREE ? "Tree" : "Ring");
        if (o->plan.proto != TT_PROTO_DEFAULT)
            tt_cli_exec_setenv_nccl("NCCL_PROTO", o->plan.proto == TT_PROTO_LL ? "LL" : o->plan.proto == TT_PROTO_LL128 ? "LL128" : "Simple");
        if ((st = tt_sweep_engine_nccl(&r->eng, r->g, r->hc)) != TT_OK) {
            /* libnccl.so.2 missing or incomplete: name the option; NCCL's own failures speak for themselves */
            fprintf(stderr, "topo-exec: %s%s\n", st == TT_ERR_UNSUPPORTED ? "--engine nccl: " : "", tt_error_message());
            return gpu_fail(r, GX_RUNTIME);
        }
        return 0;
    }
    tt_plan eff;
    size_t es = tt_dtype_size(o->dtype);
    if (tt_gpu_comm_resolve_plan(r->g, o->coll, (size_t)(o->maxb / es), o->dtype, &o->plan, &eff) != TT_OK)
        return gpu_error(r, GX_USAGE);
    if (tt_sweep_engine_gpu(&r->eng, r->g, r->hc) != TT_OK)
        return gpu_error(r, GX_RUNTIME);
    return 0;
}

/* the sweep of the library from the options (GPU mode: no aggregation, checked or not) */
static tt_sweep_opts gpu_sweep_opts(const gopts *o)
{
    tt_sweep_opts so = tt_cli_exec_sweep_opts(o);
    so.agg = 1;
    so.check = o->check ? 1 : 0;
    so.check_max = o->check_max;
    so.time_of = 0;
    return so;
}

/* every rank's pid (process ranks: over the host communicator); 0 or the exit code after a message */
static int gpu_pids(gpu_run *r, int *pids)
{
    for (int i = 0; i < r->n; i++) pids[i] = (int)getpid();
    if (!r->hc) return 0;
    int32_t mine = (int32_t)getpid(), all[64];
    if (tt_allgather(&mine, all, 1, TT_INT32, r->hc) != TT_OK || tt_comm_wait(r->hc) != TT_OK) {
        fprintf(stderr, "topo-exec: rank %d: %s\n", r->me, tt_error_message());
        return GX_RUNTIME;
    }
    for (int i = 0; i < r->n; i++) pids[i] = all[i];
    return 0;
}

/* rank 0: the preamble, how the ranks talk, the devices */
static void gpu_header_ranks(const gpu_run *r, const int *pids, const char *host)
{
    const gopts *o = r->o;
    int n = r->n;
    const char *perf = tt_cli_perf_prog();
    tt_sweep_opts so = tt_cli_exec_sweep_opts(o);
    so.agg = 1;
    so.check_max = o->check_max;
    int plain = perf && !tt_cli_perf_extra(); /* the drop-in: nccl-tests' lines only */
    tt_sweep_text_run run = {perf, tt_cli_perf_note(), o->nccl ? "nccl (libnccl.so.2 via dlopen)" : "topotune GPU executor",
                             1, perf && r->hc ? 1 : n, !plain, o->json};
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_sweep_text_preamble(&sb, &run, &so);
    if (r->hc && !plain) {
        /* all net, all IPC/shm, or mixed (IPC inside a host, net between hosts) */
        int npairs = n * (n - 1), nnet = tt_gpu_comm_net_pairs(r->g);
        if (nnet && nnet < npairs)
            tt_strbuf_printf(&sb, "# process ranks on GPUs: %d processes, one GPU rank each (mixed: CUDA IPC inside a "
                             "host, net transport between hosts; %d of %d directed pairs on net)\n", n, nnet, npairs);
        else
            tt_strbuf_printf(&sb, "# process ranks on GPUs: %d processes, one GPU rank each (%s between them)\n", n,
                             nnet ? "net transport: pinned host FIFOs and a proxy thread over the host connections"
                                  : "CUDA IPC or shared memory");
    }
    if (r->virt && plain) /* the drop-in's standard output has nccl-tests' lines only: the warning goes to stderr */
        fprintf(stderr, "%s: VIRTUAL RANKS: %d ranks share %s GPU(s): separate buffers and connections, real "
                "kernels; bandwidths are NOT those of %d GPUs\n", perf, n, r->ndev == 1 ? "1" : "some", n);
    else if (r->virt)
        tt_strbuf_printf(&sb, "# VIRTUAL RANKS: %d ranks share %s GPU(s): separate buffers and connections, real "
                         "kernels; bandwidths are NOT those of %d GPUs\n", n, r->ndev == 1 ? "1" : "some", n);
    tt_sweep_text_devices(&sb);
    for (int i = 0; i < n; i++) {
        /* virtual: this rank shares its GPU with another rank (same device, or IPC on the same GPU) */
        int rv = 0;
        for (int q = 0; q < n && !rv; q++)
            if (q != i && (r->hc ? strstr(tt_gpu_comm_link(r->g, i, q), "same GPU") != NULL
                                 : tt_gpu_comm_device(r->g, q) == tt_gpu_comm_device(r->g, i)))
                rv = 1;
        char info[256], pci[32], name[200];
        int dev = tt_gpu_comm_device(r->g, i);
        if (plain && !r->hc && tt_gpu_device_ident(dev, pci, sizeof pci, name, sizeof name) == TT_OK) {
            /* the drop-in in one process: nccl-tests' "[PCI address] GPU name" */
            tt_sweep_text_rank(&sb, i, pids[i], host, dev, pci, name);
            tt_cli_exec_note_device(i, pids[i], host, dev, name);
            tt_cli_exec_note_device_hex(i, pci);
            continue;
        }
        snprintf(info, sizeof info, "%s -> rank %d", tt_gpu_comm_link(r->g, i, (i + 1) % n), (i + 1) % n);
        tt_sweep_text_rank(&sb, i, pids[i], host, dev, rv ? "gpu, virtual" : "gpu", info);
        tt_cli_exec_note_device(i, pids[i], host, dev, rv ? "GPU (virtual rank)" : "GPU");
    }
    tt_cli_exec_out(&sb);
}

/* rank 0: the plan lines and the column heads */
static void gpu_header_table(const gpu_run *r)
{
    const gopts *o = r->o;
    int plain = tt_cli_perf_prog() && !tt_cli_perf_extra(); /* the drop-in: nccl-tests' columns only */
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    if (!plain)
        tt_strbuf_printf(&sb, "# plan: algo %s, proto %s, channels %s\n",
                         o->plan.algo == TT_ALGO_DEFAULT ? "default" : tt_algo_label(o->plan.algo),
                         o->plan.proto == TT_PROTO_DEFAULT ? "default" : tt_proto_name(o->plan.proto),
                         o->channels ? "as given" : "default");
    if (o->table)
        tt_strbuf_printf(&sb, "# plan table: %s%s\n", o->nccl ? o->table : r->tdesc,
                         o->nccl ? " NOT used: NCCL decides (use NCCL_TUNER_PLUGIN with TOPOTUNE_TUNER_TABLE)" :
                                   "; per size it fills the algorithm/protocol --algo/--proto leave open");
    if (o->predict)
        tt_strbuf_printf(&sb, "# predicted: topotune model for the plan of each row, topology %s, calibration %s\n",
                         tt_setting("TOPOTUNE_PREDICT_TOPO"),
                         tt_setting("TOPOTUNE_CALIBRATION") ? tt_setting("TOPOTUNE_CALIBRATION") : "built-in");
    /* the drop-in without prediction: nccl-tests' heads; else with the algo/proto/ch column */
    tt_sweep_text_header(&sb, plain && !o->predict ? 0
                                                   : TT_SWEEP_TEXT_PLAN_COLUMN | (o->predict ? TT_SWEEP_TEXT_PRED : 0));
    tt_cli_exec_out(&sb);
}

/* rank 0 after a complete sweep: nccl-tests' closing lines and ours */
static int gpu_footer(const gpu_run *r, grows *rows)
{
    const gopts *o = r->o;
    const char *perf = tt_cli_perf_prog(), *word;
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    double avg = rows->nbw ? rows->bwsum / rows->nbw : 0;
    int bwfail = tt_sweep_min_bw_check(avg, &word) == 0;
    char note[64];
    int virt = r->virt && !(perf && !tt_cli_perf_extra()); /* the drop-in said it on stderr */
    snprintf(note, sizeof note, "%s%s%s", word, *word && virt ? " " : "", virt ? "(virtual ranks)" : "");
    tt_sweep_text_footer(&sb, rows->oob, avg, note);
    if (o->table && !o->nccl)
        tt_strbuf_printf(&sb, "# plan table: %lu size(s) had a rule this executor cannot run (NVLS, LL128 without "
                         "NVLink, ...): default plan used\n", rows->tfallback);
    if (o->predict && rows->nperr) {
        double med = tt_median(rows->perr, (size_t)rows->nperr); /* sorts: the worst is last */
        tt_strbuf_printf(&sb, "# Prediction error |pred - meas| / meas: median %.1f%%, worst %.1f%% over %d placements\n",
                         100 * med, 100 * rows->perr[rows->nperr - 1], rows->nperr);
    }
    tt_sweep_text_end(&sb, perf ? perf : tt_sweep_coll_name(o->coll), NULL, 0);
    tt_cli_exec_out(&sb);
    return bwfail;
}

/* -J in GPU mode: the host writer's layout (nccl-tests' schema) */
static int gpu_json(const gpu_run *r, const grows *rows, int rc, const char *start)
{
    const gopts *o = r->o;
    tt_cli_exec_opts jo = *o; /* what the writer reads of it, with the GPU run's ranks */
    jo.host_ranks = 1;
    jo.ngpus = r->n;
    jo.mp = r->hc ? 2 : 0;
    jo.agg = 1;
    return tt_cli_exec_write_json(&jo, rows->rows, rows->nrows, rc == GX_OK ? NULL : tt_error_message(), r->n,
                                  o->nccl ? "nccl" : "gpu", start);
}

/* The sweep and its report (after the engine is made); the exit code. */
static int gpu_sweep(gpu_run *r)
{
    const gopts *o = r->o;
    tt_sweep_opts so = gpu_sweep_opts(o);
    grows rows = {o, r->g, r->n, NULL, 0, 0, 0, 0, 0, 0, tt_gpu_comm_plan_table_fallbacks(r->g), NULL, 0, 0, r->virt};
    so.on_row = gpu_row;
    so.user = &rows;
    int rc = GX_OK;
    char gstart[64];
    time_t t0 = time(NULL);
    strftime(gstart, sizeof gstart, "%Y-%m-%d %H:%M:%S", gmtime(&t0));
    char host[64] = "";
    int pids[64];
    /* buffers: send, receive of the largest size per rank (before anything is printed) */
    if (tt_sweep_prepare(&r->eng, &so, tt_sweep_count(&so, r->n, o->maxb)) != TT_OK) {
        fprintf(stderr, "topo-exec: %s\n", tt_error_message());
        rc = GX_RUNTIME;
        goto out;
    }
    gethostname(host, sizeof host - 1);
    if ((rc = gpu_pids(r, pids)))
        goto out;
    if (r->me == 0) {
        gpu_header_ranks(r, pids, host);
        gpu_header_table(r);
    }
    rows.fb_seen = tt_gpu_comm_plan_table_fallbacks(r->g);
    tt_status st = tt_sweep_run(&r->eng, &so);
    if (st != TT_OK) {
        /* a plan the executor cannot run is a usage error; anything else failed at run time */
        fprintf(stderr, "topo-exec: %s\n", tt_error_message());
        rc = st == TT_ERR_UNSUPPORTED ? GX_USAGE : GX_RUNTIME;
    }
    int bwfail = 0;
    if (rc == GX_OK && r->me == 0)
        bwfail = gpu_footer(r, &rows); /* below NCCL_TESTS_MIN_BW: exit 7, as nccl-tests */
    if (r->me == 0 && o->json && (rc == GX_OK || rows.nrows)) {
        int jr = gpu_json(r, &rows, rc, gstart);
        if (jr && rc == GX_OK) rc = jr;
    }
    if (rc == GX_OK && (rows.oob || bwfail)) rc = GX_WRONG;
out:
    free(rows.perr);
    free(rows.rows);
    return rc;
}

int tt_cli_gpu_run(tt_cli_exec_opts *o)
{
    /* NCCL's own variable, for the NCCL that --engine nccl loads: never NVLink SHARP here */
    if (!getenv("NCCL_NVLS_ENABLE")) tt_cli_exec_setenv_nccl("NCCL_NVLS_ENABLE", "0");
    if (o->copy_bench) return copy_bench(o);
    gpu_run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    tt_gpu_health h;
    tt_gpu_health_check(&h);
    r.ndev = h.ncuda;
    if (!r.ndev) {
        /* a machine without GPUs: a usage error (the message names the way out); GPUs that are
         * there but cannot be used: a runtime failure, so that health checks fail (issue #34) */
        fprintf(stderr, "topo-exec: -g %d: %s; use --host N for host ranks\n", o->ngpus, h.why);
        return h.state == TT_GPU_BROKEN ? GX_RUNTIME : GX_USAGE;
    }
    int rc = gpu_open(&r);
    if (!rc && o->table && !o->nccl)
        rc = gpu_table(&r);
    if (!rc)
        rc = gpu_engine(&r);
    if (rc)
        return rc;
    rc = gpu_sweep(&r);
    tt_sweep_engine_release(&r.eng);
    tt_gpu_comm_destroy(r.g);
    tt_comm_destroy(r.hc);
    return rc;
}
