/* topo_validate.c - lint a topology XML tree (NCCL's dialect or ours) and
 * name every problem, without stopping at the first one.
 *
 * Severity rules (docs/cli-topo-dump.md has the table of codes):
 *   error   - NCCL refuses the file (a required attribute it does not fill
 *             itself is missing, unknown version, ...) or the file is
 *             self-contradictory (duplicate bus ids, NVLink to a GPU that is
 *             not there, malformed numbers or bus ids);
 *   warning - NCCL accepts it but fills or guesses the value (from the live
 *             machine, or with a fallback such as Gen3/x16/10 Gb/s), ignores
 *             it, or the value is physically implausible;
 *   info    - worth knowing, changes nothing.
 */
#include "tt_topo.h"
#include "topo_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Plausibility bounds (model assumptions, documented in docs/cli-topo-dump.md). */
#define VAL_MAX_NIC_MBPS 10000000LL   /* 10 Tb/s: no NIC port is faster */
#define VAL_MAX_NVLINKS 18            /* most NVLinks of any GPU (H100/B200) */
#define VAL_SLOW_PCI_GBPS 6.0         /* below Gen3 x8: a bottleneck on a GPU/NIC path */
#define VAL_MAX_C2C_MBPS 1000000LL    /* 1 TB/s per C2C link is beyond any product */

typedef struct {
    const char *busid;
    int line;
    int seq; /* document order */
    int sw;  /* a switch or bridge (no GPU, NIC or NVSwitch): NCCL makes one node per element */
} busid_ent;

typedef struct {
    const tt_xml_doc *doc;
    tt_findings *f;
    tt_status st;        /* first failure while adding findings */
    int native;          /* root carries tt_version: our superset */
    int rccl;            /* RCCL's dialect (tt_xml_is_rccl) */
    int nkept;           /* elements NCCL would keep */
    busid_ent *bus;
    int nbus, capbus;
    int ngpu_ranks;      /* GPUs with a valid rank attribute, and the range of those ranks */
    long long rank_min, rank_max;
    const tt_xml_node *rank_max_node;
} vctx;

/* ---------------------------------------------------------------- helpers */

static void where_of(const tt_xml_node *n, char *buf, size_t sz)
{
    const char *v;
    const tt_xml_node *p = n->parent;

    if (!strcmp(n->name, TT_ELEM_CPU)) {
        v = tt_xml_get(n, TT_ATTR_NUMAID);
        if (v)
            snprintf(buf, sz, "cpu numaid=%.40s", v);
        else
            snprintf(buf, sz, "%s", TT_ELEM_CPU);
    } else if (!strcmp(n->name, TT_ELEM_PCI)) {
        v = tt_xml_get(n, TT_ATTR_BUSID);
        snprintf(buf, sz, "pci %.40s", v ? v : "(no busid)");
    } else if (!strcmp(n->name, TT_ELEM_GPU)) {
        const char *pb = p ? tt_xml_get(p, TT_ATTR_BUSID) : NULL;
        v = tt_xml_get(n, TT_ATTR_DEV);
        if (v)
            snprintf(buf, sz, "gpu dev=%.20s", v);
        else
            snprintf(buf, sz, "gpu in pci %.40s", pb ? pb : "?");
    } else if (!strcmp(n->name, TT_ELEM_NVLINK) || !strcmp(n->name, TT_ELEM_C2C) ||
               !strcmp(n->name, TT_ELEM_XGMI)) {
        char pw[64];
        if (p)
            where_of(p, pw, sizeof pw);
        else
            snprintf(pw, sizeof pw, "?");
        v = tt_xml_get(n, TT_ATTR_TARGET);
        if (v)
            snprintf(buf, sz, "%s %s %.40s", pw, n->name, v);
        else
            snprintf(buf, sz, "%s %s", pw, n->name);
    } else if (!strcmp(n->name, TT_ELEM_NET)) {
        v = tt_xml_get(n, TT_ATTR_NAME);
        if (v)
            snprintf(buf, sz, "net %.60s", v);
        else
            snprintf(buf, sz, "net dev=%.20s", tt_xml_get(n, TT_ATTR_DEV) ? tt_xml_get(n, TT_ATTR_DEV) : "?");
    } else if (!strcmp(n->name, TT_ELEM_NIC) || !strcmp(n->name, TT_ELEM_PCILINK)) {
        char pw[64];
        if (p)
            where_of(p, pw, sizeof pw);
        else
            snprintf(pw, sizeof pw, "?");
        snprintf(buf, sz, "%s %s", pw, n->name);
    } else {
        snprintf(buf, sz, "%.100s", n->name);
    }
}

static void add(vctx *c, tt_severity sev, const char *code, const tt_xml_node *n, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));

static void add(vctx *c, tt_severity sev, const char *code, const tt_xml_node *n, const char *fmt,
                ...)
{
    char where[128], msg[400];
    va_list ap;
    tt_status st;

    where[0] = '\0';
    if (n)
        where_of(n, where, sizeof where);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    st = tt_findings_add(c->f, sev, code, n ? n->line : 0, where, "%s", msg);
    if (st != TT_OK && c->st == TT_OK)
        c->st = st;
}

/* Integer attribute: 1 = present and valid (*out set), 0 = absent, -1 = malformed
 * (finding added). */
