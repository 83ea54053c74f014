/*
 * tt_tune.h - cost model, channel search and tuning tables.
 *
 * Pipeline:
 *   tt_cluster_from_topo()     cluster description (nodes, GPUs/NICs per node, NIC speed,
 *                              rails) with defaults taken from one node's topology graph;
 *   tt_tune_channels_compute() what NCCL's graph search would produce for ring, tree and
 *                              NVLS (nChannels, bwIntra, bwInter, typeIntra, typeInter, ...);
 *   tt_tune_ctx_init()         prepares one model (TT_MODEL_NCCL = NCCL's own formulas,
 *                              TT_MODEL_TOPOTUNE = our alpha-beta model, the default);
 *   tt_tune_eval()             latency, bandwidth and predicted time of one candidate
 *                              (collective, algorithm, protocol, size), or why it is disabled;
 *   tt_tune_table_build()      fastest candidate per power-of-two size, merged into ranges;
 *   tt_tune_write_*()          JSON, NCCL tuner CSV, human table, --explain, env hints.
 *
 * Units: bandwidth GB/s (1e9 B/s), time/latency microseconds, sizes bytes.
 * Sizes follow NCCL's nBytes (and nccl-tests' size column): the whole buffer for
 * AllReduce/Broadcast/Reduce, the whole gathered buffer (count * nranks) for AllGather and
 * ReduceScatter.  algbw = bytes / time; busbw = algbw * (2(n-1)/n AllReduce, (n-1)/n
 * AllGather/ReduceScatter, 1 Broadcast/Reduce), as nccl-tests defines them.
 * Every formula and constant is documented in docs/model.md.
 */
#ifndef TT_TUNE_H
#define TT_TUNE_H

#include <stdint.h>

#include "tt_common.h"
#include "tt_topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tt_coll, tt_algo, tt_proto and their names/parsers live in tt_common.h (shared with exec/). */

typedef enum { TT_MODEL_TOPOTUNE = 0, TT_MODEL_NCCL = 1 } tt_model_kind;

const char *tt_model_name(tt_model_kind m); /* "topotune", "nccl" */
tt_status tt_model_parse(const char *s, tt_model_kind *out);

/* ---- cluster description ---- */
typedef enum { TT_CPU_INTEL = 0, TT_CPU_AMD = 1, TT_CPU_OTHER = 2 } tt_cpu_vendor;

/* ---- the network between the nodes (tune_fabric.c) ---- */
typedef enum {
    TT_FABRIC_IB = 0,     /* InfiniBand (verbs) */
    TT_FABRIC_ROCE = 1,   /* RDMA over Converged Ethernet (verbs) */
    TT_FABRIC_EFA = 2,    /* AWS Elastic Fabric Adapter (libfabric SRD, aws-ofi-nccl) */
    TT_FABRIC_TCPX = 3,   /* Google GPUDirect-TCPX / TCPXO (GPU memory over TCP) */
    TT_FABRIC_SOCKET = 4, /* NCCL's socket transport (host memory, TCP) */
    TT_FABRIC_COUNT = 5
} tt_fabric;
typedef enum { TT_FABRIC_ASSUMED = 0, TT_FABRIC_DETECTED = 1, TT_FABRIC_GIVEN = 2 } tt_fabric_origin;
const char *tt_fabric_name(tt_fabric f);               /* "ib", "roce", "efa", "tcpx", "socket" */
const char *tt_fabric_title(tt_fabric f);              /* "InfiniBand", ... */
const char *tt_fabric_origin_name(tt_fabric_origin o); /* "assumed", "detected", "given" */
/* "ib", "infiniband", "roce", "efa", "tcpx", "tcpxo", "socket", "sockets", "tcp" (any case) */
tt_status tt_fabric_parse(const char *s, tt_fabric *out);
/* The fabric the topology's NET ports show (link layer, NIC vendor, device names; the majority of
 * the ports), origin TT_FABRIC_DETECTED; nothing to read: InfiniBand, TT_FABRIC_ASSUMED.  why: one
 * line saying what told it. */
tt_status tt_fabric_detect(const tt_topo *t, tt_fabric *out, tt_fabric_origin *origin, char *why, size_t wl);

typedef struct {
    int nodes;            /* >= 1 */
    int gpus_per_node;    /* ranks per node, 1 .. GPUs in the topology */
    int nics_per_node;    /* NET ports per node used for inter-node traffic (0 = none) */
    double nic_gbps;      /* port speed in Gb/s (400 = NDR); 0 only when nics_per_node = 0 */
    int rails;            /* distinct rails (rail-optimised fabric: = nics_per_node); 1 = flat */
    /* filled by tt_cluster_from_topo(), informative */
    int topo_gpus;        /* GPUs in the topology */
    int topo_nics;        /* NET ports in the topology */
    double topo_nic_gbps; /* fastest NET port speed in the topology, Gb/s (0 = none) */
    int min_sm, max_sm;   /* compute capability x10 (90 = Hopper); AMD GPUs: the mapped
                           * class (tt_node gpu.cc, topo_amd.c), not RCCL's sm */
    tt_cpu_vendor cpu_vendor;
    int cpu_arm;          /* 1 on arm64/aarch64 hosts */
    int nvswitch;         /* 1 when the GPUs share an NVSwitch node */
    int numa_known;       /* 0 when every CPU node has numaid -1 (typical of VMs) */
    int xgmi;             /* 1 when the GPUs are AMD GPUs joined by xGMI links (RCCL's dialect) */
    tt_fabric fabric;     /* the network between the nodes (tt_fabric_detect, --fabric) */
    tt_fabric_origin fabric_origin;
    char fabric_why[200]; /* what told it: "port mlx5_0: link layer InfiniBand (8 of 8 ports)", "--fabric efa" */
} tt_cluster;

/* Defaults: 1 node, every GPU of the topology, its NET ports at their speed, rails = NICs.
 * Fails (TT_ERR_INVALID) when the topology has no GPU. */
tt_status tt_cluster_from_topo(const tt_topo *t, tt_cluster *out);
/* Consistency: nodes >= 1, 1 <= gpus_per_node <= topo_gpus, nics_per_node >= 0,
 * nic_gbps > 0 when nics_per_node > 0, nodes > 1 needs nics_per_node > 0, rails in
 * [1, max(1, nics_per_node)].  The message names the field. */
tt_status tt_cluster_validate(const tt_cluster *c);

/* ---- channels (what NCCL's graph search would produce) ---- */
typedef enum {
    TT_PATTERN_NONE = 0,
    TT_PATTERN_BALANCED_TREE = 1,
    TT_PATTERN_SPLIT_TREE = 2,
    TT_PATTERN_TREE = 3,
    TT_PATTERN_RING = 4,
    TT_PATTERN_NVLS = 5
} tt_pattern;

typedef struct {
    int found;              /* 0 = no graph (e.g. NVLS without NVSwitch) */
    int nchannels;          /* search channels (model input) */
    double bw_intra;        /* GB/s per channel inside a node */
    double bw_inter;        /* GB/s per channel on the network (= bw_intra on one node) */
    tt_path_type type_intra;/* worst GPU<->GPU path class used */
    tt_path_type type_inter;/* worst GPU<->NET path class used (PIX when no NET) */
    tt_pattern pattern;
    int same_channels;      /* 1 when every channel visits the GPUs in the same order */
    double latency_inter;   /* NET latency, us (0 for IB/sockets, as NCCL) */
} tt_graph_info;

typedef struct {
    tt_graph_info ring, tree, nvls;
    int comm_channels;      /* CTAs NCCL runs ring/tree on (ncclTopoPostset doubling) */
    int nvls_channels;      /* CTAs NCCL runs NVLS on */
    int nvls_support;       /* NVSwitch present, SM90+, >= 2 local ranks */
    double total_bw;        /* max over GPUs of max(PCI link, sum of NVLink) GB/s */
    double max_bw;          /* best GPU->GPU (1 node) or GPU->NET path bandwidth */
    double node_net_bw;     /* sum over used NICs of min(path, port) GB/s (0 on 1 node) */
    double gpu_nvl_bw;      /* NVLink GB/s per GPU (0 without NVLink) */
} tt_tune_channels;

tt_status tt_tune_channels_compute(const tt_topo *t, const tt_cluster *c, tt_tune_channels *out);

/* ---- topotune model parameters (calibration) ---- */
typedef enum {
    TT_LCLASS_NVL = 0,
    TT_LCLASS_C2C = 1,
    TT_LCLASS_PCI = 2,
    TT_LCLASS_SYS = 3,
    TT_LCLASS_NET = 4,
    TT_LCLASS_COUNT = 5
} tt_link_class;
const char *tt_link_class_name(tt_link_class c); /* "NVL", "C2C", "PCI", "SYS", "NET" */

typedef struct {
    double alpha_us;      /* latency of one step across a link of this class */
    double beta_GBps;     /* achievable bandwidth per GPU (NET: per NIC); 0 = from topology */
    double efficiency;    /* fraction of the topology bandwidth reached when beta is 0 */
} tt_link_params;

