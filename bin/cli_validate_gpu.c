/*
 * cli_validate_gpu.c - topo-exec --validate on GPU ranks: all of them in this process (-g N,
 * thread mode) or one per process (-g 1 --rank R --nranks N --master HOST:PORT, or a launcher's
 * environment; topo-exec.c opens the host communicator and compares the options first).  The
 * plan of every size is cli_validate.c's with the candidates this communicator runs (ring and
 * tree x simple/ll, and hierarchical x simple/ll where process ranks span hosts); the
 * measurement is the library's (tt_sweep_candidates, through cli_validate_run.c's vld_measure, in
 * tune's loop) on its GPU engine, which in process mode averages the times and sums #wrong over
 * the processes, so every process judges the same numbers; rank 0 prints.
 *
 * A candidate runs as topo-exec's GPU sweep measures a row: warm-up and timed calls of the
 * collective (-t: every collective the GPU executor runs, with -r for the rooted ones), then a
 * check on fresh inputs; the chunk is the GPU executor's default, as -g runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_validate_internal.h"

int tt_cli_validate_gpu_check(const tt_cli_validate_opts *v, const tt_cli_sweep *s, int ngpus, int nranks)
{
    (void)v;
    char cw[256], why[256];
    /* the command line first (the same answer with or without a GPU), then what this build and
     * machine can run */
    if (ngpus > 64) return tt_cli_bad("-g %d: at most 64 GPU ranks", ngpus);
    if (nranks > 0 && (s->coll == TT_COLL_BROADCAST || s->coll == TT_COLL_REDUCE) && (s->root < 0 || s->root >= nranks))
        return tt_cli_bad("-g %d --validate -t %s -r %d: root must be below the number of GPU ranks (%d)", ngpus,
                          tt_sweep_coll_name(s->coll), s->root, nranks);
    if (!tt_exec_supports(TT_EXEC_GPU, s->coll, TT_ALGO_DEFAULT, TT_PROTO_DEFAULT, 0, cw, sizeof cw))
        return tt_cli_bad("-g %d --validate -t %s: %s; use --host N", ngpus, tt_sweep_coll_name(s->coll), cw);
    if (!tt_gpu_available(why, sizeof why))
        return tt_cli_bad("-g %d --validate: %s; use --host N for host ranks", ngpus, why);
    return VX_OK;
}

/* the sweep engine on g with buffers for the largest size (an exit code, message printed) */
static int gpu_engine(vctx *x, tt_gpu_comm *g, tt_comm *host, tt_sweep_engine *se)
{
    size_t es = tt_dtype_size(x->s->dtype), maxcount = 0;
    for (int i = 0; i < x->r.nsz; i++)
        if (x->r.sz[i].count > maxcount) maxcount = x->r.sz[i].count;
    tt_sweep_opts bo = vld_sweep_opts(x->s);
    tt_status st = tt_sweep_engine_gpu(se, g, host);
    if (st == TT_OK) st = tt_sweep_prepare(se, &bo, maxcount);
    if (st == TT_OK) return VX_OK;
    /* host memory is a usage matter (smaller -e), device memory a runtime failure */
    int me = host ? tt_comm_rank(host) : 0;
    if (st == TT_ERR_NOMEM && !strncmp(tt_error_message(), "out of host memory", 18))
        return tt_cli_bad("rank %d: out of host memory for %zu-byte buffers", me, maxcount * es);
    tt_cli_bad("rank %d: %s", me, tt_error_message());
    return VX_RUNTIME;
}

int tt_cli_validate_gpu(const tt_cli_validate_opts *v, const tt_cli_sweep *s, int ngpus, tt_comm *host)
{
    int n = host ? tt_comm_nranks(host) : ngpus, me = host ? tt_comm_rank(host) : 0;
    int rc = tt_cli_validate_gpu_check(v, s, ngpus, n);
    if (rc) return rc; /* the same options on every process (compared by topo-exec): all stop here */
    vctx x;
    vld_init(&x, v, s, n, "gpu", me == 0);
    tt_gpu_comm *g = NULL;
    tt_sweep_engine se;
    memset(&se, 0, sizeof se);
    tt_status st = host ? tt_gpu_comm_init_procs(&g, host, -1) : tt_gpu_comm_init(&g, ngpus, NULL);
    if (st != TT_OK) {
        tt_cli_bad("%s", tt_error_message());
        return VX_RUNTIME;
    }
    if (host) {
        int hosts = tt_gpu_comm_hosts(g), nnet = tt_gpu_comm_net_pairs(g);
        snprintf(x.r.setup, sizeof x.r.setup, "%d processes, one GPU rank each, on %d host(s)%s: %s", n, hosts,
                 tt_setting("TOPOTUNE_GPU_EMULATE_HOSTS") && hosts > 1 ? " (emulated)" : "",
                 nnet == 0 ? "CUDA IPC or shared memory between them"
                 : nnet < n * (n - 1) ? "CUDA IPC inside a host, net transport between hosts"
                                      : "net transport between every pair");
    }
    vengine e = {1, NULL, g};
    rc = vld_plan_sizes(&x, &e);
    if (!rc) rc = gpu_engine(&x, g, host, &se);
    if (host) rc = vld_agree(&x, host, rc); /* every process the same plan, or all stop here */
    if (rc) goto out;
    x.tty = s->progress && me == 0 && isatty(2);
    if (me == 0) {
        if (tt_gpu_comm_is_virtual(g))
            printf("# VIRTUAL RANKS: %d ranks share GPU(s): the verdicts are about this setup, not about %d GPUs\n", n,
                   n);
        vld_print_header(&x);
    }
    rc = vld_measure(&x, &se, NULL, 0, 0);
    if (x.r.failed) tt_cli_bad("rank %d: %s", me, x.r.err);
    rc = vld_finish(&x, rc);
out:
    tt_sweep_engine_release(&se);
    if (tt_gpu_comm_destroy(g) != TT_OK && !rc) {
        tt_cli_bad("rank %d: %s", me, tt_error_message());
        rc = VX_RUNTIME;
    }
    free(x.r.sz);
    return rc;
}