static int get_int(vctx *c, const tt_xml_node *n, const char *attr, long long *out)
{
    const char *v;
    switch (tt_topo__read_ll(n, attr, out, &v)) {
    case TT_ATTR_ABSENT:
        return 0;
    case TT_ATTR_OK:
        return 1;
    default:
        add(c, TT_SEV_ERROR, "bad-number", n,
            "attribute %s=\"%.60s\" is not an integer (NCCL's strtol would read %lld)", attr, v,
            strtoll(v, NULL, 0));
        return -1;
    }
}

/* Unsigned 64-bit attribute (guid, host_hash), hex or decimal. */
static int get_u64(vctx *c, const tt_xml_node *n, const char *attr)
{
    const char *v;
    switch (tt_topo__read_u64(n, attr, NULL, &v)) {
    case TT_ATTR_ABSENT:
        return 0;
    case TT_ATTR_OK:
        return 1;
    default:
        add(c, TT_SEV_ERROR, "bad-number", n,
            "attribute %s=\"%.60s\" is not an unsigned 64-bit integer", attr, v);
        return -1;
    }
}

static int get_dbl(vctx *c, const tt_xml_node *n, const char *attr, double *out)
{
    const char *v;
    switch (tt_topo__read_double(n, attr, out, &v)) {
    case TT_ATTR_ABSENT:
        return 0;
    case TT_ATTR_OK:
        return 1;
    default:
        add(c, TT_SEV_ERROR, "bad-number", n, "attribute %s=\"%.60s\" is not a number", attr, v);
        return -1;
    }
}

/* A required attribute NCCL does not fill itself: its absence makes NCCL fail. */
static void need(vctx *c, const tt_xml_node *n, const char *attr)
{
    if (!tt_xml_get(n, attr))
        add(c, TT_SEV_ERROR, "missing-attribute", n,
            "required attribute '%s' is missing: NCCL stops with \"Attribute %s of node %s not "
            "found\"",
            attr, attr, n->name);
}

/* An attribute NCCL needs but fills from the live machine when absent. */
static void fill(vctx *c, const tt_xml_node *n, const char *attr, const char *how)
{
    if (!tt_xml_get(n, attr))
        add(c, TT_SEV_WARN, "missing-attribute", n, "attribute '%s' is missing: %s", attr, how);
}

static int is_hex(int ch) { return isxdigit((unsigned char)ch) != 0; }

/* dddd:bb:dd.f, hex digits. */
static int busid_ok(const char *s)
{
    static const char shape[] = "xxxx:xx:xx.x";
    size_t i;
    if (strlen(s) != sizeof shape - 1)
        return 0;
    for (i = 0; i < sizeof shape - 1; i++) {
        if (shape[i] == 'x' ? !is_hex(s[i]) : s[i] != shape[i])
            return 0;
    }
    return 1;
}

static int has_upper(const char *s)
{
    for (; *s; s++)
        if (isupper((unsigned char)*s))
            return 1;
    return 0;
}

static int bus_cmp(const void *pa, const void *pb)
{
    const busid_ent *a = pa, *b = pb;
    int r = strcasecmp(a->busid, b->busid);
    if (r)
        return r;
    return a->seq - b->seq;
}

/* First (in document order) pci with this bus id, case-insensitive; the
 * table is sorted so that big files stay O(n log n). */
static const busid_ent *find_bus(const vctx *c, const char *busid)
{
    int lo = 0, hi = c->nbus;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcasecmp(c->bus[mid].busid, busid) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->nbus && !strcasecmp(c->bus[lo].busid, busid))
        return &c->bus[lo];
    return NULL;
}

/* Pass 1: collect pci bus ids (for duplicates and NVLink/pcilink targets). */
static void collect_busids(vctx *c, const tt_xml_node *root)
{
    const tt_xml_node *n;
    for (n = root; n; n = tt_xml_walk_next(root, n)) {
        const char *b;
        if (strcmp(n->name, TT_ELEM_PCI) || !(b = tt_xml_get(n, TT_ATTR_BUSID)))
            continue;
        if (c->nbus == c->capbus) {
            int ncap = c->capbus ? c->capbus * 2 : 64;
            busid_ent *p = realloc(c->bus, (size_t)ncap * sizeof *p);
            if (!p) {
                if (c->st == TT_OK)
                    c->st = tt_error_set(TT_ERR_NOMEM, "out of memory validating bus ids");
                return;
            }
            c->bus = p;
            c->capbus = ncap;
        }
        c->bus[c->nbus].busid = b;
        c->bus[c->nbus].line = n->line;
        c->bus[c->nbus].seq = c->nbus;
        c->bus[c->nbus].sw = tt_topo__pci_is_switch(n);
        c->nbus++;
    }
    if (c->nbus > 1)
        qsort(c->bus, (size_t)c->nbus, sizeof *c->bus, bus_cmp);
}

/* NCCL matches link_speed against its table by prefix: the key must be a
 * prefix of the value.  Note "16.0 GT/s" (NVML's fallback string) matches no
 * key and counts as Gen3. */