typedef struct {
    double base_us;          /* launch + setup, once per call */
    double step_us;          /* extra per pipeline step (handshake/flags) */
    double efficiency;       /* payload fraction of the wire (LL 0.5, LL128 120/128, Simple 1) */
    double per_channel_GBps; /* what one channel (CTA) can move */
    double chunk_bytes;      /* pipeline chunk per channel */
} tt_proto_params;

/* NCCL's algorithms per protocol (tune_model_cluster.c): fitted on published clusters */
typedef struct {
    double base_us;          /* launch and setup of a call */
    double step_us;          /* added to the link's alpha on every in-node step */
    double pipeline;         /* medium sizes: min(2 sqrt(pipeline * hops_us * bytes / bw), pipeline_cap * hops_us) */
} tt_nccl_proto_params;

/* Our executor's ranks, by what they share (tune_model_exec.c, docs/model.md "Our executor"):
 * the executor-shaped model evaluates rows these ranks ran; NCCL's rows (and rows of unknown
 * origin) keep the topology model. */
typedef enum {
    TT_RANKS_NONE = 0,    /* not our executor (NCCL, nccl-tests) or unknown */
    TT_RANKS_HOST = 1,    /* host ranks (threads/processes, shared memory): share DRAM and cores */
    TT_RANKS_VIRTUAL = 2, /* several GPU ranks on ONE GPU: share its HBM and SMs */
    TT_RANKS_GPU = 3,     /* one GPU rank per GPU (our kernels over NVLink/PCIe/host staging) */
    TT_RANKS_KIND_COUNT = 4
} tt_exec_kind;
const char *tt_exec_kind_name(tt_exec_kind k); /* "none", "host", "virtual", "gpu" */

/* Constants of the executor-shaped model, per (kind, protocol).  time =
 *   launch_us + step_us * ring/exchange steps + hop_us * tree hops + peer_us * peers met
 *   + busiest rank's memory accesses / chan_GBps + accesses of all ranks sharing one memory / shared_GBps
 *   + the first page of each step's data moved between cores / xfer_GBps
 *   + busiest rank's accesses that miss its cache / dram_GBps
 *   + host: the busiest rank's accesses to lines another core's cache holds (the pair's ring) / xcore_GBps
 *   + GPU kinds: every access of the ranks on one GPU / l2_GBps
 * (docs/model.md, "Our executor").  The shared and dram terms of host ranks count the fraction
 * S / (S + cache) of the accesses (S = one rank's buffer): cache_MiB is fitted by a grid search,
 * the other eight enter linearly.  Host ranks beyond host_cores: steps and accesses scaled by
 * ranks/cores (time-sliced).  A rate of 0 leaves its term out (a kind whose schedule has none). */
typedef struct {
    double launch_us;    /* per call (kernel launch / host call overhead) */
    double step_us;      /* per synchronised step of a ring or pairwise exchange, per chunk */
    double hop_us;       /* per hop of the binary tree pipeline, per chunk */
    double chan_GBps;    /* memory accesses one rank's channel (block / thread) makes per second */
    double shared_GBps;  /* memory accesses per second of the memory the ranks share */
    double peer_us;      /* host: first message of a call to each further peer (its header, cold lines) */
    double xfer_GBps;    /* host: rate of the first page of each step's data as it moves between cores */
    double dram_GBps;    /* host: the busiest rank's rate for its accesses that miss the cache */
    double cache_MiB;    /* host: one rank's buffer size at which half its accesses miss (0 = all miss) */
    double l2_GBps;      /* GPU kinds: every access of the ranks on one GPU, cached or not (its L2 and
                          * fabric), per second; 0 = no such term */
    double xcore_GBps;   /* host: the extra cost of an access to a line another core's cache holds (a
                          * send's writes into the pair's ring, a receive's reads out of it), per second;
                          * 0 = no such term */
} tt_exec_params;
#define TT_EXEC_NPARAM 10 /* linear columns: launch step hop chan shared peer xfer dram l2 xcore */
#define TT_EXEC_NCONST 11 /* with cache_MiB (fitted by a grid, not linearly) */

/* The network between the nodes, per fabric (MODEL ASSUMPTIONS from public figures, tune_params.c) */
typedef struct {
    double hop_us[TT_PROTO_COUNT]; /* one step of an algorithm across the network (LL, LL128, Simple):
                                    * post, wire, completion, the proxy threads of both ends */
    double efficiency;             /* fraction of the ports' speed NCCL moves at large sizes */
    double hop_scale_pre_sm90;     /* hop_us times this on clusters of pre-Hopper GPUs (EFA: the first EFA
                                    * generation of p4d/p4de against EFAv2 of p5 and later; 1 elsewhere) */
} tt_fabric_params;

typedef struct {
    tt_link_params link[TT_LCLASS_COUNT];
    tt_fabric_params fabric[TT_FABRIC_COUNT];
    tt_proto_params proto[TT_PROTO_COUNT];      /* topotune's own algorithms (and the protocols' payload) */
    tt_nccl_proto_params nccl[TT_PROTO_COUNT];  /* NCCL's algorithms */
    double nccl_pipeline_cap;
    tt_exec_params exec[TT_RANKS_KIND_COUNT][TT_PROTO_COUNT]; /* [TT_RANKS_NONE] unused */
    double host_cores;       /* cores host ranks run on (0 = enough: no time slicing) */
    double nvls_efficiency;  /* NVSwitch multicast AllReduce efficiency */
    double nvls_alpha_us;    /* NVLS step latency */
    double channel_us;       /* cost of each channel (CTA launch/sync) per call */
    double group_launch_us;  /* NCCL's algorithms, rows whose thread drove several GPUs (nccl-tests -g N):
                              * each further GPU of the group adds its kernel launch (tune_model_cluster.c) */
    int max_channels;        /* channels considered, upper bound */
    char source[256];        /* "built-in" or the calibration file name */
} tt_model_params;

void tt_model_params_default(tt_model_params *p);
/* Read a calibration file over the defaults:
 * {"schema":"topotune-calibration","version":1,
 *  "links":{"NVL":{"alpha_us":..,"beta_GBps":..,"efficiency":..},...},
 *  "protocols":{"LL":{"base_us":..,"step_us":..,"efficiency":..,"per_channel_GBps":..,
 *               "chunk_bytes":..},...},
 *  "nvls":{"efficiency":..,"alpha_us":..}, "channel_us":.., "max_channels":N}
 * Every member is optional; unknown members, wrong types and out-of-range values are
 * errors naming the member (TT_ERR_PARSE / TT_ERR_INVALID). */
tt_status tt_model_params_load(const char *path, tt_model_params *p);
tt_status tt_model_params_parse(const char *json, const char *name, tt_model_params *p);

/* ---- evaluation ---- */
typedef struct tt_tune_ctx tt_tune_ctx;

tt_status tt_tune_ctx_new(const tt_topo *t, const tt_cluster *c, tt_model_kind model,
                          const tt_model_params *params /* NULL = defaults */,
                          tt_tune_ctx **out);
void tt_tune_ctx_free(tt_tune_ctx *ctx);
const tt_tune_channels *tt_tune_ctx_channels(const tt_tune_ctx *ctx);
const tt_cluster *tt_tune_ctx_cluster(const tt_tune_ctx *ctx);
tt_model_kind tt_tune_ctx_model(const tt_tune_ctx *ctx);
int tt_tune_ctx_nranks(const tt_tune_ctx *ctx);

typedef struct {
    int enabled;         /* 0: `reason` says why */
    char reason[120];
    double lat_us;       /* size-independent part */
    double bw_GBps;      /* model bandwidth: NCCL mode = NCCL's algorithm bandwidth;
                            topotune mode = bytes / (time - lat) */
    double time_us;      /* predicted time */
    double algbw;        /* bytes / time (GB/s) */
    double busbw;        /* algbw * nccl-tests factor */
    int channels;        /* channels (CTAs) the call would use */
} tt_tune_estimate;

tt_status tt_tune_eval(const tt_tune_ctx *ctx, tt_coll coll, tt_algo algo, tt_proto proto,
                       uint64_t bytes, tt_tune_estimate *out);
/* Fastest enabled candidate; nccl_only restricts to NCCL's algorithms (ids 0..6).
 * Ties go to the lower (algorithm, protocol) id as in NCCL. TT_ERR_NOT_FOUND if none. */
tt_status tt_tune_best(const tt_tune_ctx *ctx, tt_coll coll, uint64_t bytes, int nccl_only,
                       tt_algo *algo, tt_proto *proto, tt_tune_estimate *out);
/* What NCCL itself runs at `bytes`: the arg-min of NCCL's own model (NCCL algorithms, ties to the
 * lower id as NCCL), whatever model the context is; TT_ERR_NOT_FOUND if none. */
