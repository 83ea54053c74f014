/*
 * topo_scan_tree.c - builds the NCCL-shaped CPU/PCI tree for the scan probes
 * (sysfs and hwloc feed it the same way, so both give the same XML shape).
 *
 * NCCL's shape (docs/scan.md, reference nccl-topo.md 2.3): walking up from a
 * device, every other PCI level is kept - device, switch upstream port, next
 * upstream port... - so root ports and switch downstream ports never appear,
 * and the top kept level hangs from the <cpu> of its numa_node.  Children of
 * a <pci>/<cpu> are ordered by busid, as NCCL writes them.
 */
#include "topo_scan_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int numaid_of(const tt_xml_node *cpu)
{
    const char *v = tt_xml_get(cpu, "numaid");
    return v ? atoi(v) : -1;
}

tt_xml_node *scan_cpu_get(scan_ctx *c, int numaid, int *created)
{
    tt_xml_node *x, *cpu;
    int i, pos;
    if (created)
        *created = 0;
    for (x = tt_xml_first_child(c->sys, "cpu"); x; x = tt_xml_next_sibling(x, "cpu"))
        if (numaid_of(x) == numaid)
            return x;
    cpu = tt_xml_node_new("cpu");
    if (!cpu)
        return NULL;
    tt_xml_setf(cpu, "numaid", "%d", numaid);
    /* ascending numaid, -1 (unknown) after the known ones, before non-cpu children */
    pos = c->sys->nchildren;
    for (i = 0; i < c->sys->nchildren; i++) {
        tt_xml_node *ch = c->sys->children[i];
        if (strcmp(ch->name, "cpu") != 0) {
            pos = i;
            break;
        }
        if (numaid >= 0 && (numaid_of(ch) > numaid || numaid_of(ch) < 0)) {
            pos = i;
            break;
        }
    }
    if (tt_xml_insert(c->sys, pos, cpu) != TT_OK) {
        tt_xml_node_free(cpu);
        return NULL;
    }
    if (created)
        *created = 1;
    if (c->cpu_fill)
        c->cpu_fill(c, cpu, numaid);
    return cpu;
}

tt_xml_node *scan_find_pci(scan_ctx *c, const char *busid)
{
    return tt_xml_find(c->sys, "pci", "busid", busid);
}

tt_status scan_insert_sorted(tt_xml_node *parent, tt_xml_node *child)
{
    const char *b = tt_xml_get(child, "busid");
    int i;
    if (b && !strcmp(child->name, "pci")) {
        for (i = 0; i < parent->nchildren; i++) {
            tt_xml_node *ch = parent->children[i];
            const char *cb = tt_xml_get(ch, "busid");
            if (!strcmp(ch->name, "pci") && cb && strcmp(cb, b) > 0)
                return tt_xml_insert(parent, i, child);
            if (!strcmp(ch->name, "nic") || !strcmp(ch->name, "unknown"))
                return tt_xml_insert(parent, i, child); /* pci before nic/unknown */
        }
    }
    return tt_xml_append(parent, child);
}

tt_xml_node *scan_tree_place(scan_ctx *c, const char *hostbridge, char chain[][16], int n,
                             int numaid, scan_fill_fn fill, void *arg)
{
    tt_xml_node *parent, *node = NULL;
    int idx;
    if (n <= 0 || n > SCAN_MAX_CHAIN)
        return NULL;
    parent = scan_cpu_get(c, numaid, NULL);
    if (!parent)
        return NULL;
    for (idx = SCAN_TREE_TOP(n); idx < n; idx += 2) {
        node = scan_find_pci(c, chain[idx]);
        if (!node) {
            node = tt_xml_node_new("pci");
            if (!node)
                return NULL;
            tt_xml_set(node, "busid", chain[idx]);
            if (scan_insert_sorted(parent, node) != TT_OK) {
                tt_xml_node_free(node);
                return NULL;
            }
            if (fill)
                fill(c, chain[idx], idx, arg, node);
            if (idx == SCAN_TREE_TOP(n) && hostbridge && hostbridge[0])
                tt_xml_set(node, "hostbridge", hostbridge);
        }
        parent = node;
    }
    return node;
}

/* GT/s of a sysfs/NVML link speed string ("32.0 GT/s PCIe", "8 GT/s"); <0 unknown. */
static double speed_gts(const char *s)
{
    char *end;
    double v;
    if (!s || !s[0])
        return -1;
    v = strtod(s, &end);
    if (end == s || v <= 0 || strncmp(end, " GT/s", 5) != 0)
        return -1;
    return v;
}

