/* topo-dump - read a topology (NCCL's XML or ours), check it, and write it
 * as native XML, NCCL XML, JSON, Graphviz or an nvidia-smi style matrix.
 *
 * Inputs are "sources" that each produce a tt_xml_doc: the file source
 * (--input FILE) and the live scan (default; --hwloc-xml FILE and
 * --sysfs-root DIR scan a recorded machine, bin/cli_scan.c); everything after
 * loading (validation, --check, conversion, output) is shared.  The text
 * formats are the library's (tt_topo_format_at); svg and png render its
 * Graphviz drawing with Graphviz's own `dot` program, run here.
 *
 * Exit codes: 0 ok, 1 warnings found (--validate, --check), 2 errors,
 * unreadable or unbuildable input, failed output, usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_input.h"
#include "cli_scan.h"
#include "cli_vendor.h"
#include "tt_topo.h"
#include "tt_xml.h"

/* output formats: the library's table ("native" first), then the rendered drawings */
#define FMT_MAX 32
static const char *format_names[FMT_MAX + 1];
static int nlib_formats;
static const char *const drawings[] = {"svg", "png"};
static void format_names_init(void)
{
    while (nlib_formats < FMT_MAX - 2 && tt_topo_format_at(nlib_formats))
        format_names[nlib_formats] = tt_topo_format_at(nlib_formats)->name, nlib_formats++;
    format_names[nlib_formats] = drawings[0];
    format_names[nlib_formats + 1] = drawings[1];
}
static const char *format_help(int i)
{
    return i < nlib_formats ? tt_topo_format_at(i)->help : "the drawing rendered (needs Graphviz's dot)";
}

typedef struct {
    const char *input;
    const char *output;
    int format;
    int validate;
    int quiet;
    int check;              /* --check: health findings of the topology */
    int merge;              /* --merge FILE...: one cluster file */
    tt_cli_scan_opts scan;  /* live-scan source options */
    const char *vendor_file; /* --vendor-file: fuse a vendor topology file with the scan */
    tt_topo_options topts;  /* --gpu-part */
} dump_opts;

static int is_format(const dump_opts *o, const char *name) { return !strcmp(format_names[o->format], name); }

/* ------------------------------------------------------------- findings */

/* --validate / --check: findings as text (stderr, or OUT) or JSON (OUT or stdout) */
static int report_findings(const dump_opts *o, tt_status st, const tt_findings *f)
{
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    if (st == TT_OK)
        st = is_format(o, "json") ? tt_findings_write_json(f, o->input, &sb) : tt_findings_write_text(f, o->input, &sb);
    int rc = st == TT_OK ? tt_cli_exit_for_severity(tt_findings_max_severity(f)) : TT_CLI_EXIT_ERROR;
    if (st == TT_OK && (is_format(o, "json") || o->output))
        st = tt_cli_write_output(o->output, sb.data ? sb.data : "", sb.len);
    else if (st == TT_OK && !o->quiet && sb.len)
        fwrite(sb.data, 1, sb.len, stderr);
    if (st != TT_OK) rc = tt_cli_fail(st);
    tt_strbuf_free(&sb);
    return rc;
}

static int run_findings(const dump_opts *o, const tt_xml_doc *doc)
{
    tt_findings f;
    tt_findings_init(&f);
    tt_status st = o->check ? tt_topo_check(doc, &f) : tt_topo_validate_build(doc, &o->topts, &f);
    int rc = report_findings(o, st, &f);
    tt_findings_free(&f);
    return rc;
}

/* One line on stderr when the input has problems a conversion does not show. */
static void summarize(const dump_opts *o, const tt_xml_doc *doc)
{
    tt_findings f;
    if (o->quiet) return;
    tt_findings_init(&f);
    if (tt_topo_validate(doc, &f) == TT_OK) {
        int nw = tt_findings_count(&f, TT_SEV_WARN), ne = tt_findings_count(&f, TT_SEV_ERROR);
        if (nw || ne) tt_cli_error("%s: %d error(s), %d warning(s); run with --validate to list them", o->input, ne, nw);
    }
    tt_findings_free(&f);
}

/* ------------------------------------------------------------- conversion */

