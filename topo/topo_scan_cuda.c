/*
 * topo_scan_cuda.c - what the CUDA driver says about each GPU and GPU pair,
 * loaded at run time with dlopen("libcuda.so.1").
 *
 * Per device: PCI bus id, SM major/minor, GPUDirect RDMA support (attribute
 * 116, NCCL's gpu@gdr), dma-buf support (124, one way NICs reach GPU memory),
 * CUDA ordinal (cuda_dev, which differs from NVML's index unless
 * CUDA_DEVICE_ORDER=PCI_BUS_ID).  Per ordered pair: cuDeviceCanAccessPeer and
 * cuDeviceGetP2PAttribute (access, native atomics, performance rank) ->
 * <p2p target access atomics perf_rank>.  When NVML did not run, the <gpu>
 * element is made here, with dev = the GPU's position in PCI bus order (how
 * NVML numbers GPUs), recorded as such.
 */
#include "topo_scan_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;

#define CU_OK 0
#define CU_ATTR_CC_MAJOR 75
#define CU_ATTR_CC_MINOR 76
#define CU_ATTR_GPU_DIRECT_RDMA_SUPPORTED 116
#define CU_ATTR_DMA_BUF_SUPPORTED 124
#define CU_P2P_PERFORMANCE_RANK 1
#define CU_P2P_ACCESS_SUPPORTED 2
#define CU_P2P_NATIVE_ATOMIC_SUPPORTED 3
#define CU_MAX_GPUS 64

typedef struct {
    void *h;
    CUresult (*init)(unsigned);
    CUresult (*count)(int *);
    CUresult (*get)(CUdevice *, int);
    CUresult (*attr)(int *, int, CUdevice);
    CUresult (*busid)(char *, int, CUdevice);
    CUresult (*name)(char *, int, CUdevice);
    CUresult (*mem)(size_t *, CUdevice);
    CUresult (*can)(int *, CUdevice, CUdevice);
    CUresult (*p2p)(int *, int, CUdevice, CUdevice);
    CUresult (*errstr)(CUresult, const char **);
    CUresult (*version)(int *);
} cu_api;

static const char *cuerr(const cu_api *a, CUresult r)
{
    static __thread char buf[32];
    const char *s = NULL;
    if (a->errstr && a->errstr(r, &s) == CU_OK && s)
        return s;
    snprintf(buf, sizeof buf, "CUDA error %d", r);
    return buf;
}

typedef struct {
    CUdevice d;
    int ordinal;
    char bus[24];
    tt_xml_node *gpu;
} cu_dev;

static int cmp_bus(const void *x, const void *y)
{
    return strcmp(((const cu_dev *)x)->bus, ((const cu_dev *)y)->bus);
}