void scan_pci_set_attrs(scan_ctx *c, tt_xml_node *pci, const scan_pci_info *in)
{
    static const char *idn[4] = {"vendor", "device", "subsystem_vendor", "subsystem_device"};
    long ids[4];
    double ds, us;
    int i;

    ids[0] = in->vendor;
    ids[1] = in->device;
    ids[2] = in->subvendor;
    ids[3] = in->subdevice;
    if (in->cls >= 0)
        tt_xml_setf(pci, "class", "0x%06lx", in->cls);
    else
        scan_unknown(c, pci, "class", "PCI class not readable");
    for (i = 0; i < 4; i++) {
        if (ids[i] >= 0)
            tt_xml_setf(pci, idn[i], "0x%04lx", ids[i]);
        else
            scan_unknown(c, pci, idn[i], "PCI id not readable");
    }

    if (in->why) {
        /* the source has none of these (hwloc): one reason for all */
        static const char *na[] = {"link_speed", "link_width", "cur_link_speed", "cur_link_width",
                                   "numa_node"};
        for (i = 0; i < 5; i++)
            scan_unknown(c, pci, na[i], "%s", in->why);
        /* NCCL needs both attributes present; "" is what NCCL itself writes for
         * an unreadable value (it then assumes Gen3 / x16) */
        tt_xml_set(pci, "link_speed", "");
        tt_xml_set(pci, "link_width", "");
        return;
    }
    /* NCCL's link_speed/link_width: the slower of the device's and its
     * upstream port's maximum (sysfs max_link_*), not the trained value. */
    ds = speed_gts(in->max_speed);
    if (ds < 0) {
        tt_xml_set(pci, "link_speed", ""); /* NCCL's own value for unreadable: loads, means Gen3 */
        scan_unknown(c, pci, "link_speed", "max_link_speed not readable%s%s",
                     in->max_speed[0] ? ": " : "", in->max_speed);
    } else if (in->up_state == 1 && (us = speed_gts(in->up_speed)) >= 0 && us < ds) {
        tt_xml_set(pci, "link_speed", in->up_speed);
    } else {
        tt_xml_set(pci, "link_speed", in->max_speed);
        if (in->up_state == 1 && speed_gts(in->up_speed) < 0)
            scan_unknown(c, pci, "link_speed",
                         "upstream port %s max_link_speed not readable; device's own maximum used",
                         in->up_busid);
    }
    if (in->max_width <= 0) {
        tt_xml_set(pci, "link_width", ""); /* NCCL's own value for unreadable: loads, means x16 */
        scan_unknown(c, pci, "link_width", "max_link_width not readable");
    } else if (in->up_state == 1 && in->up_width > 0 && in->up_width < in->max_width) {
        tt_xml_setf(pci, "link_width", "%d", in->up_width);
    } else {
        tt_xml_setf(pci, "link_width", "%d", in->max_width);
        if (in->up_state == 1 && in->up_width <= 0)
            scan_unknown(c, pci, "link_width",
                         "upstream port %s max_link_width not readable; device's own maximum used",
                         in->up_busid);
    }
    if (in->up_state == -1) {
        scan_unknown(c, pci, "upstream_link",
                     "upstream port %s has no max_link_speed/width (emulated bridge?); "
                     "link_speed/link_width are the device's own maximum",
                     in->up_busid);
    }

    /* ours: the device's own maximum and what the link trained at */
    if (in->max_speed[0] && speed_gts(in->max_speed) >= 0)
        tt_xml_set(pci, "max_link_speed", in->max_speed);
    if (in->max_width > 0)
        tt_xml_setf(pci, "max_link_width", "%d", in->max_width);
    if (speed_gts(in->cur_speed) >= 0)
        tt_xml_set(pci, "cur_link_speed", in->cur_speed);
    else
        scan_unknown(c, pci, "cur_link_speed", "current_link_speed not readable%s%s",
                     in->cur_speed[0] ? ": " : "", in->cur_speed);
    if (in->cur_width > 0)
        tt_xml_setf(pci, "cur_link_width", "%d", in->cur_width);
    else
        scan_unknown(c, pci, "cur_link_width", "current_link_width not readable");
    if (in->numa_known)
        tt_xml_setf(pci, "numa_node", "%d", in->numa);
    else
        scan_unknown(c, pci, "numa_node", "numa_node not readable");
    if (in->cpulist[0])
        tt_xml_set(pci, "local_cpulist", in->cpulist);
}

tt_xml_node *scan_nic_get(scan_ctx *c, tt_xml_node *parent)
{
    tt_xml_node *nic = tt_xml_first_child(parent, "nic");
    if (nic)
        return nic;
    nic = tt_xml_node_new("nic");
    if (!nic)
        return NULL;
    if (tt_xml_append(parent, nic) != TT_OK) {
        tt_xml_node_free(nic);
        return NULL;
    }
    return nic;
}

tt_xml_node *scan_find_net(scan_ctx *c, const char *name)
{
    return tt_xml_find(c->sys, "net", "name", name);
}

int scan_next_net_dev(scan_ctx *c)
{
    int max = -1;
    const tt_xml_node *x;
    for (x = c->sys; x; x = tt_xml_walk_next(c->sys, x)) {
        const char *d;
        if (strcmp(x->name, "net") != 0 || !(d = tt_xml_get(x, "dev")))
            continue;
        if (atoi(d) > max)
            max = atoi(d);
    }
    return max + 1;
}
