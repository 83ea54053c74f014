/*
 * topo-exec - run collectives with the topotune executor and report them in
 * nccl-tests' table layout (time, algbw, busbw, #wrong; out-of-place and
 * in-place), with exact correctness checks.
 *
 *   topo-exec                         short validated AllReduce sweep, 4 host ranks
 *   topo-exec --host 8 -t all_gather -b 1K -e 64M -f 2
 *   topo-exec --rank R --nranks N --master 127.0.0.1:PORT ...   (one rank per process)
 *   RANK=.. WORLD_SIZE=.. MASTER_ADDR=.. MASTER_PORT=.. topo-exec ...  (torchrun)
 *   mpirun -np N topo-exec ...        (build with MPI: bin/topo_exec_mpi.c)
 *   topo-exec --validate --table T.json --host 8 -b 1K -e 64M -f 4   (was the table's choice right?)
 *
 * Exit status: 0 all results right, 1 runtime failure (timeout, peer died),
 * 2 usage error, 3 (--validate) the tuning table's choice lost somewhere, 7 wrong
 * results (nccl-tests' code).  See docs/cli-topo-exec.md.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_exec.h"
#include "cli_predict.h"
#include "cli_validate.h"
#include "tt_common.h"
#include "tt_exec.h"
#include "tt_tune.h"

typedef tt_cli_exec_opts opts;

/* The rows rank 0 printed (for the summary and -J) and the first failure of any rank; and what a
 * stop by SIGTERM/SIGINT (on_stop) needs, under mu, which also keeps a row and the stop's lines apart. */
typedef struct {
    const opts *o;
    tt_cli_exec_row *rows;
    int nrows, cap;
    pthread_mutex_t mu;
    int failed;
    char err[1200];
    int pred, tty;
    int nranks;
    int me;                /* this process's (first) rank; -1 before the rendezvous */
    const char *transport; /* "none" before the rendezvous */
    const char *start;     /* -J's start_time */
    int stop_json;         /* a stop writes -J (rank 0, -J given and writable) */
    int phase;             /* 0 before the sweep, 1 the sweep (header printed), 2 --validate */
    int closed;            /* the results (or the reason) are written by the normal way out */
} shared;

/* live progress line on a terminal (rank 0) */
static void on_progress(void *user, int index, int nsizes, uint64_t bytes, int in_place)
{
    shared *sh = user;
    if (!sh->tty) return;
    fprintf(stderr, "\r\033[K# %s %d/%d: %llu bytes %s ...", tt_sweep_coll_name(sh->o->coll), index + 1, nsizes,
            (unsigned long long)bytes, in_place ? "in-place" : "out-of-place");
    fflush(stderr);
}

/* a finished size (rank 0): prediction, the row printed at once, kept for the summary and -J */
static void on_row(void *user, const tt_sweep_row *m)
{
    shared *sh = user;
    const opts *o = sh->o;
    tt_cli_exec_row r;
    memset(&r, 0, sizeof r);
    r.m = *m;
    if (m->plan_known) snprintf(r.algo, sizeof r.algo, "%s", tt_algo_label(m->plan.algo));
    for (int p = 0; p < 2; p++) {
        double pu;
        if (sh->pred && topo_exec_predict_us(tt_sweep_coll_name(o->coll), (size_t)m->bytes, sh->nranks, r.algo,
                                              tt_proto_name(m->plan.proto), &pu) == 0 && pu > 0)
            r.pred_us[p] = pu;
    }
    if (sh->tty) fprintf(stderr, "\r\033[K");
    char tail[48] = "";
    if (tt_cli_perf_prog() && tt_cli_perf_extra()) /* the drop-in's --topotune: the algorithm that ran */
        snprintf(tail, sizeof tail, "  %s", r.algo[0] ? r.algo : "?");
    tt_sweep_opts so = tt_cli_exec_sweep_opts(o);
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_sweep_text_row(&sb, &so, &r, sh->pred, tail);
    pthread_mutex_lock(&sh->mu); /* a stop (on_stop) prints nothing between rows, and no row after it */
    tt_cli_exec_out(&sb);
    if (sh->nrows == sh->cap) {
        int nc = sh->cap ? sh->cap * 2 : 32;
        tt_cli_exec_row *q = realloc(sh->rows, (size_t)nc * sizeof *q);
        if (q) {
            sh->rows = q;
            sh->cap = nc;
        }
    }
    if (sh->nrows < sh->cap && tt_sweep_result_keep(&r) == TT_OK) /* -I's iteration times copied */
        sh->rows[sh->nrows++] = r;
    pthread_mutex_unlock(&sh->mu);
}

