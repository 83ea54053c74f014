/*
 * topo_scan.c - live scan orchestrator: runs the probes in order, keeps the
 * per-probe report, and finishes the doc after them (the small helpers every
 * probe shares are in topo_scan_util.c).
 *
 * The probes are scan_probe_table (topo_scan_probes.c), run in the order their
 * `after` fields set; tt_scan_options.exclude / $TOPOTUNE_SCAN_EXCLUDE turn some off.
 * Order today: sysfs (tree, CPUs, NICs) -> gdr (peer-memory module) -> hwloc
 * (builds the tree when sysfs could not, else a cross-check) -> nvml (GPUs,
 * NVLinks, NVSwitches) -> cuda (SM, P2P matrix, GDR attribute) -> ibv (ports).
 * With opt->hwloc_xml only the hwloc probe runs (offline twin); with a fake
 * sysfs root the device probes (nvml/cuda/ibv/hwloc) are off, since they
 * would describe the real machine, not the fake one.
 */
#include "topo_scan_internal.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void tt_scan_options_default(tt_scan_options *o)
{
    memset(o, 0, sizeof *o); /* exclude = NULL: every probe of scan_probe_table runs */
}

const char *tt_probe_state_name(tt_probe_state s)
{
    switch (s) {
    case TT_PROBE_OFF: return "off";
    case TT_PROBE_OK: return "ok";
    case TT_PROBE_PARTIAL: return "partial";
    case TT_PROBE_UNAVAILABLE: return "unavailable";
    case TT_PROBE_FAILED: return "failed";
    }
    return "?";
}

/* ---------------- after the probes ---------------- */

static const tt_scan_probe *probe_named(const scan_ctx *c, const char *name)
{
    int i;
    for (i = 0; i < c->rep->nprobes; i++)
        if (!strcmp(c->rep->probes[i].name, name))
            return &c->rep->probes[i];
    return NULL;
}

void scan_finish(scan_ctx *c)
{
    tt_xml_node *x;
    const tt_scan_probe *nv = probe_named(c, "nvml"), *cu = probe_named(c, "cuda");
    int gdr = -1;
    char how[160] = "";

    /* GPUDirect RDMA for RDMA NICs: a peer-memory module, or dma-buf (CUDA
     * says every GPU supports it and the kernel can import dma-bufs). */
    if (c->gdr_peermem == 1) {
        gdr = 1;
        snprintf(how, sizeof how, "%s", c->gdr_how);
    } else if (c->dmabuf == 1 && c->kernel_dmabuf == 1) {
        gdr = 1;
        snprintf(how, sizeof how, "dmabuf");
    } else if (c->gdr_peermem == 0 && (c->dmabuf == 0 || c->kernel_dmabuf == 0)) {
        gdr = 0;
        snprintf(how, sizeof how, "none (%s; dma-buf %s)", c->gdr_how,
                 c->dmabuf == 0 ? "not supported by the GPU" : "needs kernel >= 5.12");
    }
    for (x = c->sys; x; x = tt_xml_walk_next(c->sys, x)) {
        if (!strcmp(x->name, "net") && tt_xml_get(x, "node_guid")) {
            /* RDMA port: these two come from libibverbs only */
            if (!tt_xml_get(x, "mtu"))
                scan_unknown(c, x, "mtu", "active MTU needs libibverbs (probe ibv did not run or "
                                          "saw no such port)");
            if (!tt_xml_get(x, "maxconn"))
                scan_unknown(c, x, "maxconn", "max_qp needs libibverbs");
        }
        if (!strcmp(x->name, "net") && !tt_xml_get(x, "gdr")) {
            if (gdr >= 0) {
                tt_xml_setf(x, "gdr", "%d", gdr);
                tt_xml_set(x, "gdr_via", how);
            } else {
                scan_unknown(c, x, "gdr", "peer memory: %s; dma-buf support: %s",
                             c->gdr_how[0] ? c->gdr_how : "not checked",
                             c->dmabuf < 0 ? "unknown (no CUDA data)" : "needs kernel >= 5.12");
            }
        } else if (!strcmp(x->name, "pci") && !tt_xml_first_child(x, "gpu")) {
            long long cls = -1, ven = -1;
            tt_xml_get_ll(c->doc, x, "class", &cls);
            tt_xml_get_ll(c->doc, x, "vendor", &ven);
            tt_error_clear();
            if (scan_class_is_gpu((long)cls, (long)ven))
                scan_unknown(c, x, "gpu", "no NVML or CUDA data for this GPU (nvml: %s%s%s; cuda: %s%s%s)",
                             nv ? tt_probe_state_name(nv->state) : "not run",
                             nv && nv->note[0] ? ", " : "", nv ? nv->note : "",
                             cu ? tt_probe_state_name(cu->state) : "not run",
                             cu && cu->note[0] ? ", " : "", cu ? cu->note : "");
        }
    }
}