tt_status tt_nccl_choice(const tt_tune_ctx *ctx, tt_coll coll, uint64_t bytes, tt_algo *algo, tt_proto *proto);
/* Smallest size in (lo, hi] whose fastest (algorithm, protocol) differs from the one at
 * lo, found by bisection (exact when the choice changes once in the interval); *at = 0
 * when the choice at hi equals the one at lo. */
tt_status tt_tune_crossover(const tt_tune_ctx *ctx, tt_coll coll, uint64_t lo, uint64_t hi, int nccl_only,
                            uint64_t *at);
/* tt_busbw_factor (nccl-tests' bus bandwidth factor) is in tt_common.h. */

/* ---- tables ---- (entries: tt_tune_entry, tt_common.h) */

/* Why a size of a table for NCCL forces a candidate or leaves NCCL's choice (tt_tune_table_build_keep_nccl) */
typedef struct {
    tt_coll coll;
    uint64_t bytes;
    tt_algo nccl_algo;      /* NCCL's own choice (tt_nccl_choice) */
    tt_proto nccl_proto;
    double nccl_us;         /* the model's time of it */
    tt_algo best_algo;      /* the model's fastest NCCL candidate */
    tt_proto best_proto;
    double best_us;
    double gain;            /* nccl_us / best_us - 1 (0 when they are the same) */
    double error;           /* the model's worst error in the size's regime (tt_model_trust), < 0 = never measured */
    double need;            /* the gain forcing takes here: (1 + error) / (1 - error) - 1, at least the margin;
                             * < 0 = never (regime never measured, or error >= 1) */
    int forced;
    char regime[96];
    char why[320];
} tt_tune_decision;

typedef struct {
    tt_tune_entry *entries;
    int n, cap;
    tt_tune_decision *dec;           /* tables for NCCL (keeps_nccl): one decision per sweep size */
    int ndec, capdec;
    int nodes, ranks;                /* the communicator shape the table was made for */
    char model[16];                  /* "nccl", "topotune", "measured", ... ("" = not said) */
    uint64_t min_size, max_size;     /* power-of-two sweep bounds (built tables) */
    int nccl_only;
    unsigned colls;                  /* bit mask of collectives, 1u << tt_coll */
    int keeps_nccl;                  /* 1: built by tt_tune_table_build_keep_nccl: sizes without an
                                      * entry are left to NCCL (the plugin keeps NCCL's choice) */
    double keep_margin;              /* its margin (fraction) */
} tt_tune_table;

#define TT_TUNE_MIN_SIZE 8ULL
#define TT_TUNE_MAX_SIZE (16ULL << 30)

/* Evaluate every power of two in [min_size, max_size] for each collective in `colls`,
 * pick the fastest, merge equal consecutive choices (same algorithm, protocol, channels)
 * into ranges: the choice at sweep size s covers [s, 2s-1], the first range of a
 * collective starts at 0 and the last ends at 2*max_size-1.  Order: allreduce, allgather,
 * reducescatter, broadcast, reduce. */
tt_status tt_tune_table_build(const tt_tune_ctx *ctx, unsigned colls, uint64_t min_size,
                              uint64_t max_size, int nccl_only, tt_tune_table *out);
/* The table for NCCL that never makes NCCL slower (the tuner plugin's and the CSV's; docs/model.md
 * "Tables for NCCL"): per power-of-two size, NCCL's own choice is the arg-min of NCCL's model
 * (tt_nccl_choice); the size gets an entry only when `ctx`'s fastest NCCL candidate differs from it
 * AND is predicted faster than NCCL's choice by more than the model can be wrong in that regime:
 * t_nccl_choice / t_best - 1 > max(margin, (1 + e) / (1 - e) - 1), e = the regime's worst error on
 * the corpus of published clusters (tt_model_trust); a regime never measured forces nothing.
 * Entries carry channels 0 (NCCL picks the channel count, as in a forced NCCL_ALGO/NCCL_PROTO run);
 * every other size has no entry: NCCL decides.  Forced ranges cover [s, 2s-1] as in
 * tt_tune_table_build; out->dec says, per size, why it forces or keeps. */
tt_status tt_tune_table_build_keep_nccl(const tt_tune_ctx *ctx, unsigned colls, uint64_t min_size,
                                        uint64_t max_size, double margin, tt_tune_table *out);
void tt_tune_table_free(tt_tune_table *t);

/* {"schema":"topotune-tuning-table","version":1,"topology":{...},"nodes":..,"ranks":..,
 *  "model":..,"entries":[{collective,min_bytes,max_bytes,algorithm,protocol,channels,
 *  predicted_us,algbw,busbw},...]} */
tt_status tt_tune_write_json(const tt_tune_ctx *ctx, const tt_tune_table *tab, tt_strbuf *out);
/* NCCL example tuner plugin CSV: collective_type,min_bytes,max_bytes,algorithm,protocol,
 * channels,nNodes,nRanks,numPipeOps,regBuff (numPipeOps/regBuff -1 = any).  Only NCCL
 * algorithms are written; TT_ERR_INVALID if the table holds others.  Channels are explicit
 * (an entry without a count gets the model's launch channels, the range split where they
 * change; tune_table_csv.c). */
tt_status tt_tune_write_csv(const tt_tune_ctx *ctx, const tt_tune_table *tab, tt_strbuf *out);
/* ---- table sets: one table per communicator shape (tune_table_set.c; topo-tune --shapes) ----
 * A process with tensor-, data- and pipeline-parallel communicators of different sizes tunes all
 * of them from one file.  Shape RxN = R ranks on N nodes of the topology's node, R/N GPUs per
 * node (N must divide R).  JSON: {"schema":"topotune-tuning-table-set","version":1,
 * "tables":[one topotune-tuning-table per shape]}; CSV: every shape's rows, told apart by the
 * nNodes/nRanks columns. */
typedef struct {
    int nranks, nnodes;
} tt_tune_shape;
typedef struct {
    tt_model_kind model;
    const tt_model_params *params; /* NULL = defaults */
    unsigned colls;
    uint64_t min_size, max_size;
    int nccl_only;
    double keep_margin;            /* >= 0: tt_tune_table_build_keep_nccl with this margin; < 0: full tables */
} tt_tune_set_opts;
typedef struct {
    int n;
    tt_tune_shape *shapes;
    tt_tune_ctx **ctx;             /* per shape */
    tt_tune_table *tab;            /* per shape */
} tt_tune_set;
/* One table per shape on `topo` with the cluster `base` (NICs, rails, speed); errors name the
 * shape.  Shapes must differ. */
tt_status tt_tune_set_build(const tt_topo *topo, const tt_cluster *base, const tt_tune_shape *shapes, int n,
                            const tt_tune_set_opts *o, tt_tune_set *out);
void tt_tune_set_free(tt_tune_set *s);
tt_status tt_tune_set_write_json(const tt_tune_set *s, tt_strbuf *out);
tt_status tt_tune_set_write_csv(const tt_tune_set *s, tt_strbuf *out);
tt_status tt_tune_set_write_text(const tt_tune_set *s, tt_strbuf *out);
/* Parse "2x1,4x1,8x1,16x2" (ranks x nodes; *out: free() it); TT_ERR_INVALID "'S': want a
 * comma-separated list of RANKSxNODES, ..." for anything else. */
tt_status tt_tune_shapes_parse(const char *s, tt_tune_shape **out, int *n);
/* Human table with crossover sizes. */
tt_status tt_tune_write_text(const tt_tune_ctx *ctx, const tt_tune_table *tab, tt_strbuf *out);
/* Every candidate at `bytes` for the collectives in `colls`, time or reason. */
tt_status tt_tune_write_explain(const tt_tune_ctx *ctx, unsigned colls, uint64_t bytes,
                                tt_strbuf *out);
/* NCCL environment hints (shell `export` lines, each after a `# reason` comment). */
tt_status tt_tune_write_env(const tt_topo *t, const tt_tune_ctx *ctx, tt_strbuf *out);

/* Read a JSON table written by tt_tune_write_json (topo-exec --table, --validate, the tuner
 * plugin, topo-tune --judge): `name` labels errors, which give name:line for broken JSON and
 * the entry index for a bad entry.  Free with tt_tune_table_free. */
tt_status tt_tune_table_parse(const char *json, const char *name, tt_tune_table *out);
/* tt_tune_table_parse of a file (at most 64 MiB). */
tt_status tt_tune_table_load(const char *path, tt_tune_table *out);
/* tt_tune_table_load, then refuse (TT_ERR_INVALID, naming both shapes and how to build the
 * right table) a table made for another rank count; nodes 0 = do not compare nodes. */
tt_status tt_tune_table_load_for(const char *path, int nranks, int nodes, tt_tune_table *out);
/* The entry for (coll, bytes), NULL when the table has none. */
const tt_tune_entry *tt_tune_table_find(const tt_tune_table *t, tt_coll coll, uint64_t bytes);


