/*
 * exec_slurm.c - Slurm's compressed host lists ("node[01-03,07],gpu5") and the rendezvous a
 * Slurm step implies (srun without MASTER_ADDR): the first host of the step's node list, a
 * port from TOPOTUNE_MASTER_PORT / MASTER_PORT or derived from the job and step ids.
 * tt_comm_init_env (exec_comm.c) falls back to it; docs/exec.md, "Slurm".
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

/* engineering choice: far more hosts than any list we expect, small enough to catch a typo like [1-99999999] */
#define HOSTLIST_MAX 1000000

typedef struct {
    int want;      /* index wanted (-1: count only) */
    int seen;      /* hosts enumerated so far */
    char *out;
    size_t n;
    tt_status st;
} walk;

/* One item (no top-level comma): expand its bracket groups left to right. */
static void expand(walk *w, char *buf, size_t blen, const char *s, const char *end)
{
    if (w->st != TT_OK || (w->want >= 0 && w->seen > w->want)) return;
    const char *lb = memchr(s, '[', (size_t)(end - s));
    if (!lb) {
        size_t add = (size_t)(end - s);
        if (blen + add >= 256) {
            w->st = tt_error_set(TT_ERR_PARSE, "host list: a host name is longer than 255 characters");
            return;
        }
        if (w->want == w->seen) {
            if (blen + add >= w->n) {
                w->st = tt_error_set(TT_ERR_LIMIT, "host list: host name does not fit %zu bytes", w->n);
                return;
            }
            memcpy(w->out, buf, blen);
            memcpy(w->out + blen, s, add);
            w->out[blen + add] = '\0';
        }
        if (++w->seen > HOSTLIST_MAX) w->st = tt_error_set(TT_ERR_LIMIT, "host list: more than %d hosts", HOSTLIST_MAX);
        return;
    }
    const char *rb = memchr(lb, ']', (size_t)(end - lb));
    if (!rb) {
        w->st = tt_error_set(TT_ERR_PARSE, "host list: '[' without ']'");
        return;
    }
    size_t pre = (size_t)(lb - s);
    if (blen + pre >= 256) {
        w->st = tt_error_set(TT_ERR_PARSE, "host list: a host name is longer than 255 characters");
        return;
    }
    memcpy(buf + blen, s, pre);
    /* ranges: a, a-b, separated by commas; the width of a keeps leading zeros (01-03) */
    const char *p = lb + 1;
    if (p == rb) {
        w->st = tt_error_set(TT_ERR_PARSE, "host list: empty []");
        return;
    }
    while (p < rb && w->st == TT_OK) {
        const char *q = p;
        while (q < rb && isdigit((unsigned char)*q)) q++;
        if (q == p || q - p > 9) {
            w->st = tt_error_set(TT_ERR_PARSE, "host list: '%.*s' in [] is not a number or range", (int)(rb - p), p);
            return;
        }
        int width = (int)(q - p);
        long lo = strtol(p, NULL, 10), hi = lo;
        if (*q == '-') {
            const char *r = ++q;
            while (q < rb && isdigit((unsigned char)*q)) q++;
            if (q == r || q - r > 9) {
                w->st = tt_error_set(TT_ERR_PARSE, "host list: range without an end in [%.*s]", (int)(rb - lb - 1), lb + 1);
                return;
            }
            hi = strtol(r, NULL, 10);
            if (hi < lo) {
                w->st = tt_error_set(TT_ERR_PARSE, "host list: range %ld-%ld goes down", lo, hi);
                return;
            }
        }
        if (q < rb && *q != ',') {
            w->st = tt_error_set(TT_ERR_PARSE, "host list: unexpected '%c' in [%.*s]", *q, (int)(rb - lb - 1), lb + 1);
            return;
        }
        if (hi - lo >= HOSTLIST_MAX) {
            w->st = tt_error_set(TT_ERR_LIMIT, "host list: more than %d hosts", HOSTLIST_MAX);
            return;
        }
        for (long v = lo; v <= hi && w->st == TT_OK && (w->want < 0 || w->seen <= w->want); v++) {
            char num[16];
            int k = snprintf(num, sizeof num, "%0*ld", width, v);
            if (blen + pre + (size_t)k >= 256) {
                w->st = tt_error_set(TT_ERR_PARSE, "host list: a host name is longer than 255 characters");
                return;
            }
            memcpy(buf + blen + pre, num, (size_t)k);
            expand(w, buf, blen + pre + (size_t)k, rb + 1, end);
        }
        p = q < rb ? q + 1 : q;
    }
}

