/*
 * cli_exec_print.c - topo-exec's output: nccl-tests' table (header, rows with time, algbw, busbw,
 * #wrong out of place and in place, the prediction columns), the summary and the -J JSON file.
 * Host and GPU modes print their rows here.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "cli_common.h"
#include "cli_exec.h"
#include "cli_predict.h"

const char *tt_cli_coll_name(tt_coll c)
{
    static const char *const n[TT_COLL_COUNT] = {
        [TT_COLL_ALLREDUCE] = "all_reduce", [TT_COLL_REDUCESCATTER] = "reduce_scatter",
        [TT_COLL_ALLGATHER] = "all_gather", [TT_COLL_BROADCAST] = "broadcast", [TT_COLL_REDUCE] = "reduce"};
    return (unsigned)c < TT_COLL_COUNT ? n[c] : "?";
}

/* nccl-tests' number fitting: %.2f, then fewer decimals, then exponent. */
void tt_cli_fnum(char *b, size_t n, int w, double v)
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

int tt_cli_exec_has_pred(void)
{
    static int cached = -1;
    if (cached < 0)
        cached = topo_exec_predict_enabled();
    return cached;
}

/* the ranks of the run, for the "# Rank" lines and -J's config.devices */
#define MAX_DEV 1024
static tt_sweep_device devs[MAX_DEV];
static int ndevs;

void tt_cli_exec_note_device(int rank, int pid, const char *host, int device, const char *info)
{
    if (rank < 0 || rank >= MAX_DEV) return;
    devs[rank].pid = pid;
    devs[rank].device = device;
    snprintf(devs[rank].host, sizeof devs[rank].host, "%s", host ? host : "-");
    snprintf(devs[rank].info, sizeof devs[rank].info, "%s", info ? info : "");
    if (rank >= ndevs) ndevs = rank + 1;
}

void tt_cli_perf_print_preamble(int nthreads, int ngpus, uint64_t minb, uint64_t maxb, uint64_t step, int factor,
                                int warmup, int iters, int agg, int check)
{
    /* nccl-tests' preamble, line for line, after one line saying what this is */
    printf("# topotune %s: %s with nccl-tests' options and output (topo-exec)\n", TT_VERSION_STRING,
           tt_cli_perf_prog());
    printf("# Collective test starting: %s\n", tt_cli_perf_prog());
    printf("# nThread %d nGpus %d minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d iters: %d agg iters: "
           "%d validation: %d graph: 0 unalign: 0\n",
           nthreads, ngpus, (unsigned long long)minb, (unsigned long long)maxb, (unsigned long long)step,
           factor ? "factor" : "bytes", warmup, iters, agg, check);
    if (tt_cli_perf_note()) printf("%s\n", tt_cli_perf_note());
}

void tt_cli_exec_print_header(const tt_cli_exec_opts *o, int n, const char *transport, const int *pids,
                              const char *const *hosts)
{
    const char *perf = tt_cli_perf_prog();
    char info[96];
    snprintf(info, sizeof info, "host rank (%s)", transport);
    for (int r = 0; r < n; r++)
        tt_cli_exec_note_device(r, pids[r], hosts[r], -1, info);
    if (perf) {
        tt_cli_perf_print_preamble(o->mp ? 1 : o->host_ranks, 0, o->minb, o->maxb,
                                   o->factor > 1 ? (uint64_t)o->factor : o->stepb, o->factor > 1, o->warmup, o->iters,
                                   o->agg, o->check);
    } else {
        printf("# topo-exec (topotune %s) collective: %s\n", TT_VERSION_STRING, tt_cli_coll_name(o->coll));
        printf("# nThread 1 nGpus 0 minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d iters: %d "
               "agg iters: %d validation: %d graph: 0\n",
               (unsigned long long)o->minb, (unsigned long long)o->maxb,
               (unsigned long long)(o->factor > 1 ? (uint64_t)o->factor : o->stepb), o->factor > 1 ? "factor" : "bytes",
               o->warmup, o->iters, o->agg, o->check);
    }
    printf("#\n# Using devices\n");
    for (int r = 0; r < n; r++) {
        if (perf) /* nccl-tests' layout; a host rank has no device and no PCI address */
            printf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:00:00] %s\n", r, pids[r], hosts[r], -1, info);
        else
            printf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [host] %s\n", r, pids[r], hosts[r], -1, transport);
    }
    if (!perf || tt_cli_perf_extra())
    printf("# plan: algo %s%s%s, proto %s%s%s, channels 1, chunk %zu bytes\n",
           o->plan.algo == TT_ALGO_DEFAULT ? "default (AllReduce up to 64 KiB: recursive doubling on a power-of-two "
                                             "rank count, else tree; ring above)"
                                           : tt_algo_label(o->plan.algo),
           o->algo_src ? " from " : "", o->algo_src ? o->algo_src : "",
           o->plan.proto == TT_PROTO_DEFAULT ? "simple" : tt_proto_name(o->plan.proto),
           o->proto_src ? " from " : "", o->proto_src ? o->proto_src : "", o->plan.chunk_bytes);
    if (o->table)
        printf("# plan table: %s; per size it fills what --algo/--proto leave open\n", o->table_desc);
    /* the three header lines of nccl-tests, column for column; with a
     * prediction source each placement gains "pred" and "err%" columns */
    int pw = tt_cli_exec_has_pred() ? 17 : 0; /* width of the prediction columns */
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

