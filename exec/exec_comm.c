/* exec_comm.c - communicators: creation (threads / TCP rendezvous), the
 * per-rank worker thread that runs queued collectives in order (the queue,
 * group batching and wait: exec_queue.c) and destroy. */
#include "exec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static int env_timeout_ms(void)
{
    const char *s = tt_setting("TOPOTUNE_TIMEOUT_MS");
    long long v;
    if (s && *s) {
        if (tt_parse_ll(s, &v) == TT_OK && v > 0 && v <= 86400000LL)
            return (int)v;
        TT_WARN("exec", "TOPOTUNE_TIMEOUT_MS='%s' is not 1..86400000; using %d", s,
                EXEC_DEFAULT_TIMEOUT_MS);
    }
    return EXEC_DEFAULT_TIMEOUT_MS;
}

tt_status exec_comm_alloc(tt_comm **out, int rank, int nranks, const exec_transport *tp)
{
    tt_comm *c = calloc(1, sizeof *c);
    if (!c || !(c->conns = calloc((size_t)nranks, sizeof *c->conns)) ||
        !(c->node = calloc((size_t)nranks, sizeof *c->node)) ||
        !(c->ctl = malloc((size_t)nranks * sizeof *c->ctl)) ||
        !(c->ctl_waits = malloc((size_t)nranks * sizeof *c->ctl_waits)) ||
        !(c->hdr_peer = calloc((size_t)nranks, sizeof *c->hdr_peer))) {
        if (c) {
            free(c->conns);
            free(c->node);
            free(c->ctl);
            free(c->ctl_waits);
        }
        free(c);
        return tt_error_set(TT_ERR_NOMEM, "communicator");
    }
    c->nnodes = 1;
    for (int r = 0; r < nranks; r++)
        c->ctl[r] = c->ctl_waits[r] = -1;
    c->rank = rank;
    c->nranks = nranks;
    c->tp = tp;
    c->timeout_ms = env_timeout_ms();
    c->plan = TT_PLAN_DEFAULT;
    c->spin_budget_us = -1;
    c->bind_cpu = -1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv_work, NULL);
    pthread_cond_init(&c->cv_idle, NULL);
    *out = c;
    return TT_OK;
}

static void world_fail(exec_world *w, int rank, const char *msg)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    if (!atomic_load(&w->aborted)) {
        snprintf(w->abort_msg, sizeof w->abort_msg, "%s", msg);
        atomic_store(&w->aborted, 1);
    }
    pthread_mutex_unlock(&w->mu);
}

/* The worker takes up to WORKER_BATCH queued ops per lock (one lock and unlock for a run of small
 * collectives, not one per call, while the issuing thread takes the same lock to queue more) and
 * gives them back for reuse in one lock; after a failure the rest of the batch is skipped as the
 * queue's later ops are. */
