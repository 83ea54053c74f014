/*
 * tuner_table.c - the tuner plugin's tables: topotune JSON tables and table sets, NCCL's example
 * plugin CSV, and the choice of the rules for one communicator shape.  libc only.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tuner_table.h"

tt_status tp_table_push(tp_table *t, const tp_rule *r)
{
    if (t->n >= TP_MAX_RULES)
        return tt_error_set(TT_ERR_LIMIT, "tuner table: more than %d rules (the reader's limit)", TP_MAX_RULES);
    if (t->n == t->cap) {
        int nc = t->cap ? t->cap * 2 : 64;
        tp_rule *nr = realloc(t->r, (size_t)nc * sizeof *nr);
        if (!nr) return tt_error_set(TT_ERR_NOMEM, "tuner table: out of memory");
        t->r = nr;
        t->cap = nc;
    }
    t->r[t->n++] = *r;
    return TT_OK;
}

void tp_table_free(tp_table *t)
{
    if (!t) return;
    free(t->r);
    memset(t, 0, sizeof *t);
}

/* ---- JSON ---- */

static int num_of(const tj_val *o, const char *k, double *v)
{
    const tj_val *it = tj_get(o, k);
    if (!it || it->type != TJ_NUM) return 0;
    *v = it->num;
    return 1;
}

static int whole(double v, double lo, double hi) { return v >= lo && v <= hi && v == floor(v); }

/* one table object: "nodes", "ranks", "entries" */
static tt_status json_table(const tj_val *tab, const char *name, const char *where, tp_table *out)
{
    double nodes, ranks;
    if (!tab || tab->type != TJ_OBJ)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: %s must be an object", name, tab ? tab->line : 1, where);
    if (!num_of(tab, "nodes", &nodes) || !num_of(tab, "ranks", &ranks) || !whole(nodes, 1, 1e6) ||
        !whole(ranks, 1, 1e8) || ranks < nodes)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: %s: \"nodes\" (1..1e6) and \"ranks\" (nodes..1e8) must be whole numbers",
                            name, tab->line, where);
    const tj_val *ents = tj_get(tab, "entries");
    if (!ents || ents->type != TJ_ARR)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: %s: \"entries\" must be an array", name, ents ? ents->line : tab->line,
                            where);
    const tj_val *model = tj_get(tab, "model");
    if (model && model->type == TJ_STR && !out->model[0]) snprintf(out->model, sizeof out->model, "%s", model->str);
    int i = 0;
    for (const tj_val *e = ents->child; e; e = e->next, i++) {
        tp_rule r = {0};
        const tj_val *c = tj_get(e, "collective"), *a = tj_get(e, "algorithm"), *p = tj_get(e, "protocol");
        double mn, mx, ch = 0;
        const char *bad = NULL;
        if (e->type != TJ_OBJ) bad = "must be an object";
        else if (!c || c->type != TJ_STR || tt_coll_parse(c->str, &r.coll) != TT_OK || (int)r.coll < 0)
            bad = "\"collective\" must be broadcast, reduce, allgather, reducescatter or allreduce";
        else if (!a || a->type != TJ_STR || tt_algo_parse(a->str, &r.algo) != TT_OK || r.algo == TT_ALGO_DEFAULT)
            bad = "\"algorithm\" must name an algorithm (tree, ring, nvls, ...; not \"default\")";
        else if (!p || p->type != TJ_STR || tt_proto_parse(p->str, &r.proto) != TT_OK || r.proto == TT_PROTO_DEFAULT)
            bad = "\"protocol\" must be ll, ll128 or simple";
        else if (!num_of(e, "min_bytes", &mn) || !num_of(e, "max_bytes", &mx) || !whole(mn, 0, 18446744073709549568.0) ||
                 !whole(mx, mn, 18446744073709549568.0))
            bad = "needs whole numbers 0 <= min_bytes <= max_bytes < 2^64";
        else if (tj_get(e, "channels") && (!num_of(e, "channels", &ch) || !whole(ch, 0, 64)))
            bad = "\"channels\" must be a whole number 0..64 (0: NCCL's count)";
        if (bad)
            return tt_error_set(TT_ERR_PARSE, "%s:%d: %s: entries[%d]: %s", name, e->line, where, i, bad);
        if (r.algo >= TT_ALGO_NCCL_COUNT) { /* rd, rhd, hier: topotune's executor only */
            out->dropped++;
            continue;
        }
        r.min_bytes = (uint64_t)mn;
        r.max_bytes = (uint64_t)mx;
        r.channels = (int)ch;
        r.nranks = (int)ranks;
        r.nnodes = (int)nodes;
        r.pipeops = r.regbuff = -1;
        r.line = e->line;
        tt_status st = tp_table_push(out, &r);
        if (st != TT_OK) return st;
    }
    return TT_OK;
}

