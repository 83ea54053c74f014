/* topo_view_json.c - the built graph as versioned JSON:
 *   {"schema":"topotune-topology","version":1,"source":...,
 *    "options":{p2p_level,gdr_level,pxn,nvb},
 *    "nodes":[{index,type,id,name,busid,line,attributes}],
 *    "links":[{from,to,type,bw[,xgmi]}],     one per direction
 *    "paths":[{from,to,type,bw,hops,route}]} GPU->GPU, GPU->NET, NET->GPU
 * Bandwidths are GB/s per direction, rounded to 3 decimals. */
#include "tt_topo.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>


static double r3(double v) { return round(v * 1000.0) / 1000.0; }

static void add_hex(cJSON *o, const char *k, unsigned long long v, int digits)
{
    char b[32];
    snprintf(b, sizeof b, "0x%0*llx", digits, v);
    cJSON_AddStringToObject(o, k, b);
}

/* keys: the XML attribute names the values were read from */
static cJSON *node_attrs(const tt_node *n)
{
    cJSON *a = cJSON_CreateObject();
    if (!a)
        return NULL;
    switch (n->type) {
    case TT_NODE_GPU:
        cJSON_AddNumberToObject(a, TT_ATTR_DEV, n->u.gpu.dev);
        cJSON_AddNumberToObject(a, TT_ATTR_SM, n->u.gpu.sm);
        cJSON_AddNumberToObject(a, TT_ATTR_RANK, n->u.gpu.rank);
        cJSON_AddNumberToObject(a, TT_ATTR_GDR, n->u.gpu.gdr);
        break;
    case TT_NODE_CPU:
        cJSON_AddNumberToObject(a, TT_ATTR_NUMAID, n->u.cpu.numaid);
        cJSON_AddStringToObject(a, TT_ATTR_ARCH, n->u.cpu.arch);
        cJSON_AddStringToObject(a, TT_ATTR_VENDOR, n->u.cpu.vendor);
        cJSON_AddNumberToObject(a, TT_ATTR_FAMILYID, n->u.cpu.family);
        cJSON_AddNumberToObject(a, TT_ATTR_MODELID, n->u.cpu.model);
        cJSON_AddStringToObject(a, TT_ATTR_AFFINITY, n->u.cpu.affinity);
        break;
    case TT_NODE_PCI:
        add_hex(a, TT_ATTR_CLASS, n->u.pci.cls, 6);
        add_hex(a, TT_ATTR_VENDOR, n->u.pci.vendor, 4);
        add_hex(a, TT_ATTR_DEVICE, n->u.pci.device, 4);
        add_hex(a, TT_ATTR_SUBSYSTEM_VENDOR, n->u.pci.subvendor, 4);
        add_hex(a, TT_ATTR_SUBSYSTEM_DEVICE, n->u.pci.subdevice, 4);
        cJSON_AddStringToObject(a, TT_ATTR_LINK_SPEED, n->u.pci.link_speed);
        cJSON_AddNumberToObject(a, TT_ATTR_LINK_WIDTH, n->u.pci.link_width);
        break;
    case TT_NODE_NIC:
        cJSON_AddNumberToObject(a, "ports", n->u.nic.ports);
        break;
    case TT_NODE_NET:
        cJSON_AddStringToObject(a, TT_ATTR_NAME, n->u.net.name);
        cJSON_AddNumberToObject(a, TT_ATTR_DEV, n->u.net.dev);
        cJSON_AddNumberToObject(a, TT_ATTR_PORT, n->u.net.port);
        cJSON_AddNumberToObject(a, TT_ATTR_GDR, n->u.net.gdr);
        cJSON_AddNumberToObject(a, TT_ATTR_MAXCONN, n->u.net.maxconn);
        cJSON_AddNumberToObject(a, "speed_mbps", n->u.net.speed_mbps);
        cJSON_AddNumberToObject(a, TT_ATTR_LATENCY, n->u.net.latency);
        add_hex(a, TT_ATTR_GUID, (unsigned long long)n->u.net.guid, 1);
        break;
    case TT_NODE_NVS:
        cJSON_AddBoolToObject(a, "visible", n->u.nvs.visible != 0);
        break;
    default:
        break;
    }
    return a;
}

static int add_path(const tt_topo *t, cJSON *arr, int i, int j)
{
    const tt_path *p = tt_topo_path(t, i, j);
    cJSON *o, *route;
    int h;

    if (!p)
        return 0;
    o = cJSON_CreateObject();
    if (!o)
        return -1;
    cJSON_AddStringToObject(o, "from", t->nodes[i].name);
    cJSON_AddStringToObject(o, "to", t->nodes[j].name);
    cJSON_AddStringToObject(o, "type", tt_path_type_name(p->type));
    cJSON_AddNumberToObject(o, "bw", r3(p->bw));
    cJSON_AddNumberToObject(o, "hops", p->nhops);
    route = cJSON_AddArrayToObject(o, "route");
    for (h = 0; route && p->route && h <= p->nhops; h++) {
        int k = p->route[h];
        if (k >= 0 && k < t->nnodes)
            cJSON_AddItemToArray(route, cJSON_CreateString(t->nodes[k].name));
    }
    cJSON_AddItemToArray(arr, o);
    return 0;
}