tt_status tt_hostlist_nth(const char *list, int i, char *out, size_t n, int *count)
{
    if (!list || !*list) return tt_error_set(TT_ERR_INVALID, "host list: empty");
    if (i >= 0 && (!out || n == 0)) return tt_error_set(TT_ERR_INVALID, "tt_hostlist_nth: no output buffer");
    walk w = {i, 0, out, n, TT_OK};
    char buf[256];
    const char *s = list;
    while (*s && w.st == TT_OK) {
        /* an item ends at the first comma outside brackets */
        const char *e = s;
        int depth = 0;
        for (; *e && (depth || *e != ','); e++) {
            if (*e == '[') depth++;
            else if (*e == ']' && --depth < 0) return tt_error_set(TT_ERR_PARSE, "host list '%s': ']' without '['", list);
        }
        if (e == s) return tt_error_set(TT_ERR_PARSE, "host list '%s': empty item", list);
        expand(&w, buf, 0, s, e);
        s = *e ? e + 1 : e;
        if (!*s && *e == ',') return tt_error_set(TT_ERR_PARSE, "host list '%s': ends with ','", list);
    }
    if (w.st != TT_OK) return w.st;
    if (i >= w.seen && i >= 0)
        return tt_error_set(TT_ERR_INVALID, "host list '%s' has %d host(s); no host %d", list, w.seen, i);
    if (count) {
        if (i < 0) {
            *count = w.seen;
        } else { /* the walk stopped at host i: count them all */
            tt_status st = tt_hostlist_nth(list, -1, NULL, 0, count);
            if (st != TT_OK) return st;
        }
    }
    return TT_OK;
}

/* The step's node list: SLURM_STEP_NODELIST (srun), else the job's. */
static const char *slurm_nodelist(void)
{
    static const char *const names[] = {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        const char *v = tt_setting(names[k]);
        if (v && *v) return v;
    }
    return NULL;
}

int tt_env_slurm_step(void)
{
    const char *rv = NULL;
    return tt_env_rank_vars(&rv, NULL) && !strcmp(rv, "SLURM_PROCID") && slurm_nodelist() != NULL;
}

tt_status tt_slurm_master(char *host_port, size_t n)
{
    const char *list = slurm_nodelist();
    if (!list)
        return tt_error_set(TT_ERR_INVALID, "no MASTER_ADDR and no Slurm node list (SLURM_STEP_NODELIST, "
                                            "SLURM_JOB_NODELIST): set MASTER_ADDR and MASTER_PORT");
    char host[256];
    tt_status st = tt_hostlist_nth(list, 0, host, sizeof host, NULL);
    if (st != TT_OK) { /* a launcher's variable, i.e. the user's setting: invalid input */
        char why[300];
        snprintf(why, sizeof why, "%s", tt_error_message());
        return tt_error_set(TT_ERR_INVALID, "Slurm node list: %s", why);
    }
    long port = 0;
    const char *ps = tt_setting("TOPOTUNE_MASTER_PORT");
    if (!ps || !*ps) ps = tt_setting("MASTER_PORT");
    if (ps && *ps) {
        char *e;
        port = strtol(ps, &e, 10);
        if (*e || port < 1 || port > 65535)
            return tt_error_set(TT_ERR_INVALID, "%s='%s' is not a port in 1..65535",
                                tt_setting("TOPOTUNE_MASTER_PORT") ? "TOPOTUNE_MASTER_PORT" : "MASTER_PORT", ps);
    } else {
        /* engineering choice: 12000..31999, below Linux's ephemeral ports; the job id and the step id
         * spread concurrent steps over it (every task of a step computes the same port) */
        const char *js = tt_setting("SLURM_JOB_ID"), *ss = tt_setting("SLURM_STEP_ID");
        if (!ss) ss = tt_setting("SLURM_STEPID");
        unsigned long job = js ? strtoul(js, NULL, 10) : 0, step = ss ? strtoul(ss, NULL, 10) : 0;
        port = 12000 + (long)((job * 8 + step % 8) % 20000);
    }
    if ((size_t)snprintf(host_port, n, "%s:%ld", host, port) >= n)
        return tt_error_set(TT_ERR_LIMIT, "master address '%s:%ld' does not fit %zu bytes", host, port, n);
    return TT_OK;
}
