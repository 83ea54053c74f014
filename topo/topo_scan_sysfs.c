/*
 * topo_scan_sysfs.c - the CPU/PCI/NIC tree from /sys and /proc (under a
 * configurable root: TOPOTUNE_SYSFS_ROOT or tt_scan_options.sysfs_root, the
 * way hwloc honours HWLOC_FSROOT), plus the GPUDirect RDMA module check.
 *
 * Reads (all relative to the root):
 *   /sys/bus/pci/devices/<bdf> -> realpath /sys/devices/pciDDDD:BB/<bdf>/.../<bdf>
 *     class vendor device subsystem_vendor subsystem_device numa_node local_cpulist
 *     max_link_speed max_link_width current_link_speed current_link_width physfn
 *     net/<if>  infiniband/<dev>/{node_guid,sys_image_guid,ports/<p>/{state,rate,link_layer}}
 *   /sys/class/net/<if>/{device,speed,mtu,operstate,type}, <device>/driver (the bound driver's name)
 *   /sys/devices/system/node/node<N>/cpumap
 *   /proc/cpuinfo (vendor_id, cpu family, model; CPU implementer on ARM)
 *   /sys/module/nvidia_peermem, /sys/kernel/mm/memory_peers/nv_mem{,_nc}/version,
 *   /proc/sys/kernel/osrelease
 * Kept devices: NVIDIA GPUs, network controllers (class 0x02, VFs skipped),
 * NVSwitches (0x068000), and the switch levels NCCL keeps above them.
 */
#include "topo_scan_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char arch[16];
    char vendor[32];
    int family, model;  /* NCCL's encoding, -1 unknown */
    int have_cpuinfo;
} cpu_ident;

typedef struct {
    char busid[16];
    char devpath[PATH_MAX]; /* root-relative /sys/devices/... path, "" when unresolved */
    char hostbridge[24];
    char chain[SCAN_MAX_CHAIN][16];
    int n;
    long cls, vendor;
    tt_xml_node *pci;
    int has_ib;
} kept_dev;

/* ---------------- CPU ---------------- */

static void read_cpuinfo(scan_ctx *c, cpu_ident *id)
{
    char p[PATH_MAX], line[512];
    FILE *f;
    int fam = -1, model = -1, arm = 0, power = 0;
    memset(id, 0, sizeof *id);
    id->family = id->model = -1;
    scan_path(c, p, sizeof p, "/proc/cpuinfo");
    f = fopen(p, "r");
    if (f) {
        id->have_cpuinfo = 1;
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':'), *v, *k;
            size_t n;
            if (!colon)
                continue;
            /* key = text before the colon without trailing blanks */
            for (k = colon; k > line && (k[-1] == ' ' || k[-1] == '\t'); k--)
                ;
            *k = '\0';
            v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            n = strlen(v);
            while (n && (v[n - 1] == '\n' || v[n - 1] == ' '))
                v[--n] = '\0';
            if (!strcmp(line, "vendor_id") && !id->vendor[0])
                scan_fmt(id->vendor, sizeof id->vendor, "%s", v);
            else if (!strcmp(line, "cpu family") && fam < 0)
                fam = atoi(v);
            else if (!strcmp(line, "model") && model < 0)
                model = atoi(v);
            else if (!strcmp(line, "CPU implementer"))
                arm = 1;
            else if (!strcmp(line, "cpu") && strstr(v, "POWER"))
                power = 1;
            if (!strcmp(line, "processor") && id->vendor[0] && fam >= 0 && model >= 0)
                break; /* first CPU done (NCCL reads the running core; all are alike) */
        }
        fclose(f);
    }
    if (id->vendor[0])
        scan_fmt(id->arch, sizeof id->arch, "x86_64");
    else if (arm)
        scan_fmt(id->arch, sizeof id->arch, "arm64");
    else if (power)
        scan_fmt(id->arch, sizeof id->arch, "ppc64");
    if (fam >= 0) {
        /* NCCL computes family = base + (extended << 4); /proc/cpuinfo shows
         * base + extended (extended used only when base is 15).  So AMD Zen2
         * (cpuinfo 23) is NCCL's 143.  The model encodings agree. */
        id->family = fam > 15 ? 15 + ((fam - 15) << 4) : fam;
        id->model = model;
    }
}

