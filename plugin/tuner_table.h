/*
 * tuner_table.h - the tuner plugin's table reader (plugin/tuner_table.c, plugin/tuner_json.c):
 * libc only, so that libnccl-tuner-topotune.so loads wherever NCCL does.
 *
 * Reads three forms into one list of rules, in file order:
 *   - a topotune table, schema "topotune-tuning-table" version 1 (topo-tune -f json): the
 *     table's "ranks"/"nodes" become every rule's shape;
 *   - a table set, schema "topotune-tuning-table-set" version 1 (topo-tune --shapes ... -f json):
 *     "tables": [ one topotune table per communicator shape ];
 *   - NCCL's example tuner plugin CSV (topo-tune -f nccl-csv, NCCL_TUNER_CONFIG_FILE):
 *     collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]
 *     with -1 = any for nNodes, nRanks, numPipeOps, regBuff and -1 = NCCL's count for channels.
 * Errors are tt_status with a tt_error_set message naming file:line.
 */
#ifndef TUNER_TABLE_H
#define TUNER_TABLE_H

#include <stdint.h>

#include "tt_common.h"

typedef struct {
    tt_coll coll;
    uint64_t min_bytes, max_bytes; /* inclusive */
    tt_algo algo;                  /* NCCL ids 0..6 only */
    tt_proto proto;
    int channels;                  /* > 0: this count; 0: NCCL's count */
    int nranks, nnodes;            /* the communicator shape; -1 = any */
    int pipeops, regbuff;          /* -1 = any */
    int line;                      /* where the rule is in its file */
} tp_rule;

typedef struct {
    tp_rule *r;
    int n, cap;
    int dropped;      /* JSON entries with algorithms NCCL cannot run (rd, rhd, hier): left out */
    int csv;          /* 1: read as CSV */
    char model[32];   /* JSON "model" of the first table ("" when absent) */
} tp_table;

typedef struct {
    int nranks, nnodes;
} tp_shape;

/* Engineering limits, far above any real table (docs/tuner-plugin.md, "Limits"); the JSON
 * reader's own are in tuner_json.c. */
#define TP_MAX_FILE (64 << 20) /* bytes */
#define TP_MAX_RULES 1000000   /* rules (CSV rows, JSON entries) */
#define TP_MAX_TABLES 65536    /* tables in a table set */

/* An open table file and its identity (what the plugin's per-process cache is keyed by). */
typedef struct {
    int fd;
    uint64_t dev, ino;
    int64_t size, mtime_ns, ctime_ns;
} tp_file;
/* Open a regular file without blocking (O_NONBLOCK|O_CLOEXEC): "-", FIFOs, devices, sockets,
 * directories and files over TP_MAX_FILE are refused with the reason. */
tt_status tp_file_open(const char *path, tp_file *f);
void tp_file_close(tp_file *f);
int tp_file_same(const tp_file *a, const tp_file *b);
/* Read and parse an open file (like tp_table_load). */
tt_status tp_table_read(const char *path, tp_file *f, int csv, tp_table *out);

/* Parse `text` (NUL-terminated); `name` is used in messages. */
tt_status tp_table_parse_json(const char *text, const char *name, tp_table *out);
tt_status tp_table_parse_csv(const char *text, const char *name, tp_table *out);
/* Read `path`: CSV when `csv` is 1; otherwise JSON when the first non-blank character (after a
 * UTF-8 byte order mark) is '{', CSV else.  An empty (or all-blank) file is refused. */
tt_status tp_table_load(const char *path, int csv, tp_table *out);
void tp_table_free(tp_table *t);
tt_status tp_table_push(tp_table *t, const tp_rule *r);

/* Does any rule apply to a communicator of this shape (wildcards count)? */
int tp_table_has_shape(const tp_table *t, int nranks, int nnodes);
/* The distinct explicit shapes of the table (wildcard rules left out), in file order, at most
 * `cap`; returns how many there are in all. */
int tp_table_shapes(const tp_table *t, tp_shape *out, int cap);
/* The explicit shape nearest to (nranks, nnodes): fewest doublings between the node counts
 * first, then between the rank counts, then the smaller shape.  0 when the table has none. */
int tp_table_nearest(const tp_table *t, int nranks, int nnodes, tp_shape *out);
/* Copy the rules that apply to shape (nranks, nnodes), in file order (*out NULL when none). */
tt_status tp_table_select(const tp_table *t, int nranks, int nnodes, tp_rule **out, int *n);

/* ---- the JSON subset (plugin/tuner_json.c): a tree with the line of every value ---- */
typedef enum { TJ_NULL, TJ_BOOL, TJ_NUM, TJ_STR, TJ_ARR, TJ_OBJ } tj_type;
typedef struct tj_val { /* 32 bytes; the nodes and strings of one document live in one arena */
    tj_type type;
    int line;
    union {
        double num;            /* TJ_NUM; TJ_BOOL: 0 or 1 */
        char *str;             /* TJ_STR */
        struct tj_val *child;  /* TJ_ARR, TJ_OBJ: first element/member */
    };
    char *key;             /* the member name inside an object */
    struct tj_val *next;
} tj_val;
/* Strict RFC 8259 JSON (no comments, no trailing commas, no duplicate member names), nesting at
 * most 64 deep, at most 4194304 values and 65536 members per object; strings must be valid UTF-8
 * without \u0000; a leading UTF-8 byte order mark is skipped; errors name `name`:line.
 * tj_free takes the root only (it frees the whole document). */
tt_status tj_parse(const char *text, const char *name, tj_val **out);
void tj_free(tj_val *v);
const tj_val *tj_get(const tj_val *obj, const char *key);

#endif
