/* exec_caps.c - what the executor can run: the algorithm registry's rows (common_algos.c: per
 * executor, the collectives and the rank-count condition of every algorithm) and the (mode,
 * protocol) rows below.  The host collectives (exec_coll.c), the GPU executor (exec_cuda_comm.cu)
 * and the public query tt_exec_supports/tt_exec_algos/tt_exec_protos all read them; the host's
 * schedules are the dispatch table of exec_algos.c (docs/contributing.md, "Adding an algorithm"). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tt_exec.h"

#define COLL(c) TT_COLL_BIT(c)

_Static_assert((int)TT_EXEC_HOST == TT_RUN_HOST && (int)TT_EXEC_GPU == TT_RUN_GPU,
               "tt_exec_mode indexes the registry's run[]");

static const struct {
    tt_exec_mode mode;
    tt_proto proto;
} cap_protos[] = {
    {TT_EXEC_HOST, TT_PROTO_SIMPLE},
    {TT_EXEC_GPU, TT_PROTO_SIMPLE},
    {TT_EXEC_GPU, TT_PROTO_LL},
    {TT_EXEC_GPU, TT_PROTO_LL128}, /* only between ranks of one GPU or NVLink peers: the GPU
                                    * communicator refuses it per pair (exec_cuda_comm.cu) */
};

#define NELEM(a) (sizeof(a) / sizeof *(a))
#define NO_CUDA "this build of topotune has no CUDA support (nvcc was not found at build time)"

static int mode_built(tt_exec_mode m)
{
#ifdef TT_HAVE_CUDA
    return m == TT_EXEC_HOST || m == TT_EXEC_GPU;
#else
    return m == TT_EXEC_HOST;
#endif
}

/* what executor `m` runs of algorithm `a` (the registry's row), or NULL when it runs none of it */
static const tt_algo_run *algo_row(tt_exec_mode m, tt_algo a)
{
    const tt_algo_info *r = tt_algo_info_of(a);
    return r && r->run[m].colls ? &r->run[m] : NULL;
}

int tt_exec_algos(tt_exec_mode mode, tt_coll coll, int nranks, tt_algo *out, int max)
{
    int n = 0;
    if (!mode_built(mode))
        return 0;
    /* listing order: the rows' order for this executor */
    for (int k = 1; k <= TT_ALGO_COUNT; k++)
        for (int a = 0; a < TT_ALGO_COUNT; a++) {
            const tt_algo_run *r = algo_row(mode, (tt_algo)a);
            if (r && r->order == k && tt_algo_runs((tt_algo)a, (int)mode, coll, nranks)) {
                if (out && n < max)
                    out[n] = (tt_algo)a;
                n++;
            }
        }
    return n;
}

int tt_exec_protos(tt_exec_mode mode, tt_proto *out, int max)
{
    int n = 0;
    if (!mode_built(mode))
        return 0;
    for (size_t i = 0; i < NELEM(cap_protos); i++)
        if (cap_protos[i].mode == mode) {
            if (out && n < max)
                out[n] = cap_protos[i].proto;
            n++;
        }
    return n;
}

int tt_exec_max_channels(tt_exec_mode mode)
{
    return mode == TT_EXEC_HOST ? 1 : 0; /* host transports run one channel; GPU: per communicator */
}

static void algo_list(tt_exec_mode mode, tt_coll coll, int nranks, char *buf, size_t len)
{
    tt_algo a[16];
    int n = tt_exec_algos(mode, coll, nranks, a, 16);
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && i < 16 && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", tt_algo_label(a[i]));
}

static void proto_list(tt_exec_mode mode, char *buf, size_t len)
{
    tt_proto p[8];
    int n = tt_exec_protos(mode, p, 8);
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && i < 8 && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", tt_proto_name(p[i]));
}

static int refuse(char *why, size_t wl, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t wl, const char *fmt, ...)
{
    va_list ap;
    if (why && wl) {
        va_start(ap, fmt);
        vsnprintf(why, wl, fmt, ap);
        va_end(ap);
    }
    return 0;
}

int tt_exec_supports(tt_exec_mode mode, tt_coll coll, tt_algo algo, tt_proto proto, int nranks, char *why,
                     size_t wl)
{
    char avail[160];
    if (why && wl)
        why[0] = '\0';
    if (mode != TT_EXEC_HOST && mode != TT_EXEC_GPU)
        return refuse(why, wl, "unknown executor mode %d", (int)mode);
    if (!mode_built(mode))
        return refuse(why, wl, "GPU executor: %s", NO_CUDA);
    if ((unsigned)coll >= TT_COLL_COUNT)
        return refuse(why, wl, "unknown collective %d", (int)coll);
    if (!tt_exec_algos(mode, coll, 0, NULL, 0)) {
        /* the collectives this executor runs, from the table */
        size_t k = 0;
        avail[0] = '\0';
        for (int c = 0; c < TT_COLL_COUNT; c++)
            if (tt_exec_algos(mode, (tt_coll)c, 0, NULL, 0) && k < sizeof avail)
                k += (size_t)snprintf(avail + k, sizeof avail - k, "%s%s", k ? ", " : "", tt_coll_label((tt_coll)c));
        if (mode == TT_EXEC_GPU)
            return refuse(why, wl, "the GPU executor runs %s only; %s was requested (use --host for the other "
                          "collectives)", avail, tt_coll_label(coll));
        return refuse(why, wl, "the host executor runs %s only; %s was requested", avail, tt_coll_label(coll));
    }
    if (algo != TT_ALGO_DEFAULT) {
        const tt_algo_run *r = algo_row(mode, algo);
        if (!tt_algo_runs(algo, (int)mode, coll, nranks)) {
            algo_list(mode, coll, nranks, avail, sizeof avail);
            if (mode == TT_EXEC_GPU)
                return refuse(why, wl, "algorithm %s was requested for the GPU %s but cannot apply; available: %s",
                              tt_algo_label(algo), tt_coll_label(coll), avail);
            char ranks[32] = "", need[96] = "";
            if (nranks > 0)
                snprintf(ranks, sizeof ranks, " on %d ranks", nranks);
            if (r && (r->colls & COLL(coll)) && r->pow2)
                snprintf(need, sizeof need, " (%s needs a power-of-two rank count)", tt_algo_label(algo));
            return refuse(why, wl, "algorithm %s was requested for %s%s but cannot apply%s; available: %s",
                          tt_algo_label(algo), tt_coll_label(coll), ranks, need, avail);
        }
    }
    if (proto != TT_PROTO_DEFAULT) {
        int ok = 0;
        for (size_t i = 0; i < NELEM(cap_protos); i++)
            ok |= cap_protos[i].mode == mode && cap_protos[i].proto == proto;
        if (!ok) {
            proto_list(mode, avail, sizeof avail);
            if (mode == TT_EXEC_GPU) {
                char up[16];
                size_t i;
                for (i = 0; tt_proto_name(proto)[i] && i < sizeof up - 1; i++)
                    up[i] = (char)toupper((unsigned char)tt_proto_name(proto)[i]);
                up[i] = '\0';
                return refuse(why, wl, "protocol %s was requested but the GPU executor does not implement it; "
                              "available: %s", up, avail);
            }
            return refuse(why, wl, "protocol %s was requested but the host transports run only %s "
                          "(LL/LL128 are GPU protocols)", tt_proto_name(proto), avail);
        }
    }
    return 1;
}
