/*
 * tune_params.c - the topotune model's constants (one table) and the calibration file.
 *
 * Every value below is a MODEL ASSUMPTION unless marked as an NCCL fact; docs/model.md
 * explains each one.  A calibration file (schema "topotune-calibration", version 1)
 * overrides any of them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "tune_internal.h"

/* launch_us step_us hop_us chan_GBps shared_GBps [peer_us xfer_GBps dram_GBps cache_MiB: host only]
 * [l2_GBps: GPU kinds only] [xcore_GBps: host only] */
/* host ranks: fitted on the host sweeps of tests/fixtures/measurements/model-truth-h200-c (16 cores of
 * the H200 machine, 2026-12-02 06:49 UTC, 3 cycles per sweep, the fastest of each size kept), refitted
 * 2026-12-02 16:40 UTC for the hierarchical single stream and the per-rank DRAM knee (HOST_SHARE) and
 * 17:15 UTC for the cross-core term (xcore_GBps: a ring line costs 1/80.5 + 1/28.4 ns a byte, a line of
 * the rank's own 1/80.5) */
#define EXEC_HOST_SIMPLE 0.416, 0.795, 0.479, 80.5, 114.9, 0.298, 5.49, 50.8, 1.0, 0, 28.4 /* no l2 term */
/* the GPU kinds have no peer, first-page, cache-miss or cross-core term (tt_exec_params: 0 = no term);
 * the value before the last is l2_GBps (every access of the ranks on one GPU; 0 = no term).
 * Virtual ranks: fitted on the virtual-rank sweeps of tests/fixtures/measurements/model-truth-h200-d
 * (one H200, 2026-12-02 13:41 UTC, after the channels' round-robin walk; LL128's fit gives its l2
 * term no weight, so it has none). */
#define NO_HOST_TERMS 0, 0, 0, 0
#define EXEC_VIRTUAL_LL 5.34, 2.68, 0.709, 17.9, 3088.0, NO_HOST_TERMS, 3765.0, 0
#define EXEC_VIRTUAL_SIMPLE 5.79, 4.50, 3.33, 133.3, 10951.0, NO_HOST_TERMS, 8672.0, 0
#define EXEC_VIRTUAL_LL128 5.77, 3.36, 0.955, 28.0, 3665.0, NO_HOST_TERMS, 0, 0
/* one rank per GPU, H100/H200 SXM with NVLink4 to an NVSwitch (sm90 NV18): fitted with topo-tune
 * --calibrate on the first recorded 2 x H200 session only (tests/fixtures/measurements/gpu-h200x2,
 * 2026-11-29); the second session (gpu-h200x2-b) is the held-out check (docs/benchmarks.md).
 * MODEL ASSUMPTION: other GPUs and links use these until calibrated; no l2 term (one rank per
 * GPU). */
#define EXEC_GPU_LL 3.46, 4.35, 3.60, 25.3, 1242.0, NO_HOST_TERMS, 0, 0
#define EXEC_GPU_SIMPLE 16.9, 0.985, 0.0, 74.6, 1825.0, NO_HOST_TERMS, 0, 0