static int nccl_knows_speed(const char *speed)
{
    static const char *const keys[] = {
        "2.5 GT/s",      "5 GT/s",        "8 GT/s",         "16 GT/s",        "32 GT/s",
        "64 GT/s",       "2.5 GT/s PCIe", "5.0 GT/s PCIe",  "8.0 GT/s PCIe",  "16.0 GT/s PCIe",
        "32.0 GT/s PCIe", "64.0 GT/s PCIe",
    };
    size_t i;
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strncmp(speed, keys[i], strlen(keys[i])))
            return 1;
    return 0;
}

/* topotune's own elements in a native file (docs/xml-schema.md): the NCCL
 * writer drops them, so they are no finding there. */
static int native_placement_ok(const char *parent, const char *elem)
{
    return (!strcmp(parent, TT_ELEM_SYSTEM) &&
            (!strcmp(elem, TT_ELEM_NVSWITCH) || !strcmp(elem, TT_ELEM_FINDINGS))) ||
           (!strcmp(parent, TT_ELEM_GPU) && !strcmp(elem, TT_ELEM_P2P));
}

static int class_prefix(const tt_xml_node *n, const char *prefix)
{
    const char *cls = tt_xml_get(n, TT_ATTR_CLASS);
    return cls && !strncasecmp(cls, prefix, strlen(prefix));
}

/* a display or management adapter (a BMC's VGA), not a GPU: the builder's rule (topo_display.c) */
static int display_only(const tt_xml_node *n)
{
    long long cls;
    char why[8];
    return tt_topo__read_ll(n, TT_ATTR_CLASS, &cls, NULL) == TT_ATTR_OK &&
           tt_topo__display_adapter(n, cls, tt_xml_first_child(n, TT_ELEM_GPU) != NULL, why, sizeof why);
}

/* ------------------------------------------------------------ per element */

static void check_limits(vctx *c, const tt_xml_node *n)
{
    int i, nattr = 0;
    const char *parent = n->parent ? n->parent->name : NULL; /* NULL: the root */

    for (i = 0; i < n->nattrs; i++) {
        const char *a = n->attrs[i].name;
        int counted = c->native ? tt_xml_nccl_knows(parent, n->name, a) : 1;
        if (!counted)
            continue;
        nattr++;
        if (strlen(n->attrs[i].value) > TT_XML_NCCL_MAX_STR)
            add(c, TT_SEV_ERROR, "value-too-long", n,
                "attribute '%s' is %zu characters long; NCCL's parser takes at most %d", a,
                strlen(n->attrs[i].value), TT_XML_NCCL_MAX_STR);
    }
    if (nattr > TT_XML_NCCL_MAX_ATTRS)
        add(c, TT_SEV_WARN, "too-many-attributes", n,
            "%d attributes for NCCL: its parser keeps the first %d and drops the rest", nattr,
            TT_XML_NCCL_MAX_ATTRS);
}

static void check_system(vctx *c, const tt_xml_node *n)
{
    long long v;
    const char *tv;
    int r = get_int(c, n, TT_ATTR_VERSION, &v);
    if (r == 0)
        add(c, TT_SEV_ERROR, "missing-attribute", n,
            "required attribute 'version' is missing (expected version=\"1\")");
    else if (r == 1 && v == 2 && c->rccl)
        add(c, TT_SEV_INFO, "rccl-dialect", n,
            "version=\"2\" with RCCL's marks (<xgmi>, gcn): a file for RCCL; topotune reads it, "
            "NCCL would not (it reads version 1 only)");
    else if (r == 1 && v != 1)
        add(c, TT_SEV_ERROR, "unsupported-version", n,
            "version=\"%s\" is not supported: NCCL and topotune read topology version 1 only",
            tt_xml_get(n, TT_ATTR_VERSION));
    tv = tt_xml_get(n, TT_ATTR_TT_VERSION);
    if (tv && strcmp(tv, "1"))
        add(c, TT_SEV_ERROR, "unsupported-version", n,
            "tt_version=\"%.40s\" is not supported: this topotune reads native version 1 only", tv);
}

