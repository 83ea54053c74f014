/* exec_ib_verbs.c - load libibverbs.so.1 at run time for the InfiniBand
 * transport (see exec_ib_verbs.h).  The library stays loaded for the life of
 * the process: verbs objects may outlive a communicator's error path and
 * unloading a provider library is not worth the risk. */
#include "exec_ib_verbs.h"

#ifdef TT_HAVE_IBVERBS
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static exec_ib_api api;
static int api_ok;
static char api_err[300];
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

#define SYM(field, name)                                                                          \
    do {                                                                                          \
        *(void **)&api.field = dlsym(api.lib, name);                                              \
        if (!api.field && !missing[0])                                                            \
            snprintf(missing, sizeof missing, "%s", name);                                        \
    } while (0)

static void api_load(void)
{
    char missing[64] = "";
    api.lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!api.lib) {
        const char *e = dlerror();
        snprintf(api_err, sizeof api_err, "libibverbs.so.1 not loadable (%s): install rdma-core (libibverbs1)",
                 e ? e : "unknown error");
        return;
    }
    SYM(get_device_list, "ibv_get_device_list");
    SYM(free_device_list, "ibv_free_device_list");
    SYM(get_device_name, "ibv_get_device_name");
    SYM(open_device, "ibv_open_device");
    SYM(close_device, "ibv_close_device");
    SYM(query_device, "ibv_query_device");
    SYM(query_port_compat, "ibv_query_port");
    SYM(query_gid, "ibv_query_gid");
    SYM(alloc_pd, "ibv_alloc_pd");
    SYM(dealloc_pd, "ibv_dealloc_pd");
    SYM(reg_mr, "ibv_reg_mr");
    SYM(dereg_mr, "ibv_dereg_mr");
    SYM(create_cq, "ibv_create_cq");
    SYM(destroy_cq, "ibv_destroy_cq");
    SYM(create_qp, "ibv_create_qp");
    SYM(destroy_qp, "ibv_destroy_qp");
    SYM(modify_qp, "ibv_modify_qp");
    *(void **)&api.wc_status_str = dlsym(api.lib, "ibv_wc_status_str"); /* optional */
    if (missing[0]) {
        snprintf(api_err, sizeof api_err, "libibverbs.so.1 lacks %s", missing);
        return;
    }
    api_ok = 1;
}

const exec_ib_api *exec_ib_api_get(void)
{
    pthread_once(&api_once, api_load);
    if (!api_ok) {
        tt_error_set(TT_ERR_UNSUPPORTED, "%s", api_err);
        return NULL;
    }
    return &api;
}

int exec_ib_query_port(const exec_ib_api *a, struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *pa)
{
    struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);
    memset(pa, 0, sizeof *pa);
    if (vctx)
        return vctx->query_port(ctx, port, pa, sizeof *pa);
    return a->query_port_compat(ctx, port, (struct _compat_ibv_port_attr *)pa);
}

const char *exec_ib_wc_str(const exec_ib_api *a, int status)
{
    static __thread char buf[32];
    if (a && a->wc_status_str)
        return a->wc_status_str((enum ibv_wc_status)status);
    snprintf(buf, sizeof buf, "status %d", status);
    return buf;
}
#endif
