/*
 * topo_const.c - every bandwidth constant of the topology model.
 *
 * Values marked "NCCL" are NCCL's own numbers (reference nccl-topo.md 2.4,
 * 2.6, 3.5); values marked "model assumption" are ours.  docs/topology-model.md
 * lists them all with their source.  All bandwidths are GB/s per direction.
 */
#include "tt_topo.h"
#include "topo_internal.h"

#include <stdlib.h>
#include <string.h>

/* NCCL: per-link NVLink bandwidth by compute capability (sm = major*10+minor). */
double tt_nvlink_bw_per_link(int sm)
{
    if (sm >= 100) return 40.1; /* Blackwell */
    if (sm >= 90) return 20.6;  /* Hopper */
    if (sm == 86) return 12.0;  /* GA10x NVLink bridge */
    if (sm >= 80) return 20.0;  /* Ampere */
    if (sm >= 70) return 20.0;  /* Volta */
    if (sm >= 60) return 18.0;  /* Pascal */
    return 20.0;                /* unknown (sm 0) or older: NCCL's default */
}

/* Model assumption: NCCL has no xGMI constant (RCCL carries xGMI as NVLink).
 * 50 GB/s per link per direction is the nominal rate of an MI250X Infinity
 * Fabric link (100 GB/s bidirectional) and about 78% of an MI300X link
 * (64 GB/s per direction) - i.e. roughly the same "usable fraction of nominal"
 * that NCCL applies to NVLink (H100: 20.6 of 25 GB/s). */
double tt_xgmi_bw_per_link(void) { return 50.0; }

/* NCCL's per-lane table for PCIe generations, in units of 100 Mb/s per lane
 * (so bw_GBps = width * units / 80). */
static const struct {
    double gts;
    double units;
} pci_gen[] = {
    {2.5, 15.0}, {5.0, 30.0}, {8.0, 60.0}, {16.0, 120.0}, {32.0, 240.0}, {64.0, 480.0},
};
#define PCI_FALLBACK_UNITS 60.0 /* NCCL: unknown speed counts as Gen3 */
#define PCI_FALLBACK_WIDTH 16   /* NCCL: unknown width counts as x16 */

double tt_pci_bw(const char *link_speed, int width, int *known)
{
    double units = PCI_FALLBACK_UNITS;
    int ok = 1;
    int found = 0;
    if (link_speed && *link_speed) {
        char *end = NULL;
        double gts = strtod(link_speed, &end);
        if (end != link_speed) {
            for (size_t i = 0; i < sizeof pci_gen / sizeof pci_gen[0]; i++) {
                double d = gts - pci_gen[i].gts;
                if (d > -1e-6 && d < 1e-6) {
                    units = pci_gen[i].units;
                    found = 1;
                    break;
                }
            }
        }
    }
    if (!found)
        ok = 0;
    if (width <= 0) {
        width = PCI_FALLBACK_WIDTH;
        ok = 0;
    }
    if (known)
        *known = ok;
    return (double)width * units / 80.0;
}

static int streq_trim(const char *a, const char *b)
{
    /* compare ignoring leading/trailing spaces ("  Shanghai  ") */
    size_t la, lb;
    while (*a == ' ') a++;
    while (*b == ' ') b++;
    la = strlen(a);
    lb = strlen(b);
    while (la && a[la - 1] == ' ') la--;
    while (lb && b[lb - 1] == ' ') lb--;
    return la == lb && strncmp(a, b, la) == 0;
}

int tt_topo__cpu_known(const char *arch, const char *vendor)
{
    if (vendor && *vendor &&
        (streq_trim(vendor, "GenuineIntel") || streq_trim(vendor, "AuthenticAMD") ||
         streq_trim(vendor, "CentaurHauls") || streq_trim(vendor, "Shanghai")))
        return 1;
    if (arch && (strcmp(arch, "ppc64") == 0 || strcmp(arch, "ppc64le") == 0 ||
                 strcmp(arch, "arm64") == 0 || strcmp(arch, "aarch64") == 0))
        return 1;
    return 0;
}

double tt_inter_cpu_bw(const char *arch, const char *vendor, int family, int model)
{
    if (!arch) arch = "";
    if (!vendor) vendor = "";
    if (strcmp(arch, "ppc64") == 0 || strcmp(arch, "ppc64le") == 0)
        return 32.0; /* NCCL P9_BW */
    if (strcmp(arch, "arm64") == 0 || strcmp(arch, "aarch64") == 0)
        return 6.0;  /* NCCL ARM_BW */
    if (streq_trim(vendor, "GenuineIntel")) {
        if (family == 6 && model >= 0xCF) return 40.0; /* Emerald Rapids and later */
        if (family == 6 && model >= 0x8F) return 22.0; /* Sapphire Rapids */
        if (family == 6 && model >= 0x55) return 10.0; /* Skylake */
        return 6.0;                                    /* Broadwell / other */
    }
    if (streq_trim(vendor, "AuthenticAMD"))
        return 16.0;
    if (streq_trim(vendor, "CentaurHauls") || streq_trim(vendor, "Shanghai")) {
        if (family == 7 && model == 0x5B) return 9.0; /* Zhaoxin Yongfeng */
        return 6.0;                                   /* Zhaoxin ZPI */
    }
    /* Model assumption: unknown vendor (Hygon, missing attributes ...) gets the
     * lowest inter-socket bandwidth NCCL uses for any CPU.  NCCL itself would
     * use LOC_BW (5000 GB/s) here, which makes SYS paths look free. */
    return TT_INTER_CPU_BW_UNKNOWN;
}

/* NCCL: net speed (Mb/s) / 8000 -> GB/s; speed <= 0 means 10 Gb/s. */
double tt_net_bw(double speed_mbps)
{
    if (!(speed_mbps > 0))
        speed_mbps = TT_NET_DEFAULT_SPEED_MBPS;
    return speed_mbps / 8000.0;
}