static void check_cpu(vctx *c, const tt_xml_node *n)
{
    long long v;
    const char *arch = tt_xml_get(n, TT_ATTR_ARCH);
    const char *vendor = tt_xml_get(n, TT_ATTR_VENDOR);
    const char *aff = tt_xml_get(n, TT_ATTR_AFFINITY);
    int r;

    need(c, n, TT_ATTR_NUMAID);
    r = get_int(c, n, TT_ATTR_NUMAID, &v);
    if (r == 1 && v == -1)
        add(c, TT_SEV_WARN, "unknown-numa", n,
            "no NUMA information (VM, container or firmware without PCI->NUMA data); "
            "every device below looks host-bridge close and CPU affinity is unknown");
    else if (r == 1 && v < -1)
        add(c, TT_SEV_ERROR, "implausible-value", n, "numaid=%lld is negative", v);

    need(c, n, TT_ATTR_ARCH);
    if (arch && strcmp(arch, "x86_64") && strcmp(arch, "arm64") && strcmp(arch, "ppc64"))
        add(c, TT_SEV_WARN, "unknown-value", n,
            "arch=\"%.40s\" is not x86_64, arm64 or ppc64: NCCL falls back to its default", arch);
    if (arch && !strcmp(arch, "x86_64")) {
        need(c, n, TT_ATTR_VENDOR);
        if (vendor && strcmp(vendor, "GenuineIntel") && strcmp(vendor, "AuthenticAMD") &&
            strcmp(vendor, "CentaurHauls") && strcmp(vendor, "  Shanghai  "))
            add(c, TT_SEV_WARN, "unknown-value", n,
                "vendor=\"%.40s\" is unknown: NCCL models the inter-socket link at %.0f GB/s",
                vendor, TT_LOC_BW);
        if (vendor && (!strcmp(vendor, "GenuineIntel") || !strcmp(vendor, "CentaurHauls") ||
                       !strcmp(vendor, "  Shanghai  "))) {
            need(c, n, TT_ATTR_FAMILYID);
            need(c, n, TT_ATTR_MODELID);
        }
    }
    get_u64(c, n, TT_ATTR_HOST_HASH);
    get_int(c, n, TT_ATTR_FAMILYID, &v);
    get_int(c, n, TT_ATTR_MODELID, &v);
    if (!aff) {
        add(c, TT_SEV_INFO, "missing-attribute", n,
            "attribute 'affinity' is missing: NCCL reads it from sysfs when it walks to this CPU, "
            "else it does not pin threads");
    } else if (*aff) {
        const char *p = aff;
        int ok = 1, digits = 0;
        for (; *p; p++) {
            if (*p == ',') {
                ok = ok && digits > 0 && digits <= 8;
                digits = 0;
            } else if (is_hex(*p)) {
                digits++;
            } else {
                ok = 0;
            }
        }
        ok = ok && digits > 0 && digits <= 8;
        if (!ok)
            add(c, TT_SEV_WARN, "bad-affinity", n,
                "affinity=\"%.60s\" is not a cpumask (comma-separated groups of up to 8 hex "
                "digits)",
                aff);
    }
}

static void check_pci(vctx *c, const tt_xml_node *n)
{
    const char *busid = tt_xml_get(n, TT_ATTR_BUSID);
    const char *width = tt_xml_get(n, TT_ATTR_LINK_WIDTH);
    const char *speed = tt_xml_get(n, TT_ATTR_LINK_SPEED);
    int bridge = tt_xml_first_child(n, TT_ELEM_PCI) != NULL || tt_xml_first_child(n, TT_ELEM_PCILINK) != NULL ||
                 class_prefix(n, "0x0604");
    int gpu = class_prefix(n, "0x03") && !display_only(n);
    int nic = class_prefix(n, "0x02");
    int matters = bridge || gpu || nic || tt_xml_first_child(n, TT_ELEM_GPU) || tt_xml_first_child(n, TT_ELEM_NIC);
    long long v, w = -1;
    const char *runtime = "NCCL reads it from sysfs at run time when the device exists, otherwise "
                          "the load fails";

    /* bus id */
    if (!busid) {
        need(c, n, TT_ATTR_BUSID);
    } else if (!busid_ok(busid)) {
        add(c, TT_SEV_ERROR, "bad-busid", n,
            "busid=\"%.40s\" is not of the form dddd:bb:dd.f (hex digits)", busid);
    } else {
        const busid_ent *first = find_bus(c, busid);
        if (first && first->busid != busid && first->sw && tt_topo__pci_is_switch(n))
            add(c, TT_SEV_INFO, "duplicate-switch", n,
                "switch bus id %s is already used at line %d: NCCL and RCCL make one switch node "
                "per element, and so does topotune", busid, first->line);
        else if (first && first->busid != busid)
            add(c, TT_SEV_ERROR, "duplicate-busid", n, "bus id %s is already used at line %d",
                busid, first->line);
        else if (has_upper(busid))
            add(c, TT_SEV_WARN, "busid-case", n,
                "busid=\"%s\" has upper-case digits: NCCL compares lower-case ids and would add "
                "the detected device a second time",
                busid);
    }

    /* class */
    if (!tt_xml_get(n, TT_ATTR_CLASS)) {
        if (bridge)
            need(c, n, TT_ATTR_CLASS);
        else
            fill(c, n, TT_ATTR_CLASS, runtime);
    } else {
        get_int(c, n, TT_ATTR_CLASS, &v);
    }
    get_int(c, n, TT_ATTR_VENDOR, &v);
    get_int(c, n, TT_ATTR_DEVICE, &v);
    get_int(c, n, TT_ATTR_SUBSYSTEM_VENDOR, &v);
    get_int(c, n, TT_ATTR_SUBSYSTEM_DEVICE, &v);

    /* link width */
    if (!width) {
        if (bridge)
            need(c, n, TT_ATTR_LINK_WIDTH);
        else
            fill(c, n, TT_ATTR_LINK_WIDTH, runtime);
    } else if (!*width || !strcmp(width, "0")) {
        if (matters)
            add(c, TT_SEV_WARN, "unknown-link-width", n,
                "link_width=\"%s\": the width is unknown and NCCL assumes x16", width);
        w = 0;
    } else if (get_int(c, n, TT_ATTR_LINK_WIDTH, &w) == 1) {
        if (w < 0)
            add(c, TT_SEV_ERROR, "implausible-value", n, "link_width=%lld is negative", w);
        else if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16 && w != 32)
            add(c, TT_SEV_WARN, "implausible-value", n,
                "link_width=%lld is not a PCIe width (1, 2, 4, 8, 16 or 32 lanes)", w);
    }

    /* link speed */
    if (!speed) {
        fill(c, n, TT_ATTR_LINK_SPEED,
             "NCCL reads it from sysfs at run time when the device exists, else it assumes Gen3 "
             "(8 GT/s)");
    } else {
        int known = nccl_knows_speed(speed);
        double bw = tt_pci_bw(speed, w > 0 ? (int)w : 16, NULL);
        if (!*speed) {
            if (matters)
                add(c, TT_SEV_WARN, "unknown-link-speed", n,
                    "link_speed is empty: the speed is unknown and NCCL assumes Gen3 (8 GT/s)");
        } else if (!known) {
            add(c, TT_SEV_WARN, "unknown-link-speed", n,
                "link_speed=\"%.60s\" is not a speed NCCL knows (2.5/5/8/16/32/64 GT/s): it "
                "assumes Gen3 (8 GT/s)",
                speed);
        } else if (matters && w > 0 && bw < VAL_SLOW_PCI_GBPS) {
            add(c, TT_SEV_WARN, "slow-link", n,
                "x%lld at %.40s is %.2f GB/s: every GPU/NIC path through this link is limited to "
                "it (emulated bridge or downtrained link?)",
                w, speed, bw);
        }
    }

    if (gpu && !tt_xml_first_child(n, TT_ELEM_GPU))
        add(c, TT_SEV_WARN, "missing-element", n,
            "GPU (class %s) without a <gpu> child: NCCL detects dev, sm, rank and NVLinks at run "
            "time; offline the GPU has no NVLinks and no known architecture",
            tt_xml_get(n, TT_ATTR_CLASS));
    if (nic && !tt_xml_first_child(n, TT_ELEM_NIC))
        add(c, TT_SEV_WARN, "missing-element", n,
            "NIC (class %s) without a <nic>/<net> child: NCCL adds the ports from its network "
            "plugin at run time; offline the NIC has no network port",
            tt_xml_get(n, TT_ATTR_CLASS));
}

