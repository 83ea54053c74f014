/*
 * tune_measure_json.c - topo-exec -J and nccl-tests -J JSON results.
 *
 * topo-exec (docs/cli-topo-exec.md): {"tool":"topo-exec", "config":
 *   {"collective", "nranks", "transport", "proto_requested", ...}, "results": [{"size", "algo",
 *   ["proto", "channels" (topo-exec --validate),] "out_of_place": {"time", "alg_bw", "bus_bw",
 *   "nwrong"}, "in_place": {...}}]}.
 *   Host transports (shm, tcp) run the simple protocol on one channel (tt_exec.h); "shm" is
 *   one node.
 * nccl-tests -J (v2.17.3 on; github.com/NVIDIA/nccl-tests src/util.cu, read for the facts only):
 *   {"version", "start_time", "args": [prog, ...], "env", "nccl_version", "config": {"nthreads",
 *   "ngpus", ..., "devices": [{"rank", "group", "pid", "hostname", "device", ...}]}, "results":
 *   [{"size", "count", "type", "redop", "root" (a string), "out_of_place": {"time" | "cpu_time",
 *   "alg_bw", "bus_bw", "nwrong"} or null, "in_place": {...}, "actual_iterations",
 *   "experiment_name"}], "out_of_bounds", "average_bus_bandwidth", "errors", "end_time"}.
 *   Schema version 1 (v2.17.3 - v2.19.1; "average_bus_bandwidith": {"bandwidith"} before v2.17.9),
 *   version 2 (v2.19.2 - v2.19.5) and 3 (v2.19.6 on) differ only in what this reader does not read:
 *   version 2 adds per-iteration statistics ("out_of_place_per_iter", "in_place_per_iter",
 *   config.per_iter_timing, -I 1), version 3 their "skipped_iterations" and config.per_iter_skip.
 *   config.devices lists ONE entry per process (its first rank: rank = process x nthreads x ngpus),
 *   so the ranks are entries x nthreads x ngpus; a list with one entry per rank (ranks 0, 1, 2, ...)
 *   is read as such.  The collective comes from the program name (all_reduce_perf).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "tune_internal.h"
#include "tune_measure_internal.h"

static tt_status placement(const cJSON *r, const char *key, const char *where, double *us, double *busbw)
{
    *us = -1;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(r, key);
    if (!p || cJSON_IsNull(p)) return TT_OK;
    if (!cJSON_IsObject(p)) return tt_error_set(TT_ERR_PARSE, "%s.%s: expected an object", where, key);
    if (cJSON_GetObjectItemCaseSensitive(p, "cpu_time") && !cJSON_GetObjectItemCaseSensitive(p, "time"))
        return tt_error_set(TT_ERR_PARSE,
                            "%s.%s: has cpu_time (nccl-tests -C reports launch time, not latency); rerun without -C",
                            where, key);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "time");
    if (!t || cJSON_IsNull(t)) return TT_OK;
    if (!cJSON_IsNumber(t)) return tt_error_set(TT_ERR_PARSE, "%s.%s.time: expected a number", where, key);
    if (!(t->valuedouble > 0) || !isfinite(t->valuedouble))
        return tt_error_set(TT_ERR_PARSE, "%s.%s.time=%g must be above 0", where, key, t->valuedouble);
    *us = t->valuedouble;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(p, "bus_bw");
    if (cJSON_IsNumber(b)) *busbw = b->valuedouble;
    return TT_OK;
}

static tt_status results(const cJSON *root, const char *name, const tt_measurement *proto_m, int exec,
                         tt_measure_set *set, int *zero_rows)
{
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "results");
    if (!cJSON_IsArray(res)) {
        /* nccl-tests stops early on errors and lists them */
        const cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "errors"), 0);
        if (cJSON_IsString(e0))
            return tt_error_set(TT_ERR_PARSE, "%s: \"results\" must be an array (the run reported errors[0]: %s)", name,
                                e0->valuestring);
        return tt_error_set(TT_ERR_PARSE, "%s: \"results\" must be an array", name);
    }
    int i = -1;
    const cJSON *r;
    cJSON_ArrayForEach(r, res) {
        i++;
        char where[96];
        snprintf(where, sizeof where, "%s: results[%d]", name, i);
        if (!cJSON_IsObject(r)) return tt_error_set(TT_ERR_PARSE, "%s: expected an object", where);
        tt_measurement m = *proto_m;
        const cJSON *sz = cJSON_GetObjectItemCaseSensitive(r, "size");
        if (!cJSON_IsNumber(sz) || sz->valuedouble < 0 || sz->valuedouble > 1e18 || sz->valuedouble != floor(sz->valuedouble))
            return tt_error_set(TT_ERR_PARSE, "%s.size: expected a positive integer", where);
        if (sz->valuedouble == 0) { /* nccl-tests prints them (-b 0, all_gather below nranks elements) */
            (*zero_rows)++;
            continue;
        }
        m.bytes = (uint64_t)sz->valuedouble;
        if (exec) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(r, "algo");
            if (cJSON_IsString(a) && strcmp(a->valuestring, "default")) {
                tt_algo al;
                if (tt_measure_algo_parse(a->valuestring, &al) != TT_OK)
                    return tt_error_set(TT_ERR_PARSE, "%s.algo: unknown algorithm '%s'", where, a->valuestring);
                m.algo = al;
            } else if (a && !cJSON_IsString(a) && !cJSON_IsNull(a)) {
                return tt_error_set(TT_ERR_PARSE, "%s.algo: expected a string", where);
            }
            /* per-result protocol and channels (topo-exec --validate runs several candidates in one
             * file); they override config.proto_requested / config.channels */
            const cJSON *pr = cJSON_GetObjectItemCaseSensitive(r, "proto");
            if (cJSON_IsString(pr) && strcmp(pr->valuestring, "default")) {
                tt_proto p;
                if (tt_proto_parse(pr->valuestring, &p) != TT_OK)
                    return tt_error_set(TT_ERR_PARSE, "%s.proto: unknown protocol '%s'", where, pr->valuestring);
                m.proto = p;
            } else if (pr && !cJSON_IsString(pr) && !cJSON_IsNull(pr)) {
                return tt_error_set(TT_ERR_PARSE, "%s.proto: expected a string", where);
            }
            const cJSON *ch = cJSON_GetObjectItemCaseSensitive(r, "channels");
            if (ch && !cJSON_IsNull(ch)) {
                if (!cJSON_IsNumber(ch) || ch->valuedouble < 1 || ch->valuedouble > 64 ||
                    ch->valuedouble != floor(ch->valuedouble))
                    return tt_error_set(TT_ERR_PARSE, "%s.channels: expected an integer in 1..64", where);
                m.channels = (int)ch->valuedouble;
            }
        }
        double b0 = 0, b1 = 0;
        tt_status st;
        if ((st = placement(r, "out_of_place", where, &m.time_oop_us, &b0)) != TT_OK) return st;
        if ((st = placement(r, "in_place", where, &m.time_ip_us, &b1)) != TT_OK) return st;
        if (m.time_oop_us <= 0 && m.time_ip_us <= 0) {
            TT_WARN("tune", "%s: no time (failed run?); row skipped", where);
            continue;
        }
        tm_finish_times(&m);
        m.busbw = m.time_us == m.time_oop_us ? b0 : b1;
        snprintf(m.where, sizeof m.where, "%s", where);
        if ((st = tm_push(set, &m)) != TT_OK) return st;
    }
    return TT_OK;
}


