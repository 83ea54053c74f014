/*
 * cli_exec_print.c - topo-exec's output: the host sweep's header and closing lines (nccl-tests' text
 * of the library, tt_sweep_text_*, with topo-exec's plan lines) and the -J JSON file.
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


void tt_cli_exec_out(tt_strbuf *sb)
{
    if (sb->data)
        fwrite(sb->data, 1, sb->len, stdout);
    fflush(stdout);
    tt_strbuf_free(sb);
}

/* the ranks of the run, for -J's config.devices */
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
    devs[rank].hex[0] = '\0';
    if (rank >= ndevs) ndevs = rank + 1;
}

void tt_cli_exec_note_device_hex(int rank, const char *hex)
{
    if (rank >= 0 && rank < MAX_DEV) snprintf(devs[rank].hex, sizeof devs[rank].hex, "%s", hex ? hex : "");
}

static uint64_t reduced_from, reduced_to; /* -e lowered for memory (tt_cli_exec_note_reduced) */

void tt_cli_exec_note_reduced(uint64_t from, uint64_t to)
{
    reduced_from = from;
    reduced_to = to;
}

void tt_cli_exec_print_header(const tt_cli_exec_opts *o, int n, const char *transport, const int *pids,
                              const char *const *hosts)
{
    const char *perf = tt_cli_perf_prog();
    char info[96];
    snprintf(info, sizeof info, "host rank (%s)", transport);
    tt_sweep_opts so = tt_cli_exec_sweep_opts(o);
    if (reduced_to)
        so.maxb = reduced_from; /* nccl-tests' preamble has the -e asked for */
    tt_sweep_text_run run = {perf, tt_cli_perf_note(), NULL, perf && !o->mp ? o->host_ranks : 1, 0,
                             tt_cli_perf_extra(), o->json};
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_sweep_text_preamble(&sb, &run, &so);
    tt_sweep_text_devices(&sb);
    for (int r = 0; r < n; r++) { /* nccl-tests' layout; a host rank has no device and no PCI address */
        tt_cli_exec_note_device(r, pids[r], hosts[r], -1, info);
        tt_sweep_text_rank(&sb, r, pids[r], hosts[r], -1, perf ? "0000:00:00" : "host", perf ? info : transport);
    }
    if (reduced_to) /* after the rank lines, as nccl-tests */
        tt_strbuf_printf(&sb, "#\n# Reducing maxBytes to %llu due to memory limitation\n",
                         (unsigned long long)reduced_to);
    if (!perf || tt_cli_perf_extra())
        tt_strbuf_printf(&sb, "# plan: algo %s%s%s, proto %s%s%s, channels 1, chunk %zu bytes\n",
                         o->plan.algo == TT_ALGO_DEFAULT ? "default (AllReduce up to 64 KiB: recursive doubling on a "
                                                           "power-of-two rank count, else tree; ring above)"
                                                         : tt_algo_label(o->plan.algo),
                         o->algo_src ? " from " : "", o->algo_src ? o->algo_src : "",
                         o->plan.proto == TT_PROTO_DEFAULT ? "simple" : tt_proto_name(o->plan.proto),
                         o->proto_src ? " from " : "", o->proto_src ? o->proto_src : "", o->plan.chunk_bytes);
    if (o->table)
        tt_strbuf_printf(&sb, "# plan table: %s; per size it fills what --algo/--proto leave open\n", o->table_desc);
    if ((o->mp == 1 || o->mp == 2) && (!perf || tt_cli_perf_extra())) { /* a TCP rendezvous on a fixed port */
        char job[256];
        if (tt_job_identity(job, sizeof job))
            tt_strbuf_printf(&sb, "# job: %s\n", job);
        else
            tt_strbuf_printf(&sb, "# job: none (none of " TT_JOB_ID_VARS " is set%s%s): a leftover process of an "
                             "earlier run on this port could take a rank\n", job[0] ? "; only " : "", job);
    }
    tt_sweep_text_header(&sb, (tt_cli_exec_has_pred() ? TT_SWEEP_TEXT_PRED : 0) | (so.per_iter ? TT_SWEEP_TEXT_PER_ITER : 0));
    tt_cli_exec_out(&sb);
}

int tt_cli_exec_print_footer(const tt_cli_exec_opts *o, int oob, double avg_busbw, long table_fallbacks,
                             const char *err, int nrows)
{
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    const char *word;
    int bwfail = 0;
    if (!err) {
        bwfail = tt_sweep_min_bw_check(avg_busbw, &word) == 0;
        tt_sweep_text_footer(&sb, oob, avg_busbw, word);
        if (table_fallbacks >= 0)
            tt_strbuf_printf(&sb, "# plan table: %lu call(s) on this process ran a fallback (rules the host "
                             "transports cannot run: LL/LL128, several channels, an algorithm not possible here)\n",
                             (unsigned long)table_fallbacks);
    }
    tt_sweep_text_end(&sb, tt_cli_perf_prog() ? tt_cli_perf_prog() : tt_sweep_coll_name(o->coll), err, nrows);
    tt_cli_exec_out(&sb);
    return bwfail;
}

int tt_cli_exec_write_json(const tt_cli_exec_opts *o, const tt_cli_exec_row *rows, int nrows, const char *err,
                           int nranks, const char *transport, const char *start)
{
    tt_sweep_opts so = tt_cli_exec_sweep_opts(o);
    if (reduced_to)
        so.maxb = reduced_from; /* config.maximum_bytes: the -e asked for, as nccl-tests */
    int gpu = o->ngpus > 0, nenv;
    char **env = tt_cli_exec_env_entries(&nenv);
    const char *perf = tt_cli_perf_prog();
    /* average_bus_bandwidth.okay: NCCL_TESTS_MIN_BW's verdict on the rows written ("unchecked" without it) */
    const char *word;
    double avg;
    tt_sweep_summary(rows, nrows, &avg);
    int bw_check = tt_sweep_min_bw_check(avg, &word);
    /* experiment_name: nccl-tests writes "" for its sweeps */
    tt_sweep_report r = {&so, "topo-exec", perf ? "" : "topo-exec", tt_sweep_coll_name(o->coll), o->argc, o->argv,
                         (const char *const *)env, env ? nenv : 0, gpu || o->mp ? 1 : o->host_ranks,
                         gpu ? (o->mp ? 1 : o->ngpus) : 0, nranks, transport, devs, ndevs, start, rows, nrows, err,
                         !perf || tt_cli_perf_extra(), bw_check};
    char *txt = NULL;
    size_t len;
    tt_status st = tt_sweep_report_json(&r, &txt, &len);
    if (st == TT_OK)
        st = tt_cli_write_output(o->json, txt, len);
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
