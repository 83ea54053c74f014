/*
 * cli_validate.c - topo-exec --validate: was the tuning table's choice right on this machine?
 *
 * For every size of the sweep the table's choice (algorithm, protocol, channels) and its nearest
 * runner-ups (the next candidates by the model's predicted time that this engine can run) are
 * measured back to back, like a normal sweep row (same warm-up, iterations, both placements,
 * result checks), so that all candidates of one size see the same machine state.  A candidate's
 * time is the faster placement (as topo-tune's measurement readers take it).  Verdict per size:
 *   RIGHT          the choice was the fastest measured candidate;
 *   within noise   slower than the fastest by at most the margin (default 5%);
 *   WRONG by X%    slower by more (X = choice / fastest - 1).
 * Consecutive wrong sizes with the same choice form a range to fix.  Exit 3 when a size is
 * wrong (after 1 runtime failure and 7 wrong results), 2 for bad input, 0 otherwise.
 *
 * The table is topo-tune's JSON table (--table) or computed here from the topotune model
 * (--topo, --calibration) over the candidates this engine runs.  Host ranks: ring, tree,
 * halving-doubling (power-of-two ranks), hierarchical; simple protocol, one channel.  GPU ranks:
 * ring and tree with the simple and LL protocols (AllReduce).  Every rank derives the same
 * candidates from the same inputs; a fingerprint of the plan is compared across ranks before
 * anything is timed, and the executor's collective headers (which carry the algorithm) catch
 * any later disagreement.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_validate.h"
#include "tt_topo.h"
#include "tt_tune.h"
#include "tt_xml.h"

enum { VX_OK = 0, VX_RUNTIME = 1, VX_USAGE = 2, VX_WRONG_RESULTS = 7 };
enum { V_SKIP = 0, V_RIGHT, V_NOISE, V_WRONG, V_ONLY };

#define VMAXC 8 /* candidates per size: the choice + at most 7 runner-ups */

static const tt_plan plan_default = TT_PLAN_DEFAULT;

typedef struct {
    tt_algo algo;
    tt_proto proto;
    int channels;        /* what the run asks for (host: 1; GPU: the table's, 0 = executor default) */
    int ran_channels;    /* what the executor resolved */
    double pred_us;      /* model, < 0 = none */
    double t[2];         /* measured time per placement (us) */
    double busbw[2], algbw[2];
    long long wrong[2];  /* -1 = not checked */
} vcand;

typedef struct {
    uint64_t bytes;
    size_t count;
    int nc;              /* candidates measured; c[0] is the table's choice; 0 = not judged */
    vcand c[VMAXC];
    char note[512];      /* why the size is not judged */
    int verdict, best;
    double loss;
} vsize;

/* engine: which candidates exist, which apply (resolved by the executor itself) */
typedef struct {
    int gpu;
    tt_comm *comm;       /* host: a communicator to resolve plans on (plan restored afterwards) */
    tt_gpu_comm *g;
} vengine;

typedef struct {
    const tt_cli_validate_opts *v;
    const tt_cli_sweep *s;
    int nranks;
    const char *transport;
    char table_desc[600];
    char model_desc[600];
    int ranked;          /* runner-ups ordered by prediction */
    int host_channels_note;
    vsize *sz;
    int nsz;
    /* run state */
    pthread_mutex_t mu;
    int failed;
    char err[1200];
    int tty;
} vctx;

/* ---------------------------------------------------------------- options */
void tt_cli_validate_defaults(tt_cli_validate_opts *v)
{
    memset(v, 0, sizeof *v);
    /* ENGINEERING CHOICE: 5% is about the run-to-run spread of a quiet host or GPU sweep at
     * bandwidth-bound sizes (docs/benchmarks-exec.md); topo-tune --judge-choices uses the same
     * default tolerance.  Raise it on a busy or oversubscribed machine. */
    v->margin = 0.05;
    /* ENGINEERING CHOICE: the two nearest runner-ups catch a wrong crossover (the neighbour in
     * the model's ranking is what wins when the model is off) at 3x the time of one sweep. */
    v->runners_up = 2;
    v->rounds = 1;
}

int tt_cli_validate_option(tt_cli_validate_opts *v, const char *name, const char *value)
{
    if (!strcmp(name, "--validate-margin")) {
        char *end = NULL;
        double d = value ? strtod(value, &end) : NAN;
        if (!value || end == value || *end || !(d >= 0 && d <= 10000))
            return tt_cli_bad("%s '%s' must be a percentage in 0..10000", name, value ? value : "");
        v->margin = d / 100;
        return 0;
    }
    long long n;
    if (!strcmp(name, "--validate-rounds")) {
        if (tt_cli_int_option(name, value, 1, 100, &n)) return TT_CLI_EXIT_ERROR;
        v->rounds = (int)n;
        return 0;
    }
    if (tt_cli_int_option(name, value, 0, VMAXC - 1, &n)) return TT_CLI_EXIT_ERROR;
    v->runners_up = (int)n;
    return 0;
}

/* ---------------------------------------------------------------- naming */
static const char *coll_cli(tt_coll c)
{
    static const char *const n[TT_COLL_COUNT] = {
        [TT_COLL_ALLREDUCE] = "all_reduce", [TT_COLL_REDUCESCATTER] = "reduce_scatter",
        [TT_COLL_ALLGATHER] = "all_gather", [TT_COLL_BROADCAST] = "broadcast", [TT_COLL_REDUCE] = "reduce"};
    return (unsigned)c < TT_COLL_COUNT ? n[c] : "?";
}

static void cand_name(char *b, size_t n, const vcand *c)
{
    snprintf(b, n, "%s/%s", tt_algo_label(c->algo), tt_proto_name(c->proto));
}

/* 1K, 64K, 1M, ... when exact, else the byte count with a B */
static void size_name(char *b, size_t n, uint64_t v)
{
    static const char suf[] = "KMGT";
    int k = -1;
    while (k < 3 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        k++;
    }
    if (k < 0) snprintf(b, n, "%lluB", (unsigned long long)v);
    else snprintf(b, n, "%llu%c", (unsigned long long)v, suf[k]);
}

/* Fold one round's measurement into the candidate: the fastest time per placement counts (noise
 * only ever adds time), wrong results are never hidden. */
static void keep_best(vcand *dst, const vcand *r, int first)
{
    for (int p = 0; p < 2; p++) {
        if (first || (r->t[p] > 0 && (dst->t[p] <= 0 || r->t[p] < dst->t[p]))) {
            dst->t[p] = r->t[p];
            dst->algbw[p] = r->algbw[p];
            dst->busbw[p] = r->busbw[p];
        }
        if (first || r->wrong[p] > dst->wrong[p]) dst->wrong[p] = r->wrong[p];
    }
}

static double cand_time(const vcand *c)
{
    double a = c->t[0], b = c->t[1];
    if (a > 0 && (b <= 0 || a <= b)) return a;
    return b > 0 ? b : -1;
}

/* ---------------------------------------------------------------- model */
typedef struct {
    tt_xml_doc *doc;
    tt_topo *topo;
    tt_cluster base;
    tt_model_params params;
    int ok;
} vmodel;

static void model_free(vmodel *m)
{
    tt_topo_free(m->topo);
    tt_xml_doc_free(m->doc);
    memset(m, 0, sizeof *m);
}

