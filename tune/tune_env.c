/*
 * tune_env.c - NCCL environment hints derived from the topology (`topo-tune --format env`).
 *
 * Every hint is a `# reason` comment followed by an `export` line, or only comments when it
 * is advice that needs a person's judgement (P2P level, GDR level, topology file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tune_internal.h"

static const char *net_name(const tt_topo *t, int ti)
{
    const tt_node *n = &t->nodes[ti];
    return n->u.net.name[0] ? n->u.net.name : n->name;
}

/* A port the topology builder assumed for a NIC known by PCI class only (its name is made up). */
static int assumed_net(const tt_topo *t, const char *name)
{
    char q[80];
    snprintf(q, sizeof q, "'%s'", name);
    for (int i = 0; i < t->assumed.n; i++)
        if (!strcmp(t->assumed.items[i].code, "inferred-net") && strstr(t->assumed.items[i].message, q))
            return 1;
    return 0;
}

/* Socket-style interface names (NCCL_SOCKET_IFNAME) versus RDMA devices (NCCL_IB_HCA). */
static int is_socket_name(const char *s)
{
    static const char *pfx[] = {"eth", "en", "eno", "ens", "enp", "bond", "ib0", "lo", "docker", "veth", NULL};
    if (!strncmp(s, "mlx", 3) || !strncmp(s, "ibp", 3) || !strncmp(s, "bnxt", 4) || !strncmp(s, "irdma", 5) ||
        !strncmp(s, "rdma", 4) || !strncmp(s, "efa", 3) || !strncmp(s, "qedr", 4))
        return 0;
    for (int i = 0; pfx[i]; i++)
        if (!strncmp(s, pfx[i], strlen(pfx[i]))) return 1;
    return 0;
}

