/* exec_ib_internal.h - types shared by the InfiniBand transport's data path
 * (exec_transport_ib.c) and its setup (exec_ib_setup.c).  Internal to exec/. */
#ifndef EXEC_IB_INTERNAL_H
#define EXEC_IB_INTERNAL_H

#ifdef TT_HAVE_IBVERBS
#include "exec_ib_ring.h"
#include "exec_ib_verbs.h"
#include "exec_internal.h"

/* Engineering choices (docs/exec.md): */
#define IB_RECV_DEPTH 128   /* receive requests kept posted per QP = data writes in flight */
#define IB_CREDIT_SLOTS 16  /* credit writes in flight per QP */
#define IB_DEFAULT_RING (1u << 20)
#define IB_MAGIC 0x54544942u /* "TTIB" */
#define IB_WR_CREDIT (1ull << 63) /* wr_id tags; data writes carry their end offset */
#define IB_WR_RECV (1ull << 62)

/* The device and port of this process's communicator, shared by its QPs. */
typedef struct {
    const exec_ib_api *api;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    char name[64];
    int port;
    struct ibv_port_attr pa;
    union ibv_gid gid;
    int gid_index;
    int refs;
} ib_dev;

typedef struct {
    _Alignas(64) volatile uint64_t credit_in;    /* written by the peer: its consumed offset */
    _Alignas(64) uint64_t credit_src[IB_CREDIT_SLOTS]; /* sources of our credit writes */
} ib_ctrl;

typedef struct {
    exec_conn base;
    ib_dev *dev;
    exec_conn *tcp; /* liveness channel */
    int me;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    unsigned char *buf; /* [rx ring][tx staging][ctrl] */
    size_t buf_len, cap;
    unsigned char *rxr, *txs;
    ib_ctrl *ctrl;
    exec_ib_tx tx;
    exec_ib_rx rx;
    uint64_t r_ring, r_credit;
    uint32_t r_rkey;
    unsigned max_writes;
    int drain_ms;       /* bound of the wait for outstanding writes at close */
    int credits_out;
    unsigned credit_seq;
    tt_status err; /* sticky */
    char errmsg[EXEC_ERRMSG_MAX];
} ib_conn;

/* data path (exec_transport_ib.c), used by the setup */
tt_status exec_ib_post_recvs(ib_conn *c, int n);
void exec_ib_conn_free(ib_conn *c);
void exec_ib_dev_release(ib_dev *d);
#endif

#endif