/* Built-in stand-in for host ranks: n ranks modelled as n PCIe GPUs under one CPU, the shape of
 * tests/fixtures/measurements/host-pcie-8gpu.xml (docs/calibration.md section 6).  MODEL
 * ASSUMPTION: host ranks move data through host memory, which the topotune model maps to the PCI
 * link class; a calibration file fitted on host runs makes its numbers real. */
static char *host_standin_xml(int n)
{
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    tt_strbuf_append(&sb, "<system version=\"1\">\n  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\" "
                          "vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n");
    for (int i = 0; i < n; i++) {
        int bus = 0x11 + i;
        tt_strbuf_printf(&sb,
                         "    <pci busid=\"%04x:%02x:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x26b9\" "
                         "subsystem_vendor=\"0x10de\" subsystem_device=\"0x1851\" link_speed=\"16.0 GT/s PCIe\" "
                         "link_width=\"16\">\n      <gpu dev=\"%d\" sm=\"89\" rank=\"%d\" gdr=\"1\"/>\n    </pci>\n",
                         bus >> 8, bus & 0xff, i, i);
    }
    tt_strbuf_append(&sb, "  </cpu>\n</system>\n");
    return tt_strbuf_steal(&sb, NULL);
}

/* Load the model: topology (file, live scan for GPU ranks, or the host stand-in) and the
 * calibration (TOPOTUNE_CALIBRATION, set by --calibration).  Errors set the message. */
static tt_status model_load(vmodel *m, const char *topo, int gpu, int nranks, char *desc, size_t dl)
{
    memset(m, 0, sizeof *m);
    tt_model_params_default(&m->params);
    const char *cal = getenv("TOPOTUNE_CALIBRATION");
    tt_status st;
    if (cal && *cal && (st = tt_model_params_load(cal, &m->params)) != TT_OK)
        return tt_error_prefix(st, "--calibration %s", cal);
    const char *what;
    if (topo) {
        if ((st = tt_xml_read_file(topo, NULL, &m->doc)) != TT_OK) return tt_error_prefix(st, "--topo %s", topo);
        what = topo;
    } else if (gpu) {
        tt_scan_options so;
        tt_scan_report rep;
        tt_scan_options_default(&so);
        if ((st = tt_topo_scan_report(&so, &m->doc, &rep)) != TT_OK) return tt_error_prefix(st, "live scan");
        what = "live scan";
    } else {
        char *xml = host_standin_xml(nranks);
        if (!xml) return tt_error_set(TT_ERR_NOMEM, "out of memory");
        st = tt_xml_read_buffer(xml, strlen(xml), "built-in host stand-in", NULL, &m->doc);
        free(xml);
        if (st != TT_OK) return st;
        what = NULL;
    }
    if ((st = tt_topo_from_xml(m->doc, NULL, &m->topo)) != TT_OK ||
        (st = tt_cluster_from_topo(m->topo, &m->base)) != TT_OK)
        return tt_error_prefix(st, "%s", what ? what : "built-in host stand-in");
    if (m->base.topo_gpus < nranks && !(gpu && !topo))
        return tt_error_set(TT_ERR_INVALID, "%s has %d GPU(s) but the run has %d ranks on one node (give --topo with "
                            "at least %d GPUs)", what ? what : "stand-in", m->base.topo_gpus, nranks, nranks);
    m->base.gpus_per_node = nranks <= m->base.topo_gpus ? nranks : m->base.topo_gpus;
    m->base.nodes = 1;
    if (what)
        snprintf(desc, dl, "topotune model on %s, %s", what, cal && *cal ? cal : "built-in constants");
    else
        snprintf(desc, dl, "topotune model on the built-in host stand-in (%d PCIe GPUs, one CPU), %s", nranks,
                 cal && *cal ? cal : "built-in constants");
    m->ok = 1;
    return TT_OK;
}

static double model_pred(const vmodel *m, tt_coll coll, uint64_t bytes, int nranks, const vcand *c)
{
    if (!m->ok) return -1;
    tt_measurement x;
    memset(&x, 0, sizeof x);
    x.coll = coll;
    x.bytes = bytes;
    x.nranks = nranks;
    x.nodes = 1;
    x.algo = c->algo;
    x.proto = c->proto;
    x.channels = c->channels > 0 ? c->channels : 0;
    x.time_us = 1;
    snprintf(x.where, sizeof x.where, "validate %llu bytes", (unsigned long long)bytes);
    double us;
    return tt_calib_predict(m->topo, &m->base, &m->params, &x, &us) == TT_OK && us > 0 ? us : -1;
}

/* ---------------------------------------------------------------- table */
static int json_line(const char *text, const char *at)
{
    int line = 1;
    for (const char *p = text; p < at; p++)
        if (*p == '\n') line++;
    return line;
}

static tt_status table_load(const char *path, tt_tune_loaded *t)
{
    char *text = NULL;
    size_t len = 0;
    tt_status st = tt_read_file(path, 64u << 20, &text, &len);
    if (st != TT_OK) return tt_error_prefix(st, "--table");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        const char *e = cJSON_GetErrorPtr();
        st = tt_error_set(TT_ERR_PARSE, "%s:%d: not valid JSON (want topo-tune -f json output)", path,
                          e && e >= text && e <= text + len ? json_line(text, e) : 1);
        free(text);
        return st;
    }
    cJSON_Delete(root);
    st = tt_tune_table_parse(text, path, t);
    free(text);
    return st;
}

static const tt_tune_entry *table_lookup(const tt_tune_loaded *t, tt_coll c, uint64_t bytes)
{
    for (int i = 0; i < t->n; i++)
        if (t->entries[i].coll == c && bytes >= t->entries[i].min_bytes && bytes <= t->entries[i].max_bytes)
            return &t->entries[i];
    return NULL;
}

/* ---------------------------------------------------------------- candidates */
static int engine_can_run(const vengine *e, tt_coll coll, size_t count, tt_dtype dt, vcand *c, char *why, size_t wl)
{
    tt_plan req = TT_PLAN_DEFAULT, eff;
    req.algo = c->algo;
    req.proto = c->proto;
    req.channels = c->channels;
    tt_status st;
    if (e->gpu) {
        st = tt_gpu_comm_resolve_plan(e->g, coll, count, dt, &req, &eff);
    } else {
        tt_comm_set_plan(e->comm, &req);
        st = tt_comm_resolve_plan(e->comm, coll, count, dt, &eff);
        tt_comm_set_plan(e->comm, &plan_default);
    }
    if (st != TT_OK) {
        if (why) snprintf(why, wl, "%s", tt_error_message());
        return 0;
    }
    c->ran_channels = eff.channels;
    return 1;
}

static int engine_candidates(const vengine *e, vcand *out)
{
    static const tt_algo host_algos[] = {TT_ALGO_RING, TT_ALGO_TREE, TT_ALGO_RHD, TT_ALGO_HIER};
    int n = 0;
    if (e->gpu) {
        static const tt_algo ga[] = {TT_ALGO_RING, TT_ALGO_TREE};
        static const tt_proto gp[] = {TT_PROTO_SIMPLE, TT_PROTO_LL};
        for (int a = 0; a < 2; a++)
            for (int p = 0; p < 2; p++) out[n++] = (vcand){.algo = ga[a], .proto = gp[p], .channels = 0};
    } else {
        for (int a = 0; a < 4; a++) out[n++] = (vcand){.algo = host_algos[a], .proto = TT_PROTO_SIMPLE, .channels = 1};
    }
    return n;
}