void tt_model_params_default(tt_model_params *p)
{
    memset(p, 0, sizeof(*p));
    /*                       alpha_us beta efficiency */
    p->link[TT_LCLASS_NVL] = (tt_link_params){0.60, 0, 0.95}; /* NVLink hop incl. flag round trip (alpha fitted, cluster_fit.py) */
    p->link[TT_LCLASS_C2C] = (tt_link_params){0.8, 0, 0.90};
    p->link[TT_LCLASS_PCI] = (tt_link_params){1.5, 0, 0.85}; /* PCIe TLP overhead ~15% */
    p->link[TT_LCLASS_SYS] = (tt_link_params){2.5, 0, 0.70}; /* inter-socket */
    p->link[TT_LCLASS_NET] = (tt_link_params){4.0, 0, 0.92}; /* RDMA write + completion + proxy */
    /* The network between the nodes, per fabric (tune_model_cluster.c; docs/model.md "Fabrics"): one
     * network hop per protocol (us), the fraction of the ports' speed moved at large sizes, the hop
     * scale of pre-Hopper clusters.  MODEL ASSUMPTIONS from public figures: fitted by
     * scripts/bench/cluster_fit.py on the published corpus (tests/fixtures/published/, 2026-12-03) as
     * one hop latency per fabric plus a shared protocol offset (LL128 +0.9 us, Simple +8.8 us).
     * Sockets were never measured (no healthy socket run in the corpus): twice RoCE's hop and half
     * its efficiency, an assumption with nothing behind it but NCCL's socket transport staging
     * through host memory.
     *                                        hop LL  LL128  Simple  efficiency  pre-sm90 */
    p->fabric[TT_FABRIC_IB] = (tt_fabric_params){{5.9, 6.8, 14.7}, 0.98, 1.0};
    p->fabric[TT_FABRIC_ROCE] = (tt_fabric_params){{9.9, 10.8, 18.7}, 0.88, 1.0};
    p->fabric[TT_FABRIC_EFA] = (tt_fabric_params){{24.0, 24.9, 32.8}, 0.83, 3.00}; /* p4d/p4de: first EFA generation */
    p->fabric[TT_FABRIC_TCPX] = (tt_fabric_params){{61.3, 62.2, 70.1}, 0.93, 1.0};
    p->fabric[TT_FABRIC_SOCKET] = (tt_fabric_params){{19.8, 21.6, 37.5}, 0.44, 1.0};
    /*                                  base step  eff       per-ch  chunk */
    /*                                  base step  eff       per-ch  chunk */
    p->proto[TT_PROTO_LL] = (tt_proto_params){5.0, 0.0, 0.5, 6.0, 32768};          /* 8B lines: 4B data + 4B flag */
    p->proto[TT_PROTO_LL128] = (tt_proto_params){6.0, 0.5, 120.0 / 128.0, 36.7, 576000}; /* 128B lines, 8B flag */
    p->proto[TT_PROTO_SIMPLE] = (tt_proto_params){6.5, 2.0, 1.0, 44.0, 524288};   /* fences + separate flags */
    /* NCCL's algorithms: launch, in-node step and medium-size pipeline per protocol, fitted with the fabrics
     * above (cluster_fit.py; LL128's launch at the fit's bound of 25 us: NCCL runs LL128 only at medium
     * sizes in the corpus, whose time it carries)
     *                                        base   step  pipeline */
    p->nccl[TT_PROTO_LL] = (tt_nccl_proto_params){6.64, 0.03, 0.59};
    p->nccl[TT_PROTO_LL128] = (tt_nccl_proto_params){25.0, 0.82, 0.80};
    p->nccl[TT_PROTO_SIMPLE] = (tt_nccl_proto_params){2.47, 5.00, 0.73};
    p->nccl_pipeline_cap = 4.27;
    p->nvls_efficiency = 0.65; /* fitted to H100 NVLS busbw ~480 GB/s (nccl-tests #212) */
    p->nvls_alpha_us = 5.47;    /* one NVLS step each way (cluster_fit.py) */
    /* Our executor (tune_model_exec.c): launch, step, hop (us), chan/shared (GB/s of memory
     * accesses).  Fitted to the recorded runs of tests/fixtures/measurements/model-truth-h200 and
     * -h200-b (one H200, 16 cores, 2026-12-01/02; docs/benchmarks.md) with topo-tune --calibrate; a
     * machine of another kind should be calibrated (docs/calibration.md). */
    p->exec[TT_RANKS_HOST][TT_PROTO_SIMPLE] = (tt_exec_params){EXEC_HOST_SIMPLE};
    p->exec[TT_RANKS_VIRTUAL][TT_PROTO_LL] = (tt_exec_params){EXEC_VIRTUAL_LL};
    p->exec[TT_RANKS_VIRTUAL][TT_PROTO_SIMPLE] = (tt_exec_params){EXEC_VIRTUAL_SIMPLE};
    p->exec[TT_RANKS_VIRTUAL][TT_PROTO_LL128] = (tt_exec_params){EXEC_VIRTUAL_LL128};
    p->exec[TT_RANKS_GPU][TT_PROTO_LL] = (tt_exec_params){EXEC_GPU_LL};
    /* MODEL ASSUMPTION: LL128 between GPUs over NVLink was never measured here (one GPU lent);
     * the virtual-rank figures stand in until a multi-GPU run calibrates them */
    p->exec[TT_RANKS_GPU][TT_PROTO_LL128] = (tt_exec_params){EXEC_VIRTUAL_LL128};
    p->exec[TT_RANKS_GPU][TT_PROTO_SIMPLE] = (tt_exec_params){EXEC_GPU_SIMPLE};
    for (int k = 0; k < TT_RANKS_KIND_COUNT; k++)
        for (int q = 0; q < TT_PROTO_COUNT; q++)
            if (p->exec[k][q].chan_GBps <= 0) p->exec[k][q] = (tt_exec_params){5.0, 2.0, 1.0, 50.0, 1000.0, NO_HOST_TERMS, 0, 0};
    p->host_cores = 0;
    p->channel_us = 0.02; /* CTA launch/sync per channel: small sizes prefer few channels */
    p->group_launch_us = 2.59; /* per further GPU one thread launches (nccl-tests -g N; cluster_fit.py) */
    p->max_channels = 32;
    snprintf(p->source, sizeof p->source, "built-in");
}

