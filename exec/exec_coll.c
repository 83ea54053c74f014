/* exec_coll.c - the public collective calls: argument checks and plan
 * resolution (requested vs. possible; the default from the algorithm registry,
 * common_algos.c), then the op is queued for the worker (exec_queue.c), which
 * runs it (exec_run.c). */
#include "exec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static size_t env_chunk_bytes(void)
{
    const char *s = tt_setting("TOPOTUNE_CHUNK_BYTES");
    uint64_t v;
    if (s && *s && tt_parse_size(s, &v) == TT_OK && v >= 64 && v <= (1ull << 30))
        return (size_t)v;
    return EXEC_DEFAULT_CHUNK;
}

static tt_status resolve(const tt_comm *comm, tt_coll coll, size_t count, tt_dtype t, const tt_plan *req,
                         tt_plan *eff)
{
    /* what the host executor can run: the table of exec_caps.c (tt_exec_supports) */
    tt_proto host_proto;
    tt_exec_protos(TT_EXEC_HOST, &host_proto, 1);
    *eff = *req;
    if (req->proto != TT_PROTO_DEFAULT &&
        !tt_exec_supports(TT_EXEC_HOST, coll, TT_ALGO_DEFAULT, req->proto, 0, NULL, 0))
        return tt_error_set(TT_ERR_UNSUPPORTED,
                            "protocol %s was requested but the %s transport runs only %s "
                            "(LL/LL128 are GPU protocols)",
                            tt_proto_name(req->proto), comm->tp->name, tt_proto_name(host_proto));
    eff->proto = host_proto;
    int maxch = tt_exec_max_channels(TT_EXEC_HOST);
    if (req->channels > maxch)
        return tt_error_set(TT_ERR_UNSUPPORTED,
                            "%d channels were requested but the %s transport runs %d channel",
                            req->channels, comm->tp->name, maxch);
    eff->channels = maxch;
    eff->chunk_bytes = req->chunk_bytes ? req->chunk_bytes : env_chunk_bytes();
    if (req->algo == TT_ALGO_DEFAULT) {
        /* the registry's default-plan rule (common_algos.c, docs/exec.md): small AllReduce is
         * latency-bound: recursive doubling (log2 n messages per rank) on a power-of-two rank
         * count, else the tree (2 log n latency steps); ring (bandwidth-optimal) above 64 KiB */
        eff->algo = tt_algo_default(TT_RUN_HOST, coll, (uint64_t)(count * tt_dtype_size(t)), comm->nranks);
        return TT_OK;
    }
    if ((unsigned)req->algo >= TT_ALGO_COUNT)
        return tt_error_set(TT_ERR_INVALID, "unknown algorithm %d", (int)req->algo);
    char why[320];
    if (!tt_exec_supports(TT_EXEC_HOST, coll, req->algo, TT_PROTO_DEFAULT, comm->nranks, why, sizeof why))
        return tt_error_set(TT_ERR_UNSUPPORTED, "%s", why);
    return TT_OK;
}

/* the explicit plan, its default fields filled from the table's entry */
static tt_plan merged(const tt_plan *req, const tt_tune_entry *rule)
{
    tt_plan m = *req;
    if (m.algo == TT_ALGO_DEFAULT) m.algo = rule->algo;
    if (m.proto == TT_PROTO_DEFAULT) m.proto = rule->proto;
    if (!m.channels && rule->channels > 0) m.channels = rule->channels;
    return m;
}

tt_status tt_comm_resolve_plan(const tt_comm *comm, tt_coll coll, size_t count, tt_dtype t, tt_plan *eff)
{
    if (!comm || !eff)
        return tt_error_set(TT_ERR_INVALID, "tt_comm_resolve_plan: NULL argument");
    uint64_t bytes = (uint64_t)count * tt_dtype_size(t);
    const tt_tune_entry *rule = tt_tune_entry_find(comm->rules, comm->nrules, coll, bytes);
    if (!rule) return resolve(comm, coll, count, t, &comm->plan, eff);
    tt_plan want = merged(&comm->plan, rule);
    tt_status st = resolve(comm, coll, count, t, &want, eff);
    if (st == TT_OK) return TT_OK;
    if (!(comm->rule_flags & TT_PLAN_TABLE_FALLBACK))
        return tt_error_prefix(st, "plan table rule for %s %llu..%llu bytes (%s/%s)", tt_coll_label(coll),
                               (unsigned long long)rule->min_bytes, (unsigned long long)rule->max_bytes,
                               tt_algo_label(want.algo), tt_proto_name(want.proto));
    /* fall back: keep the rule's algorithm where it applies, this transport's protocol and
     * channel count otherwise */
    tt_plan fb = comm->plan;
    if (fb.algo == TT_ALGO_DEFAULT) fb.algo = rule->algo;
    if (resolve(comm, coll, count, t, &fb, eff) != TT_OK) {
        fb.algo = comm->plan.algo;
        if ((st = resolve(comm, coll, count, t, &fb, eff)) != TT_OK) return st;
    }
    __atomic_add_fetch(&((tt_comm *)comm)->rule_fallbacks, 1, __ATOMIC_RELAXED);
    TT_TRACE("exec", "rank %d: plan table rule %s/%s for %s %llu bytes cannot run here; ran %s/%s", comm->rank,
             tt_algo_label(want.algo), tt_proto_name(want.proto), tt_coll_label(coll), (unsigned long long)bytes,
             tt_algo_label(eff->algo), tt_proto_name(eff->proto));
    return TT_OK;
}

unsigned long tt_comm_plan_table_fallbacks(const tt_comm *comm)
{
    return comm ? __atomic_load_n(&comm->rule_fallbacks, __ATOMIC_RELAXED) : 0;
}

