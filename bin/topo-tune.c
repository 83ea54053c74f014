/*
 * topo-tune - cost model and tuning tables from a topology file.
 *
 *   topo-tune --input FILE [FILE...] [--nodes N] [--gpus-per-node G] [--nics-per-node K]
 *             [--nic-speed GBPS] [--rails R] [--model topotune|nccl]
 *             [--calibration FILE] [--format json|nccl-csv|table|env]
 *             [--collective NAME|all] [--min-size S] [--max-size S] [--nccl-only]
 *             [--explain SIZE] [--strict] [-o OUT]
 *   topo-tune --input FILE --shapes RxN[,RxN...] [cluster and table options]   (one table per shape)
 *   topo-tune --calibrate FILE... --input TOPO [cluster options] [-o calib.json]
 *   topo-tune --judge-choices FILE... (--table TABLE.json | --input TOPO) [--tolerance X]
 *   topo-tune --expect --input TOPO [--measured FILE...]   (exit 0 PASS, 1 WARN, 2 FAIL)
 *
 * Exit codes: 0 success, 1 --strict and a sanity warning, 2 bad input / usage / I/O error.  See docs/cli-topo-tune.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_input.h"
#include "cli_tune.h"
#include "cli_vendor.h"
#include "tt_topo.h"
#include "tt_tune.h"
#include "tt_xml.h"

static void usage(void)
{
    printf("usage: topo-tune --input FILE [options]\n"
           "  -i, --input FILE...       topology XML of one node (topo-dump output, NCCL_TOPO_DUMP_FILE or an\n"
           "                            hwloc export); several files (or --input repeated, or a topo-dump --merge\n"
           "                            file) = one node each: differing nodes are named, the table is for the slowest\n"
           "  -N, --nodes N             number of nodes (default 1)\n"
           "      --shapes RxN,...      one table per communicator shape (R ranks on N nodes, R/N GPUs per node)\n"
           "                            in one file, e.g. 2x1,4x1,8x1,16x2 (json: a table set; nccl-csv: all rows)\n"
           "  -g, --gpus-per-node G     ranks per node (default: every GPU of the topology)\n"
           "  -k, --nics-per-node K     NIC ports per node (default: from the topology)\n"
           "  -s, --nic-speed GBPS      NIC port speed in Gb/s, e.g. 400 (default: from the topology)\n"
           "  -r, --rails R             fabric rails (default: = NICs per node, rail-optimised)\n"
           "      --fabric F            the network between the nodes: ib, roce, efa, tcpx or socket (default: what the\n"
           "                            topology's NICs show, else ib; also TOPOTUNE_FABRIC)\n"
           "  -m, --model M             topotune (default) or nccl (also in the measurement modes: NCCL rows with NCCL's structure)\n"
           "      --keep-nccl F|off     tables for NCCL (--nccl-only, nccl-csv) from the topotune model: force a candidate only\n"
           "                            where it is predicted faster than NCCL's own choice by more than F (default 0.15)\n"
           "  -c, --calibration FILE    topotune model constants (schema topotune-calibration)\n"
           "  -f, --format F            table (default), json, nccl-csv, env\n"
           "  -C, --collective NAME     allreduce, allgather, reducescatter, broadcast, reduce or all\n"
           "      --min-size S          smallest size of the sweep (default 8; K/M/G suffixes)\n"
           "      --max-size S          largest size of the sweep (default 16G)\n"
           "      --nccl-only           only algorithms NCCL can run (implied by nccl-csv)\n"
           "  -e, --explain SIZE        list every candidate at SIZE with its time or why it is off\n"
           "      --gpu-part NAME       GPUs a partial vendor file lists without device id are this part\n"
           "                            (H100-SXM, H200-SXM, A100-SXM, B200-SXM, ...; also TOPOTUNE_GPU_PART);\n"
           "                            every value it fills is printed on stderr\n"
           "  -o, --output FILE         write there (atomically) instead of stdout\n"
           "      --strict              a sanity warning (prediction absurd for the hardware) exits 1, writes nothing\n"
           "measurements (topo-exec -J, nccl-tests output or -J; docs/calibration.md):\n"
           "      --calibrate FILE...   fit the model constants; writes a calibration file (-o), reports errors\n"
           "      --judge-choices FILE...  was the table's choice the fastest measured candidate? (exit 1 if not)\n"
           "      --table FILE          table to judge (topo-tune -f json); default: built from --input\n"
           "      --tolerance X         a choice within X of the fastest is right (default 0.05)\n"
           "      --among-measured      judge the model's choice among the measured candidates only\n"
           "      --expect              expected busbw per size with PASS/FAIL bands\n"
           "      --measured FILE...    with --expect: judge a run per size (exit 0 PASS, 1 WARN, 2 FAIL)\n"
           "      --from-measured FILE...  a tuning table from measurements: per size the fastest forced\n"
           "                            candidate where it beats NCCL's own choice by --margin F (default 0.03)\n"
           "  -h, --help, -V, --version\n");
}

/* ---- --bench (hidden): time full tables (the generated NVL72: tt_topo_synth_nvl72) ---- */

