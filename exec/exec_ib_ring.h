/* exec_ib_ring.h - bookkeeping of the InfiniBand transport's byte rings,
 * pure arithmetic (no verbs), unit-tested in tests/unit/test_exec_ib_ring.c.
 *
 * Per directed pair the RECEIVER owns a registered ring of `cap` bytes; the
 * SENDER owns a registered staging ring of the same size and writes byte
 * stream offset x from staging[x mod cap] to ring[x mod cap] with one RDMA
 * WRITE WITH IMMEDIATE per piece (immediate = piece length).  Counters are
 * free-running 64-bit byte offsets:
 *   sender:   sent (posted) >= acked (local write completions, in order)
 *             sent >= credited (receiver's consumed offset, RDMA-written back)
 *   receiver: head (arrived, sum of immediates) >= tail (consumed) >= returned
 * A staging byte may be overwritten once its write completed locally (acked)
 * AND the receiver consumed the ring byte (credited): room = cap - (sent -
 * min(acked, credited)).  Every write consumes one receive request of the
 * receiver; a write is known to have been polled (its receive reposted) once
 * the receiver's consumed offset passed its end, so the sender keeps the ends
 * of writes not yet both acknowledged and credited and never has more of them
 * than the receiver keeps posted (`max_writes`). */
#ifndef EXEC_IB_RING_H
#define EXEC_IB_RING_H

#include <stddef.h>
#include <stdint.h>

#define EXEC_IB_MAX_WRITES 256 /* upper bound of max_writes (receive depth) */

typedef struct {
    size_t cap;          /* ring bytes, power of two */
    size_t max_piece;    /* largest single write (engineering: cap / 4) */
    unsigned max_writes; /* receive requests the receiver keeps posted */
    uint64_t sent, acked, credited;
    uint64_t ends[EXEC_IB_MAX_WRITES]; /* FIFO of write end offsets */
    unsigned nends, first;
} exec_ib_tx;

typedef struct {
    size_t cap;
    uint64_t head, tail, returned;
} exec_ib_rx;

void exec_ib_tx_init(exec_ib_tx *t, size_t cap, unsigned max_writes);
void exec_ib_rx_init(exec_ib_rx *r, size_t cap);
/* Bytes the next write may carry (contiguous in the ring, within credit and
 * staging room, at most max_piece; 0 when nothing may be posted); *off = ring
 * offset where it starts. */
size_t exec_ib_tx_room(const exec_ib_tx *t, size_t *off);
/* A write of n bytes (n <= exec_ib_tx_room) was posted. */
void exec_ib_tx_posted(exec_ib_tx *t, size_t n);
/* The local completion of the write ending at `end` arrived.  -1 when end is
 * not the oldest unacknowledged write's end (completions are in order). */
int exec_ib_tx_acked(exec_ib_tx *t, uint64_t end);
/* The receiver reports it consumed up to `tail`.  -1 when tail goes back or
 * beyond what was sent (a corrupt credit). */
int exec_ib_tx_credit(exec_ib_tx *t, uint64_t tail);
/* n bytes arrived (an immediate).  -1 when that overflows the ring. */
int exec_ib_rx_arrived(exec_ib_rx *r, uint64_t n);
/* Contiguous bytes readable now; *off = ring offset. */
size_t exec_ib_rx_avail(const exec_ib_rx *r, size_t *off);
void exec_ib_rx_consumed(exec_ib_rx *r, size_t n);

#endif