/* ---- measurements (tune_measure*.c) ----
 * Results of real runs, read from topo-exec -J JSON, nccl-tests -J JSON (schema versions 1-3),
 * nccl-tests / topo-exec text tables in every layout nccl-tests has printed (2017's "bytes N type
 * op" in ms, 2019-2022's without the root column, today's; found from the column header, or from
 * the row's shape without one), several tables concatenated, launcher prefixes ("[1,0]<stdout>:",
 * "0: ", "[0] ", "host: "), and our fact tables of published results ("# topotune published
 * result, version 1", tests/fixtures/published/README.md); docs/calibration.md §1.  One row per
 * (size, table); size-0 rows are skipped; time_us is the faster of the
 * out-of-place and in-place placements that were measured.  Rows of one file that measured the same
 * thing again (topo-exec --cycles, nccl-tests -N, runs of one plan concatenated: same collective,
 * size, ranks, nodes, algorithm, protocol, channels, executor) are one row: the fastest time of
 * each placement (the run least disturbed by the rest of the machine), `repeats` counting them. */
typedef struct {
    tt_coll coll;
    uint64_t bytes;        /* nccl-tests size column (NCCL nBytes) */
    int nranks;            /* 0 = unknown */
    int nodes;             /* distinct hosts; 0 = unknown */
    int algo;              /* tt_algo, or -1 = not recorded (NCCL's own choice) */
    int proto;             /* tt_proto, or -1 = not recorded */
    int channels;          /* 0 = not recorded */
    int topotune_tree;     /* 1: run by topotune's executor, whose tree is a binary tree in heap
                            * order (2 log2 n hops in a node), not NCCL's chain */
    int exec_kind;         /* tt_exec_kind: which of our executor's ranks ran it (0 = not ours / unknown) */
    double time_oop_us;    /* out-of-place time, < 0 when absent */
    double time_ip_us;     /* in-place time, < 0 when absent */
    double time_us;        /* min of the two present ones (> 0) */
    double busbw;          /* busbw at time_us, as the file gives it (GB/s) */
    int repeats;           /* rows of the file merged into this one (1 = measured once) */
    double slowest_us;     /* the slowest repeat (each repeat's faster placement): slowest_us / time_us - 1 is
                            * the row's own spread, how far apart the machine put the same measurement
                            * (= time_us when measured once; 0 when the row did not come from a file) */
    double parity_us[2];   /* the fastest of the odd (1st, 3rd, ...) and of the even (2nd, 4th, ...) repeats: two
                            * independent estimates of the same row ([1] = 0 when measured once) */
    char where[112];       /* "file:line" or "file: results[i]" (the first of the repeats) */
    int gpus_per_thread;   /* GPUs one thread of the run drove (nccl-tests -g N: "nGpus N"); 0 = not said (one) */
} tt_measurement;

typedef struct {
    tt_measurement *m;
    int n, cap;
} tt_measure_set;

/* Defaults for what a file may not say (text tables without a header, ...). */
typedef struct {
    int coll;    /* tt_coll or -1: the file must name it */
    int nranks;  /* 0: from the file */
    int nodes;   /* 0: from the file */
} tt_measure_opts;
#define TT_MEASURE_OPTS_DEFAULT ((tt_measure_opts){-1, 0, 0})

/* Append the rows of one file (format detected from the content).  Malformed input gives
 * TT_ERR_PARSE naming file:line (text) or the JSON member; nothing is appended then. */
tt_status tt_measure_load(const char *path, const tt_measure_opts *opts, tt_measure_set *set);
/* tt_measure_load of each of `n` files (n 0: TT_ERR_INVALID "no measurement file given"). */
tt_status tt_measure_load_files(const char *const *files, int n, const tt_measure_opts *o, tt_measure_set *ms);
tt_status tt_measure_parse(const char *text, size_t len, const char *name, const tt_measure_opts *opts,
                           tt_measure_set *set);
void tt_measure_set_free(tt_measure_set *set);
/* Algorithm names of tune and of topo-exec ("halving-doubling" = rhd, "hierarchical" = hier). */
tt_status tt_measure_algo_parse(const char *s, tt_algo *out);
/* "ring/simple"; no recorded algorithm: "default" (our executor's default plan) or "nccl" (NCCL's
 * own choice); no recorded protocol: "any".  Returns b. */
const char *tt_measure_cand_name(const tt_measurement *m, char *b, size_t n);

/* Repeatability of a set's rows measured at least twice: per row the two independent estimates
 * (fastest of the odd and of the even repeats, parity_us) differ by |a - b| / min(a, b); with
 * cycles interleaved in time (topo-exec runs of every plan, then every plan again) this is how far
 * apart the machine puts one measurement, a floor under any model's error on single rows.
 * exec_kind / nranks: only those rows (0 = any).  nrows 0 when no row was measured twice. */
typedef struct {
    int nrows;
    double median, worst;
    char worst_row[160]; /* "ring/simple 4194304 B, 8 ranks: 1530.56 us against 1102.48 us" */
} tt_repeatability;
tt_status tt_measure_repeatability(const tt_measure_set *ms, int exec_kind, int nranks, tt_repeatability *out);

/* ---- a tuning table from measurements (tune_measured.c) ----
 * For operators who measured every candidate: sweeps with one (algorithm, protocol) forced each,
 * plus sweeps with NCCL's own choice (rows without an algorithm) as the baseline, all of one
 * communicator shape.  Per measured size the fastest candidate (median of repeats) is forced
 * when it beats the baseline by at least `margin` (fraction), else the size is left to NCCL
 * (no entry).  Size s_i decides up to the geometric midpoint with its neighbours. */
typedef struct {
    tt_coll coll;
    uint64_t bytes;                  /* measured size */
    uint64_t min_bytes, max_bytes;   /* range it decides for */
    tt_algo algo;                    /* fastest candidate (TT_ALGO_DEFAULT: none measured) */
    tt_proto proto;
    int ncand;                       /* candidates measured at this size */
    double best_us, base_us;         /* fastest candidate; NCCL's own choice (< 0: not measured) */
    int forced;                      /* 1: the table forces the fastest candidate here */
} tt_measured_row;
typedef struct {
    tt_measured_row *rows;
    int n;
    int nranks, nodes;
    double margin;
} tt_measured_table;
tt_status tt_tune_measured_build(const tt_measure_set *ms, double margin, int nccl_only, tt_measured_table *out);
void tt_measured_table_free(tt_measured_table *t);
/* JSON table (schema topotune-tuning-table, model "measured", forced ranges as entries, every
 * size under "decisions"), NCCL tuner CSV, human table. */
tt_status tt_measured_write_json(const tt_measured_table *t, const char *sources, tt_strbuf *out);
tt_status tt_measured_write_csv(const tt_measured_table *t, tt_strbuf *out);
tt_status tt_measured_write_text(const tt_measured_table *t, tt_strbuf *out);

/* ---- calibration (tune_calibrate.c) ----
 * Fits the topotune model's constants to measurements: robust (Cauchy loss on log(pred/meas),
 * annealed scale 100% -> 10%), bounded (latencies >= 0.001 us, bandwidth never above what the
 * topology's links carry), with a weak pull towards the starting values so that constants the
 * data cannot separate stay where they were.  Fitted: alpha and bandwidth (efficiency, or beta
 * when the start has beta set) of every link class the data exercises, base_us of every
 * protocol seen, NVLS efficiency/alpha when NVLS rows exist.  Each measurement is evaluated
 * with the cluster (nodes, ranks per node) it was taken on; rows with an unknown algorithm
 * or protocol are compared with the model's best NCCL candidate. */
#define TT_CALIB_MAX_PARAMS 64
typedef struct {
    int kind, proto, nrows, nsweeps, min_ranks, max_ranks; /* tt_exec_kind, tt_proto */
    uint64_t min_bytes, max_bytes;
} tt_calib_group;
typedef struct {
    int npoints;                     /* rows used */
    int nskipped;                    /* rows the model cannot evaluate (reason logged) */
    int nparams;
    char name[TT_CALIB_MAX_PARAMS][40];
    double before[TT_CALIB_MAX_PARAMS], after[TT_CALIB_MAX_PARAMS], lo[TT_CALIB_MAX_PARAMS],
        hi[TT_CALIB_MAX_PARAMS];
    /* |pred - meas| / meas over the rows used */
    double med_before, worst_before, med_after, worst_after;
    /* per row (index into the measure set; -1 = skipped) */
    int *row;
    double *pred_before, *pred_after;
    int nrows;
    /* executor-shaped constants (names "exec.<kind>.<proto>.<constant>"): leave-one-sweep-out
     * range of the fitted value (equal to after[] when one sweep alone sets it, or for the
     * topology model's constants), and the rows that set it (its term >= 30% of the predicted time) */
    double spread_lo[TT_CALIB_MAX_PARAMS], spread_hi[TT_CALIB_MAX_PARAMS];
    int nset[TT_CALIB_MAX_PARAMS];
    char setby[TT_CALIB_MAX_PARAMS][96];
    /* what each (kind, protocol) group was fitted on: predictions outside it are extrapolations */
    tt_calib_group group[TT_RANKS_KIND_COUNT * TT_PROTO_COUNT];
    int ngroups;
} tt_calib_report;