static int cmp_pred(const void *a, const void *b)
{
    const vcand *x = a, *y = b;
    if ((x->pred_us < 0) != (y->pred_us < 0)) return x->pred_us < 0 ? 1 : -1;
    if (x->pred_us != y->pred_us) return x->pred_us < y->pred_us ? -1 : 1;
    if (x->algo != y->algo) return (int)x->algo - (int)y->algo;
    return (int)x->proto - (int)y->proto;
}

/* Plan every size: the table's choice and the runner-ups.  Returns an exit code. */
static int plan_sizes(vctx *x, const vengine *e)
{
    const tt_cli_validate_opts *v = x->v;
    const tt_cli_sweep *s = x->s;
    vmodel m;
    memset(&m, 0, sizeof m);
    tt_tune_loaded tab;
    memset(&tab, 0, sizeof tab);
    int rc = VX_OK;
    if (v->table) {
        if (table_load(v->table, &tab) != TT_OK) {
            rc = tt_cli_fail(TT_ERR_PARSE);
            goto out;
        }
        if (tab.ranks != x->nranks) {
            rc = tt_cli_bad("--table %s: the table is for %d ranks (%d node(s)) but this run has %d ranks; build it "
                            "with topo-tune --gpus-per-node/--nodes for %d ranks", v->table, tab.ranks, tab.nodes,
                            x->nranks, x->nranks);
            goto out;
        }
        int has = 0;
        for (int i = 0; i < tab.n; i++) has |= tab.entries[i].coll == s->coll;
        if (!has) {
            rc = tt_cli_bad("--table %s: no entry for %s (build it with topo-tune -C all or -C %s)", v->table,
                            tt_coll_name(s->coll), tt_coll_name(s->coll));
            goto out;
        }
        snprintf(x->table_desc, sizeof x->table_desc, "%s (%d ranks, %d node(s), model %s, %d entries)", v->table,
                 tab.ranks, tab.nodes, tab.model[0] ? tab.model : "?", tab.n);
        if (v->topo && model_load(&m, v->topo, e->gpu, x->nranks, x->model_desc, sizeof x->model_desc) != TT_OK) {
            rc = tt_cli_fail(TT_ERR_INVALID);
            goto out;
        }
        if (!m.ok)
            snprintf(x->model_desc, sizeof x->model_desc,
                     "none (no --topo): every candidate this engine runs is measured");
    } else {
        if (model_load(&m, v->topo, e->gpu, x->nranks, x->model_desc, sizeof x->model_desc) != TT_OK) {
            rc = tt_cli_fail(TT_ERR_INVALID);
            goto out;
        }
        snprintf(x->table_desc, sizeof x->table_desc,
                 "computed: the model's fastest candidate that this engine runs, per size");
    }
    x->ranked = m.ok;
    size_t es = tt_dtype_size(s->dtype);
    int per_rank = s->coll == TT_COLL_ALLGATHER || s->coll == TT_COLL_REDUCESCATTER;
    int cap = 0;
    for (uint64_t size = s->minb; size <= s->maxb; size = s->factor > 1 ? size * (uint64_t)s->factor : size + s->stepb) {
        if (x->nsz == cap) {
            cap = cap ? cap * 2 : 32;
            vsize *p = realloc(x->sz, (size_t)cap * sizeof *p);
            if (!p) {
                rc = tt_cli_bad("out of memory");
                goto out;
            }
            x->sz = p;
        }
        vsize *z = &x->sz[x->nsz++];
        memset(z, 0, sizeof *z);
        z->count = (size_t)(size / es / (per_rank ? (size_t)x->nranks : 1));
        z->bytes = (uint64_t)z->count * es * (per_rank ? (uint64_t)x->nranks : 1);
        vcand all[VMAXC];
        int na = engine_candidates(e, all), nrun = 0;
        vcand run[VMAXC];
        for (int k = 0; k < na; k++) {
            if (!engine_can_run(e, s->coll, z->count, s->dtype, &all[k], NULL, 0)) continue;
            all[k].pred_us = model_pred(&m, s->coll, z->bytes, x->nranks, &all[k]);
            run[nrun++] = all[k];
        }
        if (z->count == 0) {
            snprintf(z->note, sizeof z->note, "size below one element per rank");
            continue;
        }
        if (m.ok) qsort(run, (size_t)nrun, sizeof *run, cmp_pred);
        vcand choice;
        if (v->table) {
            const tt_tune_entry *te = table_lookup(&tab, s->coll, z->bytes);
            if (!te) {
                snprintf(z->note, sizeof z->note, "the table has no entry for this size");
                continue;
            }
            choice = (vcand){.algo = te->algo, .proto = te->proto, .channels = te->channels};
            if (!e->gpu) {
                if (choice.channels > 1) x->host_channels_note = 1;
                choice.channels = 1; /* host transports run one channel (tt_exec.h) */
            } else if (choice.channels > tt_gpu_comm_max_channels(e->g)) {
                choice.channels = tt_gpu_comm_max_channels(e->g);
            }
            char why[400];
            if (!engine_can_run(e, s->coll, z->count, s->dtype, &choice, why, sizeof why)) {
                char cn[64];
                cand_name(cn, sizeof cn, &choice);
                snprintf(z->note, sizeof z->note, "table choice %s not runnable here: %s", cn, why);
                continue;
            }
            choice.pred_us = model_pred(&m, s->coll, z->bytes, x->nranks, &choice);
        } else {
            if (nrun == 0 || run[0].pred_us < 0) {
                snprintf(z->note, sizeof z->note, "the model predicts none of the candidates this engine runs");
                continue;
            }
            choice = run[0];
        }
        z->c[z->nc++] = choice;
        int limit = m.ok ? v->runners_up : VMAXC - 1;
        for (int k = 0; k < nrun && z->nc - 1 < limit && z->nc < VMAXC; k++)
            if (run[k].algo != choice.algo || run[k].proto != choice.proto) z->c[z->nc++] = run[k];
    }
    int judged = 0;
    for (int i = 0; i < x->nsz; i++) judged += x->sz[i].nc > 0;
    if (!judged) {
        rc = tt_cli_bad("--validate: nothing to run: %s at every size of the sweep",
                        x->nsz ? x->sz[0].note : "no size");
        goto out;
    }
out:
    tt_tune_loaded_free(&tab);
    model_free(&m);
    return rc;
}

/* Fingerprint of the plan (sweep options, sizes, candidates); ranks compare it before timing
 * anything. */
static int64_t plan_hash(const vctx *x)
{
    uint64_t h = 1469598103934665603ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
    MIX(x->nsz);
    MIX(x->s->coll);
    MIX(x->s->dtype);
    MIX(x->s->op);
    MIX(x->s->root);
    MIX(x->s->iters);
    MIX(x->s->warmup);
    MIX(x->s->agg);
    MIX(x->s->check);
    MIX(x->v->rounds);
    for (int i = 0; i < x->nsz; i++) {
        MIX(x->sz[i].bytes);
        MIX(x->sz[i].nc);
        for (int k = 0; k < x->sz[i].nc; k++) {
            MIX(x->sz[i].c[k].algo);
            MIX(x->sz[i].c[k].proto);
            MIX(x->sz[i].c[k].channels);
        }
    }
#undef MIX
    return (int64_t)(h >> 2);
}