tt_status tt_tune_write_env(const tt_topo *t, const tt_tune_ctx *ctx, tt_strbuf *out)
{
    const tt_cluster *c = &ctx->cl;
    tt_cluster one = *c;
    one.nodes = c->topo_nics > 0 ? 2 : 1; /* routes to the NICs the description uses */
    if (one.nodes > 1 && one.nics_per_node == 0) one.nodes = 1;
    if (one.nodes > 1 && !(one.nic_gbps > 0)) one.nic_gbps = c->topo_nic_gbps > 0 ? c->topo_nic_gbps : 100;
    tg_graph g;
    tt_status st = tg_build(t, &one, &g);
    if (st != TT_OK) return st;
    tt_strbuf_printf(out, "# topo-tune --format env: NCCL settings suggested by %s (%d GPU(s), %d NIC port(s))\n",
                     t->source, c->gpus_per_node, c->topo_nics);

    /* NICs nearest each GPU */
    char ib[1024] = "", sock[512] = "";
    char why_ib[2048] = "";
    int nib = 0, nsock = 0, nsynth = 0;
    int *used = calloc((size_t)g.nnet + 1, sizeof(int));
    if (!used) { tg_free(&g); return tt_error_set(TT_ERR_NOMEM, "tune: out of memory"); }
    int worst_gdr = TT_PATH_LOC;
    for (int i = 0; i < g.ngpu; i++) {
        int best = -1;
        for (int k = 0; k < g.nnet; k++) {
            int idx = i * g.nend + tg_net_ep(&g, k);
            if (!g.route[idx] || g.topo_index[g.net[k]] < 0) continue;
            if (best < 0) { best = k; continue; }
            int bidx = i * g.nend + tg_net_ep(&g, best);
            /* nearest by class, then bandwidth; ties go to a NIC no GPU took yet */
            if (g.ptype[idx] < g.ptype[bidx] ||
                (g.ptype[idx] == g.ptype[bidx] &&
                 (g.pbw[idx] > g.pbw[bidx] || (g.pbw[idx] == g.pbw[bidx] && !used[k] && used[best]))))
                best = k;
        }
        if (best < 0) continue;
        int idx = i * g.nend + tg_net_ep(&g, best);
        if ((int)g.ptype[idx] > worst_gdr) worst_gdr = g.ptype[idx];
        const char *nm = net_name(t, g.topo_index[g.net[best]]);
        size_t wl = strlen(why_ib);
        if (wl < sizeof why_ib - 64)
            snprintf(why_ib + wl, sizeof why_ib - wl, "%sGPU%d->%s(%s)", wl ? " " : "", i, nm,
                     tune_path_name(g.ptype[idx]));
        if (used[best]) continue;
        used[best] = 1;
        if (assumed_net(t, nm)) {
            nsynth++; /* a port assumed for a NIC known by PCI class only: its name is made up */
            continue;
        }
        if (is_socket_name(nm)) {
            size_t l = strlen(sock);
            snprintf(sock + l, sizeof sock - l, "%s%s", nsock++ ? "," : "=", nm);
        } else {
            const tt_node *nn = &t->nodes[g.topo_index[g.net[best]]];
            size_t l = strlen(ib);
            snprintf(ib + l, sizeof ib - l, "%s%s:%d", nib++ ? "," : "=", nm, nn->u.net.port > 0 ? nn->u.net.port : 1);
        }
    }
    free(used);
    if (nsynth > 0)
        tt_strbuf_printf(out, "\n# %d NIC(s) are known by PCI class only (partial vendor file): their device names are\n"
                              "# unknown, so they are left out of NCCL_IB_HCA/NCCL_SOCKET_IFNAME; nearest by path class: %s\n",
                         nsynth, why_ib);
    if (nib > 0) {
        tt_strbuf_printf(out, "\n# NICs nearest each GPU by path class: %s\n", why_ib);
        tt_strbuf_append(out, "# ('=' makes NCCL match the names exactly; ':port' selects the port)\n");
        tt_strbuf_printf(out, "export NCCL_IB_HCA=%s\n", ib);
    } else if (c->topo_nics == 0) {
        tt_strbuf_append(out, "\n# The topology lists no NIC: NCCL_IB_HCA cannot be derived. Add the NICs (topo-dump on the host)\n"
                              "# or run single-node only.\n");
    }
    if (nsock > 0) {
        tt_strbuf_printf(out, "\n# Only socket-type network ports (%s) near the GPUs: NCCL will use TCP sockets;\n"
                              "# pin them so bootstrap and data avoid loopback/docker bridges.\n", sock + 1);
        tt_strbuf_printf(out, "export NCCL_SOCKET_IFNAME=%s\n", sock);
    } else {
        tt_strbuf_append(out, "\n# Bootstrap (socket) traffic: keep it off loopback and container bridges.\n");
        tt_strbuf_append(out, "export NCCL_SOCKET_IFNAME=^lo,docker,veth\n");
    }
    if (worst_gdr > TT_PATH_PXB && nib > 0) {
        tt_strbuf_printf(out, "\n# Some GPU-NIC pairs are at %s (beyond PXB, NCCL's default GDR level): GPUDirect RDMA is off for\n"
                              "# them and data is staged in host memory. If the platform supports GDR across the CPU, NCCL_NET_GDR_LEVEL=%s\n"
                              "# enables it - measure before keeping it.\n",
                         tune_path_name((tt_path_type)worst_gdr), tune_path_name((tt_path_type)worst_gdr));
    }
    if (!c->numa_known) {
        tt_strbuf_append(out, "\n# No CPU has a NUMA id (typical of a VM): NCCL cannot see the real PCIe/NUMA layout and may pick\n"
                              "# slow paths. Give it the real topology (write one with `topo-dump --format nccl`):\n"
                              "# export NCCL_TOPO_FILE=/etc/nccl/topo.xml\n");
    }
    /* PCIe-only: GPU pairs beyond PXB */
    int worst_p2p = TT_PATH_LOC, nvl = 0;
    for (int i = 0; i < g.ngpu; i++)
        for (int j = 0; j < g.ngpu; j++) {
            if (i == j) continue;
            tt_path_type pt = g.ptype[i * g.nend + j];
            if ((int)pt > worst_p2p) worst_p2p = pt;
            if (pt <= TT_PATH_NVB) nvl = 1;
        }
    if (g.ngpu > 1 && !nvl && t->gpu_fabric_unknown > 0) {
        tt_strbuf_printf(out, "\n# GPU interconnect unknown (%d GPU(s) without NVLink information in the file): modelled as\n"
                              "# PCIe. No P2P advice: name the part (--gpu-part) or give NCCL's own dump (NCCL_TOPO_DUMP_FILE).\n",
                         t->gpu_fabric_unknown);
    } else if (g.ngpu > 1 && !nvl) {
        tt_strbuf_printf(out, "\n# No NVLink between GPUs (worst GPU-GPU path %s): traffic crosses PCIe%s.\n",
                         tune_path_name((tt_path_type)worst_p2p),
                         worst_p2p > TT_PATH_PXB ? " and the CPU" : "");
        if (worst_p2p > TT_PATH_PXB)
            tt_strbuf_append(out, "# NCCL's default P2P level (PXB) turns P2P off for those pairs and copies through host memory.\n"
                                  "# If ACS/IOMMU allow peer traffic through the root complex, NCCL_P2P_LEVEL=SYS re-enables it;\n"
                                  "# check first (e.g. p2pBandwidthLatencyTest), wrong settings hang or corrupt.\n");
        tt_strbuf_append(out, "# LL128 stays off by default here (needs NVLink); do not force it with NCCL_PROTO.\n");
    }
    if (c->nodes > 1 && c->nics_per_node > 1 && c->rails == c->nics_per_node) {
        tt_strbuf_printf(out, "\n# Rail-optimised fabric (%d rails): keep each ring/tree on one rail so traffic stays under one\n"
                              "# leaf switch (worth it when the spine between rails is slower than the leaves; NCCL's default 2\n"
                              "# only prefers it).\n",
                         c->rails);
        tt_strbuf_append(out, "export NCCL_CROSS_NIC=0\n");
    } else if (c->nodes > 1 && c->rails == 1 && c->nics_per_node > 1) {
        tt_strbuf_append(out, "\n# Flat (single rail) fabric: rings may change NICs between nodes without a spine penalty.\n");
        tt_strbuf_append(out, "export NCCL_CROSS_NIC=1\n");
    }
    if (ctx->ch.nvls_support)
        tt_strbuf_append(out, "\n# NVSwitch with SM90+: NVLS (multicast) is available; it needs the fabric manager running.\n"
                              "# NCCL_NVLS_ENABLE is on by default; set it to 0 only to compare.\n");
    tg_free(&g);
    return tt_strbuf_status(out);
}