/* a shape and where it is: sorted to find repeats in n log n */
typedef struct {
    double ranks, nodes;
    int idx;
} shape_at;

static int shape_at_cmp(const void *a, const void *b)
{
    const shape_at *x = a, *y = b;
    if (x->ranks != y->ranks) return x->ranks < y->ranks ? -1 : 1;
    if (x->nodes != y->nodes) return x->nodes < y->nodes ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* (*dup)[i]: the first earlier table of the same shape, -1 when none (tables without numeric
 * "ranks"/"nodes" are refused later, by json_table) */
static tt_status set_duplicates(const tj_val *tabs, const char *name, int **dup, int *n)
{
    int cnt = 0;
    for (const tj_val *t = tabs->child; t; t = t->next) cnt++;
    if (cnt > TP_MAX_TABLES)
        return tt_error_set(TT_ERR_LIMIT, "%s:%d: %d tables in the set; the reader's limit is %d", name, tabs->line, cnt,
                            TP_MAX_TABLES);
    *n = cnt;
    *dup = malloc((size_t)cnt * sizeof **dup);
    shape_at *sa = malloc((size_t)cnt * sizeof *sa);
    if (!*dup || !sa) {
        free(sa);
        return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", name);
    }
    int k = 0, i = 0;
    for (const tj_val *t = tabs->child; t; t = t->next, i++) {
        (*dup)[i] = -1;
        double r, nd;
        if (num_of(t, "ranks", &r) && num_of(t, "nodes", &nd)) sa[k++] = (shape_at){r, nd, i};
    }
    qsort(sa, (size_t)k, sizeof *sa, shape_at_cmp);
    for (i = 1; i < k; i++) {
        const shape_at *first = &sa[i - 1];
        if (sa[i].ranks == first->ranks && sa[i].nodes == first->nodes)
            (*dup)[sa[i].idx] = (*dup)[first->idx] >= 0 ? (*dup)[first->idx] : first->idx;
    }
    free(sa);
    return TT_OK;
}

tt_status tp_table_parse_json(const char *text, const char *name, tp_table *out)
{
    memset(out, 0, sizeof *out);
    tj_val *root = NULL;
    tt_status st = tj_parse(text, name, &root);
    if (st != TT_OK) return st;
    const tj_val *schema = tj_get(root, "schema"), *ver = tj_get(root, "version");
    int set = schema && schema->type == TJ_STR && !strcmp(schema->str, "topotune-tuning-table-set");
    if (root->type != TJ_OBJ || !schema || schema->type != TJ_STR ||
        (!set && strcmp(schema->str, "topotune-tuning-table"))) {
        st = tt_error_set(TT_ERR_PARSE, "%s:%d: \"schema\" must be \"topotune-tuning-table\" or \"topotune-tuning-table-set\"",
                          name, schema ? schema->line : root->line);
    } else if (!ver || ver->type != TJ_NUM || ver->num != 1) {
        st = tt_error_set(TT_ERR_PARSE, "%s:%d: unsupported \"version\" (want 1)", name, ver ? ver->line : root->line);
    } else if (!set) {
        st = json_table(root, name, "the table", out);
    } else {
        const tj_val *tabs = tj_get(root, "tables");
        if (!tabs || tabs->type != TJ_ARR || !tabs->child) {
            st = tt_error_set(TT_ERR_PARSE, "%s:%d: \"tables\" must be a non-empty array of tables", name,
                              tabs ? tabs->line : root->line);
        } else {
            int *dup = NULL, n = 0;
            st = set_duplicates(tabs, name, &dup, &n);
            int i = 0;
            for (const tj_val *t = tabs->child; t && st == TT_OK; t = t->next, i++) {
                char where[32];
                snprintf(where, sizeof where, "tables[%d]", i);
                /* the same shape twice: which one wins would be an accident of file order */
                if (dup[i] >= 0) {
                    double r0 = 0, n0 = 0;
                    num_of(t, "ranks", &r0);
                    num_of(t, "nodes", &n0);
                    st = tt_error_set(TT_ERR_PARSE, "%s:%d: tables[%d] is for %g ranks on %g node(s), like tables[%d]",
                                      name, t->line, i, r0, n0, dup[i]);
                    break;
                }
                st = json_table(t, name, where, out);
            }
            free(dup);
        }
    }
    tj_free(root);
    if (st != TT_OK) tp_table_free(out);
    return st;
}

/* ---- CSV (NCCL's example tuner plugin) ---- */

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    return s;
}