/* SIGTERM/SIGINT (cli_exec_stop.c's thread; the process then dies by the signal): rank 0 prints the
 * rows so far with the reason and writes them to -J, as the other ways out do; a blocked collective
 * delays nothing, since nothing here waits for one.  mu stays held: no row follows. */
static void on_stop(void *user, int sig)
{
    shared *sh = user;
    const opts *o = sh->o;
    const char *name = tt_cli_exec_signame(sig);
    char why[256];
    /* mu is held only while a row or the results are written: 2 s is plenty unless stdout is blocked */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    if (pthread_mutex_timedlock(&sh->mu, &until) != 0) {
        fprintf(stderr, "topo-exec: stopped by %s; the output has been blocked for 2 s, nothing more written\n", name);
        return;
    }
    if (sh->me > 0) {
        /* rank 0 keeps the rows and writes -J; the others say why they end, a second later: a launcher that
         * kills the whole job when one process dies by a signal (mpirun) would otherwise kill rank 0 while it
         * writes.  Rank 0 ending first, this rank fails on the lost peer before, as on any death. */
        pthread_mutex_unlock(&sh->mu);
        fprintf(stderr, "topo-exec: rank %d: stopped by %s (ending in 1 s, after rank 0 has written the results)\n",
                sh->me, name);
        struct timespec one = {1, 0};
        while (nanosleep(&one, &one) != 0)
            ;
        return;
    }
    if (sh->closed) {
        fprintf(stderr, "topo-exec: stopped by %s (the results were written)\n", name);
        return;
    }
    if (sh->phase == 1)
        snprintf(why, sizeof why, "stopped by %s after %d size(s)", name, sh->nrows);
    else if (sh->phase == 2)
        snprintf(why, sizeof why, "stopped by %s during --validate (nothing judged; the sizes measured so far are "
                 "on standard output)", name);
    else
        snprintf(why, sizeof why, "stopped by %s before the first size (nothing measured)", name);
    if (sh->tty)
        fprintf(stderr, "\r\033[K");
    if (sh->me == 0 && sh->phase == 1) {
        double avg;
        int oob = tt_sweep_summary(sh->rows, sh->nrows, &avg);
        tt_cli_exec_print_footer(o, oob, avg, -1, why, sh->nrows);
    }
    if (sh->stop_json)
        tt_cli_exec_write_json(o, sh->rows, sh->nrows, why, sh->nranks, sh->transport, sh->start);
    fprintf(stderr, "topo-exec: %s\n", why);
}

/* what a stop does from here on (under mu) */
static void stop_state(shared *sh, int me, int nranks, const char *transport, int stop_json)
{
    pthread_mutex_lock(&sh->mu);
    sh->me = me;
    sh->nranks = nranks;
    sh->transport = transport;
    sh->stop_json = stop_json;
    pthread_mutex_unlock(&sh->mu);
}

static void stop_phase(shared *sh, int phase)
{
    pthread_mutex_lock(&sh->mu);
    sh->phase = phase;
    pthread_mutex_unlock(&sh->mu);
}

/* The communicators of this process: one (a rank per process: --rank/--master, the launcher's
 * environment, MPI) or one per thread rank (--host N).  0 or the exit code after a message. */
