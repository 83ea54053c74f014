/*
 * topo_scan_nvml.c - GPUs, NVLinks, NVSwitches, C2C and the P2P status
 * matrix from NVML, loaded at run time with dlopen("libnvidia-ml.so.1") so
 * the tools need no NVIDIA library to build or run.
 *
 * Per GPU: name, UUID, memory, PCI bus id, CUDA compute capability.  Per
 * NVLink (as many as NCCL probes for the arch: 4/6/12/18): P2P capability,
 * state (field 165 NVLINK_GET_STATE on sm>=90, nvmlDeviceGetNvLinkState
 * before), version, remote PCI bus id; links are aggregated per target into
 * <nvlink target count tclass version down>.  The target's class comes from
 * sysfs (0x068000 = NVSwitch); a target NVML cannot name, or whose class is
 * unreadable, is assumed to be an NVSwitch, as NCCL does, and recorded.
 * C2C: fields 170/171/172 -> <c2c bw(MB/s per link) count>.
 * Affinity (ours, on <gpu>): the GPU's CPUs and NUMA node(s) from sysfs when
 * its <pci> has a numa_node >= 0 (and a local_cpulist), else the driver's view
 * (nvmlDeviceGetCpuAffinity, nvmlDeviceGetMemoryAffinity scope NODE, what
 * `nvidia-smi topo -m` prints on a VM), each with its source; gpu_numa_id is
 * nvmlDeviceGetNumaNodeId (newer NVML; the GPU's memory as a NUMA node).
 * Only the ABI subset used is declared here (values from NVML's nvml.h).
 */
#include "topo_scan_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device;
    unsigned int pciDeviceId;    /* device << 16 | vendor */
    unsigned int pciSubSystemId; /* subdevice << 16 | subvendor */
    char busId[32];
} nv_pci_info;

typedef struct {
    unsigned long long total, free, used;
} nv_memory;

typedef union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    signed int siVal;
    unsigned short usVal;
} nv_value;

typedef struct {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    int valueType;
    nvmlReturn_t nvmlReturn;
    nv_value value;
} nv_field;

#define NV_SUCCESS 0
#define NV_FI_NVLINK_GET_STATE 165
#define NV_FI_C2C_LINK_COUNT 170
#define NV_FI_C2C_LINK_GET_STATUS 171
#define NV_FI_C2C_LINK_GET_MAX_BW 172
#define NV_NVLINK_CAP_P2P_SUPPORTED 0
#define NV_P2P_CAPS_READ 0
#define NV_P2P_CAPS_WRITE 1
#define NV_P2P_CAPS_ATOMICS 3
#define NV_P2P_STATUS_OK 0
#define NV_MAX_GPUS 64
#define NV_MAX_LINKS 18
#define NV_AFFINITY_SCOPE_NODE 0 /* nvmlAffinityScope_t NVML_AFFINITY_SCOPE_NODE */
#define NV_CPUSET_WORDS 64       /* unsigned longs: 4096 CPUs on LP64 */
#define NV_NODESET_WORDS 4

typedef struct {
    void *h;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*err)(nvmlReturn_t);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*mem)(nvmlDevice_t, nv_memory *);
    nvmlReturn_t (*pci)(nvmlDevice_t, nv_pci_info *);
    nvmlReturn_t (*cc)(nvmlDevice_t, int *, int *);
    nvmlReturn_t (*nvl_cap)(nvmlDevice_t, unsigned int, int, unsigned int *);
    nvmlReturn_t (*nvl_state)(nvmlDevice_t, unsigned int, int *);
    nvmlReturn_t (*nvl_version)(nvmlDevice_t, unsigned int, unsigned int *);
    nvmlReturn_t (*nvl_remote)(nvmlDevice_t, unsigned int, nv_pci_info *);
    nvmlReturn_t (*fields)(nvmlDevice_t, int, nv_field *);
    nvmlReturn_t (*p2p)(nvmlDevice_t, nvmlDevice_t, int, int *);
    nvmlReturn_t (*driver)(char *, unsigned int);
    nvmlReturn_t (*cpu_aff)(nvmlDevice_t, unsigned int, unsigned long *);
    nvmlReturn_t (*mem_aff)(nvmlDevice_t, unsigned int, unsigned long *, int);
    nvmlReturn_t (*numa_id)(nvmlDevice_t, unsigned int *);
} nv_api;

