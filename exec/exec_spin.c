/* exec_spin.c - how long an idle wait of the progress engine busy-polls before
 * it yields the CPU (exec_xfer.c): TOPOTUNE_SPIN_US (default EXEC_SPIN_US), but
 * never when the ranks of this host outnumber the CPUs this process may run on
 * (oversubscribed): there a spinning rank burns the time slice the rank it
 * waits for needs, so the wait yields at once.  exec_rank_has_cpu: whether no
 * other rank needs this process's CPUs (a process rank that a launcher bound to
 * part of the machine has its own), the condition of the shm transport's short
 * wait for a small receive (exec_transport_shm.c). */
#include "exec_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

static int64_t spin_env = EXEC_SPIN_US;
static pthread_once_t spin_once = PTHREAD_ONCE_INIT;
static void spin_init(void)
{
    const char *s = tt_setting("TOPOTUNE_SPIN_US");
    long long v;
    if (s && *s && tt_parse_ll(s, &v) == TT_OK && v >= 0 && v <= 10000000)
        spin_env = v;
}

int exec_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int exec_local_ranks(const tt_comm *comm)
{
    if (comm->world) /* thread ranks: all in this process */
        return comm->nranks;
    int local = 0;
    for (int r = 0; r < comm->nranks; r++)
        local += comm->node[r] == comm->node[comm->rank];
    return local;
}

int64_t exec_spin_budget_us(tt_comm *comm)
{
    if (comm->spin_budget_us < 0) {
        pthread_once(&spin_once, spin_init);
        comm->spin_budget_us = exec_local_ranks(comm) > exec_cpu_count() ? 0 : spin_env;
    }
    return comm->spin_budget_us;
}

int exec_rank_has_cpu(tt_comm *comm)
{
    /* the ranks that share this process's CPUs: all of this host's, unless a launcher gave the
     * process part of the machine (mpirun binds each rank to a core, taskset, a cpuset): then the
     * other local processes have CPUs of their own and only this process's rank uses these */
    int cpus = exec_cpu_count(), sharing = exec_local_ranks(comm);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (!comm->world && online > 0 && cpus < online)
        sharing = 1;
    return sharing <= cpus;
}
