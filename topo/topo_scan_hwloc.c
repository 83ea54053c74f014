/*
 * topo_scan_hwloc.c - the same CPU/PCI/NIC tree from hwloc 2.x objects, live
 * or from an `lstopo --of xml` file (the offline twin: the XML a live scan of
 * that machine would give, as far as hwloc recorded it).
 *
 * I/O filter KEEP_ALL keeps every bridge; the bridges above a kept device
 * become the same bus-id chain the sysfs probe reads from realpaths, so
 * scan_tree_place() collapses both the same way (root ports and switch
 * downstream ports skipped).  NUMA nodes give <cpu numaid affinity>, the
 * Package infos CPUVendor/CPUFamilyNumber/CPUModelNumber its identity, OS
 * devices the nets (OpenFabrics: ports and GUIDs; network: interface names),
 * NVML OS devices the GPUs (dev, uuid, name), and the NVLinkBandwidth
 * distances matrix (MB/s per pair) the <nvlink> elements.
 *
 * hwloc does not record: PCI max link speed/width (only the current rate in
 * GB/s), numa_node -1 (devices with unknown locality hang from the machine),
 * the PCI programming-interface byte, link rates of NICs, CUDA compute
 * capability.  Those are recorded as <unknown>.
 *
 * Offline files (--hwloc-xml, --input on an hwloc export) are handled by
 * topo_hwloc_xml.c (hwloc 2.x library or topotune's reader for 3.0); the
 * object walk below serves the live scan.
 *
 * Live use: when the sysfs probe already built the tree, hwloc only
 * cross-checks that it sees the same devices (differences are recorded).
 */
#include "topo_scan_internal.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    hwloc_topology_t topo;
    hwloc_obj_t dev;          /* kept PCI device being placed */
    hwloc_obj_t chain_obj[SCAN_MAX_CHAIN];
    int words;                /* 32-bit words in an affinity mask */
    char arch[16], vendor[32];
    int family, model;
} hw_ctx;

static void busid_of(hwloc_obj_t o, char *out, size_t len)
{
    const struct hwloc_pcidev_attr_s *p = o->type == HWLOC_OBJ_BRIDGE
                                              ? &o->attr->bridge.upstream.pci
                                              : &o->attr->pcidev;
    snprintf(out, len, "%04x:%02x:%02x.%x", (unsigned)p->domain, p->bus, p->dev, p->func);
}

static const struct hwloc_pcidev_attr_s *pci_attr(hwloc_obj_t o)
{
    if (o->type == HWLOC_OBJ_PCI_DEVICE)
        return &o->attr->pcidev;
    if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
        return &o->attr->bridge.upstream.pci;
    return NULL;
}

/* NCCL's affinity format: 32-bit hex words, most significant first. */
static void cpumask(hwloc_const_bitmap_t set, int words, char *out, size_t len)
{
    int w, i;
    size_t n = 0;
    out[0] = '\0';
    for (w = words - 1; w >= 0 && n + 10 < len; w--) {
        unsigned v = 0;
        for (i = 0; i < 32; i++)
            if (hwloc_bitmap_isset(set, (unsigned)(w * 32 + i)))
                v |= 1u << i;
        n += (size_t)snprintf(out + n, len - n, "%s%08x", w == words - 1 ? "" : ",", v);
    }
}

static hwloc_obj_t numa_obj(hwloc_topology_t t, int numaid)
{
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, o)))
        if ((int)o->os_index == numaid)
            return o;
    return NULL;
}