static void *sym(nv_api *a, const char *name)
{
    return dlsym(a->h, name);
}

static const char *nverr(const nv_api *a, nvmlReturn_t r)
{
    static __thread char buf[32];
    if (a->err)
        return a->err(r);
    snprintf(buf, sizeof buf, "NVML error %d", r);
    return buf;
}

typedef struct {
    char target[24];
    int count, down;
    unsigned version;
    int have_version;
} nv_target;

/* Link count NCCL probes per arch (docs/scan.md). */
static int max_links(int sm)
{
    return sm < 60 ? 0 : sm < 70 ? 4 : sm < 80 ? 6 : sm < 90 ? 12 : NV_MAX_LINKS;
}

static long sysfs_class(scan_ctx *c, const char *busid)
{
    char p[PATH_MAX];
    long long v;
    scan_path(c, p, sizeof p, "/sys/bus/pci/devices/%s/class", busid);
    return scan_read_ll(p, &v) ? -1 : (long)v;
}

static void add_nvswitch(scan_ctx *c, const char *busid, int visible, int links)
{
    tt_xml_node *n = tt_xml_find(c->sys, "nvswitch", "busid", busid);
    long long old = 0;
    if (!n) {
        n = tt_xml_node_new("nvswitch");
        if (!n || tt_xml_append(c->sys, n)) {
            tt_xml_node_free(n);
            return;
        }
        tt_xml_set(n, "busid", busid);
        tt_xml_setf(n, "visible", "%d", visible);
    }
    if (tt_xml_get_ll(c->doc, n, "links", &old) != TT_OK)
        old = 0;
    tt_error_clear();
    tt_xml_setf(n, "links", "%lld", old + links);
}

static tt_xml_node *gpu_pci(scan_ctx *c, const char *busid, const nv_pci_info *pi)
{
    tt_xml_node *pci = scan_find_pci(c, busid), *cpu;
    if (pci)
        return pci;
    /* not in the tree (no sysfs, container): NCCL hangs it from cpu numaid -1 */
    cpu = scan_cpu_get(c, -1, NULL);
    pci = cpu ? tt_xml_node_new("pci") : NULL;
    if (!pci || scan_insert_sorted(cpu, pci)) {
        tt_xml_node_free(pci);
        return NULL;
    }
    tt_xml_set(pci, "busid", busid);
    tt_xml_set(pci, "class", "0x03"); /* NCCL's default class for a GPU pci node */
    tt_xml_setf(pci, "vendor", "0x%04x", pi->pciDeviceId & 0xffff);
    tt_xml_setf(pci, "device", "0x%04x", pi->pciDeviceId >> 16);
    tt_xml_setf(pci, "subsystem_vendor", "0x%04x", pi->pciSubSystemId & 0xffff);
    tt_xml_setf(pci, "subsystem_device", "0x%04x", pi->pciSubSystemId >> 16);
    scan_unknown(c, pci, "class", "GPU not found in the PCI tree; class is NCCL's default 0x03, ids from NVML");
    scan_unknown(c, pci, "link_speed", "GPU not found in the PCI tree");
    return pci;
}

static tt_xml_node *gpu_elem(tt_xml_node *pci)
{
    tt_xml_node *g = tt_xml_first_child(pci, "gpu");
    if (g)
        return g;
    g = tt_xml_node_new("gpu");
    if (!g)
        return NULL;
    if (tt_xml_insert(pci, 0, g)) {
        tt_xml_node_free(g);
        return NULL;
    }
    return g;
}

