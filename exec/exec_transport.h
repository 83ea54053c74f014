/*
 * exec_transport.h - the one small interface every executor transport
 * implements, and the table of transports (internal to exec/).
 *
 * A connection is a reliable, ordered BYTE STREAM in each direction between
 * this rank and one peer.  The calls never block: send_some/recv_some move as
 * many bytes as fit right now (possibly zero) and report how many.  The
 * progress engine (exec_xfer.c) drives several connections at once, applies
 * the deadline and turns failures into messages naming rank/collective/step;
 * the algorithms (exec_algo_*.c) only call the engine, so they run unchanged
 * on every transport.
 *
 * Process ranks start on the BASE transport (tcp: the rendezvous builds a TCP
 * mesh, exec_bootstrap.c), exchange their host identity (comm->node), then
 * exec_transport_upgrade_all() walks exec_transport_table[] in priority
 * order: every transport with an upgrade hook takes the pairs still on the
 * base transport for which its can_connect hook says yes.  TOPOTUNE_TRANSPORT
 * (auto | one table name) is parsed once, by exec_transport_mode(); naming a
 * transport runs only that one's upgrade, with forced = 1.
 *
 * Adding a transport (docs/contributing.md): one file exec_transport_<name>.c
 * defining `const exec_transport exec_transport_<name>`, its extern below and
 * one line in exec_transport_table[] (exec_transport.c).
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
    const char *name;   /* TOPOTUNE_TRANSPORT value and part of tt_comm_transport() ("shm+tcp") */
    /* A communicator that starts on this transport: open connections to every
     * peer, filling comm->conns[p] for p != rank (threads: shm).  NULL for the
     * base transport (tcp): exec_transport_connect makes the rendezvous' mesh
     * and then calls exec_transport_upgrade_all.  ib: an error (never first). */
    tt_status (*connect_all)(tt_comm *comm);
    /* May the pair (comm->rank, peer) move to this transport?  Asked after the
     * TCP mesh and the host exchange (comm->node[] filled), only for pairs
     * still on the base transport, and with the same answer on both ranks of
     * the pair (decide from data both ranks have).  forced = 1 when
     * TOPOTUNE_TRANSPORT names this transport.  shm: same host; ib: another
     * host, or forced.  NULL: the transport is never an upgrade (tcp). */
    int (*can_connect)(const tt_comm *comm, int peer, int forced);
    /* Move the pairs with want[p] = 1 from their base (TCP) connection to this
     * transport; the TCP connection may carry the setup (exec_tcp_setup_io)
     * and stays the liveness channel.  A pair this transport finds it cannot
     * serve after all (ib: no ACTIVE port on one side) stays on TCP when
     * forced == 0 and is an error when forced == 1.  Called by every rank
     * that has at least one wanted pair. */
    tt_status (*upgrade)(tt_comm *comm, const unsigned char *want, int forced);
    /* Move up to len bytes without blocking; *moved = bytes moved (may be
     * 0).  TT_ERR_REMOTE when the peer is known to be gone. */
    tt_status (*send_some)(exec_conn *c, const void *buf, size_t len, size_t *moved);
    tt_status (*recv_some)(exec_conn *c, void *buf, size_t len, size_t *moved);
    /* A file descriptor to poll() while idle (POLLIN/POLLOUT/POLLRDHUP), or
     * -1 when the transport is polled by spinning (shared memory). */
    int (*poll_fd)(exec_conn *c);
    /* TT_OK while the peer may be alive; TT_ERR_REMOTE (message set) once it
     * is known dead.  Called while waiting.  NULL: the progress engine's
     * deadline is the only check. */
    tt_status (*check_peer)(exec_conn *c);
    void (*close)(exec_conn *c);
    /* Cut the connection as a failed network would, leaving it open (the
     * fault injection drop-tcp, exec_fault.c).  NULL: not cut (shm, ib). */
    void (*sever)(exec_conn *c);
};

extern const exec_transport exec_transport_shm;
extern const exec_transport exec_transport_tcp;
/* Without rdma-core headers this is a stub (exec_ib_setup.c) whose upgrade
 * refuses TOPOTUNE_TRANSPORT=ib with "built without rdma-core headers". */
extern const exec_transport exec_transport_ib;

/* The registry: every transport in one table, in priority order (a pair takes
 * the first transport whose can_connect says yes), NULL-terminated.  The
 * position is also the transport's bit (exec_transport_bit). */
extern const exec_transport *const exec_transport_table[];
const exec_transport *exec_transport_find(const char *name);
/* 1u << position in exec_transport_table[] (0 for a transport not in it). */
unsigned exec_transport_bit(const exec_transport *tp);
/* TOPOTUNE_TRANSPORT, parsed once for everybody: *forced = NULL for unset,
 * "" or "auto", else the named transport.  An unknown value is
 * TT_ERR_INVALID with "TOPOTUNE_TRANSPORT='x' (valid: auto, shm, ...)", the
 * list built from the table. */
tt_status exec_transport_mode(const exec_transport **forced);
/* After the TCP mesh of a process communicator: parse the mode, exchange the
 * host identities (comm->node), then walk the table's upgrade hooks. */
tt_status exec_transport_upgrade_all(tt_comm *comm);
/* The transports the connections use, joined by '+' in table order ("shm+tcp"),
 * or comm->tp's name when there is no connection (one rank). */
void exec_transport_describe(const tt_comm *comm, char *buf, size_t len);

#endif
