/*
 * tune_measure_text.c - nccl-tests (and topo-exec) text tables.
 *
 * Facts used (nccl-tests 2.19, peers.md 1.4): a run prints "# nccl-tests version ...",
 * "# Collective test starting: <prog>", "# nThread .. nGpus ..", one "#  Rank %2d Group %2d Pid
 * %6d on %10s device ..." line per rank, the two-line column header, then per size
 * "size count type redop root" and, per placement (out-of-place, in-place),
 * "time algbw busbw #wrong" (#wrong may be N/A), then "# Out of bounds values", "# Avg bus
 * bandwidth" and "# Collective test concluded: <prog>".  topo-exec prints the same table
 * with "# topo-exec (...) collective: <name>" and "# plan: algo A ..., proto P, channels C".
 * Several runs may be concatenated; lines may carry MPI rank prefixes ("[1,0]<stdout>:",
 * srun -l "0: "); NCCL_DEBUG log lines are skipped.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_measure_internal.h"

#define MAX_HOSTS 4096

typedef struct {
    int coll;            /* -1 unknown */
    int coll_line;
    int nranks;          /* "#  Rank" lines */
    int nhosts;
    char **hosts;
    int algo, proto, channels;
    int topotune;        /* a topo-exec table of our executor (not --engine nccl) */
    int exec_kind;       /* tt_exec_kind from the "#  Rank" lines ([host], [gpu, virtual], [gpu]) */
    int first_row;       /* index in the set of this table's first row, -1 none */
    int first_line;
    int ntime, tcol[2];  /* from the column header: data columns of "time" per placement */
    int ncols;           /* columns the header names (0 = no header seen: nccl-tests' 13) */
} table_state;

static void table_reset(table_state *t)
{
    for (int i = 0; i < t->nhosts; i++) free(t->hosts[i]);
    free(t->hosts);
    memset(t, 0, sizeof(*t));
    t->coll = -1;
    t->algo = -1;
    t->proto = -1;
    t->first_row = -1;
}

static const char *strip_prefix(const char *s)
{
    /* Open MPI --tag-output: "[job,rank]<stdout>:" or "<stderr>:" */
    if (s[0] == '[') {
        const char *p = s + 1;
        while (isdigit((unsigned char)*p) || *p == ',') p++;
        if (*p == ']') {
            p++;
            if (!strncmp(p, "<stdout>:", 9) || !strncmp(p, "<stderr>:", 9)) return p + 9;
            if (*p == ':') return p + 1;
        }
    }
    /* srun -l / mpirun -l: "N: " */
    const char *p = s;
    while (*p == ' ') p++;
    if (isdigit((unsigned char)*p)) {
        const char *q = p;
        while (isdigit((unsigned char)*q)) q++;
        if (*q == ':' && (q[1] == ' ' || q[1] == '\t' || q[1] == 0)) return q + 1;
    }
    return s;
}

static int num_tok(const char *tok, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(tok, &end);
    if (end == tok || *end || errno || !isfinite(x)) return 0;
    *v = x;
    return 1;
}

static int uint_tok(const char *tok, uint64_t *v)
{
    if (!isdigit((unsigned char)tok[0])) return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(tok, &end, 10);
    if (*end || errno) return 0;
    *v = x;
    return 1;
}

/* close a table: give its rows the collective, ranks and hosts */
static tt_status table_close(table_state *t, const char *name, const tt_measure_opts *o, tt_measure_set *set)
{
    if (t->first_row < 0) return TT_OK;
    int coll = t->coll >= 0 ? t->coll : o->coll;
    if (coll < 0)
        return tt_error_set(TT_ERR_PARSE,
                            "%s:%d: this table has no '# Collective test starting: <prog>' line; cannot tell the "
                            "collective (give it with --collective)",
                            name, t->first_line);
    for (int i = t->first_row; i < set->n; i++) {
        tt_measurement *m = &set->m[i];
        m->coll = (tt_coll)coll;
        int hint = m->nranks < 0 ? -m->nranks : 0;
        m->nranks = o->nranks > 0 ? o->nranks : t->nranks;
        if (m->nranks == 0 && (coll == TT_COLL_ALLGATHER || coll == TT_COLL_REDUCESCATTER)) m->nranks = hint;
        m->nodes = o->nodes > 0 ? o->nodes : t->nhosts;
        /* a row that named its own plan (GPU mode's algo/proto/ch column) keeps it */
        if (m->algo < 0) m->algo = t->algo;
        if (m->proto < 0) m->proto = t->proto;
        if (m->channels <= 0) m->channels = t->channels;
        m->topotune_tree = t->topotune;
        m->exec_kind = t->topotune ? t->exec_kind : TT_RANKS_NONE;
    }
    return TT_OK;
}

