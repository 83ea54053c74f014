/*
 * cli_exec.h - what the files of topo-exec share: its options (cli_exec_opts.c), the
 * nccl-tests-style table and JSON writer (cli_exec_print.c), the GPU mode (cli_gpu.c), the MPI
 * launch mode (topo_exec_mpi.c) and the main program (topo-exec.c).  The measuring itself is the library's (tt_sweep_* in tt_exec.h).
 */
#ifndef TT_CLI_EXEC_H
#define TT_CLI_EXEC_H

#include <stdint.h>
#include <stdio.h>

#include "cli_validate.h"
#include "tt_common.h"
#include "tt_exec.h"

/* topo-exec's exit codes: 1 runtime failure, 2 usage, 7 wrong results (nccl-tests' code);
 * --validate adds TT_CLI_EXIT_TABLE_WRONG (3). */
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
    long long cycles;         /* --cycles N: the sweep N times (0: until killed) */
    int time_of;              /* --average: TT_SWEEP_TIME_* */
    /* GPU mode (-g N, --engine, --gpu-copy-bench without --host/--validate; bin/cli_gpu.c) */
    int gpu;
    int nccl;                 /* --engine nccl */
    int channels;             /* --channels N */
    int predict;              /* --predict given */
    uint64_t copy_bench;      /* --gpu-copy-bench SIZE */
    uint64_t check_max;       /* --check-max SIZE: larger sizes are not checked */
} tt_cli_exec_opts;

/* One printed row: the measurement, the prediction source's times, the algorithm (the library's). */
typedef tt_sweep_result tt_cli_exec_row;

/* ---- options (cli_exec_opts.c) ---- */
void tt_cli_exec_usage(FILE *f);
/* The command line of either mode (o->gpu tells which): 0, or the exit code after a message.
 * have_mpi: built with MPI.  Options that are settings (-T, --bind, --predict, --calibration,
 * --gpu-transport) are set with tt_setting_set (-T by the caller, after the checks). */
int tt_cli_exec_parse(int argc, char **argv, int have_mpi, tt_cli_exec_opts *o);
/* -T as the TOPOTUNE_TIMEOUT_MS setting (nothing without -T). */
void tt_cli_exec_set_timeout(const tt_cli_exec_opts *o);
/* The sweep of the library from the options. */
tt_sweep_opts tt_cli_exec_sweep_opts(const tt_cli_exec_opts *o);
/* A launcher that an MPI library can join (PMIx, ORTE, PMI-1/2), not just rank variables. */
int tt_cli_mpi_launched(void);

/* ---- what topo-exec sets (cli_exec_print.c: -J lists them with the environment) ---- */
/* An option that is a setting (-T, --bind, --predict, --calibration, --gpu-transport): tt_setting_set. */
void tt_cli_exec_set(const char *name, const char *value);
/* NCCL's own variables for the real NCCL of --engine nccl (NCCL_ALGO, ...): its interface, setenv. */
void tt_cli_exec_setenv_nccl(const char *name, const char *value);

/* ---- output (cli_exec_print.c; the text itself is the library's tt_sweep_text_*) ---- */
/* Print sb on stdout (flushed) and free it. */
void tt_cli_exec_out(tt_strbuf *sb);
/* Whether the prediction source is configured (cached). */
int tt_cli_exec_has_pred(void);
/* The variables that shape a run, for -J's "env" (cli_exec_set.c): *n "NAME=value" strings, each
 * and the array malloc'd. */
char **tt_cli_exec_env_entries(int *n);
/* The host sweep's header; pids/hosts per rank (pid -1 and "-" when unknown). */
void tt_cli_exec_print_header(const tt_cli_exec_opts *o, int n, const char *transport, const int *pids,
                              const char *const *hosts);
/* The host sweep's closing lines: out of bounds, average busbw, the table's fallbacks (< 0: no
 * table), or the failure (err) after nrows sizes; 1 when below NCCL_TESTS_MIN_BW
 * (tt_sweep_min_bw_check: exit 7, as nccl-tests). */
int tt_cli_exec_print_footer(const tt_cli_exec_opts *o, int oob, double avg_busbw, long table_fallbacks,
                             const char *err, int nrows);
/* -J: the results as JSON (nccl-tests' layout, tt_sweep_report_json); 0 or EXIT_RUNTIME after a message. */
int tt_cli_exec_write_json(const tt_cli_exec_opts *o, const tt_cli_exec_row *rows, int nrows, const char *err,
                           int nranks, const char *transport, const char *start);

