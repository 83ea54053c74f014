/*
 * tune_measure_facts.c - our fact tables of published results ("topotune published result,
 * version 1"; the format is specified in tests/fixtures/published/README.md):
 *
 *   # topotune published result, version 1
 *   # source: / # hardware: / # software: / # run: / # health: / # topo-tune:   (all required)
 *   collective allreduce          (required, before the figures)
 *   ranks 16                      (required)
 *   nodes 2                       (required)
 *   algo -                        ('-' = NCCL's choice, or the forced NCCL algorithm)
 *   proto -                       ('-' = NCCL's choice, or ll / ll128 / simple)
 *   gpus_per_thread 8             (optional: nccl-tests -g, the GPUs one thread drives; else the
 *                                  '-g N' of the '# run:' line, else one)
 *   # bytes  oop_us  ip_us  oop_busbw
 *   8        30.12   29.80  0.00
 *   16       -       -      0.01     ('-' where the source gives no figure)
 *
 * A row without times gets its time from the busbw: time = bytes / (busbw / factor) / 1000 us,
 * factor 2(n-1)/n AllReduce, (n-1)/n AllGather / ReduceScatter, 1 Broadcast / Reduce.  One sweep
 * per file.  Every error names file:line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_measure_internal.h"

static const char *const required[] = {"source", "hardware", "software", "run", "health", "topo-tune"};
#define NREQ ((int)(sizeof required / sizeof required[0]))

typedef struct {
    const char *name;
    int line;
    int coll, ranks, nodes, algo, proto; /* -2: not given yet (algo/proto default to -1) */
    int key_line[5];                      /* collective ranks nodes algo proto */
    int req_line[NREQ];
    int figures;                          /* figure lines seen */
    int gpus_per_thread;                  /* 'gpus_per_thread N' (0 = not given) */
    int run_gpus;                         /* nccl-tests' -g N in the '# run:' line (0 = not there) */
    int gpt_line;
} facts_t;

