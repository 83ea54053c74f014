/*
 * tt_exec.h - the topotune executor: communicators, collectives, plans.
 *
 * A communicator (tt_comm) joins `nranks` ranks.  Ranks live either
 *   - as threads of one process (tt_comm_init_threads: one communicator per
 *     rank, host shared-memory transport), or
 *   - in separate processes that meet through a TCP rendezvous
 *     (tt_comm_init_rank with a tt_unique_id, or tt_comm_init_env with the
 *     RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT variables torchrun sets,
 *     or tt_comm_init_mpi from tt_exec_mpi.h over an MPI communicator).
 *
 * Every collective call is ASYNCHRONOUS: it checks its arguments, queues the
 * operation on the communicator's worker thread and returns.  Operations of
 * one communicator run in the order they were issued.  tt_comm_wait() blocks
 * until every queued operation finished and returns the first failure.
 * Because calls never block, one thread may drive the communicators of all
 * its ranks (issue on each, then wait on each).  tt_group_start/end batch the
 * calls of the calling thread: they are handed to the workers together at
 * the outermost tt_group_end().
 *
 * Buffers must stay valid and untouched until tt_comm_wait() returns.  Like
 * NCCL, one communicator is used by one thread at a time.
 *
 * Failures never hang: every wait has a deadline (TOPOTUNE_TIMEOUT_MS,
 * default 30000, or tt_comm_set_timeout).  A failure names the rank, the
 * collective (with its sequence number), the algorithm step and the peer,
 * e.g. "rank 1: AllReduce #4 (ring) step 2/3 reduce-scatter: timed out after
 * 2000 ms waiting for rank 3 (0 of 4000 bytes) (rank 3 never entered
 * AllReduce #4 (last entered #3))".  After a
 * failure the communicator is in an error state: later calls fail at once
 * with the first error; destroy it.  Ranks agree on each collective through
 * a small header exchanged with both ring neighbours; disagreeing
 * count, type, op, root, collective kind, algorithm or sequence gives
 * TT_ERR_MISMATCH naming both ranks and both values.
 */
#ifndef TT_EXEC_H
#define TT_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "tt_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TT_INT8 = 0, TT_UINT8, TT_INT32, TT_UINT32, TT_INT64, TT_UINT64,
    TT_HALF, TT_BFLOAT16, TT_FLOAT, TT_DOUBLE,
    TT_NDTYPES
} tt_dtype;

/* avg = sum over ranks, then divided by nranks.  Floating types divide in
 * float (half/bfloat16) or the type itself; integer types use C integer
 * division of the wrapped sum (truncation toward zero). */
typedef enum { TT_SUM = 0, TT_PROD, TT_MIN, TT_MAX, TT_AVG, TT_NREDOPS } tt_redop;

/* tt_coll, tt_algo (ring, tree, rhd = halving-doubling, hier = hierarchical; NCCL-only ids
 * such as nvls are refused with a message) and tt_proto (simple on host transports; ll/ll128
 * are GPU protocols) come from tt_common.h, shared with the tuning tables. */

/* How to run a collective.  A field left at its default lets the executor
 * choose.  A request that cannot be honoured (tree for AllGather, LL on the
 * host, ...) makes the collective call fail with TT_ERR_UNSUPPORTED and a
 * message saying what was asked and what is available - it is never ignored. */
typedef struct {
    tt_algo algo;
    tt_proto proto;
    int channels;        /* 0 = default; host transports run 1 channel */
    size_t chunk_bytes;  /* pipeline chunk; 0 = default (TOPOTUNE_CHUNK_BYTES or 512 KiB) */
} tt_plan;

#define TT_PLAN_DEFAULT ((tt_plan){TT_ALGO_DEFAULT, TT_PROTO_DEFAULT, 0, 0})

/* ---- what the executor can run (exec_caps.c) ----
 * One table inside exec answers for both executors; the host collectives
 * (tt_allreduce & co., tt_comm_resolve_plan) and the GPU executor
 * (tt_gpu_allreduce, tt_gpu_comm_resolve_plan) refuse exactly what it
 * refuses, with the same words.  Tools and tune code use these calls instead
 * of lists of their own (e.g. candidate plans of a validation run: for each
 * algorithm of tt_exec_algos() and protocol of tt_exec_protos(), a plan with
 * at most tt_exec_max_channels() channels).  Nothing here needs a
 * communicator, a GPU or a network: it is a pure lookup.
 *
 *   TT_EXEC_HOST: thread or process ranks (tt_comm; shm/tcp/ib transports)
 *   TT_EXEC_GPU:  GPU ranks (tt_gpu_comm); in a build without CUDA every
 *                 GPU query answers 0 / "no CUDA support". */
typedef enum { TT_EXEC_HOST = 0, TT_EXEC_GPU = 1 } tt_exec_mode;

/* 1 when `mode` can run `coll` with `algo` and `proto` on `nranks` ranks, else
 * 0 with the reason in why (wl bytes, may be NULL) - the same sentence the
 * collective call would fail with, e.g. "algorithm tree was requested for
 * AllGather on 4 ranks but cannot apply; available: ring".
 * algo = TT_ALGO_DEFAULT / proto = TT_PROTO_DEFAULT: any (the executor
 * chooses).  nranks <= 0: rank-count conditions (halving-doubling needs a
 * power of two) are not checked.  Channels are not part of the question: see
 * tt_exec_max_channels. */
int tt_exec_supports(tt_exec_mode mode, tt_coll coll, tt_algo algo, tt_proto proto, int nranks, char *why,
                     size_t wl);
/* The algorithms `mode` can run for `coll` on `nranks` ranks (<= 0: any count),
 * written to out[0..max-1] in the executor's listing order (host: tree, ring,
 * halving-doubling, hierarchical; GPU: ring, tree); returns how many there
 * are (may exceed max; out may be NULL to count). */
int tt_exec_algos(tt_exec_mode mode, tt_coll coll, int nranks, tt_algo *out, int max);
/* The protocols `mode` implements (host: simple; GPU: simple, ll), same
 * convention as tt_exec_algos. */