/* the drawing through Graphviz's dot -T<fmt> (run with a 60 s limit) */
static tt_status render_dot(const tt_strbuf *dot, const char *fmt, tt_strbuf *out)
{
    char tmp[] = "/tmp/topo-dump-dot.XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) return tt_error_set(TT_ERR_IO, "cannot create a temporary file for Graphviz: %s", strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (!f || fwrite(dot->data, 1, dot->len, f) != dot->len || fclose(f) != 0) {
        unlink(tmp);
        return tt_error_set(TT_ERR_IO, "cannot write the Graphviz input %s", tmp);
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "timeout 60 dot -T%s '%s' 2>/dev/null", fmt, tmp);
    FILE *p = popen(cmd, "r");
    if (!p) {
        unlink(tmp);
        return tt_error_set(TT_ERR_SYSTEM, "cannot run Graphviz's dot: %s", strerror(errno));
    }
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0) tt_strbuf_appendn(out, chunk, n);
    int status = pclose(p);
    unlink(tmp);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 127)
        return tt_error_set(TT_ERR_UNSUPPORTED, "--format %s needs Graphviz's dot program (Debian: apt-get install "
                                                "graphviz); --format dot writes its input", fmt);
    if (code != 0 || out->len == 0) return tt_error_set(TT_ERR_SYSTEM, "Graphviz's dot -T%s failed (exit %d)", fmt, code);
    return tt_strbuf_status(out);
}

/* the chosen format: the library's writer, or its drawing rendered */
static tt_status write_format(const dump_opts *o, const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *out)
{
    if (o->format < nlib_formats) return tt_topo_format_write(format_names[o->format], doc, t, out);
    tt_strbuf dot;
    tt_strbuf_init(&dot);
    tt_status st = tt_topo_format_write("dot", doc, t, &dot);
    if (st == TT_OK) st = render_dot(&dot, format_names[o->format], out);
    tt_strbuf_free(&dot);
    return st;
}

/* Convert: build the graph (a file that converts must also be a usable graph), then write it. */
static int run_convert(const dump_opts *o, const tt_xml_doc *doc)
{
    tt_topo *t = NULL;
    tt_strbuf out;
    tt_strbuf_init(&out);
    tt_status st = tt_topo_require_system(doc, o->input);
    if (st == TT_OK) st = tt_topo_from_xml(doc, &o->topts, &t);
    if (st == TT_OK && !o->quiet) tt_cli_print_assumptions(t);
    if (st == TT_OK) st = write_format(o, doc, t, &out);
    if (st == TT_OK) st = tt_cli_write_output(o->output, out.data ? out.data : "", out.len);
    tt_strbuf_free(&out);
    tt_topo_free(t);
    if (st != TT_OK) return tt_cli_fail(st);
    summarize(o, doc);
    return TT_CLI_EXIT_OK;
}

/* ------------------------------------------------------------- options */

/* -o patterns for launchers (srun topo-dump -o %h.xml): %h this host's short name, %t the task's
 * rank (SLURM_PROCID, RANK, OMPI_COMM_WORLD_RANK, PMI_RANK; 0 without), %% a '%'.  NULL after a
 * message for any other %. */
static const char *output_pattern(const char *o, char *buf, size_t n)
{
    if (!o || !strchr(o, '%')) return o;
    static const char *const rank_vars[] = {"SLURM_PROCID", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"};
    size_t k = 0;
    for (const char *p = o; *p && k + 1 < n; p++) {
        char part[256] = "";
        if (*p != '%') {
            buf[k++] = *p;
            continue;
        }
        p++;
        if (*p == 'h') {
            gethostname(part, sizeof part - 1);
            char *dot = strchr(part, '.');
            if (dot) *dot = '\0';
        } else if (*p == 't') {
            const char *r = NULL;
            for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars && !r; i++) r = getenv(rank_vars[i]);
            snprintf(part, sizeof part, "%s", r && *r ? r : "0");
        } else if (*p == '%') {
            snprintf(part, sizeof part, "%%");
        } else {
            tt_cli_usage_error("-o '%s': unknown pattern '%%%c' (%%h host, %%t task rank, %%%% a '%%')", o, *p ? *p : ' ');
            return NULL;
        }
        for (char *q = part; *q && k + 1 < n; q++) buf[k++] = *q;
    }
    buf[k] = '\0';
    return buf;
}