tt_status tt_calibrate(const tt_topo *t, const tt_cluster *base, const tt_measure_set *ms,
                       const tt_model_params *start, tt_model_params *fitted, tt_calib_report *rep);
void tt_calib_report_free(tt_calib_report *rep);
/* Model prediction for one measured row (its cluster, algorithm/protocol or best NCCL choice). */
tt_status tt_calib_predict(const tt_topo *t, const tt_cluster *base, const tt_model_params *p,
                           const tt_measurement *m, double *pred_us);
/* ---- NCCL rows: measurements of NCCL itself, with NCCL's structure (tune_nccl_rows.c) ----
 * An NCCL row's (algorithm, protocol) is its own when forced, else NCCL's choice (the arg-min
 * of NCCL's model); its time is NCCL's model latency/bandwidth of that candidate corrected by
 * the absolute-time layer of a known part (docs/model.md, "NCCL rows: absolute time"). */
/* The part whose correction applies ("sm90-nvl18-1node", or "none (...)"). */
const char *tt_nccl_part_name(const tt_tune_ctx *ctx, tt_coll coll);
/* tt_tune_eval on a TT_MODEL_NCCL context, then the part's absolute-time correction. */
tt_status tt_nccl_abs_eval(const tt_tune_ctx *ctx, tt_coll coll, tt_algo algo, tt_proto proto, uint64_t bytes,
                           tt_tune_estimate *out);
/* One NCCL row on a TT_MODEL_NCCL context of its cluster: time and the candidate it ran (or
 * NCCL would pick).  Rows of topotune's executor: TT_ERR_UNSUPPORTED. */
tt_status tt_nccl_row_eval(const tt_tune_ctx *ctx, const tt_measurement *m, double *us, tt_algo *algo,
                           tt_proto *proto);
/* How well NCCL's structure explains measured NCCL rows (tune_nccl_report.c; topo-tune
 * --calibrate --model nccl): a per-row table and summary lines appended to r, and the figures
 * in sum ([0] rows of NCCL's own choice, [1] forced rows; [..][0] NCCL's model, [..][1] with
 * the absolute-time layer).  Nothing is fitted.  TT_ERR_INVALID when no row could be used. */
typedef struct {
    int used, skipped, rows[2];
    double median[2][2], worst[2][2]; /* fractions */
    const char *part;                 /* the part whose correction applied, NULL if none */
} tt_nccl_rows_summary;
tt_status tt_nccl_rows_report(const tt_topo *t, const tt_cluster *base, const tt_measure_set *ms, tt_strbuf *r,
                              tt_nccl_rows_summary *sum);
/* The one evaluation path of the measurement modes: TT_MODEL_NCCL -> tt_nccl_row_eval on the
 * row's cluster; TT_MODEL_TOPOTUNE -> tt_calib_predict. */
tt_status tt_rows_predict(const tt_topo *t, const tt_cluster *base, tt_model_kind model, const tt_model_params *p,
                          const tt_measurement *m, double *pred_us);

/* The executor-shaped model alone (no topology): a row our executor ran (m->exec_kind > 0).
 * Algorithm/protocol/channels not recorded = the executor's default plan. */
tt_status tt_exec_predict(const tt_model_params *p, const tt_measurement *m, double *pred_us);

/* Cross-validation of the executor-shaped fit on rows our executor ran (tune_calib_cv.c):
 *   sizes:     fit on the even powers of two, predict the odd ones, then the other way round;
 *              one line per (kind, rank count)
 *   ranks:     fit on every rank count but the largest, predict the largest; per kind
 *   algorithm: fit on ring rows, predict tree rows (tree hop cost = the ring's step cost: the
 *              ring cannot tell it); per kind
 * Errors are |pred - meas| / meas of the held-out rows.  extrapolated: held-out rows outside
 * the fitted size or rank range. */
typedef struct {
    char test[16];     /* "sizes", "ranks", "algorithm" */
    int kind;          /* tt_exec_kind */
    int nranks;        /* rank count predicted (0 = several) */
    char fit_on[64], predicted[64];
    int nrows, extrapolated;
    double median, worst;
    double med_start, worst_start; /* the same rows with the start constants, unfitted */
    double worst_inside;           /* the worst error of the held-out rows inside the fitted range (not extrapolated) */
    char worst_row[160];           /* the held-out row with the worst error: "tree/ll 4194304 B, 8 ranks:
                                      measured 321.08 us, predicted 194.62 us; its 6 repeats spread 12.0 %" */
    /* the held-out rows measured more than once, against their own spread over the repeats
     * (slowest / fastest - 1): how many were predicted within it, and its median (< 0: none) */
    int nspread, within_spread;
    double spread_median;
} tt_cv_line;
typedef struct {
    tt_cv_line *l;
    int n;
} tt_calib_cv;
tt_status tt_calib_cross_validate(const tt_measure_set *ms, const tt_model_params *start, tt_calib_cv *out);
void tt_calib_cv_free(tt_calib_cv *cv);
/* topo-tune --calibrate's report (tune_calib_text.c): the constants before and after (start =
 * the constants the fit started from), the executor-shaped ones with their spread, per row the
 * error before and after, cross-validation and a robust straight line per group. */
tt_status tt_calib_write_text(const tt_calib_report *rep, const tt_measure_set *ms, const tt_model_params *start,
                              tt_strbuf *out);

/* A complete calibration file (every member), readable by tt_model_params_parse. */
tt_status tt_model_params_write_json(const tt_model_params *p, const char *comment, tt_strbuf *out);
/* Robust straight line time = a + bytes / (1000 b) (Theil-Sen: median of pairwise slopes);
 * a >= 0.  Needs >= 2 distinct sizes. */
tt_status tt_fit_alpha_beta(const double *bytes, const double *us, int n, double *a_us, double *b_GBps);
/* That line per group of a set's rows (collective, algorithm, protocol, ranks), groups in the order
 * of their first row; ok 0 where the group cannot be fitted (one size). *out: free() it. */
typedef struct {
    const tt_measurement *first; /* the group's first row (its collective, candidate, ranks) */
    int nrows, ok;
    double a_us, b_GBps;
} tt_alpha_beta_group;
tt_status tt_fit_alpha_beta_groups(const tt_measure_set *ms, tt_alpha_beta_group **out, int *n);

/* ---- judging a table's choices against measurements (tune_judge.c) ----
 * For every (collective, size, ranks) where the table's candidate and at least one other
 * were measured: right when the table's candidate is within `tol` of the fastest measured
 * (time <= best * (1 + tol)), else wrong by table/best - 1.  Wrong sizes with the same
 * faster candidate that follow each other form a range to fix. */
typedef struct {
    tt_coll coll;
    uint64_t bytes;
    int nranks;
    int table_algo, table_proto;     /* the table's choice at this size */
    double table_us;                 /* its measured time, < 0 when it was not measured */
    int best_algo, best_proto;       /* fastest measured */
    double best_us;
    int ncand;                       /* candidates measured at this size */
    double loss;                     /* table_us / best_us - 1 (0 when right by definition) */
    int verdict;                     /* 0 right, 1 wrong, 2 table choice not measured */
} tt_judge_row;

typedef struct {
    tt_coll coll;
    uint64_t lo, hi;                 /* first and last measured size of the range */
    int nranks;
    int table_algo, table_proto, best_algo, best_proto;
    double worst_loss;
} tt_judge_fix;

typedef struct {
    tt_judge_row *rows;
    int n;
    tt_judge_fix *fix;
    int nfix;
    int nright, nwrong, nunmeasured;
} tt_judge_report;

tt_status tt_tune_judge(const tt_tune_entry *entries, int nentries, const tt_measure_set *ms, double tol,
                        tt_judge_report *out);
/* The same judgement where the "table's choice" at each measured size is the model's fastest
 * among the candidates that were measured there (evaluated as tt_calib_predict does): does the
 * (calibrated) model rank what the executor can run correctly?  Rows are judged per rank count. */
tt_status tt_tune_judge_model(const tt_topo *t, const tt_cluster *base, const tt_model_params *p,
                              const tt_measure_set *ms, double tol, tt_judge_report *out);
/* The same with the model named: TT_MODEL_NCCL ranks NCCL rows by NCCL's structure
 * (tt_rows_predict), TT_MODEL_TOPOTUNE is tt_tune_judge_model. */
tt_status tt_tune_judge_model_kind(const tt_topo *t, const tt_cluster *base, tt_model_kind model,
                                   const tt_model_params *p, const tt_measure_set *ms, double tol,
                                   tt_judge_report *out);
void tt_judge_report_free(tt_judge_report *r);
tt_status tt_judge_write_text(const tt_judge_report *r, double tol, tt_strbuf *out);
/* topo-tune --judge-choices as one call: the choices judged are the table file `table` (its ranks
 * must be the measurements': TT_ERR_INVALID naming the row otherwise), the model's among the
 * measured candidates (among_measured), or else a table the model builds on (topo, base) with
 * the measured ranks per node unless gpn_given. */
