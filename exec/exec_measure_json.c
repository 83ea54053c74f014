/*
 * exec_measure_json.c - a sweep's results as nccl-tests' JSON (tt_sweep_report_json) and its
 * summary (tt_sweep_summary): what topo-exec -J writes, for any program that runs tt_sweep_*.
 *
 * The form is nccl-tests 2.19's (its schema version 3), value type for value type: one line
 * without spaces or a final newline; integers where it writes integers (version, nthreads, ...),
 * every measured figure a double with six decimals ("%lf": time, alg_bw, bus_bw, nwrong,
 * bandwidth), NaN as the string "nan"; booleans as the STRINGS "true" and "false"
 * (blocking_collectives, per_iter_timing, parallel_init, okay); results[].root a string of six
 * columns ("    -1"); average_bus_bandwidth.okay "unchecked" without NCCL_TESTS_MIN_BW.  Keys
 * in nccl-tests' order; topotune's own keys (tool, topotune_version, config.collective, ...,
 * results[].algo, predicted_time) follow nccl-tests' in their objects, and only with
 * tt_sweep_report.extra.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_measure_internal.h"

int tt_sweep_summary(const tt_sweep_result *rows, int nrows, double *avg_busbw)
{
    int oob = 0, nbw = 0;
    double bw = 0;
    for (int i = 0; i < nrows; i++)
        for (int p = 0; p < 2; p++) {
            oob += rows[i].m.wrong[p] > 0;
            bw += rows[i].m.busbw[p];
            nbw++;
        }
    *avg_busbw = nbw ? bw / nbw : 0;
    return oob;
}

int tt_sweep_min_bw_check(double avg_busbw, const char **word)
{
    static atomic_int warned; /* the footer and -J both ask: one warning a process */
    *word = "";
    const char *v = tt_setting("NCCL_TESTS_MIN_BW"); /* nccl-tests' own variable */
    if (!v || !*v)
        return -1;
    double min;
    if (tt_parse_double(v, &min) != TT_OK || min < 0) {
        tt_error_clear();
        if (!atomic_exchange(&warned, 1))
            TT_WARN("exec", "NCCL_TESTS_MIN_BW='%s' is not a bandwidth in GB/s: not checked", v);
        return -1;
    }
    /* nccl-tests' rule: the run fails below 0.9x the value asked for (shared/reference/peers.md) */
    int ok = avg_busbw >= 0.9 * min;
    *word = ok ? "OK" : "FAILED";
    return ok;
}

tt_status tt_sweep_result_keep(tt_sweep_result *r)
{
    for (int p = 0; p < 2; p++) {
        if (!r->m.iter_us[p]) continue;
        size_t n = (size_t)r->m.iter_ranks * (size_t)r->m.iter_n;
        double *c = malloc(n * sizeof *c + 1);
        if (!c) {
            r->m.iter_us[p] = NULL;
            return tt_error_set(TT_ERR_NOMEM, "out of memory keeping %zu iteration times", n);
        }
        memcpy(c, r->m.iter_us[p], n * sizeof *c);
        r->m.iter_us[p] = c;
    }
    return TT_OK;
}

