/*
 * topo_internal.h - declarations shared by the files of the topo module (not public).
 */
#ifndef TOPO_INTERNAL_H
#define TOPO_INTERNAL_H

#include "tt_topo.h"

/* Whether tt_inter_cpu_bw() knows this CPU (else it returned the fallback). */
int tt_topo__cpu_known(const char *arch, const char *vendor);

/* Graph editing (topo_build.c). Indices are node indices. */
tt_status tt_topo__add_node(tt_topo *t, tt_node_type type, int *index);
/* Add a link a->b (one direction); a link of the same type to the same peer
 * already present gets `bw` added. */
tt_status tt_topo__link_one(tt_topo *t, int a, int b, tt_link_type type, double bw, int xgmi);
/* Both directions. */
tt_status tt_topo__link(tt_topo *t, int a, int b, tt_link_type type, double bw, int xgmi);
/* The link a->b of `type`, or NULL. */
tt_link *tt_topo__find_link(const tt_topo *t, int a, int b, tt_link_type type);
/* Remove nodes with remove[i] != 0 (and every link to them); renumbers the
 * per-type ids. Paths must not be computed yet.  map (may be NULL, nnodes
 * entries) receives old index -> new index (-1 for removed nodes). */
tt_status tt_topo__remove_nodes(tt_topo *t, const unsigned char *remove, int *map);
/* Normalize a PCI bus id: lowercase, "bb:dd.f" gets domain "0000:".
 * Returns 0 when `in` is not made of hex digits, ':' and '.' or is too long. */
int tt_topo__norm_busid(const char *in, char out[32]);

/* Broadcom PCIe switch flattening (topo_bcm.c). `parent[i]` is the PCI-tree
 * parent node of i (-1 for none) and is kept up to date. */
tt_status tt_topo__flatten_bcm(tt_topo *t, int *parent);
/* Broadcom switch generation of a PCI node at a level (0 parent, 1 child): 4, 5 or 0. */
int tt_topo__bcm_gen(const tt_node *n, int level);

/* Free every path (topo_paths.c). */
void tt_topo__free_paths(tt_topo *t);

#endif
