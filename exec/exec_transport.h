/*
 * exec_transport.h - the one small interface every executor transport
 * implements (internal to exec/).
 *
 * A connection is a reliable, ordered BYTE STREAM in each direction between
 * this rank and one peer.  The calls never block: send_some/recv_some move as
 * many bytes as fit right now (possibly zero) and report how many.  The
 * progress engine (exec_xfer.c) drives several connections at once, applies
 * the deadline and turns failures into messages naming rank/collective/step;
 * the algorithms (exec_algo_*.c) only call the engine, so they run unchanged
 * on every transport.  A GPU transport (CUDA IPC / P2P) plugs in the same
 * way: add an exec_transport, register it in exec_transport_table[] below.
 */
#ifndef EXEC_TRANSPORT_H
#define EXEC_TRANSPORT_H

#include <stddef.h>

#include "tt_exec.h"

typedef struct exec_transport exec_transport;

/* Every transport's connection struct starts with this. */
typedef struct exec_conn {
    const exec_transport *tp;
    int peer;           /* peer rank */
} exec_conn;

struct exec_transport {
    const char *name;
    /* Open connections to every peer: fills comm->conns[p] for p != rank. */
    tt_status (*connect_all)(tt_comm *comm);
    /* Move up to len bytes without blocking; *moved = bytes moved (may be
     * 0).  TT_ERR_REMOTE when the peer is known to be gone. */
    tt_status (*send_some)(exec_conn *c, const void *buf, size_t len, size_t *moved);
    tt_status (*recv_some)(exec_conn *c, void *buf, size_t len, size_t *moved);
    /* A file descriptor to poll() while idle (POLLIN/POLLOUT/POLLRDHUP), or
     * -1 when the transport is polled by spinning (shared memory). */
    int (*poll_fd)(exec_conn *c);
    /* TT_OK while the peer may be alive; TT_ERR_REMOTE (message set) once it
     * is known dead.  Called while waiting. */
    tt_status (*check_peer)(exec_conn *c);
    void (*close)(exec_conn *c);
};

extern const exec_transport exec_transport_shm;
extern const exec_transport exec_transport_tcp;
#ifdef TT_HAVE_IBVERBS
extern const exec_transport exec_transport_ib; /* set up by exec_ib_upgrade */
#endif

/* The registry: every transport in one table, NULL-terminated. */
extern const exec_transport *const exec_transport_table[];
const exec_transport *exec_transport_find(const char *name);

#endif
