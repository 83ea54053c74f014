/*
 * topo_hwloc_xml.c - hwloc XML files (`lstopo --of xml`, format 2.x and 3.0)
 * -> the scan's NCCL-shaped tree (the offline twin of the machine).
 *
 * Two readers, one mapping:
 *  - "hwloc": files of format < 3 are loaded by the linked hwloc library
 *    (it checks them and fills what an older writer left out), then exported
 *    again (format 2.0) and that export is mapped below;
 *  - "topotune": format 3.x (hwloc 2.x cannot import it), and any file the
 *    library refuses, is mapped straight from the file's own tree;
 *  - live: topo_scan_hwloc.c loads this machine, exports it to an XML buffer
 *    and hands it to scan_hwloc_xml_live(): the same mapping (the hostname
 *    stays the scan's own; when sysfs built the tree, only a cross-check).
 * All read through the hardened reader of xml/xml_read.c (no entities, no
 * external DTD other than hwloc's own DOCTYPE, which is never loaded).
 * TOPOTUNE_DEBUG=INFO names the reader; the probe note says it too.
 *
 * Mapping (docs/scan.md, "hwloc XML"):
 *  - NUMANode objects -> <cpu numaid affinity>; root Architecture and the
 *    first Package's CPUVendor/CPUFamilyNumber/CPUModelNumber -> arch, vendor,
 *    familyid, modelid (3.0 keeps the machine infos as <topology> <info>s);
 *  - PCIDev/Bridge chains -> <pci> (scan_tree_place); pci_type gives the
 *    16-bit class (3.0 adds the programming-interface byte);
 *  - GPUs: NVIDIA/AMD display-class PCI devices; their OS devices (NVML,
 *    RSMI, CUDA, OpenCL names, osdev_type 2.x numbers or 3.0 bit masks)
 *    give dev, uuid and name;
 *  - NICs: OpenFabrics OS devices (ports, GUIDs, states), else network ones;
 *  - NVSwitches: NVIDIA non-GPU PCI devices of class 0x0680 or 0x0000, or
 *    any non-GPU PCI device an NVLinkBandwidth matrix names (whatever its
 *    vendor, as NCCL takes any NVLink target that is no GPU or CPU for its
 *    switch); class written as 0x068000;
 *  - distances2/distances2hetero NVLinkBandwidth -> <nvlink> (GPU, NVSwitch
 *    0x068000, CPU 0x068001; on arm64 a GPU-CPU link is <c2c>), and
 *    XGMIBandwidth -> <xgmi>.  Counts are bandwidth / per-link figure, each
 *    such inference recorded as an <unknown> note.
 */
#include "topo_scan_internal.h"

#include <ctype.h>
#include <limits.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HX_MAX_WORDS 256 /* 8192 CPUs */

typedef struct {
    scan_ctx *c;
    const char *name;            /* the file, or "live hwloc topology": for messages */
    tt_xml_node *top;            /* <topology> */
    int major;                   /* format version */
    tt_xml_node *chain_obj[SCAN_MAX_CHAIN];
    int words;
    char arch[16], vendor[32];
    int family, model;
    int noprogif;                /* some class lacked the programming-interface byte */
    int nvswitch_guess;          /* NVSwitches recognised from a class other than 0x0680 */
    int file_lines;              /* the mapped tree is the file's own: its lines are the file's */
    struct hx_line *lines;       /* else: the file's PCI objects by bus id (hwloc's re-export) */
    int nlines;
} hx_ctx;

/* A PCI object of the file: its bus id and line, for findings that say file:line. */
typedef struct hx_line {
    const char *busid;
    int line;
} hx_line;

/* ------------------------------------------------------------ helpers */

static int is(const tt_xml_node *n, const char *name) { return n && !strcmp(n->name, name); }

static const char *otype(const tt_xml_node *n)
{
    const char *t = is(n, "object") ? tt_xml_get(n, "type") : NULL;
    return t ? t : "";
}

static int is_io(const tt_xml_node *n)
{
    const char *t = otype(n);
    return !strcmp(t, "Bridge") || !strcmp(t, "PCIDev") || !strcmp(t, "OSDev") || !strcmp(t, "Misc");
}

static const char *info_of(const tt_xml_node *n, const char *name)
{
    for (int i = 0; n && i < n->nchildren; i++) {
        const tt_xml_node *x = n->children[i];
        const char *nm;
        if (is(x, "info") && (nm = tt_xml_get(x, "name")) && !strcmp(nm, name))
            return tt_xml_get(x, "value");
    }
    return NULL;
}

/* Machine-wide info: 2.x on the root object, 3.0 as <info> of <topology>. */
static const char *topo_info(hx_ctx *h, const char *name)
{
    const char *v = info_of(h->top, name);
    return v ? v : info_of(tt_xml_first_child(h->top, "object"), name);
}

/* hwloc bitmap string "0xffffffff,,0x0000ffff" -> 32-bit words (w[0] least
 * significant); empty words are 0.  Returns the number of words, -1 if bad. */
static int bitmap_parse(const char *s, unsigned *w, int cap)
{
    int ntok = 1, k = 0;
    const char *p;
    if (!s)
        return -1;
    for (p = s; *p; p++)
        ntok += *p == ',';
    memset(w, 0, sizeof *w * (size_t)cap);
    for (p = s; k < ntok; k++) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int idx = ntok - 1 - k;
        if (n) {
            char tok[24];
            char *end;
            if (n >= sizeof tok)
                return -1;
            memcpy(tok, p, n);
            tok[n] = '\0';
            unsigned long long v = strtoull(tok, &end, 16);
            if (*end)
                return -1;
            if (idx < cap)
                w[idx] = (unsigned)v;
        }
        p = e ? e + 1 : p + n;
    }
    return ntok < cap ? ntok : cap;
}

static int bitmap_weight_first(const char *s, int *first)
{
    unsigned w[HX_MAX_WORDS];
    int n = bitmap_parse(s, w, HX_MAX_WORDS), weight = 0;
    *first = -1;
    for (int i = 0; i < n; i++)
        for (int b = 0; b < 32; b++)
            if (w[i] >> b & 1u) {
                if (*first < 0)
                    *first = i * 32 + b;
                weight++;
            }
    return weight;
}

static int bitmap_last(const char *s)
{
    unsigned w[HX_MAX_WORDS];
    int n = bitmap_parse(s, w, HX_MAX_WORDS);
    for (int i = n - 1; i >= 0; i--)
        for (int b = 31; b >= 0; b--)
            if (w[i] >> b & 1u)
                return i * 32 + b;
    return -1;
}