/* an AMD GPU: RCCL's gcn, or the enclosing <pci> of vendor 0x1002 */
static int amd_gpu(const tt_xml_node *gpu)
{
    const char *v = gpu->parent ? tt_xml_get(gpu->parent, TT_ATTR_VENDOR) : NULL;
    return tt_xml_get(gpu, TT_ATTR_GCN) || (v && !strcasecmp(v, "0x1002"));
}

static void check_gpu(vctx *c, const tt_xml_node *n)
{
    long long v, total = 0;
    const char *rt = "NCCL fills it at run time for the GPU it runs on (from NVML/CUDA)";
    const tt_xml_node *k;

    fill(c, n, TT_ATTR_DEV, rt);
    fill(c, n, TT_ATTR_SM, "NCCL reads it from NVML at run time; offline NVLink bandwidth is unknown");
    fill(c, n, TT_ATTR_RANK, "NCCL sets it at run time for the GPU it runs on");
    fill(c, n, TT_ATTR_GDR, "NCCL probes GPUDirect RDMA support at run time");
    get_int(c, n, TT_ATTR_DEV, &v);
    if (get_int(c, n, TT_ATTR_RANK, &v) == 1) {
        if (v < 0) {
            add(c, TT_SEV_ERROR, "rank-range", n, "rank=%lld is negative: NCCL ranks are 0 or more", v);
        } else {
            if (!c->ngpu_ranks || v < c->rank_min)
                c->rank_min = v;
            if (!c->ngpu_ranks || v > c->rank_max) {
                c->rank_max = v;
                c->rank_max_node = n;
            }
            c->ngpu_ranks++;
        }
    }
    if (amd_gpu(n)) {
        tt_amd_model m;
        const char *gcn = tt_xml_get(n, TT_ATTR_GCN);
        int dev = n->parent ? tt_topo__attr_int_or(n->parent, TT_ATTR_DEVICE, 0) : 0;
        if (tt_amd_gpu_model(gcn, dev > 0 ? (unsigned)dev : 0, &m))
            add(c, TT_SEV_INFO, "amd-gpu", n,
                "AMD %s (from its %s): sm=%s is RCCL's gfx number, not a CUDA compute capability; "
                "modelled with %.0f GB/s per xGMI link and the tables of class %d",
                m.name, m.from, tt_xml_get(n, TT_ATTR_SM) ? tt_xml_get(n, TT_ATTR_SM) : "?",
                m.xgmi_gbps, m.cc);
        else
            add(c, TT_SEV_WARN, "amd-gpu", n,
                "AMD GPU of unknown generation (gcn=\"%.20s\"): modelled with %.0f GB/s per xGMI "
                "link (default) and the tables of class %d", gcn ? gcn : "", m.xgmi_gbps, m.cc);
    } else if (get_int(c, n, TT_ATTR_SM, &v) == 1 && (v < 30 || v > 200))
        add(c, TT_SEV_WARN, "implausible-value", n,
            "sm=%lld is not a CUDA compute capability (major*10+minor, e.g. 90)", v);
    if (get_int(c, n, TT_ATTR_GDR, &v) == 1 && v != 0 && v != 1)
        add(c, TT_SEV_WARN, "implausible-value", n, "gdr=%lld is not 0 or 1", v);
    get_int(c, n, TT_ATTR_MLOPART, &v);
    for (k = tt_xml_first_child(n, TT_ELEM_NVLINK); k; k = tt_xml_next_sibling(k, TT_ELEM_NVLINK))
        if (get_int(c, k, TT_ATTR_COUNT, &v) == 1 && v > 0)
            total += v;
    if (total > VAL_MAX_NVLINKS)
        add(c, TT_SEV_WARN, "implausible-value", n,
            "%lld NVLinks in total: no GPU has more than %d", total, VAL_MAX_NVLINKS);
}

