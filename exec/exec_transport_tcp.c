/* exec_transport_tcp.c - TCP transport between processes (and nodes).
 * Sockets are non-blocking with TCP_NODELAY; the progress engine polls them.
 * The connections themselves are made by the rendezvous (exec_bootstrap.c). */
#include "exec_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    exec_conn base;
    int fd;
} tcp_conn;

exec_conn *exec_tcp_conn_new(int fd, int peer)
{
    tcp_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->base.tp = &exec_transport_tcp;
    c->base.peer = peer;
    c->fd = fd;
    return &c->base;
}

int exec_tcp_conn_fd(exec_conn *c) { return ((tcp_conn *)c)->fd; }

static tt_status tcp_send_some(exec_conn *c, const void *buf, size_t len, size_t *moved)
{
    tcp_conn *t = (tcp_conn *)c;
    *moved = 0;
    if (!len)
        return TT_OK;
    ssize_t r = send(t->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r >= 0) {
        *moved = (size_t)r;
        return TT_OK;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return TT_OK;
    return tt_error_set(TT_ERR_REMOTE, "connection to rank %d lost (%s): process died or aborted",
                        c->peer, strerror(errno));
}

static tt_status tcp_recv_some(exec_conn *c, void *buf, size_t len, size_t *moved)
{
    tcp_conn *t = (tcp_conn *)c;
    *moved = 0;
    if (!len)
        return TT_OK;
    ssize_t r = recv(t->fd, buf, len, MSG_DONTWAIT);
    if (r > 0) {
        *moved = (size_t)r;
        return TT_OK;
    }
    if (r == 0)
        return tt_error_set(TT_ERR_REMOTE,
                            "rank %d closed the connection (process died or aborted)", c->peer);
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return TT_OK;
    return tt_error_set(TT_ERR_REMOTE, "connection to rank %d lost (%s): process died or aborted",
                        c->peer, strerror(errno));
}

static int tcp_poll_fd(exec_conn *c) { return ((tcp_conn *)c)->fd; }

static void tcp_close(exec_conn *c)
{
    tcp_conn *t = (tcp_conn *)c;
    if (t->fd >= 0)
        close(t->fd);
    free(t);
}

/* a TCP connection is cut as a failed network cuts it (the fault injection drop-tcp) */
static void tcp_sever(exec_conn *c) { shutdown(((tcp_conn *)c)->fd, SHUT_RDWR); }

const exec_transport exec_transport_tcp = {
    .name = "tcp",
    .connect_all = NULL, /* the base: the rendezvous makes its mesh (exec_transport_connect) */
    .can_connect = NULL, /* the base: pairs stay here when no upgrade takes them */
    .upgrade = NULL,
    .send_some = tcp_send_some,
    .recv_some = tcp_recv_some,
    .poll_fd = tcp_poll_fd,
    .check_peer = NULL,
    .close = tcp_close,
    .sever = tcp_sever,
};

tt_status exec_tcp_setup_io(exec_conn *c, void *buf, size_t len, int is_send, int64_t deadline, int me,
                            const char *what)
{
    size_t done = 0;
    while (done < len) {
        size_t m = 0;
        tt_status st = is_send ? c->tp->send_some(c, (char *)buf + done, len - done, &m)
                               : c->tp->recv_some(c, (char *)buf + done, len - done, &m);
        if (st != TT_OK)
            return tt_error_prefix(st, "rank %d: %s setup with rank %d", me, what, c->peer);
        done += m;
        if (!m) {
            if (exec_now_ms() > deadline)
                return tt_error_set(TT_ERR_TIMEOUT, "rank %d: %s setup with rank %d timed out", me, what, c->peer);
            struct pollfd p = {exec_tcp_conn_fd(c), (short)(is_send ? POLLOUT : POLLIN), 0};
            poll(&p, 1, 50);
        }
    }
    return TT_OK;
}
