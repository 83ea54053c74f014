/*
 * exec_measure_mem.c - how much memory a host sweep needs and whether this machine has it
 * (tt_sweep_host_mem): refused up front by topo-exec instead of being killed by the OOM killer
 * half-way; the nccl-tests drop-in lowers -e to what fits, as nccl-tests does.
 */
#include <stdio.h>
#include <string.h>

#include "tt_exec.h"

/* MemAvailable from /proc/meminfo in bytes, 0 when unknown. */
static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

void tt_sweep_host_mem(const tt_sweep_opts *o, int nranks, int nlocal, tt_sweep_mem *m)
{
    memset(m, 0, sizeof *m);
    size_t es = tt_dtype_size(o->dtype);
    int per_rank = o->coll == TT_COLL_ALLGATHER || o->coll == TT_COLL_REDUCESCATTER;
    double cnt = (double)(o->maxb / es / (per_rank ? (uint64_t)nranks : 1));
    double in = o->coll == TT_COLL_REDUCESCATTER ? cnt * nranks : cnt;
    double out = o->coll == TT_COLL_ALLGATHER ? cnt * nranks : cnt;
    m->need = ((in > out ? in : out) * 2 + out) * (double)es * nlocal;
    m->avail = mem_available();
    m->fits = !m->avail || !(m->need > 0.9 * (double)m->avail);
    m->fit_maxb = m->fits ? o->maxb : (uint64_t)((double)o->maxb * 0.9 * (double)m->avail / m->need);
}
