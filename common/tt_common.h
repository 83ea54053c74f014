/*
 * tt_common.h - status codes, error messages and logging shared by every
 * topotune module.
 *
 * Error model: every library call that can fail returns a tt_status.  On
 * failure it also records a human-readable message (naming file:line,
 * attribute, rank, step ... whatever identifies the problem) that the caller
 * fetches with tt_error_message().  The message is thread-local; the library
 * never calls exit().
 *
 * Logging: TOPOTUNE_DEBUG=WARN|INFO|TRACE selects the level (default WARN),
 * TOPOTUNE_DEBUG_SUBSYS=xml,topo,... restricts subsystems, and
 * TOPOTUNE_DEBUG_FILE=path sends the log to a file instead of stderr.
 */
#ifndef TT_COMMON_H
#define TT_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TT_VERSION_STRING "0.1.0"

typedef enum {
    TT_OK = 0,
    TT_ERR_INVALID = 1,     /* bad argument or inconsistent input */
    TT_ERR_PARSE = 2,       /* malformed input text (XML, JSON, numbers) */
    TT_ERR_IO = 3,          /* file could not be read or written */
    TT_ERR_NOMEM = 4,       /* allocation failed */
    TT_ERR_LIMIT = 5,       /* input exceeds a documented bound */
    TT_ERR_UNSUPPORTED = 6, /* feature not built in or not available here */
    TT_ERR_NOT_FOUND = 7,   /* named object does not exist */
    TT_ERR_SYSTEM = 8,      /* OS / driver call failed */
    TT_ERR_TIMEOUT = 9,     /* a deadline passed */
    TT_ERR_REMOTE = 10,     /* a peer rank failed or disappeared */
    TT_ERR_MISMATCH = 11,   /* ranks disagree (count, type, op, ...) */
    TT_ERR_INTERNAL = 12    /* a bug in topotune */
} tt_status;

/* Record an error message for this thread and return `code` (so callers can
 * write `return tt_error_set(TT_ERR_PARSE, "%s:%d: ...", f, l);`). */
