/*
 * tuner_table.c - the tuner plugin's tables: topotune JSON tables and table sets, NCCL's example
 * plugin CSV, and the choice of the rules for one communicator shape.  libc only.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tuner_table.h"

#define TP_MAX_FILE (64u << 20)

tt_status tp_table_push(tp_table *t, const tp_rule *r)
{
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
            int i = 0;
            for (const tj_val *t = tabs->child; t && st == TT_OK; t = t->next, i++) {
                char where[32];
                snprintf(where, sizeof where, "tables[%d]", i);
                double r0 = 0, n0 = 0;
                num_of(t, "ranks", &r0);
                num_of(t, "nodes", &n0);
                /* the same shape twice: which one wins would be an accident of file order */
                int j = 0;
                for (const tj_val *u = tabs->child; u != t; u = u->next, j++) {
                    double r1 = -1, n1 = -1;
                    num_of(u, "ranks", &r1);
                    num_of(u, "nodes", &n1);
                    if (r1 == r0 && n1 == n0) {
                        st = tt_error_set(TT_ERR_PARSE, "%s:%d: tables[%d] is for %g ranks on %g node(s), like tables[%d]",
                                          name, t->line, i, r0, n0, j);
                        break;
                    }
                }
                if (st == TT_OK) st = json_table(t, name, where, out);
            }
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

tt_status tp_table_load(const char *path, int csv, tp_table *out)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    tt_status st = tt_read_file(path, TP_MAX_FILE, &text, &len);
    if (st != TT_OK) return st;
    if (strlen(text) != len) {
        free(text);
        return tt_error_set(TT_ERR_PARSE, "%s: a NUL byte in the file (not a text table)", path);
    }
    const char *q = text;
    while (isspace((unsigned char)*q)) q++;
    st = !csv && *q == '{' ? tp_table_parse_json(text, path, out) : tp_table_parse_csv(text, path, out);
    free(text);
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

int tp_table_shapes(const tp_table *t, tp_shape *out, int cap)
{
    int n = 0;
    tp_shape *seen = calloc((size_t)(t->n ? t->n : 1), sizeof *seen);
    if (!seen) return 0;
    for (int i = 0; i < t->n; i++) {
        const tp_rule *r = &t->r[i];
        if (r->nranks < 0 || r->nnodes < 0) continue;
        int dup = 0;
        for (int j = 0; j < n && !dup; j++) dup = seen[j].nranks == r->nranks && seen[j].nnodes == r->nnodes;
        if (dup) continue;
        seen[n].nranks = r->nranks;
        seen[n].nnodes = r->nnodes;
        if (n < cap) out[n] = seen[n];
        n++;
    }
    free(seen);
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