/* a whole number in [lo, hi] */
static int csv_int(const char *s, long long lo, long long hi, long long *out)
{
    long long v;
    if (tt_parse_ll(s, &v) != TT_OK || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

static int csv_u64(const char *s, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+') return 0;
    for (const char *q = s; *q; q++)
        if (!isdigit((unsigned char)*q)) return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE) return 0;
    *out = v;
    return 1;
}

static tt_status csv_line(char *line, const char *name, int ln, tp_table *out)
{
    char *f[11];
    int nf = 0;
    for (char *q = line;; ) {
        char *comma = strchr(q, ',');
        if (nf == 11) break;
        f[nf++] = q;
        if (!comma) break;
        *comma = 0;
        q = comma + 1;
    }
    if (nf < 8 || nf > 10)
        return tt_error_set(TT_ERR_PARSE,
                            "%s:%d: %d field%s; want 8 to 10: collective,min_bytes,max_bytes,algorithm,protocol,channels,"
                            "nNodes,nRanks[,numPipeOps[,regBuff]]", name, ln, nf > 10 ? 11 : nf, nf == 1 ? "" : "s");
    for (int i = 0; i < nf; i++) f[i] = trim(f[i]);
    tp_rule r = {0};
    long long ch, nn, nr, po = -1, rb = -1;
    static const char *const colls[] = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
    static const char *const algos[] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
    static const char *const protos[] = {"ll", "ll128", "simple"};
    int c = -1, a = -1, p = -1;
    for (int i = 0; i < 5; i++) if (!strcasecmp(f[0], colls[i])) c = i;
    for (int i = 0; i < 7; i++) if (!strcasecmp(f[3], algos[i])) a = i;
    for (int i = 0; i < 3; i++) if (!strcasecmp(f[4], protos[i])) p = i;
    if (c < 0)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: collective '%s' is not broadcast, reduce, allgather, reducescatter or allreduce",
                            name, ln, f[0]);
    if (!csv_u64(f[1], &r.min_bytes) || !csv_u64(f[2], &r.max_bytes) || r.max_bytes < r.min_bytes)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: min_bytes '%s' and max_bytes '%s' must be whole numbers, min <= max",
                            name, ln, f[1], f[2]);
    if (a < 0)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: algorithm '%s' is not one NCCL runs (tree, ring, collnet_direct, "
                            "collnet_chain, nvls, nvls_tree, pat)", name, ln, f[3]);
    if (p < 0) return tt_error_set(TT_ERR_PARSE, "%s:%d: protocol '%s' is not ll, ll128 or simple", name, ln, f[4]);
    if (!csv_int(f[5], -1, 64, &ch) || ch == 0)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: channels '%s' must be 1..64 or -1 (NCCL's count)", name, ln, f[5]);
    if (!csv_int(f[6], -1, 1000000, &nn) || nn == 0 || !csv_int(f[7], -1, 100000000, &nr) || nr == 0)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: nNodes '%s' and nRanks '%s' must be positive or -1 (any)", name, ln,
                            f[6], f[7]);
    if (nf > 8 && (!csv_int(f[8], -1, 1000000000, &po) || po == 0))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: numPipeOps '%s' must be positive or -1 (any)", name, ln, f[8]);
    if (nf > 9 && !csv_int(f[9], -1, 1, &rb))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: regBuff '%s' must be 0, 1 or -1 (any)", name, ln, f[9]);
    r.coll = (tt_coll)c;
    r.algo = (tt_algo)a;
    r.proto = (tt_proto)p;
    r.channels = ch > 0 ? (int)ch : 0;
    r.nnodes = (int)nn;
    r.nranks = (int)nr;
    r.pipeops = (int)po;
    r.regbuff = (int)rb;
    r.line = ln;
    return tp_table_push(out, &r);
}

