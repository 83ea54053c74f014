/*
 * exec_op_pool.c - the communicator's ops: allocated in blocks, reused call after call, freed with
 * the communicator.  The issuing thread (exec_coll.c) takes ops, the queue (exec_queue.c) gives
 * back one it could not queue, the worker (exec_run.c / exec_comm.c) recycles finished ones.
 */
#include "exec_internal.h"

#include <stdlib.h>
#include <string.h>

/* Ops are allocated OP_BLOCK at a time and never freed one by one: the worker gives a finished op
 * back (under the lock it holds anyway), the issuing thread takes all it has given back in one lock
 * and uses them up without locking, and tt_comm_destroy frees the blocks.  A malloc per call, and a
 * free on the worker thread of what the caller's thread allocated (malloc's arena locks), cost a
 * tenth of a small AllReduce's time; a timing loop's first thousand calls no longer allocate one
 * by one either.  At most as many ops exist as were queued at once. */
#define OP_BLOCK 32
typedef struct op_block {
    struct op_block *next;
    exec_op ops[OP_BLOCK];
} op_block;

static exec_op *op_new(tt_comm *comm)
{
    op_block *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->next = comm->op_blocks;
    comm->op_blocks = b;
    comm->nops += OP_BLOCK;
    for (int i = OP_BLOCK - 1; i >= 1; i--) {
        b->ops[i].next = comm->spare_mine;
        comm->spare_mine = &b->ops[i];
    }
    return &b->ops[0];
}

void exec_ops_reserve(tt_comm *comm, size_t n)
{
    while (comm->nops < n) {
        exec_op *o = op_new(comm);
        if (!o)
            return; /* the calls allocate (and fail) as they need */
        exec_op_drop(comm, o);
    }
}

exec_op *exec_op_take(tt_comm *comm)
{
    exec_op *o = comm->spare_mine;
    if (!o)
        return op_new(comm);
    comm->spare_mine = o->next;
    memset(o, 0, sizeof *o);
    return o;
}

void exec_ops_collect_locked(tt_comm *comm)
{
    comm->spare_mine = comm->spare;
    comm->spare = NULL;
    comm->nspare = 0;
}

void exec_op_recycle(tt_comm *comm, exec_op *op)
{
    op->next = comm->spare;
    comm->spare = op;
    comm->nspare++;
}

void exec_op_drop(tt_comm *comm, exec_op *op)
{
    op->next = comm->spare_mine;
    comm->spare_mine = op;
}

void exec_ops_free(tt_comm *comm)
{
    for (op_block *b = comm->op_blocks, *nx; b; b = nx) {
        nx = b->next;
        free(b);
    }
    comm->op_blocks = NULL;
    comm->nops = 0;
    comm->spare = comm->spare_mine = NULL;
}
