/*
 * tune_expect.c - the expected performance of a machine, per size, as a health check.
 *
 * The expectation at a size is the time of what NCCL runs there (NCCL's own choice, the arg-min
 * of NCCL's model) as the context's model predicts it: the default model's NCCL algorithms
 * (tune_model_cluster.c), or NCCL's model with the NCCL-rows layer (--model nccl).
 *
 * Bands.  A healthy machine is within the model's own error of the prediction; how large that
 * error is, the corpus of published results says per regime (tune_trust.c: size class, nodes,
 * fabric).  With r = measured busbw / predicted busbw (= predicted time / measured time):
 *   PASS   1 - lo <= r <= 1 + hi
 *   WARN   r > 1 + hi: faster than the model by more than it has ever been wrong ("the model
 *          under-predicts": recalibrate, or a newer NCCL)
 *   WARN   1 - lo - gap <= r < 1 - lo: slower than a healthy machine of the corpus
 *   FAIL   r < 1 - lo - gap: a link down, a NIC at lower speed, a fabric that lost bandwidth
 * lo = for sizes >= 16 MiB the regime's 90th-percentile error, or three times its median when that is
 * less (a few far rows must not blind the check), kept within 10 .. 35 %; below 16 MiB 35 % (latency and
 * pipeline: healthy runs of one machine differ by a third there) (MODEL ASSUMPTIONS); hi =
 * its worst error and at least 30 %, gap = 25 % (a fabric that lost a quarter of its bandwidth
 * fails).  A regime the corpus never measured gets the wide band lo 50 %, hi 100 %, and the row
 * says so.  Explicit bands (tt_expect_bands with `fixed` set) replace all of this.
 */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tune_internal.h"

#define EXPECT_LO_MIN 0.10
#define EXPECT_LO_MAX 0.35
#define EXPECT_LO_MEDIANS 3.0
#define EXPECT_HI_MIN 0.30
#define EXPECT_GAP 0.25
#define EXPECT_UNKNOWN_LO 0.50
#define EXPECT_UNKNOWN_HI 1.00

const char *tt_expect_verdict_name(tt_expect_verdict v)
{
    return v == TT_EXPECT_PASS ? "PASS" : v == TT_EXPECT_WARN ? "WARN" : "FAIL";
}

static void bands_for(const tt_tune_ctx *ctx, uint64_t bytes, const tt_expect_bands *b, tt_expect_row *out)
{
    tt_trust tr;
    if (tt_model_trust(ctx, bytes, &tr) != TT_OK) memset(&tr, 0, sizeof tr);
    snprintf(out->regime, sizeof out->regime, "%s", tr.regime);
    out->trusted = tr.sweeps > 0;
    out->err_median = tr.median;
    out->err_p90 = tr.p90;
    out->err_worst = tr.worst;
    if (b && b->fixed) {
        out->lo = b->lo;
        out->hi = b->hi;
        out->gap = b->gap;
        return;
    }
    if (tr.sweeps > 0) {
        /* below 16 MiB the time is latency and pipeline: healthy published runs of one machine differ by up to a
         * third there (launch mode, CPUs, NCCL versions), and a doubled latency still falls out of 35 % */
        out->lo = tr.size != TT_SIZE_LARGE ? EXPECT_LO_MAX
                                           : fmin(fmax(fmin(tr.p90, EXPECT_LO_MEDIANS * tr.median), EXPECT_LO_MIN), EXPECT_LO_MAX);
        out->hi = fmax(tr.worst, EXPECT_HI_MIN);
    } else {
        out->lo = EXPECT_UNKNOWN_LO;
        out->hi = EXPECT_UNKNOWN_HI;
    }
    out->gap = EXPECT_GAP;
}

