/* exec_internal.h - private declarations shared by the exec/ files. */
#ifndef EXEC_INTERNAL_H
#define EXEC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "exec_transport.h"
#include "tt_exec.h"

#define EXEC_ERRMSG_MAX 1024
/* Model/engineering assumptions (documented in docs/exec.md): */
#define EXEC_DEFAULT_TIMEOUT_MS 30000      /* per-wait deadline without progress */
#define EXEC_DEFAULT_CHUNK (512u * 1024u)  /* pipeline chunk */
#define EXEC_SPIN_US 20                    /* idle wait: busy-poll this long before yielding */
/* Back-pressure: at most this many queued operations per communicator
 * (engineering bound, keeps memory flat when a caller issues millions). */
#define EXEC_MAX_QUEUED 1024

/* State shared by the ranks of one process-local (threads) communicator. */
typedef struct exec_world {
    int nranks;
    atomic_int refs;
    atomic_int aborted;                /* set by the first rank that fails */
    pthread_mutex_t mu;
    char abort_msg[EXEC_ERRMSG_MAX];
    atomic_uint_fast64_t *entered;     /* per rank: last collective seq entered */
    void **rings;                      /* [src * nranks + dst] shm byte rings */
    size_t ring_bytes;
} exec_world;

typedef struct exec_op {
    tt_coll coll;
    const void *sendbuf;
    void *recvbuf;
    size_t count;        /* AllReduce/Bcast/Reduce: count; RS: recvcount; AG: sendcount */
    tt_dtype dtype;
    tt_redop op;
    int root;
    tt_plan plan;        /* resolved */
    uint64_t seq;        /* 1-based collective number on this communicator */
    int internal;        /* barrier of destroy: peers' hang-ups are expected */
    struct exec_op *next;
} exec_op;

/* The per-collective header (exec_hdr.c): what every rank called. */
#define EXEC_HDR_MAGIC 0x54544843u
typedef struct {
    uint32_t magic;
    int32_t coll, dtype, op, root, algo;
    uint64_t count, seq;
} exec_coll_header;
/* Header state of one peer: sent / received for collective epoch tx_ep / rx_ep. */
typedef struct {
    uint64_t tx_ep, rx_ep;
    uint32_t tx_done, rx_done;
    exec_coll_header in;
} exec_hdr_peer;

struct tt_comm {
    int rank, nranks;
    const exec_transport *tp;
    exec_conn **conns;       /* [nranks], NULL at [rank] */
    int fault_dropped;       /* TOPOTUNE_FAULT=drop-tcp shut this rank's connections (exec_fault.c) */
    int timeout_ms;
    tt_plan plan;
    tt_tune_entry *rules;    /* plans per size (tt_comm_set_plan_table) */
    int nrules;
    unsigned rule_flags;
    unsigned long rule_fallbacks;
    uint64_t issued;         /* collectives issued (seq of the last one) */

    /* worker */
    pthread_t worker;
    int worker_started;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_idle;
    exec_op *head, *tail;
    int busy;                /* an op is running */
    exec_op *spare;          /* finished ops kept for the next calls (exec_op_pool.c), under mu */
    int nspare;
    exec_op *spare_mine;     /* the issuing thread's share of them, taken in one lock (no lock) */
    void *op_blocks;         /* the ops' memory, in blocks (exec_op_pool.c; freed by tt_comm_destroy) */
    size_t nops;             /* ops in those blocks */
    struct {                 /* the last plan resolution of a call (exec_coll.c), without a table */
        int ok;
        tt_coll coll;
        size_t count;
        tt_dtype dtype;
        tt_plan req, eff;
    } memo;
    size_t queued;           /* ops queued or running */
    int stop;
    tt_status err;           /* sticky first failure */
    char errmsg[EXEC_ERRMSG_MAX];

    int *node;               /* [nranks]: node index of every rank (same host = same node) */
    int nnodes;
    int *peer_pid;           /* [nranks] process ids (process ranks, from exec_host_exchange), else NULL */
    char *peer_host;         /* [nranks x EXEC_HOST_NAME] host names (same source), else NULL */
    char tp_desc[64];        /* transports in use ("shm+tcp"), set by exec_comm_start */

    int *ctl;                /* [nranks] failure-report sockets to every other rank (a full
                                mesh), -1 when none; see exec_ctl.c */
    int ctl_cause;           /* cause rank of the last report accepted */
    int *ctl_waits;          /* [nranks] rank r's reported wait target (-1: none known): the
                                wait-for chain that names a stuck rank (exec_ctl.c) */