static int open_comms(const opts *o, tt_comm ***out, int *nranks)
{
    tt_comm **comms;
    if (o->mp) {
        comms = calloc(1, sizeof *comms);
        tt_status st;
        if (o->mp == 1) {
            tt_unique_id id;
            st = tt_unique_id_from_addr(&id, o->master);
            if (st == TT_OK)
                st = tt_comm_init_rank(&comms[0], o->nranks, &id, o->rank);
        } else if (o->mp == 3) {
            st = tt_cli_mpi_comm_init(&comms[0]); /* every rank learns if any failed */
        } else {
            st = tt_comm_init_env(&comms[0]);
        }
        if (st != TT_OK) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            free(comms);
            tt_cli_mpi_finish();
            return st == TT_ERR_INVALID ? EXIT_USAGE : EXIT_RUNTIME;
        }
        *nranks = tt_comm_nranks(comms[0]);
    } else {
        *nranks = o->host_ranks;
        comms = calloc((size_t)*nranks, sizeof *comms);
        tt_status st = comms ? tt_comm_init_threads(*nranks, comms) : TT_ERR_NOMEM;
        if (st != TT_OK) {
            fprintf(stderr, "topo-exec: %s\n", comms ? tt_error_message() : "out of memory");
            free(comms);
            return st == TT_ERR_INVALID ? EXIT_USAGE : EXIT_RUNTIME; /* e.g. TOPOTUNE_THREAD_NODES=0 */
        }
    }
    *out = comms;
    return 0;
}

/* What must hold before anything runs: memory, root, the plan (and --table on every local
 * communicator).  0 or the exit code after a message; *fatal: stop at once (no MPI agreement). */
static int check_run(opts *o, tt_comm **comms, int nranks, int nlocal, int *fatal)
{
    *fatal = 0;
    /* each local rank holds send, receive and expected buffers of the largest size: refuse up
     * front instead of being killed by the OOM killer half-way (nccl-tests would silently shrink -e) */
    tt_sweep_opts so = tt_cli_exec_sweep_opts(o);
    tt_sweep_mem mem;
    tt_sweep_host_mem(&so, nranks, nlocal, &mem);
    if (!mem.fits && tt_cli_perf_prog() && nlocal == nranks && mem.fit_maxb >= o->minb) {
        /* the drop-in does what nccl-tests does: lower -e to what fits, and say so (one process only:
         * processes with different memory would disagree on the sizes) */
        tt_cli_exec_note_reduced(o->maxb, mem.fit_maxb); /* the header says so where nccl-tests does */
        o->maxb = mem.fit_maxb;
        mem.fits = 1;
    }
    if (!mem.fits) {
        fprintf(stderr, "topo-exec: -e %llu needs about %.0f MiB of buffers for %d local rank(s) but only "
                        "%llu MiB are available; lower -e or run fewer ranks per host\n",
                (unsigned long long)o->maxb, mem.need / 1048576.0, nlocal, (unsigned long long)(mem.avail >> 20));
        return EXIT_USAGE;
    }
    if ((o->coll == TT_COLL_BROADCAST || o->coll == TT_COLL_REDUCE) && o->root >= nranks) {
        fprintf(stderr, "topo-exec: -r %d: root must be below the number of ranks (%d)\n", o->root, nranks);
        return EXIT_USAGE;
    }
    if (o->val.on)
        return 0; /* --validate sets the plan of every candidate itself (bin/cli_validate_run.c) */
    for (int r = 0; r < nlocal; r++)
        tt_comm_set_plan(comms[r], &o->plan);
    if (o->table) {
        tt_tune_table tab;
        *fatal = 1;
        if (tt_tune_table_load_for(o->table, nranks, 0, &tab) != TT_OK)
            return tt_cli_bad("--table: %s", tt_error_message());
        snprintf(o->table_desc, sizeof o->table_desc, "%s (%d rules, model %s)", o->table, tab.n,
                 tab.model[0] ? tab.model : "?");
        int rc = 0;
        for (int r = 0; r < nlocal && rc == 0; r++)
            if (tt_comm_set_plan_table(comms[r], tab.entries, tab.n, TT_PLAN_TABLE_FALLBACK) != TT_OK) {
                fprintf(stderr, "topo-exec: %s\n", tt_error_message());
                rc = EXIT_RUNTIME;
            }
        tt_tune_table_free(&tab);
        if (rc) return rc;
        *fatal = 0;
    }
    /* an override that cannot apply is reported up front, never ignored */
    tt_plan eff;
    if (tt_comm_resolve_plan(comms[0], o->coll, (size_t)(o->maxb / tt_dtype_size(o->dtype)), o->dtype, &eff) != TT_OK) {
        fprintf(stderr, "topo-exec: %s (requested: algorithm %s from %s, protocol %s from %s)\n",
                tt_error_message(), tt_algo_label(o->plan.algo), o->algo_src ? o->algo_src : "default",
                tt_proto_name(o->plan.proto), o->proto_src ? o->proto_src : "default");
        return EXIT_USAGE;
    }
    return 0;
}