static void add_host(table_state *t, const char *h)
{
    for (int i = 0; i < t->nhosts; i++)
        if (!strcmp(t->hosts[i], h)) return;
    if (t->nhosts >= MAX_HOSTS) return;
    char **p = realloc(t->hosts, (size_t)(t->nhosts + 1) * sizeof(*p));
    if (!p) return;
    t->hosts = p;
    char *d = tt_strdup(h);
    if (d) t->hosts[t->nhosts++] = d;
}

/* After a table's rows were seen, a header line starts a new table. */
static tt_status maybe_new_table(table_state *t, const char *name, const tt_measure_opts *o, tt_measure_set *set)
{
    if (t->first_row < 0) return TT_OK;
    tt_status st = table_close(t, name, o, set);
    table_reset(t);
    return st;
}

static tt_status parse_comment(const char *c, int line, table_state *t, const char *name, const tt_measure_opts *o,
                               tt_measure_set *set)
{
    tt_status st = TT_OK;
    const char *p;
    char word[128];
    if (!strncmp(c, "# nccl-tests version", 20) || !strncmp(c, "# nThread", 9)) return maybe_new_table(t, name, o, set);
    if ((p = strstr(c, "Collective test starting:"))) {
        if ((st = maybe_new_table(t, name, o, set)) != TT_OK) return st;
        if (sscanf(p + 25, "%127s", word) == 1) {
            tt_coll cc;
            if (tm_coll_from_prog(word, &cc) != TT_OK)
                return tt_error_set(TT_ERR_PARSE, "%s:%d: unknown collective test '%s'", name, line, word);
            t->coll = cc;
            t->coll_line = line;
        }
        return TT_OK;
    }
    if (!strncmp(c, "# topo-exec (", 13) && (p = strstr(c, "collective:"))) {
        if ((st = maybe_new_table(t, name, o, set)) != TT_OK) return st;
        /* "collective: all_reduce" or, in GPU mode, "collective: all_reduce, engine ..." */
        t->topotune = strstr(p, "engine nccl") == NULL;
        if (sscanf(p + 11, " %127[^ ,\t\r]", word) == 1) {
            tt_coll cc;
            if (tm_coll_from_prog(word, &cc) != TT_OK)
                return tt_error_set(TT_ERR_PARSE, "%s:%d: unknown collective '%s'", name, line, word);
            t->coll = cc;
        }
        return TT_OK;
    }
    if ((p = strstr(c, "Collective test concluded:"))) {
        if (t->coll < 0 && sscanf(p + 26, "%127s", word) == 1) {
            tt_coll cc;
            if (tm_coll_from_prog(word, &cc) == TT_OK) t->coll = cc;
        }
        st = table_close(t, name, o, set);
        table_reset(t);
        return st;
    }
    /* column header "#       size  count  type  redop  root  time  algbw  busbw  #wrong [pred err%] ..." */
    {
        const char *q = c + 1;
        while (*q == ' ' || *q == '\t') q++;
        if (!strncmp(q, "size ", 5)) {
            char tmp[1024];
            snprintf(tmp, sizeof tmp, "%s", q);
            int k = 0, nt = 0;
            for (char *sv = NULL, *w = strtok_r(tmp, " \t\r", &sv); w; w = strtok_r(NULL, " \t\r", &sv), k++)
                if (!strcmp(w, "time") && nt < 2) t->tcol[nt++] = k;
            if (nt >= 1 && t->tcol[0] >= 5) {
                t->ntime = nt;
                t->ncols = k;
            }
            return TT_OK;
        }
    }
    int r, g;
    if (sscanf(c, "# Rank %d Group %d", &r, &g) == 2) {
        if (t->first_row >= 0 && (st = maybe_new_table(t, name, o, set)) != TT_OK) return st;
        t->nranks++;
        if ((p = strstr(c, " on ")) && sscanf(p + 4, "%127s", word) == 1) add_host(t, word);
        if (strstr(c, "[host]")) t->exec_kind = TT_RANKS_HOST;
        else if (strstr(c, "virtual")) t->exec_kind = TT_RANKS_VIRTUAL;
        else if (strstr(c, "[gpu")) t->exec_kind = TT_RANKS_GPU;
        return TT_OK;
    }
    if (!strncmp(c, "# plan: algo ", 13)) {
        tt_algo a;
        if (sscanf(c + 13, "%127[^ ,(]", word) == 1 && strcmp(word, "default") && tt_measure_algo_parse(word, &a) == TT_OK)
            t->algo = a;
        if ((p = strstr(c, "proto ")) && sscanf(p + 6, "%127[^ ,]", word) == 1) {
            tt_proto pr;
            if (tt_proto_parse(word, &pr) == TT_OK) t->proto = pr;
        }
        if ((p = strstr(c, "channels ")) && sscanf(p + 9, "%d", &r) == 1 && r > 0) t->channels = r;
        return TT_OK;
    }
    return TT_OK;
}