/* Pre-order walk over every <object> below <topology>. */
static tt_xml_node *next_obj(hx_ctx *h, tt_xml_node *cur)
{
    tt_xml_node *n = cur ? cur : h->top;
    while ((n = tt_xml_walk_next(h->top, n)))
        if (is(n, "object"))
            return n;
    return NULL;
}

static tt_xml_node *next_of_type(hx_ctx *h, tt_xml_node *cur, const char *type)
{
    while ((cur = next_obj(h, cur)))
        if (!strcmp(otype(cur), type))
            return cur;
    return NULL;
}

static long attr_long(const tt_xml_node *n, const char *a, long dflt)
{
    const char *v = tt_xml_get(n, a);
    return v && *v ? strtol(v, NULL, 0) : dflt;
}

/* ---------------------------------------------------------------- PCI */

typedef struct {
    unsigned dom, bus, dev, fn;
    unsigned cls, vendor, device, subvendor, subdevice, progif;
    int has_progif;
} hx_pci;

static int bridge_up_pci(const tt_xml_node *n)
{
    const char *bt = tt_xml_get(n, "bridge_type");
    return bt && !strncmp(bt, "1-", 2);
}

static int is_pci(const tt_xml_node *n)
{
    const char *t = otype(n);
    return !strcmp(t, "PCIDev") || (!strcmp(t, "Bridge") && bridge_up_pci(n));
}

static int pci_of(const tt_xml_node *n, hx_pci *p)
{
    const char *b = tt_xml_get(n, "pci_busid"), *t = tt_xml_get(n, "pci_type");
    unsigned rev;
    int k;
    memset(p, 0, sizeof *p);
    if (!b || sscanf(b, "%x:%x:%x.%x", &p->dom, &p->bus, &p->dev, &p->fn) != 4)
        return -1;
    if (!t)
        return -1;
    k = sscanf(t, "%x [%x:%x] [%x:%x] %x %x", &p->cls, &p->vendor, &p->device, &p->subvendor,
               &p->subdevice, &rev, &p->progif);
    if (k < 5)
        return -1;
    p->has_progif = k == 7;
    return 0;
}

static void busid_str(const hx_pci *p, char *out, size_t len)
{
    snprintf(out, len, "%04x:%02x:%02x.%x", p->dom & 0xffff, p->bus & 0xff, p->dev & 0x1f,
             p->fn & 7);
}

/* OS devices of a PCI device that name a GPU, best first. */
static const char *const gpu_prefix[] = {"nvml", "rsmi", "cuda", "opencl", NULL};

static int osdev_gpu_rank(const tt_xml_node *o)
{
    const char *nm = tt_xml_get(o, "name");
    for (int i = 0; nm && gpu_prefix[i]; i++)
        if (!strncmp(nm, gpu_prefix[i], strlen(gpu_prefix[i])) &&
            isdigit((unsigned char)nm[strlen(gpu_prefix[i])]))
            return i;
    return -1;
}

static const tt_xml_node *gpu_osdev(const tt_xml_node *pci)
{
    const tt_xml_node *best = NULL;
    int br = 99;
    for (int i = 0; i < pci->nchildren; i++) {
        const tt_xml_node *o = pci->children[i];
        int r;
        if (strcmp(otype(o), "OSDev"))
            continue;
        r = osdev_gpu_rank(o);
        if (r >= 0 && r < br)
            best = o, br = r;
    }
    return best;
}

/* A GPU: display class (0x03xx) from NVIDIA, or with a GPU OS device, or an AMD 3D (0x0302)
 * or display (0x0380) controller (Instinct).  An AMD VGA (0x0300, a BMC's ES1000) or another
 * vendor's display function without a GPU OS device is a display adapter, left out as the sysfs
 * walk leaves it out (an INFO line names it; the rule: topo_display.c, docs/xml-schema.md). */
static int pci_is_gpu(const tt_xml_node *n, const hx_pci *p)
{
    if (p->cls >> 8 != 0x03)
        return 0;
    if (p->vendor == 0x10de || gpu_osdev(n) != NULL)
        return 1;
    return p->vendor == 0x1002 && ((p->cls & 0xff) == 0x02 || (p->cls & 0xff) == 0x80);
}

static int named_in_nvlink(hx_ctx *h, const tt_xml_node *n);

/* Not a GPU (display 0x03, accelerator 0x12), and: named by an NVLinkBandwidth
 * matrix whatever its vendor and class (NCCL attaches an NVLink target that is
 * no GPU or CPU to its NVSwitch node; a DGX-2 export has a switch without
 * vendor id), or NVIDIA with class 0x0680 (bridge, other), 0x0000
 * (unclassified) or subtype NVSwitch. */
static int pci_is_nvswitch(hx_ctx *h, const tt_xml_node *n, const hx_pci *p)
{
    const char *st = tt_xml_get(n, "subtype");
    if (p->cls >> 8 == 0x03 || p->cls >> 8 == 0x12 || strcmp(otype(n), "PCIDev"))
        return 0;
    if (p->vendor == 0x10de &&
        (p->cls == 0x0680 || p->cls == 0x0000 || (st && !strcmp(st, "NVSwitch"))))
        return 1;
    return named_in_nvlink(h, n);
}

static long full_class(hx_ctx *h, const tt_xml_node *n, const hx_pci *p)
{
    if (pci_is_nvswitch(h, n, p))
        return 0x068000;
    if (!p->has_progif)
        h->noprogif = 1;
    return (long)p->cls << 8 | (p->has_progif ? p->progif : 0);
}

static int line_cmp(const void *a, const void *b)
{
    return strcasecmp(((const hx_line *)a)->busid, ((const hx_line *)b)->busid);
}

/* Index the file's own PCI objects (the library path maps hwloc's re-export,
 * whose lines are not the file's). */
static void index_lines(hx_ctx *h, const tt_xml_doc *file)
{
    int n = 0, cap = 0;
    for (const tt_xml_node *x = file->root; x; x = tt_xml_walk_next(file->root, x)) {
        const char *b = is(x, "object") ? tt_xml_get(x, "pci_busid") : NULL;
        if (!b)
            continue;
        if (n == cap) {
            int nc = cap ? cap * 2 : 64;
            hx_line *p = realloc(h->lines, (size_t)nc * sizeof *p);
            if (!p)
                break; /* lines are a courtesy: 0 (no line) then */
            h->lines = p;
            cap = nc;
        }
        h->lines[n].busid = b;
        h->lines[n].line = x->line;
        n++;
    }
    h->nlines = n;
    if (n > 1)
        qsort(h->lines, (size_t)n, sizeof *h->lines, line_cmp);
}

/* The file's line of a mapped object (0 when unknown: a live machine). */
static int file_line(const hx_ctx *h, const tt_xml_node *o)
{
    hx_line key, *hit;
    if (h->file_lines)
        return o->line;
    if (!h->nlines || !(key.busid = tt_xml_get(o, "pci_busid")))
        return 0;
    hit = bsearch(&key, h->lines, (size_t)h->nlines, sizeof *h->lines, line_cmp);
    return hit ? hit->line : 0;
}

