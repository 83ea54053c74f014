/*
 * topo_scan_ibv.c - RDMA ports from libibverbs: state, link layer, active
 * speed x width in Mb/s, active MTU, max_qp (NCCL's net@maxconn), GUIDs.
 *
 * Compiled only with TT_HAVE_IBVERBS (the Makefile defines it when
 * pkg-config finds libibverbs) for the structure layouts; the library itself
 * is loaded at run time with dlopen("libibverbs.so.1"), so the tools run on
 * machines without rdma-core.  Speed: per-lane rate of the active_speed bit
 * (SDR 2500, DDR 5000, QDR 10000, FDR10 10000, FDR 14000, EDR 25000,
 * HDR 50000, NDR 100000, XDR 200000 Mb/s) times the lanes of the
 * active_width bit (1x, 4x, 8x, 12x, 2x) - the same tables NCCL uses.
 */
#include "topo_scan_internal.h"

#include <stdio.h>
#include <string.h>

#ifndef TT_HAVE_IBVERBS

tt_probe_state scan_probe_ibv(scan_ctx *c)
{
    scan_note(c, "built without libibverbs headers (TT_HAVE_IBVERBS undefined)");
    return TT_PROBE_UNAVAILABLE;
}

#else

#include <dlfcn.h>
#include <endian.h>
#include <infiniband/verbs.h>
#include <stdlib.h>

typedef struct {
    void *h;
    struct ibv_device **(*get_list)(int *);
    void (*free_list)(struct ibv_device **);
    const char *(*get_name)(struct ibv_device *);
    struct ibv_context *(*open)(struct ibv_device *);
    int (*close)(struct ibv_context *);
    int (*query_device)(struct ibv_context *, struct ibv_device_attr *);
    int (*query_port)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *);
} ibv_api;

static int lane_mbps(unsigned speed_bit)
{
    /* index of the lowest set bit selects the per-lane rate */
    static const int rate[] = {2500, 5000, 10000, 10000, 14000, 25000, 50000, 100000, 200000};
    int i;
    for (i = 0; i < (int)(sizeof rate / sizeof rate[0]); i++)
        if (speed_bit & (1u << i))
            return rate[i];
    return -1;
}

static int lanes(unsigned width_bit)
{
    static const int n[] = {1, 4, 8, 12, 2};
    int i;
    for (i = 0; i < 5; i++)
        if (width_bit & (1u << i))
            return n[i];
    return -1;
}

static const char *state_name(int s)
{
    switch (s) {
    case IBV_PORT_NOP: return "NOP";
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    }
    return "UNKNOWN";
}

static int query_port(ibv_api *a, struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *pa)
{
    struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);
    memset(pa, 0, sizeof *pa);
    if (vctx)
        return vctx->query_port(ctx, port, pa, sizeof *pa);
    return a->query_port(ctx, port, (struct _compat_ibv_port_attr *)pa);
}

/* The <net name port> element the sysfs probe made, or a new one. */
static tt_xml_node *net_for(scan_ctx *c, const char *name, int port)
{
    tt_xml_node *x, *parent, *nic, *net;
    char p[PATH_MAX], rp[PATH_MAX], bus[16];
    const char *b;
    for (x = c->sys; x; x = tt_xml_walk_next(c->sys, x)) {
        const char *n = tt_xml_get(x, "name"), *pp = tt_xml_get(x, "port");
        if (!strcmp(x->name, "net") && n && !strcmp(n, name) && pp && atoi(pp) == port)
            return x;
    }
    parent = NULL;
    scan_path(c, p, sizeof p, "/sys/class/infiniband/%s/device", name);
    if (realpath(p, rp) && (b = strrchr(rp, '/')) && scan_busid_norm(b + 1, bus, sizeof bus) == 0)
        parent = scan_find_pci(c, bus);
    if (!parent)
        parent = tt_xml_first_child(c->sys, "cpu");
    if (!parent)
        parent = scan_cpu_get(c, -1, NULL);
    nic = parent ? scan_nic_get(c, parent) : NULL;
    net = nic ? tt_xml_node_new("net") : NULL;
    if (!net || tt_xml_append(nic, net)) {
        tt_xml_node_free(net);
        return NULL;
    }
    tt_xml_set(net, "name", name);
    tt_xml_setf(net, "dev", "%d", scan_next_net_dev(c));
    tt_xml_setf(net, "port", "%d", port);
    return net;
}