int tt_exec_protos(tt_exec_mode mode, tt_proto *out, int max);
/* Most channels a plan may ask for: host 1; GPU 0 = depends on the
 * communicator (tt_gpu_comm_max_channels). */
int tt_exec_max_channels(tt_exec_mode mode);

typedef struct tt_comm tt_comm;

/* ---- names ---------------------------------------------------------- */
size_t tt_dtype_size(tt_dtype t);
const char *tt_dtype_name(tt_dtype t);     /* "float", "bfloat16", ... */
const char *tt_redop_name(tt_redop op);    /* "sum", ... */
/* Collective, algorithm and protocol names: tt_coll_label/tt_algo_label/tt_proto_name and
 * the parsers in tt_common.h.  Parse names (case-insensitive); TT_ERR_INVALID lists the
 * valid names in the message. */
tt_status tt_dtype_parse(const char *s, tt_dtype *out);
tt_status tt_redop_parse(const char *s, tt_redop *out);

/* ---- reduction kernels (also used by tests and the GPU helper's host
 * fallbacks) --------------------------------------------------------- */
/* dst[i] = dst[i] (op) src[i] for i < count; buffers may be unaligned.
 * TT_AVG accumulates like TT_SUM (finish with tt_reduce_finish_avg). */
tt_status tt_reduce(void *dst, const void *src, size_t count, tt_dtype t, tt_redop op);
/* dst[i] /= divisor (the avg step).  Integers: truncating division. */
tt_status tt_reduce_finish_avg(void *buf, size_t count, tt_dtype t, int divisor);
float tt_half_to_float(uint16_t h);
uint16_t tt_float_to_half(float f);        /* round to nearest even */
float tt_bf16_to_float(uint16_t b);
uint16_t tt_float_to_bf16(float f);        /* round to nearest even, NaN kept */

/* ---- verifiable data (exact checks, as nccl-tests does) -----------------
 * Element i of rank r gets a small integer chosen by (seed, r, index0 + i):
 * -8..8 (0..16 for unsigned types), 1 or 2 for prod.  Every partial result
 * of any reduction order is then exactly representable in every type (for
 * up to 64 ranks), so results compare bit for bit (tolerance 0, avg too:
 * the executor divides the exact sum once, like the expected value). */
void tt_verify_fill(void *buf, size_t count, tt_dtype t, tt_redop op, int rank, uint64_t seed,
                    size_t index0);
/* The reduction of all ranks' inputs (avg divided by nranks) into out. */
tt_status tt_verify_expected(void *out, size_t count, tt_dtype t, tt_redop op, int nranks,
                             uint64_t seed, size_t index0);
/* Number of elements of got that differ (bitwise) from want. */
size_t tt_verify_count_wrong(const void *got, const void *want, size_t count, tt_dtype t);

/* ---- communicators -------------------------------------------------- */
/* nranks ranks as threads of this process: fills comms[0..nranks-1].  The
 * ranks share memory through the host shm transport. */
tt_status tt_comm_init_threads(int nranks, tt_comm **comms);

/* TCP rendezvous.  The id names the rendezvous address; rank 0 listens on
 * it, the other ranks connect to it (retrying until the deadline). */
typedef struct { char bytes[128]; } tt_unique_id;
/* Make an id for a fresh rendezvous: binds a free port on `addr` (NULL =
 * 127.0.0.1) in this process; pass the id to every rank (rank 0 must run in
 * this process).  The id carries a random job secret that every rank's hello
 * proves (docs/reliability.md, "Who can join a job"): pass it to the job's
 * ranks only, like NCCL's unique id.  */
tt_status tt_get_unique_id(tt_unique_id *id, const char *addr);
/* A numeric address of this host that other hosts can most likely reach
 * (for tt_get_unique_id when the ranks span hosts): the source address of the
 * default route, else the first up non-loopback interface address (IPv4
 * first), else "127.0.0.1".  A heuristic: pick the address yourself where
 * hosts have several networks. */
tt_status tt_host_address(char *buf, size_t n);
/* An id for a fixed "host:port" (rank 0 binds it in tt_comm_init_rank).  It
 * carries no secret: the ranks prove TOPOTUNE_JOB_SECRET or the key file's. */
tt_status tt_unique_id_from_addr(tt_unique_id *id, const char *host_port);
tt_status tt_comm_init_rank(tt_comm **comm, int nranks, const tt_unique_id *id, int rank);
/* RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (torchrun's variables).  When
 * RANK/WORLD_SIZE are unset, the launcher's are used: OMPI_COMM_WORLD_RANK/
 * _SIZE (Open MPI mpirun), PMI_RANK/PMI_SIZE (MPICH), SLURM_PROCID/
 * SLURM_NTASKS (srun); MASTER_ADDR and MASTER_PORT are still needed (e.g.
 * mpirun -x MASTER_ADDR=host -x MASTER_PORT=port).  No MPI library is used.
 * Programs that use MPI anyway: tt_comm_init_mpi() in tt_exec_mpi.h (a
 * header-only helper, so that libtopotune itself never needs libmpi). */
tt_status tt_comm_init_env(tt_comm **comm);
/* The rank and size variables a launcher set in this environment: RANK/WORLD_SIZE (torchrun),
 * else OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS; 1 when a pair is set
 * (their names in rank_var and size_var when those are not NULL), else 0. */
int tt_env_rank_vars(const char **rank_var, const char **size_var);
/* This job's identity for the TCP rendezvous, as text ("SLURM_JOB_ID=111.0", "TORCHELASTIC_RUN_ID=x
 * (restart 2)"): TOPOTUNE_JOB_ID alone where set, else every launcher part that is set, joined:
 * SLURM_JOB_ID.SLURM_STEP_ID (requeue SLURM_RESTART_COUNT), TORCHELASTIC_RUN_ID unless "none" with
 * TORCHELASTIC_RESTART_COUNT, OMPI_MCA_ess_base_jobid else PMIX_NAMESPACE.  A rank of another
 * identity is refused at the rendezvous.  Returns 1 when a job id was found, 0 when none was (the text
 * is then empty, or only torchrun's restart count). */
