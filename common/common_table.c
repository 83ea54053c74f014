/*
 * common_table.c - lookup in a list of tuning-table entries (tt_tune_entry, tt_common.h):
 * shared by tune/ (tables), exec/ (plans per size) and the NCCL tuner plugin.
 */
#include "tt_common.h"

const tt_tune_entry *tt_tune_entry_find(const tt_tune_entry *entries, int n, tt_coll coll, uint64_t bytes)
{
    for (int i = 0; entries && i < n; i++)
        if (entries[i].coll == coll && bytes >= entries[i].min_bytes && bytes <= entries[i].max_bytes)
            return &entries[i];
    return NULL;
}