/* Elements the mapping made without a line take their parent's (a GPU's <gpu>,
 * <nvlink>, a NIC's <nic>/<net>, notes): findings then say file:line. */
static void inherit_lines(tt_xml_node *top)
{
    for (tt_xml_node *x = top; x; x = tt_xml_walk_next(top, x))
        for (int i = 0; i < x->nchildren; i++)
            if (!x->children[i]->line && x->line > 0)
                x->children[i]->line = x->line;
}

static void hx_fill(scan_ctx *c, const char *busid, int idx, void *arg, tt_xml_node *pci)
{
    hx_ctx *h = arg;
    const tt_xml_node *o = h->chain_obj[idx];
    hx_pci p;
    scan_pci_info in;
    const char *ls;
    memset(&in, 0, sizeof in);
    pci_of(o, &p);
    snprintf(in.busid, sizeof in.busid, "%s", busid);
    in.cls = full_class(h, o, &p);
    in.vendor = p.vendor;
    in.device = p.device;
    in.subvendor = p.subvendor;
    in.subdevice = p.subdevice;
    in.max_width = in.cur_width = -1;
    in.up_state = 0;
    in.numa_known = 0;
    in.why = "hwloc records neither maximum nor current PCIe speed/width nor numa_node, "
             "only the current link rate (cur_link_gbps)";
    scan_pci_set_attrs(c, pci, &in);
    if (!pci->line)
        pci->line = file_line(h, o);
    if (in.cls == 0x068000 && p.cls != 0x0680) {
        h->nvswitch_guess = 1;
        if (p.vendor == 0x10de)
            scan_unknown(c, pci, "class", "the file gives NVIDIA device %04x class 0x%04x: taken as "
                                          "an NVSwitch (0x068000)", p.device, p.cls);
        else
            scan_unknown(c, pci, "class", "the file gives device %04x:%04x class 0x%04x, named by "
                                          "the NVLinkBandwidth matrix and no GPU: taken as an "
                                          "NVSwitch (0x068000), as NCCL takes such a target",
                         p.vendor, p.device, p.cls);
    }
    if ((ls = tt_xml_get(o, "pci_link_speed")) && strtod(ls, NULL) > 0)
        tt_xml_setf(pci, "cur_link_gbps", "%g", strtod(ls, NULL));
}

static int chain_of(hx_ctx *h, const tt_xml_node *dev, char chain[][16], char *hb, size_t hl)
{
    const tt_xml_node *o, *stack[SCAN_MAX_CHAIN];
    int n = 0;
    hb[0] = '\0';
    for (o = dev; o && n < SCAN_MAX_CHAIN; o = o->parent) {
        if (is_pci(o)) {
            stack[n++] = o;
        } else if (!strcmp(otype(o), "Bridge")) {
            unsigned d = 0, s = 0, e = 0;
            const char *bp = tt_xml_get(o, "bridge_pci");
            if (bp && sscanf(bp, "%x:[%x-%x]", &d, &s, &e) >= 2)
                snprintf(hb, hl, "pci%04x:%02x", d & 0xffff, s & 0xff);
            break;
        } else {
            break;
        }
    }
    for (int i = 0; i < n; i++) {
        hx_pci p;
        h->chain_obj[i] = (tt_xml_node *)stack[n - 1 - i];
        if (pci_of(stack[n - 1 - i], &p))
            return -1;
        busid_str(&p, chain[i], 16);
    }
    return n;
}

/* NUMA node of an I/O subtree: its first non-I/O ancestor's single node; else
 * a 3.0 <pci_locality> whose cpuset is one NUMA node's. */
static int locality_numa(hx_ctx *h, const tt_xml_node *top)
{
    const tt_xml_node *a = top;
    int first;
    hx_pci p;
    while (a && is_io(a))
        a = a->parent;
    if (a && bitmap_weight_first(tt_xml_get(a, "nodeset"), &first) == 1)
        return first;
    if (!pci_of(top, &p)) {
        for (tt_xml_node *l = tt_xml_first_child(h->top, "pci_locality"); l;
             l = tt_xml_next_sibling(l, "pci_locality")) {
            long d = attr_long(l, "domain", -1), lo = attr_long(l, "bus_min", -1),
                 hi = attr_long(l, "bus_max", -1);
            const char *cs = tt_xml_get(l, "cpuset");
            if (d != (long)p.dom || (long)p.bus < lo || (long)p.bus > hi || !cs)
                continue;
            for (tt_xml_node *nn = next_of_type(h, NULL, "NUMANode"); nn;
                 nn = next_of_type(h, nn, "NUMANode")) {
                const char *ncs = tt_xml_get(nn, "cpuset");
                if (ncs && !strcmp(ncs, cs))
                    return (int)attr_long(nn, "os_index", -1);
            }
        }
    }
    return -1;
}

/* ---------------------------------------------------------------- CPUs */

static tt_xml_node *numa_obj(hx_ctx *h, int numaid)
{
    for (tt_xml_node *n = next_of_type(h, NULL, "NUMANode"); n; n = next_of_type(h, n, "NUMANode"))
        if (attr_long(n, "os_index", -1) == numaid)
            return n;
    return NULL;
}

static void hx_cpu_fill(scan_ctx *c, tt_xml_node *cpu, int numaid)
{
    hx_ctx *h = c->cpu_fill_arg;
    tt_xml_node *n = numaid >= 0 ? numa_obj(h, numaid) : NULL;
    const char *cs = n ? tt_xml_get(n, "cpuset") : NULL;
    unsigned w[HX_MAX_WORDS];
    int first;
    if (cs && bitmap_weight_first(cs, &first) > 0 && bitmap_parse(cs, w, HX_MAX_WORDS) > 0) {
        char m[HX_MAX_WORDS * 9 + 1];
        size_t k = 0;
        for (int i = h->words - 1; i >= 0; i--)
            k += (size_t)snprintf(m + k, sizeof m - k, "%s%08x", i == h->words - 1 ? "" : ",", w[i]);
        tt_xml_set(cpu, "affinity", m);
    } else if (n) {
        scan_unknown(c, cpu, "affinity", "NUMA node %d has no CPUs (memory-only node)", numaid);
    } else {
        scan_unknown(c, cpu, "affinity", "hwloc reports no NUMA node %d", numaid);
    }
    if (h->arch[0])
        tt_xml_set(cpu, "arch", h->arch);
    else
        scan_unknown(c, cpu, "arch", "hwloc has no Architecture info");
    if (h->vendor[0]) {
        tt_xml_set(cpu, "vendor", h->vendor);
        if (h->family >= 0) {
            tt_xml_setf(cpu, "familyid", "%d", h->family);
            tt_xml_setf(cpu, "modelid", "%d", h->model);
        }
    }
}