int tt_job_identity(char *text, size_t n);
#define TT_JOB_ID_VARS "TOPOTUNE_JOB_ID, SLURM_JOB_ID, TORCHELASTIC_RUN_ID, OMPI_MCA_ess_base_jobid, PMIX_NAMESPACE"
/* Slurm (srun) without MASTER_ADDR: tt_comm_init_env takes the rank and size from SLURM_PROCID/
 * SLURM_NTASKS and the rendezvous from tt_slurm_master.  1 when the rank variables in use are
 * Slurm's and a node list (SLURM_STEP_NODELIST, SLURM_JOB_NODELIST) is set. */
int tt_env_slurm_step(void);
/* "host:port" for a Slurm step: the first host of its node list; the port from
 * TOPOTUNE_MASTER_PORT, else MASTER_PORT, else 12000 + (8 x SLURM_JOB_ID + SLURM_STEP_ID % 8) % 20000. */
tt_status tt_slurm_master(char *host_port, size_t n);
/* Host i (from 0) of a Slurm-style compressed list ("node[01-03,07],gpu5": node01 node02 node03
 * node07 gpu5; several [] groups per name, leading zeros kept) into out; i < 0 only counts.
 * count (may be NULL): the number of hosts.  TT_ERR_PARSE for a malformed list. */
tt_status tt_hostlist_nth(const char *list, int i, char *out, size_t n, int *count);

/* Waits for queued work (bounded by the deadline), stops the worker, closes
 * every connection and frees everything.  NULL is a no-op. */
tt_status tt_comm_destroy(tt_comm *comm);
int tt_comm_rank(const tt_comm *comm);
int tt_comm_nranks(const tt_comm *comm);
const char *tt_comm_transport(const tt_comm *comm); /* in use: "shm", "tcp", "ib", "shm+tcp", "shm+ib", ... */
/* The CPU this rank's worker thread (which moves its data) is bound to, -1 when not bound.
 * TOPOTUNE_HOST_BIND at communicator creation: auto (default: as core when the ranks of this host
 * are at most the cores of the process's CPU mask, else not bound), core (local rank i -> one
 * hardware thread of every core before a second of any), cpu (the i-th CPU of the process's mask),
 * none; core and cpu do not bind when the host has more ranks than the mask's CPUs; another value
 * fails the creation (TT_ERR_INVALID). */
int tt_comm_bound_cpu(const tt_comm *comm);
/* Where the binding came from ("default" or "TOPOTUNE_HOST_BIND=core") and, when the worker is not
 * bound, why ("default: 3 ranks on this host, 2 cores in this process's CPU mask"); "" for NULL. */
const char *tt_comm_bind_note(const tt_comm *comm);
/* Rank r's process id and host name (gethostname) as the process ranks exchanged them at the
 * rendezvous; pid -1 and host "-" when not known (thread ranks, r out of range, NULL).  The host
 * string lives as long as the communicator. */
void tt_comm_rank_ident(const tt_comm *comm, int r, int *pid, const char **host);
/* Per-wait deadline in milliseconds (default TOPOTUNE_TIMEOUT_MS or 30000). */
void tt_comm_set_timeout(tt_comm *comm, int timeout_ms);
/* Plan used by later calls on this communicator (TT_PLAN_DEFAULT resets). */
void tt_comm_set_plan(tt_comm *comm, const tt_plan *plan);
/* Plans per message size, from a topo-tune table: for each call, the first rule (entry) of its
 * collective whose [min_bytes, max_bytes] holds the call's bytes (count x type size) supplies
 * the fields that the plan of tt_comm_set_plan leaves at default (an explicit plan wins).
 * A rule that cannot apply here (LL on a host transport, halving-doubling on 6 ranks, ...)
 * fails the call with TT_ERR_UNSUPPORTED naming the rule, or, with TT_PLAN_TABLE_FALLBACK,
 * runs what is closest (simple protocol, one channel, the default algorithm) and counts it
 * in tt_comm_plan_table_fallbacks.  The rules are copied; n = 0 removes the table. */
#define TT_PLAN_TABLE_FALLBACK 1u
/* Ignore the entries' channel counts (the GPU communicator: topo-tune models NCCL's channels,
 * which do not fit the GPU executor's kernels; it keeps its own count per size). */
#define TT_PLAN_TABLE_NO_CHANNELS 2u
/* entries: tt_tune_entry (tt_common.h), e.g. tt_tune_table_load(path, &tab) then
 * tt_comm_set_plan_table(comm, tab.entries, tab.n, flags); an entry's algorithm, protocol and
 * channels (> 0) make its plan. */
tt_status tt_comm_set_plan_table(tt_comm *comm, const tt_tune_entry *entries, int n, unsigned flags);
unsigned long tt_comm_plan_table_fallbacks(const tt_comm *comm);
/* The algorithm a collective with these arguments would use under the
 * current plan, or TT_ERR_UNSUPPORTED explaining why the plan cannot apply. */
tt_status tt_comm_resolve_plan(const tt_comm *comm, tt_coll coll, size_t count,
                               tt_dtype t, tt_plan *effective);

/* ---- collectives (asynchronous; complete at tt_comm_wait) ---------------
 * In place: AllReduce/Broadcast/Reduce sendbuf == recvbuf;
 * ReduceScatter sendbuf + rank*recvcount*size == recvbuf;
 * AllGather recvbuf + rank*sendcount*size == sendbuf. */
tt_status tt_allreduce(const void *sendbuf, void *recvbuf, size_t count, tt_dtype t,
                       tt_redop op, tt_comm *comm);
tt_status tt_reducescatter(const void *sendbuf, void *recvbuf, size_t recvcount, tt_dtype t,
                           tt_redop op, tt_comm *comm);
tt_status tt_allgather(const void *sendbuf, void *recvbuf, size_t sendcount, tt_dtype t,
                       tt_comm *comm);
tt_status tt_broadcast(const void *sendbuf, void *recvbuf, size_t count, tt_dtype t, int root,
                       tt_comm *comm);
/* recvbuf is used only on the root. */
tt_status tt_reduce_coll(const void *sendbuf, void *recvbuf, size_t count, tt_dtype t,
                         tt_redop op, int root, tt_comm *comm);

/* Block until every queued operation of `comm` finished; the first failure
 * (status + message, set in the calling thread). */