tt_status tt_expect_row_compute(const tt_tune_ctx *ctx, tt_coll coll, uint64_t bytes, const tt_expect_bands *b,
                                tt_expect_row *out)
{
    memset(out, 0, sizeof(*out));
    tt_tune_estimate e;
    tt_algo a;
    tt_proto p;
    /* what NCCL runs: the arg-min of NCCL's own model; its time from the model of the context
     * (the default model's NCCL algorithms, or NCCL's model with the NCCL-rows layer) */
    tt_status st = tt_nccl_choice(ctx, coll, bytes, &a, &p);
    if (st != TT_OK) return st;
    st = tt_tune_ctx_model(ctx) == TT_MODEL_NCCL ? tt_nccl_abs_eval(ctx, coll, a, p, bytes, &e)
                                                 : tt_tune_eval(ctx, coll, a, p, bytes, &e);
    if (st != TT_OK) return st;
    if (!e.enabled)
        return tt_error_set(TT_ERR_UNSUPPORTED, "expect: the model cannot evaluate NCCL's choice %s/%s at %llu bytes: %s",
                            tt_algo_name(a), tt_proto_name(p), (unsigned long long)bytes, e.reason);
    out->coll = coll;
    out->bytes = bytes;
    out->algo = a;
    out->proto = p;
    out->pred_us = e.time_us;
    out->pred_busbw = (double)bytes / (e.time_us * 1e3) * tt_busbw_factor(coll, tt_tune_ctx_nranks(ctx));
    out->latency_bound = e.lat_us > 0.5 * e.time_us;
    bands_for(ctx, bytes, b, out);
    out->pass_busbw = out->pred_busbw * (1 - out->lo);
    out->fail_busbw = out->pred_busbw * fmax(0, 1 - out->lo - out->gap);
    out->above_busbw = out->pred_busbw * (1 + out->hi);
    return TT_OK;
}

tt_status tt_expect_judge(const tt_tune_ctx *ctx, const tt_measurement *m, const tt_expect_bands *b, tt_expect_row *out)
{
    int n = tt_tune_ctx_nranks(ctx);
    if (m->nranks > 0 && m->nranks != n)
        return tt_error_set(TT_ERR_INVALID,
                            "%s: measured with %d ranks but the expectation is for %d (set --nodes/--gpus-per-node)",
                            m->where, m->nranks, n);
    if (!(m->time_us > 0) || m->bytes == 0)
        return tt_error_set(TT_ERR_INVALID, "%s: no positive time or size to judge", m->where);
    tt_status st;
    if (m->algo >= 0 || m->proto >= 0) {
        /* a forced run: the candidate it ran, not NCCL's choice */
        tt_algo a;
        tt_proto p;
        tt_tune_estimate e;
        memset(out, 0, sizeof(*out));
        if ((st = tune_row_candidate(ctx, m, &a, &p)) != TT_OK) return st;
        st = tt_tune_ctx_model(ctx) == TT_MODEL_NCCL ? tt_nccl_abs_eval(ctx, m->coll, a, p, m->bytes, &e)
                                                     : tt_tune_eval(ctx, m->coll, a, p, m->bytes, &e);
        if (st != TT_OK) return st;
        if (!e.enabled)
            return tt_error_set(TT_ERR_UNSUPPORTED, "%s: the model cannot evaluate %s/%s: %s", m->where, tt_algo_name(a),
                                tt_proto_name(p), e.reason);
        out->coll = m->coll;
        out->bytes = m->bytes;
        out->algo = a;
        out->proto = p;
        out->pred_us = e.time_us;
        out->pred_busbw = (double)m->bytes / (e.time_us * 1e3) * tt_busbw_factor(m->coll, n);
        out->latency_bound = e.lat_us > 0.5 * e.time_us;
        bands_for(ctx, m->bytes, b, out);
        out->pass_busbw = out->pred_busbw * (1 - out->lo);
        out->fail_busbw = out->pred_busbw * fmax(0, 1 - out->lo - out->gap);
        out->above_busbw = out->pred_busbw * (1 + out->hi);
    } else if ((st = tt_expect_row_compute(ctx, m->coll, m->bytes, b, out)) != TT_OK) {
        return st;
    }
    if (tt_tune_ctx_model(ctx) == TT_MODEL_TOPOTUNE) {
        /* a thread that drove several GPUs launched them one after the other (nccl-tests -g N) */
        double extra = tune_row_launch_us(&ctx->params, m);
        if (extra > 0) {
            out->pred_us += extra;
            double k = out->pred_busbw;
            out->pred_busbw = (double)m->bytes / (out->pred_us * 1e3) * tt_busbw_factor(m->coll, n);
            k = k > 0 ? out->pred_busbw / k : 1;
            out->pass_busbw *= k;
            out->fail_busbw *= k;
            out->above_busbw *= k;
        }
    }
    out->meas_us = m->time_us;
    out->meas_busbw = (double)m->bytes / (m->time_us * 1e3) * tt_busbw_factor(m->coll, n);
    out->ratio = out->meas_busbw / out->pred_busbw;
    if (out->meas_busbw > out->above_busbw) {
        out->verdict = TT_EXPECT_WARN;
        snprintf(out->note, sizeof out->note, "faster than the model by more than its error here: the model "
                 "under-predicts (recalibrate, or a newer NCCL)");
    } else if (out->meas_busbw >= out->pass_busbw) {
        out->verdict = TT_EXPECT_PASS;
    } else if (out->meas_busbw >= out->fail_busbw) {
        out->verdict = TT_EXPECT_WARN;
        snprintf(out->note, sizeof out->note, "slower than a healthy machine (%.0f %% of the model's busbw)",
                 out->ratio * 100);
    } else {
        out->verdict = TT_EXPECT_FAIL;
        snprintf(out->note, sizeof out->note, "%.0f %% of the model's busbw: a link, NIC or fabric lost bandwidth",
                 out->ratio * 100);
    }
    if (!out->trusted && out->verdict != TT_EXPECT_PASS) {
        size_t l = strlen(out->note);
        snprintf(out->note + l, sizeof out->note - l, "%s(the model was never measured in this regime)", l ? " " : "");
    }
    snprintf(out->where, sizeof out->where, "%s", m->where);
    return TT_OK;
}