static void sysfs_cpu_fill(scan_ctx *c, tt_xml_node *cpu, int numaid)
{
    const cpu_ident *id = c->cpu_fill_arg;
    char p[PATH_MAX], map[1100];
    if (numaid >= 0) {
        scan_path(c, p, sizeof p, "/sys/devices/system/node/node%d/cpumap", numaid);
        if (scan_read_str(p, map, sizeof map) == 0 && map[0])
            tt_xml_set(cpu, "affinity", map);
        else
            scan_unknown(c, cpu, "affinity", "node%d/cpumap not readable", numaid);
    } else {
        scan_unknown(c, cpu, "affinity",
                     "devices report numa_node -1 (VM, or firmware without PCI locality): "
                     "no NUMA node, no affinity");
        scan_unknown(c, cpu, "numaid", "numa_node -1: the NUMA node of these devices is unknown");
    }
    if (id->arch[0])
        tt_xml_set(cpu, "arch", id->arch);
    else
        scan_unknown(c, cpu, "arch", "/proc/cpuinfo %s", id->have_cpuinfo ? "has no known CPU "
                                                                            "vendor field" : "not readable");
    if (id->vendor[0]) {
        tt_xml_set(cpu, "vendor", id->vendor);
        if (id->family >= 0) {
            tt_xml_setf(cpu, "familyid", "%d", id->family);
            tt_xml_setf(cpu, "modelid", "%d", id->model);
        } else {
            scan_unknown(c, cpu, "familyid", "/proc/cpuinfo has no cpu family");
        }
    }
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* NUMA node numbers under /sys/devices/system/node, sorted. */
static int list_numa(scan_ctx *c, int *out, int max)
{
    char p[PATH_MAX];
    DIR *d;
    struct dirent *e;
    int n = 0;
    scan_path(c, p, sizeof p, "/sys/devices/system/node");
    d = opendir(p);
    if (!d)
        return -1;
    while ((e = readdir(d)) && n < max) {
        long long v;
        if (strncmp(e->d_name, "node", 4) != 0 || tt_parse_ll(e->d_name + 4, &v) != TT_OK ||
            v < 0 || v > 4095)
            continue;
        out[n++] = (int)v;
    }
    tt_error_clear();
    closedir(d);
    qsort(out, (size_t)n, sizeof *out, cmp_int);
    return n;
}

/* ---------------- PCI ---------------- */

static long read_hex(const char *dir, const char *file)
{
    char p[PATH_MAX];
    long long v;
    scan_fmt(p, sizeof p, "%s/%s", dir, file);
    if (scan_read_ll(p, &v) || v < 0)
        return -1;
    return (long)v;
}

static void read_dev_info(scan_ctx *c, const char *absdir, const char *busid, scan_pci_info *in)
{
    char p[PATH_MAX], b[64];
    long long v;
    memset(in, 0, sizeof *in);
    scan_fmt(in->busid, sizeof in->busid, "%s", busid);
    in->cls = read_hex(absdir, "class");
    in->vendor = read_hex(absdir, "vendor");
    in->device = read_hex(absdir, "device");
    in->subvendor = read_hex(absdir, "subsystem_vendor");
    in->subdevice = read_hex(absdir, "subsystem_device");
    scan_fmt(p, sizeof p, "%s/max_link_speed", absdir);
    if (scan_read_str(p, in->max_speed, sizeof in->max_speed))
        in->max_speed[0] = '\0';
    scan_fmt(p, sizeof p, "%s/current_link_speed", absdir);
    if (scan_read_str(p, in->cur_speed, sizeof in->cur_speed))
        in->cur_speed[0] = '\0';
    scan_fmt(p, sizeof p, "%s/max_link_width", absdir);
    in->max_width = scan_read_ll(p, &v) ? -1 : (int)v;
    scan_fmt(p, sizeof p, "%s/current_link_width", absdir);
    in->cur_width = scan_read_ll(p, &v) ? -1 : (int)v;
    scan_fmt(p, sizeof p, "%s/numa_node", absdir);
    if (scan_read_ll(p, &v) == 0) {
        in->numa = (int)v;
        in->numa_known = 1;
    } else {
        in->numa = -1;
    }
    scan_fmt(p, sizeof p, "%s/local_cpulist", absdir);
    if (scan_read_str(p, b, sizeof b) == 0)
        scan_fmt(in->cpulist, sizeof in->cpulist, "%s", b);
    (void)c;
}

/* Fill a new pci element for chain[idx] of the kept device `arg`. */
static void sysfs_fill(scan_ctx *c, const char *busid, int idx, void *arg, tt_xml_node *pci)
{
    kept_dev *k = arg;
    char dir[PATH_MAX], up[PATH_MAX], p[PATH_MAX];
    scan_pci_info in;
    size_t i, cut = 0;
    int comp = -1;
    long long v;

    if (!k->devpath[0]) {
        /* no sysfs path: the device itself, read through /sys/bus/pci/devices */
        scan_path(c, dir, sizeof dir, "/sys/bus/pci/devices/%s", busid);
        read_dev_info(c, dir, busid, &in);
        in.up_state = -1;
        scan_fmt(in.up_busid, sizeof in.up_busid, "?");
        scan_pci_set_attrs(c, pci, &in);
        scan_unknown(c, pci, "parent", "no realpath under /sys/devices: parent unknown");
        return;
    }
    /* devpath = /sys/devices/pciDDDD:BB/<c0>/<c1>/...: cut after component idx */
    for (i = strlen("/sys/devices/"); k->devpath[i]; i++) {
        if (k->devpath[i] == '/') {
            if (comp == idx) {
                cut = i;
                break;
            }
            comp++;
        }
    }
    if (!cut)
        cut = strlen(k->devpath);
    scan_path(c, dir, sizeof dir, "%.*s", (int)cut, k->devpath);
    read_dev_info(c, dir, busid, &in);
    if (idx == 0) {
        in.up_state = 0; /* on the root bus: no upstream port */
    } else {
        scan_fmt(up, sizeof up, "%s", dir);
        *strrchr(up, '/') = '\0';
        scan_fmt(in.up_busid, sizeof in.up_busid, "%s", k->chain[idx - 1]);
        scan_fmt(p, sizeof p, "%s/max_link_speed", up);
        if (scan_read_str(p, in.up_speed, sizeof in.up_speed))
            in.up_speed[0] = '\0';
        scan_fmt(p, sizeof p, "%s/max_link_width", up);
        in.up_width = scan_read_ll(p, &v) ? -1 : (int)v;
        in.up_state = (in.up_speed[0] || in.up_width > 0) ? 1 : -1;
    }
    scan_pci_set_attrs(c, pci, &in);
}

static int cmp_kept(const void *a, const void *b)
{
    return strcmp(((const kept_dev *)a)->busid, ((const kept_dev *)b)->busid);
}

/* Resolve /sys/bus/pci/devices/<bdf> into hostbridge + BDF chain. */
static void resolve_chain(scan_ctx *c, kept_dev *k)
{
    char p[PATH_MAX], rp[PATH_MAX], tmp[PATH_MAX];
    size_t rl = strlen(c->root);
    char *save = NULL, *tok;
    int first = 1;

    k->n = 0;
    k->devpath[0] = k->hostbridge[0] = '\0';
    scan_path(c, p, sizeof p, "/sys/bus/pci/devices/%s", k->busid);
    if (!realpath(p, rp) || strncmp(rp, c->root, rl) != 0 ||
        strncmp(rp + rl, "/sys/devices/", 13) != 0) {
        scan_fmt(k->chain[0], sizeof k->chain[0], "%s", k->busid);
        k->n = 1;
        return;
    }
    scan_fmt(k->devpath, sizeof k->devpath, "%s", rp + rl);
    scan_fmt(tmp, sizeof tmp, "%s", rp + rl + 13);
    for (tok = strtok_r(tmp, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (first) {
            first = 0;
            if (!strncmp(tok, "pci", 3))
                scan_fmt(k->hostbridge, sizeof k->hostbridge, "%s", tok);
            else
                break;
            continue;
        }
        if (!scan_is_bdf(tok) || k->n >= SCAN_MAX_CHAIN)
            break;
        scan_fmt(k->chain[k->n++], sizeof k->chain[0], "%s", tok);
    }
    if (k->n == 0 || strcmp(k->chain[k->n - 1], k->busid) != 0) {
        /* odd path (virtual bus, VMD domain ...): keep the device alone */
        k->devpath[0] = '\0';
        scan_fmt(k->chain[0], sizeof k->chain[0], "%s", k->busid);
        k->n = 1;
    }
}

static int top_numa(scan_ctx *c, kept_dev *k)
{
    char p[PATH_MAX], dir[PATH_MAX];
    long long v;
    int top = SCAN_TREE_TOP(k->n), comp = -1;
    size_t i, cut = 0;
    if (!k->devpath[0]) {
        scan_path(c, p, sizeof p, "/sys/bus/pci/devices/%s/numa_node", k->busid);
        return scan_read_ll(p, &v) ? -1 : (int)v;
    }
    for (i = 13; k->devpath[i]; i++) {
        if (k->devpath[i] == '/') {
            if (comp == top) {
                cut = i;
                break;
            }
            comp++;
        }
    }
    if (!cut)
        cut = strlen(k->devpath);
    scan_path(c, dir, sizeof dir, "%.*s/numa_node", (int)cut, k->devpath);
    scan_fmt(p, sizeof p, "%s", dir);
    return scan_read_ll(p, &v) ? -1 : (int)v;
}

/* ---------------- NICs ---------------- */

/* "400 Gb/sec (4X NDR)" -> 400000 Mb/s; -1 unknown */
static long rate_mbps(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0 || strncmp(end, " Gb/sec", 7) != 0)
        return -1;
    return (long)(v * 1000 + 0.5);
}

static void guid_attr(scan_ctx *c, tt_xml_node *net, const char *attr, const char *file)
{
    char g[64], hex[40];
    size_t i, n = 0;
    if (scan_read_str(file, g, sizeof g)) {
        scan_unknown(c, net, attr, "%s not readable", strrchr(file, '/') + 1);
        return;
    }
    for (i = 0; g[i] && n + 1 < sizeof hex; i++)
        if (g[i] != ':')
            hex[n++] = g[i];
    hex[n] = '\0';
    /* NCCL writes uint64 ids with %#lx: no leading zeros */
    tt_xml_setf(net, attr, "0x%llx", strtoull(hex, NULL, 16));
}

/* the kernel driver bound to a device (the name its driver link points at: efa, gve, ena, mlx5_core, ...);
 * nothing when not readable: the attribute is an extra that tells the fabric (tune_fabric.c) */
static void driver_attr(tt_xml_node *net, const char *devdir)
{
    char p[PATH_MAX], t[PATH_MAX];
    scan_fmt(p, sizeof p, "%s/driver", devdir);
    ssize_t n = readlink(p, t, sizeof t - 1);
    if (n <= 0) return;
    t[n] = '\0';
    const char *b = strrchr(t, '/');
    b = b ? b + 1 : t;
    if (*b && strlen(b) < 64) tt_xml_set(net, TT_ATTR_DRIVER, b);
}

static void add_ib_ports(scan_ctx *c, kept_dev *k, const char *pcidir)
{
    char ibdir[PATH_MAX], p[PATH_MAX], v[128];
    DIR *d, *pd;
    struct dirent *e, *pe;
    char names[16][64];
    int nn = 0, i;

    scan_fmt(ibdir, sizeof ibdir, "%s/infiniband", pcidir);
    d = opendir(ibdir);
    if (!d)
        return;
    while ((e = readdir(d)) && nn < 16)
        if (e->d_name[0] != '.')
            scan_fmt(names[nn++], sizeof names[0], "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)nn, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (i = 0; i < nn; i++) {
        int ports[64], np = 0, j;
        tt_xml_node *nic = scan_nic_get(c, k->pci);
        scan_fmt(p, sizeof p, "%s/%s/ports", ibdir, names[i]);
        pd = opendir(p);
        if (!pd) {
            scan_unknown(c, nic, "net", "%s has no ports directory", names[i]);
            continue;
        }
        while ((pe = readdir(pd)) && np < 64)
            if (pe->d_name[0] != '.')
                ports[np++] = atoi(pe->d_name);
        closedir(pd);
        qsort(ports, (size_t)np, sizeof *ports, cmp_int);
        for (j = 0; j < np; j++) {
            tt_xml_node *net = tt_xml_node_new("net");
            long mbps;
            char *colon;
            if (!net || tt_xml_append(nic, net)) {
                tt_xml_node_free(net);
                continue;
            }
            k->has_ib = 1;
            c->probe->seen++;
            tt_xml_set(net, "name", names[i]);
            tt_xml_setf(net, "dev", "%d", scan_next_net_dev(c));
            tt_xml_setf(net, "port", "%d", ports[j]);
            scan_fmt(p, sizeof p, "%s/%s/ports/%d/rate", ibdir, names[i], ports[j]);
            if (scan_read_str(p, v, sizeof v) == 0 && (mbps = rate_mbps(v)) > 0)
                tt_xml_setf(net, "speed", "%ld", mbps);
            else
                scan_unknown(c, net, "speed", "ports/%d/rate not readable", ports[j]);
            scan_fmt(p, sizeof p, "%s/%s/sys_image_guid", ibdir, names[i]);
            guid_attr(c, net, "guid", p);
            scan_fmt(p, sizeof p, "%s/%s/ports/%d/link_layer", ibdir, names[i], ports[j]);
            if (scan_read_str(p, v, sizeof v) == 0)
                tt_xml_set(net, "link_layer", v);
            else
                scan_unknown(c, net, "link_layer", "ports/%d/link_layer not readable", ports[j]);
            scan_fmt(p, sizeof p, "%s/%s/ports/%d/state", ibdir, names[i], ports[j]);
            if (scan_read_str(p, v, sizeof v) == 0) {
                colon = strchr(v, ':'); /* "4: ACTIVE" */
                tt_xml_set(net, "state", colon ? colon + 1 + (colon[1] == ' ') : v);
            } else {
                scan_unknown(c, net, "state", "ports/%d/state not readable", ports[j]);
            }
            scan_fmt(p, sizeof p, "%s/%s/node_guid", ibdir, names[i]);
            guid_attr(c, net, "node_guid", p);
            driver_attr(net, pcidir);
        }
    }
}

static void set_socket_net(scan_ctx *c, tt_xml_node *net, const char *ifname)
{
    char p[PATH_MAX], v[64];
    long long x;
    tt_xml_set(net, "name", ifname);
    tt_xml_setf(net, "dev", "%d", scan_next_net_dev(c));
    tt_xml_set(net, "port", "0");
    scan_path(c, p, sizeof p, "/sys/class/net/%s/speed", ifname);
    if (scan_read_ll(p, &x) == 0 && x > 0)
        tt_xml_setf(net, "speed", "%lld", x);
    else
        scan_unknown(c, net, "speed", "/sys/class/net/%s/speed not readable or not positive "
                                      "(link down or virtual NIC)", ifname);
    scan_path(c, p, sizeof p, "/sys/class/net/%s/device", ifname);
    driver_attr(net, p);
    scan_path(c, p, sizeof p, "/sys/class/net/%s/type", ifname);
    if (scan_read_ll(p, &x) == 0)
        tt_xml_set(net, "link_layer", x == 32 ? "InfiniBand" : x == 1 ? "Ethernet" : "other");
    scan_path(c, p, sizeof p, "/sys/class/net/%s/operstate", ifname);
    if (scan_read_str(p, v, sizeof v) == 0)
        tt_xml_set(net, "state", v);
    else
        scan_unknown(c, net, "state", "operstate not readable");
    scan_path(c, p, sizeof p, "/sys/class/net/%s/mtu", ifname);
    if (scan_read_ll(p, &x) == 0)
        tt_xml_setf(net, "mtu", "%lld", x);
    else
        scan_unknown(c, net, "mtu", "mtu not readable");
    tt_xml_set(net, "ifname", ifname);
    /* NCCL's socket transport never does GPUDirect RDMA */
    tt_xml_set(net, "gdr", "0");
    c->probe->seen++;
}

static int list_dir_sorted(const char *dir, char names[][64], int max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) && n < max)
        if (e->d_name[0] != '.')
            scan_fmt(names[n++], 64, "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)n, 64, (int (*)(const void *, const void *))strcmp);
    return n;
}

