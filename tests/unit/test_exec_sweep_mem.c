/* test_exec_sweep_mem.c - the memory of a host sweep (tt_sweep_host_mem, exec/exec_measure_mem.c):
 * send, receive and expected buffers of the largest size per local rank, and the largest -e that
 * fits when it does not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tt_exec.h"

static tt_sweep_opts sweep(tt_coll coll, tt_dtype dtype, uint64_t maxb)
{
    tt_sweep_opts o;
    memset(&o, 0, sizeof o);
    o.coll = coll;
    o.dtype = dtype;
    o.minb = 1024;
    o.maxb = maxb;
    return o;
}

static void test_need(void **st)
{
    (void)st;
    tt_sweep_mem m;
    tt_sweep_opts o = sweep(TT_COLL_ALLREDUCE, TT_FLOAT, 1 << 20);
    tt_sweep_host_mem(&o, 4, 4, &m);
    assert_true(m.need == 3.0 * (1 << 20) * 4); /* send, receive, expected per rank */
    o = sweep(TT_COLL_ALLGATHER, TT_FLOAT, 1 << 20);
    tt_sweep_host_mem(&o, 4, 1, &m);
    assert_true(m.need == (2.0 * (1 << 20) + (1 << 20))); /* the output is nranks parts of maxb/nranks */
    o = sweep(TT_COLL_REDUCESCATTER, TT_DOUBLE, 1 << 20);
    tt_sweep_host_mem(&o, 8, 2, &m);
    assert_true(m.need == (2.0 * (1 << 20) + (1 << 17)) * 2);
}

static void test_fits(void **st)
{
    (void)st;
    tt_sweep_mem m;
    tt_sweep_opts o = sweep(TT_COLL_ALLREDUCE, TT_FLOAT, 4096);
    tt_sweep_host_mem(&o, 2, 2, &m);
    assert_true(m.fits); /* 24 KiB fit anywhere (or the memory is unknown) */
    assert_true(m.fit_maxb == 4096);
    o = sweep(TT_COLL_ALLREDUCE, TT_FLOAT, (uint64_t)1 << 62); /* more than any machine has */
    tt_sweep_host_mem(&o, 2, 2, &m);
    if (!m.avail)
        skip(); /* no /proc/meminfo */
    assert_false(m.fits);
    assert_true(m.fit_maxb < o.maxb);
    assert_true((double)m.fit_maxb * 3 * 2 <= 0.9 * (double)m.avail * 1.0001);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_need),
        cmocka_unit_test(test_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