static void scan_links(scan_ctx *c, nv_api *a, nvmlDevice_t d, tt_xml_node *gpu, int sm)
{
    nv_target t[NV_MAX_LINKS];
    int nt = 0, l, i, lost = 0, nlinks = max_links(sm);

    for (l = 0; l < nlinks; l++) {
        unsigned cap = 0, ver = 0;
        int active = 0, have_ver = 0;
        nv_pci_info rp;
        char target[24];
        if (!a->nvl_cap || a->nvl_cap(d, (unsigned)l, NV_NVLINK_CAP_P2P_SUPPORTED, &cap) != NV_SUCCESS ||
            !cap)
            continue; /* link absent or not usable for P2P */
        if (sm >= 90 && a->fields) {
            nv_field f;
            memset(&f, 0, sizeof f);
            f.fieldId = NV_FI_NVLINK_GET_STATE;
            f.scopeId = (unsigned)l;
            if (a->fields(d, 1, &f) == NV_SUCCESS && f.nvmlReturn == NV_SUCCESS)
                active = f.value.uiVal == 1;
        } else if (a->nvl_state) {
            int st = 0;
            if (a->nvl_state(d, (unsigned)l, &st) == NV_SUCCESS)
                active = st == 1;
        }
        if (a->nvl_version && a->nvl_version(d, (unsigned)l, &ver) == NV_SUCCESS)
            have_ver = 1;
        memset(&rp, 0, sizeof rp);
        if (!a->nvl_remote || a->nvl_remote(d, (unsigned)l, &rp) != NV_SUCCESS ||
            scan_busid_norm(rp.busId[0] ? rp.busId : rp.busIdLegacy, target, sizeof target)) {
            if (!active) {
                lost++;
                continue;
            }
            /* NCCL's sentinel for a remote NVML cannot name (VMs, NVL72 trays) */
            snprintf(target, sizeof target, "fffffff:ff:ff.0");
        }
        for (i = 0; i < nt; i++)
            if (!strcmp(t[i].target, target))
                break;
        if (i == nt) {
            memset(&t[nt], 0, sizeof t[nt]);
            snprintf(t[nt].target, sizeof t[nt].target, "%s", target);
            nt++;
        }
        if (active)
            t[i].count++;
        else
            t[i].down++;
        if (have_ver) {
            t[i].version = ver;
            t[i].have_version = 1;
        }
    }
    for (i = 0; i < nt; i++) {
        tt_xml_node *n = tt_xml_node_new("nvlink");
        long cls = strncmp(t[i].target, "fffffff", 7) ? sysfs_class(c, t[i].target) : -1;
        long tclass = cls;
        if (!n || tt_xml_append(gpu, n)) {
            tt_xml_node_free(n);
            continue;
        }
        tt_xml_set(n, "target", t[i].target);
        tt_xml_setf(n, "count", "%d", t[i].count);
        if (cls < 0 || (cls >> 8) == 0x0680) {
            if (cls < 0) {
                tclass = 0x068000;
                scan_unknown(c, n, "tclass", "class of %s not readable: NVSwitch assumed (NCCL's rule)",
                             t[i].target);
            }
            add_nvswitch(c, t[i].target, cls >= 0, t[i].count);
        }
        tt_xml_setf(n, "tclass", "0x%06lx", tclass);
        if (t[i].have_version)
            tt_xml_setf(n, "version", "%u", t[i].version);
        else
            scan_unknown(c, n, "version", "nvmlDeviceGetNvLinkVersion failed");
        tt_xml_setf(n, "down", "%d", t[i].down);
    }
    if (lost)
        scan_unknown(c, gpu, "nvlink", "%d NVLink(s) down with no remote NVML could name", lost);
}

static void scan_c2c(scan_ctx *c, nv_api *a, nvmlDevice_t d, tt_xml_node *gpu)
{
    nv_field f;
    unsigned n, l, active = 0, bw = 0;
    if (!a->fields)
        return;
    memset(&f, 0, sizeof f);
    f.fieldId = NV_FI_C2C_LINK_COUNT;
    if (a->fields(d, 1, &f) != NV_SUCCESS || f.nvmlReturn != NV_SUCCESS)
        return; /* no C2C on this GPU (field not supported) */
    n = f.value.uiVal;
    for (l = 0; l < n && l < 64; l++) {
        nv_field g[2];
        memset(g, 0, sizeof g);
        g[0].fieldId = NV_FI_C2C_LINK_GET_STATUS;
        g[0].scopeId = l;
        g[1].fieldId = NV_FI_C2C_LINK_GET_MAX_BW;
        g[1].scopeId = l;
        if (a->fields(d, 2, g) != NV_SUCCESS || g[0].nvmlReturn != NV_SUCCESS ||
            g[0].value.uiVal != 1)
            continue;
        active++;
        if (g[1].nvmlReturn == NV_SUCCESS)
            bw = g[1].value.uiVal;
    }
    if (active) {
        tt_xml_node *x = tt_xml_node_new("c2c");
        if (!x || tt_xml_append(gpu, x)) {
            tt_xml_node_free(x);
            return;
        }
        tt_xml_setf(x, "bw", "%u", bw); /* MB/s per link, NCCL's unit */
        tt_xml_setf(x, "count", "%u", active);
    }
}

