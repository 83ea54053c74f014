/*
 * tune_internal.h - private declarations shared by the tune/ files.
 */
#ifndef TUNE_INTERNAL_H
#define TUNE_INTERNAL_H

#include "tt_tune.h"

/* ---- working graph (tune_graph.c): one node of the cluster, with the GPUs and NET ports
 * the cluster description selects, synthetic NICs added where the description asks for
 * more than the topology has, NET port speed overridden, and a capacity per directed edge
 * that the channel search subtracts from. ---- */
typedef struct {
    int from, to;
    tt_link_type type;
    double bw;       /* GB/s, this direction */
    double left;     /* remaining capacity during a search */
} tg_edge;

typedef struct {
    int n;              /* nodes */
    tt_node_type *type; /* per node */
    int *topo_index;    /* index in the tt_topo, -1 for synthetic nodes */
    int *adj_start, *adj; /* CSR adjacency: edges leaving node i are adj[adj_start[i] .. adj_start[i+1]) */
    tg_edge *e;
    int ne;
    int ngpu, nnet;
    int *gpu;           /* node index of local rank i */
    int *net;           /* node index of NET port k */
    /* endpoints: 0..ngpu-1 = GPUs, ngpu..ngpu+nnet-1 = NETs; routes between endpoints */
    int nend;
    int **route;        /* route[a*nend+b] = edge ids, -1 terminated; NULL = unreachable */
    int *route_len;
    tt_path_type *ptype;/* path class a->b */
    double *pbw;        /* bottleneck bw a->b */
} tg_graph;

tt_status tg_build(const tt_topo *t, const tt_cluster *c, tg_graph *g);
void tg_free(tg_graph *g);
void tg_reset(tg_graph *g);  /* left = bw for every edge */
/* Endpoint ids */
static inline int tg_gpu_ep(const tg_graph *g, int i) { (void)g; return i; }
static inline int tg_net_ep(const tg_graph *g, int k) { return g->ngpu + k; }
/* Add `mult * s` load along route a->b; returns 0 (and changes nothing) if some edge
 * lacks capacity.  `check_only` tests without subtracting. */
int tg_route_fits(const tg_graph *g, int a, int b, double s);
void tg_route_take(tg_graph *g, int a, int b, double s);

/* ---- channel search (tune_channels.c) ---- */
const double *tt_speed_table(int sm, int inter, int *n);

/* ---- models ---- */
struct tt_tune_ctx {
    const tt_topo *topo;
    tt_cluster cl;
    tt_tune_channels ch;
    tt_tune_channels ch1;  /* the same node alone (nodes = 1): what NVLink carries inside a node */
    int nics_fused;        /* > 1: NICs of one GPU seen as one device of that many ports (EFA, tune_ctx.c) */
    tt_model_kind model;
    tt_model_params params;
    int nranks, nnodes;
    /* NCCL mode tables (tune_model_nccl.c): float as NCCL stores them */
    float bw[TT_COLL_COUNT][TT_ALGO_NCCL_COUNT][TT_PROTO_COUNT];
    float lat[TT_COLL_COUNT][TT_ALGO_NCCL_COUNT][TT_PROTO_COUNT];
    char why[TT_COLL_COUNT][TT_ALGO_COUNT][TT_PROTO_COUNT][120]; /* "" = enabled */
    int ll128_ok[TT_ALGO_NCCL_COUNT];
    int binary_tree;     /* evaluate the tree as topotune's executor runs it (set per row) */
};

void tune_nccl_prepare(struct tt_tune_ctx *ctx);
tt_status tune_nccl_eval(const struct tt_tune_ctx *ctx, tt_coll coll, tt_algo algo,
                         tt_proto proto, uint64_t bytes, tt_tune_estimate *out);
/* NCCL's LL128 default-enable rule for a graph (shared by both models). */
int tune_ll128_allowed(const struct tt_tune_ctx *ctx, const tt_graph_info *g, char *why,
                       size_t whylen);
/* The candidate NCCL runs for a measured row: its own when forced, else NCCL's choice (tt_nccl_choice),
 * the other one by NCCL's model when only the algorithm or the protocol was forced */
tt_status tune_row_candidate(const struct tt_tune_ctx *ctx, const tt_measurement *m, tt_algo *algo, tt_proto *proto);
/* One size of a table for NCCL (tune_table.c): force the model's fastest NCCL candidate or keep NCCL's
 * choice, and why; best = the model's fastest NCCL candidate */