typedef struct {
    const tt_topo *topo;            /* NULL with a table file */
    const tt_cluster *base;
    int gpn_given;
    tt_model_kind model;
    const tt_model_params *params;
    const char *table;
    int among_measured;
    double tol;
    uint64_t min_size, max_size;    /* the model's table */
    int nccl_only;
} tt_judge_opts;
tt_status tt_tune_judge_choices(const tt_judge_opts *o, const tt_measure_set *ms, tt_judge_report *out);

/* ---- how far the default model is from real clusters (tune_trust.c) ----
 * Per regime (size class, nodes 1 / 2 / >= 3, fabric) the model's time error on NCCL's own choice,
 * measured on the corpus of published results (scripts/bench/cluster-truth.sh).  sweeps 0: the
 * regime was never measured (or the context is not the default model): the model is not trusted
 * there. */
typedef enum { TT_SIZE_SMALL = 0, TT_SIZE_MEDIUM = 1, TT_SIZE_LARGE = 2, TT_SIZE_CLASS_COUNT = 3 } tt_size_class;
tt_size_class tt_size_class_of(uint64_t bytes); /* <= 64 KiB small, >= 16 MiB large, else medium */
const char *tt_size_class_name(tt_size_class c);
typedef struct {
    tt_size_class size;
    int sweeps;                /* sweeps of the corpus behind the figures (0 = unknown) */
    int exact;                 /* 1: measured in this very regime; 0 with sweeps: an unmeasured multi-node regime,
                                * the worst figures of the measured ones (bands only, never a reason to force) */
    double median, p90, worst; /* |pred - meas| / meas of NCCL's own choice */
    char regime[96];           /* ">= 16 MiB, 2 nodes, ib" */
} tt_trust;
tt_status tt_model_trust(const tt_tune_ctx *ctx, uint64_t bytes, tt_trust *out);

/* ---- expected performance, a health check (tune_expect.c; docs/calibration.md) ----
 * Per size the time of what NCCL runs there (tt_nccl_choice) as the context's model predicts it, and
 * a band around it from the model's measured error in the size's regime (tt_model_trust): with
 * r = measured / predicted busbw, PASS when 1 - lo <= r <= 1 + hi; WARN above 1 + hi (the model
 * under-predicts) and in [1 - lo - gap, 1 - lo); FAIL below 1 - lo - gap.  lo = for sizes >= 16 MiB
 * the regime's 90th-percentile error or 3x its median, the smaller, clamped to [0.10, 0.35]; below
 * 0.35; hi = its worst error, at least 0.30, gap = 0.25; a regime never measured: lo 0.50, hi 1.00.
 * MODEL ASSUMPTIONS, docs/calibration.md. */
typedef struct {
    int fixed;            /* 1: use lo / hi / gap below for every size instead of the regime's */
    double lo, hi, gap;
} tt_expect_bands;
#define TT_EXPECT_BANDS_REGIME ((tt_expect_bands){0, 0, 0, 0})

typedef enum { TT_EXPECT_PASS = 0, TT_EXPECT_WARN = 1, TT_EXPECT_FAIL = 2 } tt_expect_verdict;
const char *tt_expect_verdict_name(tt_expect_verdict v); /* "PASS", "WARN", "FAIL" */

typedef struct {
    tt_coll coll;
    uint64_t bytes;
    tt_algo algo;                    /* what NCCL runs (or the row's forced candidate) */
    tt_proto proto;
    double pred_us, pred_busbw;      /* model */
    double lo, hi, gap;              /* the band (fractions) */
    double pass_busbw, fail_busbw;   /* PASS at >= pass_busbw (and <= above_busbw), FAIL below fail_busbw */
    double above_busbw;              /* WARN above: the model under-predicts */
    int latency_bound;               /* the model's latency part is above half its time */
    int trusted;                     /* the regime (or, multi-node, its size class) was measured on the corpus */
    double err_median, err_p90, err_worst; /* the model's error there (tt_model_trust; 0 when not measured) */
    char regime[96];
    /* judged rows only */
    double meas_us, meas_busbw, ratio; /* ratio = meas / pred busbw */
    tt_expect_verdict verdict;
    char note[160];                  /* why not PASS */
    char where[112];
} tt_expect_row;

/* One row for the size (NCCL's choice); b NULL = the regime's band. */
tt_status tt_expect_row_compute(const tt_tune_ctx *ctx, tt_coll coll, uint64_t bytes, const tt_expect_bands *b,
                                tt_expect_row *out);
/* Judge one measurement (its busbw recomputed from time_us with the context's ranks; a forced row
 * is compared with the candidate it ran). */
tt_status tt_expect_judge(const tt_tune_ctx *ctx, const tt_measurement *m, const tt_expect_bands *b,
                          tt_expect_row *out);
/* {"schema":"topotune-expect","version":1,nodes,ranks,model,fabric,rows:[{collective,bytes,algo,proto,
 * pred_us,pred_busbw,pass_busbw,fail_busbw,above_busbw,regime,measured_regime[,meas_us,meas_busbw,ratio,
 * verdict,note,where]}][,summary:{pass,warn,fail,verdict}]} */
tt_status tt_expect_write_json(const tt_tune_ctx *ctx, const tt_expect_row *rows, int n, int judged, tt_strbuf *out);
/* The rest of --expect (tune_calib_text.c).  tt_expect_cluster: ranks (and nodes, when c has one)
 * of the measured run's first row; TT_ERR_INVALID when its ranks do not split over the nodes.
 * Rows (*rows: free() it, also after an error): every collective in `colls` at every power-of-two
 * size of the sweep, or one judged row per measurement.  tt_expect_rows_verdict: the worst
 * verdict, counts[] per verdict.  Text: a header line naming the cluster and the model, then the
 * rows (judged: with the verdict summary). */
tt_status tt_expect_cluster(const tt_measure_set *ms, tt_cluster *c);
tt_status tt_expect_rows_sweep(const tt_tune_ctx *ctx, unsigned colls, uint64_t min_size, uint64_t max_size,
                               tt_expect_row **rows, int *n);
tt_status tt_expect_rows_judge(const tt_tune_ctx *ctx, const tt_measure_set *ms, tt_expect_row **rows, int *n);
tt_expect_verdict tt_expect_rows_verdict(const tt_expect_row *rows, int n, int counts[3]);
tt_status tt_expect_write_text(const tt_tune_ctx *ctx, const tt_cluster *c, tt_model_kind model,
                               const tt_model_params *params, const tt_expect_row *rows, int n, int judged,
                               tt_strbuf *out);
/* topo-tune --expect as one call: the sweep's rows (ms NULL) or one judged row per measurement
 * (on the measured run's ranks unless gpn_given), as JSON or text; *worst: the worst verdict
 * (PASS without measurements). */
typedef struct {
    const tt_topo *topo;
    const tt_cluster *base;
    int gpn_given;
    tt_model_kind model;
    const tt_model_params *params;
    unsigned colls;
    uint64_t min_size, max_size;
    int json;
} tt_expect_opts;
tt_status tt_expect_report(const tt_expect_opts *o, const tt_measure_set *ms, tt_strbuf *out, tt_expect_verdict *worst);

/* ---- validating a table on this machine (tune_validate.c: the plan; tune_verdict.c: verdicts) ----
 * topo-exec --validate (docs/calibration.md section 7): for every size of a sweep the table's
 * choice and its nearest runner-ups by the model's predicted time are measured back to back (by
 * the caller, with the executor); the choice is RIGHT when it was the fastest measured candidate,
 * within noise when slower by at most the margin, WRONG by X % (X = choice / fastest - 1)
 * otherwise.  Which candidates the executor can run (and with how many channels) is the
 * executor's knowledge: the caller passes them in. */
#define TT_VALIDATE_MAXC 8 /* candidates per size: the choice + at most 7 runner-ups */

typedef enum {
    TT_VERDICT_SKIP = 0,  /* not judged (note says why) */
    TT_VERDICT_RIGHT,     /* the choice was the fastest */
    TT_VERDICT_NOISE,     /* slower than the fastest by at most the margin */
    TT_VERDICT_WRONG,     /* slower by more */
    TT_VERDICT_ONLY,      /* right: the only candidate */
    TT_VERDICT_COUNT
} tt_verdict;

typedef struct {
    tt_algo algo;
    tt_proto proto;
    int channels;        /* what the run asks for (host: 1; GPU: the table's, 0 = executor default) */
    int ran_channels;    /* what the executor resolved */
    double pred_us;      /* model, < 0 = none */
    double t[2];         /* measured time per placement (us; out of place, in place), <= 0 = none */
    double busbw[2], algbw[2];
    long long wrong[2];  /* wrong results, -1 = not checked */
} tt_validate_cand;