/* NVML bit set (unsigned longs, least significant first) -> "0-15,32";
 * 0 when no bit is set or the list does not fit. */
static int set_to_list(const unsigned long *set, unsigned nwords, char *buf, size_t sz)
{
    const unsigned bits = (unsigned)(8 * sizeof *set);
    unsigned i, start = 0, on, prev = 0;
    size_t len = 0;
    int any = 0, n;

    buf[0] = '\0';
    for (i = 0; i <= nwords * bits; i++) {
        on = i < nwords * bits && ((set[i / bits] >> (i % bits)) & 1ul);
        if (on && !prev)
            start = i;
        if (!on && prev) {
            if (start == i - 1)
                n = snprintf(buf + len, sz - len, "%s%u", len ? "," : "", start);
            else
                n = snprintf(buf + len, sz - len, "%s%u-%u", len ? "," : "", start, i - 1);
            if (n < 0 || (size_t)n >= sz - len) {
                buf[0] = '\0';
                return 0;
            }
            len += (size_t)n;
            any = 1;
        }
        prev = on;
    }
    return any;
}

/* The GPU's CPU and NUMA affinity (see the header comment); returns 1 when
 * a value came from NVML. */
static int scan_affinity(scan_ctx *c, nv_api *a, nvmlDevice_t d, tt_xml_node *pci, tt_xml_node *gpu)
{
    unsigned long set[NV_CPUSET_WORDS];
    char list[1024];
    const char *cpus = tt_xml_get(pci, "local_cpulist");
    long long numa = -1;
    unsigned id = 0;
    int from_nvml = 0;
    nvmlReturn_t r;

    if (tt_xml_get_ll(c->doc, pci, "numa_node", &numa) != TT_OK)
        numa = -1;
    tt_error_clear();
    if (numa >= 0 && cpus && *cpus) {
        tt_xml_set(gpu, "cpu_affinity", cpus);
        tt_xml_set(gpu, "cpu_affinity_source", "sysfs");
    } else {
        memset(set, 0, sizeof set);
        r = a->cpu_aff ? a->cpu_aff(d, NV_CPUSET_WORDS, set) : -1;
        if (r == NV_SUCCESS && set_to_list(set, NV_CPUSET_WORDS, list, sizeof list)) {
            tt_xml_set(gpu, "cpu_affinity", list);
            tt_xml_set(gpu, "cpu_affinity_source", "nvml");
            from_nvml = 1;
        } else {
            scan_unknown(c, gpu, "cpu_affinity", "sysfs has no NUMA node/local_cpulist for the GPU and %s",
                         !a->cpu_aff ? "NVML lacks nvmlDeviceGetCpuAffinity"
                         : r == NV_SUCCESS ? "nvmlDeviceGetCpuAffinity returned no CPU"
                                           : "nvmlDeviceGetCpuAffinity failed");
        }
    }
    if (numa >= 0) {
        tt_xml_setf(gpu, "numa_affinity", "%lld", numa);
        tt_xml_set(gpu, "numa_affinity_source", "sysfs");
    } else {
        memset(set, 0, sizeof set);
        r = a->mem_aff ? a->mem_aff(d, NV_NODESET_WORDS, set, NV_AFFINITY_SCOPE_NODE) : -1;
        if (r == NV_SUCCESS && set_to_list(set, NV_NODESET_WORDS, list, sizeof list)) {
            tt_xml_set(gpu, "numa_affinity", list);
            tt_xml_set(gpu, "numa_affinity_source", "nvml");
            from_nvml = 1;
        } else {
            scan_unknown(c, gpu, "numa_affinity", "sysfs numa_node is -1 and %s",
                         !a->mem_aff ? "NVML lacks nvmlDeviceGetMemoryAffinity"
                         : r == NV_SUCCESS ? "nvmlDeviceGetMemoryAffinity returned no node"
                                           : "nvmlDeviceGetMemoryAffinity failed");
        }
    }
    /* the GPU's own memory as a NUMA node (coherent C2C systems); absent when
     * the driver has none (nvidia-smi's "GPU NUMA ID" N/A) */
    if (a->numa_id && a->numa_id(d, &id) == NV_SUCCESS && id < 0x7fffffffu)
        tt_xml_setf(gpu, "gpu_numa_id", "%u", id);
    return from_nvml;
}