tt_status tt_comm_wait(tt_comm *comm);
/* Non-blocking: 1 when nothing is queued or running, else 0. */
int tt_comm_idle(tt_comm *comm);

/* Batch the calls of this thread (nestable). */
void tt_group_start(void);
tt_status tt_group_end(void);

/* ==== GPU ranks (CUDA executor) =========================================
 * Added by the GPU executor (exec_cuda_*.cu; exec_gpu_stub.c answers
 * TT_ERR_UNSUPPORTED in builds without CUDA).  Separate from tt_comm: one
 * tt_gpu_comm drives every GPU rank of this process; each collective call
 * takes one send and one receive buffer per rank (device memory of that
 * rank's GPU) and is asynchronous (tt_gpu_comm_sync waits, with the
 * deadline).  Ranks placed on the same GPU are VIRTUAL ranks: separate
 * buffers and connections, the same kernels, one launch.  Transport per pair:
 * same GPU, CUDA peer access (P2P/NVLink or P2P/PCIe), or host-staged through
 * mapped pinned memory (TOPOTUNE_GPU_TRANSPORT=host forces it).  Process mode
 * (tt_gpu_comm_init_procs): one rank per process, CUDA IPC between processes
 * (IPC (same GPU), IPC/NVLink, IPC/PCIe) or host-staged through shared memory.  AllReduce
 * (ring, tree), AllGather, ReduceScatter, Broadcast and Reduce (ring; the rooted ones as a
 * pipelined chain along the ring); protocols simple and ll.  See docs/gpu-executor.md. */
typedef struct tt_gpu_comm tt_gpu_comm;
/* Can this process use the machine's GPUs?  READY: CUDA sees ncuda devices.  ABSENT: the
 * machine has no NVIDIA GPU (none on the PCI bus, no nvidia device node), so host ranks are the
 * honest fallback.  BROKEN: GPUs are there but cannot be used; why names the cause (no NVIDIA
 * driver, GPUs bound to another driver, no driver library, a driver too old for this build's CUDA,
 * CUDA_VISIBLE_DEVICES hiding them, fabric manager not ready, no CUDA in this build, ...).  Reads
 * the PCI bus, /sys/module/nvidia and /dev/nvidia* under TOPOTUNE_SYSFS_ROOT (default /) and asks
 * CUDA; docs/gpu-executor.md, "Health check". */
typedef enum { TT_GPU_READY = 0, TT_GPU_ABSENT = 1, TT_GPU_BROKEN = 2 } tt_gpu_state;
typedef struct {
    tt_gpu_state state;
    int ncuda;               /* CUDA devices this process can use */
    int npci;                /* NVIDIA GPUs (display/3D controllers) on the PCI bus; -1: bus unreadable */
    int driver;              /* 1: the nvidia kernel module is loaded */
    char driver_version[32]; /* its version ("" when unknown) */
    char why[512];           /* READY: "N CUDA device(s)"; else one sentence without a trailing period */
} tt_gpu_health;
void tt_gpu_health_check(tt_gpu_health *h);
/* Number of usable CUDA devices, or 0 with the reason (tt_gpu_health's why) in why. */
int tt_gpu_available(char *why, size_t whylen);
/* nranks ranks; rank r on devices[r] (NULL: r % device count). */
tt_status tt_gpu_comm_init(tt_gpu_comm **out, int nranks, const int *devices);
tt_status tt_gpu_comm_destroy(tt_gpu_comm *g);
/* Process ranks: one GPU rank per process of the host communicator `host`
 * (this process's rank is tt_comm_rank(host)); collective over `host`, whose
 * processes must all run on one machine.  device: the CUDA device of this
 * process, or -1 for (local rank on this host) modulo the GPU count.  Pairs
 * on the same GPU or with peer access map each other's buffers with CUDA
 * IPC; other pairs are host-staged through a POSIX shared-memory segment.
 * The abort word is shared: a deadline hit (or a peer process that exited)
 * stops every process's kernel.  `host` must outlive the GPU communicator
 * (destroy uses it as a barrier) and keep the default plan. */
tt_status tt_gpu_comm_init_procs(tt_gpu_comm **out, tt_comm *host, int device);
int tt_gpu_comm_nranks(const tt_gpu_comm *g);
/* Ranks of this process (thread mode: all, process mode: 1) and the global
 * rank of local index i.  The buffer arrays of the collectives (tt_gpu_allreduce & co.) have one entry
 * per local rank in this order (thread mode: index = rank). */
int tt_gpu_comm_nlocal(const tt_gpu_comm *g);
int tt_gpu_comm_local_rank(const tt_gpu_comm *g, int i);
int tt_gpu_comm_is_virtual(const tt_gpu_comm *g);   /* 1 when ranks share a GPU */
int tt_gpu_comm_device(const tt_gpu_comm *g, int rank); /* process mode: ordinal in that rank's process */
/* A CUDA device of this process as nccl-tests' rank lines name it: its PCI address "dddd:bb:dd" (domain, bus,
 * device; hex) and its name; TT_ERR_UNSUPPORTED without CUDA, TT_ERR_SYSTEM when CUDA cannot say. */
tt_status tt_gpu_device_ident(int device, char *pci, size_t pcilen, char *name, size_t namelen);
int tt_gpu_comm_max_channels(const tt_gpu_comm *g);
const char *tt_gpu_comm_link(const tt_gpu_comm *g, int from, int to); /* "P2P/NVLink", ... */
int tt_gpu_comm_net_pairs(const tt_gpu_comm *g); /* directed pairs on the net transport (0 .. n(n-1)) */
/* Hosts the ranks span: ranks whose pair is not on the net transport share a host (thread mode:
 * 1; TOPOTUNE_GPU_EMULATE_HOSTS=K: K).  0 for a NULL communicator or a build without CUDA. */