static void read_cpu_ident(hx_ctx *h)
{
    const char *a = topo_info(h, "Architecture");
    tt_xml_node *root = tt_xml_first_child(h->top, "object"), *pkg;
    const char *cs;
    int last;
    h->arch[0] = h->vendor[0] = '\0';
    h->family = h->model = -1;
    if (a) {
        if (!strcmp(a, "x86_64") || !strcmp(a, "i686"))
            snprintf(h->arch, sizeof h->arch, "x86_64");
        else if (!strcmp(a, "aarch64") || !strncmp(a, "arm", 3))
            snprintf(h->arch, sizeof h->arch, "arm64");
        else if (!strncmp(a, "ppc64", 5))
            snprintf(h->arch, sizeof h->arch, "ppc64");
        else
            snprintf(h->arch, sizeof h->arch, "%s", a);
    }
    if ((pkg = next_of_type(h, NULL, "Package"))) {
        const char *v = info_of(pkg, "CPUVendor"), *f = info_of(pkg, "CPUFamilyNumber"),
                   *m = info_of(pkg, "CPUModelNumber");
        if (v)
            snprintf(h->vendor, sizeof h->vendor, "%s", v);
        if (f && m) {
            int fam = atoi(f);
            h->family = fam > 15 ? 15 + ((fam - 15) << 4) : fam;
            h->model = atoi(m);
        }
    }
    cs = root ? tt_xml_get(root, "complete_cpuset") : NULL;
    if (!cs && root)
        cs = tt_xml_get(root, "cpuset");
    last = bitmap_last(cs);
    h->words = last < 0 ? 1 : last / 32 + 1;
    if (h->words > HX_MAX_WORDS)
        h->words = HX_MAX_WORDS;
}

/* ------------------------------------------------------------ OS devices */

typedef enum { OS_OTHER, OS_NET, OS_OFED } os_kind;

static os_kind osdev_kind(hx_ctx *h, const tt_xml_node *o)
{
    long t = attr_long(o, "osdev_type", -1);
    if (h->major >= 3)
        return t >= 0 && (t & 32) ? OS_OFED : t >= 0 && (t & 16) ? OS_NET : OS_OTHER;
    return t == 3 ? OS_OFED : t == 2 ? OS_NET : OS_OTHER;
}

static const char *port_state(int s)
{
    static const char *names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
    return s >= 0 && s <= 5 ? names[s] : "UNKNOWN";
}

static void guid_fmt(const char *g, char *out, size_t len)
{
    char hex[40];
    size_t i, n = 0;
    for (i = 0; g[i] && n + 1 < sizeof hex; i++)
        if (g[i] != ':')
            hex[n++] = g[i];
    hex[n] = '\0';
    snprintf(out, len, "0x%llx", strtoull(hex, NULL, 16));
}

static void add_nets(hx_ctx *h, const tt_xml_node *dev, tt_xml_node *pci)
{
    scan_ctx *c = h->c;
    tt_xml_node *ibnet = NULL;
    int nib = 0;
    for (int i = 0; i < dev->nchildren; i++) {
        const tt_xml_node *o = dev->children[i];
        if (strcmp(otype(o), "OSDev") || osdev_kind(h, o) != OS_OFED)
            continue;
        for (int k = 0; k < o->nchildren; k++) {
            const tt_xml_node *in = o->children[k];
            const char *nm = is(in, "info") ? tt_xml_get(in, "name") : NULL, *g;
            int port;
            char tail[16], gs[40];
            tt_xml_node *nic, *net;
            if (!nm || sscanf(nm, "Port%dStat%15s", &port, tail) != 2 || strcmp(tail, "e"))
                continue;
            nic = scan_nic_get(c, pci);
            net = nic ? tt_xml_node_new("net") : NULL;
            if (!net || tt_xml_append(nic, net)) {
                tt_xml_node_free(net);
                continue;
            }
            c->probe->seen++;
            nib++;
            ibnet = net;
            tt_xml_set(net, "name", tt_xml_get(o, "name") ? tt_xml_get(o, "name") : "");
            tt_xml_setf(net, "dev", "%d", scan_next_net_dev(c));
            tt_xml_setf(net, "port", "%d", port);
            scan_unknown(c, net, "speed", "hwloc records no link rate");
            if ((g = info_of(o, "SysImageGUID"))) {
                guid_fmt(g, gs, sizeof gs);
                tt_xml_set(net, "guid", gs);
            }
            scan_unknown(c, net, "link_layer", "hwloc records no link layer");
            tt_xml_set(net, "state", port_state(atoi(tt_xml_get(in, "value") ? tt_xml_get(in, "value") : "-1")));
            if ((g = info_of(o, "NodeGUID"))) {
                guid_fmt(g, gs, sizeof gs);
                tt_xml_set(net, "node_guid", gs);
            }
        }
    }
    for (int i = 0; i < dev->nchildren; i++) {
        const tt_xml_node *o = dev->children[i];
        const char *nm = tt_xml_get(o, "name");
        tt_xml_node *nic, *net;
        if (strcmp(otype(o), "OSDev") || osdev_kind(h, o) != OS_NET || !nm)
            continue;
        if (nib) {
            if (nib == 1 && ibnet && !tt_xml_get(ibnet, "ifname"))
                tt_xml_set(ibnet, "ifname", nm);
            continue;
        }
        nic = scan_nic_get(c, pci);
        net = nic ? tt_xml_node_new("net") : NULL;
        if (!net || tt_xml_append(nic, net)) {
            tt_xml_node_free(net);
            continue;
        }
        c->probe->seen++;
        tt_xml_set(net, "name", nm);
        tt_xml_setf(net, "dev", "%d", scan_next_net_dev(c));
        tt_xml_set(net, "port", "0");
        scan_unknown(c, net, "speed", "hwloc records no link rate");
        tt_xml_set(net, "ifname", nm);
        tt_xml_set(net, "gdr", "0");
    }
}

