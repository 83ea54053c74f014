/*
 * tune_measure_text.c - nccl-tests (and topo-exec) text tables: lines, runs, launcher streams.
 *
 * Facts used (github.com/NVIDIA/nccl-tests, src/common.cu and src/util.cu of v1.0 .. v2.19, read for
 * the facts only): a run prints "# nccl-tests version ..." (v2.17.4 on), "# Collective test
 * starting: <prog>" (v2.16.7 on), "# nThread .. nGpus .." ("nThread" without '#' in v1.x),
 * "# Using devices", one rank line per rank - "#  Rank %2d Group %2d Pid %6d on %10s device ..."
 * (v2.13.4 on), "#   Rank %2d Pid %6d on ..." (v2.0 - v2.13.3), both gathered and printed by rank
 * 0, or "#   Rank %2d on %10s device ..." (v1.x) printed by every process itself - then the column
 * header (tune_measure_cols.c), one row per size, "# Out of bounds values", "# Avg bus bandwidth" and
 * "# Collective test concluded: <prog>" (v2.16.7 on).  Only rank 0 prints the rest.  "Group" differs
 * between ranks when NCCL_TESTS_SPLIT splits them: each group is a communicator of its own, and the
 * table is rank 0's.  topo-exec prints the same table with "# topo-exec (...) collective: <name>"
 * and "# plan: algo A ..., proto P, channels C".  NCCL_DEBUG log lines are skipped.
 *
 * Launcher prefixes (tune_measure_prefix.c) split the file into streams, one per launcher rank (a
 * rank's stdout and stderr are one stream); each stream has tables of its own, so interleaved lines
 * of several ranks do not mix.  Where several ranks of one launcher printed tables (a test built
 * without MPI, each process running its own), those are copies, not repeats: only the lowest rank's
 * (the first host's) tables are read.  Several runs in one stream are separate tables.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_measure_internal.h"

#define MAX_HOSTS 4096
#define MAX_STREAMS 4096
#define HASH_SLOTS 8192

typedef struct {
    int stream;
    int coll;            /* -1 unknown */
    int nranks;          /* rank lines of rank 0's group */
    int group;           /* that group (-1 before the first rank line) */
    int other_groups;    /* rank lines of other groups (NCCL_TESTS_SPLIT) */
    int early;           /* rank lines of the 2017 form (each process prints its own) */
    int nhosts;
    char **hosts;
    int algo, proto, channels;
    int topotune;        /* a topo-exec table of our executor (not --engine nccl) */
    int exec_kind;       /* tt_exec_kind from the "#  Rank" lines ([host], [gpu, virtual], [gpu]) */
    int gpus_per_thread; /* "nThread T nGpus G": G GPUs driven by each thread (0 = not said) */
    int start_line;      /* its first line */
    int first_line;      /* its first row's line; 0 = no rows */
    int have_cols;
    tm_cols cols;
} table_t;

typedef struct {
    tm_prefix pfx;
    int first_line;
    int nrows;
    int open;            /* its open table, -1 none */
    int err_line;        /* a prefixed stream's first error (its later lines are ignored); 0 none */
    tt_status err_st;
    char *err_msg;
} stream_t;

typedef struct {
    int line, stream, rank;
    char host[64];
} early_rank_t;

typedef struct {
    const char *name;
    const tt_measure_opts *o;
    tt_measure_set *set;
    int from;
    stream_t *st;
    int nst;
    int slot[HASH_SLOTS]; /* stream index + 1 */
    table_t *tab;
    int ntab, captab;
    int *row_tab;         /* per row of the set from `from`: its table */
    int caprow;
    early_rank_t *er;
    int ner, caper;
    char **known_hosts;   /* pdsh-style prefixes seen in front of '#' lines */
    int nknown;
    int zero_rows;
} parser_t;

static tt_status oom(void) { return tt_error_set(TT_ERR_NOMEM, "out of memory reading measurements"); }

static void add_host(char ***hosts, int *n, const char *h)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*hosts)[i], h)) return;
    if (*n >= MAX_HOSTS) return;
    char **p = realloc(*hosts, (size_t)(*n + 1) * sizeof(*p));
    if (!p) return;
    *hosts = p;
    char *d = tt_strdup(h);
    if (d) (*hosts)[(*n)++] = d;
}

static void free_hosts(char **hosts, int n)
{
    for (int i = 0; i < n; i++) free(hosts[i]);
    free(hosts);
}

