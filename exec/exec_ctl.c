/* exec_ctl.c - failure reports between process ranks.
 *
 * Every pair of ranks keeps a control socket (rank 0's are the rendezvous
 * sockets, the others' come with the data mesh, exec_bootstrap.c).  A rank
 * whose collective fails writes its message (one fixed-size record) to every
 * other rank directly, with no relay: a rank that is stopped or dead, rank 0
 * included, cannot keep the others from hearing each other.  Ranks waiting
 * in a collective watch these sockets, so a rank far from the trouble reports
 * the original cause ("... timed out waiting for rank 3") instead of "lost
 * connection to <the neighbour that just gave up>".  Best effort: records are
 * written without blocking, and a socket that closes is ignored here (the
 * data connections detect deaths).
 *
 * Timeouts: a rank that times out reports which rank it waits for to every
 * rank; a rank inside a collective that sees such a report reports its own
 * wait at once.  Within a short grace every rank so
 * learns the whole wait-for chain ("2 waits for 1, 1 for 0, 0 for 3") and
 * names its end - the rank that reports nothing, i.e. the stuck one - instead
 * of its own neighbour. */
#include "exec_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    int32_t origin;      /* reporting rank */
    int32_t waited_for;  /* the rank it timed out waiting for, or -1 */
    int32_t cause;       /* the rank whose failure started it (relays keep it) */
    char msg[EXEC_CTL_MSG - 12];
} ctl_rec;

void exec_ctl_report(tt_comm *comm, const char *msg, int waited_for, int cause)
{
    if (!comm->ctl)
        return;
    ctl_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.origin = comm->rank;
    rec.waited_for = waited_for;
    rec.cause = cause;
    snprintf(rec.msg, sizeof rec.msg, "%s", msg);
    for (int r = 0; r < comm->nranks; r++) {
        int fd = comm->ctl[r];
        if (fd < 0)
            continue;
        /* the record is small: it fits a socket buffer; a short write is
         * not retried (the peer may be gone) */
        ssize_t w = send(fd, &rec, sizeof rec, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)w;
    }
}

int exec_ctl_chain_end(tt_comm *comm, int from, char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "%d", from);
    int x = from, steps = 0;
    while (comm->ctl_waits && comm->ctl_waits[x] >= 0 && steps++ < comm->nranks) {
        x = comm->ctl_waits[x];
        if (len < cap)
            len += (size_t)snprintf(buf + len, cap - len, " -> %d", x);
        if (x == from)
            break; /* a cycle: every rank waits for another one */
    }
    return x == from ? -1 : x;
}

tt_status exec_ctl_check(tt_comm *comm, int ignore_cause)
{
    if (!comm->ctl)
        return TT_OK;
    for (int r = 0; r < comm->nranks; r++) {
        for (;;) { /* every record waiting on this socket */
            int fd = comm->ctl[r];
            if (fd < 0)
                break;
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN))
                break;
            ctl_rec rec;
            size_t got = 0;
            int64_t until = exec_now_ms() + 200; /* the rest of a record in flight */
            while (got < sizeof rec) {
                ssize_t n = recv(fd, (char *)&rec + got, sizeof rec - got, MSG_DONTWAIT);
                if (n > 0) {
                    got += (size_t)n;
                    continue;
                }
                if (n == 0 || (errno != EAGAIN && errno != EINTR) || exec_now_ms() > until)
                    break;
                poll(&p, 1, 10);
            }
            if (got < sizeof rec) { /* closed or garbled: stop watching this socket */
                close(fd);
                comm->ctl[r] = -1;
                break;
            }
            rec.msg[sizeof rec.msg - 1] = '\0';
            if (rec.origin < 0 || rec.origin >= comm->nranks || rec.waited_for >= comm->nranks)
                continue; /* garbled */
            if (rec.origin == comm->rank)
                continue; /* my own report, relayed back */
            if (rec.waited_for >= 0) { /* a wait that timed out: learn it, let the caller report its own */
                comm->ctl_waits[rec.origin] = rec.waited_for;
                return tt_error_set(TT_ERR_TIMEOUT, "rank %d timed out waiting for rank %d", rec.origin,
                                    rec.waited_for);
            }
            if (ignore_cause >= 0 && rec.cause == ignore_cause)
                continue;
            comm->ctl_cause = rec.cause;
            return tt_error_set(TT_ERR_REMOTE, "aborted because another rank failed: %s", rec.msg);
        }
    }
    return TT_OK;
}
