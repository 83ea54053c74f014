/* exec_bind.c - where a host rank's worker thread runs (TOPOTUNE_HOST_BIND).
 *
 * The worker of a communicator does the rank's data movement (exec_comm.c).  Left to the operating
 * system it may be moved, or share a CPU with another rank's worker while a CPU is idle, and small
 * calls then swing by an order of magnitude run to run (issue #34 item 5: 1.3-40 us at 8 bytes on
 * 2 ranks).  So host ranks are bound by default where this host has a core for each of them, as
 * MPI launchers bind ranks to cores when they fit:
 *   auto  (default) as core, but only when the ranks of this host are at most the cores (distinct
 *         package/core pairs) in this process's CPU mask; otherwise not bound, and the reason is
 *         kept for the header (tt_comm_bind_note);
 *   core  local rank i -> the i-th CPU in an order that takes one hardware thread of every core
 *         (of every package) before a second one of any core (sysfs topology; the process's own
 *         CPU mask order when sysfs does not say); bound while the ranks fit the mask's CPUs;
 *   cpu   local rank i -> the i-th CPU of the process's CPU mask;
 *   none  no binding.
 * "Local" counts the ranks of this host (thread ranks: all; process ranks: those the rendezvous
 * put on this node), and the local rank index - the rank's position among them - picks the CPU,
 * so the processes of one job on a host take different cores.  Only CPUs of the process's own
 * mask (sched_getaffinity: a launcher's binding, taskset, a cgroup cpuset) are ever used; a mask
 * smaller than the local ranks (a launcher that bound every process already) is left alone.  More
 * local ranks than CPUs: no binding (time-slicing ranks pinned two to a CPU is worse than letting
 * the scheduler move them).  The CPU is set on the worker thread's attributes before it starts, so
 * it never runs elsewhere.  The CPU order is read once per process (sysfs and the CPU mask at the
 * first communicator). */
#include "exec_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BIND_NONE, BIND_CORE, BIND_CPU, BIND_AUTO };

static tt_status bind_policy(int *policy)
{
    const char *s = tt_setting("TOPOTUNE_HOST_BIND");
    *policy = BIND_AUTO;
    if (!s || !*s || !strcmp(s, "auto")) return TT_OK;
    if (!strcmp(s, "none")) *policy = BIND_NONE;
    else if (!strcmp(s, "core")) *policy = BIND_CORE;
    else if (!strcmp(s, "cpu")) *policy = BIND_CPU;
    else return tt_error_set(TT_ERR_INVALID, "TOPOTUNE_HOST_BIND='%s': use auto, core, cpu or none", s);
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

/* the process's CPUs in binding order; returns how many (0 = unknown); *ncores: how many of them
 * are the first hardware thread of their core (every CPU when sysfs does not say) */
static int cpu_order(int by_core, int *cpus, int max, int *ncores)
{
    cpu_set_t set;
    *ncores = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    *ncores = n;
    if (!by_core || n < 2) return n;
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
    *ncores = 0;
    for (int i = 0; i < n; i++) *ncores += sib[i] == 0;
    for (int level = 0; k < n; level++)
        for (int i = 0; i < n; i++)
            if (sib[i] == level) out[k++] = cpus[i];
    memcpy(cpus, out, sizeof(int) * (size_t)n);
    free(pkg); free(core); free(sib); free(out);
    return n;
}

/* the order per policy, read once per process (every communicator of a job asks for the same) */
static struct { pthread_once_t once; int n, ncores, cpus[CPU_SETSIZE]; } orders[2] = {
    {PTHREAD_ONCE_INIT, 0, 0, {0}}, {PTHREAD_ONCE_INIT, 0, 0, {0}}};
static void order_core(void) { orders[0].n = cpu_order(1, orders[0].cpus, CPU_SETSIZE, &orders[0].ncores); }
static void order_cpu(void) { orders[1].n = cpu_order(0, orders[1].cpus, CPU_SETSIZE, &orders[1].ncores); }

tt_status exec_bind_plan(tt_comm *comm)
{
    int policy;
    comm->bind_cpu = -1;
    comm->bind_note[0] = '\0';
    tt_status st = bind_policy(&policy);
    if (st != TT_OK) return st;
    const char *set = tt_setting("TOPOTUNE_HOST_BIND");
    char src[64];
    if (set && *set) snprintf(src, sizeof src, "TOPOTUNE_HOST_BIND=%s", set);
    else snprintf(src, sizeof src, "default");
    if (policy == BIND_NONE) {
        snprintf(comm->bind_note, sizeof comm->bind_note, "%s", src);
        return TT_OK;
    }
    int local = 0, idx = 0;
    for (int r = 0; r < comm->nranks; r++)
        if (comm->world || comm->node[r] == comm->node[comm->rank]) {
            if (r < comm->rank) idx++;
            local++;
        }
    int o = policy == BIND_CPU ? 1 : 0;
    pthread_once(&orders[o].once, o == 0 ? order_core : order_cpu);
    const int n = orders[o].n, *cpus = orders[o].cpus;
    /* auto: a core per rank; core and cpu: a CPU per rank */
    const int room = policy == BIND_AUTO ? orders[o].ncores : n;
    const char *unit = policy == BIND_AUTO ? "core" : "CPU";
    if (n <= 0) {
        snprintf(comm->bind_note, sizeof comm->bind_note, "%s: this process's CPU mask is unreadable", src);
    } else if (local > room && n == 1 && !comm->world) {
        /* one process rank whose mask is one CPU (a launcher bound it: mpirun's default for 2 ranks):
         * its worker runs there in any case; say so */
        comm->bind_cpu = cpus[0];
        snprintf(comm->bind_note, sizeof comm->bind_note, "%s: this process's CPU mask holds CPU %d alone, as its "
                 "launcher bound it", src, cpus[0]);
        return TT_OK;
    } else if (local > room) {
        snprintf(comm->bind_note, sizeof comm->bind_note, "%s: %d ranks on this host, %d %s%s in this process's CPU mask",
                 src, local, room, unit, room == 1 ? "" : "s");
    } else {
        comm->bind_cpu = cpus[idx];
        snprintf(comm->bind_note, sizeof comm->bind_note, "%s%s", src,
                 policy == BIND_AUTO ? ": a core per rank; --bind none or TOPOTUNE_HOST_BIND=none opts out" : "");
        TT_INFO("exec", "rank %d: worker bound to CPU %d (%s, local rank %d of %d)", comm->rank, comm->bind_cpu, src,
                idx, local);
        return TT_OK;
    }
    if (idx == 0) TT_INFO("exec", "not binding: %s", comm->bind_note);
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

const char *tt_comm_bind_note(const tt_comm *comm)
{
    return comm ? comm->bind_note : "";
}
