/*
 * tuner_topotune.c - NCCL tuner plugin (libnccl-tuner-topotune.so) that applies a
 * topotune JSON table (topo-tune --format json) to NCCL's per-call cost table.
 *
 *   TOPOTUNE_TUNER_TABLE=/path/table.json   the table (unset: the plugin does nothing)
 *   NCCL_TUNER_PLUGIN=topotune               (or the absolute path of this .so)
 *
 * Exports ncclTunerPlugin_v6, _v5 and _v4 (NCCL probes v6, v5, v4, v3, v2 in that order).
 * Rules: the first entry of the call's collective whose [min_bytes, max_bytes] holds
 * nBytes sets that (algorithm, protocol) cost to 0.0 so NCCL picks it, and sets
 * nChannels; an entry NCCL marked unsupported (cost < 0, NCCL_ALGO_PROTO_IGNORE) is never
 * enabled - the call then keeps NCCL's own choice.  Entries with algorithms NCCL cannot
 * run (rd, rhd, hier) are dropped at load.  A table built for other nranks/nnodes than
 * the communicator is reported and not used.  Errors never fail the communicator: the
 * plugin logs and stays inactive.
 *
 * The declarations below are our own, written from the documented ABI (see
 * docs/tuner-plugin.md); no NCCL header is used.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_tune.h"

#define EXPORT __attribute__((visibility("default")))

typedef enum { tpSuccess = 0, tpSystemError = 2, tpInternalError = 3, tpInvalidArgument = 4 } tp_result; /* ncclResult_t */
typedef enum { TP_LOG_NONE = 0, TP_LOG_VERSION = 1, TP_LOG_WARN = 2, TP_LOG_INFO = 3, TP_LOG_ABORT = 4, TP_LOG_TRACE = 5 } tp_level;
#define TP_SUBSYS_TUNING 0x40 /* NCCL_TUNING debug subsystem flag */
typedef void (*tp_logger)(tp_level level, unsigned long flags, const char *file, int line, const char *fmt, ...);

typedef struct { int nNvlDomains, minRanksPerNvlDomain, maxRanksPerNvlDomain; } tp_nvl_domain_info; /* _v5/_v6 */
typedef struct {                                                                                   /* _v5/_v6 */
    double baseLatencies[7][3];
    double hwLatencies[3][7][3];
    double llMaxBws[4][3];
    double perChMaxRingLL128Bws[4][3];
    double perChMaxTreeLL128Bws[4][3];
    double perChMaxTreeBws[4][3];
    double perChMaxNVLSTreeBws[4][3];
} tp_constants;

typedef struct {
    const char *name;
    tp_result (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, tp_logger logFunction,
                      tp_nvl_domain_info *nvlDomainInfo, tp_constants *constants);
    tp_result (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps, float **collCostTable,
                             int numAlgo, int numProto, int regBuff, int *nChannels);
    tp_result (*finalize)(void *ctx);
    tp_result (*getChunkSize)(void *ctx, int collType, size_t nBytes, int algo, int proto, int nChannels,
                              size_t *chunkSize);
} tp_tuner_v6;

typedef struct {
    const char *name;
    tp_result (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, tp_logger logFunction,
                      tp_nvl_domain_info *nvlDomainInfo, tp_constants *constants);
    tp_result (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps, float **collCostTable,
                             int numAlgo, int numProto, int regBuff, int *nChannels);
    tp_result (*finalize)(void *ctx);
} tp_tuner_v5;

typedef struct {
    const char *name;
    tp_result (*init)(size_t nRanks, size_t nNodes, tp_logger logFunction, void **context);
    tp_result (*getCollInfo)(void *context, int collType, size_t nBytes, int numPipeOps, float **collCostTable,
                             int numAlgo, int numProto, int regBuff, int *nChannels);
    tp_result (*destroy)(void *context);
} tp_tuner_v4;

typedef struct {
    tp_logger log;
    int active;
    size_t nranks, nnodes;
    tt_tune_entry *e;
    int n;
    unsigned long applied, ignored;
} tp_ctx;

#define LOG(c, lvl, ...) do { if ((c)->log) (c)->log(lvl, TP_SUBSYS_TUNING, __FILE__, __LINE__, __VA_ARGS__); } while (0)