int tt_gpu_comm_hosts(const tt_gpu_comm *g);
void tt_gpu_comm_set_timeout(tt_gpu_comm *g, int timeout_ms);
/* Hierarchical AllReduce (plan algo TT_ALGO_HIER, process mode, ranks on several hosts): per host a
 * ReduceScatter over its ranks (IPC), an AllReduce of each shard between the ranks with the same
 * local index on every host (net), an AllGather per host (IPC).  The first such call (collective)
 * builds the sub-communicators.  One host or one rank per host: the flat AllReduce.  Thread mode:
 * TT_ERR_UNSUPPORTED.  set_hier_algo: the inter-host phase's algorithm (ring, tree; default:
 * the GPU default rule for its size), the same on every rank. */
tt_status tt_gpu_comm_set_hier_algo(tt_gpu_comm *g, tt_algo inter);
/* The plan a GPU collective would run (req may be NULL = default; a plan table fills its defaults). */
tt_status tt_gpu_comm_resolve_plan(const tt_gpu_comm *g, tt_coll coll, size_t count, tt_dtype t,
                                   const tt_plan *req, tt_plan *effective);
/* The algorithms this communicator runs for `coll` (exec/exec_gpu_algos.c): the GPU mode's list
 * (tt_exec_algos: ring, tree) and, for AllReduce, hierarchical where it applies (process ranks on
 * several hosts with several ranks each; elsewhere it would run the flat plan).  Same convention
 * as tt_exec_algos (returns how many, may exceed max; out may be NULL); 0 without a communicator. */
int tt_gpu_comm_algos(const tt_gpu_comm *g, tt_coll coll, tt_algo *out, int max);
/* Plans per size on GPU ranks, as tt_comm_set_plan_table on host ranks: the entry of the call's
 * collective and bytes fills what the plan passed to tt_gpu_allreduce (or resolve) leaves at
 * default; channels too unless TT_PLAN_TABLE_NO_CHANNELS.  A rule the GPU executor cannot run
 * (LL128, NVLS, ...) fails the call naming the rule, or with TT_PLAN_TABLE_FALLBACK runs the
 * requested plan alone and counts it (per call) in tt_gpu_comm_plan_table_fallbacks.  The
 * entries are copied; n = 0 removes the table. */
tt_status tt_gpu_comm_set_plan_table(tt_gpu_comm *g, const tt_tune_entry *entries, int n, unsigned flags);
unsigned long tt_gpu_comm_plan_table_fallbacks(const tt_gpu_comm *g);
tt_status tt_gpu_allreduce(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                           size_t count, tt_dtype t, tt_redop op, const tt_plan *plan);
/* The other collectives, with the host collectives' counts and in-place layouts (one buffer
 * pair per local rank): AllGather sendcount per rank (in place: sendbufs[i] == recvbufs[i] +
 * rank * sendcount * size), ReduceScatter recvcount per rank (in place: recvbufs[i] ==
 * sendbufs[i] + rank * recvcount * size), Broadcast / Reduce in place when sendbufs[i] ==
 * recvbufs[i].  Broadcast reads a send buffer on the root only and Reduce writes a receive
 * buffer on the root only (the other entries may be NULL).  AllGather and Broadcast ignore the
 * operation.  Ring algorithm only (a plan asking for tree is refused). */
tt_status tt_gpu_allgather(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                           size_t sendcount, tt_dtype t, const tt_plan *plan);
tt_status tt_gpu_reducescatter(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                               size_t recvcount, tt_dtype t, tt_redop op, const tt_plan *plan);
tt_status tt_gpu_broadcast(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                           size_t count, tt_dtype t, int root, const tt_plan *plan);
tt_status tt_gpu_reduce(tt_gpu_comm *g, const void *const *sendbufs, void *const *recvbufs,
                        size_t count, tt_dtype t, tt_redop op, int root, const tt_plan *plan);
/* Any of the five by tt_coll (op ignored by AllGather/Broadcast, root by the unrooted ones). */
tt_status tt_gpu_collective(tt_gpu_comm *g, tt_coll coll, const void *const *sendbufs,
                            void *const *recvbufs, size_t count, tt_dtype t, tt_redop op, int root,
                            const tt_plan *plan);
/* Wait for every launched collective; a stuck rank gives TT_ERR_TIMEOUT
 * naming rank, channel, peer and step.  Failures are sticky. */
tt_status tt_gpu_comm_sync(tt_gpu_comm *g);
tt_status tt_gpu_alloc(tt_gpu_comm *g, int rank, size_t bytes, void **ptr);
void tt_gpu_free(tt_gpu_comm *g, int rank, void *ptr);
tt_status tt_gpu_memcpy(void *dst, const void *src, size_t bytes);  /* any direction (UVA) */
tt_status tt_gpu_memset(void *dst, int byte, size_t bytes);
/* dst = src0 op src1 (src1 NULL: copy) on device memory of `device`. */
tt_status tt_gpu_reduce_copy(int device, void *dst, const void *src0, const void *src1, size_t count,
                             tt_dtype t, tt_redop op);
/* GB/s (bytes read + written / median time) of cudaMemcpy device-to-device
 * [0], reduce-copy as a copy [1] and float a+b->c [2] on `bytes` buffers;
 * variant 0/1: tiled round robin, unroll 4 (= tt_gpu_reduce_copy) / 8;
 * 2/3: contiguous share per block, unroll 4 / 8; 4/5: 2/3 + streaming hints. */
tt_status tt_gpu_bench_copy(int device, size_t bytes, int iters, int blocks_per_sm, int variant,
                            double gbs[3]);
/* ==== end of GPU ranks ================================================== */

/* ==== measuring: nccl-tests-style sweeps (exec_measure*.c) ===============
 * One sweep over sizes (minb, then x factor or + stepb up to maxb), per size out of place and in
 * place: warm-up, timed iterations (agg operations per iteration), the time averaged over ranks,
 * algbw/busbw as nccl-tests computes them, and an exact check through tt_verify_* (#wrong summed
 * over ranks).  Three engines run it: host ranks (a tt_comm; one sweep per rank, i.e. per thread
 * of tt_comm_init_threads or per process), GPU ranks (a tt_gpu_comm; one call drives every local
 * rank; process mode averages over the host communicator) and NCCL (libnccl.so.2 loaded with
 * dlopen, the ranks of a tt_gpu_comm).  Rows go to a callback on rank 0 as they finish; the
 * first failure stops the sweep and is returned (status + message).  See docs/exec.md,
 * "Measuring". */