static tt_status perr(const facts_t *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tt_status perr(const facts_t *f, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tt_error_set(TT_ERR_PARSE, "%s:%d: %s", f->name, f->line, msg);
}

/* '-' (absent: *v = -1) or a number >= 0 (> 0 when positive) */
static int figure(const char *tok, int positive, double *v)
{
    if (!strcmp(tok, "-")) {
        *v = -1;
        return 1;
    }
    char *end;
    errno = 0;
    double x = strtod(tok, &end);
    if (end == tok || *end || errno || !isfinite(x) || x < 0 || (positive && x == 0)) return 0;
    *v = x;
    return 1;
}

static int int_value(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return 0;
    *out = (int)v;
    return 1;
}

static tt_status comment(facts_t *f, const char *c)
{
    const char *p = c + 1;
    while (*p == ' ' || *p == '\t') p++;
    for (int k = 0; k < NREQ; k++) {
        size_t n = strlen(required[k]);
        if (strncmp(p, required[k], n) || p[n] != ':') continue;
        const char *v = p + n + 1;
        while (*v == ' ' || *v == '\t' || *v == '\r') v++;
        if (f->req_line[k]) return perr(f, "a second '# %s:' line", required[k]);
        if (!*v) return perr(f, "'# %s:' says nothing (write 'unknown' where the source does not say)", required[k]);
        f->req_line[k] = f->line;
        if (!strcmp(required[k], "run")) {
            /* nccl-tests' "-g N" (or "--ngpus N" / "--ngpus=N"): the GPUs one thread drives */
            char buf[512], *sv = NULL;
            snprintf(buf, sizeof buf, "%s", v);
            int want = 0;
            for (char *w = strtok_r(buf, " \t\r;,()", &sv); w; w = strtok_r(NULL, " \t\r;,()", &sv)) {
                int ng;
                if (want && int_value(w, 1, 1024, &ng)) {
                    f->run_gpus = ng;
                    break;
                }
                want = !strcmp(w, "-g") || !strcmp(w, "--ngpus");
                if (!strncmp(w, "--ngpus=", 8) && int_value(w + 8, 1, 1024, &ng)) {
                    f->run_gpus = ng;
                    break;
                }
            }
        }
        return TT_OK;
    }
    return TT_OK; /* other comments: free text */
}

static tt_status key_line(facts_t *f, char *s)
{
    static const char *const keys[] = {"collective", "ranks", "nodes", "algo", "proto"};
    char *sv = NULL, *k = strtok_r(s, " \t\r", &sv), *v = strtok_r(NULL, " \t\r", &sv), *x = strtok_r(NULL, " \t\r", &sv);
    if (!strcmp(k, "gpus_per_thread")) {
        if (f->figures) return perr(f, "'%s' after the figures (one sweep per file)", k);
        if (f->gpt_line) return perr(f, "a second '%s' line", k);
        if (!v || x || !int_value(v, 1, 1024, &f->gpus_per_thread))
            return perr(f, "gpus_per_thread takes one integer in 1..1024 (nccl-tests -g)");
        f->gpt_line = f->line;
        return TT_OK;
    }
    int ki = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(k, keys[i])) ki = i;
    if (ki < 0)
        return perr(f, "unknown line '%s' (expected collective, ranks, nodes, algo, proto, a '#' comment or a figure line)",
                    k);
    if (f->figures) return perr(f, "'%s' after the figures (one sweep per file)", k);
    if (f->key_line[ki]) return perr(f, "a second '%s' line", k);
    if (!v || x) return perr(f, "'%s' takes one value", k);
    f->key_line[ki] = f->line;
    switch (ki) {
    case 0: {
        tt_coll c;
        if (tt_coll_parse(v, &c) != TT_OK)
            return perr(f, "unknown collective '%s' (allreduce, allgather, reducescatter, broadcast, reduce)", v);
        f->coll = c;
        return TT_OK;
    }
    case 1:
        if (!int_value(v, 1, 1 << 24, &f->ranks)) return perr(f, "ranks '%s' is not a positive integer", v);
        return TT_OK;
    case 2:
        if (!int_value(v, 1, 1 << 20, &f->nodes)) return perr(f, "nodes '%s' is not a positive integer", v);
        return TT_OK;
    case 3: {
        tt_algo a;
        if (!strcmp(v, "-")) {
            f->algo = -1;
            return TT_OK;
        }
        if (tt_algo_parse(v, &a) != TT_OK || a == TT_ALGO_DEFAULT || a == TT_ALGO_RHD || a == TT_ALGO_RD ||
            a == TT_ALGO_HIER)
            return perr(f,
                        "algo '%s' is not an NCCL algorithm ('-' when NCCL chose; ring, tree, nvls, nvls_tree, pat, "
                        "collnet_direct, collnet_chain)",
                        v);
        f->algo = a;
        return TT_OK;
    }
    default: {
        tt_proto p;
        if (!strcmp(v, "-")) {
            f->proto = -1;
            return TT_OK;
        }
        if (tt_proto_parse(v, &p) != TT_OK || p == TT_PROTO_DEFAULT)
            return perr(f, "proto '%s' is not an NCCL protocol ('-' when NCCL chose; ll, ll128, simple)", v);
        f->proto = p;
        return TT_OK;
    }
    }
}

/* before the first figure: everything the figures need */
static tt_status header_done(facts_t *f)
{
    for (int k = 0; k < NREQ; k++)
        if (!f->req_line[k]) return perr(f, "no '# %s:' line before the figures (required)", required[k]);
    static const char *const need[] = {"collective", "ranks", "nodes"};
    for (int k = 0; k < 3; k++)
        if (!f->key_line[k]) return perr(f, "no '%s' line before the figures (required)", need[k]);
    if (f->nodes > f->ranks) {
        char a[16], b[16];
        snprintf(a, sizeof a, "%d", f->nodes);
        snprintf(b, sizeof b, "%d", f->ranks);
        return perr(f, "nodes %s is more than ranks %s", a, b);
    }
    return TT_OK;
}

