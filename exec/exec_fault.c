/*
 * exec_fault.c - fault injection for reliability tests (docs/reliability.md).
 *
 *   TOPOTUNE_FAULT=KIND:RANK[:SEQ]   (unset: nothing happens)
 *     drop-tcp  rank RANK shuts down its TCP connections as collective #SEQ starts
 *     corrupt   rank RANK sends a corrupted collective header for collective #SEQ
 * SEQ is the 1-based collective number on the communicator (default 1).  The
 * other ranks must then fail with a clear error naming RANK within the deadline.
 *
 *   TOPOTUNE_FAULT_SLOW=ALGO:USEC    every collective that runs algorithm ALGO sleeps USEC
 *     microseconds on every rank before it starts: a candidate made slow on purpose, so that
 *     tests of the validation loop (topo-exec --validate) do not depend on real timings.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_internal.h"
#include "exec_transport.h"

static pthread_once_t fault_once = PTHREAD_ONCE_INIT;
static char fault_kind[16];
static int fault_rank = -1;
static unsigned long long fault_seq = 1;

static void fault_read_env(void)
{
    const char *s = tt_setting("TOPOTUNE_FAULT");
    char kind[16];
    int rank;
    unsigned long long seq = 1;
    if (!s || !*s)
        return;
    int n = sscanf(s, "%15[a-z-]:%d:%llu", kind, &rank, &seq);
    if (n < 2 || rank < 0 || seq < 1 || (strcmp(kind, "drop-tcp") && strcmp(kind, "corrupt"))) {
        TT_WARN("exec", "TOPOTUNE_FAULT='%s' ignored: expected drop-tcp|corrupt:RANK[:SEQ]", s);
        return;
    }
    snprintf(fault_kind, sizeof fault_kind, "%s", kind);
    fault_rank = rank;
    fault_seq = seq;
}

/* Whether fault `kind` fires on this rank for collective `seq`. */
static int fault_hit(const tt_comm *comm, const char *kind, uint64_t seq)
{
    pthread_once(&fault_once, fault_read_env);
    return fault_rank == comm->rank && seq == fault_seq && !strcmp(fault_kind, kind);
}

static pthread_once_t slow_once = PTHREAD_ONCE_INIT;
static int slow_algo = -1;
static long slow_us;

static void slow_read_env(void)
{
    const char *s = tt_setting("TOPOTUNE_FAULT_SLOW");
    char name[32];
    long us;
    tt_algo a;
    if (!s || !*s)
        return;
    if (sscanf(s, "%31[^:]:%ld", name, &us) != 2 || us < 0 || us > 10000000 || tt_algo_parse(name, &a) != TT_OK) {
        TT_WARN("exec", "TOPOTUNE_FAULT_SLOW='%s' ignored: expected ALGO:USEC (e.g. ring:10000)", s);
        return;
    }
    slow_algo = (int)a;
    slow_us = us;
}

void exec_fault_slow(const tt_comm *comm, tt_algo algo)
{
    pthread_once(&slow_once, slow_read_env);
    if (slow_algo < 0 || (int)algo != slow_algo)
        return;
    (void)comm;
    struct timespec ts = {slow_us / 1000000, (slow_us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

void exec_fault_before_collective(tt_comm *comm, uint64_t seq)
{
    if (!fault_hit(comm, "drop-tcp", seq))
        return;
    TT_WARN("exec", "fault injection: rank %d drops its TCP connections before collective #%llu",
            comm->rank, (unsigned long long)seq);
    for (int p = 0; p < comm->nranks; p++)
        if (comm->conns[p] && comm->conns[p]->tp->sever) /* tcp: shutdown(); shm, ib: none */
            comm->conns[p]->tp->sever(comm->conns[p]);
    /* what this rank then sees (its own sockets broken) is its own doing: its report names itself,
     * not the peer it happened to write to first (exec_xfer.c, fail_lost) */
    comm->fault_dropped = 1;
}

int exec_fault_corrupt_header(const tt_comm *comm, uint64_t seq)
{
    if (!fault_hit(comm, "corrupt", seq))
        return 0;
    TT_WARN("exec", "fault injection: rank %d corrupts its header of collective #%llu", comm->rank,
            (unsigned long long)seq);
    return 1;
}