/* ---------------- orchestrator ---------------- */

static double now_ms(void) { return tt_now_s() * 1e3; }

typedef tt_probe_state (*probe_fn)(scan_ctx *c);

static void run_probe(scan_ctx *c, const char *name, int enabled, const char *off_why,
                      probe_fn fn)
{
    tt_scan_probe *p;
    double t0;
    p = &c->rep->probes[c->rep->nprobes++]; /* room for every probe of the table (tt_topo_scan_report) */
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    if (!enabled) {
        p->state = TT_PROBE_OFF;
        snprintf(p->note, sizeof p->note, "%s", off_why);
        TT_INFO(SCAN_SUBSYS, "probe %s off: %s", name, off_why);
        return;
    }
    c->probe = p;
    t0 = now_ms();
    p->state = fn(c);
    p->ms = now_ms() - t0;
    if (p->state == TT_PROBE_OK && p->missed > 0)
        p->state = TT_PROBE_PARTIAL;
    if (p->state == TT_PROBE_UNAVAILABLE || p->state == TT_PROBE_FAILED)
        TT_WARN(SCAN_SUBSYS, "probe %s %s: %s", name, tt_probe_state_name(p->state), p->note);
    else
        TT_INFO(SCAN_SUBSYS, "probe %s %s (%.1f ms): %s", name, tt_probe_state_name(p->state),
                p->ms, p->note);
    tt_error_clear();
    c->probe = NULL;
}

static void set_hostname(scan_ctx *c)
{
    char h[256] = "", p[PATH_MAX];
    if (c->live) {
        if (gethostname(h, sizeof h - 1) != 0)
            h[0] = '\0';
    } else {
        scan_path(c, p, sizeof p, "/proc/sys/kernel/hostname");
        if (scan_read_str(p, h, sizeof h)) {
            scan_path(c, p, sizeof p, "/etc/hostname");
            scan_read_str(p, h, sizeof h);
        }
    }
    h[sizeof h - 1] = '\0';
    if (h[0])
        tt_xml_set(c->sys, "hostname", h);
    else
        scan_unknown(c, c->sys, "hostname", "no hostname readable");
}

static int count_unknown(const tt_xml_node *top)
{
    int n = 0;
    const tt_xml_node *x;
    for (x = top; x; x = tt_xml_walk_next(top, x))
        if (!strcmp(x->name, "unknown"))
            n++;
    return n;
}