tt_status tt_error_set(tt_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prefix the current message with more context: "ctx: old message". */
tt_status tt_error_prefix(tt_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *tt_error_message(void);   /* "" when none */
void tt_error_clear(void);
const char *tt_status_name(tt_status code);

typedef enum {
    TT_LOG_NONE = 0,
    TT_LOG_WARN = 1,
    TT_LOG_INFO = 2,
    TT_LOG_TRACE = 3
} tt_log_level;

int tt_log_enabled(tt_log_level level, const char *subsys);
void tt_log(tt_log_level level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Re-read the TOPOTUNE_DEBUG* variables (tests use this). */
void tt_log_reinit(void);
/* No log lines for the rest of this process unless the user set TOPOTUNE_DEBUG (a front end's quiet
 * mode: the offline hwloc scan logs per probe). */
void tt_log_quiet(void);

#define TT_WARN(subsys, ...) tt_log(TT_LOG_WARN, subsys, __VA_ARGS__)
#define TT_INFO(subsys, ...) tt_log(TT_LOG_INFO, subsys, __VA_ARGS__)
#define TT_TRACE(subsys, ...) tt_log(TT_LOG_TRACE, subsys, __VA_ARGS__)

/* Growable string buffer used by every writer. */
typedef struct {
    char *data;
    size_t len;
    size_t cap;
    int failed; /* set once an allocation failed; later appends are no-ops */
} tt_strbuf;

void tt_strbuf_init(tt_strbuf *sb);
void tt_strbuf_free(tt_strbuf *sb);
void tt_strbuf_append(tt_strbuf *sb, const char *s);
void tt_strbuf_appendn(tt_strbuf *sb, const char *s, size_t n);
void tt_strbuf_printf(tt_strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append cJSON_Print() output with 2-space indentation instead of tabs, and a newline. */
void tt_strbuf_append_json(tt_strbuf *sb, const char *cjson_text);
/* TT_OK, or TT_ERR_NOMEM (with message) if any append failed. */
tt_status tt_strbuf_status(const tt_strbuf *sb);
/* Hand the buffer over (caller frees); the strbuf is reset. */
char *tt_strbuf_steal(tt_strbuf *sb, size_t *len);

/* Write `len` bytes to `path` atomically (temp file + rename), or to stdout
 * when path is NULL or "-".  A failed write leaves any old file intact. */
tt_status tt_write_file_atomic(const char *path, const char *data, size_t len);
/* Read a whole file, refusing files above max_bytes (0 = no bound). The
 * buffer is NUL-terminated. */
tt_status tt_read_file(const char *path, size_t max_bytes, char **data, size_t *len);

/* Strict number parsing: the whole string must be a number, no overflow.
 * Accepts 0x hex for integers. */
tt_status tt_parse_ll(const char *s, long long *out);
tt_status tt_parse_double(const char *s, double *out);
/* Median of v[0..n-1] (sorts v in place); 0 when n is 0. */
double tt_median(double *v, size_t n);
/* Monotonic clock (CLOCK_MONOTONIC): seconds, and nanoseconds, since an arbitrary start. */
double tt_now_s(void);
int64_t tt_now_ns(void);
/* Sizes with optional K/M/G/T suffix (powers of 1024) and optional trailing B. */
tt_status tt_parse_size(const char *s, uint64_t *out);

char *tt_strdup(const char *s); /* NULL-safe; NULL on OOM */

/* ---- Settings: the TOPOTUNE_* environment variables (common_settings.c) ----
 * The library reads its environment only through tt_setting(); every documented TOPOTUNE_*
 * variable has a row in tt_settings_table() (name, type, range, default; docs/ lists the same
 * names).  A front end turns its options into settings with tt_setting_set(), for this process
 * only (the environment is left alone). */
typedef enum {
    TT_SETTING_INT,       /* an integer lo..hi */
    TT_SETTING_SIZE,      /* a size lo..hi with K/M/G suffixes */
    TT_SETTING_SIZE_POW2, /* the same, a power of two */
    TT_SETTING_CHOICE,    /* one of the words of `accepted` ("a, b or c") */
    TT_SETTING_TEXT,      /* parsed by its owner, with the owner's messages */
    TT_SETTING_TEST       /* read by the tests only (test hooks), never by the library */
} tt_setting_type;
typedef struct {
    const char *name;
    tt_setting_type type;
    long long lo, hi;     /* INT, SIZE, SIZE_POW2 */
    const char *accepted; /* what a value must be, as messages say it */
    const char *def;      /* the default, as the documentation says it */
    const char *owner;    /* the module that uses it: common, topo, exec, bin, plugin, tests */
} tt_setting_info;
const tt_setting_info *tt_settings_table(size_t *n);
const tt_setting_info *tt_setting_lookup(const char *name); /* NULL: not a TOPOTUNE_* setting */
/* The value of a setting: tt_setting_set's for this process, else the environment's; NULL when
 * unset.  Also reads other programs' variables (RANK, MASTER_ADDR, SLURM_*: their interface). */
const char *tt_setting(const char *name);
/* Set (value) or unset (NULL) a TOPOTUNE_* setting for this process. */
tt_status tt_setting_set(const char *name, const char *value);
/* Every typed setting (INT, SIZE, SIZE_POW2, CHOICE) that is set and not empty holds an accepted
 * value; else TT_ERR_INVALID with "NAME='value': must be ... (unset it for the default)". */
tt_status tt_settings_check(void);

/* ---- SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) (common_sha256.c) ----
 * For the job authentication of the rendezvous (exec/exec_auth.c).  Contexts may be reused after
 * *_init; *_final wipes them. */
#define TT_SHA256_LEN 32
typedef struct {
    uint32_t h[8];
    uint64_t len; /* bytes hashed so far */
    unsigned char buf[64];
    size_t nbuf;
} tt_sha256_ctx;
typedef struct {
    tt_sha256_ctx inner, outer;
} tt_hmac_sha256_ctx;
void tt_sha256_init(tt_sha256_ctx *c);
void tt_sha256_update(tt_sha256_ctx *c, const void *data, size_t n);
void tt_sha256_final(tt_sha256_ctx *c, unsigned char out[TT_SHA256_LEN]);
void tt_sha256(const void *data, size_t n, unsigned char out[TT_SHA256_LEN]);
void tt_hmac_sha256_init(tt_hmac_sha256_ctx *c, const void *key, size_t keylen);
void tt_hmac_sha256_update(tt_hmac_sha256_ctx *c, const void *data, size_t n);
void tt_hmac_sha256_final(tt_hmac_sha256_ctx *c, unsigned char out[TT_SHA256_LEN]);
void tt_hmac_sha256(const void *key, size_t keylen, const void *data, size_t n, unsigned char out[TT_SHA256_LEN]);
/* 1 when the n bytes of a and b are equal, in a time that does not depend on where they differ */
int tt_mem_equal_ct(const void *a, const void *b, size_t n);
/* zeroes n bytes in a way the compiler does not drop (secrets after use) */
void tt_memzero(void *p, size_t n);

/* ---- Collective vocabulary shared by tune/ (model, tables) and exec/ (executor) ----
 * Numbering follows NCCL (ncclFunc_t order, NCCL_ALGO_*, NCCL_PROTO_*), so tables and the
 * tuner plugin map 1:1 onto NCCL's ids.  *_DEFAULT (-1) means "let the component choose". */
typedef enum {
    TT_COLL_BROADCAST = 0,
    TT_COLL_REDUCE = 1,
    TT_COLL_ALLGATHER = 2,
    TT_COLL_REDUCESCATTER = 3,
    TT_COLL_ALLREDUCE = 4,
    TT_COLL_COUNT = 5
} tt_coll;

/* 0..6 are NCCL's algorithm ids; 7..9 exist only in topotune (model and executor). */
typedef enum {
    TT_ALGO_DEFAULT = -1,
    TT_ALGO_TREE = 0,
    TT_ALGO_RING = 1,
    TT_ALGO_COLLNET_DIRECT = 2,
    TT_ALGO_COLLNET_CHAIN = 3,
    TT_ALGO_NVLS = 4,
    TT_ALGO_NVLS_TREE = 5,
    TT_ALGO_PAT = 6,
    TT_ALGO_RHD = 7,  /* recursive halving-doubling (Rabenseifner) */
    TT_ALGO_RD = 8,   /* recursive doubling */
    TT_ALGO_HIER = 9, /* hierarchical: intra-node reduce, inter-node all-reduce, intra-node broadcast */
    TT_ALGO_COUNT = 10
} tt_algo;
#define TT_ALGO_NCCL_COUNT 7

typedef enum {
    TT_PROTO_DEFAULT = -1,
    TT_PROTO_LL = 0,
    TT_PROTO_LL128 = 1,
    TT_PROTO_SIMPLE = 2,
    TT_PROTO_COUNT = 3
} tt_proto;

/* ---- One tuning-table entry: written by tune/ (model or measured tables, JSON and CSV),
 * read back by tt_tune_table_load, applied by exec/ (tt_comm_set_plan_table and the GPU
 * communicator's twin) and by the NCCL tuner plugin.  One type on the whole road. */
typedef struct {
    tt_coll coll;
    uint64_t min_bytes, max_bytes;   /* inclusive range of sizes sharing this choice */
    tt_algo algo;
    tt_proto proto;
    int channels;                    /* channels at min_bytes; 0 = not set (the runner chooses) */
    double predicted_us;             /* at min_bytes (0 when the table does not say) */
    double algbw, busbw;             /* at min_bytes */
} tt_tune_entry;
/* First entry of collective `coll` whose [min_bytes, max_bytes] holds `bytes`; NULL if none. */
const tt_tune_entry *tt_tune_entry_find(const tt_tune_entry *entries, int n, tt_coll coll, uint64_t bytes);

/* ---- The algorithm registry (common_algos.c): one row per tt_algo, in enum order, walked by the
 * names and parsers below, the executors' capability query (exec/exec_caps.c), their default plan
 * (exec/exec_coll.c, exec/exec_cuda_comm.cu) and the models' copy of it (tune/tune_model_exec.c).
 * The schedules that run a row live in exec/exec_algos.c, its cost hooks in tune/tune_algos.c,
 * both keyed by the same id (docs/contributing.md, "Adding an algorithm"). */
#define TT_COLL_BIT(c) (1u << (c))
#define TT_COLLS_ALL ((1u << TT_COLL_COUNT) - 1)
/* the executors a row describes (the values of tt_exec_mode in exec/tt_exec.h) */
enum { TT_RUN_HOST = 0, TT_RUN_GPU = 1, TT_RUN_COUNT = 2 };
/* What one executor runs of an algorithm. */
typedef struct {
    unsigned colls; /* collectives it runs (TT_COLL_BIT per tt_coll); 0: the executor does not run it */
    int pow2;       /* needs a power-of-two rank count */
    int order;      /* place in the executor's lists (tt_exec_algos, "available: ..."), 1-based */
} tt_algo_run;
typedef struct {
    tt_algo algo;
    const char *name;          /* tt_algo_name: "tree", ..., "rhd" */
    const char *label;         /* tt_algo_label: the name, or a longer one ("halving-doubling") */
    tt_algo_run run[TT_RUN_COUNT];
    /* default-plan rule (tt_algo_default): an AllReduce of up to TT_PLAN_SMALL_MAX bytes takes the
     * row of the lowest small_pref (1 first; 0 = never) that the executor runs at this rank count
     * with at least small_min_ranks ranks; everything else takes the row with fallback set */
    int small_pref, small_min_ranks, fallback;
} tt_algo_info;
/* MODEL ASSUMPTION (docs/exec.md, docs/gpu-executor.md): up to 64 KiB a collective is latency-bound
 * (the small-AllReduce algorithms of the rule above; the GPU executor's LL protocol). */
#define TT_PLAN_SMALL_MAX (64u * 1024u)
/* The row of `a`, NULL for TT_ALGO_DEFAULT or a value outside the enum. */
const tt_algo_info *tt_algo_info_of(tt_algo a);
/* 1 when executor `run` (TT_RUN_*) runs algorithm `a` for `coll` on nranks ranks (nranks <= 0:
 * any count). */
int tt_algo_runs(tt_algo a, int run, tt_coll coll, int nranks);
/* The default plan of executor `run` for `bytes` of `coll` on nranks ranks: the rule of the
 * registry's rows, and the protocol (host: simple; GPU: LL up to TT_PLAN_SMALL_MAX, simple above). */
tt_algo tt_algo_default(int run, tt_coll coll, uint64_t bytes, int nranks);
tt_proto tt_proto_default(int run, uint64_t bytes);

const char *tt_coll_name(tt_coll c);   /* "allreduce", ... (NCCL tuner CSV spelling) */
const char *tt_coll_label(tt_coll c);  /* "AllReduce", ... (for messages and reports) */
const char *tt_algo_name(tt_algo a);   /* "tree", "ring", ..., "rhd", "rd", "hier"; "default" */
const char *tt_algo_label(tt_algo a);  /* like tt_algo_name but "halving-doubling", "recursive-doubling", "hierarchical" */
const char *tt_proto_name(tt_proto p); /* "ll", "ll128", "simple"; "default" */
/* Case-insensitive; '_', '-' and spaces are ignored ("all_reduce", "AllReduce", "halving-doubling",
 * "rhd" ...).  "default" parses to *_DEFAULT: callers that need a concrete value check for it. */
tt_status tt_coll_parse(const char *s, tt_coll *out);
tt_status tt_algo_parse(const char *s, tt_algo *out);
tt_status tt_proto_parse(const char *s, tt_proto *out);
/* nccl-tests' bus bandwidth factor for n ranks (busbw = algbw * factor): 2(n-1)/n for
 * allreduce, (n-1)/n for allgather and reducescatter, 1 for broadcast and reduce. */
double tt_busbw_factor(tt_coll coll, int nranks);

#ifdef __cplusplus
}
#endif
#endif