static void check_nvlink(vctx *c, const tt_xml_node *n)
{
    long long v;
    const char *tclass = tt_xml_get(n, TT_ATTR_TCLASS);
    const char *target = tt_xml_get(n, TT_ATTR_TARGET);
    int r;

    need(c, n, TT_ATTR_COUNT);
    r = get_int(c, n, TT_ATTR_COUNT, &v);
    if (r == 1 && v < 0)
        add(c, TT_SEV_ERROR, "implausible-value", n, "count=%lld is negative", v);
    else if (r == 1 && v == 0)
        add(c, TT_SEV_WARN, "implausible-value", n,
            "count=0: an NVLink of 0 GB/s (drop the element if the links are down)");
    else if (r == 1 && v > VAL_MAX_NVLINKS)
        add(c, TT_SEV_WARN, "implausible-value", n,
            "count=%lld: no GPU has more than %d NVLinks", v, VAL_MAX_NVLINKS);

    need(c, n, TT_ATTR_TCLASS);
    if (!tclass || get_int(c, n, TT_ATTR_TCLASS, &v) != 1)
        return;
    if (!strncasecmp(tclass, "0x03", 4) ||
        (!strcmp(n->name, TT_ELEM_XGMI) && !strncasecmp(tclass, "0x12", 4))) {
        const tt_xml_node *own = n->parent ? n->parent->parent : NULL;
        const char *ownbus = own ? tt_xml_get(own, TT_ATTR_BUSID) : NULL;
        if (target && ownbus && !strcasecmp(target, ownbus))
            add(c, TT_SEV_WARN, "nvlink-self", n,
                "target=\"%.40s\" is the GPU's own bus id: NCCL reads it, topotune too (a link "
                "to itself carries no traffic); the producer mislabelled a link", target);
        if (!target) {
            need(c, n, TT_ATTR_TARGET);
        } else if (!busid_ok(target)) {
            add(c, TT_SEV_ERROR, "bad-busid", n,
                "target=\"%.40s\" of a GPU NVLink is not of the form dddd:bb:dd.f", target);
        } else if (!find_bus(c, target)) {
            add(c, TT_SEV_ERROR, "nvlink-target-missing", n,
                "NVLink target GPU %s is not a <pci> in this file", target);
        }
    } else if (strcasecmp(tclass, "0x068000") && strcasecmp(tclass, "0x068001")) {
        /* NCCL's class table maps what is no GPU or CPU to PCI, and its NVLink
         * reader attaches every such target to its (one) NVSwitch node */
        add(c, TT_SEV_WARN, "unknown-value", n,
            "tclass=\"%.20s\" is neither a GPU (0x03...), an NVSwitch (0x068000) nor a CPU "
            "(0x068001): NCCL attaches the link to its NVSwitch node as for 0x068000, and so "
            "does topotune",
            tclass);
    }
}

static void check_c2c(vctx *c, const tt_xml_node *n)
{
    long long v;
    int r;

    need(c, n, TT_ATTR_COUNT);
    need(c, n, TT_ATTR_BW);
    r = get_int(c, n, TT_ATTR_COUNT, &v);
    if (r == 1 && v < 0)
        add(c, TT_SEV_ERROR, "implausible-value", n, "count=%lld is negative", v);
    else if (r == 1 && v == 0)
        add(c, TT_SEV_WARN, "implausible-value", n, "count=0: a C2C link of 0 GB/s");
    r = get_int(c, n, TT_ATTR_BW, &v);
    if (r == 1 && v <= 0)
        add(c, TT_SEV_ERROR, "implausible-value", n, "bw=%lld MB/s per link is not positive", v);
    else if (r == 1 && v > VAL_MAX_C2C_MBPS)
        add(c, TT_SEV_WARN, "implausible-value", n,
            "bw=%lld MB/s per link is above %lld MB/s (bw is MB/s per link, not total)", v,
            VAL_MAX_C2C_MBPS);
}