static int plan_same(const tt_plan *a, const tt_plan *b)
{
    return a->algo == b->algo && a->proto == b->proto && a->channels == b->channels &&
           a->chunk_bytes == b->chunk_bytes;
}

static tt_status issue(tt_comm *comm, tt_coll coll, const void *sendbuf, void *recvbuf, size_t count,
                       tt_dtype t, tt_redop op, int root)
{
    if (!comm)
        return tt_error_set(TT_ERR_INVALID, "%s: NULL communicator", tt_coll_label(coll));
    const char *cn = tt_coll_label(coll);
    if ((unsigned)t >= TT_NDTYPES)
        return tt_error_set(TT_ERR_INVALID, "rank %d: %s: unknown data type %d", comm->rank, cn, (int)t);
    if ((unsigned)op >= TT_NREDOPS)
        return tt_error_set(TT_ERR_INVALID, "rank %d: %s: unknown reduction op %d", comm->rank, cn, (int)op);
    if ((coll == TT_COLL_BROADCAST || coll == TT_COLL_REDUCE) && (root < 0 || root >= comm->nranks))
        return tt_error_set(TT_ERR_INVALID, "rank %d: %s: root %d not in 0..%d", comm->rank, cn, root,
                            comm->nranks - 1);
    size_t es = tt_dtype_size(t);
    if (count > ((size_t)1 << 62) / es / (size_t)comm->nranks)
        return tt_error_set(TT_ERR_LIMIT, "rank %d: %s: count %zu too large", comm->rank, cn, count);
    int needs_recv = !(coll == TT_COLL_REDUCE && comm->rank != root);
    if (count && ((!sendbuf && !(coll == TT_COLL_BROADCAST && comm->rank != root)) || (needs_recv && !recvbuf)))
        return tt_error_set(TT_ERR_INVALID, "rank %d: %s: NULL buffer", comm->rank, cn);
    /* The communicator's sticky failure (read without the lock: set once, under it, by the worker;
     * the message is copied under it), and a finished op to reuse (exec_op_recycle: no malloc
     * here, no free on the worker): the issuing thread takes all the worker has kept in one lock
     * and uses them up without locking (a communicator is issued to by one thread at a time, as
     * its sequence numbers already require). */
    exec_op *o = NULL;
    char msg[EXEC_ERRMSG_MAX];
    tt_status failed = __atomic_load_n(&comm->err, __ATOMIC_ACQUIRE);
    if (failed != TT_OK || !comm->spare_mine) {
        pthread_mutex_lock(&comm->mu);
        failed = comm->err;
        if (failed != TT_OK)
            memcpy(msg, comm->errmsg, sizeof msg);
        exec_ops_collect_locked(comm);
        pthread_mutex_unlock(&comm->mu);
    }
    o = exec_op_take(comm);
    if (!o)
        return tt_error_set(TT_ERR_NOMEM, "rank %d: %s", comm->rank, cn);
    o->coll = coll;
    o->sendbuf = sendbuf;
    o->recvbuf = recvbuf;
    o->count = count;
    o->dtype = t;
    o->op = op;
    o->root = (coll == TT_COLL_BROADCAST || coll == TT_COLL_REDUCE) ? root : -1;
    /* a timing loop calls the same collective thousands of times: the last resolution is kept
     * (not with a table: its rules count their fallbacks per call; not without a chunk size in the
     * plan: the default comes from TOPOTUNE_CHUNK_BYTES, which may change between calls) */
    tt_status st = TT_OK;
    if (!comm->nrules && comm->memo.ok && comm->memo.coll == coll && comm->memo.count == count &&
        comm->memo.dtype == t && plan_same(&comm->memo.req, &comm->plan)) {
        o->plan = comm->memo.eff;
    } else {
        st = tt_comm_resolve_plan(comm, coll, count, t, &o->plan);
        comm->memo.ok = st == TT_OK && !comm->nrules && comm->plan.chunk_bytes;
        comm->memo.coll = coll;
        comm->memo.count = count;
        comm->memo.dtype = t;
        comm->memo.req = comm->plan;
        comm->memo.eff = o->plan;
    }
    if (st != TT_OK) {
        exec_op_drop(comm, o);
        return tt_error_prefix(st, "rank %d: %s", comm->rank, cn);
    }
    if (failed != TT_OK) { /* the communicator already failed: say so now */
        exec_op_drop(comm, o);
        return tt_error_set(failed, "%s", msg);
    }
    o->seq = ++comm->issued;
    return exec_enqueue(comm, o);
}

tt_status tt_allreduce(const void *s, void *r, size_t count, tt_dtype t, tt_redop op, tt_comm *comm)
{
    return issue(comm, TT_COLL_ALLREDUCE, s, r, count, t, op, -1);
}
tt_status tt_reducescatter(const void *s, void *r, size_t count, tt_dtype t, tt_redop op, tt_comm *comm)
{
    return issue(comm, TT_COLL_REDUCESCATTER, s, r, count, t, op, -1);
}
tt_status tt_allgather(const void *s, void *r, size_t count, tt_dtype t, tt_comm *comm)
{
    return issue(comm, TT_COLL_ALLGATHER, s, r, count, t, TT_SUM, -1);
}
tt_status tt_broadcast(const void *s, void *r, size_t count, tt_dtype t, int root, tt_comm *comm)
{
    return issue(comm, TT_COLL_BROADCAST, s, r, count, t, TT_SUM, root);
}
tt_status tt_reduce_coll(const void *s, void *r, size_t count, tt_dtype t, tt_redop op, int root,
                         tt_comm *comm)
{
    return issue(comm, TT_COLL_REDUCE, s, r, count, t, op, root);
}
