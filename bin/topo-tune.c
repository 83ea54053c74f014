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

#include "cli_calib.h"
#include "cli_common.h"
#include "cli_input.h"
#include "cli_tune_hosts.h"
#include "cli_tune_shapes.h"
#include "tt_topo.h"
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

static int bench_one(const char *label, const tt_topo *t, int nodes, tt_model_kind m, FILE *o)
{
    tt_cluster c;
    tt_status st = tt_cluster_from_topo(t, &c);
    if (st != TT_OK) return tt_cli_fail(st);
    c.nodes = nodes;
    if (nodes > 1 && c.nics_per_node == 0) {
        c.nics_per_node = c.gpus_per_node;
        c.nic_gbps = 400;
        c.rails = c.nics_per_node;
    }
    /* channel search + model + every collective x 32 sizes x all candidates; best of 5 */
    double best = 1e30, worst = 0;
    int rows = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = tt_now_s();
        tt_tune_ctx *ctx = NULL;
        if ((st = tt_tune_ctx_new(t, &c, m, NULL, &ctx)) != TT_OK) return tt_cli_fail(st);
        tt_tune_table tab;
        if ((st = tt_tune_table_build(ctx, (1u << TT_COLL_COUNT) - 1, TT_TUNE_MIN_SIZE, TT_TUNE_MAX_SIZE, 0, &tab)) !=
            TT_OK) {
            tt_tune_ctx_free(ctx);
            return tt_cli_fail(st);
        }
        double dt = tt_now_s() - t0;
        rows = tab.n;
        tt_tune_table_free(&tab);
        tt_tune_ctx_free(ctx);
        if (dt < best) best = dt;
        if (dt > worst) worst = dt;
    }
    fprintf(o, "| %-26s | %6d | %6d | %-8s | %5d | %9.2f | %9.2f |\n", label, nodes, nodes * c.gpus_per_node,
            tt_model_name(m), rows, best * 1e3, worst * 1e3);
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
    for (int m = 0; m < 2 && !rc; m++) rc = bench_one("generated NVL72 (72 GPUs)", t72, 1, (tt_model_kind)m, stdout);
    tt_topo_free(t72);
    tt_xml_doc_free(doc);
    if (rc) return rc;
    if (input) {
        tt_xml_doc *d8 = NULL;
        if ((st = tt_cli_read_topology(input, 0, &d8, NULL)) != TT_OK || (st = tt_topo_from_xml(d8, NULL, &t8)) != TT_OK) {
            tt_xml_doc_free(d8);
            return tt_cli_fail(st);
        }
        const char *base = strrchr(input, '/') ? strrchr(input, '/') + 1 : input;
        for (int m = 0; m < 2 && !rc; m++)
            for (int n = 1; n <= 4096 && !rc; n *= 2) rc = bench_one(base, t8, n, (tt_model_kind)m, stdout);
        tt_topo_free(t8);
        tt_xml_doc_free(d8);
    }
    return rc;
}

static int parse_int(const char *opt, const char *v, int lo, int hi, int *out)
{
    long long x;
    if (tt_parse_ll(v, &x) != TT_OK || x < lo || x > hi)
        return tt_cli_usage_error("%s '%s' must be an integer in %d..%d", opt, v, lo, hi);
    *out = (int)x;
    return 0;
}