tt_status tp_table_parse_csv(const char *text, const char *name, tp_table *out)
{
    memset(out, 0, sizeof *out);
    out->csv = 1;
    tt_status st = TT_OK;
    int ln = 0;
    if (!strncmp(text, "\xEF\xBB\xBF", 3)) text += 3; /* a UTF-8 byte order mark */
    for (const char *p = text; *p && st == TT_OK; ) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        ln++;
        char *line = malloc(len + 1);
        if (!line) { st = tt_error_set(TT_ERR_NOMEM, "%s: out of memory", name); break; }
        memcpy(line, p, len);
        line[len] = 0;
        char *t = trim(line);
        if (*t && *t != '#') st = csv_line(t, name, ln, out);
        free(line);
        p = nl ? nl + 1 : p + len;
    }
    if (st != TT_OK) tp_table_free(out);
    return st;
}

tt_status tp_file_open(const char *path, tp_file *f)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    if (!strcmp(path, "-"))
        return tt_error_set(TT_ERR_IO, "'-' (standard input) is not accepted as a tuner table; name a regular file");
    /* O_NONBLOCK: opening a FIFO must not wait for a writer inside NCCL's communicator init */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return tt_error_set(TT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return tt_error_set(TT_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        const char *what = S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO" :
                           S_ISCHR(sb.st_mode) ? "a character device" : S_ISBLK(sb.st_mode) ? "a block device" :
                           S_ISSOCK(sb.st_mode) ? "a socket" : "not a regular file";
        return tt_error_set(TT_ERR_IO, "%s: is %s; a tuner table must be a regular file", path, what);
    }
    if (sb.st_size > TP_MAX_FILE) {
        close(fd);
        return tt_error_set(TT_ERR_LIMIT, "%s: %lld bytes; the reader's limit is %d MiB", path, (long long)sb.st_size,
                            TP_MAX_FILE >> 20);
    }
    f->fd = fd;
    f->dev = (uint64_t)sb.st_dev;
    f->ino = (uint64_t)sb.st_ino;
    f->size = (int64_t)sb.st_size;
    f->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    f->ctime_ns = (int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec;
    return TT_OK;
}

void tp_file_close(tp_file *f)
{
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
}

int tp_file_same(const tp_file *a, const tp_file *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
           a->ctime_ns == b->ctime_ns;
}

tt_status tp_table_read(const char *path, tp_file *f, int csv, tp_table *out)
{
    memset(out, 0, sizeof *out);
    /* the size fstat gave and one byte more, read to the end: a file read whole ends with the
     * buffer not full; one that grows meanwhile is refused past the limit */
    size_t cap = (size_t)f->size + 2, len = 0;
    char *text = malloc(cap);
    if (!text) return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", path);
    for (;;) {
        if (len + 1 == cap) {
            if (len > (size_t)TP_MAX_FILE) {
                free(text);
                return tt_error_set(TT_ERR_LIMIT, "%s: more than %d MiB; the reader's limit", path, TP_MAX_FILE >> 20);
            }
            char *nt = realloc(text, cap * 2);
            if (!nt) { free(text); return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", path); }
            text = nt;
            cap *= 2;
        }
        ssize_t got = read(f->fd, text + len, cap - 1 - len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int e = errno;
            free(text);
            return tt_error_set(TT_ERR_IO, "%s: cannot read: %s", path, strerror(e));
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    text[len] = 0;
    tt_status st;
    if (strlen(text) != len) {
        free(text);
        return tt_error_set(TT_ERR_PARSE, "%s: a NUL byte in the file (not a text table)", path);
    }
    const char *q = text;
    if (!strncmp(q, "\xEF\xBB\xBF", 3)) q += 3; /* a UTF-8 byte order mark: skipped, then the format is told */
    while (isspace((unsigned char)*q)) q++;
    if (!*q) {
        free(text);
        return tt_error_set(TT_ERR_PARSE, "%s: is empty%s", path, len ? " (only white space)" : "");
    }
    st = !csv && *q == '{' ? tp_table_parse_json(text, path, out) : tp_table_parse_csv(text, path, out);
    free(text);
    return st;
}

tt_status tp_table_load(const char *path, int csv, tp_table *out)
{
    memset(out, 0, sizeof *out);
    tp_file f;
    tt_status st = tp_file_open(path, &f);
    if (st != TT_OK) return st;
    st = tp_table_read(path, &f, csv, out);
    tp_file_close(&f);
    return st;
}

/* ---- shapes ---- */

static int applies(const tp_rule *r, int nranks, int nnodes)
{
    return (r->nranks < 0 || r->nranks == nranks) && (r->nnodes < 0 || r->nnodes == nnodes);
}

int tp_table_has_shape(const tp_table *t, int nranks, int nnodes)
{
    for (int i = 0; i < t->n; i++)
        if (applies(&t->r[i], nranks, nnodes)) return 1;
    return 0;
}

static int shape_cmp(const void *a, const void *b)
{
    const tp_rule *x = *(const tp_rule *const *)a, *y = *(const tp_rule *const *)b;
    if (x->nranks != y->nranks) return x->nranks < y->nranks ? -1 : 1;
    if (x->nnodes != y->nnodes) return x->nnodes < y->nnodes ? -1 : 1;
    return (x > y) - (x < y); /* file order */
}

static int ptr_cmp(const void *a, const void *b)
{
    const tp_rule *x = *(const tp_rule *const *)a, *y = *(const tp_rule *const *)b;
    return (x > y) - (x < y);
}

int tp_table_shapes(const tp_table *t, tp_shape *out, int cap)
{
    /* sorted by shape then place (n log n); the first rule of each shape, back in file order */
    const tp_rule **p = malloc((size_t)(t->n ? t->n : 1) * sizeof *p);
    if (!p) return 0;
    int k = 0, n = 0;
    for (int i = 0; i < t->n; i++)
        if (t->r[i].nranks >= 0 && t->r[i].nnodes >= 0) p[k++] = &t->r[i];
    qsort(p, (size_t)k, sizeof *p, shape_cmp);
    for (int i = 0; i < k; i++)
        if (!i || p[i]->nranks != p[n - 1]->nranks || p[i]->nnodes != p[n - 1]->nnodes) p[n++] = p[i];
    qsort(p, (size_t)n, sizeof *p, ptr_cmp);
    for (int i = 0; i < n && i < cap; i++) {
        out[i].nranks = p[i]->nranks;
        out[i].nnodes = p[i]->nnodes;
    }
    free(p);
    return n;
}

static double doublings(int a, int b) { return fabs(log2((double)a / (double)b)); }

int tp_table_nearest(const tp_table *t, int nranks, int nnodes, tp_shape *out)
{
    int found = 0;
    double bn = 0, br = 0;
    for (int i = 0; i < t->n; i++) {
        const tp_rule *r = &t->r[i];
        if (r->nranks < 0 || r->nnodes < 0) continue;
        double dn = doublings(r->nnodes, nnodes), dr = doublings(r->nranks, nranks);
        int better = !found || dn < bn - 1e-9 || (fabs(dn - bn) <= 1e-9 && dr < br - 1e-9) ||
                     (fabs(dn - bn) <= 1e-9 && fabs(dr - br) <= 1e-9 && r->nranks < out->nranks);
        if (better) {
            found = 1;
            bn = dn;
            br = dr;
            out->nranks = r->nranks;
            out->nnodes = r->nnodes;
        }
    }
    return found;
}

tt_status tp_table_select(const tp_table *t, int nranks, int nnodes, tp_rule **out, int *n)
{
    *out = NULL;
    *n = 0;
    int k = 0;
    for (int i = 0; i < t->n; i++) k += applies(&t->r[i], nranks, nnodes);
    if (!k) return TT_OK;
    tp_rule *r = malloc((size_t)k * sizeof *r);
    if (!r) return tt_error_set(TT_ERR_NOMEM, "tuner table: out of memory");
    k = 0;
    for (int i = 0; i < t->n; i++)
        if (applies(&t->r[i], nranks, nnodes)) r[k++] = t->r[i];
    *out = r;
    *n = k;
    return TT_OK;
}