static unsigned key_hash(const tm_prefix *p)
{
    unsigned h = 2166136261u ^ (unsigned)p->kind;
    for (const char *s = p->group; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    h = (h ^ '|') * 16777619u;
    for (const char *s = p->member; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int same_stream(const tm_prefix *a, const tm_prefix *b)
{
    return a->kind == b->kind && !strcmp(a->group, b->group) && !strcmp(a->member, b->member);
}

/* the stream of a prefix, created on first sight; -1 when there are too many */
static int stream_of(parser_t *ps, const tm_prefix *p, int line)
{
    unsigned h = key_hash(p) % HASH_SLOTS;
    for (unsigned k = 0; k < HASH_SLOTS; k++, h = (h + 1) % HASH_SLOTS) {
        int s = ps->slot[h] - 1;
        if (s < 0) break;
        if (same_stream(&ps->st[s].pfx, p)) return s;
    }
    if (ps->nst >= MAX_STREAMS) return -1;
    if (ps->nst % 16 == 0) {
        stream_t *n = realloc(ps->st, (size_t)(ps->nst + 16) * sizeof(*n));
        if (!n) return -1;
        ps->st = n;
    }
    stream_t *s = &ps->st[ps->nst];
    memset(s, 0, sizeof *s);
    s->pfx = *p;
    s->first_line = line;
    s->open = -1;
    ps->slot[h] = ++ps->nst;
    return ps->nst - 1;
}

/* the stream's open table, a new one when it has none */
static table_t *open_table(parser_t *ps, int s, int line)
{
    if (ps->st[s].open >= 0) return &ps->tab[ps->st[s].open];
    if (ps->ntab == ps->captab) {
        int nc = ps->captab ? 2 * ps->captab : 8;
        table_t *n = realloc(ps->tab, (size_t)nc * sizeof(*n));
        if (!n) return NULL;
        ps->tab = n;
        ps->captab = nc;
    }
    table_t *t = &ps->tab[ps->ntab];
    memset(t, 0, sizeof *t);
    t->stream = s;
    t->coll = t->algo = t->proto = t->group = -1;
    t->start_line = line;
    ps->st[s].open = ps->ntab++;
    return t;
}

/* a line that starts a run: after rows it starts a new table */
static table_t *start_table(parser_t *ps, int s, int line)
{
    int o = ps->st[s].open;
    if (o >= 0 && ps->tab[o].first_line) ps->st[s].open = -1;
    return open_table(ps, s, line);
}

static tt_status parse_comment(parser_t *ps, int s, const char *c, int hash_col, int line)
{
    const char *name = ps->name, *p;
    char word[128];
    if (!strncmp(c, "# nThread", 9)) {
        table_t *t = start_table(ps, s, line);
        if (!t) return oom();
        const char *g = strstr(c, "nGpus");
        int ng;
        if (g && sscanf(g + 5, "%d", &ng) == 1 && ng > 0 && ng <= 1024) t->gpus_per_thread = ng;
        return TT_OK;
    }
    if (!strncmp(c, "# nccl-tests version", 20) || !strncmp(c, "# Using devices", 15))
        return start_table(ps, s, line) ? TT_OK : oom();
    if ((p = strstr(c, "Collective test starting:"))) {
        table_t *t = start_table(ps, s, line);
        if (!t) return oom();
        if (sscanf(p + 25, "%127s", word) == 1) {
            tt_coll cc;
            if (tm_coll_from_prog(word, &cc) != TT_OK)
                return tt_error_set(TT_ERR_PARSE, "%s:%d: unknown collective test '%s'", name, line, word);
            t->coll = cc;
        }
        return TT_OK;
    }
    if (!strncmp(c, "# topo-exec (", 13) && (p = strstr(c, "collective:"))) {
        table_t *t = start_table(ps, s, line);
        if (!t) return oom();
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
        int o = ps->st[s].open;
        if (o >= 0) {
            table_t *t = &ps->tab[o];
            tt_coll cc;
            if (t->coll < 0 && sscanf(p + 26, "%127s", word) == 1 && tm_coll_from_prog(word, &cc) == TT_OK) t->coll = cc;
            ps->st[s].open = -1;
        }
        return TT_OK;
    }
    /* the column header "#  size count type redop root time algbw busbw #wrong ..." (all forms) */
    {
        tm_cols cols;
        int is_hdr;
        tt_status st = tm_cols_header(c, name, line, &cols, &is_hdr);
        if (st != TT_OK) return st;
        if (is_hdr) {
            table_t *t = start_table(ps, s, line);
            if (!t) return oom();
            cols.tend[0] += hash_col;
            if (cols.nplace > 1) cols.tend[1] += hash_col;
            t->cols = cols;
            t->have_cols = 1;
            return TT_OK;
        }
    }
    int r, g, pid;
    int form = 0; /* 1: "Rank r Group g Pid", 2: "Rank r Pid", 3: "Rank r on host" (2017) */
    if (sscanf(c, "# Rank %d Group %d", &r, &g) == 2) form = 1;
    else if (sscanf(c, "# Rank %d Pid %d", &r, &pid) == 2) form = 2, g = 0;
    else if (sscanf(c, "# Rank %d on %127s", &r, word) == 2) form = 3, g = 0;
    if (form) {
        table_t *t = start_table(ps, s, line);
        if (!t) return oom();
        if (t->group < 0) t->group = g;
        if (g != t->group) {
            t->other_groups++;
            return TT_OK;
        }
        t->nranks++;
        if ((p = strstr(c, " on ")) && sscanf(p + 4, "%127s", word) == 1) add_host(&t->hosts, &t->nhosts, word);
        if (strstr(c, "[host]")) t->exec_kind = TT_RANKS_HOST;
        else if (strstr(c, "virtual")) t->exec_kind = TT_RANKS_VIRTUAL;
        else if (strstr(c, "[gpu")) t->exec_kind = TT_RANKS_GPU;
        if (form == 3) {
            t->early++;
            if (ps->ner == ps->caper) {
                int nc = ps->caper ? 2 * ps->caper : 64;
                early_rank_t *n = realloc(ps->er, (size_t)nc * sizeof(*n));
                if (!n) return oom();
                ps->er = n;
                ps->caper = nc;
            }
            early_rank_t *e = &ps->er[ps->ner++];
            e->line = line, e->stream = s, e->rank = r;
            snprintf(e->host, sizeof e->host, "%.63s", word);
        }
        return TT_OK;
    }
    if (!strncmp(c, "# plan: algo ", 13)) {
        table_t *t = open_table(ps, s, line);
        if (!t) return oom();
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

static tt_status parse_row(parser_t *ps, int s, const char *rest, int line)
{
    char row[4096], *tok[64];
    int tend[64], nt = 0;
    snprintf(row, sizeof row, "%s", rest);
    for (char *sv = NULL, *w = strtok_r(row, " \t\r", &sv); w; w = strtok_r(NULL, " \t\r", &sv)) {
        if (nt == 64)
            return tt_error_set(TT_ERR_PARSE, "%s:%d: result row has more than 64 columns", ps->name, line);
        tok[nt] = w;
        tend[nt++] = (int)(w - row) + (int)strlen(w);
    }
    table_t *t = open_table(ps, s, line);
    if (!t) return oom();
    tm_cols inferred;
    const tm_cols *c = &t->cols;
    tt_status st;
    if (!t->have_cols) {
        if ((st = tm_cols_infer(tok, nt, ps->name, line, &inferred)) != TT_OK) return st;
        c = &inferred;
    }
    tt_measurement m;
    memset(&m, 0, sizeof m);
    m.algo = m.proto = -1;
    m.time_oop_us = m.time_ip_us = -1;
    int zero, hint;
    if ((st = tm_cols_row(c, tok, tend, nt, ps->name, line, &m, &zero, &hint)) != TT_OK) return st;
    if (zero) {
        ps->zero_rows++;
        return TT_OK;
    }
    snprintf(m.where, sizeof m.where, "%s:%d", ps->name, line);
    m.nranks = -hint; /* a hint until the collective is known (finish_table) */
    int k = ps->set->n - ps->from;
    if (k == ps->caprow) {
        int nc = ps->caprow ? 2 * ps->caprow : 64;
        int *n = realloc(ps->row_tab, (size_t)nc * sizeof(*n));
        if (!n) return oom();
        ps->row_tab = n;
        ps->caprow = nc;
    }
    if ((st = tm_push(ps->set, &m)) != TT_OK) return st;
    ps->row_tab[k] = ps->st[s].open;
    if (!t->first_line) t->first_line = line;
    ps->st[s].nrows++;
    return TT_OK;
}

/* The 2017 form's rank lines come from every process: with launcher prefixes the other ranks'
 * lines are in their own streams.  Count the distinct ranks (and hosts) of the table's launcher
 * printed between the table's start and its first row. */
static void early_ranks(parser_t *ps, table_t *t)
{
    const tm_prefix *tp = &ps->st[t->stream].pfx;
    if (tp->kind == TM_PFX_NONE) return;
    int n = 0, *seen = malloc(sizeof(int) * (size_t)(ps->ner + 1));
    if (!seen) return;
    for (int i = 0; i < ps->ner; i++) {
        const early_rank_t *e = &ps->er[i];
        const tm_prefix *ep = &ps->st[e->stream].pfx;
        if (ep->kind != tp->kind || strcmp(ep->group, tp->group)) continue;
        if (e->line < t->start_line || e->line > t->first_line) continue;
        int dup = 0;
        for (int j = 0; j < n && !dup; j++) dup = seen[j] == e->rank;
        if (dup) continue;
        seen[n++] = e->rank;
        add_host(&t->hosts, &t->nhosts, e->host);
    }
    if (n > t->nranks) t->nranks = n;
    free(seen);
}

/* give a table's rows the collective, ranks and hosts */
static tt_status finish_table(parser_t *ps, int ti)
{
    table_t *t = &ps->tab[ti];
    if (!t->first_line) return TT_OK;
    int coll = t->coll >= 0 ? t->coll : ps->o->coll;
    if (coll < 0)
        return tt_error_set(TT_ERR_PARSE,
                            "%s:%d: this table has no '# Collective test starting: <prog>' line; cannot tell the "
                            "collective (give it with --collective)",
                            ps->name, t->first_line);
    if (t->early) early_ranks(ps, t);
    if (t->other_groups)
        TT_TRACE("tune", "%s:%d: ranks split into groups (NCCL_TESTS_SPLIT): %d ranks in rank 0's group read, %d in others",
                 ps->name, t->first_line, t->nranks, t->other_groups);
    const tt_measure_opts *o = ps->o;
    for (int i = ps->from; i < ps->set->n; i++) {
        if (ps->row_tab[i - ps->from] != ti) continue;
        tt_measurement *m = &ps->set->m[i];
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
        m->gpus_per_thread = t->gpus_per_thread;
    }
    return TT_OK;
}

/* Several ranks of one launcher printed tables: copies, each process ran the test itself.  Keep
 * the lowest rank's (the first host's); 1 for a stream whose rows stay (or whose error counts). */
static int stream_kept(const parser_t *ps, int s)
{
    const stream_t *a = &ps->st[s];
    if (a->pfx.kind == TM_PFX_NONE) return 1;
    for (int k = 0; k < ps->nst; k++) {
        const stream_t *b = &ps->st[k];
        if (k == s || !b->nrows || b->pfx.kind != a->pfx.kind || strcmp(b->pfx.group, a->pfx.group)) continue;
        /* ranks: the lowest (nccl-tests prints from rank 0); hosts: the first with rows */
        int better = a->pfx.num >= 0 && b->pfx.num >= 0 ? b->pfx.num < a->pfx.num
                                                         : !a->nrows || b->first_line < a->first_line;
        if (better) return 0;
    }
    return 1;
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

static tt_status finish(parser_t *ps)
{
    tt_status st = TT_OK;
    int dropped = 0, dropped_rows = 0;
    /* a prefixed stream's error counts unless that stream's lines are not read anyway (another
     * rank's table wins): stray lines of a rank that prints no table (its stderr) do not refuse
     * rank 0's table */
    int first_err = -1;
    for (int s = 0; s < ps->nst; s++) {
        if (!ps->st[s].err_line) continue;
        if (!stream_kept(ps, s)) {
            TT_WARN("tune", "%s (ignored: launcher %s '%s' printed no table that is read)",
                    ps->st[s].err_msg ? ps->st[s].err_msg : "?", ps->st[s].pfx.kind == TM_PFX_HOST ? "host" : "rank",
                    ps->st[s].pfx.member);
        } else if (first_err < 0 || ps->st[s].err_line < ps->st[first_err].err_line) {
            first_err = s;
        }
    }
    if (first_err >= 0)
        return tt_error_set(ps->st[first_err].err_st, "%s", ps->st[first_err].err_msg ? ps->st[first_err].err_msg : "?");
    const char *kept_member = NULL;
    for (int s = 0; s < ps->nst; s++) {
        if (!ps->st[s].nrows) continue;
        if (!stream_kept(ps, s)) {
            dropped++;
            dropped_rows += ps->st[s].nrows;
            for (int ti = 0; ti < ps->ntab; ti++)
                if (ps->tab[ti].stream == s) ps->tab[ti].first_line = 0; /* not finished, rows dropped below */
        } else if (ps->st[s].pfx.kind != TM_PFX_NONE) {
            kept_member = ps->st[s].pfx.member;
        }
    }
    if (dropped)
        TT_WARN("tune", "%s: %d more launcher rank(s) besides '%s' printed tables of their own (%d rows: each process ran "
                "the test itself); they are copies, not repeats: only rank '%s''s tables are read",
                ps->name, dropped, kept_member ? kept_member : "?", dropped_rows, kept_member ? kept_member : "?");
    for (int ti = 0; ti < ps->ntab && st == TT_OK; ti++) st = finish_table(ps, ti);
    if (st != TT_OK) return st;
    if (dropped) {
        int w = ps->from;
        for (int i = ps->from; i < ps->set->n; i++)
            if (ps->tab[ps->row_tab[i - ps->from]].first_line) ps->set->m[w++] = ps->set->m[i];
        ps->set->n = w;
    }
    infer_ranks(ps->set, ps->from);
    return TT_OK;
}

static int known_host(const parser_t *ps, const char *h)
{
    for (int i = 0; i < ps->nknown; i++)
        if (!strcmp(ps->known_hosts[i], h)) return 1;
    return 0;
}

tt_status tm_parse_text(const char *text, size_t len, const char *name, const tt_measure_opts *o, tt_measure_set *set,
                        int *zero_rows)
{
    parser_t *ps = calloc(1, sizeof *ps);
    if (!ps) return oom();
    ps->name = name;
    ps->o = o;
    ps->set = set;
    ps->from = set->n;
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
        tm_prefix pfx;
        const char *rest = tm_prefix_strip(buf, &pfx), *s = rest;
        while (*s == ' ' || *s == '\t' || *s == '\r') s++;
        if (pfx.kind == TM_PFX_HOST) {
            /* "word: " is a host prefix when that host prefixes nccl-tests' '#' lines */
            if (*s == '#') {
                if (!known_host(ps, pfx.member) && ps->nknown < MAX_STREAMS) {
                    char **n = realloc(ps->known_hosts, (size_t)(ps->nknown + 1) * sizeof(*n));
                    char *d = tt_strdup(pfx.member);
                    if (n) ps->known_hosts = n;
                    if (n && d) ps->known_hosts[ps->nknown++] = d;
                    else free(d);
                }
            } else if (!known_host(ps, pfx.member)) {
                rest = s = buf;
                pfx.kind = TM_PFX_NONE;
                pfx.member[0] = 0;
                pfx.num = -1;
                while (*s == ' ' || *s == '\t' || *s == '\r') s++;
            }
        }
        if (!*s) continue;
        if (strstr(s, "NCCL INFO") || strstr(s, "NCCL WARN") || strstr(s, "NCCL TRACE")) continue;
        int sidx = -1;
        if (*s == '#' || isdigit((unsigned char)*s) || !strncmp(s, "nThread ", 8)) {
            sidx = stream_of(ps, &pfx, line);
            if (sidx < 0) {
                st = tt_error_set(TT_ERR_PARSE, "%s:%d: more than %d launcher ranks / hosts prefix the lines", name,
                                  line, MAX_STREAMS);
                break;
            }
        }
        if (sidx >= 0 && ps->st[sidx].err_line) continue; /* a prefixed stream after its error */
        if (*s == '#') {
            st = parse_comment(ps, sidx, s, (int)(s - rest), line);
        } else if (isdigit((unsigned char)*s)) {
            st = parse_row(ps, sidx, rest, line);
        } else if (sidx >= 0) { /* 2017 - 2019: "nThread 1 nGpus 8 ..." without '#' starts a run */
            st = start_table(ps, sidx, line) ? TT_OK : oom();
        } else {
            TT_TRACE("tune", "%s:%d: line ignored (not a comment or result row)", name, line);
        }
        if (st == TT_ERR_PARSE && sidx >= 0 && pfx.kind != TM_PFX_NONE) {
            /* decided at the end: it may be a line of a rank whose output is not read */
            stream_t *es = &ps->st[sidx];
            es->err_line = line;
            es->err_st = st;
            es->err_msg = tt_strdup(tt_error_message());
            st = TT_OK;
        }
    }
    if (st == TT_OK) st = finish(ps);
    *zero_rows += ps->zero_rows;
    for (int i = 0; i < ps->ntab; i++) free_hosts(ps->tab[i].hosts, ps->tab[i].nhosts);
    for (int i = 0; i < ps->nst; i++) free(ps->st[i].err_msg);
    for (int i = 0; i < ps->nknown; i++) free(ps->known_hosts[i]);
    free(ps->known_hosts);
    free(ps->tab);
    free(ps->st);
    free(ps->row_tab);
    free(ps->er);
    free(ps);
    return st;
}
