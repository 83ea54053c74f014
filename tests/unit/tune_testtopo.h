/*
 * tune_testtopo.h - hand-built tt_topo graphs for the tune tests (no XML, no topo module).
 * Links are added in both directions, as the topology builder does.
 */
#ifndef TUNE_TESTTOPO_H
#define TUNE_TESTTOPO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_topo.h"

__attribute__((unused)) static tt_topo *tb_new(void)
{
    tt_topo *t = calloc(1, sizeof(*t));
    t->cap_nodes = 1024;
    t->nodes = calloc((size_t)t->cap_nodes, sizeof(tt_node));
    snprintf(t->source, sizeof t->source, "hand-built");
    return t;
}

__attribute__((unused)) static int tb_node(tt_topo *t, tt_node_type type, const char *name)
{
    int i = t->nnodes++;
    tt_node *n = &t->nodes[i];
    n->type = type;
    n->id = t->ntype[type]++;
    snprintf(n->name, sizeof n->name, "%s", name);
    if (type == TT_NODE_CPU) {
        n->u.cpu.numaid = n->id;
        snprintf(n->u.cpu.arch, sizeof n->u.cpu.arch, "x86_64");
        snprintf(n->u.cpu.vendor, sizeof n->u.cpu.vendor, "GenuineIntel");
    }
    if (type == TT_NODE_GPU) { n->u.gpu.sm = 90; n->u.gpu.dev = n->id; n->u.gpu.rank = n->id; n->u.gpu.gdr = 1; }
    return i;
}

__attribute__((unused)) static void tb_link1(tt_topo *t, int a, int b, tt_link_type type, double bw)
{
    tt_node *n = &t->nodes[a];
    if (n->nlinks == n->cap_links) {
        n->cap_links = n->cap_links ? n->cap_links * 2 : 8;
        n->links = realloc(n->links, (size_t)n->cap_links * sizeof(tt_link));
    }
    n->links[n->nlinks++] = (tt_link){type, b, bw, 0};
}

__attribute__((unused)) static void tb_link(tt_topo *t, int a, int b, tt_link_type type, double bw)
{
    tb_link1(t, a, b, type, bw);
    tb_link1(t, b, a, type, bw);
}

__attribute__((unused)) static void tb_free(tt_topo *t)
{
    if (!t) return;
    for (int i = 0; i < t->nnodes; i++) free(t->nodes[i].links);
    free(t->nodes);
    free(t);
}

/* HGX H100: 2 CPUs (SYS 40), 8 GPUs each on its own Gen5 switch (48) with one NIC
 * (PCI 48, NET port nic_gbps); all GPUs on one NVSwitch node with 18 x 20.6 GB/s. */
__attribute__((unused)) static tt_topo *tb_hgx_h100(int ngpu, double nic_gbps, int with_nics)
{
    tt_topo *t = tb_new();
    int cpu0 = tb_node(t, TT_NODE_CPU, "CPU0");
    int cpu1 = tb_node(t, TT_NODE_CPU, "CPU1");
    tb_link(t, cpu0, cpu1, TT_LINK_SYS, 40.0);
    int nvs = tb_node(t, TT_NODE_NVS, "NVS0");
    for (int i = 0; i < ngpu; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "PCI/sw%d", i);
        int sw = tb_node(t, TT_NODE_PCI, nm);
        tb_link(t, sw, i < ngpu / 2 ? cpu0 : cpu1, TT_LINK_PCI, 48.0);
        snprintf(nm, sizeof nm, "GPU%d", i);
        int g = tb_node(t, TT_NODE_GPU, nm);
        tb_link(t, g, sw, TT_LINK_PCI, 48.0);
        tb_link(t, g, nvs, TT_LINK_NVL, 18 * 20.6);
        if (with_nics) {
            snprintf(nm, sizeof nm, "NIC/%d", i);
            int nic = tb_node(t, TT_NODE_NIC, nm);
            tb_link(t, nic, sw, TT_LINK_PCI, 48.0);
            snprintf(nm, sizeof nm, "mlx5_%d", i);
            int net = tb_node(t, TT_NODE_NET, nm);
            t->nodes[net].u.net.speed_mbps = nic_gbps * 1000.0;
            snprintf(t->nodes[net].u.net.name, sizeof t->nodes[net].u.net.name, "%s", nm);
            tb_link(t, nic, net, TT_LINK_NET, nic_gbps / 8.0);
        }
    }
    return t;
}

/* PCIe-only box: 1 CPU, 2 switches (24 GB/s Gen4 uplinks), 2 GPUs per switch, no NVLink. */
__attribute__((unused)) static tt_topo *tb_pcie4(void)
{
    tt_topo *t = tb_new();
    int cpu = tb_node(t, TT_NODE_CPU, "CPU0");
    for (int s = 0; s < 2; s++) {
        char nm[32];
        snprintf(nm, sizeof nm, "PCI/sw%d", s);
        int sw = tb_node(t, TT_NODE_PCI, nm);
        tb_link(t, sw, cpu, TT_LINK_PCI, 24.0);
        for (int k = 0; k < 2; k++) {
            snprintf(nm, sizeof nm, "GPU%d", s * 2 + k);
            int g = tb_node(t, TT_NODE_GPU, nm);
            t->nodes[g].u.gpu.sm = 80;
            tb_link(t, g, sw, TT_LINK_PCI, 24.0);
        }
    }
    return t;
}
#endif