static tt_status parse_row(char *s, int line, table_state *t, const char *name, tt_measure_set *set)
{
    char *tok[32];
    int nt = 0;
    for (char *sv = NULL, *w = strtok_r(s, " \t\r", &sv); w; w = strtok_r(NULL, " \t\r", &sv)) {
        if (nt < 32) tok[nt] = w;
        nt++;
    }
    if (nt < 9)
        return tt_error_set(TT_ERR_PARSE,
                            "%s:%d: result row has %d columns; expected 'size count type redop root' then "
                            "'time algbw busbw #wrong' per placement (9 or 13 columns)",
                            name, line, nt);
    tt_measurement m;
    memset(&m, 0, sizeof m);
    m.algo = m.proto = -1;
    m.time_oop_us = m.time_ip_us = -1;
    uint64_t count;
    if (!uint_tok(tok[0], &m.bytes) || m.bytes == 0)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: size '%s' is not a positive integer", name, line, tok[0]);
    if (!uint_tok(tok[1], &count))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: count '%s' is not an integer", name, line, tok[1]);
    int esize = tm_type_size(tok[2]);
    if (!esize) return tt_error_set(TT_ERR_PARSE, "%s:%d: unknown data type '%s' in the type column", name, line, tok[2]);
    double v;
    if (!num_tok(tok[4], &v))
        return tt_error_set(TT_ERR_PARSE, "%s:%d: root '%s' is not a number", name, line, tok[4]);
    int places = nt >= 13 ? 2 : 1, col[2] = {5, 9};
    if (t->ncols > 0) { /* the header said where the placements are */
        int need = t->tcol[t->ntime - 1] + 4;
        if (nt < need)
            return tt_error_set(TT_ERR_PARSE, "%s:%d: result row has %d columns, the column header names %d", name, line,
                                nt, t->ncols);
        places = t->ntime;
        col[0] = t->tcol[0];
        col[1] = t->ntime > 1 ? t->tcol[1] : 0;
    }
    double busbw[2] = {0, 0};
    for (int pl = 0; pl < places; pl++) {
        int b = col[pl];
        const char *what = pl ? "in-place" : "out-of-place";
        double tm, alg, bus;
        if (!num_tok(tok[b], &tm))
            return tt_error_set(TT_ERR_PARSE, "%s:%d: %s time '%s' is not a number", name, line, what, tok[b]);
        if (!(tm > 0)) return tt_error_set(TT_ERR_PARSE, "%s:%d: %s time %s must be above 0", name, line, what, tok[b]);
        if (!num_tok(tok[b + 1], &alg) || !num_tok(tok[b + 2], &bus))
            return tt_error_set(TT_ERR_PARSE, "%s:%d: %s algbw/busbw '%s %s' are not numbers", name, line, what,
                                tok[b + 1], tok[b + 2]);
        if (strcmp(tok[b + 3], "N/A") && !num_tok(tok[b + 3], &v))
            return tt_error_set(TT_ERR_PARSE, "%s:%d: %s #wrong '%s' is not a number or N/A", name, line, what, tok[b + 3]);
        if (pl) m.time_ip_us = tm; else m.time_oop_us = tm;
        busbw[pl] = bus;
    }
    tm_finish_times(&m);
    m.busbw = m.time_us == m.time_oop_us ? busbw[0] : busbw[1];
    /* topo-exec's GPU mode ends a row with the plan it ran, "ring/ll/4" (algorithm/protocol/
     * channels); "nccl" there means NCCL chose */
    for (int k = col[places - 1] + 4; k < nt && k < 32; k++) {
        char a[64], pr[32];
        int chn;
        tt_algo al;
        tt_proto pp;
        if (sscanf(tok[k], "%63[^/]/%31[^/]/%d", a, pr, &chn) == 3 && tt_measure_algo_parse(a, &al) == TT_OK &&
            tt_proto_parse(pr, &pp) == TT_OK && chn > 0) {
            m.algo = (int)al;
            m.proto = (int)pp;
            m.channels = chn;
        }
    }
    /* all_gather / reduce_scatter: size = count * esize * nranks gives the ranks when the
     * header lacks the "#  Rank" lines */
    snprintf(m.where, sizeof m.where, "%s:%d", name, line);
    if (t->first_row < 0) {
        t->first_row = set->n;
        t->first_line = line;
    }
    /* kept as a negative hint until the collective is known (table_close) */
    if (count > 0 && m.bytes % (count * (uint64_t)esize) == 0 && m.bytes / (count * (uint64_t)esize) >= 2 &&
        m.bytes / (count * (uint64_t)esize) < 1000000)
        m.nranks = -(int)(m.bytes / (count * (uint64_t)esize));
    return tm_push(set, &m);
}

