/*
 * exec_measure_json.c - a sweep's results as nccl-tests' JSON (tt_sweep_report_json) and its
 * summary (tt_sweep_summary): what topo-exec -J writes, for any program that runs tt_sweep_*.
 */
#include <cjson/cJSON.h>
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

static cJSON *place_json(const tt_sweep_result *r, int p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "time", r->m.time_us[p]);
    cJSON_AddNumberToObject(o, "alg_bw", r->m.algbw[p]);
    cJSON_AddNumberToObject(o, "bus_bw", r->m.busbw[p]);
    if (r->m.wrong[p] >= 0)
        cJSON_AddNumberToObject(o, "nwrong", (double)r->m.wrong[p]);
    else
        cJSON_AddNullToObject(o, "nwrong");
    if (r->pred_us[p] > 0)
        cJSON_AddNumberToObject(o, "predicted_time", r->pred_us[p]);
    return o;
}

static void add_config(cJSON *j, const tt_sweep_report *r)
{
    const tt_sweep_opts *o = r->sweep;
    cJSON *cfg = cJSON_AddObjectToObject(j, "config");
    cJSON_AddNumberToObject(cfg, "nthreads", r->nthreads);
    cJSON_AddNumberToObject(cfg, "ngpus", r->ngpus);
    cJSON_AddStringToObject(cfg, "collective", r->collective);
    cJSON_AddNumberToObject(cfg, "nranks", r->nranks);
    cJSON_AddStringToObject(cfg, "transport", r->transport);
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
    cJSON_AddNumberToObject(cfg, "graph", 0);
    cJSON_AddNumberToObject(cfg, "blocking_collectives", 0);
    cJSON_AddNumberToObject(cfg, "per_iter_timing", 0);
    cJSON_AddNumberToObject(cfg, "per_iter_skip", 0);
    cJSON_AddNumberToObject(cfg, "parallel_init", 0);
    cJSON_AddStringToObject(cfg, "algo_requested", tt_algo_label(o->plan.algo));
    cJSON_AddStringToObject(cfg, "proto_requested", tt_proto_name(o->plan.proto));
    cJSON_AddNumberToObject(cfg, "chunk_bytes", (double)o->plan.chunk_bytes);
    cJSON *dv = cJSON_AddArrayToObject(cfg, "devices");
    for (int i = 0; i < r->ndevices && i < r->nranks; i++) {
        const tt_sweep_device *dev = &r->devices[i];
        cJSON *d = cJSON_CreateObject();
        cJSON_AddNumberToObject(d, "rank", i);
        cJSON_AddNumberToObject(d, "group", 0);
        cJSON_AddNumberToObject(d, "pid", dev->pid);
        cJSON_AddStringToObject(d, "hostname", dev->host);
        cJSON_AddNumberToObject(d, "device", dev->device);
        cJSON_AddStringToObject(d, "device_hex", "0000:00:00");
        cJSON_AddStringToObject(d, "device_info", dev->info);
        cJSON_AddItemToArray(dv, d);
    }
}

static void add_results(cJSON *j, const tt_sweep_report *r)
{
    const tt_sweep_opts *o = r->sweep;
    cJSON *res = cJSON_AddArrayToObject(j, "results");
    for (int i = 0; i < r->nrows; i++) {
        const tt_sweep_result *row = &r->rows[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "size", (double)row->m.bytes);
        cJSON_AddNumberToObject(x, "count", (double)row->m.count);
        cJSON_AddStringToObject(x, "type", tt_dtype_name(o->dtype));
        cJSON_AddStringToObject(x, "redop", (o->coll == TT_COLL_ALLGATHER || o->coll == TT_COLL_BROADCAST) ? "none"
                                                                                              : tt_redop_name(o->op));
        cJSON_AddNumberToObject(x, "root", (o->coll == TT_COLL_BROADCAST || o->coll == TT_COLL_REDUCE) ? o->root : -1);
        cJSON_AddStringToObject(x, "algo", row->algo);
        cJSON_AddItemToObject(x, "out_of_place", place_json(row, 0));
        cJSON_AddItemToObject(x, "in_place", place_json(row, 1));
        cJSON_AddNumberToObject(x, "actual_iterations", o->iters);
        cJSON_AddStringToObject(x, "experiment_name", r->experiment);
        cJSON_AddItemToArray(res, x);
    }
}

tt_status tt_sweep_report_json(const tt_sweep_report *r, char **text, size_t *len)
{
    if (!r || !r->sweep || !text || !len) return tt_error_set(TT_ERR_INVALID, "tt_sweep_report_json: NULL argument");
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "version", 3);
    cJSON_AddStringToObject(j, "tool", r->tool);
    cJSON_AddStringToObject(j, "topotune_version", TT_VERSION_STRING);
    cJSON_AddStringToObject(j, "start_time", r->start);
    cJSON *args = cJSON_AddArrayToObject(j, "args");
    for (int i = 0; i < r->argc; i++)
        cJSON_AddItemToArray(args, cJSON_CreateString(r->argv[i]));
    cJSON *env = cJSON_AddArrayToObject(j, "env");
    for (int i = 0; i < r->nenv; i++)
        cJSON_AddItemToArray(env, cJSON_CreateString(r->env[i]));
    cJSON_AddNullToObject(j, "nccl_version"); /* topotune's executor; the NCCL engine would name NCCL's */
    add_config(j, r);
    add_results(j, r);
    double avg;
    int oob = tt_sweep_summary(r->rows, r->nrows, &avg);
    cJSON *ob = cJSON_AddObjectToObject(j, "out_of_bounds");
    cJSON_AddNumberToObject(ob, "count", oob);
    cJSON_AddBoolToObject(ob, "okay", oob == 0);
    cJSON *ab = cJSON_AddObjectToObject(j, "average_bus_bandwidth");
    cJSON_AddNumberToObject(ab, "bandwidth", avg);
    cJSON_AddBoolToObject(ab, "okay", 1); /* no NCCL_TESTS_MIN_BW check here */
    cJSON *errs = cJSON_AddArrayToObject(j, "errors");
    if (r->error)
        cJSON_AddItemToArray(errs, cJSON_CreateString(r->error));
    char end[64];
    time_t t = time(NULL);
    strftime(end, sizeof end, "%Y-%m-%d %H:%M:%S", gmtime(&t));
    cJSON_AddStringToObject(j, "end_time", end);
    char *txt = cJSON_Print(j);
    cJSON_Delete(j);
    if (!txt) return tt_error_set(TT_ERR_NOMEM, "out of memory writing JSON");
    *len = strlen(txt);
    txt[*len] = '\n'; /* in place of the terminator: the buffer is written by length */
    *text = txt;
    return TT_OK;
}
