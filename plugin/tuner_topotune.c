/*
 * tuner_topotune.c - NCCL tuner plugin (libnccl-tuner-topotune.so): applies a topotune table,
 * a table set (one table per communicator shape) or NCCL's example-plugin CSV to NCCL's per-call
 * cost table.  Needs nothing but libc at run time (plugin/tuner_table.c reads the tables).
 *
 *   TOPOTUNE_TUNER_TABLE=FILE      topo-tune -f json (table or --shapes set) or a CSV
 *   NCCL_TUNER_CONFIG_FILE=FILE    NCCL's example-plugin CSV (used when TOPOTUNE_TUNER_TABLE is unset)
 *   TOPOTUNE_TUNER_FALLBACK=nccl|nearest   a shape the file lacks: NCCL decides (default) or the
 *                                  nearest shape's rules; either is warned about once per shape
 *   NCCL_TUNER_PLUGIN=topotune     (or the absolute path of this .so)
 *
 * Exports ncclTunerPlugin_v6, _v5 and _v4; docs/tuner-plugin.md says which NCCL takes which.
 * Rules: the first rule (file order) of the call's collective whose [min_bytes, max_bytes] holds
 * nBytes and whose numPipeOps/regBuff match sets that (algorithm, protocol) cost to 0.0 so NCCL
 * picks it, and sets nChannels when the rule has a count; a rule whose cell NCCL marked
 * unsupported (cost < 0) is skipped - an unsupported combination is never enabled.  Errors never
 * fail the communicator: the plugin logs and leaves the choice to NCCL.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tuner_plugin.h"
#include "tuner_table.h"

typedef struct {
    tp_logger log;
    uint64_t comm;
    int active;
    tp_rule *r;
    int n;
    unsigned long applied, ignored;
} tp_ctx;

/* The table is read once per process: the last file read (or refused) is kept, keyed by its path,
 * the CSV flag and the file's identity (device, inode, size, mtime, ctime from fstat of the open
 * file); a communicator init that finds the same file takes it from here.  The lock is held while
 * an init reads, chooses its shape and copies its rules, so inits on several threads are safe. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *path;
    int csv;
    tp_file id;
    tt_status st;  /* TT_OK: t holds the table; else err is the reason it was refused */
    char err[512];
    tp_table t;
} cache;

/* NCCL unloads the plugin (dlclose) when its last communicator is gone: the kept table goes too */
__attribute__((destructor)) static void cache_drop(void)
{
    pthread_mutex_lock(&cache_lock);
    tp_table_free(&cache.t);
    free(cache.path);
    cache.path = NULL;
    pthread_mutex_unlock(&cache_lock);
}

