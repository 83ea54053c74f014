/*
 * topo_scan_probes.c - the probe table the live scan walks (in this order),
 * and the exclusion list that turns probes off (tt_scan_options.exclude and
 * $TOPOTUNE_SCAN_EXCLUDE, comma-separated probe names).
 *
 * Adding a probe (docs/contributing.md): one file topo_scan_<name>.c with
 * `tt_probe_state scan_probe_<name>(scan_ctx *c)`, its prototype in
 * topo_scan_internal.h and one line below.
 */
#include "topo_scan_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const scan_probe_def scan_probe_table[] = {
    /* name     run               needs               in an offline (hwloc XML) scan */
    {"sysfs", scan_probe_sysfs, SCAN_NEEDS_ROOT, SCAN_OFFLINE_OFF},    /* CPU/PCI/NIC tree */
    {"gdr", scan_probe_gdr, SCAN_NEEDS_ROOT, SCAN_OFFLINE_UNLISTED},   /* peer-memory module */
    {"hwloc", scan_probe_hwloc, SCAN_NEEDS_MACHINE, SCAN_OFFLINE_READS}, /* tree when sysfs could not */
    {"nvml", scan_probe_nvml, SCAN_NEEDS_DEVICES, SCAN_OFFLINE_OFF},   /* GPUs, NVLinks, NVSwitches */
    {"cuda", scan_probe_cuda, SCAN_NEEDS_DEVICES, SCAN_OFFLINE_OFF},   /* SM, P2P matrix, dma-buf */
    {"ibv", scan_probe_ibv, SCAN_NEEDS_DEVICES, SCAN_OFFLINE_OFF},     /* RDMA ports */
    {NULL, NULL, 0, 0}};

const char *tt_scan_probe_name(int i)
{
    if (i < 0)
        return NULL;
    for (int k = 0; scan_probe_table[k].name; k++)
        if (k == i)
            return scan_probe_table[k].name;
    return NULL;
}

static int probe_index(const char *name, size_t len)
{
    for (int k = 0; scan_probe_table[k].name; k++)
        if (strlen(scan_probe_table[k].name) == len && !strncmp(scan_probe_table[k].name, name, len))
            return k;
    return -1;
}

static tt_status add_list(const char *list, const char *what, unsigned *mask)
{
    const char *s = list;
    if (!s)
        return TT_OK;
    while (*s) {
        while (*s == ',' || *s == ' ' || *s == '\t')
            s++;
        size_t n = strcspn(s, ", \t");
        if (!n)
            break;
        int k = probe_index(s, n);
        if (k < 0) {
            char valid[128] = "";
            size_t m = 0;
            for (int j = 0; scan_probe_table[j].name && m < sizeof valid; j++)
                m += (size_t)snprintf(valid + m, sizeof valid - m, "%s%s", j ? ", " : "",
                                      scan_probe_table[j].name);
            return tt_error_set(TT_ERR_INVALID, "%s: unknown probe '%.*s' (valid: %s)", what, (int)n, s,
                                valid);
        }
        *mask |= 1u << k;
        s += n;
    }
    return TT_OK;
}

tt_status scan_probe_exclusions(const char *opt_list, unsigned *mask)
{
    tt_status st;
    *mask = 0;
    if ((st = add_list(opt_list, "scan exclude list", mask)) != TT_OK)
        return st;
    return add_list(tt_setting("TOPOTUNE_SCAN_EXCLUDE"), "TOPOTUNE_SCAN_EXCLUDE", mask);
}
