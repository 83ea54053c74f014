/* exec_clock.c - the executor's monotonic clock (deadlines, timeouts, progress
 * stamps), below every other exec file. */
#include "exec_internal.h"

int64_t exec_now_us(void)
{
    return tt_now_ns() / 1000;
}

int64_t exec_now_ms(void)
{
    return tt_now_ns() / 1000000;
}