tt_status tune_decide(const struct tt_tune_ctx *ctx, tt_coll c, uint64_t s, double margin, tt_tune_decision *d,
                      tt_tune_estimate *best);
/* NCCL's NVLS-tree AllReduce bus bandwidth (GB/s) with the NVLS part of `intra` (tune_model_nccl.c) */
double tune_nccl_nvls_tree_bus(const struct tt_tune_ctx *ctx, const tt_graph_info *intra);
/* The launch cost a measured row of NCCL adds to the model's time: (G - 1) * group_launch_us when one thread
 * drove G GPUs (tune_model_cluster.c) */
double tune_row_launch_us(const tt_model_params *P, const tt_measurement *m);
/* NCCL's launch rule (topoGetAlgoInfo): the channels (CTAs) a call of `bytes` runs on */
int tune_nccl_launch_channels(const struct tt_tune_ctx *ctx, tt_algo a, tt_proto p, uint64_t bytes);
/* NCCL's algorithms as NCCL runs them (tune_model_cluster.c), the default model's candidates
 * ring, tree, NVLS, NVLS tree and PAT */
tt_status tune_cluster_eval(const struct tt_tune_ctx *ctx, tt_coll coll, tt_algo algo, tt_proto proto,
                            uint64_t bytes, tt_tune_estimate *out);
tt_status tune_topotune_eval(const struct tt_tune_ctx *ctx, tt_coll coll, tt_algo algo,
                             tt_proto proto, uint64_t bytes, tt_tune_estimate *out);

/* ---- The models' cost hooks per algorithm (tune_algos.c), keyed by the registry's id ---- */
/* One evaluation of topotune's model (tune_model_topotune.c); c and the rates below it are set per
 * channel count before each cost call. */
typedef struct {
    const struct tt_tune_ctx *ctx;
    const tt_proto_params *pp;
    tt_coll coll;
    tt_algo algo;
    tt_proto proto;
    int n, N, g, is_ar, bcred;  /* ranks, nodes, ranks per node; AllReduce; Broadcast or Reduce */
    double S;                   /* bytes */
    double a_in, a_net;         /* step latency, us */
    double bin, bnet;           /* GB/s: per GPU inside the node, per node on the network */
    double chunk;
    int c;                      /* channels */
    double cap;                 /* c * per-channel cap, GB/s */
    double Bin, Bnet, Bgnet;    /* bytes/us: inside the node, per node, per GPU on the network */
} tune_topo_eval;
/* An AllReduce of host ranks in the executor-shaped model (tune_model_exec_host.c): n ranks, L =
 * ceil(log2 n), S bytes, P = min(S, chunk); the hook sets its f[] terms and the accesses below. */
typedef struct { int n, L, pow2; double S, P; } tune_host_in;
typedef struct { double Wb, X, Bb, Bt; } tune_host_acc; /* busiest, cross-core, own buffer busiest/all */
typedef struct {
    tt_algo algo;
    /* topotune's model: 1 with why when the algorithm does not apply (NULL: it always does) */
    int (*topo_off)(const tune_topo_eval *e, char *why, size_t wl);
    /* topotune's model: add the latency part to *lat and the bandwidth part to *tb (us) at e->c
     * channels (NULL: not modelled) */
    void (*topo_cost)(const tune_topo_eval *e, double *lat, double *tb);
    /* executor-shaped model: an AllReduce of host ranks, 0 or -1 with why (NULL: host ranks do not
     * run it) */
    int (*host_allreduce)(const tune_host_in *in, double f[TT_EXEC_NPARAM], tune_host_acc *acc, char *why,
                          size_t wl);
} tune_algo_cost;
/* The hooks of `a`, NULL when the table has no line for it. */
const tune_algo_cost *tune_algo_cost_of(tt_algo a);

/* executor-shaped model (tune_model_exec.c): the coefficients of a row (tt_exec_params column
 * order: launch, steps, tree hops, busiest accesses, shared accesses, peers, first-page bytes,
 * missing accesses) with the protocol/algorithm it resolves to; 0 = ok, else why */
int tune_exec_terms(const tt_model_params *p, const tt_measurement *m, double f[TT_EXEC_NPARAM], int *proto_out,
                    int *algo_out, char *why, size_t wl);