/* ---------------------------------------------------------------- verdicts and output */
static void judge_size(const vctx *x, vsize *z)
{
    if (z->nc == 0) {
        z->verdict = V_SKIP;
        return;
    }
    int best = -1;
    for (int k = 0; k < z->nc; k++) {
        double t = cand_time(&z->c[k]);
        if (t > 0 && (best < 0 || t < cand_time(&z->c[best]))) best = k;
    }
    double tc = cand_time(&z->c[0]);
    if (best < 0 || tc <= 0) {
        z->verdict = V_SKIP;
        snprintf(z->note, sizeof z->note, "no time measured");
        return;
    }
    z->best = best;
    z->loss = tc / cand_time(&z->c[best]) - 1;
    if (z->nc == 1) z->verdict = V_ONLY;
    else if (best == 0) z->verdict = V_RIGHT;
    else if (z->loss <= x->v->margin) z->verdict = V_NOISE;
    else z->verdict = V_WRONG;
}

static void print_header(const vctx *x)
{
    const tt_cli_sweep *s = x->s;
    printf("# topo-exec --validate (topotune %s) collective: %s, %d ranks (%s)\n", TT_VERSION_STRING,
           coll_cli(s->coll), x->nranks, x->transport);
    printf("# table: %s\n", x->table_desc);
    if (x->ranked)
        printf("# runner-ups: the %d nearest by predicted time; %s\n", x->v->runners_up, x->model_desc);
    else
        printf("# runner-ups: %s\n", x->model_desc);
    if (x->host_channels_note)
        printf("# note: the table asks for several channels; host transports run one, so its choice runs on one\n");
    printf("# per size and candidate: %d warmup + %d timed iterations (x%d aggregated), %d check(s), out-of-place and "
           "in-place; time = the faster placement; candidates of one size run back to back",
           s->warmup, s->iters, s->agg, s->check);
    if (x->v->rounds > 1) printf(", %d interleaved rounds (fastest kept)", x->v->rounds);
    printf("\n");
    printf("# verdict: RIGHT = the choice was fastest; within noise = slower by <= %g%%; WRONG by X%% = slower by more\n",
           x->v->margin * 100);
    printf("#%11s  %-24s %10s  %-24s %10s %8s  %-22s %s\n", "size", "choice", "time(us)", "fastest measured",
           "time(us)", "loss", "verdict", "runner-ups: time(us) [pred]");
    fflush(stdout);
}

static void print_size(const vctx *x, const vsize *z)
{
    char b[32];
    if (z->nc == 0 || z->verdict == V_SKIP) {
        printf("%12llu  not judged: %s\n", (unsigned long long)z->bytes, z->note);
        fflush(stdout);
        return;
    }
    char cn[64], bn[64], verdict[48], loss[24];
    cand_name(cn, sizeof cn, &z->c[0]);
    cand_name(bn, sizeof bn, &z->c[z->best]);
    switch (z->verdict) {
    case V_RIGHT: snprintf(verdict, sizeof verdict, "RIGHT"); break;
    case V_ONLY: snprintf(verdict, sizeof verdict, "RIGHT (only candidate)"); break;
    case V_NOISE: snprintf(verdict, sizeof verdict, "within noise"); break;
    default: snprintf(verdict, sizeof verdict, "WRONG by %.1f%%", z->loss * 100); break;
    }
    snprintf(loss, sizeof loss, "%+.1f%%", z->loss * 100);
    printf("%12llu  %-24s %10.2f  %-24s %10.2f %8s  %-22s", (unsigned long long)z->bytes, cn, cand_time(&z->c[0]), bn,
           cand_time(&z->c[z->best]), loss, verdict);
    for (int k = 1; k < z->nc; k++) {
        cand_name(cn, sizeof cn, &z->c[k]);
        printf("%s%s %.2f", k > 1 ? ", " : "", cn, cand_time(&z->c[k]));
        if (z->c[k].pred_us > 0) {
            snprintf(b, sizeof b, "%.2f", z->c[k].pred_us);
            printf(" [%s]", b);
        }
    }
    for (int k = 0; k < z->nc; k++)
        for (int p = 0; p < 2; p++)
            if (z->c[k].wrong[p] > 0) {
                cand_name(cn, sizeof cn, &z->c[k]);
                printf("  (%s: %lld WRONG RESULT(S) %s)", cn, z->c[k].wrong[p], p ? "in place" : "out of place");
            }
    printf("\n");
    fflush(stdout);
}

typedef struct {
    int lo, hi; /* size indices */
    double minloss, maxloss;
} vrange;

/* Wrong ranges: consecutive judged sizes, all WRONG, with the same choice. */
static int wrong_ranges(const vctx *x, vrange *r)
{
    int n = 0;
    for (int i = 0; i < x->nsz; i++) {
        const vsize *z = &x->sz[i];
        if (z->verdict != V_WRONG) continue;
        vrange *p = n ? &r[n - 1] : NULL;
        if (p && p->hi == i - 1 && x->sz[p->hi].c[0].algo == z->c[0].algo && x->sz[p->hi].c[0].proto == z->c[0].proto) {
            p->hi = i;
            if (z->loss < p->minloss) p->minloss = z->loss;
            if (z->loss > p->maxloss) p->maxloss = z->loss;
            continue;
        }
        r[n++] = (vrange){i, i, z->loss, z->loss};
    }
    return n;
}

static void range_winners(const vctx *x, const vrange *r, char *b, size_t bl)
{
    size_t len = 0;
    b[0] = '\0';
    for (int i = r->lo; i <= r->hi; i++) {
        const vcand *w = &x->sz[i].c[x->sz[i].best];
        int seen = 0;
        for (int j = r->lo; j < i; j++) {
            const vcand *u = &x->sz[j].c[x->sz[j].best];
            seen |= u->algo == w->algo && u->proto == w->proto;
        }
        if (seen) continue;
        char wn[64], sizes[160] = "";
        cand_name(wn, sizeof wn, w);
        size_t sl = 0;
        int cnt = 0;
        for (int j = i; j <= r->hi; j++) {
            const vcand *u = &x->sz[j].c[x->sz[j].best];
            if (u->algo != w->algo || u->proto != w->proto) continue;
            char sn[24];
            size_name(sn, sizeof sn, x->sz[j].bytes);
            if (cnt++ < 6 && sl < sizeof sizes - 30)
                sl += (size_t)snprintf(sizes + sl, sizeof sizes - sl, "%s%s", sl ? " " : "", sn);
        }
        if (cnt > 6 && sl < sizeof sizes - 8) snprintf(sizes + sl, sizeof sizes - sl, " ...");
        if (len < bl)
            len += (size_t)snprintf(b + len, bl - len, "%s%s at %s", len ? "; " : "", wn, sizes);
    }
}

