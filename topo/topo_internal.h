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

/* Partial vendor files (topo_parts.c): GPUs whose <pci> has no <gpu> child get
 * their board's NVLink fabric from the part table (device id or
 * opts.gpu_part / $TOPOTUNE_GPU_PART), NICs without <net> one assumed port;
 * every assumption is a finding in t->assumed. Before paths are computed. */
tt_status tt_topo__infer_partial(tt_topo *t);

/* Display and management adapters (topo_display.c): 1 when a <pci> of class `cls`
 * (0x03xxxx) is not a compute GPU by the documented rule, with the finding's message in
 * why; 0 when it is a GPU (or not of the display class). */
int tt_topo__display_adapter(const tt_xml_node *el, long long cls, int has_gpu_child, char *why, size_t n);

/* Free every path (topo_graph.c; the graph owns t->paths, topo_paths.c fills it). */
void tt_topo__free_paths(tt_topo *t);

/* ---- typed attribute access (topo_schema.c): the one reader of the raw tree's
 * attribute values for topo_build.c, topo_validate.c and topo_check.c.  Names
 * are the TT_ELEM_* / TT_ATTR_* constants of tt_xml.h. */

/* What reading one attribute found. */
typedef enum {
    TT_ATTR_OK = 0,
    TT_ATTR_ABSENT,      /* no such attribute */
    TT_ATTR_EMPTY,       /* attr="" */
    TT_ATTR_NOT_NUMBER,  /* malformed (trailing text, overflow, ...) */
    TT_ATTR_NEGATIVE     /* unsigned value with a leading '-' */
} tt_attr_read;

/* The value ("" for a valueless attribute) or NULL when absent. */
const char *tt_topo__attr(const tt_xml_node *n, const char *name);
/* The value when present and not empty, else NULL. */
const char *tt_topo__attr_ne(const tt_xml_node *n, const char *name);
/* Whether n is an element named elem. */
int tt_topo__is(const tt_xml_node *n, const char *elem);

/* Parse without setting an error; *out is written only on TT_ATTR_OK, *raw
 * (may be NULL) receives the text (NULL when absent). */
tt_attr_read tt_topo__read_ll(const tt_xml_node *n, const char *name, long long *out,
                              const char **raw);
tt_attr_read tt_topo__read_double(const tt_xml_node *n, const char *name, double *out,
                                  const char **raw);
tt_attr_read tt_topo__read_u64(const tt_xml_node *n, const char *name, uint64_t *out,
                               const char **raw);

/* Lenient readers for health checks on scanned trees: strtol semantics, `dflt`
 * when absent, empty or followed by other text. */
int tt_topo__attr_int_or(const tt_xml_node *n, const char *name, int dflt);
/* Leading number of a PCIe speed ("16 GT/s" -> 16), -1 when absent or not positive. */
double tt_topo__attr_gts(const tt_xml_node *n, const char *name);

/* The uniform attribute error: "src:line: <elem> attribute 'aname': why"
 * (aname NULL: "src:line: <elem>: why"); returns `code`. */
tt_status tt_topo__attr_error(const char *src, const tt_xml_node *n, tt_status code,
                              const char *aname, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Strict getters: absent or "" gives `def` (*present = 0); not a number is
 * TT_ERR_PARSE, outside [lo, hi] TT_ERR_INVALID, both with tt_topo__attr_error. */
tt_status tt_topo__get_int(const char *src, const tt_xml_node *n, const char *name, long long lo,
                           long long hi, long long def, long long *out, int *present);
tt_status tt_topo__get_double(const char *src, const tt_xml_node *n, const char *name, double lo,
                              double hi, double def, double *out, int *present);
/* 0 when absent; negative is TT_ERR_INVALID. */
tt_status tt_topo__get_u64(const char *src, const tt_xml_node *n, const char *name,
                           uint64_t *out, int *present);
/* Normalized bus id (tt_topo__norm_busid), "" when absent. */
tt_status tt_topo__get_busid(const char *src, const tt_xml_node *n, const char *name,
                             char out[32]);

/* --check findings on values read from another producer's dialect (topo_check_dialect.c) */
/* A <pci> that NCCL and the builder make a PCI switch node of (topo_check_dialect.c). */
int tt_topo__pci_is_switch(const tt_xml_node *pci);
/* What a non-<system> root element says about the file (topo_lint.c): the clause after
 * "not <system>: ", and a note (": an NCCL graph file ...", else "") to append. */
const char *tt_topo__root_what(const char *root);
const char *tt_topo__root_note(const char *root);
/* sm of probed NVIDIA GPUs that give none, from the part table by device id (topo_parts.c). */
tt_status tt_topo__infer_sm(tt_topo *t);
tt_status tt_topo__check_dialect(const tt_xml_doc *doc, tt_findings *f);

#endif