tt_status tt_topo_scan_report(const tt_scan_options *o, tt_xml_doc **out, tt_scan_report *rep)
{
    tt_scan_options defo;
    tt_scan_report myrep;
    scan_ctx c;
    const char *root;
    double t0 = now_ms();
    int fake, offline;
    tt_status est;

    if (!out)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_scan: out is NULL");
    *out = NULL;
    if (!o) {
        tt_scan_options_default(&defo);
        o = &defo;
    }
    if (!rep)
        rep = &myrep;
    memset(rep, 0, sizeof *rep);
    int nprobes = scan_probe_count();
    unsigned char excluded[nprobes + 1];
    int order[nprobes + 1];
    if ((est = scan_probe_exclusions(o->exclude, excluded)) != TT_OK || (est = scan_probe_order(order)) != TT_OK)
        return est;
    memset(&c, 0, sizeof c);
    c.opt = o;
    c.rep = rep;
    c.gdr_peermem = -1;
    c.dmabuf = -1;
    c.kernel_dmabuf = -1;

    root = o->sysfs_root;
    if (!root || !root[0])
        root = tt_setting("TOPOTUNE_SYSFS_ROOT");
    if (root && root[0] && strcmp(root, "/") != 0) {
        struct stat st;
        char rp[PATH_MAX];
        if (!realpath(root, rp) || stat(rp, &st) != 0 || !S_ISDIR(st.st_mode))
            return tt_error_set(TT_ERR_IO, "sysfs root '%s': not a readable directory (%s)", root,
                                errno ? strerror(errno) : "not a directory");
        if (strcmp(rp, "/") != 0)
            snprintf(c.root, sizeof c.root, "%s", rp);
    }
    offline = o->hwloc_xml && o->hwloc_xml[0];
    fake = c.root[0] != '\0';
    c.live = !fake && !offline;
    if (offline && access(o->hwloc_xml, R_OK) != 0)
        return tt_error_set(TT_ERR_IO, "hwloc XML '%s': cannot read: %s", o->hwloc_xml,
                            strerror(errno));

    /* an hwloc file: findings name it, with the line of its PCI object */
    c.doc = tt_xml_doc_new("system", offline ? o->hwloc_xml : "scan");
    rep->probes = calloc((size_t)nprobes + 1, sizeof *rep->probes);
    if (!c.doc || !rep->probes) {
        tt_xml_doc_free(c.doc);
        tt_scan_report_free(rep);
        return tt_error_set(TT_ERR_NOMEM, "scan: out of memory");
    }
    c.sys = c.doc->root;
    tt_xml_set(c.sys, "version", "1");
    tt_xml_set(c.sys, "tt_version", "1"); /* native format version (docs/xml-schema.md) */
    /* tt_source values of docs/xml-schema.md 4.1; the input is named beside it */
    if (offline) {
        tt_xml_set(c.sys, "tt_source", "hwloc");
        tt_xml_set(c.sys, "hwloc_xml", o->hwloc_xml);
    } else {
        tt_xml_set(c.sys, "tt_source", "live");
        if (fake)
            tt_xml_set(c.sys, "sysfs_root", c.root);
    }
    if (!offline)
        set_hostname(&c);

    if (offline) {
        const char *why = "offline scan of an hwloc XML file";
        /* the probe that reads the file first, whatever the exclusions: the file is the input */
        for (int i = 0; i < nprobes; i++) {
            const scan_probe_def *d = &scan_probe_table[order[i]];
            if (d->offline != SCAN_OFFLINE_READS)
                continue;
            int at = rep->nprobes;
            run_probe(&c, d->name, 1, "", d->run);
            if (at < rep->nprobes && rep->probes[at].state == TT_PROBE_FAILED) {
                /* the file is the whole input here: a bad file is an error, not a gap */
                tt_xml_doc_free(c.doc);
                est = tt_error_set(TT_ERR_PARSE, "%s", rep->probes[at].note);
                if (rep == &myrep)
                    tt_scan_report_free(rep);
                return est;
            }
        }
        for (int i = 0; i < nprobes; i++)
            if (scan_probe_table[order[i]].offline == SCAN_OFFLINE_OFF)
                run_probe(&c, scan_probe_table[order[i]].name, 0, why, scan_probe_table[order[i]].run);
    } else {
        const char *why = "fake sysfs root: this probe would read the real machine";
        /* tests replay NVML/CUDA/ibverbs with stub libraries next to a fake root */
        const char *dp = tt_setting("TOPOTUNE_SCAN_DEVICE_PROBES");
        int dev_ok = c.live || (fake && dp && !strcmp(dp, "1"));
        for (int i = 0; i < nprobes; i++) {
            int k = order[i];
            const scan_probe_def *d = &scan_probe_table[k];
            int can = d->needs == SCAN_NEEDS_ROOT      ? 1
                      : d->needs == SCAN_NEEDS_MACHINE ? c.live
                                                       : dev_ok;
            if (!can)
                run_probe(&c, d->name, 0, why, d->run);
            else
                run_probe(&c, d->name, !excluded[k], "disabled by option", d->run);
        }
    }
    scan_finish(&c);
    if (!c.tree_done) {
        /* nothing built the tree: say so at the top rather than return an empty doc silently */
        scan_unknown(&c, c.sys, "cpu", "no probe could read the CPU/PCI tree (sysfs and hwloc both "
                                       "off or failed)");
    }
    free(c.owned);
    rep->nunknown = count_unknown(c.sys);
    if (rep->nunknown)
        TT_WARN(SCAN_SUBSYS, "%d value(s) could not be seen: see the <unknown> elements "
                             "(TOPOTUNE_DEBUG=INFO lists them as they are found)", rep->nunknown);
    rep->ms = now_ms() - t0;
    if (rep == &myrep)
        tt_scan_report_free(rep);
    tt_error_clear();
    *out = c.doc;
    return TT_OK;
}