static void check_net(vctx *c, const tt_xml_node *n)
{
    long long v;
    double d;
    int r;

    fill(c, n, TT_ATTR_DEV,
         "NCCL sets it from its network plugin at run time; a port the plugin does not report is "
         "dropped");
    if (!tt_xml_get(n, TT_ATTR_NAME))
        add(c, TT_SEV_WARN, "missing-attribute", n,
            "attribute 'name' is missing: NCCL cannot match this port to a network device");
    get_int(c, n, TT_ATTR_DEV, &v);
    r = get_int(c, n, TT_ATTR_SPEED, &v);
    if (r == 0)
        add(c, TT_SEV_WARN, "missing-attribute", n,
            "attribute 'speed' is missing: NCCL takes the plugin's value at run time; offline "
            "models assume 10 Gb/s");
    else if (r == 1 && v <= 0)
        add(c, TT_SEV_WARN, "implausible-value", n,
            "speed=%lld Mb/s: NCCL replaces a speed <= 0 with 10000 (10 Gb/s)", v);
    else if (r == 1 && v > VAL_MAX_NIC_MBPS) {
        const char *unit;
        double mbps = tt_net_speed_mbps((double)v, &unit);
        if (unit)
            add(c, TT_SEV_WARN, "net-speed-unit", n,
                "speed=%lld is above 10 Tb/s as Mb/s (NCCL's unit): read as %s, %.0f Gb/s (a "
                "libfabric plugin's unit, e.g. Slingshot cxi)", v, unit, mbps / 1000.0);
        else
            add(c, TT_SEV_WARN, "implausible-value", n,
                "speed=%lld Mb/s is above 10 Tb/s in any unit: 10 Gb/s (NCCL's default) is used", v);
    }
    get_int(c, n, TT_ATTR_PORT, &v);
    get_dbl(c, n, TT_ATTR_LATENCY, &d);
    get_int(c, n, TT_ATTR_MAXCONN, &v);
    get_u64(c, n, TT_ATTR_GUID);
    if (get_int(c, n, TT_ATTR_GDR, &v) == 1 && v != 0 && v != 1)
        add(c, TT_SEV_WARN, "implausible-value", n, "gdr=%lld is not 0 or 1", v);
}

static void check_pcilink(vctx *c, const tt_xml_node *n)
{
    const char *target = tt_xml_get(n, TT_ATTR_TARGET);
    need(c, n, TT_ATTR_TARGET);
    if (!target)
        return;
    if (!busid_ok(target))
        add(c, TT_SEV_ERROR, "bad-busid", n, "target=\"%.40s\" is not of the form dddd:bb:dd.f",
            target);
    else if (!find_bus(c, target))
        add(c, TT_SEV_WARN, "pcilink-target-missing", n,
            "pcilink target %s is not a <pci> in this file: NCCL ignores the link", target);
}

/* ------------------------------------------------------------------ walk */

typedef struct {
    int key;              /* index into dup_keys */
    const char *value;
    const tt_xml_node *node;
    char host[56];        /* DUP_GPU_DEV: the host it is unique on (<system> and cpu host_hash); else "" */
} dup_ent;

static const char *const dup_keys[][2] = {
    { TT_ELEM_CPU, TT_ATTR_NUMAID }, { TT_ELEM_NET, TT_ATTR_NAME }, { TT_ELEM_NET, TT_ATTR_DEV },
    { TT_ELEM_GPU, TT_ATTR_RANK }, { TT_ELEM_GPU, TT_ATTR_DEV }
};
enum { DUP_GPU_DEV = 4 }; /* unique per host, an error (two GPUs cannot share one device index) */

/* The scope of a GPU's dev: its <system> (a cluster file holds several) and its cpu's host_hash. */
static void gpu_host(const tt_xml_node *g, char *buf, size_t sz)
{
    const tt_xml_node *cpu = NULL, *sys = NULL;
    for (const tt_xml_node *p = g->parent; p; p = p->parent) {
        if (!cpu && !strcmp(p->name, TT_ELEM_CPU))
            cpu = p;
        if (!strcmp(p->name, TT_ELEM_SYSTEM)) {
            sys = p;
            break;
        }
    }
    const char *h = cpu ? tt_xml_get(cpu, TT_ATTR_HOST_HASH) : NULL;
    snprintf(buf, sz, "%d/%.40s", sys ? sys->line : 0, h ? h : "");
}

static int dup_cmp(const void *pa, const void *pb)
{
    const dup_ent *a = pa, *b = pb;
    int r;
    if (a->key != b->key)
        return a->key - b->key;
    if ((r = strcmp(a->host, b->host)))
        return r;
    r = strcmp(a->value, b->value);
    if (r)
        return r;
    return a->node->line - b->node->line;
}

/* 1 when a and b are the same key, scope and value */
static int dup_cmp_same(const dup_ent *a, const dup_ent *b)
{
    return a->key == b->key && !strcmp(a->host, b->host) && !strcmp(a->value, b->value);
}

/* cpu numaid, net name/dev and gpu rank must be unique: NCCL keys nodes by them; and a GPU's dev
 * (its device index) on its host: two GPUs with one index contradict each other (issue #32).
 * Sorted, so that huge hostile files stay O(n log n). */