tt_probe_state scan_probe_ibv(scan_ctx *c)
{
    ibv_api a;
    struct ibv_device **list;
    int n = 0, i, nports = 0;

    memset(&a, 0, sizeof a);
    a.h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a.h) {
        scan_note(c, "libibverbs.so.1 not loadable (%s)", dlerror());
        return TT_PROBE_UNAVAILABLE;
    }
    *(void **)&a.get_list = dlsym(a.h, "ibv_get_device_list");
    *(void **)&a.free_list = dlsym(a.h, "ibv_free_device_list");
    *(void **)&a.get_name = dlsym(a.h, "ibv_get_device_name");
    *(void **)&a.open = dlsym(a.h, "ibv_open_device");
    *(void **)&a.close = dlsym(a.h, "ibv_close_device");
    *(void **)&a.query_device = dlsym(a.h, "ibv_query_device");
    *(void **)&a.query_port = dlsym(a.h, "ibv_query_port");
    if (!a.get_list || !a.free_list || !a.get_name || !a.open || !a.close || !a.query_device ||
        !a.query_port) {
        scan_note(c, "libibverbs.so.1 lacks a needed ibv_* symbol");
        dlclose(a.h);
        return TT_PROBE_UNAVAILABLE;
    }
    list = a.get_list(&n);
    if (!list || n <= 0) {
        scan_note(c, "no RDMA device");
        if (list)
            a.free_list(list);
        dlclose(a.h);
        return TT_PROBE_UNAVAILABLE;
    }
    for (i = 0; i < n; i++) {
        const char *name = a.get_name(list[i]);
        struct ibv_context *ctx = a.open(list[i]);
        struct ibv_device_attr da;
        int p;
        if (!ctx) {
            scan_unknown(c, NULL, "net", "ibv_open_device(%s) failed (permission?)", name ? name : "?");
            continue;
        }
        memset(&da, 0, sizeof da);
        if (a.query_device(ctx, &da)) {
            scan_unknown(c, NULL, "net", "ibv_query_device(%s) failed", name);
            a.close(ctx);
            continue;
        }
        for (p = 1; p <= da.phys_port_cnt; p++) {
            struct ibv_port_attr pa;
            tt_xml_node *net;
            int lm, ln;
            if (query_port(&a, ctx, (uint8_t)p, &pa))
                continue;
            net = net_for(c, name, p);
            if (!net)
                continue;
            nports++;
            c->probe->seen++;
            tt_xml_set(net, "state", state_name(pa.state));
            tt_xml_set(net, "link_layer", pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet"
                                          : pa.link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand"
                                                                                       : "unspecified");
            lm = lane_mbps(pa.active_speed);
            ln = lanes(pa.active_width);
            if (lm > 0 && ln > 0) {
                tt_xml_setf(net, "speed", "%d", lm * ln);
            } else if (!tt_xml_get(net, "speed")) {
                scan_unknown(c, net, "speed", "active_speed 0x%x / active_width 0x%x not in the "
                                              "speed table", pa.active_speed, pa.active_width);
            }
            if (pa.active_mtu >= IBV_MTU_256 && pa.active_mtu <= IBV_MTU_4096)
                tt_xml_setf(net, "mtu", "%d", 128 << pa.active_mtu);
            tt_xml_setf(net, "maxconn", "%d", da.max_qp);
            tt_xml_setf(net, "guid", "0x%llx", (unsigned long long)be64toh(da.sys_image_guid));
            tt_xml_setf(net, "node_guid", "0x%llx", (unsigned long long)be64toh(da.node_guid));
        }
        a.close(ctx);
    }
    a.free_list(list);
    dlclose(a.h);
    scan_note(c, "%d RDMA device(s), %d port(s)", n, nports);
    return TT_PROBE_OK;
}

#endif