    exec_world *world;       /* threads mode */
    /* tcp mode */
    void *boot;              /* exec_boot_id during init */

    /* per-collective header carried with the data (exec_hdr.c) */
    exec_coll_header hdr_mine;
    uint64_t hdr_ep;         /* collective epoch (one per op run, barrier included) */
    int hdr_on;              /* a collective's headers are in flight */
    exec_hdr_peer *hdr_peer; /* [nranks] */
    int64_t spin_budget_us;  /* idle busy-poll of this comm, -1 = not decided yet (exec_spin.c) */
    int bind_cpu;            /* CPU the worker is bound to, -1 = not bound (exec_bind.c) */
    char bind_note[160];     /* the binding's source and, when not bound, why (exec_bind.c) */

    /* scratch of the worker */
    unsigned char *scratch;
    size_t scratch_bytes;
};

/* Context of one running collective, for messages and deadlines. */
typedef struct {
    tt_comm *comm;
    const exec_op *op;
    const char *phase;   /* "reduce-scatter", "all-gather", ... */
    int step, nsteps;    /* 1-based step within phase */
} exec_ctx;

typedef struct {
    int peer;
    int is_send;
    void *buf;
    size_t len;
    size_t done;
} exec_xfer_item;

/* Progress all items to completion, or fail with a message naming rank,
 * collective, step and peer.  Fails when no byte moved for timeout_ms. */
tt_status exec_xfer(exec_ctx *ctx, exec_xfer_item *items, int n);
tt_status exec_sendrecv(exec_ctx *ctx, int speer, const void *sbuf, size_t slen, int rpeer,
                        void *rbuf, size_t rlen);
tt_status exec_send(exec_ctx *ctx, int peer, const void *buf, size_t len);
tt_status exec_recv(exec_ctx *ctx, int peer, void *buf, size_t len);
/* Prefix "rank R: Coll #seq (algo) step s/n phase: " to the current message (exec_fail.c). */
tt_status exec_fail(exec_ctx *ctx, tt_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A peer's connection broke: prefer a failure report already on its way (the first cause, for up
 * to 100 ms), else fail with `mine` (exec_fail.c). */
tt_status exec_fail_lost(exec_ctx *ctx, const char *mine);
/* Scratch buffer of the running collective (grown on demand). */
void *exec_scratch(tt_comm *comm, size_t bytes);
/* The start of the power-of-two AllReduce schedules (exec_algo_rhd.c, exec_algo_rd.c): refuses
 * other rank counts naming `what`, copies the input into the receive buffer (they work in place)
 * and gives log2(ranks) and a scratch of `ce` elements. */
tt_status exec_pow2_begin(exec_ctx *ctx, const char *what, size_t ce, int *levels, unsigned char **tmp);
/* The monotonic clock (exec_clock.c). */
int64_t exec_now_ms(void);
int64_t exec_now_us(void);
size_t exec_chunk_elems(const exec_op *op);

/* Algorithms: run op on comm (inside the worker); the dispatch table of exec_algos.c names the
 * schedule of an (algorithm, collective), NULL when the host executor has none. */
typedef tt_status (*exec_schedule)(exec_ctx *ctx);
exec_schedule exec_algo_schedule(tt_algo algo, tt_coll coll);
tt_status exec_ring_allreduce(exec_ctx *ctx);
tt_status exec_ring_reducescatter(exec_ctx *ctx);
tt_status exec_ring_allgather(exec_ctx *ctx);
tt_status exec_ring_broadcast(exec_ctx *ctx);
tt_status exec_ring_reduce(exec_ctx *ctx);
tt_status exec_tree_allreduce(exec_ctx *ctx);
tt_status exec_rhd_allreduce(exec_ctx *ctx);
tt_status exec_rd_allreduce(exec_ctx *ctx);
tt_status exec_hier_allreduce(exec_ctx *ctx);
tt_status exec_ring_allreduce_members(exec_ctx *ctx, unsigned char *buf, const int *members, int m,
                                      int pos, int avg_div);