typedef struct {
    uint64_t bytes;
    size_t count;        /* elements per rank (0: size below one element per rank) */
    int nc;              /* candidates; c[0] is the table's choice; 0 = not judged */
    tt_validate_cand c[TT_VALIDATE_MAXC];
    char note[512];      /* why the size is not judged */
    int verdict;         /* tt_verdict */
    int best;            /* index of the fastest measured candidate */
    double loss;         /* choice / fastest - 1 */
} tt_validate_size;

/* The sizes of a sweep (minb..maxb, times factor when > 1, else plus stepb; stepb > 0 or
 * factor > 1), counts per rank for AllGather/ReduceScatter: count = size / elem / ranks,
 * bytes = what that count really moves.  *out is malloc'ed (free()), nothing else set. */
tt_status tt_validate_sizes(tt_coll coll, int nranks, size_t elem_bytes, uint64_t minb, uint64_t maxb,
                            uint64_t stepb, long long factor, tt_validate_size **out, int *n);

/* The model --validate ranks runner-ups with: topology (topo_file; else the live scan when
 * gpu_ranks, else tt_topo_synth_host(nranks)), calibration file (NULL or "" = built-in
 * constants), one node of nranks ranks.  desc receives one line saying which model.  Errors
 * set the message ("--topo FILE: ...", "--calibration FILE: ...", too few GPUs). */
typedef struct {
    tt_xml_doc *doc;
    tt_topo *topo;
    tt_cluster base;
    tt_model_params params;
    int ok;              /* loaded; 0 = no model (predictions < 0) */
    int exec_kind;       /* tt_exec_kind of the run: host ranks and virtual ranks (more ranks than
                          * GPUs) are ranked by the executor-shaped model */
} tt_validate_model;
tt_status tt_validate_model_load(tt_validate_model *m, const char *topo_file, int gpu_ranks, int nranks,
                                 const char *calibration, char *desc, size_t desc_len);
void tt_validate_model_free(tt_validate_model *m);
/* Predicted time of a candidate (its channels, else the ones the executor resolved), as
 * tt_calib_predict evaluates a measured row; < 0 without a model or a prediction. */
double tt_validate_predict(const tt_validate_model *m, tt_coll coll, uint64_t bytes, int nranks,
                           const tt_validate_cand *c);
/* Set pred_us of the n runnable candidates and, with a model, order them by it (fastest
 * first; unpredicted last; ties by algorithm, then protocol). */
void tt_validate_rank(const tt_validate_model *m, tt_coll coll, uint64_t bytes, int nranks, tt_validate_cand *c,
                      int n);
/* The candidates of one size: `choice` (the table's, runnable here, pred_us set; NULL = the
 * model's fastest of `ranked`) first, then the next of `ranked` that differ from it in
 * algorithm or protocol: at most runners_up with a model (model_ok), all (up to
 * TT_VALIDATE_MAXC - 1) without.  Returns z->nc; 0 with z->note set when nothing to judge. */
int tt_validate_plan_size(tt_validate_size *z, const tt_validate_cand *choice, const tt_validate_cand *ranked,
                          int nranked, int model_ok, int runners_up);
/* The executor's side of planning, asked by the caller (tune does not see the executor): the
 * candidates it runs at a count (algo, proto, channels asked, ran_channels; at most max), and
 * whether the table's choice runs at a count (it may adapt the choice, e.g. its channels to what
 * the executor runs, and sets ran_channels; 0 with the reason in why). */
typedef struct {
    int (*candidates)(void *user, size_t count, tt_validate_cand *out, int max);
    int (*choice_runs)(void *user, size_t count, tt_validate_cand *c, char *why, size_t wl);
    void *user;
} tt_validate_engine;
/* Plan every size of sz (tt_validate_sizes): the engine's candidates ranked by m
 * (tt_validate_rank), the choice of table tab at the size's bytes (NULL: the model's fastest)
 * with its prediction, and its runner-ups (tt_validate_plan_size).  A size not judged keeps
 * nc 0 and a note: below one element per rank, no table entry, the table's choice not runnable
 * here (with the engine's reason), nothing predicted.  Returns how many sizes are judged. */
int tt_validate_plan(tt_validate_size *sz, int n, const tt_tune_table *tab, const tt_validate_model *m, tt_coll coll,
                     int nranks, int runners_up, const tt_validate_engine *e);
/* A fingerprint of the plan, for ranks to compare before anything is timed (tt_comm_agree of
 * tt_exec.h): the number of sizes, the caller's settings (nsettings values: the sweep's
 * collective, type, iterations, rounds, ...), then per size its bytes and candidates (algorithm,
 * protocol, channels).  Equal plans give equal fingerprints on every machine (FNV-1a, 62 bits). */
int64_t tt_validate_fingerprint(const tt_validate_size *sz, int n, const long long *settings, int nsettings);

/* "ring/simple" */
void tt_validate_cand_name(char *b, size_t n, const tt_validate_cand *c);
/* The faster placement, < 0 when neither was measured. */
double tt_validate_cand_time(const tt_validate_cand *c);
/* 1K, 64K, 1M, ... when exact, else the byte count with a B ("1000B"). */
void tt_validate_size_label(char *b, size_t n, uint64_t bytes);
/* verdict, best and loss of a measured size (margin: a fraction, 0.05 = 5 %). */
void tt_validate_judge_size(tt_validate_size *z, double margin);
const char *tt_verdict_word(int verdict); /* "right", "within noise", "wrong", ... (JSON) */
/* Count the sizes per verdict. */
void tt_validate_count(const tt_validate_size *sz, int n, int cnt[TT_VERDICT_COUNT]);
/* Ranges to fix: consecutive sizes, all WRONG, with the same choice (indices into sz, loss
 * range).  r has room for n; returns how many. */
typedef struct {
    int lo, hi;
    double minloss, maxloss;
} tt_validate_range;
int tt_validate_wrong_ranges(const tt_validate_size *sz, int n, tt_validate_range *r);
/* What won in a range: "tree/simple at 64K 256K; ring/ll at 1M" (at most 6 sizes each). */
void tt_validate_range_winners(const tt_validate_size *sz, const tt_validate_range *r, char *b, size_t bl);
/* The "validate" member of topo-exec --validate -J: table and model lines, margin, runner-ups,
 * rounds, per size the verdict, the wrong ranges and the exit code.  NULL on OOM. */
struct cJSON;
struct cJSON *tt_validate_json(const tt_validate_size *sz, int n, const char *table_desc, const char *model_desc,
                               double margin, int runners_up, int rounds, int exit_code);

/* ---- the validation run (tune_validate_run.c: the loop; tune_validate_report.c: the report) ----
 * After the plan (tt_validate_plan), per size: the caller's measurement of its candidates in
 * `rounds` interleaved rounds (round 1 of every candidate, then round 2, ...), each candidate
 * keeping per placement its fastest time with the bandwidths at that time and the most wrong
 * results of any round; then the verdict.  Exit codes: 0 right (or within noise) everywhere, 1
 * runtime failure, 2 bad input, 3 the table's choice lost by more than the margin somewhere, 7
 * wrong results (they take precedence over 3). */
#define TT_VALIDATE_EXIT_TABLE_WRONG 3
#define TT_VALIDATE_EXIT_WRONG_RESULTS 7
typedef struct {
    /* the sweep, as the report names it */
    const char *coll_name;   /* the collective as the front end names it ("all_reduce") */
    tt_coll coll;
    const char *type_name;   /* the element type ("float") */
    const char *op_name;     /* the reduction ("sum"; AllGather and Broadcast: "none" in the JSON) */
    int root;
    int nranks;
    const char *transport;   /* "shm", "tcp", "gpu", ... */
    uint64_t minb, maxb, stepb;
    long long factor;        /* > 1: sizes times factor, else plus stepb */
    int warmup, iters, agg, check;
    size_t chunk_bytes;
    /* the validation */
    double margin;           /* a fraction: 0.05 = 5 % */
    int runners_up, rounds;
    const char *topo;        /* the model's topology file, named by the fix line (NULL: "TOPO") */
    const char *json;        /* the -J file the caller writes (NULL: none; the fix line says to) */
    int argc;                /* the command line, for the JSON's "args" */
    char **argv;
    char start[64];          /* "YYYY-MM-DD HH:MM:SS" UTC (tt_validate_start_time) */
    /* the plan (the caller's planning over tt_validate_plan) */
    char table_desc[600];
    char model_desc[600];
    int ranked;              /* runner-ups ordered by prediction (a model) */
    int host_channels_note;  /* the table asks for several channels, the run has one */
    char setup[300];         /* a header line about the ranks ("" = none) */
    tt_validate_size *sz;
    int nsz;
    /* the outcome */
    int failed;              /* the measurement failed: err says why */
    char err[1200];
} tt_validate_run;
void tt_validate_start_time(char *b, size_t n);
/* The caller's measurement: one round of the z->nc candidates of size i (the candidates in c, a
 * copy of z->c with the results cleared: t, algbw, busbw 0, wrong -1), filling per placement t,
 * algbw, busbw and wrong of those it measured.  TT_OK, or the failure with its message (what it
 * measured before still counts).  judged (optional): after the verdict of size i (every size, a
 * size not judged too). */