/* Whether this process writes -J: rank 0, as far as known before the rendezvous (MPI: after it). */
static int json_writer_hint(const opts *o)
{
    if (o->mp == 0)
        return 1;
    if (o->mp == 1)
        return o->rank == 0;
    if (o->mp == 2) {
        const char *rv = NULL;
        tt_env_rank_vars(&rv, NULL);
        const char *v = rv ? tt_setting(rv) : NULL;
        return v && !strcmp(v, "0");
    }
    return 0;
}

/* where the local ranks' workers run (--bind / TOPOTUNE_HOST_BIND) or why they are not bound; the
 * nccl-tests names print it with --topotune only (their output keeps nccl-tests' lines) */
static void print_binding(tt_comm **comms, int nlocal)
{
    if (tt_cli_perf_prog() && !tt_cli_perf_extra())
        return; /* the drop-in prints nccl-tests' lines only (its --topotune adds ours) */
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_sweep_text_binding(&sb, comms, nlocal);
    tt_cli_exec_out(&sb);
}

/* rank 0: the header with every rank's process and host (process ranks: as the rendezvous
 * exchanged them; MPI: as MPI gathered them) */
static void print_header(const opts *o, int nranks, const char *transport, const tt_comm *comm)
{
    int *pids = calloc((size_t)nranks, sizeof *pids);
    const char **hosts = calloc((size_t)nranks, sizeof *hosts);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    for (int r = 0; pids && hosts && r < nranks; r++) {
        pids[r] = (int)getpid();
        hosts[r] = host;
        if (o->mp)
            tt_comm_rank_ident(comm, r, &pids[r], &hosts[r]);
        tt_cli_mpi_ident_of(r, &pids[r], &hosts[r]); /* MPI mode: every rank's own */
    }
    if (pids && hosts)
        tt_cli_exec_print_header(o, nranks, transport, pids, hosts);
    free(pids);
    free(hosts);
}

/* The sweep on every local rank (the library's: threads, or this process's one rank); rank 0
 * prints the rows as they come; the first failure of any rank is kept. */
