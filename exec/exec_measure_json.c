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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tt_exec.h"

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
    add_bool(cfg, "per_iter_timing", 0);
    add_int(cfg, "per_iter_skip", 0);
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
        cJSON_AddStringToObject(d, "device_hex", "0000:00:00");
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
        cJSON_AddItemToObject(x, "in_place", place_json(r, row, 1));
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
    cJSON *errs = cJSON_AddArrayToObject(j, "errors");
    if (r->error)
        cJSON_AddItemToArray(errs, cJSON_CreateString(r->error));
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
