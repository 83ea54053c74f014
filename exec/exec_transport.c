/* exec_transport.c - the transport registry: every transport in one table,
 * the one parser of TOPOTUNE_TRANSPORT, the connection of a communicator
 * (rendezvous, then the upgrade walk of process communicators) and the name
 * of the transports a communicator uses. */
#include "exec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Priority order: a pair takes the first transport that can connect it.  The
 * base transport (tcp, no upgrade hook) comes last: it connects everything. */
const exec_transport *const exec_transport_table[] = {
    &exec_transport_shm, /* same host: shared-memory rings */
    &exec_transport_ib,  /* other hosts: InfiniBand / RoCE verbs */
    &exec_transport_tcp, /* the base: every pair, the rendezvous' TCP mesh */
    NULL};

const exec_transport *exec_transport_find(const char *name)
{
    for (int i = 0; exec_transport_table[i]; i++)
        if (!strcmp(exec_transport_table[i]->name, name))
            return exec_transport_table[i];
    return NULL;
}

unsigned exec_transport_bit(const exec_transport *tp)
{
    for (int i = 0; exec_transport_table[i]; i++)
        if (exec_transport_table[i] == tp)
            return 1u << i;
    return 0;
}

tt_status exec_transport_mode(const exec_transport **forced)
{
    const char *tr = tt_setting("TOPOTUNE_TRANSPORT");
    *forced = NULL;
    if (!tr || !*tr || !strcmp(tr, "auto"))
        return TT_OK;
    if ((*forced = exec_transport_find(tr)) != NULL)
        return TT_OK;
    char valid[256] = "auto";
    size_t n = strlen(valid);
    for (int i = 0; exec_transport_table[i] && n < sizeof valid; i++)
        n += (size_t)snprintf(valid + n, sizeof valid - n, ", %s", exec_transport_table[i]->name);
    return tt_error_set(TT_ERR_INVALID, "TOPOTUNE_TRANSPORT='%s' (valid: %s)", tr, valid);
}

tt_status exec_transport_connect(tt_comm *comm)
{
    if (comm->tp->connect_all)
        return comm->tp->connect_all(comm);
    if (!comm->boot)
        return tt_error_set(TT_ERR_INTERNAL, "tcp transport without a rendezvous id");
    tt_status st = exec_tcp_bootstrap(comm, comm->boot);
    if (st == TT_OK)
        st = exec_transport_upgrade_all(comm); /* shm, ib, ... from the table */
    return st;
}

tt_status exec_transport_upgrade_all(tt_comm *comm)
{
    const exec_transport *forced;
    tt_status st = exec_transport_mode(&forced);
    if (st != TT_OK)
        return st;
    /* host identities first: every can_connect may use comm->node */
    if ((st = exec_host_exchange(comm)) != TT_OK)
        return st;
    int n = comm->nranks, me = comm->rank;
    unsigned char *want = calloc((size_t)n, 1);
    if (!want)
        return tt_error_set(TT_ERR_NOMEM, "rank %d: transport setup", me);
    for (int i = 0; st == TT_OK && exec_transport_table[i]; i++) {
        const exec_transport *tp = exec_transport_table[i];
        if (!tp->upgrade || !tp->can_connect || (forced && tp != forced))
            continue;
        int nwant = 0;
        for (int p = 0; p < n; p++) {
            want[p] = p != me && comm->conns[p] && comm->conns[p]->tp == comm->tp &&
                      tp->can_connect(comm, p, forced == tp);
            nwant += want[p];
        }
        if (nwant)
            st = tp->upgrade(comm, want, forced == tp);
    }
    free(want);
    return st;
}

void exec_transport_describe(const tt_comm *comm, char *buf, size_t len)
{
    unsigned used = 0;
    size_t n = 0;
    for (int p = 0; p < comm->nranks; p++)
        if (comm->conns[p])
            used |= exec_transport_bit(comm->conns[p]->tp);
    if (len)
        buf[0] = '\0';
    for (int i = 0; exec_transport_table[i] && n < len; i++)
        if (used & (1u << i))
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "+" : "", exec_transport_table[i]->name);
    if (!used && len)
        snprintf(buf, len, "%s", comm->tp->name);
}
