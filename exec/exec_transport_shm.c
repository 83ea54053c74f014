/* exec_transport_shm.c - host shared-memory transport between the thread
 * ranks of one process: one single-producer/single-consumer byte ring per
 * directed pair of ranks (exec_world.rings).  Head and tail are free-running
 * 64-bit byte counters; the producer publishes with a release store and the
 * consumer reads with an acquire load, so no lock is taken on the data path. */
#include "exec_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    _Alignas(64) atomic_uint_fast64_t head; /* bytes written */
    _Alignas(64) atomic_uint_fast64_t tail; /* bytes read */
    _Alignas(64) size_t cap;                /* power of two */
    unsigned char data[];
} shm_ring;

typedef struct {
    exec_conn base;
    shm_ring *tx, *rx;
} shm_conn;

void *exec_shm_ring_new(size_t cap)
{
    shm_ring *r = aligned_alloc(64, (sizeof(shm_ring) + cap + 63) & ~(size_t)63);
    if (!r)
        return NULL;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    r->cap = cap;
    return r;
}

static tt_status shm_send_some(exec_conn *c, const void *buf, size_t len, size_t *moved)
{
    shm_ring *r = ((shm_conn *)c)->tx;
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    size_t room = r->cap - (size_t)(head - tail);
    size_t n = len < room ? len : room;
    if (n) {
        size_t off = (size_t)head & (r->cap - 1);
        size_t first = r->cap - off < n ? r->cap - off : n;
        memcpy(r->data + off, buf, first);
        memcpy(r->data, (const char *)buf + first, n - first);
        atomic_store_explicit(&r->head, head + n, memory_order_release);
    }
    *moved = n;
    return TT_OK;
}

static tt_status shm_recv_some(exec_conn *c, void *buf, size_t len, size_t *moved)
{
    shm_ring *r = ((shm_conn *)c)->rx;
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t avail = (size_t)(head - tail);
    size_t n = len < avail ? len : avail;
    if (n) {
        size_t off = (size_t)tail & (r->cap - 1);
        size_t first = r->cap - off < n ? r->cap - off : n;
        memcpy(buf, r->data + off, first);
        memcpy((char *)buf + first, r->data, n - first);
        atomic_store_explicit(&r->tail, tail + n, memory_order_release);
    }
    *moved = n;
    return TT_OK;
}

static int shm_poll_fd(exec_conn *c) { return -1; }

static void shm_close(exec_conn *c) { free(c); }

static tt_status shm_connect_all(tt_comm *comm)
{
    exec_world *w = comm->world;
    if (!w)
        return tt_error_set(TT_ERR_INTERNAL, "shm transport without a process-local world");
    for (int p = 0; p < comm->nranks; p++) {
        if (p == comm->rank)
            continue;
        shm_conn *c = calloc(1, sizeof *c);
        if (!c)
            return tt_error_set(TT_ERR_NOMEM, "rank %d: shm connection to rank %d", comm->rank, p);
        c->base.tp = &exec_transport_shm;
        c->base.peer = p;
        c->tx = w->rings[(size_t)comm->rank * w->nranks + p];
        c->rx = w->rings[(size_t)p * w->nranks + comm->rank];
        comm->conns[p] = &c->base;
    }
    return TT_OK;
}

const exec_transport exec_transport_shm = {
    .name = "shm",
    .connect_all = shm_connect_all,
    .send_some = shm_send_some,
    .recv_some = shm_recv_some,
    .poll_fd = shm_poll_fd,
    .check_peer = NULL,
    .close = shm_close,
};
