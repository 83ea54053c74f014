/* test_exec_ib_ring.c - ring and credit bookkeeping of the InfiniBand
 * transport (exec_ib_ring.c): room within credit, staging and write-count
 * limits, pieces never crossing the ring end, in-order acknowledgements,
 * corrupt credits/immediates refused, and a randomised byte-stream simulation
 * in which the "HCA" reads the staging ring only when it executes a write and
 * acknowledgements and credits arrive late: the stream must arrive intact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "exec_ib_ring.h"

static void test_room_limits(void **state)
{
    exec_ib_tx t;
    size_t off;
    exec_ib_tx_init(&t, 4096, 3);
    assert_int_equal(exec_ib_tx_room(&t, &off), 1024); /* max piece = cap / 4 */
    assert_int_equal(off, 0);
    for (int i = 0; i < 3; i++)
        exec_ib_tx_posted(&t, 1024);
    /* three writes outstanding = the receiver's receive depth: nothing more */
    assert_int_equal(exec_ib_tx_room(&t, &off), 0);
    /* credited but not acknowledged: staging still busy */
    assert_int_equal(exec_ib_tx_credit(&t, 1024), 0);
    assert_int_equal(exec_ib_tx_room(&t, &off), 0);
    assert_int_equal(exec_ib_tx_acked(&t, 1024), 0);
    assert_int_equal(exec_ib_tx_room(&t, &off), 1024);
    assert_int_equal(off, 3072);
    exec_ib_tx_posted(&t, 1024);
    /* 3072 bytes in flight + ring wrap: room ends at the ring end */
    assert_int_equal(exec_ib_tx_room(&t, &off), 0); /* 3 writes outstanding again */
    assert_int_equal(exec_ib_tx_acked(&t, 2048), 0);
    assert_int_equal(exec_ib_tx_acked(&t, 3072), 0);
    assert_int_equal(exec_ib_tx_credit(&t, 3072), 0);
    assert_int_equal(exec_ib_tx_room(&t, &off), 1024);
    assert_int_equal(off, 0); /* 4096 mod 4096 */
}

static void test_wrap_and_byte_limit(void **state)
{
    exec_ib_tx t;
    size_t off;
    exec_ib_tx_init(&t, 4096, 64);
    exec_ib_tx_posted(&t, 1000);
    exec_ib_tx_posted(&t, 1000);
    exec_ib_tx_posted(&t, 1000);
    assert_int_equal(exec_ib_tx_room(&t, &off), 1024); /* 1096 free, max piece 1024 */
    assert_int_equal(off, 3000);
    exec_ib_tx_posted(&t, 1024);
    /* 4024 of 4096 bytes unconsumed: 72 bytes of room up to the ring end */
    assert_int_equal(exec_ib_tx_room(&t, &off), 72);
    assert_int_equal(off, 4024);
    exec_ib_tx_posted(&t, 72);
    assert_int_equal(exec_ib_tx_room(&t, &off), 0); /* ring full */
    assert_int_equal(exec_ib_tx_acked(&t, 1000), 0);
    assert_int_equal(exec_ib_tx_credit(&t, 500), 0); /* partial consumption */
    assert_int_equal(exec_ib_tx_room(&t, &off), 500);
    assert_int_equal(off, 0);
}

static void test_corrupt_inputs(void **state)
{
    exec_ib_tx t;
    exec_ib_tx_init(&t, 4096, 8);
    exec_ib_tx_posted(&t, 100);
    exec_ib_tx_posted(&t, 200);
    assert_int_equal(exec_ib_tx_acked(&t, 300), -1);  /* out of order */
    assert_int_equal(exec_ib_tx_acked(&t, 150), -1);  /* not a write end */
    assert_int_equal(exec_ib_tx_acked(&t, 100), 0);
    assert_int_equal(exec_ib_tx_acked(&t, 100), -1);  /* twice */
    assert_int_equal(exec_ib_tx_acked(&t, 400), -1);  /* beyond sent */
    assert_int_equal(exec_ib_tx_credit(&t, 301), -1); /* more than sent */
    assert_int_equal(exec_ib_tx_credit(&t, 250), 0);
    assert_int_equal(exec_ib_tx_credit(&t, 249), -1); /* goes back */

    exec_ib_rx r;
    size_t off;
    exec_ib_rx_init(&r, 4096);
    assert_int_equal(exec_ib_rx_arrived(&r, 0), -1);
    assert_int_equal(exec_ib_rx_arrived(&r, 4000), 0);
    assert_int_equal(exec_ib_rx_arrived(&r, 97), -1); /* overflow */
    assert_int_equal(exec_ib_rx_arrived(&r, 96), 0);
    assert_int_equal(exec_ib_rx_avail(&r, &off), 4096);
    exec_ib_rx_consumed(&r, 4090);
    assert_int_equal(exec_ib_rx_arrived(&r, 100), 0);
    assert_int_equal(exec_ib_rx_avail(&r, &off), 6); /* up to the ring end */
    assert_int_equal(off, 4090);
    exec_ib_rx_consumed(&r, 6);
    assert_int_equal(exec_ib_rx_avail(&r, &off), 100);
    assert_int_equal(off, 0);
}