typedef struct {
    uint64_t bytes;             /* size column: count x type size (x nranks for ReduceScatter/AllGather) */
    size_t count;               /* elements per rank (the collective's count argument) */
    double time_us[2];          /* [0] out of place, [1] in place: us per operation */
    double algbw[2], busbw[2];  /* GB/s */
    long long wrong[2];         /* wrong elements over all ranks; -1 = not checked */
    tt_plan plan;               /* the plan that ran (plan_known: the engine could say) */
    int plan_known;
    int index;                  /* size index in the sweep, from 0 */
    /* nccl-tests' -I (tt_sweep_opts.per_iter; host ranks): per placement each timed iteration's time
     * in us on every rank, iter_ranks rows of iter_n values (rank by rank); NULL without.  The engine
     * owns them: valid during on_row only (tt_sweep_result_keep copies them). */
    const double *iter_us[2];
    int iter_ranks, iter_n;
} tt_sweep_row;

typedef struct {
    tt_coll coll;
    tt_dtype dtype;
    tt_redop op;
    int root;                   /* broadcast/reduce */
    uint64_t minb, maxb, stepb; /* sizes in bytes */
    long long factor;           /* > 1: multiply; else add stepb */
    int iters, warmup, agg, check; /* check: correctness runs per placement (0 = #wrong -1) */
    uint64_t check_max;         /* sizes above it are not checked; 0 = no limit */
    tt_plan plan;               /* requested plan (a plan table of the communicator fills its defaults) */
    /* rank 0 only: before each placement of a size / after each size */
    void (*progress)(void *user, int index, int nsizes, uint64_t bytes, int in_place);
    void (*on_row)(void *user, const tt_sweep_row *row);
    void *user;
    int time_of;                /* the time across ranks (nccl-tests' -a): TT_SWEEP_TIME_* (host engine) */
    int per_iter;               /* nccl-tests' -I 1: each iteration timed on its own (host engine; tt_sweep_row.iter_us) */
    int per_iter_skip;          /* nccl-tests' -K: leading iterations left out of the -I statistics (< iters) */
} tt_sweep_opts;
/* tt_sweep_opts.time_of; 0 (the average) is nccl-tests' default -a 1 */
enum { TT_SWEEP_TIME_AVG = 0, TT_SWEEP_TIME_RANK0, TT_SWEEP_TIME_MIN, TT_SWEEP_TIME_MAX };

/* An engine: the sweep calls these; host, GPU and NCCL fill them (tt_sweep_engine_*). */
typedef struct tt_sweep_engine tt_sweep_engine;
struct tt_sweep_engine {
    const char *name;           /* "host", "gpu", "nccl" */
    int nranks, rank;           /* rank 0 reports */
    void *self;
    /* buffers (and inputs) for counts up to max_count elements per rank; a no-op when prepared
     * already for as many elements of that type (and op, collective) */
    tt_status (*prepare)(tt_sweep_engine *e, const tt_sweep_opts *o, size_t max_count);
    /* the plan a count would run (NULL or a failure: row.plan_known 0; a plan that cannot apply
     * then fails in time() with the reason) */
    tt_status (*resolve)(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, tt_plan *eff);
    /* warm-up + timed iterations of one placement: seconds per operation, averaged over ranks */
    tt_status (*time)(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, int in_place, double *sec);
    /* exact check of one placement: wrong elements summed over ranks */
    tt_status (*check)(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, int in_place,
                       long long *wrong);
    void (*release)(tt_sweep_engine *e);
    /* set by time() with opts.per_iter (engine-owned): every rank's iteration times of a placement, us */
    const double *iter_us[2];
    int iter_ranks;
};

/* Host ranks: this rank's communicator (its plan is set to opts.plan per measurement). */
tt_status tt_sweep_engine_host(tt_sweep_engine *e, tt_comm *comm);
/* GPU ranks: every local rank of g; host: the host communicator of process mode (times and
 * #wrong combined over it), NULL in thread mode. */
tt_status tt_sweep_engine_gpu(tt_sweep_engine *e, tt_gpu_comm *g, tt_comm *host);
/* NCCL on the devices of g's ranks, one rank per GPU, every collective: loads libnccl.so.2 and
 * makes one NCCL communicator per rank (NCCL_ALGO/NCCL_PROTO of the environment apply).  Thread
 * mode: host NULL.  Process mode (one GPU rank per process): host is the communicator g was made
 * over; NCCL's unique id travels over it from rank 0, times and #wrong are combined over it. */
tt_status tt_sweep_engine_nccl(tt_sweep_engine *e, tt_gpu_comm *g, tt_comm *host);
void tt_sweep_engine_release(tt_sweep_engine *e);

/* Elements per rank for a size of the sweep (bytes / type size; / nranks for ReduceScatter and
 * AllGather, rounded down so that each rank's part is a multiple of 16 bytes, as nccl-tests does)
 * and the number of sizes of a sweep. */
size_t tt_sweep_count(const tt_sweep_opts *o, int nranks, uint64_t bytes);
int tt_sweep_nsizes(const tt_sweep_opts *o);
/* ---- a sweep's results as nccl-tests' JSON (exec_measure_json.c) ----
 * nccl-tests' -J form (2.19, its schema version 3: start_time, args, env, nccl_version, config with
 * devices, results with out_of_place/in_place, out_of_bounds, average_bus_bandwidth, errors,
 * end_time), its value types included (one line; doubles "%lf"; booleans as the strings "true" and
 * "false"; root a string), plus with extra topotune's keys (tool, topotune_version,
 * config.collective/nranks/transport/..., results[].algo, predicted_time), which nccl-tests'
 * readers ignore. */