static void usage(void)
{
    printf("usage: topo-dump [--input FILE | SCAN OPTIONS] [--format FMT] [-o OUT]\n"
           "                 [--validate | --check] [--quiet]\n"
           "       topo-dump --merge FILE... [-o cluster.xml]\n"
           "       topo-dump --help | --version\n"
           "\n"
           "Scan this machine (default), or read a topology XML file (NCCL's NCCL_TOPO_FILE\n"
           "dialect or topotune's native superset), and write it in another format.\n"
           "\n"
           "  -i, --input FILE    topology XML to read instead of scanning ('-' = standard input):\n"
           "                      NCCL/native XML, or an hwloc export (lstopo --of xml, 2.x/3.0)\n"
           "      --hwloc-xml FILE  the same for an hwloc export (alias kept)\n"
           "      --sysfs-root DIR  scan a recorded/fake sysfs tree (DIR/sys, DIR/proc);\n"
           "                      also TOPOTUNE_SYSFS_ROOT\n"
           "      --no-nvml, --no-cuda, --no-ibv, --no-hwloc\n"
           "                      skip that probe of the live scan\n"
           "      --scan-report   one line per scan probe on stderr (ran, saw, missed)\n"
           "      --vendor-file FILE  fuse a vendor topology file with the scan, as NCCL does\n"
           "                      with NCCL_TOPO_FILE: the file's PCIe tree and attributes\n"
           "                      first, the scan fills in by bus id (GPUs, NVLink, NICs)\n"
           "      --gpu-part NAME GPUs a partial file lists without device id are this part\n"
           "                      (H100-SXM, H200-SXM, A100-SXM, B200-SXM, ...; also\n"
           "                      TOPOTUNE_GPU_PART); every value it fills is printed\n"
           "  -f, --format FMT    output format (default native):\n");
    for (int i = 0; format_names[i]; i++)
        printf("                        %-8s %s\n", format_names[i], format_help(i));
    printf("  -o, --output OUT    write to OUT atomically (default: standard output);\n"
           "                      %%h in OUT: this host's short name, %%t: the task's rank\n"
           "                      (SLURM_PROCID, RANK, ...), for srun topo-dump -o %%h.xml\n"
           "                      on any error an existing OUT is left untouched\n"
           "      --validate      lint the input instead of converting it: findings as text on\n"
           "                      stderr (or OUT), or as JSON with --format json\n"
           "      --check         health findings instead of converting (PCIe links below\n"
           "                      their maximum, GPU/NIC on different NUMA nodes, no P2P,\n"
           "                      NVLinks down, RDMA ports not ACTIVE or MTU < 4096, no NUMA\n"
           "                      data, no GPUDirect RDMA): text on stderr, JSON with -f json\n"
           "      --merge FILE... one cluster file from per-node files (srun topo-dump -o %%h.xml):\n"
           "                      <cluster> holding each <system host=\"NAME\">, NAME = file name\n"
           "                      without .xml; topo-tune --input reads it as one node per host\n"
           "  -q, --quiet         no findings or summary on stderr (exit code only)\n"
           "  -h, --help          this help\n"
           "  -V, --version       version\n"
           "\n"
           "Exit codes:\n"
           "  0  success (with --validate/--check: no finding above info)\n"
           "  1  --validate/--check found warnings but no errors\n"
           "  2  errors found, input unreadable or not a buildable topology, output failed,\n"
           "     or a usage error\n");
}