/* Failure reports between processes (exec_ctl.c). */
#define EXEC_CTL_MSG 512
/* waited_for: the rank this one timed out waiting for, or -1. */
void exec_ctl_report(tt_comm *comm, const char *msg, int waited_for, int cause);
/* Read one report from the control sockets (non-blocking; rank 0 relays every
 * report to the other ranks).  TT_OK: nothing (new) arrived.  TT_ERR_TIMEOUT:
 * a rank reported a wait that timed out (recorded in ctl_waits; the message
 * says who): this rank should report its own wait.  TT_ERR_REMOTE: a rank
 * failed, message set.  Reports of this rank itself and reports whose cause is
 * ignore_cause (>= 0) are skipped. */
tt_status exec_ctl_check(tt_comm *comm, int ignore_cause);
/* Follow the reported waits from `from`: the last rank of the chain (one that
 * reported no wait of its own), or -1 when the chain is `from` alone.  The
 * chain is written as "2 -> 1 -> 0 -> 3" into buf. */
int exec_ctl_chain_end(tt_comm *comm, int from, char *buf, size_t cap);

/* The per-collective header (exec_hdr.c; begin, finish and end in exec_hdr_round.c).  begin: build it and push it to both
 * ring neighbours without waiting; pending/progress: a header is still owed on
 * (peer, direction) before its data / move some of it (a received one is
 * compared: TT_ERR_MISMATCH naming both calls); poll: move the neighbours'
 * headers without waiting (called while idle); finish: both neighbours' headers
 * sent, received and agreed; end: forget the in-flight state after a failure. */
tt_status exec_hdr_begin(exec_ctx *ctx);
int exec_hdr_pending(const tt_comm *c, int peer, int is_send);
tt_status exec_hdr_progress(exec_ctx *ctx, int peer, int is_send, int *moved);
tt_status exec_hdr_poll(exec_ctx *ctx, int *moved_any);
tt_status exec_hdr_finish(exec_ctx *ctx);
void exec_hdr_end(tt_comm *c);

/* Idle-wait policy (exec_spin.c): CPUs this process may use, ranks on this
 * host, and the busy-poll budget of a wait (0 when oversubscribed). */
int exec_cpu_count(void);
int exec_local_ranks(const tt_comm *comm);
int64_t exec_spin_budget_us(tt_comm *comm);
int exec_rank_has_cpu(tt_comm *comm); /* exec_spin.c: no other rank needs this process's CPUs */
/* exec_bind.c: decide the worker's CPU from TOPOTUNE_HOST_BIND (after the rendezvous: needs the nodes;
 * a bad value is TT_ERR_INVALID), and put it on the worker thread's attributes */
tt_status exec_bind_plan(tt_comm *comm);
tt_status exec_bind_attr(const tt_comm *comm, pthread_attr_t *attr);

/* Run one op (header + the schedule of exec_algos.c); called by the worker (exec_run.c). */
tt_status exec_run_op(tt_comm *comm, const exec_op *op);
/* queue an operation on the communicator's worker (exec_queue.c) */
tt_status exec_enqueue(tt_comm *comm, exec_op *op);
/* exec_op_pool.c: the ops.  Keep a finished op for a later call (comm->mu held) */
void exec_op_recycle(tt_comm *comm, exec_op *op);
/* the issuing thread takes every op the worker kept (comm->mu held) */
void exec_ops_collect_locked(tt_comm *comm);
/* a zeroed op for the issuing thread (no lock), NULL without memory */
exec_op *exec_op_take(tt_comm *comm);
/* the issuing thread gives back an op it did not queue; tt_comm_destroy frees them all */
void exec_op_drop(tt_comm *comm, exec_op *op);
void exec_ops_free(tt_comm *comm);
/* have at least n ops allocated (and their pages touched) before a timing loop */
void exec_ops_reserve(tt_comm *comm, size_t n);
/* 1 inside tt_group_start/tt_group_end on this thread (exec_queue.c) */
int exec_in_group(void);
/* every rank of the communicator has reached this point (exec_run.c) */
tt_status exec_barrier(tt_comm *comm);
/* a shared-memory ring of cap bytes for thread ranks (exec_transport_shm.c) */
void *exec_shm_ring_new(size_t cap);
/* bytes written into a shared-memory ring and not yet read (tests, diagnostics) */
size_t exec_shm_ring_used(const void *ring);

/* Communicator plumbing */
tt_status exec_comm_alloc(tt_comm **out, int rank, int nranks, const exec_transport *tp);
tt_status exec_comm_start(tt_comm *comm);    /* connect_all + worker */
void exec_comm_free(tt_comm *comm);
void exec_world_release(exec_world *w);

