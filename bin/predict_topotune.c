/*
 * predict_topotune.c - the prediction source topo-exec looks up as a weak symbol
 * (docs/cli-topo-exec.md, "Predicted time (hook)"): with it linked, topo-exec prints the
 * topotune model's time and its error next to every measurement.
 *
 * Configured by the environment, so a plain topo-exec run is unchanged:
 *   TOPOTUNE_PREDICT_TOPO=node.xml   topology of one node (topo-dump output); unset = no prediction
 *   TOPOTUNE_CALIBRATION=cal.json    model constants (topo-tune --calibrate output); optional
 *   TOPOTUNE_PREDICT_NODES=N         nodes the ranks are spread over (default 1)
 * The model is the topotune model, evaluated for the algorithm and protocol the executor ran
 * on one channel per rank when the protocol is simple on host transports (what topo-exec's
 * host ranks do), i.e. exactly as topo-tune --calibrate evaluates topo-exec rows.
 *
 * Not linked by default (the name is not bin/cli_*.c on purpose): topo-exec switches its
 * pred/err% columns on as soon as the symbol exists, which would change its nccl-tests table
 * for everyone.  Build a predicting topo-exec by hand (docs/calibration.md section 5):
 *   cc -std=gnu11 -D_GNU_SOURCE -pthread -Icommon -Ixml -Itopo -Itune -Iexec bin/topo-exec.c  *      bin/predict_topotune.c build/lib/libtopotune.a <the library's link flags> -o topo-exec-pred
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_topo.h"
#include "tt_tune.h"
#include "tt_xml.h"

int topo_exec_predict_us(const char *coll, size_t bytes, int nranks, const char *algo, const char *proto, double *us);

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
    const char *path = getenv("TOPOTUNE_PREDICT_TOPO");
    if (!path || !*path) return 0;
    tt_model_params_default(&params);
    const char *cal = getenv("TOPOTUNE_CALIBRATION");
    if ((cal && *cal && tt_model_params_load(cal, &params) != TT_OK) || tt_xml_read_file(path, NULL, &doc) != TT_OK ||
        tt_topo_from_xml(doc, NULL, &topo) != TT_OK || tt_cluster_from_topo(topo, &base) != TT_OK) {
        fprintf(stderr, "topo-exec: prediction off: %s\n", tt_error_message());
        tt_topo_free(topo);
        topo = NULL;
        return 0;
    }
    const char *nn = getenv("TOPOTUNE_PREDICT_NODES");
    long long v;
    if (nn && *nn && tt_parse_ll(nn, &v) == TT_OK && v >= 1 && v <= 65536) base.nodes = (int)v;
    return 1;
}

int topo_exec_predict_us(const char *coll, size_t bytes, int nranks, const char *algo, const char *proto, double *us)
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
    m.channels = 1; /* host transports run one channel (tt_exec.h) */
    m.time_us = 1;
    snprintf(m.where, sizeof m.where, "topo-exec %s %zu bytes", coll, bytes);
    pthread_mutex_lock(&mu);
    int rc = 1;
    if (setup()) rc = tt_calib_predict(topo, &base, &params, &m, us) == TT_OK ? 0 : 1;
    pthread_mutex_unlock(&mu);
    return rc;
}
