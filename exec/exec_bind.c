/* exec_bind.c - where a host rank's worker thread runs (TOPOTUNE_HOST_BIND).
 *
 * The worker of a communicator does the rank's data movement (exec_comm.c).  By default the
 * operating system places it and may move it; for measurements that should repeat (a model fitted
 * on them, a table validated with them) each rank can be pinned to a CPU of its own, as MPI
 * launchers bind ranks to cores:
 *   none  (default) no binding;
 *   core  local rank i -> the i-th CPU in an order that takes one hardware thread of every core
 *         (of every package) before a second one of any core (sysfs topology; the process's own
 *         CPU mask order when sysfs does not say);
 *   cpu   local rank i -> the i-th CPU of the process's CPU mask.
 * "Local" counts the ranks of this node (thread ranks: all).  More local ranks than CPUs: no
 * binding (time-slicing ranks pinned two to a CPU is worse than letting the scheduler move them),
 * said once at INFO.  The CPU is set on the worker thread's attributes before it starts, so it never
 * runs elsewhere.  The CPU order is read once per process (sysfs and the CPU mask at the first
 * communicator). */
#include "exec_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BIND_NONE, BIND_CORE, BIND_CPU };

static tt_status bind_policy(int *policy)
{
    const char *s = tt_setting("TOPOTUNE_HOST_BIND");
    *policy = BIND_NONE;
    if (!s || !*s || !strcmp(s, "none")) return TT_OK;
    if (!strcmp(s, "core")) *policy = BIND_CORE;
    else if (!strcmp(s, "cpu")) *policy = BIND_CPU;
    else return tt_error_set(TT_ERR_INVALID, "TOPOTUNE_HOST_BIND='%s': use none, core or cpu", s);
    return TT_OK;
}

/* sysfs topology of one CPU, -1 when unreadable */
static int topo_id(int cpu, const char *what)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

/* the process's CPUs in binding order; returns how many (0 = unknown) */
static int cpu_order(int policy, int *cpus, int max)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    if (policy != BIND_CORE || n < 2) return n;
    /* rank of each CPU among the hardware threads of its core: 0 for the first thread of a core */
    int *pkg = malloc(sizeof(int) * (size_t)n), *core = malloc(sizeof(int) * (size_t)n), *sib = malloc(sizeof(int) * (size_t)n);
    int *out = malloc(sizeof(int) * (size_t)n);
    if (!pkg || !core || !sib || !out) {
        free(pkg); free(core); free(sib); free(out);
        return n; /* mask order */
    }
    for (int i = 0; i < n; i++) {
        pkg[i] = topo_id(cpus[i], "physical_package_id");
        core[i] = topo_id(cpus[i], "core_id");
        sib[i] = 0;
        for (int j = 0; j < i && core[i] >= 0; j++)
            if (pkg[j] == pkg[i] && core[j] == core[i]) sib[i]++;
    }
    int k = 0;
    for (int level = 0; k < n; level++)
        for (int i = 0; i < n; i++)
            if (sib[i] == level) out[k++] = cpus[i];
    memcpy(cpus, out, sizeof(int) * (size_t)n);
    free(pkg); free(core); free(sib); free(out);
    return n;
}

/* the order per policy, read once per process (every communicator of a job asks for the same) */
static struct { pthread_once_t once; int n, cpus[CPU_SETSIZE]; } orders[2] = {{PTHREAD_ONCE_INIT, 0, {0}},
                                                                           {PTHREAD_ONCE_INIT, 0, {0}}};
static void order_core(void) { orders[0].n = cpu_order(BIND_CORE, orders[0].cpus, CPU_SETSIZE); }
static void order_cpu(void) { orders[1].n = cpu_order(BIND_CPU, orders[1].cpus, CPU_SETSIZE); }

tt_status exec_bind_plan(tt_comm *comm)
{
    int policy;
    comm->bind_cpu = -1;
    tt_status st = bind_policy(&policy);
    if (st != TT_OK || policy == BIND_NONE) return st;
    int local = 0, idx = 0;
    for (int r = 0; r < comm->nranks; r++)
        if (comm->world || comm->node[r] == comm->node[comm->rank]) {
            if (r < comm->rank) idx++;
            local++;
        }
    int o = policy == BIND_CORE ? 0 : 1;
    pthread_once(&orders[o].once, o == 0 ? order_core : order_cpu);
    const int n = orders[o].n, *cpus = orders[o].cpus;
    if (n <= 0 || local > n) {
        if (idx == 0)
            TT_INFO("exec", "TOPOTUNE_HOST_BIND=%s: %d ranks on this node, %d CPUs: not binding", tt_setting("TOPOTUNE_HOST_BIND"),
                    local, n);
        return TT_OK;
    }
    comm->bind_cpu = cpus[idx];
    TT_INFO("exec", "rank %d: worker bound to CPU %d (TOPOTUNE_HOST_BIND=%s, local rank %d of %d)", comm->rank,
            comm->bind_cpu, tt_setting("TOPOTUNE_HOST_BIND"), idx, local);
    return TT_OK;
}

tt_status exec_bind_attr(const tt_comm *comm, pthread_attr_t *attr)
{
    if (comm->bind_cpu < 0) return TT_OK;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(comm->bind_cpu, &one);
    int e = pthread_attr_setaffinity_np(attr, sizeof one, &one);
    if (e) return tt_error_set(TT_ERR_SYSTEM, "rank %d: cannot bind the worker to CPU %d: %s", comm->rank, comm->bind_cpu, strerror(e));
    return TT_OK;
}

int tt_comm_bound_cpu(const tt_comm *comm)
{
    return comm ? comm->bind_cpu : -1;
}
