/*
 * tuner_plugin.h - the NCCL tuner plugin's ABI as we declare it (our own declarations, written
 * from the documented interface; no NCCL header is used; docs/tuner-plugin.md has the versions)
 * and the plugin's logging helpers (plugin/tuner_log.c).
 */
#ifndef TUNER_PLUGIN_H
#define TUNER_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

typedef enum { tpSuccess = 0, tpSystemError = 2, tpInternalError = 3, tpInvalidArgument = 4 } tp_result; /* ncclResult_t */
typedef enum { TP_LOG_NONE = 0, TP_LOG_VERSION = 1, TP_LOG_WARN = 2, TP_LOG_INFO = 3, TP_LOG_ABORT = 4, TP_LOG_TRACE = 5 } tp_level;
#define TP_SUBSYS_TUNING 0x40 /* NCCL_TUNING debug subsystem flag (our reading of NCCL's value) */
typedef void (*tp_logger)(tp_level level, unsigned long flags, const char *file, int line, const char *fmt, ...);

/* v5 and v6 init: the NVLink domains of the communicator (multi-node NVLink: fewer domains than nodes) */
typedef struct { int nNvlDomains, minRanksPerNvlDomain, maxRanksPerNvlDomain; } tp_nvl_domain_info;
typedef struct { /* v5 and v6 init: NCCL's model constants, in/out; we leave them as they are */
    double baseLatencies[7][3];
    double hwLatencies[3][7][3];
    double llMaxBws[4][3];
    double perChMaxRingLL128Bws[4][3];
    double perChMaxTreeLL128Bws[4][3];
    double perChMaxTreeBws[4][3];
    double perChMaxNVLSTreeBws[4][3];
} tp_constants;

typedef tp_result (*tp_init_v5_fn)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, tp_logger logFunction,
                                   tp_nvl_domain_info *nvlDomainInfo, tp_constants *constants);
typedef tp_result (*tp_init_v4_fn)(size_t nRanks, size_t nNodes, tp_logger logFunction, void **ctx);
typedef tp_result (*tp_get_coll_info_fn)(void *ctx, int collType, size_t nBytes, int numPipeOps, float **collCostTable,
                                         int numAlgo, int numProto, int regBuff, int *nChannels);
typedef tp_result (*tp_finalize_fn)(void *ctx);
typedef tp_result (*tp_get_chunk_size_fn)(void *ctx, int collType, size_t nBytes, int algo, int proto, int nChannels,
                                          size_t *chunkSize);

typedef struct {
    const char *name;
    tp_init_v5_fn init;
    tp_get_coll_info_fn getCollInfo;
    tp_finalize_fn finalize;
    tp_get_chunk_size_fn getChunkSize;
} tp_tuner_v6;
typedef struct {
    const char *name;
    tp_init_v5_fn init;
    tp_get_coll_info_fn getCollInfo;
    tp_finalize_fn finalize;
} tp_tuner_v5;
typedef struct {
    const char *name;
    tp_init_v4_fn init;
    tp_get_coll_info_fn getCollInfo;
    tp_finalize_fn destroy;
} tp_tuner_v4;

/* Log through NCCL's logger (nothing when it is NULL), under the TUNING subsystem. */
void tp_log(tp_logger f, tp_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A warning once per process for each distinct text; a repeat is logged at INFO level. */
void tp_warn_once(tp_logger f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