/* ---- randomised simulation ---------------------------------------------- */

typedef struct {
    size_t off, len;
    uint64_t end;
} sim_write;

static void test_stream_simulation(void **state)
{
    enum { CAP = 1024, TOTAL = 300000, MAXW = 8 };
    unsigned char *src = malloc(TOTAL), *dst = malloc(TOTAL), stage[CAP], ring[CAP];
    assert_non_null(src);
    assert_non_null(dst);
    srand(12345);
    for (size_t i = 0; i < TOTAL; i++)
        src[i] = (unsigned char)(rand() >> 7);
    exec_ib_tx t;
    exec_ib_rx r;
    exec_ib_tx_init(&t, CAP, MAXW);
    exec_ib_rx_init(&r, CAP);
    sim_write posted[64]; /* posted, not executed (HCA queue) */
    int nposted = 0;
    uint64_t acks[64]; /* executed, completion not yet seen by the sender */
    int nacks = 0;
    size_t arrived[64];
    int narrived = 0;
    uint64_t credit_in_flight = 0, credit_value = 0;
    size_t sent = 0, recvd = 0;
    int recv_wrs = MAXW; /* receive requests posted by the receiver */
    long rounds = 0;
    while (recvd < TOTAL) {
        assert_true(++rounds < 10000000);
        int act = rand() % 5;
        if (act == 3 && rand() % 4) /* the receiver is often busy elsewhere */
            continue;
        if (act == 0 && sent < TOTAL) { /* sender posts what fits */
            size_t off, n = exec_ib_tx_room(&t, &off);
            size_t want = 1 + (size_t)rand() % 700;
            if (n > want)
                n = want;
            if (n > TOTAL - sent)
                n = TOTAL - sent;
            if (n) {
                memcpy(stage + off, src + sent, n);
                sent += n;
                exec_ib_tx_posted(&t, n);
                posted[nposted++] = (sim_write){off, n, t.sent};
                assert_true(nposted <= MAXW);
            }
        } else if (act == 1 && nposted) { /* HCA executes the oldest write now */
            sim_write w = posted[0];
            memmove(posted, posted + 1, (size_t)--nposted * sizeof *posted);
            assert_true(recv_wrs > 0); /* a receive request must be there (else RNR) */
            recv_wrs--;
            memcpy(ring + w.off, stage + w.off, w.len);
            arrived[narrived++] = w.len; /* receive completion, not yet polled */
            acks[nacks++] = w.end;
        } else if (act == 2 && nacks) { /* sender sees the oldest completion */
            assert_int_equal(exec_ib_tx_acked(&t, acks[0]), 0);
            memmove(acks, acks + 1, (size_t)--nacks * sizeof *acks);
        } else if (act == 3) { /* receiver polls its completions, reposts, consumes some */
            for (int i = 0; i < narrived; i++) {
                assert_int_equal(exec_ib_rx_arrived(&r, arrived[i]), 0);
                recv_wrs++;
            }
            narrived = 0;
            size_t off, n = exec_ib_rx_avail(&r, &off);
            size_t want = 1 + (size_t)rand() % 900;
            if (n > want)
                n = want;
            memcpy(dst + recvd, ring + off, n);
            recvd += n;
            exec_ib_rx_consumed(&r, n);
            if (!credit_in_flight && r.tail != r.returned) { /* credit write, delivered later */
                credit_in_flight = 1;
                credit_value = r.returned = r.tail;
            }
        } else if (act == 4 && credit_in_flight) {
            assert_int_equal(exec_ib_tx_credit(&t, credit_value), 0);
            credit_in_flight = 0;
        }
    }
    assert_memory_equal(src, dst, TOTAL);
    free(src);
    free(dst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_room_limits),
        cmocka_unit_test(test_wrap_and_byte_limit),
        cmocka_unit_test(test_corrupt_inputs),
        cmocka_unit_test(test_stream_simulation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