static int run_ranks(tt_comm **comms, int nlocal, shared *sh)
{
    tt_sweep_opts so = tt_cli_exec_sweep_opts(sh->o);
    so.progress = on_progress;
    so.on_row = on_row;
    so.user = sh;
    tt_status st = tt_sweep_run_host(comms, nlocal, &so);
    if (sh->tty) fprintf(stderr, "\r\033[K");
    if (st != TT_OK) {
        sh->failed = 1;
        snprintf(sh->err, sizeof sh->err, "%s", tt_error_message());
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* --validate on GPU process ranks (-g 1 with --rank/--nranks/--master or a launcher's environment):
 * what refuses without a rendezvous first, then the host communicator, every rank's options
 * against rank 0's, and the GPU validation itself (bin/cli_validate_gpu.c). */
static int validate_gpu_procs(const opts *o, const tt_cli_sweep *s)
{
    if (o->mp == 3)
        return tt_cli_bad("-g %d --validate: GPU process ranks meet through --rank/--nranks/--master or a launcher's "
                          "MASTER_ADDR/MASTER_PORT and rank variables, not MPI", o->ngpus);
    if (o->ngpus != 1)
        return tt_cli_bad("-g %d with process ranks: each process drives one GPU rank; use -g 1 and start one "
                          "process per rank", o->ngpus);
    int rc = tt_cli_validate_gpu_check(&o->val, s, 1, o->mp == 1 ? o->nranks : 0);
    if (rc)
        return rc;
    tt_comm **comms = NULL;
    int nranks;
    if ((rc = open_comms(o, &comms, &nranks)))
        return rc;
    char why[640];
    rc = tt_cli_exec_agree(o, comms[0], 0, why, sizeof why);
    if (!rc)
        rc = tt_cli_validate_gpu(&o->val, s, 1, comms[0]);
    if (tt_comm_destroy(comms[0]) != TT_OK && !rc) {
        fprintf(stderr, "topo-exec: %s\n", tt_error_message());
        rc = EXIT_RUNTIME;
    }
    free(comms);
    return rc;
}

/* Host ranks, once the communicators are open: the checks every rank agrees on, then --validate
 * or the sweep (the rows printed as they come), the summary and -J.  The exit code; *jwrite:
 * whether -J is still to be written with the reason (why) of an early stop. */
static int host_run(opts *o, const tt_cli_sweep *sweep, tt_comm **comms, int nranks, shared *sh, int *jwrite,
                    int jrc, char *why, size_t whyn, const char *start)
{
    int me = tt_comm_rank(comms[0]), nlocal = o->mp ? 1 : nranks, fatal, rc = 0;
    const char *transport = tt_comm_transport(comms[0]);
    if (o->mp == 1 || o->mp == 2) {
        rc = tt_cli_exec_agree(o, comms[0], jrc, why, whyn);
        if (rc)
            return rc;
    }
    rc = check_run(o, comms, nranks, nlocal, &fatal);
    if (rc && tt_cli_last_bad()[0])
        snprintf(why, whyn, "%s", tt_cli_last_bad());
    if (fatal)
        return rc;
    if (o->mp == 3) /* MPI: same options everywhere, and all ranks go on or stop together */
        rc = tt_cli_mpi_agree(o, me, nranks, rc ? rc : jrc);
    if (rc)
        return rc;
    if (me == 0)
        print_binding(comms, nlocal);
    if (o->val.on) {
        *jwrite = 0; /* --validate writes its own -J */
        stop_phase(sh, 2);
        rc = tt_cli_validate_host(&o->val, sweep, comms, nlocal);
        pthread_mutex_lock(&sh->mu);
        sh->closed = 1;
        pthread_mutex_unlock(&sh->mu);
        return rc;
    }
    if (me == 0)
        print_header(o, nranks, transport, comms[0]);
    sh->pred = tt_cli_exec_has_pred();
    sh->tty = o->progress && me == 0 && isatty(2);
    stop_phase(sh, 1);
    for (long long cyc = 0; !rc && !sh->failed && (o->cycles == 0 || cyc < o->cycles); cyc++)
        rc = run_ranks(comms, nlocal, sh); /* --cycles (nccl-tests' -N): the sweep again, rows appended */
    if (sh->failed) {
        fprintf(stderr, "topo-exec: %s\n", sh->err);
        rc = EXIT_RUNTIME;
    }
    if (me != 0)
        return rc;
    pthread_mutex_lock(&sh->mu); /* the results are written here, not by a stop (held until they are) */
    sh->closed = 1;
    double avg;
    int oob = tt_sweep_summary(sh->rows, sh->nrows, &avg);
    long fb = o->table ? 0 : -1; /* -1: no table */
    for (int r = 0; o->table && r < nlocal; r++)
        fb += (long)tt_comm_plan_table_fallbacks(comms[r]);
    int bwfail = tt_cli_exec_print_footer(o, oob, avg, fb, sh->failed ? sh->err : NULL, sh->nrows);
    if ((oob || bwfail) && !rc)
        rc = EXIT_WRONG; /* nccl-tests' testNumResults: wrong values, or below NCCL_TESTS_MIN_BW */
    if (o->json) {
        int jr = tt_cli_exec_write_json(o, sh->rows, sh->nrows, sh->failed ? sh->err : NULL, nranks, transport, start);
        *jwrite = 0;
        if (jr && !rc)
            rc = jr;
    }
    pthread_mutex_unlock(&sh->mu);
    return rc;
}

/* Host mode (threads, one rank per process, MPI) or --validate; the exit code. */
static int host_main(opts *o)
{
    tt_cli_sweep sweep = {o->coll, o->dtype, o->op, o->root, o->minb, o->maxb, o->stepb, o->factor, o->iters,
                          o->warmup, o->agg, o->check, o->plan.chunk_bytes, o->progress, o->json, o->argc, o->argv};
    if (o->val.on && o->ngpus > 0)
        return o->mp ? validate_gpu_procs(o, &sweep) : tt_cli_validate_gpu(&o->val, &sweep, o->ngpus, NULL);
    static char start[64]; /* static: the stop thread (on_stop) may read them until the process ends */
    time_t t = time(NULL);
    strftime(start, sizeof start, "%Y-%m-%d %H:%M:%S", gmtime(&t));
    static shared sh;
    sh = (shared){.o = o, .me = -1, .transport = "none", .start = start, .nranks = o->mp == 1 ? o->nranks : 0};
    pthread_mutex_init(&sh.mu, NULL);
    int nranks, rc;
    tt_comm **comms = NULL;
    /* -J is checked before anything is measured; in the rendezvous modes rank 0 still joins, so that every
     * rank stops at once with the reason (agree_options) instead of waiting for it until the deadline */
    int jrc = o->json && json_writer_hint(o) ? tt_cli_exec_json_probe(o->json) : 0;
    if (jrc && !o->mp)
        return jrc;
    char why[640] = "";
    stop_state(&sh, -1, sh.nranks, "none", o->json && !jrc && json_writer_hint(o));
    tt_cli_exec_stop_on(on_stop, &sh); /* SIGTERM/SIGINT from here on: on_stop */
    if ((rc = open_comms(o, &comms, &nranks))) {
        /* a failed rendezvous still leaves its reason in -J (replacing an older file, never a stale success) */
        pthread_mutex_lock(&sh.mu);
        sh.closed = 1;
        if (o->json && !jrc && json_writer_hint(o))
            tt_cli_exec_write_json(o, NULL, 0, tt_error_message(), o->mp == 1 ? o->nranks : 0, "none", start);
        pthread_mutex_unlock(&sh.mu);
        return rc;
    }
    int me = tt_comm_rank(comms[0]), nlocal = o->mp ? 1 : nranks;
    const char *transport = tt_comm_transport(comms[0]);
    int jwrite = me == 0 && o->json && !jrc; /* -J still to write on every way out */
    if (o->mp == 3 && me == 0 && o->json && !jrc)
        jrc = tt_cli_exec_json_probe(o->json), jwrite = !jrc;
    stop_state(&sh, me, nranks, transport, jwrite);
    rc = host_run(o, &sweep, comms, nranks, &sh, &jwrite, jrc, why, sizeof why, start);
    pthread_mutex_lock(&sh.mu);
    sh.closed = 1;
    if (jwrite && rc) { /* stopped before the sweep: the reason, with no results */
        if (!why[0])
            snprintf(why, sizeof why, "nothing measured: stopped before the first collective (exit %d; the reason is "
                     "on standard error)", rc);
        tt_cli_exec_write_json(o, NULL, 0, why, nranks, transport, start);
    }
    pthread_mutex_unlock(&sh.mu);
    for (int r = 0; r < nlocal; r++) {
        if (tt_comm_destroy(comms[r]) != TT_OK && !rc && !sh.failed) {
            fprintf(stderr, "topo-exec: %s\n", tt_error_message());
            rc = EXIT_RUNTIME;
        }
    }
    free(comms);
    for (int i = 0; i < sh.nrows; i++) tt_sweep_result_release(&sh.rows[i]);
    free(sh.rows);
    tt_cli_mpi_finish();
    return rc;
}

int main(int argc, char **argv)
{
    tt_cli_init("topo-exec");
    /* started as all_reduce_perf, ...: nccl-tests' options become topo-exec's (cli_perf.c) */
    int orig_argc = argc;
    char **orig_argv = argv;
    int prc = tt_cli_perf_translate(&argc, &argv);
    if (prc > 0)
        return prc;
    if (argc == 1) /* without arguments GPU mode takes the machine's GPUs when any is usable */
        tt_cli_gpu_no_args(&argc, &argv);
    opts o;
    int rc = tt_cli_exec_parse(argc, argv, tt_cli_have_mpi, &o);
    if (rc)
        return rc;
    if (o.gpu) /* (-T is set already) */
        return tt_cli_gpu_run(&o);
    tt_cli_exec_set_timeout(&o);
    o.argc = orig_argc; /* -J's args: the command line as typed */
    o.argv = orig_argv;
    tt_cli_exec_stop_init(); /* SIGTERM/SIGINT: the rows so far and why (on_stop); before any thread starts */
    return host_main(&o);
}
