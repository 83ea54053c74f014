/*
 * cli_validate.c - topo-exec --validate: was the tuning table's choice right on this machine?
 * This file: options, the table or the model, and the plan of every size (choice and runner-ups);
 * cli_validate_report.c judges and reports, cli_validate_run.c measures.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_input.h"
#include "cli_validate_internal.h"
#include "tt_topo.h"
#include "tt_tune.h"
#include "tt_xml.h"

static const tt_plan plan_default = TT_PLAN_DEFAULT;

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
const char *vld_coll_name(tt_coll c)
{
    static const char *const n[TT_COLL_COUNT] = {
        [TT_COLL_ALLREDUCE] = "all_reduce", [TT_COLL_REDUCESCATTER] = "reduce_scatter",
        [TT_COLL_ALLGATHER] = "all_gather", [TT_COLL_BROADCAST] = "broadcast", [TT_COLL_REDUCE] = "reduce"};
    return (unsigned)c < TT_COLL_COUNT ? n[c] : "?";
}

void vld_cand_name(char *b, size_t n, const vcand *c)
{
    snprintf(b, n, "%s/%s", tt_algo_label(c->algo), tt_proto_name(c->proto));
}

double vld_cand_time(const vcand *c)
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
        if ((st = tt_cli_read_topology(topo, 0, &m->doc, NULL)) != TT_OK) return tt_error_prefix(st, "--topo %s", topo);
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
    /* the channels the executor will run (engine_can_run resolved them), so that the model ranks
     * what actually runs: on GPUs the default plan gives small sizes one channel */
    x.channels = c->channels > 0 ? c->channels : c->ran_channels > 0 ? c->ran_channels : 0;
    x.time_us = 1;
    snprintf(x.where, sizeof x.where, "validate %llu bytes", (unsigned long long)bytes);
    double us;
    return tt_calib_predict(m->topo, &m->base, &m->params, &x, &us) == TT_OK && us > 0 ? us : -1;
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

int vld_plan_sizes(vctx *x, const vengine *e)
{
    const tt_cli_validate_opts *v = x->v;
    const tt_cli_sweep *s = x->s;
    vmodel m;
    memset(&m, 0, sizeof m);
    tt_tune_table tab;
    memset(&tab, 0, sizeof tab);
    int rc = VX_OK;
    if (v->table) {
        if (tt_tune_table_load(v->table, &tab) != TT_OK) { /* errors name path:line or the entry */
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
            const tt_tune_entry *te = tt_tune_table_find(&tab, s->coll, z->bytes);
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
                vld_cand_name(cn, sizeof cn, &choice);
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
    tt_tune_table_free(&tab);
    model_free(&m);
    return rc;
}

int64_t vld_plan_hash(const vctx *x)
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