static cJSON *row_json(const tt_expect_row *r, int judged)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "collective", tt_coll_name(r->coll));
    cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
    cJSON_AddStringToObject(o, "algo", tt_algo_name(r->algo));
    cJSON_AddStringToObject(o, "proto", tt_proto_name(r->proto));
    cJSON_AddNumberToObject(o, "pred_us", r->pred_us);
    cJSON_AddNumberToObject(o, "pred_busbw", r->pred_busbw);
    cJSON_AddNumberToObject(o, "pass_busbw", r->pass_busbw);
    cJSON_AddNumberToObject(o, "fail_busbw", r->fail_busbw);
    cJSON_AddNumberToObject(o, "above_busbw", r->above_busbw);
    cJSON_AddStringToObject(o, "regime", r->regime);
    cJSON_AddBoolToObject(o, "measured_regime", r->trusted);
    if (r->trusted) {
        cJSON *e = cJSON_AddObjectToObject(o, "model_error");
        if (e) {
            cJSON_AddNumberToObject(e, "median", r->err_median);
            cJSON_AddNumberToObject(e, "p90", r->err_p90);
            cJSON_AddNumberToObject(e, "worst", r->err_worst);
        }
    }
    if (judged) {
        cJSON_AddNumberToObject(o, "meas_us", r->meas_us);
        cJSON_AddNumberToObject(o, "meas_busbw", r->meas_busbw);
        cJSON_AddNumberToObject(o, "ratio", r->ratio);
        cJSON_AddStringToObject(o, "verdict", tt_expect_verdict_name(r->verdict));
        if (r->note[0]) cJSON_AddStringToObject(o, "note", r->note);
        cJSON_AddStringToObject(o, "where", r->where);
    }
    return o;
}

tt_status tt_expect_write_json(const tt_tune_ctx *ctx, const tt_expect_row *rows, int n, int judged, tt_strbuf *out)
{
    cJSON *root = cJSON_CreateObject(), *arr;
    if (!root) return tt_error_set(TT_ERR_NOMEM, "expect: out of memory");
    const tt_cluster *c = tt_tune_ctx_cluster(ctx);
    cJSON_AddStringToObject(root, "schema", "topotune-expect");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddNumberToObject(root, "nodes", c->nodes);
    cJSON_AddNumberToObject(root, "ranks", tt_tune_ctx_nranks(ctx));
    cJSON_AddStringToObject(root, "model", tt_model_name(tt_tune_ctx_model(ctx)));
    if (c->nodes > 1) {
        cJSON_AddStringToObject(root, "fabric", tt_fabric_name(c->fabric));
        cJSON_AddStringToObject(root, "fabric_origin", tt_fabric_origin_name(c->fabric_origin));
    }
    if (!(arr = cJSON_AddArrayToObject(root, "rows"))) goto nomem;
    int cnt[3] = {0}, worst = TT_EXPECT_PASS;
    for (int i = 0; i < n; i++) {
        cJSON *o = row_json(&rows[i], judged);
        if (!o) goto nomem;
        cJSON_AddItemToArray(arr, o);
        if (judged) {
            cnt[rows[i].verdict]++;
            if ((int)rows[i].verdict > worst) worst = rows[i].verdict;
        }
    }
    if (judged) {
        cJSON *s = cJSON_AddObjectToObject(root, "summary");
        if (!s) goto nomem;
        cJSON_AddNumberToObject(s, "pass", cnt[0]);
        cJSON_AddNumberToObject(s, "warn", cnt[1]);
        cJSON_AddNumberToObject(s, "fail", cnt[2]);
        cJSON_AddStringToObject(s, "verdict", tt_expect_verdict_name((tt_expect_verdict)worst));
    }
    return tune_json_print(root, out);
nomem:
    cJSON_Delete(root);
    return tt_error_set(TT_ERR_NOMEM, "expect: out of memory");
}