/* ranks from the columns when the "#  Rank" lines were missing */
static void infer_ranks(tt_measure_set *set, int from)
{
    for (int i = from; i < set->n; i++) {
        tt_measurement *m = &set->m[i];
        if (m->nranks > 0 || m->busbw <= 0 || m->time_us <= 0) continue;
        double alg = (double)m->bytes / (m->time_us * 1e3);
        double f = m->busbw / alg;
        double n = 0;
        if (m->coll == TT_COLL_ALLREDUCE && f < 1.999) n = 2 / (2 - f);
        else if ((m->coll == TT_COLL_ALLGATHER || m->coll == TT_COLL_REDUCESCATTER) && f < 0.999) n = 1 / (1 - f);
        /* printed bandwidths have 2 decimals: accept only when the rounding is clear */
        if (n >= 2 && fabs(n - round(n)) < 0.15 && alg >= 1.0) m->nranks = (int)round(n);
    }
}

tt_status tm_parse_text(const char *text, size_t len, const char *name, const tt_measure_opts *o, tt_measure_set *set)
{
    table_state t;
    memset(&t, 0, sizeof t);
    table_reset(&t);
    int from = set->n;
    tt_status st = TT_OK;
    size_t pos = 0;
    int line = 0;
    char buf[4096];
    while (pos < len && st == TT_OK) {
        line++;
        size_t e = pos;
        while (e < len && text[e] != '\n') e++;
        size_t l = e - pos;
        if (l >= sizeof buf) {
            st = tt_error_set(TT_ERR_PARSE, "%s:%d: line longer than %zu bytes", name, line, sizeof buf - 1);
            break;
        }
        memcpy(buf, text + pos, l);
        buf[l] = 0;
        pos = e + 1;
        const char *s = strip_prefix(buf);
        while (*s == ' ' || *s == '\t' || *s == '\r') s++;
        if (!*s) continue;
        if (strstr(s, "NCCL INFO") || strstr(s, "NCCL WARN") || strstr(s, "NCCL TRACE")) continue;
        if (*s == '#') {
            st = parse_comment(s, line, &t, name, o, set);
        } else if (isdigit((unsigned char)*s)) {
            char row[4096];
            snprintf(row, sizeof row, "%s", s);
            st = parse_row(row, line, &t, name, set);
        } else {
            TT_TRACE("tune", "%s:%d: line ignored (not a comment or result row)", name, line);
        }
    }
    if (st == TT_OK) st = table_close(&t, name, o, set);
    table_reset(&t);
    if (st == TT_OK) infer_ranks(set, from);
    return st;
}