/* Net interfaces go to the PCI function their device path passes through
 * last (so a virtio NIC sits under its virtio-net PCI function, as hwloc
 * shows it); an RDMA device's own interface names its port (ifname); other
 * PCI NICs get one socket <net> per interface; an interface with a device
 * outside every kept PCI function hangs from the first cpu, as NCCL puts
 * non-PCI NICs. */
typedef struct {
    char name[64];
    char dev[PATH_MAX]; /* root-relative realpath of <if>/device */
    int used;
} netif;

static void add_socket_nets(scan_ctx *c, kept_dev *ks, int nk)
{
    char (*names)[64] = calloc(SCAN_MAX_NETIFS, sizeof *names);
    netif *ifs;
    char p[PATH_MAX], rp[PATH_MAX];
    size_t rl = strlen(c->root);
    int n, nif = 0, i, j;

    if (!names)
        return;
    scan_path(c, p, sizeof p, "/sys/class/net");
    n = list_dir_sorted(p, names, SCAN_MAX_NETIFS);
    ifs = calloc((size_t)(n ? n : 1), sizeof *ifs);
    if (!ifs) {
        free(names);
        return;
    }
    for (i = 0; i < n; i++) {
        scan_path(c, p, sizeof p, "/sys/class/net/%s/device", names[i]);
        if (!realpath(p, rp) || strncmp(rp, c->root, rl) != 0)
            continue; /* virtual interface (lo, bridges, veth, ifb ...) */
        scan_fmt(ifs[nif].name, sizeof ifs[nif].name, "%s", names[i]);
        scan_fmt(ifs[nif].dev, sizeof ifs[nif].dev, "%s", rp + rl);
        nif++;
    }

    for (i = 0; i < nk; i++) {
        int nd = 0, first = -1;
        size_t dl;
        if (!scan_class_is_nic(ks[i].cls) || !ks[i].pci || !ks[i].devpath[0])
            continue;
        dl = strlen(ks[i].devpath);
        for (j = 0; j < nif; j++) {
            if (ifs[j].used || strncmp(ifs[j].dev, ks[i].devpath, dl) != 0 ||
                (ifs[j].dev[dl] != '\0' && ifs[j].dev[dl] != '/'))
                continue;
            ifs[j].used = 1;
            nd++;
            if (first < 0)
                first = j;
            if (!ks[i].has_ib) {
                tt_xml_node *nic = scan_nic_get(c, ks[i].pci), *net = tt_xml_node_new("net");
                if (!nic || !net || tt_xml_append(nic, net)) {
                    tt_xml_node_free(net);
                    continue;
                }
                set_socket_net(c, net, ifs[j].name);
            }
        }
        if (ks[i].has_ib) {
            /* RoCE / IPoIB interface of a one-port RDMA device: name it on the port */
            tt_xml_node *nic = tt_xml_first_child(ks[i].pci, "nic");
            tt_xml_node *net = nic ? tt_xml_first_child(nic, "net") : NULL;
            if (nd == 1 && net && !tt_xml_next_sibling(net, "net")) {
                long long mtu;
                tt_xml_set(net, "ifname", ifs[first].name);
                scan_path(c, p, sizeof p, "/sys/class/net/%s/mtu", ifs[first].name);
                if (scan_read_ll(p, &mtu) == 0)
                    tt_xml_setf(net, "netdev_mtu", "%lld", mtu);
            }
        } else if (nd == 0) {
            scan_unknown(c, ks[i].pci, "nic", "network controller without a net interface or "
                                              "RDMA device (no driver bound?)");
        }
    }

    for (j = 0; j < nif; j++) {
        tt_xml_node *cpu, *nic, *net;
        if (ifs[j].used || scan_find_net(c, ifs[j].name))
            continue;
        cpu = tt_xml_first_child(c->sys, "cpu");
        if (!cpu)
            cpu = scan_cpu_get(c, -1, NULL);
        nic = cpu ? tt_xml_node_new("nic") : NULL;
        net = nic ? tt_xml_node_new("net") : NULL;
        if (!net || tt_xml_append(nic, net) || tt_xml_append(cpu, nic)) {
            tt_xml_node_free(net);
            tt_xml_node_free(nic);
            continue;
        }
        set_socket_net(c, net, ifs[j].name);
        tt_xml_set(net, "device", ifs[j].dev);
    }
    free(ifs);
    free(names);
}

