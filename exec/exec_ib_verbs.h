/* exec_ib_verbs.h - the libibverbs functions the InfiniBand transport uses,
 * resolved at run time (dlopen("libibverbs.so.1") + dlsym), so that the tools
 * start where rdma-core is absent.  Only the exported symbols are looked up;
 * ibv_post_send, ibv_post_recv and ibv_poll_cq are static inline calls through
 * context->ops in <infiniband/verbs.h> and are used from the header directly.
 * Compiled only with TT_HAVE_IBVERBS (the Makefile defines it when the verbs
 * headers exist). */
#ifndef EXEC_IB_VERBS_H
#define EXEC_IB_VERBS_H

#ifdef TT_HAVE_IBVERBS
#include <infiniband/verbs.h>

#include "tt_common.h"

typedef struct {
    void *lib;
    struct ibv_device **(*get_device_list)(int *);
    void (*free_device_list)(struct ibv_device **);
    const char *(*get_device_name)(struct ibv_device *);
    struct ibv_context *(*open_device)(struct ibv_device *);
    int (*close_device)(struct ibv_context *);
    int (*query_device)(struct ibv_context *, struct ibv_device_attr *);
    int (*query_port_compat)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *);
    int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *);
    int (*dealloc_pd)(struct ibv_pd *);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
    int (*dereg_mr)(struct ibv_mr *);
    struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *, int);
    int (*destroy_cq)(struct ibv_cq *);
    struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
    int (*destroy_qp)(struct ibv_qp *);
    int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
    const char *(*wc_status_str)(enum ibv_wc_status);
} exec_ib_api;

/* Load libibverbs.so.1 once per process (thread-safe); NULL with the message
 * set ("libibverbs.so.1 not loadable: ...", or the missing symbol). */
const exec_ib_api *exec_ib_api_get(void);
/* Port attributes through the extended context when there is one, else the
 * exported compat entry point (what the ibv_query_port macro does). */
int exec_ib_query_port(const exec_ib_api *a, struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *pa);
/* ibv_wc_status_str, or "status N" when the library lacks it. */
const char *exec_ib_wc_str(const exec_ib_api *a, int status);
#endif

#endif