void tt_sweep_result_release(tt_sweep_result *r)
{
    for (int p = 0; r && p < 2; p++) {
        free((void *)r->m.iter_us[p]);
        r->m.iter_us[p] = NULL;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the p-th percentile of n sorted values as nccl-tests picks it: the ceil(n p / 100)-th value */
static double percentile(const double *v, int n, int p)
{
    int i = (n * p + 99) / 100 - 1;
    return v[i < n - 1 ? (i < 0 ? 0 : i) : n - 1];
}

int exec_iter_stats_of(const tt_sweep_row *m, int place, int skip, double *max_us, exec_iter_stats *s)
{
    int n = m->iter_n, nr = m->iter_ranks;
    const double *t = m->iter_us[place];
    memset(s, 0, sizeof *s);
    if (!t || n < 1 || nr < 1) return -1;
    double *mx = malloc((size_t)n * sizeof *mx);
    if (!mx) return -1;
    for (int i = 0; i < n; i++) {
        mx[i] = t[i];
        for (int r = 1; r < nr; r++)
            if (t[(size_t)r * n + i] > mx[i]) mx[i] = t[(size_t)r * n + i];
    }
    if (max_us) memcpy(max_us, mx, (size_t)n * sizeof *mx);
    if (skip < 0 || skip >= n) skip = 0;
    int k = n - skip;
    double *v = mx + skip, sum = 0, var = 0;
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    for (int i = 0; i < k; i++) sum += v[i];
    s->avg = sum / k;
    for (int i = 0; i < k; i++) var += (v[i] - s->avg) * (v[i] - s->avg);
    s->min = v[0];
    s->max = v[k - 1];
    s->p50 = v[k / 2];
    s->p95 = percentile(v, k, 95);
    s->p99 = percentile(v, k, 99);
    s->stdev = sqrt(var / k);
    s->cv = s->avg > 0 ? 100 * s->stdev / s->avg : 0;
    free(mx);
    return 0;
}

/* nccl-tests' value writers: a double as "%lf" (NaN as the string "nan"; an infinity, which "%lf"
 * would make invalid JSON, as "inf"), an integer as "%d" / "%zu", a boolean as a string */
static void add_double(cJSON *o, const char *key, double v)
{
    char b[64];
    if (isnan(v)) {
        cJSON_AddStringToObject(o, key, "nan");
        return;
    }
    if (isinf(v)) {
        cJSON_AddStringToObject(o, key, v > 0 ? "inf" : "-inf");
        return;
    }
    snprintf(b, sizeof b, "%lf", v);
    cJSON_AddRawToObject(o, key, b);
}

static void add_int(cJSON *o, const char *key, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    cJSON_AddRawToObject(o, key, b);
}

static void add_bool(cJSON *o, const char *key, int v) { cJSON_AddStringToObject(o, key, v ? "true" : "false"); }

static cJSON *doubles(const double *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    char b[64];
    for (int i = 0; i < n; i++) {
        snprintf(b, sizeof b, "%lf", v[i]);
        cJSON_AddItemToArray(a, cJSON_CreateRaw(b));
    }
    return a;
}

/* -I: nccl-tests' "<placement>_per_iter" object: the statistics after the skipped iterations, every
 * iteration's time (the max over ranks) and, with several processes, each process's (the max over
 * its ranks) */
static void add_per_iter(cJSON *x, const tt_sweep_report *r, const tt_sweep_result *row, int p)
{
    exec_iter_stats s;
    int n = row->m.iter_n, skip = r->sweep->per_iter_skip;
    double *mx = malloc((size_t)(n > 0 ? n : 1) * sizeof *mx);
    if (!mx || exec_iter_stats_of(&row->m, p, skip, mx, &s) != 0) {
        free(mx);
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(x, p ? "in_place_per_iter" : "out_of_place_per_iter");
    add_int(o, "skipped_iterations", skip < n ? skip : 0);
    add_double(o, "min_us", s.min);
    add_double(o, "max_us", s.max);
    add_double(o, "avg_us", s.avg);
    add_double(o, "p50_us", s.p50);
    add_double(o, "p95_us", s.p95);
    add_double(o, "p99_us", s.p99);
    add_double(o, "stdev_us", s.stdev);
    add_double(o, "cv_pct", s.cv);
    cJSON_AddItemToObject(o, "times_us", doubles(mx, n));
    int per = r->nthreads > 0 ? r->nthreads : 1, nproc = row->m.iter_ranks / per;
    if (nproc > 1) {
        cJSON *rows = cJSON_AddArrayToObject(o, "per_process_max_times_us");
        const double *t = row->m.iter_us[p];
        for (int q = 0; q < nproc; q++) {
            for (int i = 0; i < n; i++) {
                mx[i] = t[(size_t)q * per * n + i];
                for (int k = 1; k < per; k++)
                    if (t[((size_t)q * per + k) * n + i] > mx[i]) mx[i] = t[((size_t)q * per + k) * n + i];
            }
            cJSON_AddItemToArray(rows, doubles(mx, n));
        }
    }
    free(mx);
}

static cJSON *place_json(const tt_sweep_report *r, const tt_sweep_result *row, int p)
{
    cJSON *o = cJSON_CreateObject();
    add_double(o, "time", row->m.time_us[p]);
    add_double(o, "alg_bw", row->m.algbw[p]);
    add_double(o, "bus_bw", row->m.busbw[p]);
    if (row->m.wrong[p] >= 0)
        add_double(o, "nwrong", (double)row->m.wrong[p]);
    else
        cJSON_AddNullToObject(o, "nwrong"); /* not checked */
    if (r->extra && row->pred_us[p] > 0)
        add_double(o, "predicted_time", row->pred_us[p]);
    return o;
}

static void add_config(cJSON *j, const tt_sweep_report *r)
{
    const tt_sweep_opts *o = r->sweep;
    cJSON *cfg = cJSON_AddObjectToObject(j, "config");
    add_int(cfg, "nthreads", r->nthreads);
    add_int(cfg, "ngpus", r->ngpus);
    add_int(cfg, "minimum_bytes", (long long)o->minb);
    add_int(cfg, "maximum_bytes", (long long)o->maxb);
    if (o->factor > 1)
        add_int(cfg, "step_factor", o->factor);
    else
        add_int(cfg, "step_bytes", (long long)o->stepb);
    add_int(cfg, "warmup_iters", o->warmup);
    add_int(cfg, "iterations", o->iters);
    add_int(cfg, "aggregated_iterations", o->agg);
    add_int(cfg, "validation", o->check);
    add_int(cfg, "graph", 0);
    add_bool(cfg, "blocking_collectives", 0);
    add_bool(cfg, "per_iter_timing", o->per_iter);
    add_int(cfg, "per_iter_skip", o->per_iter ? o->per_iter_skip : 0);
    add_bool(cfg, "parallel_init", 0);
    cJSON *dv = cJSON_AddArrayToObject(cfg, "devices");
    for (int i = 0; i < r->ndevices && i < r->nranks; i++) {
        const tt_sweep_device *dev = &r->devices[i];
        cJSON *d = cJSON_CreateObject();
        add_int(d, "rank", i);
        add_int(d, "group", 0);
        add_int(d, "pid", dev->pid);
        cJSON_AddStringToObject(d, "hostname", dev->host);
        add_int(d, "device", dev->device);
        cJSON_AddStringToObject(d, "device_hex", dev->hex[0] ? dev->hex : "0000:00:00");
        cJSON_AddStringToObject(d, "device_info", dev->info);
        cJSON_AddItemToArray(dv, d);
    }
    if (!r->extra)
        return;
    cJSON_AddStringToObject(cfg, "collective", r->collective);
    add_int(cfg, "nranks", r->nranks);
    cJSON_AddStringToObject(cfg, "transport", r->transport);
    cJSON_AddStringToObject(cfg, "algo_requested", tt_algo_label(o->plan.algo));
    cJSON_AddStringToObject(cfg, "proto_requested", tt_proto_name(o->plan.proto));
    add_int(cfg, "chunk_bytes", (long long)o->plan.chunk_bytes);
}

static void add_results(cJSON *j, const tt_sweep_report *r)
{
    const tt_sweep_opts *o = r->sweep;
    cJSON *res = cJSON_AddArrayToObject(j, "results");
    int rooted = o->coll == TT_COLL_BROADCAST || o->coll == TT_COLL_REDUCE;
    int no_op = o->coll == TT_COLL_ALLGATHER || o->coll == TT_COLL_BROADCAST;
    char root[16];
    snprintf(root, sizeof root, "%6d", rooted ? o->root : -1); /* the row's root column, as a string */
    for (int i = 0; i < r->nrows; i++) {
        const tt_sweep_result *row = &r->rows[i];
        cJSON *x = cJSON_CreateObject();
        add_int(x, "size", (long long)row->m.bytes);
        add_int(x, "count", (long long)row->m.count);
        cJSON_AddStringToObject(x, "type", tt_dtype_name(o->dtype));
        cJSON_AddStringToObject(x, "redop", no_op ? "none" : tt_redop_name(o->op));
        cJSON_AddStringToObject(x, "root", root);
        cJSON_AddItemToObject(x, "out_of_place", place_json(r, row, 0));
        if (o->per_iter) add_per_iter(x, r, row, 0);
        cJSON_AddItemToObject(x, "in_place", place_json(r, row, 1));
        if (o->per_iter) add_per_iter(x, r, row, 1);
        add_int(x, "actual_iterations", o->iters);
        cJSON_AddStringToObject(x, "experiment_name", r->experiment ? r->experiment : "");
        if (r->extra)
            cJSON_AddStringToObject(x, "algo", row->algo);
        cJSON_AddItemToArray(res, x);
    }
}

tt_status tt_sweep_report_json(const tt_sweep_report *r, char **text, size_t *len)
{
    if (!r || !r->sweep || !text || !len) return tt_error_set(TT_ERR_INVALID, "tt_sweep_report_json: NULL argument");
    cJSON *j = cJSON_CreateObject();
    add_int(j, "version", 3);
    cJSON_AddStringToObject(j, "start_time", r->start);
    cJSON *args = cJSON_AddArrayToObject(j, "args");
    for (int i = 0; i < r->argc; i++)
        cJSON_AddItemToArray(args, cJSON_CreateString(r->argv[i]));
    cJSON *env = cJSON_AddArrayToObject(j, "env");
    for (int i = 0; i < r->nenv; i++)
        cJSON_AddItemToArray(env, cJSON_CreateString(r->env[i]));
    add_int(j, "nccl_version", 0); /* NCCL's version code; 0: topotune's executor, no NCCL */
    add_config(j, r);
    add_results(j, r);
    double avg;
    int oob = tt_sweep_summary(r->rows, r->nrows, &avg);
    cJSON *ob = cJSON_AddObjectToObject(j, "out_of_bounds");
    add_int(ob, "count", oob);
    add_bool(ob, "okay", oob == 0);
    cJSON *ab = cJSON_AddObjectToObject(j, "average_bus_bandwidth");
    add_double(ab, "bandwidth", avg);
    if (r->bw_check < 0)
        cJSON_AddStringToObject(ab, "okay", "unchecked"); /* no NCCL_TESTS_MIN_BW */
    else
        add_bool(ab, "okay", r->bw_check);
    /* nccl-tests lists NCCL's last error, an empty string when there was none: [""] on success */
    cJSON *errs = cJSON_AddArrayToObject(j, "errors");
    cJSON_AddItemToArray(errs, cJSON_CreateString(r->error ? r->error : ""));
    char end[64];
    time_t t = time(NULL);
    strftime(end, sizeof end, "%Y-%m-%d %H:%M:%S", gmtime(&t));
    cJSON_AddStringToObject(j, "end_time", end);
    if (r->extra) {
        cJSON_AddStringToObject(j, "tool", r->tool);
        cJSON_AddStringToObject(j, "topotune_version", TT_VERSION_STRING);
    }
    char *txt = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!txt) return tt_error_set(TT_ERR_NOMEM, "out of memory writing JSON");
    *len = strlen(txt);
    *text = txt;
    return TT_OK;
}