void tt_scan_report_free(tt_scan_report *r)
{
    if (!r)
        return;
    free(r->probes);
    r->probes = NULL;
    r->nprobes = 0;
}

tt_status tt_topo_scan(const tt_scan_options *o, tt_xml_doc **out)
{
    return tt_topo_scan_report(o, out, NULL);
}

tt_status tt_scan_report_write_text(const tt_scan_report *r, tt_strbuf *out)
{
    int i;
    for (i = 0; i < r->nprobes; i++) {
        const tt_scan_probe *p = &r->probes[i];
        tt_strbuf_printf(out, "scan: %-5s %-11s seen=%d unknown=%d %.1fms: %s\n", p->name,
                         tt_probe_state_name(p->state), p->seen, p->missed, p->ms, p->note);
    }
    tt_strbuf_printf(out, "scan: total %.1f ms, %d unknown value(s)\n", r->ms, r->nunknown);
    return tt_strbuf_status(out);
}

/* milliseconds kept to the microsecond, as the report always printed them */
static double json_ms(double ms)
{
    return round(ms * 1000.0) / 1000.0;
}

tt_status tt_scan_report_write_json(const tt_scan_report *r, tt_strbuf *out)
{
    cJSON *root = cJSON_CreateObject(), *probes;
    char *text;
    int i;
    if (!root || !cJSON_AddNumberToObject(root, "ms", json_ms(r->ms)) ||
        !cJSON_AddNumberToObject(root, "unknown", r->nunknown) ||
        !(probes = cJSON_AddArrayToObject(root, "probes")))
        goto nomem;
    for (i = 0; i < r->nprobes; i++) {
        const tt_scan_probe *p = &r->probes[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(probes, o)) {
            cJSON_Delete(o);
            goto nomem;
        }
        if (!cJSON_AddStringToObject(o, "name", p->name) ||
            !cJSON_AddStringToObject(o, "state", tt_probe_state_name(p->state)) ||
            !cJSON_AddNumberToObject(o, "seen", p->seen) ||
            !cJSON_AddNumberToObject(o, "unknown", p->missed) ||
            !cJSON_AddNumberToObject(o, "ms", json_ms(p->ms)) ||
            !cJSON_AddStringToObject(o, "note", p->note))
            goto nomem; /* o belongs to root now */
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return tt_error_set(TT_ERR_NOMEM, "scan: out of memory writing the JSON report");
    tt_strbuf_append_json(out, text);
    cJSON_free(text);
    return tt_strbuf_status(out);
nomem:
    cJSON_Delete(root);
    return tt_error_set(TT_ERR_NOMEM, "scan: out of memory writing the JSON report");
}