static void check_dups(vctx *c, const tt_xml_node *root)
{
    const tt_xml_node *a;
    dup_ent *e = NULL;
    int n = 0, cap = 0, i;

    for (a = root; a; a = tt_xml_walk_next(root, a)) {
        size_t k;
        for (k = 0; k < sizeof dup_keys / sizeof dup_keys[0]; k++) {
            const char *v;
            if (strcmp(a->name, dup_keys[k][0]) || !(v = tt_xml_get(a, dup_keys[k][1])))
                continue;
            /* only a PCI device's first <gpu> is its GPU (more are ranks or partitions of it, as the builder reads it) */
            if (k == DUP_GPU_DEV && a->parent && tt_xml_first_child(a->parent, TT_ELEM_GPU) != a)
                continue;
            if (n == cap) {
                int ncap = cap ? cap * 2 : 32;
                dup_ent *p = realloc(e, (size_t)ncap * sizeof *p);
                if (!p) {
                    free(e);
                    if (c->st == TT_OK)
                        c->st = tt_error_set(TT_ERR_NOMEM, "out of memory validating ids");
                    return;
                }
                e = p;
                cap = ncap;
            }
            e[n].key = (int)k;
            e[n].value = v;
            e[n].node = a;
            e[n].host[0] = '\0';
            if (k == DUP_GPU_DEV)
                gpu_host(a, e[n].host, sizeof e[n].host);
            n++;
        }
    }
    if (n > 1)
        qsort(e, (size_t)n, sizeof *e, dup_cmp);
    for (i = 1; i < n; i++) {
        int j = i - 1;
        if (dup_cmp_same(&e[i], &e[j]) == 0)
            continue;
        while (j > 0 && dup_cmp_same(&e[j - 1], &e[i]))
            j--; /* report against the first one */
        if (e[i].key == DUP_GPU_DEV) {
            add(c, TT_SEV_ERROR, "duplicate-gpu-dev", e[i].node,
                "gpu dev=\"%.40s\" is already used by the GPU at line %d on this host: a device index names one "
                "GPU, and two GPUs of one host cannot share it",
                e[i].value, e[j].node->line);
            continue;
        }
        add(c, TT_SEV_WARN, "duplicate-id", e[i].node,
            "%s %s=\"%.40s\" is already used at line %d: NCCL keys %ss by it and confuses the two",
            dup_keys[e[i].key][0], dup_keys[e[i].key][1], e[i].value, e[j].node->line,
            dup_keys[e[i].key][0]);
    }
    free(e);
}

static void walk(vctx *c, const tt_xml_node *n)
{
    int i;

    c->nkept++;
    check_limits(c, n);
    if (!strcmp(n->name, TT_ELEM_SYSTEM))
        check_system(c, n);
    else if (!strcmp(n->name, TT_ELEM_CPU))
        check_cpu(c, n);
    else if (!strcmp(n->name, TT_ELEM_PCI))
        check_pci(c, n);
    else if (!strcmp(n->name, TT_ELEM_GPU))
        check_gpu(c, n);
    else if (!strcmp(n->name, TT_ELEM_NVLINK))
        check_nvlink(c, n);
    else if (!strcmp(n->name, TT_ELEM_C2C))
        check_c2c(c, n);
    else if (!strcmp(n->name, TT_ELEM_NET))
        check_net(c, n);
    else if (!strcmp(n->name, TT_ELEM_PCILINK))
        check_pcilink(c, n);

    for (i = 0; i < n->nchildren; i++) {
        const tt_xml_node *k = n->children[i];
        if (!strcmp(k->name, TT_ELEM_UNKNOWN))
            continue; /* topotune's own note on what a scan could not see */
        if (c->native && native_placement_ok(n->name, k->name))
            continue;
        if (!strcmp(n->name, TT_ELEM_GPU) && !strcmp(k->name, TT_ELEM_XGMI)) {
            /* RCCL's link element: same attributes as <nvlink> */
            add(c, TT_SEV_INFO, "rccl-element", k,
                "<xgmi> is RCCL's: RCCL reads it as an xGMI link, NCCL ignores it");
            c->nkept++;
            check_limits(c, k);
            check_nvlink(c, k);
            continue;
        }
        if (!tt_xml_nccl_knows(n->name, k->name, NULL)) {
            /* NCCL's loader skips what it does not expect there (xml_nccl_schema.c) */
            add(c, TT_SEV_WARN, "ignored-element", k,
                "NCCL ignores <%.40s> inside <%.40s> (and everything in it)", k->name, n->name);
            continue;
        }
        walk(c, k);
    }
}

tt_status tt_topo_validate(const tt_xml_doc *doc, tt_findings *out)
{
    vctx c;
    const tt_xml_node *root;

    if (!doc || !out)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_validate: NULL argument");
    memset(&c, 0, sizeof c);
    c.doc = doc;
    c.f = out;
    root = doc->root;
    if (!root) {
        add(&c, TT_SEV_ERROR, "bad-root", NULL, "the document has no root element");
        return c.st;
    }
    if (strcmp(root->name, TT_ELEM_SYSTEM)) {
        add(&c, TT_SEV_ERROR, "bad-root", root,
            "root element is <%.40s>, not <system>: %s", root->name, tt_topo__root_what(root->name));
        return c.st;
    }
    c.native = tt_xml_get(root, TT_ATTR_TT_VERSION) != NULL;
    c.rccl = tt_xml_is_rccl(doc);
    collect_busids(&c, root);
    walk(&c, root);
    check_dups(&c, root);
    /* the GPUs of one host hold consecutive NCCL ranks: a rank beyond the count is a typo or a
     * file pieced together from several hosts */
    if (c.ngpu_ranks > 0 && c.rank_max - c.rank_min + 1 > c.ngpu_ranks)
        add(&c, TT_SEV_WARN, "rank-range", c.rank_max_node,
            "GPU ranks span %lld..%lld but only %d GPUs have a rank: rank %lld is out of range for this host's "
            "GPUs (NCCL gives one host's GPUs consecutive ranks)",
            c.rank_min, c.rank_max, c.ngpu_ranks, c.rank_max);
    if (c.nkept > TT_XML_NCCL_MAX_NODES)
        add(&c, TT_SEV_WARN, "too-many-elements", root,
            "%d elements NCCL would load: it holds at most %d per host (\"too many XML nodes\")",
            c.nkept, TT_XML_NCCL_MAX_NODES);
    free(c.bus);
    return c.st;
}