#define WORKER_BATCH 16
static void *worker_main(void *arg)
{
    tt_comm *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->head && !c->stop)
            pthread_cond_wait(&c->cv_work, &c->mu);
        if (!c->head && c->stop)
            break;
        exec_op *batch = c->head, *last = batch;
        size_t nb = 1;
        while (nb < WORKER_BATCH && last->next) {
            last = last->next;
            nb++;
        }
        c->head = last->next;
        if (!c->head)
            c->tail = NULL;
        last->next = NULL;
        c->busy = 1;
        tt_status failed = c->err;
        pthread_mutex_unlock(&c->mu);

        tt_status st = TT_OK;
        char msg[EXEC_ERRMSG_MAX];
        msg[0] = '\0';
        for (exec_op *op = batch; op && failed == TT_OK && st == TT_OK; op = op->next) {
            if (c->world && !op->internal)
                atomic_store(&c->world->entered[c->rank], op->seq);
            tt_error_clear();
            st = exec_run_op(c, op);
            if (st != TT_OK) {
                snprintf(msg, sizeof msg, "%s", tt_error_message());
                TT_INFO("exec", "%s", msg);
                world_fail(c->world, c->rank, msg);
                /* processes: tell the others why.  Rank 0 relays everything
                 * (it is the hub); the others do not echo what they heard */
                int derived = strstr(msg, "aborted because another rank failed") != NULL;
                if (c->rank == 0 || !derived)
                    exec_ctl_report(c, msg, -1, derived ? c->ctl_cause : c->rank);
            }
        }
        pthread_mutex_lock(&c->mu);
        for (exec_op *op = batch, *nx; op; op = nx) {
            nx = op->next;
            exec_op_recycle(c, op); /* exec_op_pool.c: the next call takes it, no malloc/free per call */
        }
        if (st != TT_OK && c->err == TT_OK) {
            c->err = st;
            memcpy(c->errmsg, msg, sizeof msg);
        }
        c->busy = 0;
        size_t before = c->queued;
        c->queued -= nb;
        /* wake waiters only when it matters (every wake-up costs a context
         * switch): the queue is empty (tt_comm_wait), it fell to half the
         * bound (a blocked submit), or the comm failed */
        if (!c->head || (before > EXEC_MAX_QUEUED / 2 && c->queued <= EXEC_MAX_QUEUED / 2) || c->err != TT_OK)
            pthread_cond_broadcast(&c->cv_idle);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

tt_status exec_comm_start(tt_comm *comm)
{
    tt_status st = exec_transport_connect(comm);
    if (st != TT_OK)
        return st;
    exec_transport_describe(comm, comm->tp_desc, sizeof comm->tp_desc);
    if ((st = exec_bind_plan(comm)) != TT_OK) /* exec_bind.c */
        return st;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    st = exec_bind_attr(comm, &attr);
    int e = st == TT_OK ? pthread_create(&comm->worker, &attr, worker_main, comm) : 0;
    pthread_attr_destroy(&attr);
    if (st != TT_OK)
        return st;
    if (e != 0)
        return tt_error_set(TT_ERR_SYSTEM, "rank %d: cannot start the worker thread", comm->rank);
    comm->worker_started = 1;
    return TT_OK;
}

