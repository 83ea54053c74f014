/* exec_gpu_select.c - which transport the GPU executor's process ranks use:
 * the TOPOTUNE_GPU_TRANSPORT values and the net-or-not decision of process
 * mode (exec_gpu_net.h).  No CUDA here, so the rules are unit-tested on any
 * machine (tests/unit/test_exec_gpu_net.c). */
#include "exec_gpu_net.h"

#include <stdio.h>
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

tt_status exec_gpu_net_select(int n, const exec_gpu_where *w, int *net, char *why, size_t whylen)
{
    char buf[256] = "";
    int forced = -1, host_rank = -1, apart = -1;
    for (int r = 0; r < n; r++) {
        if (w[r].mode == GPU_TP_NET && forced < 0)
            forced = r;
        if (w[r].mode == GPU_TP_HOST && host_rank < 0)
            host_rank = r;
        if (apart < 0 && r > 0 && (strcmp(w[r].host, w[0].host) || strcmp(w[r].boot, w[0].boot)))
            apart = r;
    }
    *net = 0;
    if (apart >= 0 && host_rank >= 0)
        return tt_error_set(TT_ERR_UNSUPPORTED, "GPU communicator: rank %d forces host-staged memory "
                                                "(TOPOTUNE_GPU_TRANSPORT=host) but the ranks span hosts: rank %d "
                                                "runs on '%s', rank 0 on '%s' (use net or auto)",
                            host_rank, apart, w[apart].host, w[0].host);
    if (forced >= 0 && host_rank >= 0)
        return tt_error_set(TT_ERR_INVALID, "GPU communicator: TOPOTUNE_GPU_TRANSPORT differs between ranks: "
                                            "net on rank %d, host on rank %d", forced, host_rank);
    if (apart >= 0) {
        *net = 1;
        snprintf(buf, sizeof buf, "hosts differ: rank %d runs on '%s', rank 0 on '%s'", apart, w[apart].host,
                 w[0].host);
    } else if (forced >= 0) {
        *net = 1;
        snprintf(buf, sizeof buf, "forced by TOPOTUNE_GPU_TRANSPORT=net on rank %d", forced);
    }
    if (why && whylen)
        snprintf(why, whylen, "%s", buf);
    return TT_OK;
}