/* bootstrap (tcp) */
/* The job secret that the rendezvous' hellos and replies prove (exec_auth.c; docs/reliability.md,
 * "Who can join a job"). */
#define EXEC_ID_SECRET_LEN 16 /* the random secret that tt_get_unique_id puts in the id */
typedef struct {
    unsigned char key[64]; /* the secret, or its SHA-256 when longer than 64 bytes (as HMAC does) */
    size_t len;            /* 0: no secret (warned: anybody on the host can join) */
    char source[200];      /* where it came from, for messages ("TOPOTUNE_JOB_SECRET", "the key file ...") */
} exec_job_key;
typedef struct {
    char host[64];
    int port;
    uint64_t nonce;
    int has_secret; /* the id carries a secret (tt_get_unique_id) */
    unsigned char secret[EXEC_ID_SECRET_LEN];
    exec_job_key key; /* during exec_tcp_bootstrap: exec_auth_load */
} exec_boot_id;
/* id->key: the id's secret, else TOPOTUNE_JOB_SECRET, else the key file (TOPOTUNE_JOB_SECRET_FILE, default
 * ~/.config/topotune/job-secret, created 0600 when absent); without any, a warning and no secret. An error for
 * a key file that is not private, not ours, not regular, empty or unreadable. */
tt_status exec_auth_load(exec_boot_id *id);
void exec_auth_forget(exec_boot_id *id); /* wipes id->key */
/* what to do about a rank that proves another secret: "set the same TOPOTUNE_JOB_SECRET on every rank" */
const char *exec_auth_hint(const exec_job_key *k);
/* HMAC-SHA256 with the job key of `what` ("hello", "reply") and up to three pieces (NULL/0: none) */
void exec_auth_mac(const exec_job_key *k, const char *what, const void *a, size_t an, const void *b, size_t bn,
                   const void *c, size_t cn, unsigned char mac[32]);
/* 1 when mac is the MAC of the same input (constant-time comparison) */
int exec_auth_ok(const exec_job_key *k, const char *what, const void *a, size_t an, const void *b, size_t bn,
                 const void *c, size_t cn, const unsigned char mac[32]);
/* the secret that tt_get_unique_id puts in an id (random) */
tt_status exec_auth_new_id_secret(unsigned char secret[EXEC_ID_SECRET_LEN]);
tt_status exec_boot_id_decode(const tt_unique_id *id, exec_boot_id *out);
int exec_boot_take_listener(int port);  /* fd pre-bound by tt_get_unique_id, or -1 */
tt_status exec_tcp_bootstrap(tt_comm *comm, exec_boot_id *id); /* id->nonce: the job's, after it */
/* Open every connection of a communicator (exec_transport.c): its first transport's connect_all,
 * or for the base transport (tcp, no connect_all) the rendezvous' TCP mesh and then the upgrade
 * walk of exec_transport_table (shm, ib, ...). */
tt_status exec_transport_connect(tt_comm *comm);
exec_conn *exec_tcp_conn_new(int fd, int peer);
int exec_tcp_conn_fd(exec_conn *c);
/* Blocking-with-deadline transfer on a connection during a transport's setup (shm, ib): errors name
 * this rank, the peer and `what` ("shared-memory", "InfiniBand"). */
tt_status exec_tcp_setup_io(exec_conn *c, void *buf, size_t len, int is_send, int64_t deadline, int me,
                            const char *what);

/* Fault injection (exec_fault.c, TOPOTUNE_FAULT): called as a collective starts / builds its header. */
void exec_fault_before_collective(tt_comm *comm, uint64_t seq);
void exec_fault_slow(const tt_comm *comm, tt_algo algo);
int exec_fault_corrupt_header(const tt_comm *comm, uint64_t seq);
/* After the TCP mesh: every rank sends its host identity (boot id, host
 * name, pid) on every pair; fills comm->node, nnodes and peer_pid
 * (exec_hostxchg.c).  Called by exec_transport_upgrade_all before any
 * can_connect hook. */
tt_status exec_host_exchange(tt_comm *comm);
#define EXEC_HOST_NAME 64
/* The ib transport's upgrade hook (exec_ib_setup.c; a refusal of forced use
 * without the verbs headers). */
int exec_ib_can_connect(const tt_comm *comm, int peer, int forced);
tt_status exec_ib_upgrade(tt_comm *comm, const unsigned char *want, int forced);

#endif