/* ---- stopped by SIGTERM/SIGINT (cli_exec_stop.c) ---- */
/* Before any thread is started: SIGTERM and SIGINT (unless ignored at start) blocked in every thread
 * and taken by one thread, which calls the callback set by tt_cli_exec_stop_on (NULL: a line on
 * stderr) and then ends the process by that signal (status 128+N). */
void tt_cli_exec_stop_init(void);
void tt_cli_exec_stop_on(void (*fn)(void *user, int sig), void *user);
const char *tt_cli_exec_signame(int sig); /* "SIGTERM", "SIGINT" */

/* ---- the nccl-tests drop-in (cli_perf.c) ---- */
/* argv[0] named all_reduce_perf, ...: nccl-tests' options translated into topo-exec's in place
 * (0, or the exit code after a message); -1: not a drop-in name, nothing changed. */
int tt_cli_perf_translate(int *argc, char ***argv);
const char *tt_cli_perf_prog(void); /* "all_reduce_perf", ...; NULL as topo-exec */
int tt_cli_perf_extra(void);        /* --topotune: topotune's own lines and columns too */
int tt_cli_perf_per_iter(int *skip); /* -I 1 (and -K's *skip): per-iteration timing; 0 as topo-exec */
const char *tt_cli_perf_note(void); /* a header comment line, or NULL */
/* The drop-in lowered -e from `from` to `to` bytes for memory: the header says so after the rank lines, and
 * the preamble and -J's config keep `from`, as nccl-tests (cli_exec_print.c). */
void tt_cli_exec_note_reduced(uint64_t from, uint64_t to);
/* The JSON "devices" of the run (kept by tt_cli_exec_note_device). */
void tt_cli_exec_note_device(int rank, int pid, const char *host, int device, const char *info);
void tt_cli_exec_note_device_hex(int rank, const char *hex); /* device_hex: a GPU's PCI address (after note_device) */
/* -J: whether PATH can be written (a temporary file created and removed beside it), checked before
 * anything is measured; 0 or EXIT_USAGE after a message. */
int tt_cli_exec_json_probe(const char *path);

/* ---- GPU mode (cli_gpu.c): -g N, --engine, --gpu-copy-bench ---- */
/* Without arguments: 1 and the GPU command line in argc/argv when a GPU is usable, else 0. */
int tt_cli_gpu_no_args(int *argc, char ***argv);
/* The GPU run of parsed options (o->gpu); the exit code. */
int tt_cli_gpu_run(tt_cli_exec_opts *o);

/* ---- the options every rank must share (cli_exec_agree.c): all that changes the collectives ---- */
enum { TT_CLI_MPI_NOPT = 29 };
extern const char *const tt_cli_mpi_opt_name[TT_CLI_MPI_NOPT];
void tt_cli_mpi_opt_values(const tt_cli_exec_opts *o, uint64_t v[TT_CLI_MPI_NOPT]);
void tt_cli_mpi_opt_text(int i, uint64_t v, char *b, size_t n);
/* What this process alone can add about compared option i (a file it cannot read, and why), or "". */
void tt_cli_mpi_opt_note(const tt_cli_exec_opts *o, int i, char *b, size_t n);
/* Rendezvous modes (not MPI): every rank's options against rank 0's and every rank's verdict rc, over
 * the communicator c before its first other collective; the agreed exit code (2: options differ, named
 * on rank 0 and the differing rank), *why the reason (for -J). */
int tt_cli_exec_agree(const tt_cli_exec_opts *o, tt_comm *c, int rc, char *why, size_t whyn);

/* ---- MPI launch mode (topo_exec_mpi.c; stand-ins without MPI) ---- */
extern const int tt_cli_have_mpi; /* built with MPI */
tt_status tt_cli_mpi_comm_init(tt_comm **c);     /* MPI_Init + tt_comm_init_mpi */
/* All ranks: options against rank 0's and every rank's verdict rc; the agreed exit code. */
int tt_cli_mpi_agree(const tt_cli_exec_opts *o, int me, int nranks, int rc);
void tt_cli_mpi_ident_of(int r, int *pid, const char **host); /* rank 0 after tt_cli_mpi_agree */
void tt_cli_mpi_finish(void);

#endif