static const struct option longopts[] = {
    {"input", required_argument, NULL, 'i'},      {"format", required_argument, NULL, 'f'},
    {"output", required_argument, NULL, 'o'},     {"validate", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},            {"check", no_argument, NULL, 'C'},
    {"hwloc-xml", required_argument, NULL, 'X'},  {"sysfs-root", required_argument, NULL, 'R'},
    {"no-nvml", no_argument, NULL, 'N'},          {"no-cuda", no_argument, NULL, 'U'},
    {"no-ibv", no_argument, NULL, 'B'},           {"no-hwloc", no_argument, NULL, 'H'},
    {"scan-report", no_argument, NULL, 'S'},      {"merge", no_argument, NULL, 'M'},
    {"vendor-file", required_argument, NULL, 'F'}, {"gpu-part", required_argument, NULL, 'P'},
    {"help", no_argument, NULL, 'h'},             {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* one option into o: -1 to go on, else the exit code */
static int parse_option(int c, const char *arg, dump_opts *o)
{
    switch (c) {
    case 'i': o->input = arg; break;
    case 'f': return (o->format = tt_cli_choice("format", arg, format_names)) < 0 ? TT_CLI_EXIT_ERROR : -1;
    case 'o': o->output = arg; break;
    case 'v': o->validate = 1; break;
    case 'q': o->quiet = 1; break;
    case 'C': o->check = 1; break;
    case 'X': o->scan.hwloc_xml = arg; break;
    case 'R': o->scan.sysfs_root = arg; break;
    case 'N': o->scan.no_nvml = 1; break;
    case 'U': o->scan.no_cuda = 1; break;
    case 'B': o->scan.no_ibv = 1; break;
    case 'H': o->scan.no_hwloc = 1; break;
    case 'S': o->scan.report = 1; break;
    case 'M': o->merge = 1; break;
    case 'F': o->vendor_file = arg; break;
    case 'P':
        if (tt_cli_gpu_part_check(arg)) return TT_CLI_EXIT_ERROR;
        o->topts.gpu_part = arg;
        break;
    case 'h': usage(); return TT_CLI_EXIT_OK;
    case 'V': return tt_cli_print_version();
    default: return TT_CLI_EXIT_ERROR; /* message printed */
    }
    return -1;
}

/* topo-dump --merge a.xml b.xml ... -o cluster.xml */
static int run_merge(const dump_opts *o, const char *const *files, int n)
{
    if (n <= 0) return tt_cli_usage_error("--merge needs the per-node files");
    if (o->input || o->validate || o->check || !is_format(o, "native") || o->scan.hwloc_xml || o->scan.sysfs_root)
        return tt_cli_usage_error("--merge takes per-node files and -o only (native XML)");
    tt_xml_doc *m = NULL;
    tt_status st = tt_hostset_merge_files(files, n, &m);
    if (st == TT_OK) st = tt_xml_write_file(m, TT_XML_NATIVE, o->output);
    tt_xml_doc_free(m);
    if (st != TT_OK) return tt_cli_fail(st);
    if (!o->quiet) fprintf(stderr, "topo-dump: merged %d file%s\n", n, n == 1 ? "" : "s");
    return TT_CLI_EXIT_OK;
}

/* the rules between the source options; -1 when they hold */
static int check_sources(const dump_opts *o)
{
    if (o->input && !*o->input) return tt_cli_usage_error("--input needs a file name");
    if (o->input && (o->scan.hwloc_xml || o->scan.sysfs_root))
        return tt_cli_usage_error("--input reads a topology file; --hwloc-xml and --sysfs-root "
                                  "select a scan: give one or the other");
    if (o->scan.hwloc_xml && o->scan.sysfs_root)
        return tt_cli_usage_error("--hwloc-xml and --sysfs-root are two different scans: give one");
    if ((o->scan.hwloc_xml && !*o->scan.hwloc_xml) || (o->scan.sysfs_root && !*o->scan.sysfs_root))
        return tt_cli_usage_error("--hwloc-xml/--sysfs-root need a path");
    if (o->vendor_file && (!*o->vendor_file || o->input))
        return tt_cli_usage_error("--vendor-file FILE is fused with a scan (live, --sysfs-root or "
                                  "--hwloc-xml), not with --input");
    if (o->check && o->validate) return tt_cli_usage_error("--check and --validate are two modes: give one");
    return -1;
}

int main(int argc, char **argv)
{
    dump_opts o;
    tt_xml_doc *doc = NULL;
    int c, rc;

    tt_cli_init("topo-dump");
    memset(&o, 0, sizeof o);
    format_names_init();
    o.format = 0; /* native */
    tt_topo_options_default(&o.topts);
    while ((c = tt_cli_getopt(argc, argv, "i:f:o:qhV", longopts)) != -1)
        if ((rc = parse_option(c, optarg, &o)) >= 0) return rc;
    if (o.merge) return run_merge(&o, (const char *const *)argv + optind, argc - optind);
    if (optind < argc) return tt_cli_usage_error("unexpected argument '%s'", argv[optind]);
    static char outbuf[4096];
    if (o.output && !(o.output = output_pattern(o.output, outbuf, sizeof outbuf))) return TT_CLI_EXIT_ERROR;
    if ((rc = check_sources(&o)) >= 0) return rc;
    o.scan.quiet = o.quiet;
    /* NCCL/native XML from a file (an hwloc export is scanned offline, bin/cli_input.c), or the scan */
    const char *scan_label = NULL;
    tt_status st = o.input ? tt_cli_read_topology(o.input, o.quiet, &doc, NULL) : tt_cli_scan_load(&o.scan, &doc, &scan_label);
    if (st == TT_OK && o.vendor_file) st = tt_cli_fuse_vendor(o.vendor_file, &doc, o.quiet);
    if (st != TT_OK) {
        tt_xml_doc_free(doc);
        return tt_cli_fail(st);
    }
    if (!o.input) o.input = scan_label;
    rc = o.check || o.validate ? run_findings(&o, doc) : run_convert(&o, doc);
    tt_xml_doc_free(doc);
    return rc;
}