void exec_world_release(exec_world *w)
{
    if (!w || atomic_fetch_sub(&w->refs, 1) != 1)
        return;
    for (size_t i = 0; i < (size_t)w->nranks * w->nranks; i++)
        free(w->rings[i]);
    free(w->rings);
    free(w->entered);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

void exec_comm_free(tt_comm *comm)
{
    if (!comm)
        return;
    if (comm->worker_started) {
        pthread_mutex_lock(&comm->mu);
        comm->stop = 1;
        pthread_cond_broadcast(&comm->cv_work);
        pthread_mutex_unlock(&comm->mu);
        pthread_join(comm->worker, NULL);
    }
    comm->head = comm->tail = NULL;
    exec_ops_free(comm); /* queued, finished and spare ops alike (exec_op_pool.c) */
    for (int p = 0; p < comm->nranks; p++)
        if (comm->conns[p])
            comm->conns[p]->tp->close(comm->conns[p]);
    free(comm->conns);
    free(comm->rules);
    for (int r = 0; r < comm->nranks; r++)
        if (comm->ctl[r] >= 0)
            close(comm->ctl[r]);
    free(comm->ctl);
    free(comm->ctl_waits);
    free(comm->node);
    free(comm->peer_pid);
    free(comm->peer_host);
    free(comm->scratch);
    free(comm->hdr_peer);
    exec_world_release(comm->world);
    pthread_mutex_destroy(&comm->mu);
    pthread_cond_destroy(&comm->cv_work);
    pthread_cond_destroy(&comm->cv_idle);
    free(comm);
}

static size_t env_ring_bytes(void)
{
    const char *s = tt_setting("TOPOTUNE_SHM_RING_BYTES");
    uint64_t v;
    /* engineering default: 1 MiB per directed pair (2 pipeline chunks) */
    size_t def = 1u << 20;
    if (s && *s) {
        if (tt_parse_size(s, &v) == TT_OK && v >= 4096 && v <= (1ull << 30) && !(v & (v - 1)))
            return (size_t)v;
        TT_WARN("exec", "TOPOTUNE_SHM_RING_BYTES='%s' must be a power of two in 4K..1G; using 1M", s);
    }
    return def;
}

tt_status tt_comm_init_threads(int nranks, tt_comm **comms)
{
    if (!comms)
        return tt_error_set(TT_ERR_INVALID, "tt_comm_init_threads: NULL comms");
    if (nranks < 1 || nranks > 1024)
        return tt_error_set(TT_ERR_INVALID, "tt_comm_init_threads: nranks %d not in 1..1024", nranks);
    /* TOPOTUNE_THREAD_NODES=K splits the thread ranks into K contiguous
     * "nodes" so that node-aware algorithms can be exercised in one process */
    int nodes = 1;
    const char *tn = tt_setting("TOPOTUNE_THREAD_NODES");
    long long v;
    if (tn && *tn) {
        if (tt_parse_ll(tn, &v) != TT_OK || v < 1 || v > nranks)
            return tt_error_set(TT_ERR_INVALID, "TOPOTUNE_THREAD_NODES='%s' must be 1..%d", tn, nranks);
        nodes = (int)v;
    }
    exec_world *w = calloc(1, sizeof *w);
    if (!w)
        return tt_error_set(TT_ERR_NOMEM, "world");
    w->nranks = nranks;
    w->ring_bytes = env_ring_bytes();
    pthread_mutex_init(&w->mu, NULL);
    atomic_init(&w->refs, 1);
    w->entered = calloc((size_t)nranks, sizeof *w->entered);
    w->rings = calloc((size_t)nranks * nranks, sizeof *w->rings);
    tt_status st = TT_OK;
    if (!w->entered || !w->rings)
        st = tt_error_set(TT_ERR_NOMEM, "world");
    for (int s = 0; st == TT_OK && s < nranks; s++)
        for (int d = 0; st == TT_OK && d < nranks; d++)
            if (s != d && !(w->rings[(size_t)s * nranks + d] = exec_shm_ring_new(w->ring_bytes)))
                st = tt_error_set(TT_ERR_NOMEM, "shm ring %d->%d", s, d);
    for (int r = 0; r < nranks; r++)
        comms[r] = NULL;
    for (int r = 0; st == TT_OK && r < nranks; r++) {
        st = exec_comm_alloc(&comms[r], r, nranks, &exec_transport_shm);
        if (st == TT_OK && nodes > 1) { /* emulated nodes (testing aid) */
            for (int q = 0; q < nranks; q++)
                comms[r]->node[q] = (int)((long long)q * nodes / nranks);
            comms[r]->nnodes = nodes;
        }
        if (st == TT_OK) {
            comms[r]->world = w;
            atomic_fetch_add(&w->refs, 1);
            st = exec_comm_start(comms[r]);
        }
    }
    if (st != TT_OK)
        for (int r = 0; r < nranks; r++) {
            exec_comm_free(comms[r]);
            comms[r] = NULL;
        }
    exec_world_release(w);
    return st;
}

tt_status tt_comm_init_rank(tt_comm **comm, int nranks, const tt_unique_id *id, int rank)
{
    if (!comm || !id)
        return tt_error_set(TT_ERR_INVALID, "tt_comm_init_rank: NULL argument");
    *comm = NULL;
    if (nranks < 1 || nranks > 1024)
        return tt_error_set(TT_ERR_INVALID, "nranks %d not in 1..1024", nranks);
    if (rank < 0 || rank >= nranks)
        return tt_error_set(TT_ERR_INVALID, "rank %d not in 0..%d", rank, nranks - 1);
    exec_boot_id bid;
    tt_status st = exec_boot_id_decode(id, &bid);
    if (st != TT_OK)
        return st;
    tt_comm *c;
    st = exec_comm_alloc(&c, rank, nranks, &exec_transport_tcp);
    if (st != TT_OK)
        return st;
    c->boot = &bid;
    st = exec_comm_start(c);
    c->boot = NULL;
    if (st != TT_OK) {
        exec_comm_free(c);
        return st;
    }
    *comm = c;
    return TT_OK;
}

static tt_status env_int(const char *name, long long lo, long long hi, long long *out)
{
    const char *s = tt_setting(name);
    if (!s || !*s)
        return tt_error_set(TT_ERR_INVALID, "environment variable %s is not set", name);
    if (tt_parse_ll(s, out) != TT_OK || *out < lo || *out > hi)
        return tt_error_set(TT_ERR_INVALID, "%s='%s' is not an integer in %lld..%lld", name, s, lo, hi);
    return TT_OK;
}

tt_status tt_comm_init_env(tt_comm **comm)
{
    long long rank, size, port;
    tt_status st;
    const char *rn = "RANK", *sn = "WORLD_SIZE"; /* the names in the message when none is set */
    tt_env_rank_vars(&rn, &sn);
    if ((st = env_int(sn, 1, 1024, &size)) != TT_OK ||
        (st = env_int(rn, 0, size - 1, &rank)) != TT_OK)
        return st;
    const char *addr = tt_setting("MASTER_ADDR");
    tt_unique_id id;
    if ((!addr || !*addr) && tt_env_slurm_step()) { /* srun: the first host of the node list (exec_slurm.c) */
        char hp[300];
        if ((st = tt_slurm_master(hp, sizeof hp)) != TT_OK || (st = tt_unique_id_from_addr(&id, hp)) != TT_OK)
            return st;
        return tt_comm_init_rank(comm, (int)size, &id, (int)rank);
    }
    if ((st = env_int("MASTER_PORT", 1, 65535, &port)) != TT_OK)
        return st;
    if (!addr || !*addr)
        return tt_error_set(TT_ERR_INVALID, "environment variable MASTER_ADDR is not set");
    char hp[128];
    int v6 = strchr(addr, ':') && addr[0] != '['; /* MASTER_ADDR=::1: an IPv6 literal, bracketed for the id */
    snprintf(hp, sizeof hp, "%s%s%s:%lld", v6 ? "[" : "", addr, v6 ? "]" : "", port);
    if ((st = tt_unique_id_from_addr(&id, hp)) != TT_OK)
        return st;
    return tt_comm_init_rank(comm, (int)size, &id, (int)rank);
}

int tt_comm_rank(const tt_comm *comm) { return comm ? comm->rank : -1; }
int tt_comm_nranks(const tt_comm *comm) { return comm ? comm->nranks : 0; }
const char *tt_comm_transport(const tt_comm *comm)
{
    if (!comm)
        return "";
    /* the transports in use, joined by '+' in table order (exec_transport_describe) */
    return comm->tp_desc[0] ? comm->tp_desc : comm->tp->name;
}

void tt_comm_set_timeout(tt_comm *comm, int timeout_ms)
{
    if (comm)
        comm->timeout_ms = timeout_ms > 0 ? timeout_ms : env_timeout_ms();
}

void tt_comm_set_plan(tt_comm *comm, const tt_plan *plan)
{
    if (comm)
        comm->plan = plan ? *plan : TT_PLAN_DEFAULT;
}

tt_status tt_comm_destroy(tt_comm *comm)
{
    if (!comm)
        return TT_OK;
    if (exec_in_group()) /* queued group members would point at freed memory */
        return tt_error_set(TT_ERR_INVALID, "tt_comm_destroy inside a group: call tt_group_end first");
    tt_status st = tt_comm_wait(comm);
    /* TCP: a barrier so that no process closes its sockets while a peer still
     * runs a collective (a hang-up there means "peer died").  Thread ranks
     * share refcounted rings and need none - and one thread may destroy all
     * of them in turn. */
    if (st == TT_OK && comm->nranks > 1 && !comm->world)
        st = exec_barrier(comm);
    char msg[EXEC_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "%s", tt_error_message());
    exec_comm_free(comm);
    if (st != TT_OK)
        return tt_error_set(st, "%s", msg);
    return TT_OK;
}