tt_probe_state scan_probe_cuda(scan_ctx *c)
{
    cu_api a;
    CUresult r;
    int n = 0, i, j, v, dmabuf_all = 1, dmabuf_known = 1, drvver = 0;
    cu_dev ds[CU_MAX_GPUS];

    memset(&a, 0, sizeof a);
    a.h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a.h) {
        scan_note(c, "libcuda.so.1 not loadable (%s)", dlerror());
        return TT_PROBE_UNAVAILABLE;
    }
    *(void **)&a.init = dlsym(a.h, "cuInit");
    *(void **)&a.count = dlsym(a.h, "cuDeviceGetCount");
    *(void **)&a.get = dlsym(a.h, "cuDeviceGet");
    *(void **)&a.attr = dlsym(a.h, "cuDeviceGetAttribute");
    *(void **)&a.busid = dlsym(a.h, "cuDeviceGetPCIBusId");
    *(void **)&a.name = dlsym(a.h, "cuDeviceGetName");
    *(void **)&a.mem = dlsym(a.h, "cuDeviceTotalMem_v2");
    *(void **)&a.can = dlsym(a.h, "cuDeviceCanAccessPeer");
    *(void **)&a.p2p = dlsym(a.h, "cuDeviceGetP2PAttribute");
    *(void **)&a.errstr = dlsym(a.h, "cuGetErrorString");
    *(void **)&a.version = dlsym(a.h, "cuDriverGetVersion");
    if (!a.init || !a.count || !a.get || !a.attr || !a.busid) {
        scan_note(c, "libcuda.so.1 lacks cuInit/cuDeviceGet*/cuDeviceGetPCIBusId");
        dlclose(a.h);
        return TT_PROBE_UNAVAILABLE;
    }
    r = a.init(0);
    if (r != CU_OK) {
        scan_note(c, "cuInit failed: %s", cuerr(&a, r));
        dlclose(a.h);
        return TT_PROBE_UNAVAILABLE;
    }
    r = a.count(&n);
    if (r != CU_OK || n <= 0) {
        scan_note(c, "no CUDA device (%s)", r != CU_OK ? cuerr(&a, r) : "count 0");
        dlclose(a.h);
        return TT_PROBE_UNAVAILABLE;
    }
    if (n > CU_MAX_GPUS)
        n = CU_MAX_GPUS;
    if (a.version)
        a.version(&drvver);

    for (i = 0; i < n; i++) {
        char raw[64];
        memset(&ds[i], 0, sizeof ds[i]);
        ds[i].ordinal = i;
        if (a.get(&ds[i].d, i) != CU_OK || a.busid(raw, sizeof raw, ds[i].d) != CU_OK ||
            scan_busid_norm(raw, ds[i].bus, sizeof ds[i].bus))
            snprintf(ds[i].bus, sizeof ds[i].bus, "~%02d", i); /* sorts last, never matches */
    }
    /* PCI bus order = NVML's numbering, used for dev when NVML did not run */
    qsort(ds, (size_t)n, sizeof *ds, cmp_bus);

    for (i = 0; i < n; i++) {
        cu_dev *d = &ds[i];
        tt_xml_node *pci, *gpu;
        int maj = -1, min = -1;
        if (d->bus[0] == '~') {
            scan_unknown(c, NULL, "gpu", "CUDA device %d: no PCI bus id", d->ordinal);
            continue;
        }
        pci = scan_find_pci(c, d->bus);
        if (!pci) {
            tt_xml_node *cpu = scan_cpu_get(c, -1, NULL);
            pci = cpu ? tt_xml_node_new("pci") : NULL;
            if (!pci || scan_insert_sorted(cpu, pci)) {
                tt_xml_node_free(pci);
                continue;
            }
            tt_xml_set(pci, "busid", d->bus);
            tt_xml_set(pci, "class", "0x03");
            scan_unknown(c, pci, "class", "GPU not found in the PCI tree; class is NCCL's default 0x03");
        }
        gpu = tt_xml_first_child(pci, "gpu");
        if (!gpu) {
            gpu = tt_xml_node_new("gpu");
            if (!gpu || tt_xml_insert(pci, 0, gpu)) {
                tt_xml_node_free(gpu);
                continue;
            }
            tt_xml_setf(gpu, "dev", "%d", i);
            tt_xml_setf(gpu, "rank", "%d", i);
            scan_unknown(c, gpu, "dev", "NVML did not run: dev is this GPU's position in PCI bus "
                                        "order (NVML's numbering)");
            c->ngpu_props++;
        }
        d->gpu = gpu;
        c->probe->seen++;
        tt_xml_setf(gpu, "cuda_dev", "%d", d->ordinal);
        if (a.attr(&maj, CU_ATTR_CC_MAJOR, d->d) == CU_OK &&
            a.attr(&min, CU_ATTR_CC_MINOR, d->d) == CU_OK) {
            if (!tt_xml_get(gpu, "sm"))
                tt_xml_setf(gpu, "sm", "%d", maj * 10 + min);
        } else if (!tt_xml_get(gpu, "sm")) {
            scan_unknown(c, gpu, "sm", "cuDeviceGetAttribute(COMPUTE_CAPABILITY) failed");
        }
        if (a.attr(&v, CU_ATTR_GPU_DIRECT_RDMA_SUPPORTED, d->d) == CU_OK)
            tt_xml_setf(gpu, "gdr", "%d", v ? 1 : 0);
        else
            scan_unknown(c, gpu, "gdr", "cuDeviceGetAttribute(GPU_DIRECT_RDMA_SUPPORTED) failed");
        if (a.attr(&v, CU_ATTR_DMA_BUF_SUPPORTED, d->d) == CU_OK) {
            tt_xml_setf(gpu, "dmabuf", "%d", v ? 1 : 0);
            if (!v)
                dmabuf_all = 0;
        } else {
            dmabuf_known = 0;
        }
        if (!tt_xml_get(gpu, "name") && a.name) {
            char s[128];
            if (a.name(s, sizeof s, d->d) == CU_OK)
                tt_xml_set(gpu, "name", s);
        }
        if (!tt_xml_get(gpu, "memory_mb") && a.mem) {
            size_t bytes;
            if (a.mem(&bytes, d->d) == CU_OK)
                tt_xml_setf(gpu, "memory_mb", "%zu", bytes >> 20);
        }
    }
    c->dmabuf = dmabuf_known ? dmabuf_all : -1;

    for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) {
            tt_xml_node *p;
            int can = -1, at = -1, rank = -1;
            if (i == j || !ds[i].gpu || !ds[j].gpu)
                continue;
            p = tt_xml_find(ds[i].gpu, "p2p", "target", ds[j].bus);
            if (!p) {
                p = tt_xml_node_new("p2p");
                if (!p || tt_xml_append(ds[i].gpu, p)) {
                    tt_xml_node_free(p);
                    continue;
                }
                tt_xml_set(p, "target", ds[j].bus);
            }
            if (a.can && a.can(&can, ds[i].d, ds[j].d) == CU_OK)
                tt_xml_setf(p, "access", "%d", can ? 1 : 0);
            else
                scan_unknown(c, p, "access", "cuDeviceCanAccessPeer failed");
            if (a.p2p && a.p2p(&at, CU_P2P_NATIVE_ATOMIC_SUPPORTED, ds[i].d, ds[j].d) == CU_OK &&
                !tt_xml_get(p, "atomics"))
                tt_xml_setf(p, "atomics", "%d", at ? 1 : 0);
            if (a.p2p && a.p2p(&rank, CU_P2P_PERFORMANCE_RANK, ds[i].d, ds[j].d) == CU_OK)
                tt_xml_setf(p, "perf_rank", "%d", rank);
        }
    }
    scan_note(c, "%d CUDA device(s), driver API %d", n, drvver);
    /* libcuda stays loaded: unloading an initialised driver is not safe */
    return TT_PROBE_OK;
}