void tt_cli_exec_print_row(tt_coll coll, tt_dtype dtype, tt_redop op, int root, const tt_cli_exec_row *r, int pred,
                           const char *tail)
{
    char t[32], a[32], b[32];
    const char *redop = (coll == TT_COLL_ALLGATHER || coll == TT_COLL_BROADCAST) ? "none" : tt_redop_name(op);
    root = (coll == TT_COLL_BROADCAST || coll == TT_COLL_REDUCE) ? root : -1;
    printf("%12llu  %12zu  %8s  %6s  %6d", (unsigned long long)r->m.bytes, r->m.count, tt_dtype_name(dtype), redop,
           root);
    for (int p = 0; p < 2; p++) {
        tt_cli_fnum(t, sizeof t, 7, r->m.time_us[p]);
        tt_cli_fnum(a, sizeof a, 6, r->m.algbw[p]);
        tt_cli_fnum(b, sizeof b, 6, r->m.busbw[p]);
        if (r->m.wrong[p] < 0)
            printf("  %7s  %6s  %6s  %6s", t, a, b, "N/A");
        else
            printf("  %7s  %6s  %6s  %6lld", t, a, b, r->m.wrong[p]);
        if (pred) {
            if (r->pred_us[p] > 0 && r->m.time_us[p] > 0) {
                char pu[32], pe[32];
                tt_cli_fnum(pu, sizeof pu, 7, r->pred_us[p]);
                tt_cli_fnum(pe, sizeof pe, 6, 100.0 * (r->pred_us[p] - r->m.time_us[p]) / r->m.time_us[p]);
                printf("  %7s  %6s", pu, pe);
            } else {
                printf("  %7s  %6s", "N/A", "N/A");
            }
        }
    }
    printf("%s\n", tail ? tail : "");
    fflush(stdout);
}

void tt_cli_exec_print_footer(const tt_cli_exec_opts *o, int oob, double avg_busbw, long table_fallbacks,
                              const char *err, int nrows)
{
    if (!err) {
        printf("# Out of bounds values : %d %s\n", oob, oob ? "FAILED" : "OK");
        printf("# Avg bus bandwidth    : %g \n", avg_busbw);
        if (table_fallbacks >= 0)
            printf("# plan table: %lu call(s) on this process ran a fallback (rules the host transports cannot "
                   "run: LL/LL128, several channels, an algorithm not possible here)\n", (unsigned long)table_fallbacks);
        printf("#\n# Collective test concluded: %s\n", tt_cli_perf_prog() ? tt_cli_perf_prog() : tt_cli_coll_name(o->coll));
    } else {
        printf("# Collective test FAILED after %d size(s): %s\n", nrows, err);
    }
    fflush(stdout);
}

/* What topo-exec set itself, in order: options that are settings (tt_setting_set) and NCCL's
 * variables for NCCL (setenv).  -J's "env" lists them as if they were in the environment, at the
 * place setenv would have put them (replaced in place, or appended in the order they were set). */
static struct {
    const char *name;
    int added; /* not in the environment before: listed after it */
} set_log[16];
static int nset_log;

static int set_log_find(const char *name, size_t n)
{
    for (int i = 0; i < nset_log; i++)
        if (strlen(set_log[i].name) == n && !strncmp(set_log[i].name, name, n))
            return i;
    return -1;
}

