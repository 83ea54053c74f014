/*
 * topo_scan_probes.c - the probe table the live scan walks, its run order (each probe after
 * the probes its `after` field names), and the exclusion list that turns probes off (tt_scan_options.exclude and
 * $TOPOTUNE_SCAN_EXCLUDE, comma-separated probe names).
 *
 * Adding a probe (docs/contributing.md): one file topo_scan_<name>.c with
 * `tt_probe_state scan_probe_<name>(scan_ctx *c)`, its prototype in
 * topo_scan_internal.h and one line below naming the probes it must run after.
 */
#include "topo_scan_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The run order is set by `after` alone (the probes a probe needs to have run first: the tree
 * builders before the probes that hang devices on the tree); probes that do not depend on each
 * other are reported in the order of this table. */
const scan_probe_def scan_probe_table[] = {
    /* name     run               needs               in an offline (hwloc XML) scan  after */
    {"sysfs", scan_probe_sysfs, SCAN_NEEDS_ROOT, SCAN_OFFLINE_OFF, ""},               /* CPU/PCI/NIC tree */
    {"gdr", scan_probe_gdr, SCAN_NEEDS_ROOT, SCAN_OFFLINE_UNLISTED, ""},              /* peer-memory module */
    {"hwloc", scan_probe_hwloc, SCAN_NEEDS_MACHINE, SCAN_OFFLINE_READS, "sysfs"},     /* tree when sysfs could not */
    {"nvml", scan_probe_nvml, SCAN_NEEDS_DEVICES, SCAN_OFFLINE_OFF, "sysfs,hwloc"},   /* GPUs, NVLinks, NVSwitches */
    {"cuda", scan_probe_cuda, SCAN_NEEDS_DEVICES, SCAN_OFFLINE_OFF, "sysfs,hwloc,nvml"}, /* SM, P2P matrix, dma-buf */
    {"ibv", scan_probe_ibv, SCAN_NEEDS_DEVICES, SCAN_OFFLINE_OFF, "sysfs,hwloc"},     /* RDMA ports */
    {NULL, NULL, 0, 0, NULL}};

int scan_probe_count(void)
{
    int n = 0;
    while (scan_probe_table[n].name) n++;
    return n;
}

const char *tt_scan_probe_name(int i)
{
    int n = scan_probe_count();
    if (i < 0 || i >= n)
        return NULL;
    int *order = calloc((size_t)n, sizeof *order);
    const char *name = order && scan_probe_order(order) == TT_OK ? scan_probe_table[order[i]].name : NULL;
    free(order);
    return name;
}

static int probe_index(const char *name, size_t len)
{
    for (int k = 0; scan_probe_table[k].name; k++)
        if (strlen(scan_probe_table[k].name) == len && !strncmp(scan_probe_table[k].name, name, len))
            return k;
    return -1;
}

/* 1 when `name` is in the comma-separated `list` */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = list; s && *s; s += strcspn(s, ","), s += *s == ',')
        if (strcspn(s, ",") == n && !strncmp(s, name, n)) return 1;
    return 0;
}

tt_status scan_probe_order(int *order)
{
    int n = scan_probe_count(), placed = 0;
    unsigned char *done = calloc((size_t)n + 1, 1);
    if (!done) return tt_error_set(TT_ERR_NOMEM, "scan: out of memory");
    for (int k = 0; k < n; k++)
        for (const char *a = scan_probe_table[k].after; a && *a; a += strcspn(a, ","), a += *a == ',')
            if (probe_index(a, strcspn(a, ",")) < 0) {
                free(done);
                return tt_error_set(TT_ERR_INTERNAL, "scan: probe %s runs after an unknown probe '%.*s'",
                                    scan_probe_table[k].name, (int)strcspn(a, ","), a);
            }
    while (placed < n) {
        int next = -1;
        for (int k = 0; k < n && next < 0; k++) {
            if (done[k]) continue;
            int ready = 1;
            for (int j = 0; j < n && ready; j++)
                if (!done[j] && in_list(scan_probe_table[k].after, scan_probe_table[j].name)) ready = 0;
            if (ready) next = k;
        }
        if (next < 0) {
            free(done);
            return tt_error_set(TT_ERR_INTERNAL, "scan: the probes' `after` lists form a circle");
        }
        done[next] = 1;
        order[placed++] = next;
    }
    free(done);
    return TT_OK;
}

static tt_status add_list(const char *list, const char *what, unsigned char *excluded)
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
        excluded[k] = 1;
        s += n;
    }
    return TT_OK;
}

tt_status scan_probe_exclusions(const char *opt_list, unsigned char *excluded)
{
    tt_status st;
    memset(excluded, 0, (size_t)scan_probe_count());
    if ((st = add_list(opt_list, "scan exclude list", excluded)) != TT_OK)
        return st;
    return add_list(tt_setting("TOPOTUNE_SCAN_EXCLUDE"), "TOPOTUNE_SCAN_EXCLUDE", excluded);
}