/* Is config.transport one of topo-exec's host transports?  Those write
 * tt_comm_transport(): table names joined by '+' ("shm", "tcp", "shm+ib+tcp").
 * Any such token counts, so a new exec transport needs no change here (tune
 * does not see exec's table); the GPU executor writes "gpu". */
static int tm_host_transport(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > 64 || !strcmp(s, "gpu") || s[0] == '+' || s[n - 1] == '+' || strstr(s, "++"))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '+'))
            return 0;
    return 1;
}

/* ranks and hosts of an nccl-tests run from config.devices (one entry per process, or per rank) */
static tt_status nccl_tests_ranks(const cJSON *cfg, const char *name, tt_measurement *m)
{
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(cfg, "devices");
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive(cfg, "nthreads");
    const cJSON *ng = cJSON_GetObjectItemCaseSensitive(cfg, "ngpus");
    int per = 0; /* ranks per process */
    if (cJSON_IsNumber(nt) && cJSON_IsNumber(ng)) {
        if (ng->valuedouble == 0) /* nccl-tests' form, host ranks: topotune's drop-in (all_reduce_perf -g 0) */
            return tt_error_set(TT_ERR_PARSE, "%s: config.ngpus 0: host ranks of topotune's nccl-tests drop-in, "
                                "written in nccl-tests' form; rerun it with --topotune for a file that says what ran",
                                name);
        if (nt->valuedouble < 1 || ng->valuedouble < 1 || nt->valuedouble * ng->valuedouble > 1e6 ||
            nt->valuedouble != floor(nt->valuedouble) || ng->valuedouble != floor(ng->valuedouble))
            return tt_error_set(TT_ERR_PARSE, "%s: config.nthreads x config.ngpus: expected positive integers", name);
        per = (int)(nt->valuedouble * ng->valuedouble);
        m->gpus_per_thread = (int)ng->valuedouble; /* nccl-tests -g: the GPUs each thread drives */
    }
    if (!cJSON_IsArray(dev) || cJSON_GetArraySize(dev) == 0) {
        if (per) {
            m->nranks = per;
            TT_WARN("tune", "%s: no config.devices; assuming one process with %d ranks", name, per);
        }
        return TT_OK;
    }
    int n = cJSON_GetArraySize(dev), by_rank = 1, by_proc = 1, g0 = 0, split = 0;
    if (!per) per = 1; /* not said: the entries can only be read as ranks */
    /* "rank" tells the listing: process p's first rank is p x per; a list of every rank counts 0, 1, 2 .. */
    for (int i = 0; i < n; i++) {
        const cJSON *d = cJSON_GetArrayItem(dev, i);
        if (!cJSON_IsObject(d)) return tt_error_set(TT_ERR_PARSE, "%s: config.devices[%d]: expected an object", name, i);
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(d, "rank"), *g = cJSON_GetObjectItemCaseSensitive(d, "group");
        if (r && !cJSON_IsNumber(r))
            return tt_error_set(TT_ERR_PARSE, "%s: config.devices[%d].rank: expected a number", name, i);
        if (r && r->valuedouble != (double)i * per) by_proc = 0;
        if (r && r->valuedouble != (double)i) by_rank = 0;
        if (!r) by_rank = 0;
        if (cJSON_IsNumber(g)) {
            if (i == 0) g0 = (int)g->valuedouble;
            else if ((int)g->valuedouble != g0) split = i;
        }
    }
    if (!by_proc && !by_rank)
        return tt_error_set(TT_ERR_PARSE,
                            "%s: config.devices[].rank: neither one entry per process (ranks 0, %d, %d, ...) nor one per "
                            "rank (0, 1, 2, ...)",
                            name, per, 2 * per);
    if (by_proc) by_rank = 0; /* one entry (a process with -g 8) or one rank per process: per process */
    if (split && per > 1 && by_proc)
        return tt_error_set(TT_ERR_PARSE,
                            "%s: config.devices[%d].group: the ranks were split into groups (NCCL_TESTS_SPLIT) and the "
                            "file lists one rank per process, so the size of rank 0's communicator is unknown; read "
                            "the text output (it lists every rank) instead",
                            name, split);
    /* rank 0's group (all ranks without NCCL_TESTS_SPLIT), its distinct host names */
    int nr = 0, nh = 0;
    char **hosts = calloc((size_t)(n > 0 ? n : 1), sizeof(*hosts));
    if (!hosts) return tt_error_set(TT_ERR_NOMEM, "out of memory reading measurements");
    for (int i = 0; i < n; i++) {
        const cJSON *d = cJSON_GetArrayItem(dev, i);
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(d, "group"), *h = cJSON_GetObjectItemCaseSensitive(d, "hostname");
        if (cJSON_IsNumber(g) && (int)g->valuedouble != g0) continue;
        nr++;
        if (!cJSON_IsString(h)) {
            nh = -1;
            continue;
        }
        int seen = 0;
        for (int j = 0; j < nh && !seen; j++) seen = !strcmp(hosts[j], h->valuestring);
        if (!seen && nh >= 0) hosts[nh++] = h->valuestring;
    }
    free(hosts);
    m->nranks = by_rank ? nr : nr * per;
    m->nodes = nh > 0 ? nh : 0;
    return TT_OK;
}

