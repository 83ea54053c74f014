/* exec_gpu_select.c - which transport the GPU executor's process ranks use:
 * the TOPOTUNE_GPU_TRANSPORT and TOPOTUNE_GPU_EMULATE_HOSTS values and the
 * per-pair decision of process mode, net or same host (exec_gpu_net.h).  No CUDA here, so the rules are unit-tested on any
 * machine (tests/unit/test_exec_gpu_net.c). */
#include "exec_gpu_net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tt_status exec_gpu_transport_parse(const char *value, int *mode)
{
    *mode = GPU_TP_AUTO;
    if (!value || !*value || !strcmp(value, "auto"))
        return TT_OK;
    if (!strcmp(value, "host")) {
        *mode = GPU_TP_HOST;
        return TT_OK;
    }
    if (!strcmp(value, "net")) {
        *mode = GPU_TP_NET;
        return TT_OK;
    }
    return tt_error_set(TT_ERR_INVALID, "TOPOTUNE_GPU_TRANSPORT='%s': valid values are auto, host, net", value);
}

tt_status exec_gpu_emulate_parse(const char *value, int n, int *k)
{
    long long v;
    *k = 0;
    if (!value || !*value)
        return TT_OK;
    if (tt_parse_ll(value, &v) != TT_OK || v < 1 || v > n)
        return tt_error_set(TT_ERR_INVALID, "TOPOTUNE_GPU_EMULATE_HOSTS='%s' must be 1..%d (the process ranks; "
                                            "unset it for the real hosts)", value, n);
    *k = (int)v;
    return TT_OK;
}

int exec_gpu_emulated_host(int r, int n, int k)
{
    return k > 0 && n > 0 ? (int)((long long)r * k / n) : 0;
}

static int real_apart(const exec_gpu_where *a, const exec_gpu_where *b)
{
    return strcmp(a->host, b->host) || strcmp(a->boot, b->boot);
}

tt_status exec_gpu_pairs_select(int n, const exec_gpu_where *w, exec_gpu_pair *pairs)
{
    int forced = -1, host_rank = -1, apart = -1, emu = n > 0 ? w[0].emulate : 0;
    for (int r = 0; r < n; r++) {
        if (w[r].emulate != emu) {
            char a[16] = "unset", b[16] = "unset";
            if (emu)
                snprintf(a, sizeof a, "%d", emu);
            if (w[r].emulate)
                snprintf(b, sizeof b, "%d", w[r].emulate);
            return tt_error_set(TT_ERR_INVALID, "GPU communicator: TOPOTUNE_GPU_EMULATE_HOSTS differs between ranks: "
                                                "%s on rank 0, %s on rank %d (set the same value everywhere)", a, b, r);
        }
        if (w[r].mode == GPU_TP_NET && forced < 0)
            forced = r;
        if (w[r].mode == GPU_TP_HOST && host_rank < 0)
            host_rank = r;
        if (apart < 0 && r > 0 && real_apart(&w[r], &w[0]))
            apart = r;
    }
    int emu_span = emu > 1 && n > 1; /* k >= 2 of n >= 2 ranks: rank 0 and rank n-1 are on different ones */
    if (host_rank >= 0 && apart >= 0)
        return tt_error_set(TT_ERR_UNSUPPORTED, "GPU communicator: rank %d forces host-staged memory "
                                                "(TOPOTUNE_GPU_TRANSPORT=host) but the ranks span hosts: rank %d "
                                                "runs on '%s', rank 0 on '%s' (use net or auto)",
                            host_rank, apart, w[apart].host, w[0].host);
    if (host_rank >= 0 && emu_span)
        return tt_error_set(TT_ERR_UNSUPPORTED, "GPU communicator: rank %d forces host-staged memory "
                                                "(TOPOTUNE_GPU_TRANSPORT=host) but the ranks span %d emulated hosts "
                                                "(TOPOTUNE_GPU_EMULATE_HOSTS=%d; use net or auto)",
                            host_rank, emu, emu);
    if (forced >= 0 && host_rank >= 0)
        return tt_error_set(TT_ERR_INVALID, "GPU communicator: TOPOTUNE_GPU_TRANSPORT differs between ranks: "
                                            "net on rank %d, host on rank %d", forced, host_rank);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            exec_gpu_pair *p = &pairs[(size_t)a * n + b];
            memset(p, 0, sizeof *p);
            if (a == b)
                continue;
            int ea = exec_gpu_emulated_host(a, n, emu), eb = exec_gpu_emulated_host(b, n, emu);
            p->apart = real_apart(&w[a], &w[b]);
            p->net = 1;
            if (forced >= 0)
                snprintf(p->why, sizeof p->why, "forced by TOPOTUNE_GPU_TRANSPORT=net on rank %d", forced);
            else if (p->apart && strcmp(w[a].host, w[b].host))
                snprintf(p->why, sizeof p->why, "hosts differ: rank %d runs on '%.40s', rank %d on '%.40s'", b,
                         w[b].host, a, w[a].host);
            else if (p->apart)
                snprintf(p->why, sizeof p->why, "hosts differ: ranks %d and %d both run on '%.40s' but with "
                                                "different boot ids", a, b, w[a].host);
            else if (ea != eb)
                snprintf(p->why, sizeof p->why, "hosts differ: emulated host %d vs %d (TOPOTUNE_GPU_EMULATE_HOSTS=%d)",
                         eb, ea, emu);
            else {
                p->net = 0;
                if (emu)
                    snprintf(p->why, sizeof p->why, "same host: emulated host %d (TOPOTUNE_GPU_EMULATE_HOSTS=%d)",
                             ea, emu);
                else
                    snprintf(p->why, sizeof p->why, "same host");
            }
        }
    return TT_OK;
}