static tt_status num_member(const cJSON *obj, const char *name, const char *where, double lo, double hi,
                            double *dst)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!it) return TT_OK;
    if (!cJSON_IsNumber(it))
        return tt_error_set(TT_ERR_PARSE, "%s.%s: expected a number", where, name);
    double v = it->valuedouble;
    if (!isfinite(v) || v < lo || v > hi)
        return tt_error_set(TT_ERR_INVALID, "%s.%s=%g is out of range [%g, %g]", where, name, v, lo, hi);
    *dst = v;
    return TT_OK;
}

static tt_status check_members(const cJSON *obj, const char *where, const char *const *known)
{
    for (const cJSON *it = obj->child; it; it = it->next) {
        int ok = 0;
        for (int i = 0; known[i]; i++)
            if (!strcmp(it->string, known[i])) ok = 1;
        if (!ok) return tt_error_set(TT_ERR_PARSE, "%s: unknown member '%s'", where, it->string);
    }
    return TT_OK;
}

tt_status tt_model_params_parse(const char *json, const char *name, tt_model_params *p)
{
    cJSON *root = cJSON_Parse(json);
    if (!root) {
        const char *e = cJSON_GetErrorPtr();
        int off = e && e >= json ? (int)(e - json) : -1;
        return tt_error_set(TT_ERR_PARSE, "%s: not valid JSON (near byte %d)", name, off);
    }
    tt_status st = TT_OK;
    char where[96];
    static const char *const top[] = {"schema", "version", "links", "fabrics", "protocols", "nccl", "nvls", "exec", "host_cores", "channel_us", "group_launch_us", "max_channels", "comment", NULL};
    static const char *const fk[] = {"hop_LL_us", "hop_LL128_us", "hop_Simple_us", "efficiency", "hop_scale_pre_sm90", NULL};
    static const char *const ek[] = {"launch_us", "step_us", "hop_us", "chan_GBps", "shared_GBps", "peer_us",
                                     "xfer_GBps", "dram_GBps", "l2_GBps", "xcore_GBps", "cache_MiB", NULL};
    static const char *const lk[] = {"alpha_us", "beta_GBps", "efficiency", NULL};
    static const char *const pk[] = {"base_us", "step_us", "efficiency", "per_channel_GBps", "chunk_bytes", NULL};
    static const char *const ck[] = {"base_us", "step_us", "pipeline", NULL};
    static const char *const nk[] = {"efficiency", "alpha_us", NULL};
    if (!cJSON_IsObject(root)) { st = tt_error_set(TT_ERR_PARSE, "%s: top level must be an object", name); goto out; }
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "topotune-calibration")) {
        st = tt_error_set(TT_ERR_PARSE, "%s: \"schema\" must be \"topotune-calibration\"", name);
        goto out;
    }
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
        st = tt_error_set(TT_ERR_PARSE, "%s: \"version\" must be 1", name);
        goto out;
    }
    if ((st = check_members(root, name, top)) != TT_OK) goto out;
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(root, "links");
    if (links) {
        if (!cJSON_IsObject(links)) { st = tt_error_set(TT_ERR_PARSE, "%s: links must be an object", name); goto out; }
        for (const cJSON *it = links->child; it; it = it->next) {
            int cls = -1;
            for (int c = 0; c < TT_LCLASS_COUNT; c++)
                if (!strcmp(it->string, tt_link_class_name((tt_link_class)c))) cls = c;
            snprintf(where, sizeof where, "%s: links.%s", name, it->string);
            if (cls < 0) { st = tt_error_set(TT_ERR_PARSE, "%s: unknown link class (NVL, C2C, PCI, SYS, NET)", where); goto out; }
            if (!cJSON_IsObject(it)) { st = tt_error_set(TT_ERR_PARSE, "%s: must be an object", where); goto out; }
            if ((st = check_members(it, where, lk)) != TT_OK) goto out;
            tt_link_params *l = &p->link[cls];
            if ((st = num_member(it, "alpha_us", where, 0, 1e4, &l->alpha_us)) != TT_OK) goto out;
            if ((st = num_member(it, "beta_GBps", where, 0, 1e5, &l->beta_GBps)) != TT_OK) goto out;
            if ((st = num_member(it, "efficiency", where, 1e-3, 1.0, &l->efficiency)) != TT_OK) goto out;
        }
    }
    const cJSON *fabs = cJSON_GetObjectItemCaseSensitive(root, "fabrics");
    if (fabs) {
        if (!cJSON_IsObject(fabs)) { st = tt_error_set(TT_ERR_PARSE, "%s: fabrics must be an object", name); goto out; }
        for (const cJSON *it = fabs->child; it; it = it->next) {
            tt_fabric fb;
            snprintf(where, sizeof where, "%s: fabrics.%s", name, it->string);
            if (tt_fabric_parse(it->string, &fb) != TT_OK || strcmp(it->string, tt_fabric_name(fb))) {
                st = tt_error_set(TT_ERR_PARSE, "%s: unknown fabric (ib, roce, efa, tcpx, socket)", where);
                goto out;
            }
            if (!cJSON_IsObject(it)) { st = tt_error_set(TT_ERR_PARSE, "%s: must be an object", where); goto out; }
            if ((st = check_members(it, where, fk)) != TT_OK) goto out;
            tt_fabric_params *q = &p->fabric[fb];
            for (int k = 0; k < TT_PROTO_COUNT; k++)
                if ((st = num_member(it, fk[k], where, 0, 1e4, &q->hop_us[k])) != TT_OK) goto out;
            if ((st = num_member(it, "efficiency", where, 1e-3, 1.0, &q->efficiency)) != TT_OK) goto out;
            if ((st = num_member(it, "hop_scale_pre_sm90", where, 0.01, 100, &q->hop_scale_pre_sm90)) != TT_OK) goto out;
        }
    }
    const cJSON *protos = cJSON_GetObjectItemCaseSensitive(root, "protocols");
    if (protos) {
        if (!cJSON_IsObject(protos)) { st = tt_error_set(TT_ERR_PARSE, "%s: protocols must be an object", name); goto out; }
        for (const cJSON *it = protos->child; it; it = it->next) {
            tt_proto pr;
            snprintf(where, sizeof where, "%s: protocols.%s", name, it->string);
            if (tt_proto_parse(it->string, &pr) != TT_OK || pr == TT_PROTO_DEFAULT) {
                st = tt_error_set(TT_ERR_PARSE, "%s: unknown protocol (LL, LL128, Simple)", where);
                goto out;
            }
            if (!cJSON_IsObject(it)) { st = tt_error_set(TT_ERR_PARSE, "%s: must be an object", where); goto out; }
            if ((st = check_members(it, where, pk)) != TT_OK) goto out;
            tt_proto_params *q = &p->proto[pr];
            if ((st = num_member(it, "base_us", where, 0, 1e4, &q->base_us)) != TT_OK) goto out;
            if ((st = num_member(it, "step_us", where, 0, 1e4, &q->step_us)) != TT_OK) goto out;
            if ((st = num_member(it, "efficiency", where, 1e-3, 1.0, &q->efficiency)) != TT_OK) goto out;
            if ((st = num_member(it, "per_channel_GBps", where, 1e-3, 1e5, &q->per_channel_GBps)) != TT_OK) goto out;
            if ((st = num_member(it, "chunk_bytes", where, 64, 1e9, &q->chunk_bytes)) != TT_OK) goto out;
        }
    }
    const cJSON *nc = cJSON_GetObjectItemCaseSensitive(root, "nccl");
    if (nc) {
        if (!cJSON_IsObject(nc)) { st = tt_error_set(TT_ERR_PARSE, "%s: nccl must be an object", name); goto out; }
        for (const cJSON *it = nc->child; it; it = it->next) {
            snprintf(where, sizeof where, "%s: nccl.%s", name, it->string);
            if (!strcmp(it->string, "pipeline_cap")) {
                if ((st = num_member(nc, "pipeline_cap", where, 0, 1e4, &p->nccl_pipeline_cap)) != TT_OK) goto out;
                continue;
            }
            tt_proto pr;
            if (tt_proto_parse(it->string, &pr) != TT_OK || pr == TT_PROTO_DEFAULT) {
                st = tt_error_set(TT_ERR_PARSE, "%s: unknown protocol (LL, LL128, Simple) or member (pipeline_cap)", where);
                goto out;
            }
            if (!cJSON_IsObject(it)) { st = tt_error_set(TT_ERR_PARSE, "%s: must be an object", where); goto out; }
            if ((st = check_members(it, where, ck)) != TT_OK) goto out;
            tt_nccl_proto_params *q = &p->nccl[pr];
            if ((st = num_member(it, "base_us", where, 0, 1e4, &q->base_us)) != TT_OK) goto out;
            if ((st = num_member(it, "step_us", where, 0, 1e4, &q->step_us)) != TT_OK) goto out;
            if ((st = num_member(it, "pipeline", where, 0, 1e4, &q->pipeline)) != TT_OK) goto out;
        }
    }
    const cJSON *nv = cJSON_GetObjectItemCaseSensitive(root, "nvls");
    if (nv) {
        snprintf(where, sizeof where, "%s: nvls", name);
        if (!cJSON_IsObject(nv)) { st = tt_error_set(TT_ERR_PARSE, "%s: must be an object", where); goto out; }
        if ((st = check_members(nv, where, nk)) != TT_OK) goto out;
        if ((st = num_member(nv, "efficiency", where, 1e-3, 1.0, &p->nvls_efficiency)) != TT_OK) goto out;
        if ((st = num_member(nv, "alpha_us", where, 0, 1e4, &p->nvls_alpha_us)) != TT_OK) goto out;
    }
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(root, "exec");
    if (ex) {
        if (!cJSON_IsObject(ex)) { st = tt_error_set(TT_ERR_PARSE, "%s: exec must be an object", name); goto out; }
        for (const cJSON *kd = ex->child; kd; kd = kd->next) {
            int kind = -1;
            for (int k = 1; k < TT_RANKS_KIND_COUNT; k++)
                if (!strcmp(kd->string, tt_exec_kind_name((tt_exec_kind)k))) kind = k;
            snprintf(where, sizeof where, "%s: exec.%s", name, kd->string);
            if (kind < 0) { st = tt_error_set(TT_ERR_PARSE, "%s: unknown kind of ranks (host, virtual, gpu)", where); goto out; }
            if (!cJSON_IsObject(kd)) { st = tt_error_set(TT_ERR_PARSE, "%s: must be an object", where); goto out; }
            for (const cJSON *it = kd->child; it; it = it->next) {
                tt_proto pr;
                snprintf(where, sizeof where, "%s: exec.%s.%s", name, kd->string, it->string);
                if (tt_proto_parse(it->string, &pr) != TT_OK || pr == TT_PROTO_DEFAULT) {
                    st = tt_error_set(TT_ERR_PARSE, "%s: unknown protocol (LL, LL128, Simple)", where);
                    goto out;
                }
                if (!cJSON_IsObject(it)) { st = tt_error_set(TT_ERR_PARSE, "%s: must be an object", where); goto out; }
                if ((st = check_members(it, where, ek)) != TT_OK) goto out;
                tt_exec_params *e = &p->exec[kind][pr];
                for (int j = 0; j < TT_EXEC_NCONST; j++) {
                    double v = tune_exec_param_get(e, j), lo, hi;
                    tune_exec_param_range(j, &lo, &hi);
                    if ((st = num_member(it, tune_exec_param_name(j), where, lo, hi, &v)) != TT_OK) goto out;
                    tune_exec_param_set(e, j, v);
                }
            }
        }
    }
    if ((st = num_member(root, "host_cores", name, 0, 1e6, &p->host_cores)) != TT_OK) goto out;
    if ((st = num_member(root, "channel_us", name, 0, 100, &p->channel_us)) != TT_OK) goto out;
    if ((st = num_member(root, "group_launch_us", name, 0, 1000, &p->group_launch_us)) != TT_OK) goto out;
    double mc = p->max_channels;
    if ((st = num_member(root, "max_channels", name, 1, 64, &mc)) != TT_OK) goto out;
    if (mc != floor(mc)) { st = tt_error_set(TT_ERR_INVALID, "%s.max_channels=%g is not an integer", name, mc); goto out; }
    p->max_channels = (int)mc;
    snprintf(p->source, sizeof p->source, "%s", name);
out:
    cJSON_Delete(root);
    return st;
}

tt_status tt_model_params_load(const char *path, tt_model_params *p)
{
    char *buf = NULL;
    size_t len = 0;
    tt_status st = tt_read_file(path, 1 << 20, &buf, &len);
    if (st != TT_OK) return st;
    st = tt_model_params_parse(buf, path, p);
    free(buf);
    return st;
}