typedef struct {
    tt_sweep_row m;
    double pred_us[2];   /* a predicted time per placement; <= 0: none */
    char algo[32];       /* the algorithm that ran ("" unknown) */
} tt_sweep_result;
typedef struct {
    int pid, device;
    char host[64], info[96];
    char hex[16];        /* device_hex: a GPU's PCI address ("dddd:bb:dd"); "" for "0000:00:00" */
} tt_sweep_device;
typedef struct {
    const tt_sweep_opts *sweep;          /* the collective, sizes, iterations, checks, requested plan */
    const char *tool, *experiment;       /* "tool"; results[].experiment_name */
    const char *collective;              /* config.collective, as the caller names it */
    int argc;                            /* "args" */
    char *const *argv;
    const char *const *env;              /* "env": NAME=value entries */
    int nenv;
    int nthreads, ngpus, nranks;
    const char *transport;
    const tt_sweep_device *devices;      /* config.devices: the first min(ndevices, nranks) */
    int ndevices;
    const char *start;                   /* start_time ("YYYY-MM-DD HH:MM:SS"); end_time is now */
    const tt_sweep_result *rows;
    int nrows;
    const char *error;                   /* "errors": NULL for none */
    int extra;                           /* 1: topotune's keys too; 0: nccl-tests' keys only */
    int bw_check;                        /* average_bus_bandwidth.okay: -1 "unchecked" (no NCCL_TESTS_MIN_BW),
                                          * 0 "false" (below 0.9 x it), 1 "true" */
} tt_sweep_report;
/* A row kept past on_row: its -I iteration times copied (0 or TT_ERR_NOMEM); release frees them. */
tt_status tt_sweep_result_keep(tt_sweep_result *r);
void tt_sweep_result_release(tt_sweep_result *r);
/* Wrong placements ("Out of bounds values") and the average bus bandwidth over both placements. */
int tt_sweep_summary(const tt_sweep_result *rows, int nrows, double *avg_busbw);
/* nccl-tests' CI gate NCCL_TESTS_MIN_BW (GB/s) on the average bus bandwidth: 1 met, 0 failed (below
 * 0.9x it: nccl-tests exits 7), -1 unchecked (unset, or no bandwidth: a WARN log line says so once);
 * *word is the footer's "OK"/"FAILED", "" when unchecked.  The value is tt_sweep_report.bw_check. */
int tt_sweep_min_bw_check(double avg_busbw, const char **word);
/* The document, one line without a final newline as nccl-tests writes it (*text to free; *len its length). */
tt_status tt_sweep_report_json(const tt_sweep_report *r, char **text, size_t *len);

/* ---- a sweep's results as nccl-tests' text (exec_measure_text.c) ----
 * nccl-tests' output, line for line: preamble, "# Using devices" with one line per rank, the three
 * column heads, one row per size, "Out of bounds values" and "Avg bus bandwidth", "Collective test
 * concluded".  Each function appends to sb; the caller prints (and may add its own "#" lines in
 * between).  Callers that print a prediction pass it in tt_sweep_result.pred_us. */
/* nccl-tests' names of the collectives: "all_reduce", "reduce_scatter", ... ("?" out of range). */
const char *tt_sweep_coll_name(tt_coll c);
/* What the preamble says besides the sweep's options (sizes, iterations, agg, check, check_max). */
typedef struct {
    const char *prog;   /* nccl-tests' program ("all_reduce_perf", ...): nccl-tests' preamble, its first line
                         * "# nccl-tests version 2.19.6+topotune.X.Y.Z nccl-headers=0 nccl-library=0"; NULL: topo-exec's */
    const char *note;   /* nccl-tests' preamble with extra: a "#" line after it, or NULL */
    const char *engine; /* GPU ranks: the engine that runs them; NULL: host ranks */
    int nthreads, ngpus;
    int extra;          /* nccl-tests' preamble: 1 adds topotune's lines (note, engine); 0 nccl-tests' lines only */
    const char *json;   /* nccl-tests' preamble: the -J file, announced first ("# Writing JSON output to F"); or NULL */
} tt_sweep_text_run;
void tt_sweep_text_preamble(tt_strbuf *sb, const tt_sweep_text_run *h, const tt_sweep_opts *o);
/* "#\n# Using devices", then a line per rank: bus in brackets (nccl-tests: a PCI address), info after. */
void tt_sweep_text_devices(tt_strbuf *sb);
void tt_sweep_text_rank(tt_strbuf *sb, int rank, int pid, const char *host, int device, const char *bus,
                        const char *info);
/* "# bound (TOPOTUNE_HOST_BIND=...): rank R cpu C ..." for the n communicators; nothing when none is bound. */
void tt_sweep_text_binding(tt_strbuf *sb, tt_comm **comms, int n);
/* The column heads; flags: TT_SWEEP_TEXT_PRED adds "pred" and "err%" per placement,
 * TT_SWEEP_TEXT_PLAN_COLUMN the GPU mode's heads with an "algo/proto/ch" column,
 * TT_SWEEP_TEXT_PER_ITER nccl-tests' -I heads (i_min i_max i_p99 i_cv% per placement; rows print
 * them from tt_sweep_row.iter_us, the max over ranks of each iteration, after opts.per_iter_skip). */
enum { TT_SWEEP_TEXT_PRED = 1, TT_SWEEP_TEXT_PLAN_COLUMN = 2, TT_SWEEP_TEXT_PER_ITER = 4 };
void tt_sweep_text_header(tt_strbuf *sb, int flags);
/* One row (o: collective, type, op, root); pred adds the pred/err% columns ("N/A" without a
 * prediction); tail (may be NULL) ends the line. */
void tt_sweep_text_row(tt_strbuf *sb, const tt_sweep_opts *o, const tt_sweep_result *r, int pred,
                       const char *tail);
/* "Out of bounds values" (oob: wrong placements) and "Avg bus bandwidth" (note after it, may be NULL). */
void tt_sweep_text_footer(tt_strbuf *sb, int oob, double avg_busbw, const char *note);
/* The closing lines: "#", "# Collective test concluded: name", "#" and an empty line (nccl-tests'), or
 * with err "# Collective test FAILED after nrows size(s): err". */
void tt_sweep_text_end(tt_strbuf *sb, const char *name, const char *err, int nrows);

/* Memory of a host sweep (exec_measure_mem.c), known before anything is allocated: every local
 * rank holds send, receive and expected buffers of the largest size (o->maxb). */