static void set_log_note(const char *name)
{
    if (set_log_find(name, strlen(name)) >= 0 || nset_log == (int)(sizeof set_log / sizeof *set_log))
        return;
    set_log[nset_log].name = name;
    set_log[nset_log].added = getenv(name) == NULL;
    nset_log++;
}

void tt_cli_exec_set(const char *name, const char *value)
{
    set_log_note(name);
    tt_setting_set(name, value);
}

void tt_cli_exec_setenv_nccl(const char *name, const char *value)
{
    set_log_note(name);
    setenv(name, value, 1);
}

/* "NAME=value" of a variable topo-exec set (nothing when it is unset) */
static void add_env_entry(char **out, int *n, const char *name)
{
    const char *v = tt_setting(name);
    if (!v)
        return;
    size_t len = strlen(name) + strlen(v) + 2;
    if ((out[*n] = malloc(len)))
        snprintf(out[(*n)++], len, "%s=%s", name, v);
}

/* the variables that shape a run (nccl-tests keeps the whole environment; we keep these), with
 * what topo-exec set in place (set_log); *n entries, to free with free_env */
static char **env_entries(int *n)
{
    extern char **environ;
    static const char *const keep[] = {"NCCL_", "TOPOTUNE_", "SLURM_", "MASTER_", "RANK=", "WORLD_SIZE=",
                                       "LOCAL_RANK=", "OMPI_COMM_WORLD_", "PMI_", "CUDA_VISIBLE_DEVICES="};
    int cap = nset_log + 1;
    for (char **e = environ; e && *e; e++) cap++;
    char **out = calloc((size_t)cap, sizeof *out);
    *n = 0;
    for (char **e = environ; out && e && *e; e++) {
        size_t nl = strcspn(*e, "=");
        int li = set_log_find(*e, nl);
        if (li >= 0 && set_log[li].added)
            continue; /* set by topo-exec: in the order it set them, below */
        if (li >= 0) { /* a setting of the environment that an option replaced (or unset) */
            add_env_entry(out, n, set_log[li].name);
            continue;
        }
        for (size_t k = 0; k < sizeof keep / sizeof *keep; k++)
            if (!strncmp(*e, keep[k], strlen(keep[k]))) {
                out[(*n)++] = tt_strdup(*e);
                break;
            }
    }
    for (int i = 0; out && i < nset_log; i++)
        if (set_log[i].added)
            add_env_entry(out, n, set_log[i].name);
    return out;
}

int tt_cli_exec_write_json(const tt_cli_exec_opts *o, const tt_cli_exec_row *rows, int nrows, const char *err,
                           int nranks, const char *transport, const char *start)
{
    tt_sweep_opts so = tt_cli_exec_sweep_opts(o);
    int gpu = o->ngpus > 0, nenv;
    char **env = env_entries(&nenv);
    const char *perf = tt_cli_perf_prog();
    tt_sweep_report r = {&so, "topo-exec", perf ? perf : "topo-exec", tt_cli_coll_name(o->coll), o->argc, o->argv,
                         (const char *const *)env, env ? nenv : 0, gpu || o->mp ? 1 : o->host_ranks,
                         gpu ? (o->mp ? 1 : o->ngpus) : 0, nranks, transport, devs, ndevs, start, rows, nrows, err};
    char *txt = NULL;
    size_t len;
    tt_status st = tt_sweep_report_json(&r, &txt, &len);
    if (st == TT_OK)
        st = tt_cli_write_output(o->json, txt, len + 1);
    free(txt);
    for (int i = 0; env && i < nenv; i++) free(env[i]);
    free(env);
    if (st != TT_OK) {
        fprintf(stderr, "topo-exec: -J %s: %s\n", o->json, tt_error_message());
        return EXIT_RUNTIME;
    }
    return 0;
}

int tt_cli_exec_json_probe(const char *path)
{
    if (!path || !strcmp(path, "-"))
        return 0;
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return tt_cli_bad("-J %s: is a directory; nothing measured", path);
    /* the file is written as PATH.tmp.XXXXXX renamed over PATH (tt_write_file_atomic): try the same */
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return tt_cli_bad("-J: path too long");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return tt_cli_bad("-J %s: cannot write there (%s); checked before measuring, nothing measured", path,
                          strerror(errno));
    close(fd);
    unlink(tmp);
    return 0;
}