static int summary(const vctx *x, int *nwrong_out)
{
    int cnt[5] = {0};
    for (int i = 0; i < x->nsz; i++) cnt[x->sz[i].verdict]++;
    printf("# %d size(s) judged: %d right, %d within noise (%g%%), %d wrong; %d not judged\n",
           cnt[V_RIGHT] + cnt[V_ONLY] + cnt[V_NOISE] + cnt[V_WRONG], cnt[V_RIGHT] + cnt[V_ONLY], cnt[V_NOISE],
           x->v->margin * 100, cnt[V_WRONG], cnt[V_SKIP]);
    vrange *r = calloc((size_t)(x->nsz ? x->nsz : 1), sizeof *r);
    int nr = r ? wrong_ranges(x, r) : 0;
    for (int i = 0; i < nr; i++) {
        char lo[24], hi[24], cn[64], win[600];
        size_name(lo, sizeof lo, x->sz[r[i].lo].bytes);
        size_name(hi, sizeof hi, x->sz[r[i].hi].bytes);
        cand_name(cn, sizeof cn, &x->sz[r[i].lo].c[0]);
        range_winners(x, &r[i], win, sizeof win);
        char pct[48];
        if (r[i].maxloss - r[i].minloss < 0.0005) snprintf(pct, sizeof pct, "%.1f%%", r[i].maxloss * 100);
        else snprintf(pct, sizeof pct, "%.1f-%.1f%%", r[i].minloss * 100, r[i].maxloss * 100);
        printf("# table wrong for %s%s%s (%s, %d ranks): its choice %s is %s slower than %s\n", lo,
               r[i].lo == r[i].hi ? "" : "-", r[i].lo == r[i].hi ? "" : hi, coll_cli(x->s->coll), x->nranks, cn, pct,
               win);
    }
    if (nr) {
        const char *topo = x->v->topo ? x->v->topo : "TOPO";
        if (x->s->json)
            printf("# fix: re-run topo-tune --calibrate %s --input %s -o cal.json, then rebuild the table with "
                   "--calibration cal.json\n", x->s->json, topo);
        else
            printf("# fix: re-run with -J FILE and feed it to topo-tune --calibrate FILE --input %s -o cal.json, then "
                   "rebuild the table with --calibration cal.json\n", topo);
    } else if (cnt[V_WRONG] == 0) {
        printf("# the table's choice was right (or within noise) at every judged size\n");
    }
    fflush(stdout);
    free(r);
    *nwrong_out = cnt[V_WRONG];
    return nr;
}

static cJSON *place_json(const vcand *c, int p, double pred)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "time", c->t[p]);
    cJSON_AddNumberToObject(o, "alg_bw", c->algbw[p]);
    cJSON_AddNumberToObject(o, "bus_bw", c->busbw[p]);
    if (c->wrong[p] >= 0) cJSON_AddNumberToObject(o, "nwrong", (double)c->wrong[p]);
    else cJSON_AddNullToObject(o, "nwrong");
    if (pred > 0) cJSON_AddNumberToObject(o, "predicted_time", pred);
    return o;
}

static const char *verdict_word(int v)
{
    static const char *const w[] = {"not judged", "right", "within noise", "wrong", "only candidate"};
    return w[v];
}

static int write_json(const vctx *x, const char *start, int oob, int rc, const char *err)
{
    const tt_cli_sweep *s = x->s;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "version", 1);
    cJSON_AddStringToObject(j, "tool", "topo-exec");
    cJSON_AddStringToObject(j, "topotune_version", TT_VERSION_STRING);
    cJSON_AddStringToObject(j, "start_time", start);
    cJSON *args = cJSON_AddArrayToObject(j, "args");
    for (int i = 0; i < s->argc; i++) cJSON_AddItemToArray(args, cJSON_CreateString(s->argv[i]));
    cJSON *cfg = cJSON_AddObjectToObject(j, "config");
    cJSON_AddStringToObject(cfg, "collective", coll_cli(s->coll));
    cJSON_AddNumberToObject(cfg, "nranks", x->nranks);
    cJSON_AddStringToObject(cfg, "transport", x->transport);
    cJSON_AddNumberToObject(cfg, "minimum_bytes", (double)s->minb);
    cJSON_AddNumberToObject(cfg, "maximum_bytes", (double)s->maxb);
    if (s->factor > 1) cJSON_AddNumberToObject(cfg, "step_factor", (double)s->factor);
    else cJSON_AddNumberToObject(cfg, "step_bytes", (double)s->stepb);
    cJSON_AddNumberToObject(cfg, "warmup_iters", s->warmup);
    cJSON_AddNumberToObject(cfg, "iterations", s->iters);
    cJSON_AddNumberToObject(cfg, "aggregated_iterations", s->agg);
    cJSON_AddNumberToObject(cfg, "validation", s->check);
    cJSON_AddStringToObject(cfg, "algo_requested", "validate");
    cJSON_AddStringToObject(cfg, "proto_requested", "default"); /* per result: "proto" */
    cJSON_AddNumberToObject(cfg, "chunk_bytes", (double)s->chunk_bytes);
    cJSON *res = cJSON_AddArrayToObject(j, "results");
    double bw = 0;
    int nbw = 0;
    for (int i = 0; i < x->nsz; i++) {
        const vsize *z = &x->sz[i];
        for (int k = 0; k < z->nc; k++) {
            const vcand *c = &z->c[k];
            if (c->t[0] <= 0 && c->t[1] <= 0) continue; /* not reached (failure) */
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "size", (double)z->bytes);
            cJSON_AddNumberToObject(o, "count", (double)z->count);
            cJSON_AddStringToObject(o, "type", tt_dtype_name(s->dtype));
            cJSON_AddStringToObject(o, "redop", (s->coll == TT_COLL_ALLGATHER || s->coll == TT_COLL_BROADCAST)
                                                    ? "none" : tt_redop_name(s->op));
            cJSON_AddNumberToObject(o, "root", (s->coll == TT_COLL_BROADCAST || s->coll == TT_COLL_REDUCE) ? s->root : -1);
            cJSON_AddStringToObject(o, "algo", tt_algo_label(c->algo));
            cJSON_AddStringToObject(o, "proto", tt_proto_name(c->proto));
            cJSON_AddNumberToObject(o, "channels", c->ran_channels > 0 ? c->ran_channels : 1);
            cJSON_AddStringToObject(o, "role", k == 0 ? "choice" : "runner-up");
            cJSON_AddItemToObject(o, "out_of_place", place_json(c, 0, c->pred_us));
            cJSON_AddItemToObject(o, "in_place", place_json(c, 1, c->pred_us));
            cJSON_AddItemToArray(res, o);
            bw += c->busbw[0] + c->busbw[1];
            nbw += 2;
        }
    }
    cJSON *ob = cJSON_AddObjectToObject(j, "out_of_bounds");
    cJSON_AddNumberToObject(ob, "count", oob);
    cJSON_AddBoolToObject(ob, "okay", oob == 0);
    cJSON *ab = cJSON_AddObjectToObject(j, "average_bus_bandwidth");
    cJSON_AddNumberToObject(ab, "bandwidth", nbw ? bw / nbw : 0);
    cJSON *errs = cJSON_AddArrayToObject(j, "errors");
    if (err) cJSON_AddItemToArray(errs, cJSON_CreateString(err));
    cJSON *va = cJSON_AddObjectToObject(j, "validate");
    cJSON_AddStringToObject(va, "table", x->table_desc);
    cJSON_AddStringToObject(va, "model", x->model_desc);
    cJSON_AddNumberToObject(va, "margin_percent", x->v->margin * 100);
    cJSON_AddNumberToObject(va, "runners_up", x->v->runners_up);
    cJSON_AddNumberToObject(va, "rounds", x->v->rounds);
    cJSON *sizes = cJSON_AddArrayToObject(va, "sizes");
    for (int i = 0; i < x->nsz; i++) {
        const vsize *z = &x->sz[i];
        cJSON *o = cJSON_CreateObject();
        char cn[64];
        cJSON_AddNumberToObject(o, "size", (double)z->bytes);
        cJSON_AddStringToObject(o, "verdict", verdict_word(z->verdict));
        if (z->verdict != V_SKIP) {
            cand_name(cn, sizeof cn, &z->c[0]);
            cJSON_AddStringToObject(o, "choice", cn);
            cJSON_AddNumberToObject(o, "choice_time", cand_time(&z->c[0]));
            cand_name(cn, sizeof cn, &z->c[z->best]);
            cJSON_AddStringToObject(o, "fastest", cn);
            cJSON_AddNumberToObject(o, "fastest_time", cand_time(&z->c[z->best]));
            cJSON_AddNumberToObject(o, "loss_percent", z->loss * 100);
        } else {
            cJSON_AddStringToObject(o, "note", z->note);
        }
        cJSON_AddItemToArray(sizes, o);
    }
    vrange *r = calloc((size_t)(x->nsz ? x->nsz : 1), sizeof *r);
    int nr = r ? wrong_ranges(x, r) : 0;
    cJSON *wr = cJSON_AddArrayToObject(va, "wrong_ranges");
    for (int i = 0; i < nr; i++) {
        cJSON *o = cJSON_CreateObject();
        char cn[64], win[600];
        cJSON_AddNumberToObject(o, "min_bytes", (double)x->sz[r[i].lo].bytes);
        cJSON_AddNumberToObject(o, "max_bytes", (double)x->sz[r[i].hi].bytes);
        cand_name(cn, sizeof cn, &x->sz[r[i].lo].c[0]);
        cJSON_AddStringToObject(o, "choice", cn);
        range_winners(x, &r[i], win, sizeof win);
        cJSON_AddStringToObject(o, "faster", win);
        cJSON_AddNumberToObject(o, "min_loss_percent", r[i].minloss * 100);
        cJSON_AddNumberToObject(o, "max_loss_percent", r[i].maxloss * 100);
        cJSON_AddItemToArray(wr, o);
    }
    free(r);
    cJSON_AddNumberToObject(va, "exit", rc);
    char *txt = cJSON_Print(j);
    cJSON_Delete(j);
    if (!txt) {
        tt_cli_bad("out of memory writing JSON");
        return VX_RUNTIME;
    }
    size_t len = strlen(txt);
    txt[len] = '\n';
    tt_status st = tt_write_file_atomic(s->json, txt, len + 1);
    free(txt);
    if (st != TT_OK) {
        tt_cli_bad("-J %s: %s", s->json, tt_error_message());
        return VX_RUNTIME;
    }
    return VX_OK;
}

