/*
 * topo_bcm.c - flatten Broadcom PEX Gen4/Gen5 switches (reference 2.9 step 3).
 *
 * These switches show up as a two-level hierarchy (a parent switch whose
 * downstream side holds child switches) although they sustain full bandwidth
 * between all ports.  As NCCL does, a child switch of the same generation is
 * removed and its devices are linked straight to the parent, so that devices
 * under two children of one parent are PIX apart rather than PXB.
 *
 * Identification uses the 64-bit id vendor<<48 | device<<32 | subvendor<<16 |
 * subdevice with the low 12 bits ignored:
 *   Gen4: 0x1000:0xc010 with subsystem 0x1000:0xaXXX, at both levels;
 *   Gen5: 0x1000:0xc030 with subsystem 0x1000:0x0XXX (parent) / 0x1000:0x1XXX (child).
 */
#include "tt_topo.h"
#include "topo_internal.h"

#include <stdlib.h>

static uint64_t pci_id(const tt_node *n)
{
    return ((uint64_t)n->u.pci.vendor << 48) | ((uint64_t)n->u.pci.device << 32) |
           ((uint64_t)n->u.pci.subvendor << 16) | (uint64_t)n->u.pci.subdevice;
}

int tt_topo__bcm_gen(const tt_node *n, int level)
{
    uint64_t id;
    if (n->type != TT_NODE_PCI)
        return 0;
    id = pci_id(n) & ~0xfffULL;
    if (id == 0x1000c0101000a000ULL)
        return 4;
    if (id == (0x1000c03010000000ULL | ((uint64_t)level * 0x1000ULL)))
        return 5;
    return 0;
}

tt_status tt_topo__flatten_bcm(tt_topo *t, int *parent)
{
    unsigned char *remove = NULL;
    int *map = NULL;
    int nremoved = 0;
    tt_status st = TT_OK;

    for (int p = 0; p < t->nnodes; p++) {
        int gen = tt_topo__bcm_gen(&t->nodes[p], 0), absorbed = 0;
        if (!gen)
            continue;
        for (int c = 0; c < t->nnodes; c++) {
            if (parent[c] != p || (remove && remove[c]) || tt_topo__bcm_gen(&t->nodes[c], 1) != gen)
                continue;
            if (!remove) {
                remove = calloc((size_t)t->nnodes, 1);
                if (!remove)
                    return tt_error_set(TT_ERR_NOMEM, "out of memory flattening switches");
            }
            /* grandchildren move up to p, keeping their own link bandwidth */
            for (int g = 0; g < t->nnodes; g++) {
                if (parent[g] != c)
                    continue;
                tt_link *l = tt_topo__find_link(t, g, c, TT_LINK_PCI);
                double bw = l ? l->bw : 0;
                if ((st = tt_topo__link(t, g, p, TT_LINK_PCI, bw, 0)) != TT_OK)
                    goto out;
                parent[g] = p;
            }
            TT_INFO("topo", "flattening Broadcom Gen%d switch %s into %s", gen, t->nodes[c].name,
                    t->nodes[p].name);
            remove[c] = 1;
            nremoved++;
            absorbed++;
        }
        /* as NCCL: mark the parent so it is not taken as a child later */
        if (absorbed)
            t->nodes[p].u.pci.subdevice = 0xffff;
    }
    if (!nremoved)
        goto out;
    map = malloc((size_t)t->nnodes * sizeof *map);
    if (!map) {
        st = tt_error_set(TT_ERR_NOMEM, "out of memory flattening switches");
        goto out;
    }
    {
        int old_n = t->nnodes;
        if ((st = tt_topo__remove_nodes(t, remove, map)) != TT_OK)
            goto out;
        for (int i = 0; i < old_n; i++) {
            if (map[i] < 0)
                continue;
            parent[map[i]] = parent[i] >= 0 ? map[parent[i]] : -1;
        }
    }
out:
    free(map);
    free(remove);
    return st;
}