static void add_gpu(hx_ctx *h, const tt_xml_node *dev, tt_xml_node *pci)
{
    scan_ctx *c = h->c;
    const tt_xml_node *o = gpu_osdev(dev);
    const char *nm, *v, *num;
    tt_xml_node *gpu;
    int r;
    if (!o)
        return; /* scan_finish records the GPU nobody described */
    nm = tt_xml_get(o, "name");
    r = osdev_gpu_rank(o);
    num = nm + strlen(gpu_prefix[r]);
    if (r == 3 && strchr(num, 'd'))
        num = strchr(num, 'd') + 1; /* openclPdD: device D of platform P */
    gpu = tt_xml_first_child(pci, "gpu");
    if (!gpu) {
        gpu = tt_xml_node_new("gpu");
        if (!gpu || tt_xml_insert(pci, 0, gpu)) {
            tt_xml_node_free(gpu);
            return;
        }
    }
    tt_xml_set(gpu, "dev", num);
    tt_xml_set(gpu, "rank", num);
    if (r == 1)
        scan_unknown(c, gpu, "gcn", "hwloc records no AMD GCN architecture");
    else
        scan_unknown(c, gpu, "sm", "hwloc records no CUDA compute capability");
    if (r > 0)
        scan_unknown(c, gpu, "dev", "GPU index from the %s OS device %s%s", gpu_prefix[r], nm,
                     r >= 2 ? " (no NVML device in the file)" : "");
    if ((v = info_of(o, "NVIDIAUUID")) || (v = info_of(o, "AMDUUID")))
        tt_xml_set(gpu, "uuid", v);
    if ((v = info_of(o, "GPUModel")))
        tt_xml_set(gpu, "name", v);
    c->ngpu_props++;
}

/* --------------------------------------------------------- distances */

typedef struct {
    char name[64];
    int n;
    tt_xml_node **obj;
    unsigned long long *val;
} hx_matrix;

static tt_xml_node *obj_by_index(hx_ctx *h, const char *type, const char *attr, long idx)
{
    for (tt_xml_node *o = next_obj(h, NULL); o; o = next_obj(h, o))
        if ((!type || !strcmp(otype(o), type)) && attr_long(o, attr, -1) == idx)
            return o;
    return NULL;
}