/* under cache_lock: the table for path, read when the cache does not hold this very file */
static tt_status cached_table(const char *path, int csv, tp_logger logf, const tp_table **out)
{
    tp_file f;
    tt_status st = tp_file_open(path, &f);
    if (st != TT_OK) return st; /* not cached: opening is cheap and the file may appear later */
    if (cache.path && cache.csv == csv && !strcmp(cache.path, path) && tp_file_same(&cache.id, &f)) {
        tp_file_close(&f);
        if (cache.st != TT_OK) return tt_error_set(cache.st, "%s", cache.err);
        *out = &cache.t;
        return TT_OK;
    }
    tp_table_free(&cache.t);
    free(cache.path);
    cache.path = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = tp_table_read(path, &f, csv, &cache.t);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tp_file_close(&f);
    cache.path = strdup(path);
    if (!cache.path) {
        tp_table_free(&cache.t);
        return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", path);
    }
    cache.csv = csv;
    cache.id = f;
    cache.st = st;
    if (st != TT_OK) {
        snprintf(cache.err, sizeof cache.err, "%s", tt_error_message());
        return st;
    }
    tp_log(logf, TP_LOG_INFO, "topotune tuner: read %s: %d rules, %lld bytes in %.1f ms (kept for this process)", path,
           cache.t.n, (long long)f.size, (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    *out = &cache.t;
    return TT_OK;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static void shape_list(const tp_table *t, char *buf, size_t cap)
{
    tp_shape sh[16];
    int n = tp_table_shapes(t, sh, 16);
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && i < 16 && len + 32 < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%dx%d", i ? ", " : "", sh[i].nranks, sh[i].nnodes);
    if (n > 16 && len + 8 < cap) snprintf(buf + len, cap - len, ", ...");
    if (n == 0) snprintf(buf, cap, "none");
}

/* the shape whose rules this communicator takes; 0: none (NCCL decides) */
static int pick_shape(tp_ctx *c, const tp_table *t, const char *path, int nranks, int nnodes,
                      const tp_nvl_domain_info *nvl, tp_shape *use)
{
    use->nranks = nranks;
    use->nnodes = nnodes;
    if (tp_table_has_shape(t, nranks, nnodes)) return 1;
    /* multi-node NVLink: NCCL counts hosts, topotune tables count NVLink domains as nodes */
    if (nvl && nvl->nNvlDomains >= 1 && nvl->nNvlDomains < nnodes && tp_table_has_shape(t, nranks, nvl->nNvlDomains)) {
        use->nnodes = nvl->nNvlDomains;
        tp_log(c->log, TP_LOG_INFO,
               "topotune tuner: %d ranks on %d nodes in %d NVLink domain(s): using the table for %d ranks on %d node(s)",
               nranks, nnodes, nvl->nNvlDomains, nranks, use->nnodes);
        return 1;
    }
    char have[512];
    shape_list(t, have, sizeof have);
    const char *fb = tt_setting("TOPOTUNE_TUNER_FALLBACK");
    if (fb && !strcmp(fb, "nearest")) {
        if (tp_table_nearest(t, nranks, nnodes, use)) {
            tp_warn_once(c->log,
                         "topotune tuner: %s has no table for %d ranks on %d nodes (it has %s); using the nearest, "
                         "%d ranks on %d node(s) (TOPOTUNE_TUNER_FALLBACK=nearest)",
                         path, nranks, nnodes, have, use->nranks, use->nnodes);
            return 1;
        }
    } else if (fb && *fb && strcmp(fb, "nccl")) {
        tp_warn_once(c->log, "topotune tuner: TOPOTUNE_TUNER_FALLBACK='%s' is not 'nccl' or 'nearest'; using 'nccl'", fb);
    }
    tp_warn_once(c->log,
                 "topotune tuner: %s has no table for %d ranks on %d nodes (it has %s); NCCL decides for such "
                 "communicators (TOPOTUNE_TUNER_FALLBACK=nearest uses the nearest shape)",
                 path, nranks, nnodes, have);
    return 0;
}

static tp_result do_init(void **ctxp, uint64_t comm, size_t nRanks, size_t nNodes, tp_logger logf,
                         const tp_nvl_domain_info *nvl)
{
    tp_ctx *c = calloc(1, sizeof *c);
    if (!c) return tpSystemError;
    c->log = logf;
    c->comm = comm;
    *ctxp = c;
    if (nvl)
        tp_log(logf, TP_LOG_INFO, "topotune tuner: communicator of %zu ranks on %zu nodes: %d NVLink domain(s), %d..%d ranks each",
               nRanks, nNodes, nvl->nNvlDomains, nvl->minRanksPerNvlDomain, nvl->maxRanksPerNvlDomain);
    const char *path = tt_setting("TOPOTUNE_TUNER_TABLE"), *cfg = tt_setting("NCCL_TUNER_CONFIG_FILE");
    int csv = 0;
    if (path && *path) {
        csv = ends_with(path, ".csv") || ends_with(path, ".conf");
        if (cfg && *cfg)
            tp_warn_once(logf, "topotune tuner: TOPOTUNE_TUNER_TABLE is set: NCCL_TUNER_CONFIG_FILE=%s is not read", cfg);
    } else if (cfg && *cfg) {
        path = cfg;
        csv = 1;
    } else {
        tp_log(logf, TP_LOG_INFO, "topotune tuner: neither TOPOTUNE_TUNER_TABLE nor NCCL_TUNER_CONFIG_FILE is set, keeping NCCL's choices");
        return tpSuccess;
    }
    if (nRanks > 100000000 || nNodes > 1000000 || nNodes == 0) {
        tp_warn_once(logf, "topotune tuner: a communicator of %zu ranks on %zu nodes is out of range; keeping NCCL's choices",
                     nRanks, nNodes);
        return tpSuccess;
    }
    const tp_table *tp = NULL;
    pthread_mutex_lock(&cache_lock);
    if (cached_table(path, csv, logf, &tp) != TT_OK) {
        tp_warn_once(logf, "topotune tuner: %s; keeping NCCL's choices", tt_error_message());
        pthread_mutex_unlock(&cache_lock);
        return tpSuccess;
    }
    const tp_table *t = tp;
    if (t->dropped)
        tp_warn_once(logf, "topotune tuner: %s: %d entries use algorithms NCCL cannot run (build the table with --nccl-only); "
                     "those sizes keep NCCL's choice", path, t->dropped);
    tp_shape use;
    if (pick_shape(c, t, path, (int)nRanks, (int)nNodes, nvl, &use)) {
        if (tp_table_select(t, use.nranks, use.nnodes, &c->r, &c->n) != TT_OK) {
            tp_warn_once(logf, "topotune tuner: %s; keeping NCCL's choices", tt_error_message());
        } else {
            c->active = 1;
            tp_log(logf, TP_LOG_INFO, "topotune tuner: %d rules from %s (%s%s) for %zu ranks on %zu nodes (shape %dx%d)",
                   c->n, path, t->csv ? "CSV" : "model ", t->csv ? "" : (t->model[0] ? t->model : "?"), nRanks, nNodes,
                   use.nranks, use.nnodes);
        }
    }
    pthread_mutex_unlock(&cache_lock);
    return tpSuccess;
}

static tp_result init_v5(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, tp_logger logf,
                         tp_nvl_domain_info *nvl, tp_constants *constants)
{
    (void)constants; /* NCCL's constants are left as NCCL set them */
    return do_init(ctx, commId, nRanks, nNodes, logf, nvl);
}

static tp_result init_v4(size_t nRanks, size_t nNodes, tp_logger logf, void **ctx)
{
    return do_init(ctx, 0, nRanks, nNodes, logf, NULL);
}

static tp_result get_coll_info(void *ctxv, int collType, size_t nBytes, int numPipeOps, float **collCostTable,
                               int numAlgo, int numProto, int regBuff, int *nChannels)
{
    tp_ctx *c = ctxv;
    if (!c || !c->active || !collCostTable) return tpSuccess;
    float *table = (float *)collCostTable; /* float[numAlgo][numProto] */
    for (int i = 0; i < c->n; i++) {
        const tp_rule *r = &c->r[i];
        if ((int)r->coll != collType || nBytes < r->min_bytes || nBytes > r->max_bytes) continue;
        if ((r->pipeops >= 0 && r->pipeops != numPipeOps) || (r->regbuff >= 0 && r->regbuff != regBuff)) continue;
        if ((int)r->algo >= numAlgo || (int)r->proto >= numProto) continue; /* a cell NCCL's table lacks */
        float *cell = &table[(int)r->algo * numProto + (int)r->proto];
        if (*cell < 0) { /* NCCL_ALGO_PROTO_IGNORE: unsupported or disabled here */
            c->ignored++;
            tp_log(c->log, TP_LOG_TRACE, "topotune tuner: %s %zu B: %s/%s (line %d) is unsupported here, skipped",
                   tt_coll_name(r->coll), nBytes, tt_algo_name(r->algo), tt_proto_name(r->proto), r->line);
            continue;
        }
        *cell = 0.0f;
        if (nChannels && r->channels > 0) *nChannels = r->channels;
        c->applied++;
        return tpSuccess;
    }
    return tpSuccess;
}

static tp_result finalize(void *ctxv)
{
    tp_ctx *c = ctxv;
    if (!c) return tpSuccess;
    if (c->active)
        tp_log(c->log, TP_LOG_INFO, "topotune tuner: %lu calls tuned, %lu rules skipped (unsupported here)", c->applied,
               c->ignored);
    free(c->r);
    free(c);
    return tpSuccess;
}

static tp_result get_chunk_size(void *ctx, int collType, size_t nBytes, int algo, int proto, int nChannels,
                                size_t *chunkSize)
{
    (void)ctx; (void)collType; (void)nBytes; (void)algo; (void)proto; (void)nChannels; (void)chunkSize;
    return tpSuccess; /* NCCL's chunk size is kept */
}

/* the only exported symbols (plugin/tuner.map) */
const tp_tuner_v6 ncclTunerPlugin_v6 = {"topotune", init_v5, get_coll_info, finalize, get_chunk_size};
const tp_tuner_v5 ncclTunerPlugin_v5 = {"topotune", init_v5, get_coll_info, finalize};
const tp_tuner_v4 ncclTunerPlugin_v4 = {"topotune", init_v4, get_coll_info, finalize};