/* Everything after the measurements (rank 0 of the process that prints). */
static int finish(vctx *x, int rc, const char *start, int print)
{
    int oob = 0, nwrong = 0;
    for (int i = 0; i < x->nsz; i++)
        for (int k = 0; k < x->sz[i].nc; k++)
            for (int p = 0; p < 2; p++) oob += x->sz[i].c[k].wrong[p] > 0;
    if (print) {
        if (x->failed) printf("# validation FAILED: %s\n", x->err);
        else summary(x, &nwrong);
        if (oob) printf("# Out of bounds values : %d FAILED (the times of wrong results do not count)\n", oob);
    } else {
        for (int i = 0; i < x->nsz; i++) nwrong += x->sz[i].verdict == V_WRONG;
    }
    if (x->failed && !rc) rc = VX_RUNTIME;
    if (!rc && oob) rc = VX_WRONG_RESULTS;
    if (!rc && nwrong) rc = TT_CLI_EXIT_TABLE_WRONG;
    if (print && x->s->json) {
        int jr = write_json(x, start, oob, rc, x->failed ? x->err : NULL);
        if (jr && !rc) rc = jr;
    }
    return rc;
}

static void fail_x(vctx *x, const char *msg)
{
    pthread_mutex_lock(&x->mu);
    if (!x->failed) {
        x->failed = 1;
        snprintf(x->err, sizeof x->err, "%s", msg);
    }
    pthread_mutex_unlock(&x->mu);
}

