/* exec_hostxchg.c - the host exchange of a process communicator: after the
 * TCP mesh and before any transport upgrade, every rank sends its host
 * identity (boot id, host name, pid) on every pair, so that every rank knows
 * which ranks share its machine (comm->node, nnodes) and every rank's process
 * id and host name (comm->peer_pid, peer_host; tt_comm_rank_ident: the header
 * of topo-exec's process ranks, as nccl-tests prints each rank's pid and host). */
#include "exec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char boot_id[40];
    char host[EXEC_HOST_NAME];
    int32_t pid;
} host_ident;

static void read_boot_id(char *out, size_t n)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    out[0] = '\0';
    if (f) {
        if (!fgets(out, (int)n, f))
            out[0] = '\0';
        fclose(f);
    }
    out[strcspn(out, "\n")] = '\0';
}

tt_status exec_host_exchange(tt_comm *comm)
{
    int n = comm->nranks, me = comm->rank;
    int64_t deadline = exec_now_ms() + comm->timeout_ms;
    host_ident mine;
    memset(&mine, 0, sizeof mine);
    mine.pid = (int32_t)getpid();
    read_boot_id(mine.boot_id, sizeof mine.boot_id);
    gethostname(mine.host, sizeof mine.host - 1);
    host_ident *theirs = calloc((size_t)n, sizeof *theirs);
    if (!comm->peer_pid)
        comm->peer_pid = calloc((size_t)n, sizeof *comm->peer_pid);
    if (!comm->peer_host)
        comm->peer_host = calloc((size_t)n, EXEC_HOST_NAME);
    if (!theirs || !comm->peer_pid || !comm->peer_host) {
        free(theirs);
        return tt_error_set(TT_ERR_NOMEM, "rank %d: host exchange", me);
    }
    tt_status st = TT_OK;
    /* the message names "shared-memory": the pair transport that needs the identity first */
    for (int p = 0; st == TT_OK && p < n; p++)
        if (p != me)
            st = exec_tcp_setup_io(comm->conns[p], &mine, sizeof mine, 1, deadline, me, "shared-memory");
    for (int p = 0; st == TT_OK && p < n; p++)
        if (p != me)
            st = exec_tcp_setup_io(comm->conns[p], &theirs[p], sizeof theirs[p], 0, deadline, me,
                                   "shared-memory");
    /* node of every rank: the lowest rank with the same machine identity */
    if (st == TT_OK) {
        theirs[me] = mine;
        int nn = 0;
        for (int r = 0; r < n; r++) {
            comm->peer_pid[r] = theirs[r].pid;
            theirs[r].host[EXEC_HOST_NAME - 1] = '\0';
            memcpy(comm->peer_host + (size_t)r * EXEC_HOST_NAME, theirs[r].host, EXEC_HOST_NAME);
            comm->node[r] = -1;
            for (int q = 0; q < r && comm->node[r] < 0; q++)
                if (theirs[q].boot_id[0] && !strncmp(theirs[q].boot_id, theirs[r].boot_id, sizeof mine.boot_id) &&
                    !strncmp(theirs[q].host, theirs[r].host, sizeof mine.host))
                    comm->node[r] = comm->node[q];
            if (comm->node[r] < 0)
                comm->node[r] = nn++;
        }
        comm->nnodes = nn;
    }
    free(theirs);
    return st;
}

void tt_comm_rank_ident(const tt_comm *comm, int r, int *pid, const char **host)
{
    *pid = -1;
    *host = "-";
    if (!comm || r < 0 || r >= comm->nranks || !comm->peer_pid || !comm->peer_host)
        return;
    *pid = comm->peer_pid[r];
    if (comm->peer_host[(size_t)r * EXEC_HOST_NAME])
        *host = comm->peer_host + (size_t)r * EXEC_HOST_NAME;
}
