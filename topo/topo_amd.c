/*
 * topo_amd.c - what the model assumes about AMD GPUs in RCCL's dialect, and
 * the unit of a NIC speed whose producer did not write Mb/s.
 *
 * xGMI (AMD Infinity Fabric) bandwidth per link, GB/s per direction, from AMD's
 * public documents (docs/topology-model.md lists them as model assumptions):
 *   MI100  (CDNA,  gfx908): ROCm docs "AMD Instinct MI100 microarchitecture":
 *          Infinity Fabric links between GPUs at 23 GT/s, x16 -> 46 GB/s.
 *   MI200 / MI250 / MI250X (CDNA 2, gfx90a): ROCm docs "AMD Instinct MI250
 *          microarchitecture": 25 GT/s, x16 -> 50 GB/s peak per link
 *          (datasheets: 100 GB/s per link, both directions together).
 *   MI50 / MI60 (Vega 20, GCN 5, gfx906): AMD's launch of the MI50/MI60 (Nov 2018):
 *          two Infinity Fabric links per GPU give 200 GB/s peer-to-peer, both
 *          directions together -> 50 GB/s per link per direction.
 *   MI300X / MI300A / MI325X (CDNA 3, gfx940/941/942): MI300X datasheet: 7
 *          Infinity Fabric links, 128 GB/s peak per link both directions
 *          (896 GB/s aggregate) -> 64 GB/s per direction.
 * The value is the nominal peak per direction (NCCL's NVLink constants are
 * below nominal; RCCL's are its own and not used here).
 *
 * RCCL's `sm` is HIP's major*10+minor of the gfx target, not a CUDA compute
 * capability; the NCCL-derived tables indexed by compute capability (channel
 * speeds, LL128, latencies) use the NVIDIA class of the same link era:
 * CDNA 3 -> 90 (Hopper class), CDNA 2 / CDNA -> 80 (Ampere class), Vega 20
 * (2018) -> 70 (Volta class), any other AMD GPU (RDNA, unknown) -> 80.  Model
 * assumption.
 *
 * `gcn` comes in two spellings: HIP's gcnArchName ("gfx90a:sramecc+:xnack-")
 * and, from older RCCL, the number HIP's deprecated gcnArch gave: 906, 908,
 * 910 (= gfx90a: a is 10), 940, 941, 942.  Both, and a bare "90a", name the
 * same generation.
 */
#include "tt_topo.h"
#include "topo_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *gfx;        /* gfx target, without the "gfx" */
    unsigned devices[6];    /* PCI device ids (vendor 0x1002), 0-terminated */
    const char *name;
    double xgmi_gbps;
    int cc;
} amd_gen;

static const amd_gen amd_gens[] = {
    {"942", {0x74a0, 0x74a1, 0x74a5, 0x74a9, 0x74b5, 0}, "MI300 series (CDNA 3)", 64.0, 90},
    {"941", {0}, "MI300 series (CDNA 3)", 64.0, 90},
    {"940", {0}, "MI300 series (CDNA 3)", 64.0, 90},
    {"90a", {0x7408, 0x740c, 0x740f, 0x7410, 0}, "MI200 series (CDNA 2: MI210/MI250/MI250X)", 50.0, 80},
    {"908", {0x738c, 0x738e, 0}, "MI100 (CDNA)", 46.0, 80},
    {"906", {0x66a0, 0x66a1, 0}, "MI50/MI60 (Vega 20)", 50.0, 70},
};
#define NGENS (sizeof amd_gens / sizeof amd_gens[0])

/* The gfx target of a gcn value without "gfx" and feature suffixes, lower
 * case, in out (4 bytes at least); "" when it is none. */
static void gfx_target(const char *gcn, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    if (!strncasecmp(gcn, "gfx", 3))
        gcn += 3;
    while (gcn[k] && gcn[k] != ':' && k + 1 < n) {
        out[k] = (char)(gcn[k] >= 'A' && gcn[k] <= 'Z' ? gcn[k] - 'A' + 'a' : gcn[k]);
        k++;
    }
    out[k] = 0;
    if (!strcmp(out, "910")) /* gcnArch's number for gfx90a */
        strcpy(out, "90a");
}

int tt_amd_gpu_model(const char *gcn, unsigned pci_device, tt_amd_model *out)
{
    char target[16];
    const amd_gen *g = NULL;
    size_t i;
    int j;
    memset(out, 0, sizeof *out);
    if (gcn && *gcn) {
        gfx_target(gcn, target, sizeof target);
        for (i = 0; i < NGENS && !g; i++)
            if (!strcmp(target, amd_gens[i].gfx))
                g = &amd_gens[i];
        if (g)
            out->from = "gcn";
    }
    for (i = 0; i < NGENS && !g && pci_device; i++)
        for (j = 0; j < 6 && amd_gens[i].devices[j]; j++)
            if (amd_gens[i].devices[j] == pci_device) {
                g = &amd_gens[i];
                out->from = "pci device id";
            }
    if (!g) {
        out->name = "unknown AMD GPU";
        out->xgmi_gbps = tt_xgmi_bw_per_link();
        out->cc = 80;
        out->from = "default";
        return 0;
    }
    out->name = g->name;
    out->xgmi_gbps = g->xgmi_gbps;
    out->cc = g->cc;
    return 1;
}

/* Largest port speed believed to be in Mb/s: 10 Tb/s (no port is faster). */
#define NET_MAX_MBPS 1e7

double tt_net_speed_mbps(double raw, const char **unit)
{
    double v = raw;
    int k = 0;
    if (unit)
        *unit = "Mb/s";
    if (!(raw > NET_MAX_MBPS))
        return raw;
    /* Another producer's unit: Kb/s (Slingshot "cxi" ports through libfabric write
     * 200 Gb/s as 200000000) or b/s.  Scale by 1000 until it is a plausible Mb/s. */
    while (v > NET_MAX_MBPS && k < 2) {
        v /= 1000.0;
        k++;
    }
    if (v > NET_MAX_MBPS || v < 1.0) {
        if (unit)
            *unit = NULL;
        return -1;
    }
    if (unit)
        *unit = k == 1 ? "kb/s" : "b/s";
    return v;
}
