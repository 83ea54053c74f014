/* topo_view_matrix.c - GPU/NIC connection matrix in the style of
 * `nvidia-smi topo -m`.
 *
 * Cells: X (self), NV# (# NVLinks, from the NVLink path bandwidth divided by
 * the per-link bandwidth of the GPU's architecture), NVB (NVLink through one
 * peer GPU), XGMI# and XGB (the same for AMD xGMI), C2C, and for everything else the PCI relation of the two devices
 * in the PCI tree (NCCL's PXN/P2C/rerouted classes are shown by the PCI
 * relation underneath them, as nvidia-smi does):
 *   PIX  - common ancestor is a PCI switch, at most one switch in between
 *   PXB  - several switches in between, no CPU
 *   PHB  - the path crosses the CPU and both top-level PCI devices carry the
 *          same `hostbridge` attribute (only a live scan records it)
 *   NODE - the path crosses the CPU (same NUMA node), host bridges unknown or
 *          different
 *   SYS  - different CPUs (NUMA nodes)
 * GPU rows end with nvidia-smi's CPU Affinity, NUMA Affinity and GPU NUMA ID:
 * the GPU's NUMA node (its <cpu>) when the tree knows it, else the driver's
 * view a live scan recorded on the <gpu> (cpu_affinity/numa_affinity with
 * source "nvml"; footnoted), else N/A.
 */