tt_status tm_parse_json(const char *text, size_t len, const char *name, const tt_measure_opts *o, tt_measure_set *set,
                        int *zero_rows)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        const char *e = cJSON_GetErrorPtr();
        return tt_error_set(TT_ERR_PARSE, "%s:%d: not valid JSON", name,
                            e && e >= text && e <= text + len ? tune_json_line(text, e, len) : 1);
    }
    for (const char *q = end; q && q < text + len; q++)
        if (*q != ' ' && *q != '\n' && *q != '\r' && *q != '\t') {
            int l = tune_json_line(text, q, len);
            cJSON_Delete(root);
            return tt_error_set(TT_ERR_PARSE, "%s:%d: text after the JSON document", name, l);
        }
    tt_status st = TT_OK;
    tt_measurement m;
    memset(&m, 0, sizeof m);
    m.algo = m.proto = -1;
    if (!cJSON_IsObject(root)) { st = tt_error_set(TT_ERR_PARSE, "%s: top level must be an object", name); goto out; }
    const cJSON *ident = cJSON_GetObjectItemCaseSensitive(root, "identifier");
    if (cJSON_IsString(ident) && cJSON_GetObjectItemCaseSensitive(root, "benchmark")) {
        st = tt_error_set(TT_ERR_PARSE,
                          "%s: identifier '%s' with \"benchmark\": not the JSON of a released nccl-tests (its -J files "
                          "have \"config\" and \"results\"); give the text output instead",
                          name, ident->valuestring);
        goto out;
    }
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(root, "tool");
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(root, "config");
    if (!cJSON_IsObject(cfg)) {
        st = tt_error_set(TT_ERR_PARSE, "%s: no \"config\" object (not topo-exec or nccl-tests -J output)", name);
        goto out;
    }
    int exec = cJSON_IsString(tool) && !strcmp(tool->valuestring, "topo-exec");
    if (cJSON_IsString(tool) && !exec) {
        st = tt_error_set(TT_ERR_PARSE, "%s: \"tool\" is '%s'; expected topo-exec or nccl-tests output", name,
                          tool->valuestring);
        goto out;
    }
    if (exec) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(cfg, "collective");
        tt_coll cc;
        if (!cJSON_IsString(c) || tm_coll_from_prog(c->valuestring, &cc) != TT_OK) {
            st = tt_error_set(TT_ERR_PARSE, "%s: config.collective: expected a collective name", name);
            goto out;
        }
        m.coll = cc;
        /* topo-exec runs our executor (its tree is a binary tree) unless it drove NCCL */
        const cJSON *eng = cJSON_GetObjectItemCaseSensitive(cfg, "engine");
        m.topotune_tree = !(cJSON_IsString(eng) && !strncmp(eng->valuestring, "nccl", 4));
        const cJSON *nr = cJSON_GetObjectItemCaseSensitive(cfg, "nranks");
        if (!cJSON_IsNumber(nr) || nr->valuedouble < 1 || nr->valuedouble > 1e6 || nr->valuedouble != floor(nr->valuedouble)) {
            st = tt_error_set(TT_ERR_PARSE, "%s: config.nranks: expected a positive integer", name);
            goto out;
        }
        m.nranks = (int)nr->valuedouble;
        const cJSON *tr = cJSON_GetObjectItemCaseSensitive(cfg, "transport");
        int host = cJSON_IsString(tr) && tm_host_transport(tr->valuestring);
        /* our executor's rows: host transports are host ranks; GPU mode ("gpu") is taken as one
         * rank per GPU (the JSON does not say whether ranks shared a GPU) */
        m.exec_kind = !m.topotune_tree ? TT_RANKS_NONE : host ? TT_RANKS_HOST : TT_RANKS_GPU;
        if (cJSON_IsString(tr) && !strcmp(tr->valuestring, "shm")) m.nodes = 1;
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(cfg, "proto_requested");
        if (cJSON_IsString(pr) && strcmp(pr->valuestring, "default")) {
            tt_proto p;
            if (tt_proto_parse(pr->valuestring, &p) != TT_OK) {
                st = tt_error_set(TT_ERR_PARSE, "%s: config.proto_requested: unknown protocol '%s'", name, pr->valuestring);
                goto out;
            }
            m.proto = p;
        } else if (host) {
            m.proto = TT_PROTO_SIMPLE; /* host transports implement only simple (tt_exec.h) */
        }
        const cJSON *chn = cJSON_GetObjectItemCaseSensitive(cfg, "channels");
        if (cJSON_IsNumber(chn) && chn->valuedouble >= 1) m.channels = (int)chn->valuedouble;
        else if (host) m.channels = 1; /* host transports run one channel (tt_exec.h) */
    } else {
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(root, "args");
        const cJSON *a0 = cJSON_IsArray(args) ? cJSON_GetArrayItem(args, 0) : NULL;
        tt_coll cc;
        if (o->coll >= 0) {
            m.coll = (tt_coll)o->coll;
        } else if (!cJSON_IsString(a0) || tm_coll_from_prog(a0->valuestring, &cc) != TT_OK) {
            st = tt_error_set(TT_ERR_PARSE,
                              "%s: args[0] does not name an nccl-tests program (all_reduce_perf, ...); give --collective",
                              name);
            goto out;
        } else {
            m.coll = cc;
        }
        const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
        if (ver && (!cJSON_IsNumber(ver) || ver->valuedouble != floor(ver->valuedouble))) {
            st = tt_error_set(TT_ERR_PARSE, "%s: version: expected an integer (nccl-tests' JSON schema version)", name);
            goto out;
        }
        if (ver && (ver->valuedouble < 1 || ver->valuedouble > 3))
            TT_WARN("tune", "%s: version %g: nccl-tests JSON schema versions 1 .. 3 are known; reading it as those", name,
                    ver->valuedouble);
        if ((st = nccl_tests_ranks(cfg, name, &m)) != TT_OK) goto out;
    }
    if (o->nranks > 0) m.nranks = o->nranks;
    if (o->nodes > 0) m.nodes = o->nodes;
    st = results(root, name, &m, exec, set, zero_rows);
out:
    cJSON_Delete(root);
    return st;
}
