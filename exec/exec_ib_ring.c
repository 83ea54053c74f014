/* exec_ib_ring.c - ring and credit arithmetic of the InfiniBand transport
 * (see exec_ib_ring.h for the scheme).  No verbs here: built everywhere. */
#include "exec_ib_ring.h"

#include <string.h>

void exec_ib_tx_init(exec_ib_tx *t, size_t cap, unsigned max_writes)
{
    memset(t, 0, sizeof *t);
    t->cap = cap;
    t->max_piece = cap / 4 ? cap / 4 : 1;
    t->max_writes = max_writes < 1 ? 1 : max_writes > EXEC_IB_MAX_WRITES ? EXEC_IB_MAX_WRITES : max_writes;
}

void exec_ib_rx_init(exec_ib_rx *r, size_t cap)
{
    memset(r, 0, sizeof *r);
    r->cap = cap;
}

/* drop the ends that are both acknowledged and credited */
static void tx_retire(exec_ib_tx *t)
{
    uint64_t done = t->acked < t->credited ? t->acked : t->credited;
    while (t->nends && t->ends[t->first] <= done) {
        t->first = (t->first + 1) % EXEC_IB_MAX_WRITES;
        t->nends--;
    }
}

size_t exec_ib_tx_room(const exec_ib_tx *t, size_t *off)
{
    uint64_t done = t->acked < t->credited ? t->acked : t->credited;
    size_t used = (size_t)(t->sent - done);
    size_t o = (size_t)(t->sent & (t->cap - 1));
    *off = o;
    if (t->nends >= t->max_writes || used >= t->cap)
        return 0;
    size_t n = t->cap - used;
    if (n > t->cap - o)
        n = t->cap - o;
    if (n > t->max_piece)
        n = t->max_piece;
    return n;
}

void exec_ib_tx_posted(exec_ib_tx *t, size_t n)
{
    t->sent += n;
    t->ends[(t->first + t->nends) % EXEC_IB_MAX_WRITES] = t->sent;
    t->nends++;
}

int exec_ib_tx_acked(exec_ib_tx *t, uint64_t end)
{
    /* completions come in posting order: end must be the end of the oldest
     * write not yet acknowledged (ends > acked are never retired) */
    for (unsigned i = 0; i < t->nends; i++) {
        uint64_t e = t->ends[(t->first + i) % EXEC_IB_MAX_WRITES];
        if (e <= t->acked)
            continue;
        if (e != end)
            return -1;
        t->acked = end;
        tx_retire(t);
        return 0;
    }
    return -1;
}

int exec_ib_tx_credit(exec_ib_tx *t, uint64_t tail)
{
    if (tail < t->credited || tail > t->sent)
        return -1;
    t->credited = tail;
    tx_retire(t);
    return 0;
}

int exec_ib_rx_arrived(exec_ib_rx *r, uint64_t n)
{
    if (n == 0 || r->head - r->tail + n > r->cap)
        return -1;
    r->head += n;
    return 0;
}

size_t exec_ib_rx_avail(const exec_ib_rx *r, size_t *off)
{
    size_t o = (size_t)(r->tail & (r->cap - 1));
    size_t n = (size_t)(r->head - r->tail);
    *off = o;
    return n < r->cap - o ? n : r->cap - o;
}

void exec_ib_rx_consumed(exec_ib_rx *r, size_t n) { r->tail += n; }