static void matrix_free(hx_matrix *m)
{
    free(m->obj);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* Reads one distances2/distances2hetero element; 0 when complete. */
static int matrix_read(hx_ctx *h, const tt_xml_node *d, hx_matrix *m)
{
    int hetero = is(d, "distances2hetero"), ni = 0, nv = 0;
    const char *type = tt_xml_get(d, "type"), *ix = tt_xml_get(d, "indexing"), *nm;
    long n = attr_long(d, "nbobjs", 0);
    int by_os;
    memset(m, 0, sizeof *m);
    if (n <= 0 || n > 4096 || (!hetero && !type))
        return -1;
    by_os = !hetero && (ix ? !strcmp(ix, "os") : (!strcmp(type, "PU") || !strcmp(type, "NUMANode")));
    nm = tt_xml_get(d, "name");
    snprintf(m->name, sizeof m->name, "%s", nm ? nm : "");
    m->n = (int)n;
    m->obj = calloc((size_t)n, sizeof *m->obj);
    m->val = calloc((size_t)n * (size_t)n, sizeof *m->val);
    if (!m->obj || !m->val)
        return -1;
    for (int i = 0; i < d->nchildren; i++) {
        const tt_xml_node *x = d->children[i];
        const char *t = tt_xml_get(x, TT_XML_TEXT_ATTR), *p = t;
        int isidx = is(x, "indexes");
        if (!t || (!isidx && !is(x, "u64values")))
            continue;
        while (*p) {
            char tok[64];
            int len = 0;
            while (*p && isspace((unsigned char)*p))
                p++;
            while (*p && !isspace((unsigned char)*p) && len < (int)sizeof tok - 1)
                tok[len++] = *p++;
            tok[len] = '\0';
            if (!len)
                break;
            if (isidx && ni < n) {
                char *colon = strchr(tok, ':');
                if (hetero && colon) {
                    *colon = '\0';
                    m->obj[ni] = obj_by_index(h, tok, "gp_index", strtol(colon + 1, NULL, 10));
                } else {
                    m->obj[ni] = obj_by_index(h, type, by_os ? "os_index" : "gp_index",
                                              strtol(tok, NULL, 10));
                }
                ni++;
            } else if (!isidx && nv < n * n) {
                m->val[nv++] = strtoull(tok, NULL, 10);
            }
        }
    }
    return ni == n && nv == n * n ? 0 : -1;
}

static int find_matrix(hx_ctx *h, const char *name, hx_matrix *m)
{
    for (int i = 0; i < h->top->nchildren; i++) {
        const tt_xml_node *d = h->top->children[i];
        const char *nm = tt_xml_get(d, "name");
        if ((is(d, "distances2") || is(d, "distances2hetero")) && nm && !strcmp(nm, name)) {
            if (matrix_read(h, d, m) == 0)
                return 0;
            TT_WARN(SCAN_SUBSYS, "%s:%d: %s matrix is incomplete or names unknown objects; ignored",
                    h->name, d->line, name);
            matrix_free(m);
            return -1;
        }
    }
    return -1;
}

static int named_in_nvlink(hx_ctx *h, const tt_xml_node *n)
{
    hx_matrix m;
    int found = 0;
    if (find_matrix(h, "NVLinkBandwidth", &m))
        return 0;
    for (int i = 0; i < m.n && !found; i++)
        found = m.obj[i] == n;
    matrix_free(&m);
    return found;
}

/* The PCI device a matrix entry stands for (OS devices: their PCI parent). */
static const tt_xml_node *pci_end(const tt_xml_node *o)
{
    if (o && !strcmp(otype(o), "OSDev"))
        o = o->parent;
    return o && is_pci(o) ? o : NULL;
}

static double per_link_nv(const char *model, const unsigned long long *v, int n, int nn, char *why,
                          size_t wl)
{
    static const char *v5[] = {"B100", "B200", "B300", "GB200", "GB300", NULL};
    static const char *v234[] = {"V100", "A100", "A800", "A30", "H100", "H200", "H800", "H20",
                                 "GH200", NULL};
    static const double cand[] = {50000, 25000, 20000};
    for (int i = 0; model && v5[i]; i++)
        if (strstr(model, v5[i])) {
            snprintf(why, wl, "50000 MB/s per link (GPU model %s, NVLink 5)", model);
            return 50000;
        }
    for (int i = 0; model && v234[i]; i++)
        if (strstr(model, v234[i])) {
            snprintf(why, wl, "25000 MB/s per link (GPU model %s, NVLink 2-4)", model);
            return 25000;
        }
    for (int k = 0; k < 3; k++) {
        int ok = 0;
        for (int i = 0; i < nn; i++)
            if (v[i] > 0) {
                ok = 1;
                break;
            }
        for (int i = 0; i < nn; i++)
            if (v[i] > 0 && v[i] % (unsigned long long)cand[k] != 0)
                ok = 0;
        if (ok) {
            snprintf(why, wl, "%.0f MB/s per link (largest hwloc per-link figure dividing every "
                              "pair's bandwidth; GPU model unknown)", cand[k]);
            return cand[k];
        }
    }
    (void)n;
    snprintf(why, wl, "no per-link figure divides the bandwidths; 25000 MB/s assumed");
    return 25000;
}

static tt_xml_node *gpu_elem(hx_ctx *h, const tt_xml_node *pcio, char *busid, size_t bl)
{
    hx_pci p;
    tt_xml_node *pci;
    if (!pcio || pci_of(pcio, &p))
        return NULL;
    busid_str(&p, busid, bl);
    pci = scan_find_pci(h->c, busid);
    return pci ? tt_xml_first_child(pci, "gpu") : NULL;
}

static void add_nvswitch_links(hx_ctx *h, const char *tb, long cnt)
{
    scan_ctx *c = h->c;
    tt_xml_node *s = tt_xml_find(c->sys, "nvswitch", "busid", tb);
    long long old = 0;
    if (!s) {
        s = tt_xml_node_new("nvswitch");
        if (!s || tt_xml_append(c->sys, s)) {
            tt_xml_node_free(s);
            return;
        }
        tt_xml_set(s, "busid", tb);
        tt_xml_set(s, "visible", "1");
    }
    if (tt_xml_get_ll(c->doc, s, "links", &old) != TT_OK)
        old = 0;
    tt_error_clear();
    tt_xml_setf(s, "links", "%lld", old + cnt);
}

/* NVLinkBandwidth (xgmi 0) or XGMIBandwidth (xgmi 1) -> link elements. */
static void add_links(hx_ctx *h, int xgmi, char *note, size_t nl)
{
    scan_ctx *c = h->c;
    const char *mname = xgmi ? "XGMIBandwidth" : "NVLinkBandwidth";
    hx_matrix m;
    unsigned long long *vals;
    int nv = 0, added = 0, cpu_links = 0;
    const char *model = NULL;
    char why[200];
    double per;
    if (find_matrix(h, mname, &m)) {
        snprintf(note, nl, "no %s matrix", mname);
        return;
    }
    vals = calloc((size_t)m.n * (size_t)m.n, sizeof *vals);
    if (!vals) {
        matrix_free(&m);
        return;
    }
    for (int i = 0; i < m.n; i++) {
        if (!model && m.obj[i] && !strcmp(otype(m.obj[i]), "OSDev"))
            model = info_of(m.obj[i], "GPUModel");
        for (int j = 0; j < m.n; j++)
            if (i != j && m.val[i * m.n + j] > 0)
                vals[nv++] = m.val[i * m.n + j];
    }
    if (xgmi) {
        per = tt_xgmi_bw_per_link() * 1000.0;
        snprintf(why, sizeof why, "%.0f MB/s per xGMI link (topotune's figure)", per);
    } else {
        per = per_link_nv(model, vals, m.n, nv, why, sizeof why);
    }
    for (int i = 0; i < m.n; i++) {
        char sb[16];
        tt_xml_node *gpu;
        if (!m.obj[i] || strcmp(otype(m.obj[i]), "OSDev"))
            continue; /* rows of NVSwitches / CPUs: their links are the GPUs' */
        gpu = gpu_elem(h, pci_end(m.obj[i]), sb, sizeof sb);
        if (!gpu)
            continue;
        for (int j = 0; j < m.n; j++) {
            unsigned long long v = m.val[i * m.n + j];
            /* hwloc stores a GPU-CPU link once: take either direction */
            const tt_xml_node *dst = m.obj[j], *dp;
            tt_xml_node *x;
            char tb[16];
            long cnt;
            hx_pci pa;
            if (i == j || !dst)
                continue;
            if (!is_io(dst) && v == 0)
                v = m.val[j * m.n + i];
            if (v == 0)
                continue;
            cnt = (long)((double)v / per + 0.5);
            if (cnt < 1)
                cnt = 1;
            if (!is_io(dst)) {
                /* the CPU side: POWER NPU NVLink, or Grace NVLink-C2C */
                if (xgmi)
                    continue;
                if (!strcmp(h->arch, "arm64")) {
                    x = tt_xml_node_new("c2c");
                    if (!x || tt_xml_append(gpu, x)) {
                        tt_xml_node_free(x);
                        continue;
                    }
                    tt_xml_setf(x, "count", "%ld", cnt);
                    tt_xml_setf(x, "bw", "%.0f", (double)v / (double)cnt);
                } else {
                    x = tt_xml_node_new("nvlink");
                    if (!x || tt_xml_append(gpu, x)) {
                        tt_xml_node_free(x);
                        continue;
                    }
                    tt_xml_set(x, "target", sb); /* a CPU has no bus id: NCCL uses the GPU's CPU */
                    tt_xml_setf(x, "count", "%ld", cnt);
                    tt_xml_set(x, "tclass", "0x068001");
                    tt_xml_setf(x, "bw_mbps", "%llu", v);
                }
                cpu_links++;
                added++;
                continue;
            }
            dp = pci_end(dst);
            if (!dp || pci_of(dp, &pa))
                continue;
            busid_str(&pa, tb, sizeof tb);
            x = tt_xml_node_new(xgmi ? "xgmi" : "nvlink");
            if (!x || tt_xml_append(gpu, x)) {
                tt_xml_node_free(x);
                continue;
            }
            tt_xml_set(x, "target", tb);
            tt_xml_setf(x, "count", "%ld", cnt);
            if (!xgmi && pci_is_nvswitch(h, dp, &pa)) {
                tt_xml_set(x, "tclass", "0x068000");
                tt_xml_setf(x, "bw_mbps", "%llu", v);
                add_nvswitch_links(h, tb, cnt);
            } else {
                tt_xml_setf(x, "tclass", "0x%06x", (unsigned)pa.cls << 8);
                tt_xml_setf(x, "bw_mbps", "%llu", v);
            }
            added++;
        }
    }
    if (added)
        scan_unknown(c, NULL, xgmi ? "xgmi.count" : "nvlink.count",
                     "hwloc gives MB/s per GPU pair, not link counts: count = bw_mbps / %s", why);
    if (cpu_links)
        scan_unknown(c, NULL, !strcmp(h->arch, "arm64") ? "c2c" : "nvlink.tclass",
                     "%d GPU-CPU link(s) in %s: %s", cpu_links, mname,
                     !strcmp(h->arch, "arm64") ? "NVLink-C2C of an arm64 (Grace) CPU: <c2c> with bw "
                                                 "in MB/s per link"
                                               : "CPU NVLink (tclass 0x068001, target = the GPU "
                                                 "itself: a CPU has no bus id)");
    snprintf(note, nl, "%s matrix %dx%d -> %d %s element(s)", mname, m.n, m.n, added,
             xgmi ? "xgmi" : "nvlink");
    free(vals);
    matrix_free(&m);
}

/* NVSwitches with no link in the matrix still get their <nvswitch>. */
static void add_lone_nvswitches(hx_ctx *h)
{
    for (tt_xml_node *o = next_of_type(h, NULL, "PCIDev"); o; o = next_of_type(h, o, "PCIDev")) {
        hx_pci p;
        char b[16];
        if (pci_of(o, &p) || !pci_is_nvswitch(h, o, &p))
            continue;
        busid_str(&p, b, sizeof b);
        if (!tt_xml_find(h->c->sys, "nvswitch", "busid", b) && scan_find_pci(h->c, b))
            add_nvswitch_links(h, b, 0);
    }
}

/* ------------------------------------------------------------- driver */

static int build_tree(hx_ctx *h)
{
    scan_ctx *c = h->c;
    int ndev = 0, nnuma = 0, nvf = 0;
    char chain[SCAN_MAX_CHAIN][16], hb[24];

    c->cpu_fill = hx_cpu_fill;
    c->cpu_fill_arg = h;
    for (tt_xml_node *nn = next_of_type(h, NULL, "NUMANode"); nn; nn = next_of_type(h, nn, "NUMANode")) {
        scan_cpu_get(c, (int)attr_long(nn, "os_index", -1), NULL);
        nnuma++;
    }
    for (tt_xml_node *o = next_of_type(h, NULL, "PCIDev"); o; o = next_of_type(h, o, "PCIDev")) {
        hx_pci p;
        tt_xml_node *pci;
        int n, gpu;
        if (pci_of(o, &p))
            continue;
        gpu = pci_is_gpu(o, &p);
        if (!gpu && p.cls >> 8 == 0x03) {
            char b[16];
            busid_str(&p, b, sizeof b);
            TT_INFO(SCAN_SUBSYS, "%s: PCI %s (class 0x%04x, vendor 0x%04x device 0x%04x) is a display or management "
                    "adapter, not a compute GPU: left out", h->name, b, p.cls, p.vendor, p.device);
        }
        if (!gpu && !scan_class_is_nic((long)p.cls << 8) && !pci_is_nvswitch(h, o, &p))
            continue;
        if (scan_class_is_nic((long)p.cls << 8) && scan_pci_is_vf(p.vendor, p.device)) {
            nvf++; /* as the sysfs walk: NCCL merges VFs into their PF */
            continue;
        }
        n = chain_of(h, o, chain, hb, sizeof hb);
        if (n <= 0)
            continue;
        pci = scan_tree_place(c, hb, chain, n, locality_numa(h, h->chain_obj[SCAN_TREE_TOP(n)]),
                              hx_fill, h);
        if (!pci)
            continue;
        ndev++;
        c->probe->seen++;
        if (gpu)
            add_gpu(h, o, pci);
        if (scan_class_is_nic((long)p.cls << 8))
            add_nets(h, o, pci);
    }
    if (!tt_xml_first_child(c->sys, "cpu"))
        scan_cpu_get(c, -1, NULL);
    if (nvf)
        scan_unknown(c, NULL, "pci", "%d SR-IOV virtual function(s) left out (NIC device ids the PCI "
                                     "ID list names Virtual Function): NCCL merges VFs into their PF",
                     nvf);
    if (h->noprogif)
        scan_unknown(c, NULL, "class", "hwloc keeps 16-bit PCI classes: the programming-interface "
                                       "byte is written as 00");
    scan_unknown(c, NULL, "numa_node", "hwloc does not keep numa_node -1: devices of unknown "
                                       "locality hang from the machine (numaid of the only node, or -1)");
    c->tree_done = 1;
    return ndev;
}

/* Live, after the sysfs probe built the tree: the devices of the classes the
 * sysfs walk keeps that hwloc sees and that tree lacks. */
static void cross_check(hx_ctx *h)
{
    scan_ctx *c = h->c;
    int seen = 0, missing = 0;
    for (tt_xml_node *o = next_of_type(h, NULL, "PCIDev"); o; o = next_of_type(h, o, "PCIDev")) {
        hx_pci p;
        long cls;
        char b[16];
        if (pci_of(o, &p))
            continue;
        cls = (long)p.cls << 8;
        if (!scan_class_is_gpu(cls, p.vendor) && !scan_class_is_nic(cls) && !scan_class_is_nvswitch(cls))
            continue;
        if (scan_class_is_nic(cls) && scan_pci_is_vf(p.vendor, p.device))
            continue; /* the sysfs walk skips VFs too */
        seen++;
        busid_str(&p, b, sizeof b);
        if (!scan_find_pci(c, b)) {
            missing++;
            scan_unknown(c, NULL, "pci", "hwloc sees %s (class 0x%04x) that the sysfs walk did not place",
                         b, p.cls);
        }
    }
    c->probe->seen = seen;
    scan_note(c, "cross-check: hwloc sees %d kept PCI device(s), %d missing from the sysfs tree", seen,
              missing);
}

/* Maps a parsed <topology> document (our reader's tree) into c.  `live`: hwloc's
 * export of this machine (the hostname is the scan's own; with the tree already
 * built by sysfs only the cross-check runs). */
static tt_probe_state map_doc(scan_ctx *c, tt_xml_doc *doc, const tt_xml_doc *file,
                              const char *reader, const char *name, int live)
{
    hx_ctx h;
    const char *hn;
    char nv[160], xg[160];
    int ndev, nnuma = 0;
    void (*saved_fill)(scan_ctx *, tt_xml_node *, int) = c->cpu_fill;
    void *saved_arg = c->cpu_fill_arg;
    memset(&h, 0, sizeof h);
    h.c = c;
    h.name = name;
    h.top = doc->root;
    h.file_lines = file == doc;
    if (file && file != doc)
        index_lines(&h, file);
    {
        const char *v = tt_xml_get(doc->root, "version");
        h.major = v ? atoi(v) : 1;
    }
    if (live && c->tree_done) {
        cross_check(&h);
        free(h.lines);
        return TT_PROBE_OK;
    }
    read_cpu_ident(&h);
    if (!live) { /* live, the scan set this machine's hostname itself */
        if ((hn = topo_info(&h, "HostName")))
            tt_xml_set(c->sys, "hostname", hn);
        else
            scan_unknown(c, NULL, "hostname", "hwloc XML has no HostName info");
    }
    ndev = build_tree(&h);
    for (tt_xml_node *nn = next_of_type(&h, NULL, "NUMANode"); nn; nn = next_of_type(&h, nn, "NUMANode"))
        nnuma++;
    add_links(&h, 0, nv, sizeof nv);
    add_links(&h, 1, xg, sizeof xg);
    add_lone_nvswitches(&h);
    if (file)
        inherit_lines(c->sys);
    free(h.lines);
    c->cpu_fill = saved_fill;
    c->cpu_fill_arg = saved_arg;
    scan_note(c, "%s, format %s: %d NUMA node(s), %d kept PCI device(s); %s; %s", reader,
              tt_xml_get(doc->root, "version") ? tt_xml_get(doc->root, "version") : "1.x", nnuma,
              ndev, nv, xg);
    return TT_PROBE_OK;
}

/* Reader limits: files up to 64 MiB; an export of a live machine is hwloc's own
 * output, bounded by the machine (thousands of PUs: more elements than a file). */
static void hx_limits(tt_xml_limits *lim, int live)
{
    tt_xml_limits_default(lim);
    lim->max_bytes = (size_t)64 << 20;
    if (live && lim->max_nodes < 1 << 20)
        lim->max_nodes = 1 << 20;
}

/* hwloc's own XML export (buf, len bytes) -> our reader's tree. */
static int parse_export(const char *buf, size_t len, const char *name, int live, tt_xml_doc **out,
                        char *why, size_t wl)
{
    tt_xml_limits lim;
    hx_limits(&lim, live);
    *out = NULL;
    if (tt_xml_read_buffer_flags(buf, len, name, &lim, TT_XML_READ_KEEP_TEXT, out) == TT_OK &&
        (*out)->root && !strcmp((*out)->root->name, "topology"))
        return 0;
    snprintf(why, wl, "hwloc's own export does not parse: %s",
             *out ? "root is not <topology>" : tt_error_message());
    tt_xml_doc_free(*out);
    *out = NULL;
    return -1;
}

/* hwloc 2.x loads `text` and exports it again (format 2.0) into *out. */
static int through_hwloc(const char *text, size_t len, const char *name, tt_xml_doc **out,
                         char *why, size_t wl)
{
    hwloc_topology_t t;
    char *buf = NULL;
    int blen = 0, rc = -1;
    *out = NULL;
    if (hwloc_get_api_version() >> 16 != HWLOC_API_VERSION >> 16) {
        snprintf(why, wl, "hwloc library 0x%x does not match headers 0x%x", hwloc_get_api_version(),
                 HWLOC_API_VERSION);
        return -1;
    }
    if (hwloc_topology_init(&t)) {
        snprintf(why, wl, "hwloc_topology_init failed");
        return -1;
    }
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (len >= (size_t)INT_MAX || hwloc_topology_set_xmlbuffer(t, text, (int)len + 1) != 0)
        snprintf(why, wl, "hwloc cannot use this XML buffer");
    else if (hwloc_topology_load(t) != 0)
        snprintf(why, wl, "hwloc_topology_load refused the file");
    else if (hwloc_topology_export_xmlbuffer(t, &buf, &blen, 0) != 0 || !buf || blen <= 0)
        snprintf(why, wl, "hwloc could not export the loaded topology");
    else
        rc = parse_export(buf, (size_t)blen - 1, name, 0, out, why, wl);
    if (buf)
        hwloc_free_xmlbuffer(t, buf);
    hwloc_topology_destroy(t);
    return rc;
}

tt_probe_state scan_hwloc_xml_file(scan_ctx *c, const char *path)
{
    char *text = NULL, why[300];
    size_t len = 0;
    tt_xml_doc *doc = NULL, *viahw = NULL;
    tt_probe_state ps;
    const char *ver, *force;
    int major;
    tt_xml_limits lim;

    hx_limits(&lim, 0);
    if (tt_read_file(path, lim.max_bytes, &text, &len) != TT_OK) {
        scan_note(c, "%s", tt_error_message());
        return TT_PROBE_FAILED;
    }
    if (tt_xml_read_buffer_flags(text, len, path, &lim, TT_XML_READ_KEEP_TEXT, &doc) != TT_OK) {
        scan_note(c, "%s", tt_error_message());
        free(text);
        return TT_PROBE_FAILED;
    }
    if (!doc->root || strcmp(doc->root->name, "topology") ||
        !tt_xml_first_child(doc->root, "object")) {
        scan_note(c, "%s:%d: not an hwloc XML file (root <topology> with an <object>)", path,
                  doc->root ? doc->root->line : 1);
        tt_xml_doc_free(doc);
        free(text);
        return TT_PROBE_FAILED;
    }
    if (!scan_hwloc_xml_safe(text, len, why, sizeof why)) {
        scan_note(c, "%s: %s", path, why);
        tt_xml_doc_free(doc);
        free(text);
        return TT_PROBE_FAILED;
    }
    ver = tt_xml_get(doc->root, "version");
    major = ver ? atoi(ver) : 1;
    force = tt_setting("TOPOTUNE_HWLOC_READER");
    if (force && !strcmp(force, "topotune")) {
        TT_INFO(SCAN_SUBSYS, "%s: hwloc XML format %s: read by topotune's reader "
                             "(TOPOTUNE_HWLOC_READER=topotune)", path, ver ? ver : "1.x");
        ps = map_doc(c, doc, doc, "topotune reader", path, 0);
    } else if (major > (int)(HWLOC_API_VERSION >> 16)) {
        TT_INFO(SCAN_SUBSYS, "%s: hwloc XML format %s: read by topotune's reader (the linked hwloc "
                             "%s reads formats up to %u.x)", path, ver, HWLOC_VERSION,
                HWLOC_API_VERSION >> 16);
        ps = map_doc(c, doc, doc, "topotune reader", path, 0);
    } else if (through_hwloc(text, len, path, &viahw, why, sizeof why) == 0) {
        TT_INFO(SCAN_SUBSYS, "%s: hwloc XML format %s: read by the hwloc library (%s, API %u.%u), "
                             "mapped from its export", path, ver ? ver : "1.x", HWLOC_VERSION,
                hwloc_get_api_version() >> 16, (hwloc_get_api_version() >> 8) & 0xff);
        ps = map_doc(c, viahw, doc, "hwloc reader", path, 0);
    } else {
        TT_INFO(SCAN_SUBSYS, "%s: hwloc XML format %s: %s; read by topotune's reader", path,
                ver ? ver : "1.x", why);
        ps = map_doc(c, doc, doc, "topotune reader", path, 0);
    }
    tt_xml_doc_free(viahw);
    tt_xml_doc_free(doc);
    free(text);
    return ps;
}

tt_probe_state scan_hwloc_xml_live(scan_ctx *c, const char *xml, size_t len)
{
    static const char name[] = "live hwloc topology";
    tt_xml_doc *doc = NULL;
    tt_probe_state ps;
    char why[300];
    if (parse_export(xml, len, name, 1, &doc, why, sizeof why)) {
        scan_note(c, "%s", why);
        return TT_PROBE_FAILED;
    }
    ps = map_doc(c, doc, NULL, "live topology exported by hwloc, mapped as hwloc XML", name, 1);
    tt_xml_doc_free(doc);
    return ps;
}
