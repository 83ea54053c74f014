/* exec_queue.c - the communicator's op queue: collectives queued for its worker (exec_comm.c,
 * which runs them through exec_run.c), with back-pressure, group batching (tt_group_start/end)
 * and tt_comm_wait. */
#include "exec_internal.h"

#include <stdlib.h>
#include <string.h>

static __thread int group_depth;
static __thread exec_op *group_head, *group_tail;


static void submit(tt_comm *comm, exec_op *first, exec_op *last)
{
    size_t n = 0;
    for (exec_op *o = first; o; o = o->next)
        n++;
    pthread_mutex_lock(&comm->mu);
    while (comm->queued + n > EXEC_MAX_QUEUED && comm->queued > 0 && comm->err == TT_OK)
        pthread_cond_wait(&comm->cv_idle, &comm->mu);
    comm->queued += n;
    if (comm->tail)
        comm->tail->next = first;
    else
        comm->head = first;
    comm->tail = last;
    pthread_cond_signal(&comm->cv_work);
    pthread_mutex_unlock(&comm->mu);
}

/* Ops queued inside a group, with their communicators (parallel arrays); a group of up to
 * GROUP_SMALL ops (a timing loop's one call per group) uses the thread's own array, no malloc. */
#define GROUP_SMALL 16
static __thread tt_comm *group_small[GROUP_SMALL];
static __thread tt_comm **group_comms;
static __thread size_t group_n, group_cap;

/* Takes ownership of op (a heap copy).  Used by exec_coll.c, which has checked that the
 * communicator has not failed (in the same lock as it took the op). */
tt_status exec_enqueue(tt_comm *comm, exec_op *op)
{
    op->next = NULL;
    if (group_depth == 0) {
        submit(comm, op, op);
        return TT_OK;
    }
    if (!group_comms) {
        group_comms = group_small;
        group_cap = GROUP_SMALL;
    }
    if (group_n == group_cap) {
        size_t nc = group_cap * 2;
        tt_comm **p = group_comms == group_small ? malloc(nc * sizeof *p) : realloc(group_comms, nc * sizeof *p);
        if (p && group_comms == group_small)
            memcpy(p, group_small, sizeof group_small);
        if (!p) {
            exec_op_drop(comm, op);
            return tt_error_set(TT_ERR_NOMEM, "group");
        }
        group_comms = p;
        group_cap = nc;
    }
    group_comms[group_n++] = comm;
    if (group_tail)
        group_tail->next = op;
    else
        group_head = op;
    group_tail = op;
    return TT_OK;
}

int exec_in_group(void) { return group_depth > 0; }

void tt_group_start(void) { group_depth++; }

tt_status tt_group_end(void)
{
    if (group_depth <= 0)
        return tt_error_set(TT_ERR_INVALID, "tt_group_end without tt_group_start");
    if (--group_depth > 0)
        return TT_OK;
    /* hand each communicator its ops in issue order, one batch per comm */
    exec_op *op = group_head;
    size_t i = 0;
    group_head = group_tail = NULL;
    while (op) {
        tt_comm *c = group_comms[i];
        exec_op *first = op, *last = op;
        size_t j = i + 1;
        exec_op *nx = op->next;
        /* collect following ops of the same comm that are adjacent */
        while (nx && group_comms[j] == c) {
            last = nx;
            nx = nx->next;
            j++;
        }
        last->next = NULL;
        submit(c, first, last);
        op = nx;
        i = j;
    }
    group_n = 0;
    if (group_comms != group_small)
        free(group_comms);
    group_comms = group_small;
    group_cap = GROUP_SMALL;
    return TT_OK;
}

tt_status tt_comm_wait(tt_comm *comm)
{
    if (!comm)
        return tt_error_set(TT_ERR_INVALID, "tt_comm_wait: NULL communicator");
    if (group_depth > 0)
        return tt_error_set(TT_ERR_INVALID, "tt_comm_wait inside a group: call tt_group_end first");
    pthread_mutex_lock(&comm->mu);
    while (comm->head || comm->busy)
        pthread_cond_wait(&comm->cv_idle, &comm->mu);
    tt_status st = comm->err;
    char msg[EXEC_ERRMSG_MAX];
    memcpy(msg, comm->errmsg, sizeof msg);
    pthread_mutex_unlock(&comm->mu);
    if (st != TT_OK)
        return tt_error_set(st, "%s", msg);
    return TT_OK;
}

int tt_comm_idle(tt_comm *comm)
{
    pthread_mutex_lock(&comm->mu);
    int idle = !comm->head && !comm->busy;
    pthread_mutex_unlock(&comm->mu);
    return idle;
}
