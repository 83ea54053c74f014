/*
 * cli_predict.c - the prediction source of topo-exec (bin/cli_predict.h; docs/cli-topo-exec.md,
 * "Predicted time"): topo-exec prints the topotune model's time and its error next to every
 * measurement.
 *
 * Configured by three settings (common/common_settings.c: the environment, or topo-exec's options),
 * so a plain topo-exec run is unchanged:
 *   TOPOTUNE_PREDICT_TOPO=node.xml   topology of one node (topo-dump output); unset = no prediction
 *   TOPOTUNE_CALIBRATION=cal.json    model constants (topo-tune --calibrate output); optional
 *   TOPOTUNE_PREDICT_NODES=N         nodes the ranks are spread over (default 1)
 * The model is the topotune model, evaluated for the algorithm, protocol and channels the
 * executor ran (host ranks: one channel; GPU mode: the plan's channels; NCCL's own choice: the
 * model's best NCCL candidate), i.e. exactly as topo-tune --calibrate evaluates those rows.
 *
 * Linked into every tool (bin/cli_*.c); topo-exec shows its pred/err% columns only while
 * topo_exec_predict_enabled() says a topology is configured (topo-exec --predict FILE and
 * --calibration FILE set the two settings above with tt_setting_set).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_predict.h"
#include "tt_topo.h"
#include "tt_tune.h"
#include "cli_input.h"
#include "tt_xml.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int tried;
static tt_xml_doc *doc;
static tt_topo *topo;
static tt_cluster base;
static tt_model_params params;

static int setup(void)
{
    if (tried) return topo != NULL;
    tried = 1;
    const char *path = tt_setting("TOPOTUNE_PREDICT_TOPO");
    if (!path || !*path) return 0;
    tt_model_params_default(&params);
    const char *cal = tt_setting("TOPOTUNE_CALIBRATION");
    if ((cal && *cal && tt_model_params_load(cal, &params) != TT_OK) || tt_cli_read_topology(path, 0, &doc, NULL) != TT_OK ||
        tt_topo_from_xml(doc, NULL, &topo) != TT_OK || tt_topo_check_one_vendor(topo) != TT_OK ||
        tt_cluster_from_topo(topo, &base) != TT_OK) {
        fprintf(stderr, "topo-exec: prediction off: %s\n", tt_error_message());
        tt_topo_free(topo);
        topo = NULL;
        return 0;
    }
    const char *nn = tt_setting("TOPOTUNE_PREDICT_NODES");
    long long v;
    if (nn && *nn && tt_parse_ll(nn, &v) == TT_OK && v >= 1 && v <= 65536) base.nodes = (int)v;
    return 1;
}

int topo_exec_predict_us(const char *coll, size_t bytes, int nranks, const char *algo, const char *proto, double *us)
{
    /* host transports: one channel */
    return topo_exec_predict_plan_us(coll, bytes, nranks, algo, proto, 1, TT_RANKS_HOST, us);
}

/* The same for a run on `channels` channels (GPU mode: the plan's channel count; 0 = the
 * model's best for NCCL's own choice). */
int topo_exec_predict_plan_us(const char *coll, size_t bytes, int nranks, const char *algo, const char *proto,
                              int channels, int kind, double *us)
{
    tt_measurement m;
    memset(&m, 0, sizeof m);
    tt_coll c;
    tt_algo a;
    tt_proto p;
    if (!coll || tt_coll_parse(coll, &c) != TT_OK) return 1;
    m.coll = c;
    m.bytes = bytes;
    m.nranks = nranks;
    m.nodes = 0; /* the cluster's (TOPOTUNE_PREDICT_NODES) */
    m.algo = algo && strcmp(algo, "default") && tt_measure_algo_parse(algo, &a) == TT_OK ? (int)a : -1;
    m.proto = proto && strcmp(proto, "default") && tt_proto_parse(proto, &p) == TT_OK ? (int)p : -1;
    m.channels = channels > 0 ? channels : 0;
    m.exec_kind = kind; /* our executor's rows: the executor-shaped model (tt_calib_predict) */
    m.time_us = 1;
    snprintf(m.where, sizeof m.where, "topo-exec %s %zu bytes", coll, bytes);
    pthread_mutex_lock(&mu);
    int rc = 1;
    if (setup()) rc = tt_calib_predict(topo, &base, &params, &m, us) == TT_OK ? 0 : 1;
    pthread_mutex_unlock(&mu);
    return rc;
}

/* 1 when TOPOTUNE_PREDICT_TOPO names a usable topology (loaded once), else 0. */
int topo_exec_predict_enabled(void)
{
    pthread_mutex_lock(&mu);
    int ok = setup();
    pthread_mutex_unlock(&mu);
    return ok;
}