double tune_exec_value(const tt_exec_params *e, const double f[TT_EXEC_NPARAM]);
/* the constants by column: the first EXEC_NGPU are every kind's, peer / xfer / dram / xcore / cache
 * host ranks' only, l2 the GPU kinds' only (tune_exec_param_applies); EXEC_CACHE (cache_MiB) scales the
 * host's EXEC_SHARED and EXEC_DRAM terms and is last (bit TT_EXEC_NCONST-1 of a fit's mask) */
enum { EXEC_LAUNCH, EXEC_STEP, EXEC_HOP, EXEC_CHAN, EXEC_SHARED, EXEC_PEER, EXEC_XFER, EXEC_DRAM, EXEC_L2, EXEC_XCORE,
       EXEC_CACHE };
#define EXEC_NGPU 5
int tune_exec_param_applies(int j, int kind);
/* per column: name, value, whether it is a rate in GB/s, its time coefficient (us per unit;
 * 1 / (GB/s 1e3) for rates, 0 = no term), and the range a calibration file may give it */
const char *tune_exec_param_name(int j);
double tune_exec_param_get(const tt_exec_params *e, int j);
void tune_exec_param_set(tt_exec_params *e, int j, double v);
int tune_exec_param_is_rate(int j);
double tune_exec_coef(const tt_exec_params *e, int j);
void tune_exec_param_range(int j, double *lo, double *hi);
/* pipeline chunks of `bytes` in pieces of `chunk`: ceil, at least 1 */
double tune_exec_chunks(double bytes, double chunk);
/* tune_model_exec_host.c: the terms of a host row run with `algo` (0 = ok, else why) */
/* executor facts of host ranks (exec/exec_internal.h, exec/exec_transport_shm.c) and the host model's
 * assumptions, shared by tune_model_exec_host.c and the host hooks of tune_algos.c */
#define HOST_CHUNK (512.0 * 1024)    /* EXEC_DEFAULT_CHUNK */
#define HOST_RING (1024.0 * 1024)    /* TOPOTUNE_SHM_RING_BYTES default */
#define XFER_PAGE 4096.0             /* MODEL ASSUMPTION: first page of a step's piece */
#define HIER_MSG_PER_STEP 0.25       /* MODEL ASSUMPTION: an arrived message / a synchronised step */
int tune_exec_terms_host(const tt_model_params *p, const tt_measurement *m, int algo, double f[TT_EXEC_NPARAM],
                         char *why, size_t wl);
/* tune_exec_fit.c: robust non-negative fit of p->exec[kind][proto] to the rows of that kind and
 * protocol (others ignored; host rows: the cache size by a grid search too); returns the rows used
 * (-1 = out of memory); identified: bit j set when constant j was fitted (unexercised ones keep
 * their start value; bit TT_EXEC_NCONST-1 = the cache size) */
int tune_exec_fit(const tt_model_params *p, const tt_measurement *const *rows, int nr, int kind, int proto,
                  tt_exec_params *out, unsigned *identified);

int tune_log2i(long n);
/* 1-based line of `at` in text[0..len) (for file:line in JSON errors). */
int tune_json_line(const char *text, const char *at, size_t len);
/* One table entry as written in JSON tables and as a row of NCCL's tuner CSV (tune_output.c);
 * shared by model tables and tables from measurements. */
struct cJSON;
struct cJSON *tune_entry_json(const tt_tune_entry *e);
void tune_entry_csv(const tt_tune_entry *e, int nnodes, int nranks, tt_strbuf *out);
/* The JSON table as a cJSON tree (tt_tune_write_json), and printing one (frees it; NULL = OOM). */
struct cJSON *tune_table_json(const tt_tune_ctx *ctx, const tt_tune_table *tab);
tt_status tune_json_print(struct cJSON *root, tt_strbuf *out);
/* The link class (constants of tt_model_params.link) of a path class: NVL/NVB -> NVL, C2C, SYS, NET/DIS -> NET,
 * PIX..PHB -> PCI (tune_names.c) */
tt_link_class tune_link_class_of(tt_path_type t);
/* the cluster a measured row ran on (tune_ctx.c) */
tt_status tune_row_cluster(const tt_cluster *base, const tt_measurement *m, tt_cluster *c);
/* Path class name without depending on the topo module's tables. */
const char *tune_path_name(tt_path_type t); /* floor(log2(n)), 0 for n <= 1 */

#endif