static tp_result do_init(void **ctxp, size_t nRanks, size_t nNodes, tp_logger logf)
{
    tp_ctx *c = calloc(1, sizeof(*c));
    if (!c) return tpSystemError;
    c->log = logf;
    c->nranks = nRanks;
    c->nnodes = nNodes;
    *ctxp = c;
    const char *path = getenv("TOPOTUNE_TUNER_TABLE");
    if (!path || !*path) {
        LOG(c, TP_LOG_INFO, "topotune tuner: TOPOTUNE_TUNER_TABLE not set, keeping NCCL's choices");
        return tpSuccess;
    }
    tt_tune_table ld;
    if (tt_tune_table_load(path, &ld) != TT_OK) {
        LOG(c, TP_LOG_WARN, "topotune tuner: %s; keeping NCCL's choices", tt_error_message());
        return tpSuccess;
    }
    if ((size_t)ld.ranks != nRanks || (size_t)ld.nodes != nNodes) {
        LOG(c, TP_LOG_WARN,
            "topotune tuner: %s was built for %d ranks on %d nodes but this communicator has %zu ranks on %zu nodes; table not used",
            path, ld.ranks, ld.nodes, nRanks, nNodes);
        tt_tune_table_free(&ld);
        return tpSuccess;
    }
    int kept = 0, dropped = 0;
    for (int i = 0; i < ld.n; i++) {
        if (ld.entries[i].algo >= TT_ALGO_NCCL_COUNT) { dropped++; continue; }
        ld.entries[kept++] = ld.entries[i];
    }
    if (dropped)
        LOG(c, TP_LOG_WARN, "topotune tuner: %d entries use algorithms NCCL cannot run (build the table with --nccl-only); those sizes keep NCCL's choice",
            dropped);
    c->e = ld.entries;
    c->n = kept;
    c->active = 1;
    LOG(c, TP_LOG_INFO, "topotune tuner: %d rules from %s (model %s) for %zu ranks on %zu nodes", kept, path, ld.model,
        nRanks, nNodes);
    return tpSuccess;
}

static tp_result init_v5(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, tp_logger logf,
                         tp_nvl_domain_info *nvl, tp_constants *constants)
{
    (void)commId; (void)nvl; (void)constants; /* constants are left as NCCL set them */
    return do_init(ctx, nRanks, nNodes, logf);
}

static tp_result init_v4(size_t nRanks, size_t nNodes, tp_logger logf, void **ctx)
{
    return do_init(ctx, nRanks, nNodes, logf);
}

static tp_result get_coll_info(void *ctxv, int collType, size_t nBytes, int numPipeOps, float **collCostTable,
                               int numAlgo, int numProto, int regBuff, int *nChannels)
{
    (void)numPipeOps; (void)regBuff;
    tp_ctx *c = ctxv;
    if (!c || !c->active || !collCostTable) return tpSuccess;
    float *table = (float *)collCostTable; /* float[numAlgo][numProto] */
    const tt_tune_entry *e = tt_tune_entry_find(c->e, c->n, (tt_coll)collType, nBytes);
    if (!e) return tpSuccess;
    if ((int)e->algo < 0 || (int)e->proto < 0 || (int)e->algo >= numAlgo || (int)e->proto >= numProto)
        return tpSuccess; /* "default" entries and cells NCCL's table lacks: NCCL decides */
    float *cell = &table[(int)e->algo * numProto + (int)e->proto];
    if (*cell < 0) { /* NCCL_ALGO_PROTO_IGNORE: unsupported or disabled here */
        c->ignored++;
        LOG(c, TP_LOG_TRACE, "topotune tuner: %s %zu B: %s/%s is unsupported here, NCCL decides",
            tt_coll_name(e->coll), nBytes, tt_algo_name(e->algo), tt_proto_name(e->proto));
        return tpSuccess;
    }
    *cell = 0.0f;
    if (nChannels && e->channels > 0) *nChannels = e->channels;
    c->applied++;
    return tpSuccess;
}

static tp_result finalize(void *ctxv)
{
    tp_ctx *c = ctxv;
    if (!c) return tpSuccess;
    if (c->active)
        LOG(c, TP_LOG_INFO, "topotune tuner: %lu calls tuned, %lu left to NCCL (unsupported entry)", c->applied, c->ignored);
    free(c->e);
    free(c);
    return tpSuccess;
}

static tp_result get_chunk_size(void *ctx, int collType, size_t nBytes, int algo, int proto, int nChannels,
                                size_t *chunkSize)
{
    (void)ctx; (void)collType; (void)nBytes; (void)algo; (void)proto; (void)nChannels; (void)chunkSize;
    return tpSuccess; /* NCCL's chunk size is kept */
}

EXPORT const tp_tuner_v6 ncclTunerPlugin_v6 = {"topotune", init_v5, get_coll_info, finalize, get_chunk_size};
EXPORT const tp_tuner_v5 ncclTunerPlugin_v5 = {"topotune", init_v5, get_coll_info, finalize};
EXPORT const tp_tuner_v4 ncclTunerPlugin_v4 = {"topotune", init_v4, get_coll_info, finalize};