tt_status tt_topo_write_json(const tt_topo *t, tt_strbuf *out)
{
    cJSON *root, *opts, *nodes, *links, *paths;
    char *text;
    int i, j, l;

    if (!t || !out)
        return tt_error_set(TT_ERR_INVALID, "tt_topo_write_json: NULL argument");
    root = cJSON_CreateObject();
    if (!root)
        return tt_error_set(TT_ERR_NOMEM, "out of memory writing topology JSON");
    cJSON_AddStringToObject(root, "schema", "topotune-topology");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "source", t->source);
    opts = cJSON_AddObjectToObject(root, "options"); /* the knobs the paths were computed with */
    if (opts) {
        cJSON_AddStringToObject(opts, "p2p_level", tt_path_type_name(t->opts.p2p_level));
        cJSON_AddStringToObject(opts, "gdr_level", tt_path_type_name(t->opts.gdr_level));
        cJSON_AddBoolToObject(opts, "pxn", t->opts.pxn != 0);
        cJSON_AddBoolToObject(opts, "nvb", t->opts.nvb != 0);
    }
    nodes = cJSON_AddArrayToObject(root, "nodes");
    links = cJSON_AddArrayToObject(root, "links");
    paths = cJSON_AddArrayToObject(root, "paths");
    if (!nodes || !links || !paths)
        goto nomem;
    for (i = 0; i < t->nnodes; i++) {
        const tt_node *n = &t->nodes[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            goto nomem;
        cJSON_AddItemToArray(nodes, o);
        cJSON_AddNumberToObject(o, "index", i);
        cJSON_AddStringToObject(o, "type", tt_node_type_name(n->type));
        cJSON_AddNumberToObject(o, "id", n->id);
        cJSON_AddStringToObject(o, "name", n->name);
        if (n->busid[0])
            cJSON_AddStringToObject(o, "busid", n->busid);
        else
            cJSON_AddNullToObject(o, "busid");
        if (n->line > 0)
            cJSON_AddNumberToObject(o, "line", n->line);
        else
            cJSON_AddNullToObject(o, "line");
        cJSON_AddItemToObject(o, "attributes", node_attrs(n));
        for (l = 0; l < n->nlinks; l++) {
            const tt_link *k = &n->links[l];
            cJSON *lo = cJSON_CreateObject();
            if (!lo)
                goto nomem;
            cJSON_AddItemToArray(links, lo);
            cJSON_AddStringToObject(lo, "from", n->name);
            cJSON_AddStringToObject(lo, "to",
                                    (k->peer >= 0 && k->peer < t->nnodes) ? t->nodes[k->peer].name
                                                                          : "?");
            cJSON_AddStringToObject(lo, "type", tt_link_type_name(k->type));
            cJSON_AddNumberToObject(lo, "bw", r3(k->bw));
            if (k->xgmi)
                cJSON_AddTrueToObject(lo, "xgmi");
        }
    }
    if (t->paths) {
        /* bounded output (issue #16 item 8): a small file with thousands of GPUs would otherwise become
         * hundreds of MB of paths (2000 GPUs: 4 million paths, 620 MB, 5 GB of memory) */
        long long ngpu = 0, nnet = 0;
        for (i = 0; i < t->nnodes; i++) {
            ngpu += t->nodes[i].type == TT_NODE_GPU;
            nnet += t->nodes[i].type == TT_NODE_NET;
        }
        long long npaths = ngpu * (ngpu - 1) + 2 * ngpu * nnet;
        if (npaths > TT_TOPO_JSON_MAX_PATHS) {
            cJSON_Delete(root);
            return tt_error_set(TT_ERR_LIMIT,
                                "the JSON view would hold %lld paths (%lld GPUs, %lld NICs): more than its limit of "
                                "%d; use -f matrix, -f native or -f dot for a topology this large",
                                npaths, ngpu, nnet, TT_TOPO_JSON_MAX_PATHS);
        }
        for (i = 0; i < t->nnodes; i++) {
            if (t->nodes[i].type != TT_NODE_GPU)
                continue;
            for (j = 0; j < t->nnodes; j++) {
                if (j == i || (t->nodes[j].type != TT_NODE_GPU && t->nodes[j].type != TT_NODE_NET))
                    continue;
                if (add_path(t, paths, i, j))
                    goto nomem;
                if (t->nodes[j].type == TT_NODE_NET && add_path(t, paths, j, i))
                    goto nomem;
            }
        }
    }
    /* what the builder assumed for a partial vendor file (topo_parts.c) */
    if (t->assumed.n > 0 || t->gpu_fabric_unknown > 0) {
        cJSON *as = cJSON_AddArrayToObject(root, "assumptions");
        if (!as)
            goto nomem;
        for (i = 0; i < t->assumed.n; i++) {
            const tt_finding *f = &t->assumed.items[i];
            cJSON *o = cJSON_CreateObject();
            if (!o)
                goto nomem;
            cJSON_AddItemToArray(as, o);
            cJSON_AddStringToObject(o, "severity", tt_severity_name(f->severity));
            cJSON_AddStringToObject(o, "code", f->code);
            cJSON_AddStringToObject(o, "where", f->where);
            cJSON_AddStringToObject(o, "message", f->message);
        }
        cJSON_AddNumberToObject(root, "gpu_interconnect_unknown", t->gpu_fabric_unknown);
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return tt_error_set(TT_ERR_NOMEM, "out of memory writing topology JSON");
    tt_strbuf_append_json(out, text);
    free(text);
    return tt_strbuf_status(out);
nomem:
    cJSON_Delete(root);
    return tt_error_set(TT_ERR_NOMEM, "out of memory writing topology JSON");
}
