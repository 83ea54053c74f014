/* support_exec.h - exact inputs and expected results for executor tests. */
#ifndef SUPPORT_EXEC_H
#define SUPPORT_EXEC_H
#include "tt_exec.h"
void sx_set(void *buf, tt_dtype t, size_t i, long v);
/* small integers (products: 1 or 2), exact in every type, so any order of
 * reduction gives the same bits */
long sx_value(int rank, size_t i, tt_dtype t, tt_redop op);
void sx_fill(void *buf, int rank, size_t n, tt_dtype t, tt_redop op, size_t index0);
void sx_expected_reduce(void *out, int nranks, size_t n, tt_dtype t, tt_redop op, size_t index0);
#endif