int main(int argc, char **argv)
{
    tt_cli_init("topo-tune");
    enum { OPT_MIN = 1000, OPT_MAX, OPT_NCCL_ONLY, OPT_BENCH, OPT_GEN, OPT_CALIBRATE, OPT_JUDGE, OPT_EXPECT,
           OPT_MEASURED, OPT_TABLE, OPT_TOL, OPT_AMONG, OPT_FROM_MEAS, OPT_MARGIN, OPT_STRICT, OPT_GPU_PART, OPT_KEEP, OPT_SHAPES, OPT_FABRIC };
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
        {"strict", no_argument, NULL, OPT_STRICT},
        {"gpu-part", required_argument, NULL, OPT_GPU_PART},
        {"keep-nccl", required_argument, NULL, OPT_KEEP},
        {"shapes", required_argument, NULL, OPT_SHAPES},
        {"fabric", required_argument, NULL, OPT_FABRIC},
        {"help", no_argument, NULL, 'h'},              {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    const char *input = NULL, *calib = NULL, *outpath = NULL, *explain = NULL, *model_s = "topotune";
    const char *coll_s = "all";
    int nodes = 1, gpn = -1, nics = -1, rails = -1, nccl_only = 0, fmt = 0, bench = 0;
    int mode = 0, measured = 0, among = 0; /* mode: OPT_CALIBRATE, OPT_JUDGE, OPT_EXPECT */
    const char *table = NULL;
    tt_topo_options topts;
    tt_topo_options_default(&topts);
    double tolerance = 0.05, margin = 0.03;
    int margin_given = 0, strict = 0, ninputs = 0, nodes_given = 0, keep_given = 0;
    const char *shapes_s = NULL;
    double keep_margin = 0.15; /* the conservative plugin table (docs/model.md "Tables for the plugin") */
    /* --input accumulates: repeated, or several files after one --input (positional, below) */
    static const char **inputs; /* static: still reachable at exit */
    inputs = calloc((size_t)argc + 1, sizeof *inputs);
    if (!inputs) return tt_cli_fail(tt_error_set(TT_ERR_NOMEM, "out of memory"));
    double nic_speed = -1;
    int fabric = -1; /* tt_fabric; -1 = from the topology */
    {
        const char *fe = getenv("TOPOTUNE_FABRIC");
        tt_fabric ff;
        if (fe && *fe) {
            if (tt_fabric_parse(fe, &ff) != TT_OK) return tt_cli_usage_error("TOPOTUNE_FABRIC: %s", tt_error_message());
            fabric = (int)ff;
        }
    }
    uint64_t min_size = TT_TUNE_MIN_SIZE, max_size = TT_TUNE_MAX_SIZE;
    static const char *const formats[] = {"table", "json", "nccl-csv", "env", NULL};
    int c;
    while ((c = tt_cli_getopt(argc, argv, "i:N:g:k:s:r:m:c:f:C:e:o:hV", longopts)) != -1) {
        switch (c) {
        case 'i': input = inputs[ninputs++] = optarg; break;
        case OPT_STRICT: strict = 1; break;
        case OPT_SHAPES: shapes_s = optarg; break;
        case OPT_FABRIC: {
            tt_fabric ff;
            if (tt_fabric_parse(optarg, &ff) != TT_OK) return tt_cli_usage_error("--fabric: %s", tt_error_message());
            fabric = (int)ff;
            break;
        }
        case OPT_KEEP:
            if (!strcmp(optarg, "off")) keep_margin = -1;
            else if (tt_parse_double(optarg, &keep_margin) != TT_OK || !(keep_margin >= 0) || keep_margin >= 10)
                return tt_cli_usage_error("--keep-nccl '%s' must be a fraction >= 0 (0.05 = 5%%) or 'off'", optarg);
            keep_given = 1;
            break;
        case 'N':
            if (parse_int("--nodes", optarg, 1, 65536, &nodes)) return TT_CLI_EXIT_ERROR;
            nodes_given = 1;
            break;
        case 'g': if (parse_int("--gpus-per-node", optarg, 1, 4096, &gpn)) return TT_CLI_EXIT_ERROR; break;
        case 'k': if (parse_int("--nics-per-node", optarg, 0, 256, &nics)) return TT_CLI_EXIT_ERROR; break;
        case 'r': if (parse_int("--rails", optarg, 1, 256, &rails)) return TT_CLI_EXIT_ERROR; break;
        case 's':
            if (tt_parse_double(optarg, &nic_speed) != TT_OK || !(nic_speed > 0) || nic_speed > 1e5)
                return tt_cli_usage_error("--nic-speed '%s' must be a number of Gb/s above 0 (e.g. 400)", optarg);
            break;
        case 'm': model_s = optarg; break;
        case 'c': calib = optarg; break;
        case 'f': if ((fmt = tt_cli_choice("--format", optarg, formats)) < 0) return TT_CLI_EXIT_ERROR; break;
        case 'C': coll_s = optarg; break;
        case 'e': explain = optarg; break;
        case 'o': outpath = optarg; break;
        case OPT_MIN:
        case OPT_MAX: {
            uint64_t v;
            if (tt_parse_size(optarg, &v) != TT_OK || v == 0)
                return tt_cli_usage_error("%s '%s' is not a size (e.g. 8, 64K, 1M, 16G)",
                                          c == OPT_MIN ? "--min-size" : "--max-size", optarg);
            if (c == OPT_MIN) min_size = v; else max_size = v;
            break;
        }
        case OPT_NCCL_ONLY: nccl_only = 1; break;
        case OPT_BENCH: bench = 1; break;
        case OPT_CALIBRATE:
        case OPT_JUDGE:
        case OPT_EXPECT:
        case OPT_FROM_MEAS:
            if (mode && mode != c)
                return tt_cli_usage_error("--calibrate, --judge-choices, --expect and --from-measured exclude each other");
            mode = c;
            break;
        case OPT_MEASURED: measured = 1; break;
        case OPT_GPU_PART:
            if (tt_cli_gpu_part_check(optarg)) return TT_CLI_EXIT_ERROR;
            topts.gpu_part = optarg;
            break;
        case OPT_TABLE: table = optarg; break;
        case OPT_AMONG: among = 1; break;
        case OPT_MARGIN:
            if (tt_parse_double(optarg, &margin) != TT_OK || !(margin >= 0) || margin >= 1)
                return tt_cli_usage_error("--margin '%s' must be a fraction in [0, 1) (0.03 = 3%%)", optarg);
            margin_given = 1;
            break;
        case OPT_TOL:
            if (tt_parse_double(optarg, &tolerance) != TT_OK || !(tolerance >= 0) || tolerance > 10)
                return tt_cli_usage_error("--tolerance '%s' must be a number in 0..10 (0.05 = 5%%)", optarg);
            break;
        case OPT_GEN: { /* hidden: fixture generator, N SM100 GPUs on one NVSwitch */
            int n;
            if (parse_int("--gen-nvswitch-domain", optarg, 1, 1024, &n)) return TT_CLI_EXIT_ERROR;
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
        case 'h': usage(); return TT_CLI_EXIT_OK;
        case 'V': return tt_cli_print_version();
        default: return TT_CLI_EXIT_ERROR;
        }
    }
    if (measured && mode != OPT_EXPECT) return tt_cli_usage_error("--measured goes with --expect");
    if (margin_given && mode != OPT_FROM_MEAS) return tt_cli_usage_error("--margin goes with --from-measured");
    if (mode == OPT_FROM_MEAS) {
        if (argc - optind == 0) return tt_cli_usage_error("--from-measured needs measurement files");
        if (explain || input || calib) return tt_cli_usage_error("--from-measured takes measurement files only (no --input, --calibration, --explain)");
        if (fmt == 3) return tt_cli_usage_error("--format env does not apply to --from-measured");
        tt_cli_calib_args fa;
        memset(&fa, 0, sizeof fa);
        fa.files = (const char *const *)argv + optind;
        fa.nfiles = argc - optind;
        fa.mopts = TT_MEASURE_OPTS_DEFAULT;
        if (strcmp(coll_s, "all")) {
            tt_coll cc;
            if (tt_coll_parse(coll_s, &cc) != TT_OK) return tt_cli_usage_error("--collective: %s", tt_error_message());
            fa.mopts.coll = cc;
        }
        fa.outpath = outpath;
        fa.margin = margin;
        fa.format = fmt;
        return tt_cli_from_measured(&fa);
    }
    if ((table || tolerance != 0.05 || among) && mode != OPT_JUDGE)
        return tt_cli_usage_error("--table, --tolerance and --among-measured go with --judge-choices");
    if (among && table) return tt_cli_usage_error("--among-measured ranks with the model (--input), not a --table");
    int nfiles = argc - optind;
    if (nfiles > 0 && !mode && !bench && input) /* topo-tune --input a.xml b.xml c.xml */
        for (; optind < argc; nfiles--) inputs[ninputs++] = argv[optind++];
    if (nfiles > 0 && !mode) return tt_cli_usage_error("unexpected argument '%s'", argv[optind]);
    if (ninputs > 1 && (mode || bench))
        return tt_cli_usage_error("several --input files (a cluster of hosts) go with table output only");
    if (strict && (mode || bench)) return tt_cli_usage_error("--strict goes with table output");
    if (mode == OPT_EXPECT && nfiles > 0 && !measured)
        return tt_cli_usage_error("files after --expect need --measured");
    if (mode == OPT_EXPECT && measured && nfiles == 0) return tt_cli_usage_error("--measured needs a file");
    if ((mode == OPT_CALIBRATE || mode == OPT_JUDGE) && nfiles == 0)
        return tt_cli_usage_error("%s needs measurement files", mode == OPT_CALIBRATE ? "--calibrate" : "--judge-choices");
    if (mode && (explain || (fmt && !(mode == OPT_EXPECT && fmt == 1))))
        return tt_cli_usage_error("--explain and --format do not apply to measurement modes (but --expect -f json)");
    if (mode && calib && model_s && !strcmp(model_s, "nccl"))
        return tt_cli_usage_error("--calibration holds topotune model constants; --model nccl evaluates NCCL rows with "
                                  "NCCL's constants and the built-in NCCL-rows correction");
    if (shapes_s && (mode || bench || explain || fmt == 3 || nodes_given || gpn > 0 || ninputs > 1))
        return tt_cli_usage_error("--shapes sets the ranks and nodes of each table: it goes with table output (-f table, "
                                  "json or nccl-csv) of one --input, without --nodes, --gpus-per-node or --explain");
    static tt_tune_shape *shapes; /* static: still reachable at exit */
    int nshapes = 0;
    if (shapes_s && tt_cli_parse_shapes(shapes_s, &shapes, &nshapes)) return TT_CLI_EXIT_ERROR;
    if (bench) return run_bench(input);
    if (mode == OPT_JUDGE && table && !input) {
        tt_cli_calib_args ja;
        memset(&ja, 0, sizeof ja);
        tt_model_params_default(&ja.params);
        ja.files = (const char *const *)argv + optind;
        ja.nfiles = nfiles;
        ja.mopts = TT_MEASURE_OPTS_DEFAULT;
        if (strcmp(coll_s, "all")) {
            tt_coll cc;
            if (tt_coll_parse(coll_s, &cc) != TT_OK) return tt_cli_usage_error("--collective: %s", tt_error_message());
            ja.mopts.coll = cc;
        }
        ja.outpath = outpath;
        ja.table = table;
        ja.tolerance = tolerance;
        return tt_cli_judge(&ja);
    }
    if (!input) return tt_cli_usage_error("--input FILE is required");
    tt_model_kind model;
    if (tt_model_parse(model_s, &model) != TT_OK) return tt_cli_usage_error("%s", tt_error_message());
    unsigned colls = 0;
    if (!strcmp(coll_s, "all")) {
        colls = (1u << TT_COLL_COUNT) - 1;
    } else {
        tt_coll cc;
        if (tt_coll_parse(coll_s, &cc) != TT_OK) return tt_cli_usage_error("--collective: %s", tt_error_message());
        colls = 1u << cc;
    }
    uint64_t explain_bytes = 0;
    if (explain && (tt_parse_size(explain, &explain_bytes) != TT_OK || explain_bytes == 0))
        return tt_cli_usage_error("--explain '%s' is not a size (e.g. 8, 64K, 1M, 1G)", explain);
    if (min_size > max_size)
        return tt_cli_usage_error("--min-size is larger than --max-size");
    if (fmt == 2) nccl_only = 1;
    if (keep_given && keep_margin >= 0 && (model != TT_MODEL_TOPOTUNE || !nccl_only || mode || explain || fmt == 3))
        return tt_cli_usage_error("--keep-nccl goes with a topotune-model table for NCCL (--nccl-only or -f nccl-csv); "
                                  "with --model nccl every size is NCCL's choice already");
    /* tables for NCCL made by our model keep NCCL's choice unless the model sees a clear gain */
    if (!(model == TT_MODEL_TOPOTUNE && nccl_only && fmt != 3)) keep_margin = -1;

    tt_model_params params;
    tt_model_params_default(&params);
    tt_status st;
    if (calib && (st = tt_model_params_load(calib, &params)) != TT_OK) return tt_cli_fail(st);

    tt_cli_tune_args ta = {inputs, ninputs, nodes_given ? nodes : 0, {gpn, nics, rails, nic_speed, fabric}, model, &params,
                           colls, min_size, max_size, explain_bytes, nccl_only, fmt, explain != NULL, strict, outpath,
                           keep_margin};
    if (ninputs > 1) return tt_cli_tune_hosts(&ta);
    tt_xml_doc *doc = NULL;
    tt_topo *topo = NULL;
    int rc = TT_CLI_EXIT_ERROR;
    if ((st = tt_cli_read_topology(input, 0, &doc, NULL)) != TT_OK) goto fail;
    if (doc->root && !strcmp(doc->root->name, TT_ELEM_CLUSTER)) { /* a topo-dump --merge file */
        if (nshapes) {
            tt_xml_doc_free(doc);
            return tt_cli_usage_error("--shapes takes one node's topology, not a merged cluster file");
        }
        tt_xml_doc_free(doc);
        return tt_cli_tune_hosts(&ta);
    }
    if ((st = tt_topo_from_xml(doc, &topts, &topo)) != TT_OK) goto fail;
    tt_cli_print_assumptions(topo); /* partial vendor files: what was inferred, or that nothing was */
    tt_cluster cl;
    if ((st = tt_cluster_for_topo(topo, nodes, &ta.ov, &cl)) != TT_OK) goto fail;
    if (mode) {
        tt_cli_calib_args ca;
        memset(&ca, 0, sizeof ca);
        ca.topo = topo;
        ca.cl = cl;
        ca.gpn_given = gpn > 0;
        ca.params = params;
        ca.files = (const char *const *)argv + optind;
        ca.nfiles = nfiles;
        ca.mopts = TT_MEASURE_OPTS_DEFAULT;
        if (colls != (1u << TT_COLL_COUNT) - 1)
            for (int k = 0; k < TT_COLL_COUNT; k++)
                if (colls == 1u << k) ca.mopts.coll = k;
        ca.outpath = outpath;
        ca.table = table;
        ca.tolerance = tolerance;
        ca.among_measured = among;
        ca.colls = colls;
        ca.min_size = min_size;
        ca.max_size = max_size;
        ca.nccl_only = nccl_only;
        ca.model = model;
        ca.format = fmt;
        rc = mode == OPT_CALIBRATE ? tt_cli_calibrate(&ca) : mode == OPT_JUDGE ? tt_cli_judge(&ca) : tt_cli_expect(&ca);
        goto done;
    }
    rc = nshapes ? tt_cli_tune_shapes(topo, &cl, &ta, shapes, nshapes) : tt_cli_tune_write(topo, &cl, &ta, NULL);
    goto done;
fail:
    rc = tt_cli_fail(st);
done:
    tt_topo_free(topo);
    tt_xml_doc_free(doc);
    return rc;
}