/* ---------------- probe ---------------- */

tt_probe_state scan_probe_sysfs(scan_ctx *c)
{
    char p[PATH_MAX];
    DIR *d;
    struct dirent *e;
    kept_dev *ks = NULL;
    int nk = 0, capk = 0, i, nnuma, ngpu = 0, nnic = 0, nnvs = 0;
    int numa[SCAN_MAX_NUMA];
    cpu_ident *id = calloc(1, sizeof *id);

    if (!id) {
        scan_note(c, "out of memory");
        return TT_PROBE_FAILED;
    }

    scan_path(c, p, sizeof p, "/sys/bus/pci/devices");
    d = opendir(p);
    if (!d) {
        scan_note(c, "%s: %s", p, strerror(errno));
        /* CPUs can still be described from the node directory */
    }
    read_cpuinfo(c, id);
    /* later probes may add cpu numaid -1 (GPU outside the tree): keep filling */
    c->cpu_fill = sysfs_cpu_fill;
    c->cpu_fill_arg = id;
    c->owned = id; /* freed by the orchestrator */

    nnuma = list_numa(c, numa, SCAN_MAX_NUMA);
    for (i = 0; i < nnuma; i++)
        scan_cpu_get(c, numa[i], NULL);

    while (d && (e = readdir(d))) {
        char dir[PATH_MAX], phys[PATH_MAX];
        struct stat st;
        long cls, ven;
        if (!scan_is_bdf(e->d_name))
            continue;
        scan_fmt(dir, sizeof dir, "%s/%s", p, e->d_name);
        cls = read_hex(dir, "class");
        ven = read_hex(dir, "vendor");
        if (!scan_class_is_gpu(cls, ven) && !scan_class_is_nic(cls) && !scan_class_is_nvswitch(cls))
            continue;
        scan_fmt(phys, sizeof phys, "%s/physfn", dir);
        if (scan_class_is_nic(cls) && lstat(phys, &st) == 0)
            continue; /* SR-IOV virtual function: NCCL merges VFs into the PF */
        if (nk == capk) {
            kept_dev *nks;
            capk = capk ? 2 * capk : 32;
            nks = realloc(ks, (size_t)capk * sizeof *ks);
            if (!nks)
                break;
            ks = nks;
        }
        memset(&ks[nk], 0, sizeof ks[nk]);
        scan_fmt(ks[nk].busid, sizeof ks[nk].busid, "%s", e->d_name);
        ks[nk].cls = cls;
        ks[nk].vendor = ven;
        nk++;
    }
    if (d)
        closedir(d);
    if (nk)
        qsort(ks, (size_t)nk, sizeof *ks, cmp_kept);

    for (i = 0; i < nk; i++) {
        kept_dev *k = &ks[i];
        char dir[PATH_MAX];
        resolve_chain(c, k);
        k->pci = scan_tree_place(c, k->hostbridge, k->chain, k->n, top_numa(c, k), sysfs_fill, k);
        if (!k->pci)
            continue;
        c->probe->seen++;
        if (scan_class_is_gpu(k->cls, k->vendor))
            ngpu++;
        else if (scan_class_is_nvswitch(k->cls))
            nnvs++;
        else {
            nnic++;
            scan_path(c, dir, sizeof dir, "/sys/bus/pci/devices/%s", k->busid);
            add_ib_ports(c, k, dir);
        }
    }
    add_socket_nets(c, ks, nk);
    free(ks);

    if (!tt_xml_first_child(c->sys, "cpu"))
        scan_cpu_get(c, -1, NULL); /* no NUMA directory and no device: still one CPU */
    if (nnuma <= 0)
        scan_unknown(c, c->sys, "numa", "/sys/devices/system/node not readable: no NUMA nodes");
    c->tree_done = d != NULL; /* else hwloc may still build the PCI tree */
    if (!d && nnuma <= 0)
        return TT_PROBE_FAILED;
    if (!c->probe->note[0])
        scan_note(c, "%d NUMA node(s), %d GPU(s), %d NIC(s), %d NVSwitch(es) on PCI", nnuma < 0 ? 0 : nnuma,
                  ngpu, nnic, nnvs);
    return d ? TT_PROBE_OK : TT_PROBE_PARTIAL;
}