/* ---------------------------------------------------------------- host ranks */
static tt_status issue(tt_comm *c, const tt_cli_sweep *s, void *sb, void *rb, size_t count)
{
    switch (s->coll) {
    case TT_COLL_ALLREDUCE: return tt_allreduce(sb, rb, count, s->dtype, s->op, c);
    case TT_COLL_REDUCESCATTER: return tt_reducescatter(sb, rb, count, s->dtype, s->op, c);
    case TT_COLL_ALLGATHER: return tt_allgather(sb, rb, count, s->dtype, c);
    case TT_COLL_BROADCAST: return tt_broadcast(sb, rb, count, s->dtype, s->root, c);
    default: return tt_reduce_coll(sb, rb, count, s->dtype, s->op, s->root, c);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define HCHECK(expr)                                                                                                  \
    do {                                                                                                              \
        tt_status st_ = (expr);                                                                                       \
        if (st_ == TT_OK) st_ = tt_comm_wait(c);                                                                      \
        if (st_ != TT_OK) return st_;                                                                                 \
    } while (0)

/* One candidate at one size, both placements, exactly as topo-exec's sweep measures a row. */
static tt_status host_measure(tt_comm *c, const tt_cli_sweep *s, size_t count, unsigned char *sbuf,
                              unsigned char *rbuf, unsigned char *exp, vcand *out)
{
    int n = tt_comm_nranks(c), me = tt_comm_rank(c);
    size_t es = tt_dtype_size(s->dtype);
    double alg_mult = 1, bus = 1;
    switch (s->coll) {
    case TT_COLL_ALLREDUCE: bus = 2.0 * (n - 1) / n; break;
    case TT_COLL_REDUCESCATTER:
    case TT_COLL_ALLGATHER: alg_mult = n; bus = (double)(n - 1) / n; break;
    default: break;
    }
    for (int place = 0; place < 2; place++) {
        unsigned char *sb = sbuf, *rb = rbuf;
        size_t in_elems = s->coll == TT_COLL_REDUCESCATTER ? count * n : count;
        size_t out_elems = s->coll == TT_COLL_ALLGATHER ? count * n : count;
        if (place == 1) {
            if (s->coll == TT_COLL_REDUCESCATTER) rb = sbuf + (size_t)me * count * es;
            else if (s->coll == TT_COLL_ALLGATHER) {
                rb = sbuf;
                sb = sbuf + (size_t)me * count * es;
            } else rb = sbuf;
        }
        tt_verify_fill(sb, in_elems, s->dtype, s->op, me, 0, 0);
        for (int w = 0; w < s->warmup; w++) HCHECK(issue(c, s, sb, rb, count));
        double t0 = now_s();
        for (int it = 0; it < s->iters; it++) {
            tt_group_start();
            tt_status st = TT_OK;
            for (int a = 0; a < s->agg && st == TT_OK; a++) st = issue(c, s, sb, rb, count);
            tt_group_end();
            if (st != TT_OK) return st;
        }
        HCHECK(TT_OK);
        double sec = (now_s() - t0) / ((double)s->iters * s->agg);
        HCHECK(tt_allreduce(&sec, &sec, 1, TT_DOUBLE, TT_SUM, c));
        sec /= n;
        long long wrong = -1;
        if (s->check > 0) {
            wrong = 0;
            for (int k = 0; k < s->check && wrong == 0; k++) {
                uint64_t seed = (uint64_t)k + 1;
                tt_verify_fill(sb, in_elems, s->dtype, s->op, me, seed, 0);
                HCHECK(issue(c, s, sb, rb, count));
                switch (s->coll) {
                case TT_COLL_ALLREDUCE: tt_verify_expected(exp, count, s->dtype, s->op, n, seed, 0); break;
                case TT_COLL_REDUCESCATTER:
                    tt_verify_expected(exp, count, s->dtype, s->op, n, seed, (size_t)me * count);
                    break;
                case TT_COLL_ALLGATHER:
                    for (int q = 0; q < n; q++)
                        tt_verify_fill(exp + (size_t)q * count * es, count, s->dtype, s->op, q, seed, 0);
                    break;
                case TT_COLL_BROADCAST: tt_verify_fill(exp, count, s->dtype, s->op, s->root, seed, 0); break;
                default:
                    if (me == s->root) tt_verify_expected(exp, count, s->dtype, s->op, n, seed, 0);
                    break;
                }
                int64_t w64 = 0;
                if (s->coll != TT_COLL_REDUCE || me == s->root)
                    w64 = (int64_t)tt_verify_count_wrong(rb, exp, out_elems, s->dtype);
                HCHECK(tt_allreduce(&w64, &w64, 1, TT_INT64, TT_SUM, c));
                wrong = w64;
            }
        }
        out->t[place] = sec * 1e6;
        out->algbw[place] = sec > 0 ? (double)count * es * alg_mult / 1e9 / sec : 0;
        out->busbw[place] = out->algbw[place] * bus;
        out->wrong[place] = wrong;
    }
    return TT_OK;
}

typedef struct {
    vctx *x;
    tt_comm *c;
    int store; /* this rank records the results */
    int rc;
} hrank;

static void *host_rank(void *p)
{
    hrank *h = p;
    vctx *x = h->x;
    tt_comm *c = h->c;
    const tt_cli_sweep *s = x->s;
    int n = tt_comm_nranks(c), me = tt_comm_rank(c);
    size_t es = tt_dtype_size(s->dtype);
    size_t maxcount = 0;
    for (int i = 0; i < x->nsz; i++)
        if (x->sz[i].count > maxcount) maxcount = x->sz[i].count;
    size_t in_max = s->coll == TT_COLL_REDUCESCATTER ? maxcount * n : maxcount;
    size_t out_max = s->coll == TT_COLL_ALLGATHER ? maxcount * n : maxcount;
    size_t big = (in_max > out_max ? in_max : out_max) * es + 64;
    unsigned char *sbuf = calloc(1, big), *rbuf = calloc(1, big), *exp = malloc(out_max * es + 64);
    if (!sbuf || !rbuf || !exp) {
        char m[200];
        snprintf(m, sizeof m, "rank %d: cannot allocate 3 buffers of %zu bytes (reduce -e)", me, big);
        fail_x(x, m);
        h->rc = VX_RUNTIME;
        goto out;
    }
    /* every rank must validate the same plan: compare fingerprints before timing anything */
    int64_t hv[2] = {plan_hash(x), -plan_hash(x)};
    tt_comm_set_plan(c, &plan_default);
    tt_status st = tt_allreduce(hv, hv, 2, TT_INT64, TT_MAX, c);
    if (st == TT_OK) st = tt_comm_wait(c);
    if (st != TT_OK) {
        fail_x(x, tt_error_message());
        h->rc = VX_RUNTIME;
        goto out;
    }
    if (hv[0] != -hv[1]) {
        char m[300];
        snprintf(m, sizeof m, "rank %d: the ranks derived different candidates to validate; give every rank the same "
                              "--table/--topo/--calibration and sweep options", me);
        fail_x(x, m);
        h->rc = VX_USAGE;
        goto out;
    }
    for (int i = 0; i < x->nsz; i++) { /* every rank runs the same sequence; a failure ends it below */
        vsize *z = &x->sz[i];
        for (int round = 0; round < x->v->rounds; round++)
            for (int k = 0; k < z->nc; k++) {
                vcand r = z->c[k];
                tt_plan plan = {r.algo, r.proto, r.channels, s->chunk_bytes};
                tt_comm_set_plan(c, &plan);
                if (x->tty && me == 0) {
                    char cn[64];
                    cand_name(cn, sizeof cn, &r);
                    fprintf(stderr, "\r\033[K# validate %d/%d: %llu bytes, %s ...", i + 1, x->nsz,
                            (unsigned long long)z->bytes, cn);
                    fflush(stderr);
                }
                if ((st = host_measure(c, s, z->count, sbuf, rbuf, exp, &r)) != TT_OK) {
                    fail_x(x, tt_error_message());
                    h->rc = VX_RUNTIME;
                    goto out;
                }
                if (h->store) keep_best(&z->c[k], &r, round == 0);
            }
        if (h->store) judge_size(x, z);
        if (me == 0) {
            if (x->tty) fprintf(stderr, "\r\033[K");
            print_size(x, z);
        }
    }
out:
    tt_comm_set_plan(c, &plan_default);
    free(sbuf);
    free(rbuf);
    free(exp);
    return NULL;
}

static void start_time(char *b, size_t n)
{
    time_t t = time(NULL);
    struct tm tmv;
    strftime(b, n, "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tmv));
}

int tt_cli_validate_host(const tt_cli_validate_opts *v, const tt_cli_sweep *s, tt_comm **comms, int nlocal)
{
    vctx x;
    memset(&x, 0, sizeof x);
    x.v = v;
    x.s = s;
    x.nranks = tt_comm_nranks(comms[0]);
    x.transport = tt_comm_transport(comms[0]);
    pthread_mutex_init(&x.mu, NULL);
    char start[64];
    start_time(start, sizeof start);
    vengine e = {0, comms[0], NULL};
    int me0 = tt_comm_rank(comms[0]) == 0;
    int rc = plan_sizes(&x, &e);
    if (rc) goto out;
    x.tty = s->progress && me0 && isatty(2);
    if (me0) print_header(&x);
    if (nlocal == 1) {
        hrank h = {&x, comms[0], 1, 0};
        host_rank(&h);
        rc = h.rc;
    } else {
        pthread_t *th = calloc((size_t)nlocal, sizeof *th);
        hrank *hr = calloc((size_t)nlocal, sizeof *hr);
        if (!th || !hr) {
            free(th);
            free(hr);
            rc = tt_cli_bad("out of memory");
            goto out;
        }
        for (int r = 0; r < nlocal; r++) {
            hr[r] = (hrank){&x, comms[r], tt_comm_rank(comms[r]) == 0, 0};
            pthread_create(&th[r], NULL, host_rank, &hr[r]);
        }
        for (int r = 0; r < nlocal; r++) {
            pthread_join(th[r], NULL);
            if (hr[r].rc && (!rc || hr[r].rc == VX_USAGE)) rc = hr[r].rc;
        }
        free(th);
        free(hr);
    }
    if (x.failed) tt_cli_bad("%s", x.err);
    rc = finish(&x, rc, start, me0);
out:
    free(x.sz);
    pthread_mutex_destroy(&x.mu);
    return rc;
}

/* ---------------------------------------------------------------- GPU ranks */
/* One candidate at one size on GPU ranks, as topo-exec's GPU sweep measures a row (bin/cli_gpu.c):
 * warm-up and timed AllReduces of the whole batch, then a check on fresh inputs. */
static tt_status gpu_measure(tt_gpu_comm *g, const tt_cli_sweep *s, size_t count, void **sb, void **rb,
                             unsigned char *want, unsigned char *got, vcand *out)
{
    int n = tt_gpu_comm_nranks(g);
    size_t es = tt_dtype_size(s->dtype);
    tt_plan plan = {out->algo, out->proto, out->channels, 0}; /* chunk: the GPU executor's default, as -g runs */
    const uint64_t seed = 12345;
    tt_status st;
    for (int ip = 0; ip < 2; ip++) {
        const void *src[64];
        void *dst[64];
        for (int r = 0; r < n; r++) {
            dst[r] = rb[r];
            src[r] = ip ? rb[r] : sb[r];
            if (ip && (st = tt_gpu_memcpy(rb[r], sb[r], count * es)) != TT_OK) return st;
        }
        for (int it = 0; it < s->warmup; it++)
            if ((st = tt_gpu_allreduce(g, src, dst, count, s->dtype, s->op, &plan)) != TT_OK) return st;
        if ((st = tt_gpu_comm_sync(g)) != TT_OK) return st;
        double t0 = now_s();
        for (int it = 0; it < s->iters; it++)
            for (int a = 0; a < s->agg; a++)
                if ((st = tt_gpu_allreduce(g, src, dst, count, s->dtype, s->op, &plan)) != TT_OK) return st;
        if ((st = tt_gpu_comm_sync(g)) != TT_OK) return st;
        double sec = (now_s() - t0) / ((double)s->iters * s->agg);
        out->t[ip] = sec * 1e6;
        out->algbw[ip] = sec > 0 ? (double)count * es / 1e9 / sec : 0;
        out->busbw[ip] = out->algbw[ip] * 2.0 * (n - 1) / n;
        out->wrong[ip] = -1;
        if (s->check > 0) {
            for (int r = 0; r < n; r++) {
                if ((st = tt_gpu_memset(rb[r], 0xEE, count * es)) != TT_OK) return st;
                if (ip && (st = tt_gpu_memcpy(rb[r], sb[r], count * es)) != TT_OK) return st;
            }
            if ((st = tt_gpu_allreduce(g, src, dst, count, s->dtype, s->op, &plan)) != TT_OK ||
                (st = tt_gpu_comm_sync(g)) != TT_OK)
                return st;
            tt_verify_expected(want, count, s->dtype, s->op, n, seed, 0);
            out->wrong[ip] = 0;
            for (int r = 0; r < n; r++) {
                if ((st = tt_gpu_memcpy(got, rb[r], count * es)) != TT_OK) return st;
                out->wrong[ip] += (long long)tt_verify_count_wrong(got, want, count, s->dtype);
            }
        }
    }
    return TT_OK;
}

int tt_cli_validate_gpu(const tt_cli_validate_opts *v, const tt_cli_sweep *s, int ngpus)
{
    if (s->coll != TT_COLL_ALLREDUCE)
        return tt_cli_bad("-g %d --validate: GPU ranks run all_reduce only; use --host N for %s", ngpus,
                          coll_cli(s->coll));
    if (ngpus > 64) return tt_cli_bad("-g %d: at most 64 GPU ranks", ngpus);
    char why[256];
    if (!tt_gpu_available(why, sizeof why))
        return tt_cli_bad("-g %d --validate: %s; use --host N for host ranks", ngpus, why);
    vctx x;
    memset(&x, 0, sizeof x);
    x.v = v;
    x.s = s;
    x.nranks = ngpus;
    x.transport = "gpu";
    pthread_mutex_init(&x.mu, NULL);
    char start[64];
    start_time(start, sizeof start);
    tt_gpu_comm *g = NULL;
    void *sb[64] = {0}, *rb[64] = {0};
    unsigned char *h = NULL, *want = NULL, *got = NULL;
    int rc;
    if (tt_gpu_comm_init(&g, ngpus, NULL) != TT_OK) {
        tt_cli_bad("%s", tt_error_message());
        pthread_mutex_destroy(&x.mu);
        return VX_RUNTIME;
    }
    vengine e = {1, NULL, g};
    rc = plan_sizes(&x, &e);
    if (rc) goto out;
    size_t es = tt_dtype_size(s->dtype), maxcount = 0;
    for (int i = 0; i < x.nsz; i++)
        if (x.sz[i].count > maxcount) maxcount = x.sz[i].count;
    h = malloc(maxcount * es + 16);
    want = malloc(maxcount * es + 16);
    got = malloc(maxcount * es + 16);
    if (!h || !want || !got) {
        rc = tt_cli_bad("out of host memory for %zu-byte buffers", maxcount * es);
        goto out;
    }
    for (int r = 0; r < ngpus; r++) {
        if (tt_gpu_alloc(g, r, maxcount * es + 16, &sb[r]) != TT_OK ||
            tt_gpu_alloc(g, r, maxcount * es + 16, &rb[r]) != TT_OK) {
            tt_cli_bad("%s", tt_error_message());
            rc = VX_RUNTIME;
            goto out;
        }
        tt_verify_fill(h, maxcount, s->dtype, s->op, r, 12345, 0);
        if (tt_gpu_memcpy(sb[r], h, maxcount * es) != TT_OK) {
            tt_cli_bad("%s", tt_error_message());
            rc = VX_RUNTIME;
            goto out;
        }
    }
    if (tt_gpu_comm_is_virtual(g))
        printf("# VIRTUAL RANKS: %d ranks share GPU(s): the verdicts are about this setup, not about %d GPUs\n",
               ngpus, ngpus);
    print_header(&x);
    for (int i = 0; i < x.nsz && !x.failed; i++) {
        vsize *z = &x.sz[i];
        for (int round = 0; round < v->rounds && !x.failed; round++)
            for (int k = 0; k < z->nc && !x.failed; k++) {
                vcand r = z->c[k];
                if (gpu_measure(g, s, z->count, sb, rb, want, got, &r) != TT_OK) fail_x(&x, tt_error_message());
                else keep_best(&z->c[k], &r, round == 0);
            }
        if (x.failed) break;
        judge_size(&x, z);
        print_size(&x, z);
    }
    if (x.failed) tt_cli_bad("%s", x.err);
    rc = finish(&x, VX_OK, start, 1);
out:
    for (int r = 0; r < ngpus; r++) {
        if (sb[r]) tt_gpu_free(g, r, sb[r]);
        if (rb[r]) tt_gpu_free(g, r, rb[r]);
    }
    free(h);
    free(want);
    free(got);
    tt_gpu_comm_destroy(g);
    free(x.sz);
    pthread_mutex_destroy(&x.mu);
    return rc;
}