static tt_status figure_line(facts_t *f, char *s, const tt_measure_opts *o, tt_measure_set *set, int *zero_rows)
{
    tt_status st;
    if (!f->figures++ && (st = header_done(f)) != TT_OK) return st;
    char *tok[5], *sv = NULL;
    int nt = 0;
    for (char *w = strtok_r(s, " \t\r", &sv); w; w = strtok_r(NULL, " \t\r", &sv)) {
        if (nt < 5) tok[nt] = w;
        nt++;
    }
    if (nt != 4) {
        char n[16];
        snprintf(n, sizeof n, "%d", nt);
        return perr(f, "figure line has %s columns; expected 'bytes oop_us ip_us oop_busbw' ('-' where absent)", n);
    }
    char *end;
    errno = 0;
    unsigned long long bytes = strtoull(tok[0], &end, 10);
    if (!isdigit((unsigned char)tok[0][0]) || *end || errno) return perr(f, "bytes '%s' is not an integer", tok[0]);
    if (bytes == 0) { /* nothing is timed at size 0 */
        (*zero_rows)++;
        return TT_OK;
    }
    double oop, ip, bus;
    if (!figure(tok[1], 1, &oop)) return perr(f, "oop_us '%s' is not a time above 0 or '-'", tok[1]);
    if (!figure(tok[2], 1, &ip)) return perr(f, "ip_us '%s' is not a time above 0 or '-'", tok[2]);
    if (!figure(tok[3], 0, &bus)) return perr(f, "oop_busbw '%s' is not a bandwidth (GB/s) or '-'", tok[3]);
    tt_measurement m;
    memset(&m, 0, sizeof m);
    m.coll = (tt_coll)f->coll;
    m.bytes = bytes;
    m.nranks = o->nranks > 0 ? o->nranks : f->ranks;
    m.nodes = o->nodes > 0 ? o->nodes : f->nodes;
    m.algo = f->algo;
    m.proto = f->proto;
    m.exec_kind = TT_RANKS_NONE;
    m.gpus_per_thread = f->gpus_per_thread > 0 ? f->gpus_per_thread : f->run_gpus;
    m.time_oop_us = oop;
    m.time_ip_us = ip;
    double factor = tt_busbw_factor(m.coll, m.nranks);
    if (oop < 0 && ip < 0) {
        if (!(bus > 0)) return perr(f, "a row needs a time or a busbw above 0");
        if (!(factor > 0)) return perr(f, "no time, and a busbw cannot give one for a single rank");
        m.time_oop_us = (double)bytes / (bus / factor) / 1000.0;
    }
    tm_finish_times(&m);
    /* busbw at time_us: the published one when that is the out-of-place time */
    if (bus >= 0 && m.time_us == m.time_oop_us) m.busbw = bus;
    else m.busbw = (double)bytes / (m.time_us * 1e3) * factor;
    snprintf(m.where, sizeof m.where, "%s:%d", f->name, f->line);
    return tm_push(set, &m);
}

tt_status tm_parse_facts(const char *text, size_t len, const char *name, const tt_measure_opts *o, tt_measure_set *set,
                         int *zero_rows)
{
    facts_t f;
    memset(&f, 0, sizeof f);
    f.name = name;
    f.algo = f.proto = -1;
    size_t pos = 0;
    char buf[4096];
    tt_status st = TT_OK;
    int first = 1;
    while (pos < len && st == TT_OK) {
        f.line++;
        size_t e = pos;
        while (e < len && text[e] != '\n') e++;
        size_t l = e - pos;
        if (l >= sizeof buf) return tt_error_set(TT_ERR_PARSE, "%s:%d: line longer than %zu bytes", name, f.line, sizeof buf - 1);
        memcpy(buf, text + pos, l);
        buf[l] = 0;
        pos = e + 1;
        char *s = buf;
        while (*s == ' ' || *s == '\t' || *s == '\r') s++;
        if (!*s) continue;
        if (first) {
            first = 0;
            int v;
            const char *p = s + strlen(TM_FACTS_MAGIC);
            if (sscanf(p, ", version %d", &v) != 1)
                return tt_error_set(TT_ERR_PARSE, "%s:%d: expected '%s, version 1'", name, f.line, TM_FACTS_MAGIC);
            if (v != 1)
                return tt_error_set(TT_ERR_PARSE, "%s:%d: topotune published result version %d; this reader knows version 1",
                                    name, f.line, v);
            continue;
        }
        if (*s == '#') st = comment(&f, s);
        else if (isdigit((unsigned char)*s)) st = figure_line(&f, s, o, set, zero_rows);
        else st = key_line(&f, s);
    }
    if (st == TT_OK && !f.figures)
        st = tt_error_set(TT_ERR_PARSE, "%s:%d: no figure lines ('bytes oop_us ip_us oop_busbw')", name, f.line);
    return st;
}