static int bench_one(const char *label, const tt_topo *t, int nodes, tt_model_kind m)
{
    tt_tune_bench b;
    tt_status st = tt_tune_bench_tables(t, nodes, m, 5, &b);
    if (st != TT_OK) return tt_cli_fail(st);
    printf("| %-26s | %6d | %6d | %-8s | %5d | %9.2f | %9.2f |\n", label, nodes, b.ranks, tt_model_name(m), b.rows,
           b.best_s * 1e3, b.worst_s * 1e3);
    return 0;
}

static int run_bench(const char *input)
{
    tt_xml_doc *doc = NULL;
    tt_topo *t72 = NULL, *t8 = NULL;
    tt_status st = tt_topo_synth_nvl72(72, &doc);
    if (st == TT_OK) st = tt_topo_from_xml(doc, NULL, &t72);
    if (st != TT_OK) return tt_cli_fail(st);
    printf("| configuration              |  nodes |  ranks | model    | rows  |  best ms  |  worst ms |\n");
    printf("|----------------------------|-------:|-------:|----------|------:|----------:|----------:|\n");
    int rc = 0;
    for (int m = 0; m < 2 && !rc; m++) rc = bench_one("generated NVL72 (72 GPUs)", t72, 1, (tt_model_kind)m);
    tt_topo_free(t72);
    tt_xml_doc_free(doc);
    if (rc || !input) return rc;
    tt_xml_doc *d8 = NULL;
    if ((st = tt_cli_read_topology(input, 0, &d8, NULL)) != TT_OK || (st = tt_topo_from_xml(d8, NULL, &t8)) != TT_OK) {
        tt_xml_doc_free(d8);
        return tt_cli_fail(st);
    }
    const char *base = strrchr(input, '/') ? strrchr(input, '/') + 1 : input;
    for (int m = 0; m < 2 && !rc; m++)
        for (int n = 1; n <= 4096 && !rc; n *= 2) rc = bench_one(base, t8, n, (tt_model_kind)m);
    tt_topo_free(t8);
    tt_xml_doc_free(d8);
    return rc;
}

/* hidden: fixture generator, N SM100 GPUs on one NVSwitch */
static int gen_domain(int n)
{
    tt_xml_doc *gd = NULL;
    char *x = NULL;
    size_t xl = 0;
    tt_status gst = tt_topo_synth_nvl72(n, &gd);
    if (gst == TT_OK) gst = tt_xml_write_buffer(gd, TT_XML_NATIVE, &x, &xl);
    tt_xml_doc_free(gd);
    if (gst == TT_OK) gst = tt_cli_write_output(NULL, x, xl);
    free(x);
    return gst == TT_OK ? TT_CLI_EXIT_OK : tt_cli_fail(gst);
}