tt_probe_state scan_probe_nvml(scan_ctx *c)
{
    nv_api a;
    nvmlReturn_t r;
    unsigned n = 0, i, j, naff = 0;
    nvmlDevice_t dev[NV_MAX_GPUS];
    tt_xml_node *gpus[NV_MAX_GPUS];
    char bus[NV_MAX_GPUS][24], drv[96] = "";

    memset(&a, 0, sizeof a);
    a.h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a.h) {
        scan_note(c, "libnvidia-ml.so.1 not loadable (%s)", dlerror());
        return TT_PROBE_UNAVAILABLE;
    }
    *(void **)&a.init = sym(&a, "nvmlInit_v2");
    *(void **)&a.shutdown = sym(&a, "nvmlShutdown");
    *(void **)&a.err = sym(&a, "nvmlErrorString");
    *(void **)&a.count = sym(&a, "nvmlDeviceGetCount_v2");
    *(void **)&a.handle = sym(&a, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&a.name = sym(&a, "nvmlDeviceGetName");
    *(void **)&a.uuid = sym(&a, "nvmlDeviceGetUUID");
    *(void **)&a.mem = sym(&a, "nvmlDeviceGetMemoryInfo");
    *(void **)&a.pci = sym(&a, "nvmlDeviceGetPciInfo_v3");
    *(void **)&a.cc = sym(&a, "nvmlDeviceGetCudaComputeCapability");
    *(void **)&a.nvl_cap = sym(&a, "nvmlDeviceGetNvLinkCapability");
    *(void **)&a.nvl_state = sym(&a, "nvmlDeviceGetNvLinkState");
    *(void **)&a.nvl_version = sym(&a, "nvmlDeviceGetNvLinkVersion");
    *(void **)&a.nvl_remote = sym(&a, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    *(void **)&a.fields = sym(&a, "nvmlDeviceGetFieldValues");
    *(void **)&a.p2p = sym(&a, "nvmlDeviceGetP2PStatus");
    *(void **)&a.driver = sym(&a, "nvmlSystemGetDriverVersion");
    *(void **)&a.cpu_aff = sym(&a, "nvmlDeviceGetCpuAffinity");
    *(void **)&a.mem_aff = sym(&a, "nvmlDeviceGetMemoryAffinity");
    *(void **)&a.numa_id = sym(&a, "nvmlDeviceGetNumaNodeId");
    if (!a.init || !a.count || !a.handle || !a.pci) {
        scan_note(c, "libnvidia-ml.so.1 lacks nvmlInit_v2/DeviceGetCount_v2/HandleByIndex_v2/PciInfo_v3");
        dlclose(a.h);
        return TT_PROBE_UNAVAILABLE;
    }
    r = a.init();
    if (r != NV_SUCCESS) {
        scan_note(c, "nvmlInit failed: %s", nverr(&a, r));
        dlclose(a.h);
        return TT_PROBE_UNAVAILABLE;
    }
    if (a.driver)
        a.driver(drv, sizeof drv);
    r = a.count(&n);
    if (r != NV_SUCCESS || n == 0) {
        scan_note(c, "no GPU (%s)", r != NV_SUCCESS ? nverr(&a, r) : "device count 0");
        a.shutdown();
        dlclose(a.h);
        return TT_PROBE_UNAVAILABLE;
    }
    if (n > NV_MAX_GPUS)
        n = NV_MAX_GPUS;

    for (i = 0; i < n; i++) {
        nv_pci_info pi;
        char s[128];
        nv_memory m;
        int maj = 0, min = 0, sm = -1;
        tt_xml_node *pci, *gpu;
        gpus[i] = NULL;
        bus[i][0] = '\0';
        if (a.handle(i, &dev[i]) != NV_SUCCESS) {
            dev[i] = NULL;
            scan_unknown(c, NULL, "gpu", "NVML device %u: no handle", i);
            continue;
        }
        memset(&pi, 0, sizeof pi);
        if (a.pci(dev[i], &pi) != NV_SUCCESS ||
            scan_busid_norm(pi.busId[0] ? pi.busId : pi.busIdLegacy, bus[i], sizeof bus[i])) {
            scan_unknown(c, NULL, "gpu", "NVML device %u: no PCI bus id", i);
            continue;
        }
        pci = gpu_pci(c, bus[i], &pi);
        gpu = pci ? gpu_elem(pci) : NULL;
        if (!gpu)
            continue;
        gpus[i] = gpu;
        c->probe->seen++;
        c->ngpu_props++;
        tt_xml_setf(gpu, "dev", "%u", i);
        if (a.cc && a.cc(dev[i], &maj, &min) == NV_SUCCESS) {
            sm = maj * 10 + min;
            tt_xml_setf(gpu, "sm", "%d", sm);
        } else {
            scan_unknown(c, gpu, "sm", "nvmlDeviceGetCudaComputeCapability failed");
        }
        /* one rank per GPU, numbered as NVML numbers GPUs (what NCCL's dump of a
         * one-process-per-GPU job shows); NCCL resets rank when it loads a file */
        tt_xml_setf(gpu, "rank", "%u", i);
        if (a.uuid && a.uuid(dev[i], s, sizeof s) == NV_SUCCESS)
            tt_xml_set(gpu, "uuid", s);
        else
            scan_unknown(c, gpu, "uuid", "nvmlDeviceGetUUID failed");
        if (a.name && a.name(dev[i], s, sizeof s) == NV_SUCCESS)
            tt_xml_set(gpu, "name", s);
        else
            scan_unknown(c, gpu, "name", "nvmlDeviceGetName failed");
        if (a.mem && a.mem(dev[i], &m) == NV_SUCCESS)
            tt_xml_setf(gpu, "memory_mb", "%llu", m.total >> 20);
        else
            scan_unknown(c, gpu, "memory_mb", "nvmlDeviceGetMemoryInfo failed");
        naff += (unsigned)scan_affinity(c, &a, dev[i], pci, gpu);
        if (sm >= 0)
            scan_links(c, &a, dev[i], gpu, sm);
        if (sm >= 90)
            scan_c2c(c, &a, dev[i], gpu);
    }

    /* P2P status matrix (NCCL's sanity check before using P2P) */
    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) {
            int rd = -1, wr = -1, at = -1;
            tt_xml_node *p;
            if (i == j || !gpus[i] || !gpus[j] || !a.p2p)
                continue;
            if (a.p2p(dev[i], dev[j], NV_P2P_CAPS_READ, &rd) != NV_SUCCESS)
                rd = -1;
            if (a.p2p(dev[i], dev[j], NV_P2P_CAPS_WRITE, &wr) != NV_SUCCESS)
                wr = -1;
            if (a.p2p(dev[i], dev[j], NV_P2P_CAPS_ATOMICS, &at) != NV_SUCCESS)
                at = -1;
            p = tt_xml_node_new("p2p");
            if (!p || tt_xml_append(gpus[i], p)) {
                tt_xml_node_free(p);
                continue;
            }
            tt_xml_set(p, "target", bus[j]);
            if (rd >= 0)
                tt_xml_setf(p, "read", "%d", rd == NV_P2P_STATUS_OK);
            else
                scan_unknown(c, p, "read", "nvmlDeviceGetP2PStatus(READ) failed");
            if (wr >= 0)
                tt_xml_setf(p, "write", "%d", wr == NV_P2P_STATUS_OK);
            else
                scan_unknown(c, p, "write", "nvmlDeviceGetP2PStatus(WRITE) failed");
            if (at >= 0)
                tt_xml_setf(p, "atomics", "%d", at == NV_P2P_STATUS_OK);
        }
    }
    if (naff)
        scan_note(c, "%u GPU(s), driver %s; CPU/NUMA affinity of %u from NVML (sysfs has no NUMA node)", n,
                  drv[0] ? drv : "?", naff);
    else
        scan_note(c, "%u GPU(s), driver %s", n, drv[0] ? drv : "?");
    if (drv[0])
        tt_xml_set(c->sys, "driver_version", drv);
    a.shutdown();
    dlclose(a.h);
    return TT_PROBE_OK;
}