typedef struct {
    tt_status (*measure)(void *user, const tt_validate_run *r, int i, int round, tt_validate_cand *c);
    void (*judged)(void *user, const tt_validate_run *r, int i);
    void *user;
} tt_validate_measurer;
/* Measure and judge every size of r (the results cleared first).  0, or 1 with r->failed and
 * r->err set (the sizes after the failure stay unmeasured and unjudged). */
int tt_validate_measure(tt_validate_run *r, const tt_validate_measurer *m);
/* Everything before the measurements, on r's sweep (coll, nranks, sizes, runners_up, topo set):
 * the table (table_file, topo-tune's JSON; NULL: the model's fastest per size) loaded and checked
 * against the run (its ranks; its nodes against the hosts GPU ranks span, hosts > 0; an entry for
 * the collective), the model (r->topo, calibration, gpu_ranks: tt_validate_model_load), the sizes
 * (elem_bytes per element) and the plan of every size over e (tt_validate_plan): r's table_desc,
 * model_desc, ranked, sz (malloc'ed, free()) and nsz.  TT_OK; else with the message:
 * TT_ERR_PARSE the table did not load, TT_ERR_INVALID the model did not, TT_ERR_MISMATCH the
 * table or the sweep does not fit the run, or nothing to run at any size. */
tt_status tt_validate_prepare(tt_validate_run *r, const char *table_file, const char *calibration, int gpu_ranks,
                              int hosts, size_t elem_bytes, const tt_validate_engine *e);
/* Wrong results over all candidates and placements (the "Out of bounds" count). */
int tt_validate_oob(const tt_validate_run *r);
/* The exit code after the measurements: rc (an earlier code), else 1 when r failed, 7 with wrong
 * results, 3 when a size is WRONG, else 0. */
int tt_validate_exit_code(const tt_validate_run *r, int rc);
/* The text report: the header (before the measurements), one line per size (as it is judged),
 * then the summary (the counts, the ranges where the table is wrong with the fix, or the failure)
 * and the "Out of bounds" line when results were wrong ("" otherwise). */
void tt_validate_report_header(tt_strbuf *b, const tt_validate_run *r);
void tt_validate_report_size(tt_strbuf *b, const tt_validate_size *z);
void tt_validate_report_summary(tt_strbuf *b, const tt_validate_run *r);
void tt_validate_report_oob(tt_strbuf *b, const tt_validate_run *r);
/* The -J document: nccl-tests' JSON of every measured candidate (role "choice" or "runner-up"),
 * the failure in "errors", and the "validate" member (tt_validate_json) with exit_code.  NULL on
 * OOM. */
struct cJSON *tt_validate_report_json(const tt_validate_run *r, int exit_code);

/* ==== sanity gate and clusters of hosts (tune_sanity.c, tune_hosts.c) ==== */

/* ---- sanity gate (tune_sanity.c) ----
 * Findings (severity warning; message = cause, then "fix: ...") when a prediction is absurd
 * for the hardware the topology describes.  Codes:
 *   busbw-absurd      AllReduce busbw at TT_SANITY_BYTES below TT_SANITY_MIN_BUSBW GB/s
 *   busbw-below-links AllReduce busbw at TT_SANITY_BYTES below TT_SANITY_LINK_FRACTION of the
 *                     links the graph has (best GPU-GPU path; on several nodes also the
 *                     node's network bandwidth)
 *   nvlink-missing    several GPUs of an NVLink part (tt_tune_nvlink_part) and no GPU pair
 *                     joined by NVLink: the table assumes PCIe/SMP between them
 *   gpu-unknown       GPUs without a <gpu> element (no model): NVLink cannot be known
 * A PCIe-only box whose figures match its PCIe links gets no finding. */
#define TT_SANITY_BYTES (1ULL << 30)
#define TT_SANITY_MIN_BUSBW 1.0
#define TT_SANITY_LINK_FRACTION 0.10
tt_status tt_tune_sanity_check(const tt_tune_ctx *ctx, tt_findings *out);
/* 1 when a GPU with this compute capability (x10) and PCI device id (0 = not recorded) is a
 * part built with NVLink (SXM / NVL modules); 0 for PCIe cards and AMD GPUs (`amd`). */
int tt_tune_nvlink_part(int sm, unsigned device, int amd);

/* ---- clusters of different hosts (tune_hosts.c) ---- */
typedef struct {
    int gpus_per_node;   /* > 0: ranks per node; -1: from the topology (the fewest GPUs of any host) */
    int nics_per_node;   /* >= 0: NET ports per node; -1: from each host's topology */
    int rails;           /* > 0: rails; -1: = NICs */
    double nic_gbps;     /* > 0: port speed in Gb/s; <= 0: from each host's topology */
    int fabric;          /* tt_fabric: the network (--fabric, TOPOTUNE_FABRIC); -1: from each host's topology */
} tt_cluster_overrides;
#define TT_CLUSTER_OVERRIDES_NONE ((tt_cluster_overrides){-1, -1, -1, -1.0, -1})

/* The cluster description topo-tune makes for one topology: tt_cluster_from_topo(), `nodes`,
 * then the overrides (--nics-per-node without --rails sets rails = NICs). */
tt_status tt_cluster_for_topo(const tt_topo *t, int nodes, const tt_cluster_overrides *o, tt_cluster *out);

typedef struct {
    int chosen;          /* index of the slowest host in the hostset */
    tt_cluster cluster;  /* the cluster to tune: nodes = hosts, the chosen host's topology */
    uint64_t bytes;      /* size of the AllReduce the hosts are ranked by (TT_SANITY_BYTES) */
    double *busbw;       /* per host: predicted AllReduce busbw at `bytes`, GB/s */
    int n;
    char why[640];       /* one line: which host, its figure, the others', the rule */
} tt_slowest_host;

/* MODEL ASSUMPTION: every collective waits for its slowest member, so a cluster of hosts that
 * differ is tuned as `nodes` copies of the slowest host: the one with the lowest predicted
 * AllReduce busbw at `bytes` for the whole cluster (ties: the first).  Ranks per node are the
 * fewest GPUs of any host unless o->gpus_per_node is given (then every host must have that
 * many: TT_ERR_INVALID naming the host otherwise).  `nodes` 0 = one node per host. */
tt_status tt_tune_slowest_host(const tt_hostset *hs, int nodes, const tt_cluster_overrides *o,
                               tt_model_kind model, const tt_model_params *params, tt_slowest_host *out);
void tt_slowest_host_free(tt_slowest_host *s);

/* JSON table (tt_tune_write_json) with, when given, topology.cluster = {hosts:[{name, source,
 * busbw_GBps, differs}], chosen, reason, differences:[{host, message}]} and
 * warnings = [{code, where, message}] (sanity findings).  Same schema and version. */
typedef struct {
    const tt_hostset *hosts;        /* NULL: one host */
    const tt_slowest_host *slowest; /* with hosts */
    const tt_findings *differences; /* with hosts: tt_hostset_compare's findings */
    const tt_findings *warnings;    /* NULL or sanity findings */
} tt_tune_json_extra;
tt_status tt_tune_write_json_ex(const tt_tune_ctx *ctx, const tt_tune_table *tab, const tt_tune_json_extra *x,
                                tt_strbuf *out);

/* ---- what topo-tune writes for a context (tune_write.c) ---- */
typedef enum { TT_TUNE_FMT_TABLE = 0, TT_TUNE_FMT_JSON = 1, TT_TUNE_FMT_CSV = 2, TT_TUNE_FMT_ENV = 3 } tt_tune_format;
typedef struct {
    tt_tune_format format;
    unsigned colls;
    uint64_t min_size, max_size;
    int nccl_only;
    double keep_margin;      /* >= 0: tt_tune_table_build_keep_nccl with this margin; < 0: full tables */
    int explain;             /* 1: every candidate at explain_bytes instead of a table */
    uint64_t explain_bytes;
} tt_tune_write_opts;
/* The table in o->format (JSON with `x`, may be NULL), the env hints, or with o->explain the
 * candidates at one size followed by the cluster's reason (x->slowest) and x->warnings. */
tt_status tt_tune_write_output(const tt_topo *topo, const tt_tune_ctx *ctx, const tt_tune_write_opts *o,
                               const tt_tune_json_extra *x, tt_strbuf *out);
/* A table set as text, JSON or CSV (not env). */
tt_status tt_tune_set_write(const tt_tune_set *s, tt_tune_format f, tt_strbuf *out);

/* Time to build every collective's table over the default sweep on `nodes` nodes of `t` (a box
 * without NICs gets one 400 Gb/s NIC per GPU), best and worst of `reps` builds (tune_bench.c;
 * topo-tune --bench). */
typedef struct {
    double best_s, worst_s;
    int rows, ranks;
} tt_tune_bench;
tt_status tt_tune_bench_tables(const tt_topo *t, int nodes, tt_model_kind m, int reps, tt_tune_bench *out);

#ifdef __cplusplus
}
#endif
#endif