/* ---- options ---- */

enum { OPT_MIN = 1000, OPT_MAX, OPT_NCCL_ONLY, OPT_BENCH, OPT_GEN, OPT_CALIBRATE, OPT_JUDGE, OPT_EXPECT,
       OPT_MEASURED, OPT_TABLE, OPT_TOL, OPT_AMONG, OPT_FROM_MEAS, OPT_MARGIN, OPT_STRICT, OPT_GPU_PART, OPT_KEEP,
       OPT_SHAPES, OPT_FABRIC };

static const struct option longopts[] = {
    {"input", required_argument, NULL, 'i'},       {"nodes", required_argument, NULL, 'N'},
    {"gpus-per-node", required_argument, NULL, 'g'}, {"nics-per-node", required_argument, NULL, 'k'},
    {"nic-speed", required_argument, NULL, 's'},   {"rails", required_argument, NULL, 'r'},
    {"model", required_argument, NULL, 'm'},       {"calibration", required_argument, NULL, 'c'},
    {"format", required_argument, NULL, 'f'},      {"collective", required_argument, NULL, 'C'},
    {"explain", required_argument, NULL, 'e'},     {"output", required_argument, NULL, 'o'},
    {"min-size", required_argument, NULL, OPT_MIN}, {"max-size", required_argument, NULL, OPT_MAX},
    {"nccl-only", no_argument, NULL, OPT_NCCL_ONLY}, {"bench", no_argument, NULL, OPT_BENCH},
    {"gen-nvswitch-domain", required_argument, NULL, OPT_GEN},
    {"calibrate", no_argument, NULL, OPT_CALIBRATE}, {"judge-choices", no_argument, NULL, OPT_JUDGE},
    {"expect", no_argument, NULL, OPT_EXPECT},      {"measured", no_argument, NULL, OPT_MEASURED},
    {"table", required_argument, NULL, OPT_TABLE},  {"tolerance", required_argument, NULL, OPT_TOL},
    {"among-measured", no_argument, NULL, OPT_AMONG},
    {"from-measured", no_argument, NULL, OPT_FROM_MEAS}, {"margin", required_argument, NULL, OPT_MARGIN},
    {"strict", no_argument, NULL, OPT_STRICT},     {"gpu-part", required_argument, NULL, OPT_GPU_PART},
    {"keep-nccl", required_argument, NULL, OPT_KEEP}, {"shapes", required_argument, NULL, OPT_SHAPES},
    {"fabric", required_argument, NULL, OPT_FABRIC},
    {"help", no_argument, NULL, 'h'},              {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

typedef struct {
    tt_cli_tune_args a;  /* what the run gets (outpath, table, sweep, overrides, ...) */
    const char *input, *calib, *explain, *model_s, *coll_s, *shapes_s;
    const char **inputs; /* --input accumulates: repeated, or several files after one --input */
    int ninputs, nodes, nodes_given, fmt, bench;
    int mode, measured, margin_given, keep_given; /* mode: OPT_CALIBRATE, OPT_JUDGE, OPT_EXPECT, OPT_FROM_MEAS */
    tt_topo_options topts;
} tune_opts;

static int parse_int(const char *opt, const char *v, int lo, int hi, int *out)
{
    long long x;
    if (tt_parse_ll(v, &x) != TT_OK || x < lo || x > hi)
        return tt_cli_usage_error("%s '%s' must be an integer in %d..%d", opt, v, lo, hi);
    *out = (int)x;
    return 0;
}

static int parse_fraction(const char *v, double lo, double hi, int hi_open, double *out)
{
    return tt_parse_double(v, out) != TT_OK || !(*out >= lo) || (hi_open ? *out >= hi : *out > hi);
}

/* one option into o: -1 to go on, else the exit code */
static int parse_option(int c, const char *arg, tune_opts *o)
{
    static const char *const formats[] = {"table", "json", "nccl-csv", "env", NULL};
    tt_fabric ff;
    uint64_t v;
    switch (c) {
    case 'i': o->input = o->inputs[o->ninputs++] = arg; break;
    case OPT_STRICT: o->a.strict = 1; break;
    case OPT_SHAPES: o->shapes_s = arg; break;
    case OPT_FABRIC:
        if (tt_fabric_parse(arg, &ff) != TT_OK) return tt_cli_usage_error("--fabric: %s", tt_error_message());
        o->a.ov.fabric = (int)ff;
        break;
    case OPT_KEEP:
        if (!strcmp(arg, "off")) o->a.w.keep_margin = -1;
        else if (parse_fraction(arg, 0, 10, 1, &o->a.w.keep_margin))
            return tt_cli_usage_error("--keep-nccl '%s' must be a fraction >= 0 (0.05 = 5%%) or 'off'", arg);
        o->keep_given = 1;
        break;
    case 'N':
        if (parse_int("--nodes", arg, 1, 65536, &o->nodes)) return TT_CLI_EXIT_ERROR;
        o->nodes_given = 1;
        break;
    case 'g': return parse_int("--gpus-per-node", arg, 1, 4096, &o->a.ov.gpus_per_node) ? TT_CLI_EXIT_ERROR : -1;
    case 'k': return parse_int("--nics-per-node", arg, 0, 256, &o->a.ov.nics_per_node) ? TT_CLI_EXIT_ERROR : -1;
    case 'r': return parse_int("--rails", arg, 1, 256, &o->a.ov.rails) ? TT_CLI_EXIT_ERROR : -1;
    case 's':
        if (tt_parse_double(arg, &o->a.ov.nic_gbps) != TT_OK || !(o->a.ov.nic_gbps > 0) || o->a.ov.nic_gbps > 1e5)
            return tt_cli_usage_error("--nic-speed '%s' must be a number of Gb/s above 0 (e.g. 400)", arg);
        break;
    case 'm': o->model_s = arg; break;
    case 'c': o->calib = arg; break;
    case 'f': return (o->fmt = tt_cli_choice("--format", arg, formats)) < 0 ? TT_CLI_EXIT_ERROR : -1;
    case 'C': o->coll_s = arg; break;
    case 'e': o->explain = arg; break;
    case 'o': o->a.outpath = arg; break;
    case OPT_MIN:
    case OPT_MAX:
        if (tt_parse_size(arg, &v) != TT_OK || v == 0)
            return tt_cli_usage_error("%s '%s' is not a size (e.g. 8, 64K, 1M, 16G)",
                                      c == OPT_MIN ? "--min-size" : "--max-size", arg);
        *(c == OPT_MIN ? &o->a.w.min_size : &o->a.w.max_size) = v;
        break;
    case OPT_NCCL_ONLY: o->a.w.nccl_only = 1; break;
    case OPT_BENCH: o->bench = 1; break;
    case OPT_CALIBRATE:
    case OPT_JUDGE:
    case OPT_EXPECT:
    case OPT_FROM_MEAS:
        if (o->mode && o->mode != c)
            return tt_cli_usage_error("--calibrate, --judge-choices, --expect and --from-measured exclude each other");
        o->mode = c;
        break;
    case OPT_MEASURED: o->measured = 1; break;
    case OPT_GPU_PART:
        if (tt_cli_gpu_part_check(arg)) return TT_CLI_EXIT_ERROR;
        o->topts.gpu_part = arg;
        break;
    case OPT_TABLE: o->a.table = arg; break;
    case OPT_AMONG: o->a.among_measured = 1; break;
    case OPT_MARGIN:
        if (parse_fraction(arg, 0, 1, 1, &o->a.margin))
            return tt_cli_usage_error("--margin '%s' must be a fraction in [0, 1) (0.03 = 3%%)", arg);
        o->margin_given = 1;
        break;
    case OPT_TOL:
        if (parse_fraction(arg, 0, 10, 0, &o->a.tolerance))
            return tt_cli_usage_error("--tolerance '%s' must be a number in 0..10 (0.05 = 5%%)", arg);
        break;
    case OPT_GEN: {
        int n = 0;
        return parse_int("--gen-nvswitch-domain", arg, 1, 1024, &n) ? TT_CLI_EXIT_ERROR : gen_domain(n);
    }
    case 'h': usage(); return TT_CLI_EXIT_OK;
    case 'V': return tt_cli_print_version();
    default: return TT_CLI_EXIT_ERROR;
    }
    return -1;
}

/* --collective: every bit, or one (*one = its tt_coll; -1 for all) */
static int parse_colls(const char *s, unsigned *colls, int *one)
{
    tt_coll cc;
    *colls = (1u << TT_COLL_COUNT) - 1;
    *one = -1;
    if (!strcmp(s, "all")) return 0;
    if (tt_coll_parse(s, &cc) != TT_OK) return tt_cli_usage_error("--collective: %s", tt_error_message());
    *colls = 1u << cc;
    *one = (int)cc;
    return 0;
}

/* the rules between options and the files after them (--from-measured has its own); -1 when they hold */
static int check_options(const tune_opts *o, int nfiles)
{
    int mode = o->mode, fmt = o->fmt;
    if (o->ninputs > 1 && (mode || o->bench))
        return tt_cli_usage_error("several --input files (a cluster of hosts) go with table output only");
    if (o->a.strict && (mode || o->bench)) return tt_cli_usage_error("--strict goes with table output");
    if (mode == OPT_EXPECT && nfiles > 0 && !o->measured) return tt_cli_usage_error("files after --expect need --measured");
    if (mode == OPT_EXPECT && o->measured && nfiles == 0) return tt_cli_usage_error("--measured needs a file");
    if ((mode == OPT_CALIBRATE || mode == OPT_JUDGE) && nfiles == 0)
        return tt_cli_usage_error("%s needs measurement files", mode == OPT_CALIBRATE ? "--calibrate" : "--judge-choices");
    if (mode && (o->explain || (fmt && !(mode == OPT_EXPECT && fmt == 1))))
        return tt_cli_usage_error("--explain and --format do not apply to measurement modes (but --expect -f json)");
    if (mode && o->calib && o->model_s && !strcmp(o->model_s, "nccl"))
        return tt_cli_usage_error("--calibration holds topotune model constants; --model nccl evaluates NCCL rows with "
                                  "NCCL's constants and the built-in NCCL-rows correction");
    if (o->shapes_s && (mode || o->bench || o->explain || fmt == 3 || o->nodes_given || o->a.ov.gpus_per_node > 0 || o->ninputs > 1))
        return tt_cli_usage_error("--shapes sets the ranks and nodes of each table: it goes with table output (-f table, "
                                  "json or nccl-csv) of one --input, without --nodes, --gpus-per-node or --explain");
    return -1;
}

/* --from-measured FILE... and --judge-choices FILE... --table T: no topology */
static int run_without_topology(tune_opts *o, tt_model_params *params)
{
    unsigned colls;
    tt_model_params_default(params);
    o->a.params = params;
    o->a.w.format = (tt_tune_format)o->fmt;
    if (parse_colls(o->coll_s, &colls, &o->a.mopts.coll)) return TT_CLI_EXIT_ERROR;
    return o->mode == OPT_FROM_MEAS ? tt_cli_from_measured(&o->a) : tt_cli_judge(NULL, NULL, &o->a);
}

/* the rest of o->a for a run with a topology (and the model constants into params) */
static int table_args(tune_opts *o, tt_model_params *params)
{
    tt_cli_tune_args *a = &o->a;
    if (tt_model_parse(o->model_s, &a->model) != TT_OK) return tt_cli_usage_error("%s", tt_error_message());
    if (parse_colls(o->coll_s, &a->w.colls, &a->mopts.coll)) return TT_CLI_EXIT_ERROR;
    if (o->explain && (tt_parse_size(o->explain, &a->w.explain_bytes) != TT_OK || a->w.explain_bytes == 0))
        return tt_cli_usage_error("--explain '%s' is not a size (e.g. 8, 64K, 1M, 1G)", o->explain);
    if (a->w.min_size > a->w.max_size) return tt_cli_usage_error("--min-size is larger than --max-size");
    if (o->fmt == 2) a->w.nccl_only = 1;
    if (o->keep_given && a->w.keep_margin >= 0 &&
        (a->model != TT_MODEL_TOPOTUNE || !a->w.nccl_only || o->mode || o->explain || o->fmt == 3))
        return tt_cli_usage_error("--keep-nccl goes with a topotune-model table for NCCL (--nccl-only or -f nccl-csv); "
                                  "with --model nccl every size is NCCL's choice already");
    /* tables for NCCL made by our model keep NCCL's choice unless the model sees a clear gain */
    if (!(a->model == TT_MODEL_TOPOTUNE && a->w.nccl_only && o->fmt != 3)) a->w.keep_margin = -1;
    tt_model_params_default(params);
    tt_status st;
    if (o->calib && (st = tt_model_params_load(o->calib, params)) != TT_OK) return tt_cli_fail(st);
    a->inputs = o->inputs;
    a->ninputs = o->ninputs;
    a->topts = &o->topts;
    a->nodes = o->nodes_given ? o->nodes : 0;
    a->gpn_given = a->ov.gpus_per_node > 0;
    a->params = params;
    a->w.format = (tt_tune_format)o->fmt;
    a->w.explain = o->explain != NULL;
    return -1;
}

/* one host's topology file (or a merged cluster file): a table, a table set or a measurement mode */
static int run_topology(const tune_opts *o, const tt_tune_shape *shapes, int nshapes)
{
    const tt_cli_tune_args *a = &o->a;
    tt_xml_doc *doc = NULL;
    tt_topo *topo = NULL;
    tt_cluster cl;
    int rc;
    tt_status st = tt_cli_read_topology(o->input, 0, &doc, NULL);
    if (st == TT_OK && tt_topo_doc_is_cluster(doc)) { /* a topo-dump --merge file */
        tt_xml_doc_free(doc);
        if (nshapes) return tt_cli_usage_error("--shapes takes one node's topology, not a merged cluster file");
        return tt_cli_tune_hosts(a);
    }
    if (st == TT_OK) st = tt_topo_from_xml(doc, &o->topts, &topo);
    if (st == TT_OK) tt_cli_print_assumptions(topo);
    if (st == TT_OK) st = tt_topo_check_one_vendor(topo); /* NVIDIA and AMD GPUs make no one communicator */ /* partial vendor files: what was inferred, or that nothing was */
    if (st == TT_OK) st = tt_cluster_for_topo(topo, o->nodes, &a->ov, &cl);
    if (st != TT_OK) rc = tt_cli_fail(st);
    else if (o->mode == OPT_CALIBRATE) rc = tt_cli_calibrate(topo, &cl, a);
    else if (o->mode == OPT_JUDGE) rc = tt_cli_judge(topo, &cl, a);
    else if (o->mode == OPT_EXPECT) rc = tt_cli_expect(topo, &cl, a);
    else rc = nshapes ? tt_cli_tune_shapes(topo, &cl, a, shapes, nshapes) : tt_cli_tune_write(topo, &cl, a, NULL);
    tt_topo_free(topo);
    tt_xml_doc_free(doc);
    return rc;
}

int main(int argc, char **argv)
{
    tt_cli_init("topo-tune");
    static tune_opts o; /* static: the inputs are still reachable at exit */
    o = (tune_opts){.model_s = "topotune", .coll_s = "all", .nodes = 1};
    o.a.ov = TT_CLUSTER_OVERRIDES_NONE;
    o.a.tolerance = 0.05;
    o.a.margin = 0.03;
    o.a.mopts = TT_MEASURE_OPTS_DEFAULT;
    o.a.w.keep_margin = 0.15; /* the conservative plugin table (docs/model.md "Tables for the plugin") */
    o.a.w.min_size = TT_TUNE_MIN_SIZE;
    o.a.w.max_size = TT_TUNE_MAX_SIZE;
    tt_topo_options_default(&o.topts);
    o.inputs = calloc((size_t)argc + 1, sizeof *o.inputs);
    if (!o.inputs) return tt_cli_fail(tt_error_set(TT_ERR_NOMEM, "out of memory"));
    {
        const char *fe = getenv("TOPOTUNE_FABRIC");
        tt_fabric ff;
        if (fe && *fe) {
            if (tt_fabric_parse(fe, &ff) != TT_OK) return tt_cli_usage_error("TOPOTUNE_FABRIC: %s", tt_error_message());
            o.a.ov.fabric = (int)ff;
        }
    }
    tt_model_params params;
    int c, rc;
    while ((c = tt_cli_getopt(argc, argv, "i:N:g:k:s:r:m:c:f:C:e:o:hV", longopts)) != -1)
        if ((rc = parse_option(c, optarg, &o)) >= 0) return rc;
    if (o.measured && o.mode != OPT_EXPECT) return tt_cli_usage_error("--measured goes with --expect");
    if (o.margin_given && o.mode != OPT_FROM_MEAS) return tt_cli_usage_error("--margin goes with --from-measured");
    o.a.files = (const char *const *)argv + optind;
    o.a.nfiles = argc - optind;
    if (o.mode == OPT_FROM_MEAS) {
        if (argc - optind == 0) return tt_cli_usage_error("--from-measured needs measurement files");
        if (o.explain || o.input || o.calib)
            return tt_cli_usage_error("--from-measured takes measurement files only (no --input, --calibration, --explain)");
        if (o.fmt == 3) return tt_cli_usage_error("--format env does not apply to --from-measured");
        return run_without_topology(&o, &params);
    }
    if ((o.a.table || o.a.tolerance != 0.05 || o.a.among_measured) && o.mode != OPT_JUDGE)
        return tt_cli_usage_error("--table, --tolerance and --among-measured go with --judge-choices");
    if (o.a.among_measured && o.a.table) return tt_cli_usage_error("--among-measured ranks with the model (--input), not a --table");
    if (o.a.nfiles > 0 && !o.mode && !o.bench && o.input) /* topo-tune --input a.xml b.xml c.xml */
        for (; optind < argc; o.a.nfiles--) o.inputs[o.ninputs++] = argv[optind++];
    if (o.a.nfiles > 0 && !o.mode) return tt_cli_usage_error("unexpected argument '%s'", argv[optind]);
    if ((rc = check_options(&o, o.a.nfiles)) >= 0) return rc;
    static tt_tune_shape *shapes; /* static: still reachable at exit */
    int nshapes = 0;
    if (o.shapes_s && tt_tune_shapes_parse(o.shapes_s, &shapes, &nshapes) != TT_OK)
        return tt_cli_usage_error("--shapes %s", tt_error_message());
    if (o.bench) return run_bench(o.input);
    if (o.mode == OPT_JUDGE && o.a.table && !o.input) return run_without_topology(&o, &params);
    if (!o.input) return tt_cli_usage_error("--input FILE is required");
    if ((rc = table_args(&o, &params)) >= 0) return rc;
    if (o.ninputs > 1) return tt_cli_tune_hosts(&o.a);
    return run_topology(&o, shapes, nshapes);
}