#include "tt_topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Links that make up the PCI tree: PCI, NET (port <-> NIC), and LOC between
 * two PCI switches (NCCL's pcilink). */
static int tree_link(const tt_topo *t, int from, const tt_link *k)
{
    if (k->type == TT_LINK_PCI || k->type == TT_LINK_NET)
        return 1;
    return k->type == TT_LINK_LOC && t->nodes[from].type == TT_NODE_PCI &&
           t->nodes[k->peer].type == TT_NODE_PCI;
}

/* Shortest route from a to b over tree links: fills route (a ... b) and
 * returns its node count, 0 when b is unreachable. */
static int tree_route(const tt_topo *t, int a, int b, int *prev, int *queue, int *route)
{
    int head = 0, tail = 0, i, n, pos;

    for (i = 0; i < t->nnodes; i++)
        prev[i] = -2;
    prev[a] = -1;
    queue[tail++] = a;
    while (head < tail && prev[b] == -2) {
        int u = queue[head++], l;
        for (l = 0; l < t->nodes[u].nlinks; l++) {
            const tt_link *k = &t->nodes[u].links[l];
            if (k->peer < 0 || k->peer >= t->nnodes || prev[k->peer] != -2 || !tree_link(t, u, k))
                continue;
            prev[k->peer] = u;
            queue[tail++] = k->peer;
        }
    }
    if (prev[b] == -2)
        return 0;
    n = 0;
    for (i = b; i != -1; i = prev[i])
        n++;
    pos = n;
    for (i = b; i != -1; i = prev[i])
        route[--pos] = i;
    return n;
}

static const char *hostbridge_of(const tt_node *n)
{
    return n->xml ? tt_xml_get(n->xml, "hostbridge") : NULL;
}

static const char *pci_relation(const tt_topo *t, int a, int b, int *work)
{
    int *prev = work, *queue = work + t->nnodes, *route = work + 2 * t->nnodes;
    int n = tree_route(t, a, b, prev, queue, route), k, nsw = 0;

    if (n == 0)
        return "SYS";
    for (k = 1; k < n - 1; k++) {
        const tt_node *m = &t->nodes[route[k]];
        if (m->type == TT_NODE_CPU) {
            const char *ha = hostbridge_of(&t->nodes[route[k - 1]]);
            const char *hb = hostbridge_of(&t->nodes[route[k + 1]]);
            return (ha && hb && !strcmp(ha, hb)) ? "PHB" : "NODE";
        }
        if (m->type == TT_NODE_PCI)
            nsw++;
    }
    return nsw >= 2 ? "PXB" : "PIX";
}

static void cell(const tt_topo *t, int a, int b, int *work, char *buf, size_t sz)
{
    const tt_path *p;
    const tt_node *na = &t->nodes[a];

    if (a == b) {
        snprintf(buf, sz, "X");
        return;
    }
    p = tt_topo_path(t, a, b);
    if (p && na->type == TT_NODE_GPU && t->nodes[b].type == TT_NODE_GPU) {
        int xgmi = 0, l;
        /* the first link says which fabric (an xGMI path is xGMI all the way) */
        if ((p->type == TT_PATH_NVL || p->type == TT_PATH_NVB) && p->route && p->nhops >= 1)
            for (l = 0; l < na->nlinks; l++)
                if (na->links[l].peer == p->route[1] && na->links[l].type == TT_LINK_NVL)
                    xgmi = na->links[l].xgmi;
        if (p->type == TT_PATH_NVL) {
            double per;
            per = xgmi ? (na->u.gpu.xgmi_bw > 0 ? na->u.gpu.xgmi_bw : tt_xgmi_bw_per_link())
                       : tt_nvlink_bw_per_link(na->u.gpu.sm);
            if (per > 0 && p->bw > 0)
                snprintf(buf, sz, "%s%d", xgmi ? "XGMI" : "NV", (int)lround(p->bw / per));
            else
                snprintf(buf, sz, "%s", xgmi ? "XGMI" : "NVL");
            return;
        }
        if (p->type == TT_PATH_NVB) {
            snprintf(buf, sz, "%s", xgmi ? "XGB" : "NVB");
            return;
        }
        if (p->type == TT_PATH_C2C) {
            snprintf(buf, sz, "C2C");
            return;
        }
    }
    snprintf(buf, sz, "%s", pci_relation(t, a, b, work));
}

/* NCCL cpumask ("0000ffff,ffffffff": 32-bit hex words, most significant
 * first) -> "0-47,96-143".  "N/A" when empty or malformed. */
static void cpulist(const char *mask, char *buf, size_t sz)
{
    int nwords = 0, w, start = -1, cpu;
    const char *p;
    size_t len = 0;
    unsigned *words;

    buf[0] = '\0';
    if (!mask || !*mask) {
        snprintf(buf, sz, "N/A");
        return;
    }
    for (p = mask; *p; p++)
        if (*p == ',')
            nwords++;
    nwords++;
    words = calloc((size_t)nwords, sizeof *words);
    if (!words) {
        snprintf(buf, sz, "N/A");
        return;
    }
    p = mask;
    for (w = nwords - 1; w >= 0; w--) { /* first word is the most significant */
        char *end;
        words[w] = (unsigned)strtoul(p, &end, 16);
        if (end == p || (*end != ',' && *end != '\0')) {
            free(words);
            snprintf(buf, sz, "N/A");
            return;
        }
        p = *end ? end + 1 : end;
    }
    for (cpu = 0; cpu <= nwords * 32; cpu++) {
        int on = cpu < nwords * 32 && ((words[cpu / 32] >> (cpu % 32)) & 1u);
        if (on && start < 0)
            start = cpu;
        if (!on && start >= 0) {
            int n;
            if (start == cpu - 1)
                n = snprintf(buf + len, sz - len, "%s%d", len ? "," : "", start);
            else
                n = snprintf(buf + len, sz - len, "%s%d-%d", len ? "," : "", start, cpu - 1);
            if (n < 0 || (size_t)n >= sz - len)
                break;
            len += (size_t)n;
            start = -1;
        }
    }
    free(words);
    if (!buf[0])
        snprintf(buf, sz, "N/A");
}

/* A list attribute of the GPU's <gpu> element ("0-15,32"), NULL when absent
 * or not a plain list (kept out of the column layout). */
static const char *gpu_list_attr(const tt_xml_node *gpu, const char *attr, size_t max)
{
    const char *v = gpu ? tt_xml_get(gpu, attr) : NULL;
    size_t n;
    if (!v || !*v || (n = strspn(v, "0123456789,-")) != strlen(v) || n >= max)
        return NULL;
    return v;
}

static int from_nvml(const tt_xml_node *gpu, const char *attr)
{
    const char *s = gpu ? tt_xml_get(gpu, attr) : NULL;
    return s && !strcmp(s, "nvml");
}

/* The three affinity cells of GPU node g; returns 1 when one is NVML's. */
static int gpu_affinity(const tt_topo *t, int g, char *cpus, size_t csz, char *numa, size_t nsz,
                        char *gnuma, size_t gsz)
{
    int cpu = tt_topo_local_cpu(t, g), nvml = 0;
    int numaid = cpu >= 0 ? t->nodes[cpu].u.cpu.numaid : -1;
    const tt_xml_node *gel = t->nodes[g].xml ? tt_xml_first_child(t->nodes[g].xml, "gpu") : NULL;
    const char *v;

    cpulist(cpu >= 0 && numaid >= 0 ? t->nodes[cpu].u.cpu.affinity : NULL, cpus, csz);
    if (!strcmp(cpus, "N/A") && (v = gpu_list_attr(gel, "cpu_affinity", csz))) {
        snprintf(cpus, csz, "%s", v);
        nvml |= from_nvml(gel, "cpu_affinity_source");
    }
    if (numaid >= 0)
        snprintf(numa, nsz, "%d", numaid);
    else if ((v = gpu_list_attr(gel, "numa_affinity", nsz))) {
        snprintf(numa, nsz, "%s", v);
        nvml |= from_nvml(gel, "numa_affinity_source");
    } else
        snprintf(numa, nsz, "N/A");
    v = gpu_list_attr(gel, "gpu_numa_id", gsz);
    snprintf(gnuma, gsz, "%s", v && !strchr(v, ',') && !strchr(v, '-') ? v : "N/A");
    return nvml;
}

tt_status tt_topo_write_matrix(const tt_topo *t, tt_strbuf *out)
{
    int ngpu, nnet, ndev, i, j, w = 6, affw = (int)strlen("CPU Affinity");
    int numaw = (int)strlen("NUMA Affinity"), nnvml = 0;
    int *dev, *work;
    char c[32], aff[1200], numa[64], gnuma[16];
    tt_strbuf notes;

    if (!t || !out)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_write_matrix: NULL argument");
    ngpu = t->ntype[TT_NODE_GPU];
    nnet = t->ntype[TT_NODE_NET];
    ndev = ngpu + nnet;
    dev = calloc((size_t)ndev + 1, sizeof *dev);
    work = calloc((size_t)t->nnodes * 3 + 1, sizeof *work);
    if (!dev || !work) {
        free(dev);
        free(work);
        return tt_error_set(TT_ERR_NOMEM, "out of memory writing the matrix");
    }
    for (i = 0; i < ngpu; i++)
        dev[i] = tt_topo_node_index(t, TT_NODE_GPU, i);
    for (i = 0; i < nnet; i++)
        dev[ngpu + i] = tt_topo_node_index(t, TT_NODE_NET, i);
    for (i = 0; i < ndev; i++) {
        if (dev[i] < 0) {
            free(dev);
            free(work);
            return tt_error_set(TT_ERR_INTERNAL, "matrix: %s%d has no node",
                                i < ngpu ? "GPU" : "NET", i < ngpu ? i : i - ngpu);
        }
    }
    /* column width: widest cell */
    for (i = 0; i < ndev; i++) {
        for (j = 0; j < ndev; j++) {
            cell(t, dev[i], dev[j], work, c, sizeof c);
            if ((int)strlen(c) > w)
                w = (int)strlen(c);
        }
        if (i < ngpu) {
            gpu_affinity(t, dev[i], aff, sizeof aff, numa, sizeof numa, gnuma, sizeof gnuma);
            if ((int)strlen(aff) > affw)
                affw = (int)strlen(aff);
            if ((int)strlen(numa) > numaw)
                numaw = (int)strlen(numa);
        }
    }
    w += 2;

    tt_strbuf_printf(out, "%-*s", w, "");
    for (j = 0; j < ndev; j++) {
        snprintf(c, sizeof c, "%s%d", j < ngpu ? "GPU" : "NIC", j < ngpu ? j : j - ngpu);
        tt_strbuf_printf(out, "%-*s", w, c);
    }
    tt_strbuf_printf(out, "%-*s  %-*s  GPU NUMA ID\n", affw, "CPU Affinity", numaw, "NUMA Affinity");
    tt_strbuf_init(&notes);
    for (i = 0; i < ndev; i++) {
        snprintf(c, sizeof c, "%s%d", i < ngpu ? "GPU" : "NIC", i < ngpu ? i : i - ngpu);
        tt_strbuf_printf(out, "%-*s", w, c);
        for (j = 0; j < ndev; j++) {
            cell(t, dev[i], dev[j], work, c, sizeof c);
            tt_strbuf_printf(out, "%-*s", w, c);
        }
        if (i < ngpu) {
            if (gpu_affinity(t, dev[i], aff, sizeof aff, numa, sizeof numa, gnuma, sizeof gnuma)) {
                const char *nn = t->nodes[dev[i]].xml ? tt_xml_get(t->nodes[dev[i]].xml, "numa_node") : NULL;
                tt_strbuf_printf(&notes, "GPU%d: CPU/NUMA affinity from the driver (NVML): %s\n", i,
                                 nn && !strcmp(nn, "-1") ? "sysfs numa_node is -1"
                                                         : "sysfs gave no NUMA node");
                nnvml++;
            }
            tt_strbuf_printf(out, "%-*s  %-*s  %s", affw, aff, numaw, numa, gnuma);
        }
        /* no trailing blanks */
        while (out->len && out->data[out->len - 1] == ' ')
            out->data[--out->len] = '\0';
        tt_strbuf_append(out, "\n");
    }
    free(dev);
    free(work);
    if (nnvml) {
        tt_strbuf_append(out, "\n");
        tt_strbuf_append(out, notes.data);
    }
    tt_strbuf_free(&notes);

    tt_strbuf_append(out,
                     "\nLegend:\n\n"
                     "  X    = self\n"
                     "  SYS  = path crosses PCIe and the link between CPU sockets / NUMA nodes\n"
                     "  NODE = path crosses PCIe and the CPU inside one NUMA node (host bridges "
                     "unknown or different)\n"
                     "  PHB  = path crosses PCIe and one PCIe host bridge (needs the hostbridge "
                     "attribute of a live scan)\n"
                     "  PXB  = path crosses several PCIe switches, not the CPU\n"
                     "  PIX  = path crosses at most one PCIe switch\n"
                     "  C2C  = GPUs joined through the CPU's chip-to-chip link\n"
                     "  NVB  = NVLink through one intermediate GPU\n"
                     "  NV#  = NVLink, # links bonded (directly or through NVSwitch)\n"
                     "  XGMI# = AMD xGMI, # links\n"
                     "  XGB  = AMD xGMI through one intermediate GPU\n"
                     "  N/A  = NUMA node unknown (numaid -1, none from the driver) or no CPU "
                     "affinity; GPU NUMA ID: the GPU's memory is no NUMA node\n");
    if (nnet > 0) {
        tt_strbuf_append(out, "\nNIC Legend:\n\n");
        for (i = 0; i < nnet; i++) {
            int k = tt_topo_node_index(t, TT_NODE_NET, i);
            tt_strbuf_printf(out, "  NIC%d: %s\n", i, k >= 0 ? t->nodes[k].u.net.name : "?");
        }
    }
    return tt_strbuf_status(out);
}