static void hw_cpu_fill(scan_ctx *c, tt_xml_node *cpu, int numaid)
{
    hw_ctx *h = c->cpu_fill_arg;
    hwloc_obj_t n = numaid >= 0 ? numa_obj(h->topo, numaid) : NULL;
    char m[1100];
    if (n && n->cpuset && !hwloc_bitmap_iszero(n->cpuset)) {
        cpumask(n->cpuset, h->words, m, sizeof m);
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

static void read_cpu_ident(hw_ctx *h)
{
    hwloc_obj_t root = hwloc_get_root_obj(h->topo), pkg;
    const char *a = hwloc_obj_get_info_by_name(root, "Architecture");
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
    pkg = hwloc_get_next_obj_by_type(h->topo, HWLOC_OBJ_PACKAGE, NULL);
    if (pkg) {
        const char *v = hwloc_obj_get_info_by_name(pkg, "CPUVendor");
        const char *f = hwloc_obj_get_info_by_name(pkg, "CPUFamilyNumber");
        const char *m = hwloc_obj_get_info_by_name(pkg, "CPUModelNumber");
        if (v)
            snprintf(h->vendor, sizeof h->vendor, "%s", v);
        if (f && m) {
            int fam = atoi(f);
            /* NCCL's family encoding: see topo_scan_sysfs.c */
            h->family = fam > 15 ? 15 + ((fam - 15) << 4) : fam;
            h->model = atoi(m);
        }
    }
    last = hwloc_bitmap_last(root->complete_cpuset ? root->complete_cpuset : root->cpuset);
    h->words = last < 0 ? 1 : last / 32 + 1;
}

static int kept_class(const struct hwloc_pcidev_attr_s *p)
{
    long cls = (long)p->class_id << 8;
    return scan_class_is_gpu(cls, p->vendor_id) || scan_class_is_nic(cls) ||
           scan_class_is_nvswitch(cls);
}

static void hw_fill(scan_ctx *c, const char *busid, int idx, void *arg, tt_xml_node *pci)
{
    hw_ctx *h = arg;
    hwloc_obj_t o = h->chain_obj[idx];
    const struct hwloc_pcidev_attr_s *p = pci_attr(o);
    scan_pci_info in;
    memset(&in, 0, sizeof in);
    snprintf(in.busid, sizeof in.busid, "%s", busid);
    in.cls = (long)p->class_id << 8;
    in.vendor = p->vendor_id;
    in.device = p->device_id;
    in.subvendor = p->subvendor_id;
    in.subdevice = p->subdevice_id;
    in.max_width = in.cur_width = -1;
    in.up_state = 0; /* nothing to compare with: link_speed stays unknown anyway */
    in.numa_known = 0;
    in.why = "hwloc records neither maximum nor current PCIe speed/width nor numa_node, "
             "only the current link rate (cur_link_gbps)";
    scan_pci_set_attrs(c, pci, &in);
    if (p->linkspeed > 0)
        tt_xml_setf(pci, "cur_link_gbps", "%g", (double)p->linkspeed);
}

/* Bridges from the host bridge down to `dev` (inclusive). */
static int chain_of(hw_ctx *h, hwloc_obj_t dev, char chain[][16], char *hostbridge, size_t hl)
{
    hwloc_obj_t o, stack[SCAN_MAX_CHAIN];
    int n = 0, i;
    hostbridge[0] = '\0';
    for (o = dev; o && n < SCAN_MAX_CHAIN; o = o->parent) {
        if (o->type == HWLOC_OBJ_PCI_DEVICE ||
            (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)) {
            stack[n++] = o;
        } else if (o->type == HWLOC_OBJ_BRIDGE) {
            snprintf(hostbridge, hl, "pci%04x:%02x", (unsigned)o->attr->bridge.downstream.pci.domain,
                     o->attr->bridge.downstream.pci.secondary_bus);
            break;
        } else {
            break;
        }
    }
    for (i = 0; i < n; i++) {
        h->chain_obj[i] = stack[n - 1 - i];
        busid_of(h->chain_obj[i], chain[i], 16);
    }
    return n;
}

static int locality_numa(hwloc_topology_t t, hwloc_obj_t o)
{
    hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, o);
    if (!a || !a->nodeset || hwloc_bitmap_weight(a->nodeset) != 1)
        return -1;
    return hwloc_bitmap_first(a->nodeset);
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

static void add_osdev_nets(scan_ctx *c, hwloc_obj_t pcidev, tt_xml_node *pci)
{
    hwloc_obj_t o;
    tt_xml_node *ibnet = NULL;
    int nib = 0;
    for (o = pcidev->io_first_child; o; o = o->next_sibling) {
        unsigned k;
        if (o->type != HWLOC_OBJ_OS_DEVICE || o->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS)
            continue;
        for (k = 0; k < o->infos_count; k++) {
            int port;
            char tail[16];
            tt_xml_node *nic, *net;
            const char *g;
            char gs[40];
            if (sscanf(o->infos[k].name, "Port%dStat%15s", &port, tail) != 2 || strcmp(tail, "e"))
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
            tt_xml_set(net, "name", o->name);
            tt_xml_setf(net, "dev", "%d", scan_next_net_dev(c));
            tt_xml_setf(net, "port", "%d", port);
            scan_unknown(c, net, "speed", "hwloc records no link rate");
            if ((g = hwloc_obj_get_info_by_name(o, "SysImageGUID"))) {
                guid_fmt(g, gs, sizeof gs);
                tt_xml_set(net, "guid", gs);
            }
            scan_unknown(c, net, "link_layer", "hwloc records no link layer");
            tt_xml_set(net, "state", port_state(atoi(o->infos[k].value)));
            if ((g = hwloc_obj_get_info_by_name(o, "NodeGUID"))) {
                guid_fmt(g, gs, sizeof gs);
                tt_xml_set(net, "node_guid", gs);
            }
        }
    }
    for (o = pcidev->io_first_child; o; o = o->next_sibling) {
        tt_xml_node *nic, *net;
        if (o->type != HWLOC_OBJ_OS_DEVICE || o->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK)
            continue;
        if (nib) {
            if (nib == 1 && ibnet && !tt_xml_get(ibnet, "ifname"))
                tt_xml_set(ibnet, "ifname", o->name);
            continue;
        }
        nic = scan_nic_get(c, pci);
        net = nic ? tt_xml_node_new("net") : NULL;
        if (!net || tt_xml_append(nic, net)) {
            tt_xml_node_free(net);
            continue;
        }
        c->probe->seen++;
        tt_xml_set(net, "name", o->name);
        tt_xml_setf(net, "dev", "%d", scan_next_net_dev(c));
        tt_xml_set(net, "port", "0");
        scan_unknown(c, net, "speed", "hwloc records no link rate");
        tt_xml_set(net, "ifname", o->name);
        tt_xml_set(net, "gdr", "0");
    }
}

/* GPU elements from NVML OS devices (nvmlN: N is NVML's index). */
static void add_nvml_gpus(scan_ctx *c, hwloc_obj_t pcidev, tt_xml_node *pci)
{
    hwloc_obj_t o;
    for (o = pcidev->io_first_child; o; o = o->next_sibling) {
        tt_xml_node *gpu;
        const char *v;
        if (o->type != HWLOC_OBJ_OS_DEVICE || !o->name || strncmp(o->name, "nvml", 4) != 0)
            continue;
        gpu = tt_xml_first_child(pci, "gpu");
        if (!gpu) {
            gpu = tt_xml_node_new("gpu");
            if (!gpu || tt_xml_insert(pci, 0, gpu)) {
                tt_xml_node_free(gpu);
                return;
            }
        }
        tt_xml_set(gpu, "dev", o->name + 4);
        tt_xml_set(gpu, "rank", o->name + 4);
        scan_unknown(c, gpu, "sm", "hwloc records no CUDA compute capability");
        if ((v = hwloc_obj_get_info_by_name(o, "NVIDIAUUID")))
            tt_xml_set(gpu, "uuid", v);
        if ((v = hwloc_obj_get_info_by_name(o, "GPUModel")))
            tt_xml_set(gpu, "name", v);
        c->ngpu_props++;
        return;
    }
}

/* MB/s per NVLink as hwloc sums them (its figure: v1 20000, v2-v4 25000,
 * v5 50000).  The XML does not keep the version, so it is chosen from the
 * GPU model name, else from what divides every pair's value. */
static double per_link_mbps(const char *model, const double *vals, int n, char *why, size_t wl)
{
    static const char *v5[] = {"B100", "B200", "B300", "GB200", "GB300", NULL};
    static const char *v234[] = {"V100", "A100", "A800", "A30", "H100", "H200", "H800", "H20",
                                 "GH200", NULL};
    int i, ok;
    for (i = 0; model && v5[i]; i++)
        if (strstr(model, v5[i])) {
            snprintf(why, wl, "50000 MB/s per link (GPU model %s, NVLink 5)", model);
            return 50000;
        }
    for (i = 0; model && v234[i]; i++)
        if (strstr(model, v234[i])) {
            snprintf(why, wl, "25000 MB/s per link (GPU model %s, NVLink 2-4)", model);
            return 25000;
        }
    {
        static const double cand[] = {50000, 25000, 20000};
        int k;
        for (k = 0; k < 3; k++) {
            ok = n > 0;
            for (i = 0; i < n; i++)
                if (vals[i] > 0 && (long long)vals[i] % (long long)cand[k] != 0)
                    ok = 0;
            if (ok) {
                snprintf(why, wl, "%.0f MB/s per link (largest hwloc per-link figure dividing every "
                                  "pair's bandwidth; GPU model unknown)", cand[k]);
                return cand[k];
            }
        }
    }
    snprintf(why, wl, "no per-link figure divides the bandwidths; 25000 MB/s assumed");
    return 25000;
}

static void add_nvlinks(scan_ctx *c, hwloc_topology_t t)
{
    unsigned nr = 1, i, j, n;
    struct hwloc_distances_s *d = NULL;
    double *vals;
    int nv = 0;
    char why[200];
    const char *model = NULL;

    char prev[sizeof c->probe->note];
    snprintf(prev, sizeof prev, "%s", c->probe->note);
    if (hwloc_distances_get_by_name(t, "NVLinkBandwidth", &nr, &d, 0) != 0 || nr == 0 || !d) {
        scan_note(c, "%s; no NVLinkBandwidth matrix", prev);
        return;
    }
    n = d->nbobjs;
    vals = calloc((size_t)n * n, sizeof *vals);
    if (!vals) {
        hwloc_distances_release(t, d);
        return;
    }
    for (i = 0; i < n; i++) {
        if (!model && d->objs[i]->type == HWLOC_OBJ_OS_DEVICE)
            model = hwloc_obj_get_info_by_name(d->objs[i], "GPUModel");
        for (j = 0; j < n; j++)
            if (i != j && d->values[i * n + j] > 0)
                vals[nv++] = (double)d->values[i * n + j];
    }
    {
        double per = per_link_mbps(model, vals, nv, why, sizeof why);
        int added = 0;
        for (i = 0; i < n; i++) {
            hwloc_obj_t src = d->objs[i], sp;
            tt_xml_node *gpu, *pci;
            char sb[16];
            if (src->type != HWLOC_OBJ_OS_DEVICE || !(sp = src->parent) ||
                sp->type != HWLOC_OBJ_PCI_DEVICE)
                continue; /* rows of NVSwitches / CPUs: their links are the GPUs' */
            busid_of(sp, sb, sizeof sb);
            pci = scan_find_pci(c, sb);
            gpu = pci ? tt_xml_first_child(pci, "gpu") : NULL;
            if (!gpu)
                continue;
            for (j = 0; j < n; j++) {
                hwloc_obj_t dst = d->objs[j], dp = dst;
                const struct hwloc_pcidev_attr_s *pa;
                tt_xml_node *x;
                char tb[16];
                long cnt;
                if (i == j || d->values[i * n + j] == 0)
                    continue;
                if (dp->type == HWLOC_OBJ_OS_DEVICE)
                    dp = dp->parent;
                if (!dp || !(pa = pci_attr(dp)))
                    continue;
                busid_of(dp, tb, sizeof tb);
                cnt = (long)((double)d->values[i * n + j] / per + 0.5);
                x = tt_xml_node_new("nvlink");
                if (!x || tt_xml_append(gpu, x)) {
                    tt_xml_node_free(x);
                    continue;
                }
                tt_xml_set(x, "target", tb);
                tt_xml_setf(x, "count", "%ld", cnt);
                tt_xml_setf(x, "tclass", "0x%06x", (unsigned)pa->class_id << 8);
                tt_xml_setf(x, "bw_mbps", "%llu", (unsigned long long)d->values[i * n + j]);
                added++;
                if (pa->class_id == 0x0680) {
                    tt_xml_node *s = tt_xml_find(c->sys, "nvswitch", "busid", tb);
                    long long old = 0;
                    if (!s) {
                        s = tt_xml_node_new("nvswitch");
                        if (!s || tt_xml_append(c->sys, s)) {
                            tt_xml_node_free(s);
                            continue;
                        }
                        tt_xml_set(s, "busid", tb);
                        tt_xml_set(s, "visible", "1");
                    }
                    if (tt_xml_get_ll(c->doc, s, "links", &old) != TT_OK)
                        old = 0;
                    tt_error_clear();
                    tt_xml_setf(s, "links", "%lld", old + cnt);
                }
            }
        }
        if (added)
            scan_unknown(c, NULL, "nvlink.count",
                         "hwloc gives MB/s per GPU pair, not link counts: count = bw_mbps / %s", why);
        scan_note(c, "%s; NVLinkBandwidth matrix %ux%u -> %d nvlink element(s)", prev, n, n, added);
    }
    free(vals);
    hwloc_distances_release(t, d);
}

static int build_tree(scan_ctx *c, hw_ctx *h)
{
    hwloc_obj_t o = NULL, nn = NULL;
    int ndev = 0, nnuma = 0;
    char chain[SCAN_MAX_CHAIN][16], hb[24];

    c->cpu_fill = hw_cpu_fill;
    c->cpu_fill_arg = h;
    while ((nn = hwloc_get_next_obj_by_type(h->topo, HWLOC_OBJ_NUMANODE, nn))) {
        scan_cpu_get(c, (int)nn->os_index, NULL);
        nnuma++;
    }
    while ((o = hwloc_get_next_pcidev(h->topo, o))) {
        tt_xml_node *pci;
        int n, top;
        if (!kept_class(&o->attr->pcidev))
            continue;
        n = chain_of(h, o, chain, hb, sizeof hb);
        if (n <= 0)
            continue;
        top = SCAN_TREE_TOP(n);
        pci = scan_tree_place(c, hb, chain, n, locality_numa(h->topo, h->chain_obj[top]), hw_fill, h);
        if (!pci)
            continue;
        ndev++;
        c->probe->seen++;
        add_nvml_gpus(c, o, pci);
        if (scan_class_is_nic((long)o->attr->pcidev.class_id << 8))
            add_osdev_nets(c, o, pci);
    }
    if (!tt_xml_first_child(c->sys, "cpu"))
        scan_cpu_get(c, -1, NULL);
    scan_unknown(c, NULL, "class", "hwloc keeps 16-bit PCI classes: the programming-interface "
                                   "byte is written as 00");
    scan_unknown(c, NULL, "numa_node", "hwloc does not keep numa_node -1: devices of unknown "
                                       "locality hang from the machine (numaid of the only node, or -1)");
    c->tree_done = 1;
    scan_note(c, "%d NUMA node(s), %d kept PCI device(s)", nnuma, ndev);
    return ndev;
}

/* Live cross-check: devices hwloc sees that the sysfs tree lacks. */
static void cross_check(scan_ctx *c, hw_ctx *h)
{
    hwloc_obj_t o = NULL;
    int seen = 0, missing = 0;
    char b[16];
    while ((o = hwloc_get_next_pcidev(h->topo, o))) {
        if (!kept_class(&o->attr->pcidev))
            continue;
        seen++;
        busid_of(o, b, sizeof b);
        if (!scan_find_pci(c, b)) {
            missing++;
            scan_unknown(c, NULL, "pci", "hwloc sees %s (class 0x%04x) that the sysfs walk did not place",
                         b, o->attr->pcidev.class_id);
        }
    }
    c->probe->seen = seen;
    scan_note(c, "cross-check: hwloc sees %d kept PCI device(s), %d missing from the sysfs tree", seen,
              missing);
}

tt_probe_state scan_probe_hwloc(scan_ctx *c)
{
    hw_ctx h;
    void (*saved_fill)(scan_ctx *, tt_xml_node *, int);
    void *saved_arg;
    const char *xml = c->opt->hwloc_xml;
    memset(&h, 0, sizeof h);
    if (xml && xml[0])
        return scan_hwloc_xml_file(c, xml); /* offline: topo_hwloc_xml.c */
    if (hwloc_get_api_version() >> 16 != HWLOC_API_VERSION >> 16) {
        scan_note(c, "hwloc library 0x%x does not match headers 0x%x", hwloc_get_api_version(),
                  HWLOC_API_VERSION);
        return TT_PROBE_UNAVAILABLE;
    }
    if (hwloc_topology_init(&h.topo)) {
        scan_note(c, "hwloc_topology_init failed");
        return TT_PROBE_FAILED;
    }
    hwloc_topology_set_io_types_filter(h.topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    /* PCI from sysfs (hwloc's linux component) rather than the libpciaccess
     * plugin: same devices, no config-space reads, and that plugin leaks */
    hwloc_topology_set_components(h.topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
    if (hwloc_topology_load(h.topo) != 0) {
        scan_note(c, "hwloc_topology_load failed");
        hwloc_topology_destroy(h.topo);
        return TT_PROBE_FAILED;
    }
    read_cpu_ident(&h);
    saved_fill = c->cpu_fill;
    saved_arg = c->cpu_fill_arg;
    if (c->tree_done) {
        cross_check(c, &h);
    } else {
        build_tree(c, &h);
        add_nvlinks(c, h.topo);
    }
    /* later probes fill new cpus the way the tree builder before did (h dies here) */
    c->cpu_fill = saved_fill;
    c->cpu_fill_arg = saved_arg;
    hwloc_topology_destroy(h.topo);
    return TT_PROBE_OK;
}