typedef struct {
    double need;       /* bytes the nlocal ranks of this process need */
    uint64_t avail;    /* MemAvailable of /proc/meminfo in bytes; 0 when unknown */
    int fits;          /* need within 90% of avail (or avail unknown) */
    uint64_t fit_maxb; /* not fits: the largest o->maxb that would (nccl-tests lowers -e to it) */
} tt_sweep_mem;
void tt_sweep_host_mem(const tt_sweep_opts *o, int nranks, int nlocal, tt_sweep_mem *m);
/* Buffers for counts up to max_count (tt_sweep_run does it itself; earlier, to fail before printing). */
tt_status tt_sweep_prepare(tt_sweep_engine *e, const tt_sweep_opts *o, size_t max_count);
/* One row: both placements at one count (after tt_sweep_prepare); index/progress from the caller. */
tt_status tt_sweep_one(tt_sweep_engine *e, const tt_sweep_opts *o, size_t count, uint64_t bytes,
                         tt_sweep_row *row);
/* The whole sweep; every rank of the engine calls it (host: each rank's thread/process). */
tt_status tt_sweep_run(tt_sweep_engine *e, const tt_sweep_opts *o);
/* The sweep on the host ranks of this process: one thread per communicator (n = 1: in the calling
 * thread), each on its own host engine; rank 0's callbacks fire.  The first failure of any rank is
 * returned with its message (in the calling thread). */
tt_status tt_sweep_run_host(tt_comm **comms, int n, const tt_sweep_opts *o);

/* ---- candidates side by side (exec_measure_cands.c) ----
 * Which candidate plans a communicator runs; then per size several of them measured as sweep
 * rows (tt_sweep_one, both placements), in `rounds` interleaved rounds (size by size: round 1
 * of every candidate, then round 2, ...), so that the candidates of a size see the same machine
 * state; each keeps per placement its fastest time with the bandwidths at that time, and the
 * most wrong elements of any round.  What topo-exec --validate measures the table's choice and
 * its runner-ups with (docs/exec.md, "Measuring candidates"). */
/* Whether plan req runs as asked for coll at count on one communicator: host ranks c (its own
 * plan is left as it was) or GPU ranks g (the other NULL).  TT_OK with the effective plan (its
 * channels resolved) in *eff; else the reason the collective would fail with, or
 * TT_ERR_UNSUPPORTED "algorithm X reduces to Y on these ranks (one host, or one rank per host)"
 * where the executor would run another algorithm (hierarchical on one host). */
tt_status tt_exec_plan_check(tt_comm *c, const tt_gpu_comm *g, tt_coll coll, size_t count, tt_dtype dt,
                             const tt_plan *req, tt_plan *eff);
/* The candidates of one communicator (c or g, as above) for coll at count: every (algorithm,
 * protocol) of the capability table (host: tt_exec_algos for its ranks, one channel; GPU:
 * tt_gpu_comm_algos, the executor's channels) that runs as asked (tt_exec_plan_check), in the
 * table's order; the requests in req, what runs in eff (either may be NULL), at most max.
 * Returns how many. */
int tt_exec_runnable_plans(tt_comm *c, const tt_gpu_comm *g, tt_coll coll, size_t count, tt_dtype dt, tt_plan *req,
                           tt_plan *eff, int max);

typedef struct {
    tt_plan plan;               /* in: the candidate (algorithm, protocol, channels, chunk) */
    double time_us[2];          /* out: [0] out of place, [1] in place: fastest round, us; 0 = not measured */
    double algbw[2], busbw[2];  /* out: GB/s at that time */
    long long wrong[2];         /* out: most wrong elements of a round; -1 = not checked or not measured */
} tt_sweep_cand;

typedef struct {
    uint64_t bytes;             /* in: the size (check_max applies to it) */
    size_t count;               /* in: elements per rank (tt_sweep_count) */
    int ncand;                  /* in: candidates of this size (0: the size is skipped) */
    tt_sweep_cand *cand;        /* in/out: ncand candidates, measured in this order */
} tt_sweep_cand_size;

typedef struct {
    tt_sweep_opts sweep;        /* collective, type, op, root, iters, warmup, agg, check, check_max, time_of
                                 * (its plan, sizes and callbacks are not used) */
    int rounds;                 /* >= 1 */
    /* rank 0: before each measurement of a candidate (size index of nsizes, candidate, round) */
    void (*progress)(void *user, int size, int nsizes, int cand, int round);
    /* the rank that keeps the results: after the last round of a size */
    void (*on_size)(void *user, int size, const tt_sweep_cand_size *z);
    void *user;
} tt_sweep_cands_opts;

/* Every size's candidates on engine e (after tt_sweep_engine_*; buffers for the largest count
 * are prepared here unless they are already).  Every rank of the engine calls it with the same
 * sizes and candidates (host: each rank's thread or process; GPU: one call for the local ranks);
 * each caller keeps the results in its sz.  The results are cleared first, so a failure leaves
 * what was measured before it; the first failure stops the run and is returned with its message. */
tt_status tt_sweep_candidates(tt_sweep_engine *e, const tt_sweep_cands_opts *o, tt_sweep_cand_size *sz, int nsz);
/* Host ranks of this process: one thread per communicator (n = 1: in the calling thread, e.g.
 * one rank per process), each on its own host engine; comms[0]'s rank keeps the results in sz
 * and gets on_size; the communicators' plans are left at the default.  The first failure of any
 * rank is returned with its message (in the calling thread). */
tt_status tt_sweep_candidates_host(tt_comm **comms, int n, const tt_sweep_cands_opts *o, tt_sweep_cand_size *sz,
                                   int nsz);
/* Process ranks, before anything is timed: every rank's code (0 = ready, else why it stops, e.g.
 * an exit code) and a fingerprint (of what it is about to run) all-gathered over c.  A
 * collective: every rank calls it, also after its own failure.  TT_OK with *who = -1 when every
 * code is 0 and every fingerprint equals rank 0's; else *who = the lowest rank with a nonzero code
 * (*who_code = that code) or, when none, the lowest rank whose fingerprint differs from rank 0's
 * (*who_code = 0).  A failed exchange: its status, the message "comparing the plans of the
 * ranks: ...".  c's plan is set to the default. */
tt_status tt_comm_agree(tt_comm *c, int code, int64_t fingerprint, int *who, int *who_code);

#ifdef __cplusplus
}
#endif
#endif
