/*
 * tune_table_csv.c - the NCCL tuner CSV (NCCL's example tuner plugin format, also read by
 * topotune's plugin): collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,
 * nRanks,numPipeOps,regBuff.
 *
 * Channels are always explicit for model tables: NCCL's example plugin turns -1 into one channel
 * (it starts every call at nChannels = 1), so a -1 there ran every size on one channel.  An
 * entry with a count writes it; an entry without one (tables that keep NCCL's choice elsewhere)
 * writes the model's launch channels for that (algorithm, protocol), evaluated at each
 * power-of-two size of the range, with the range split where that count changes.
 */
#include <stdio.h>

#include "tune_internal.h"

void tune_entry_csv(const tt_tune_entry *e, int nnodes, int nranks, tt_strbuf *out)
{
    tt_strbuf_printf(out, "%s,%llu,%llu,%s,%s,%d,%d,%d,-1,-1\n", tt_coll_name(e->coll), (unsigned long long)e->min_bytes,
                     (unsigned long long)e->max_bytes, tt_algo_name(e->algo), tt_proto_name(e->proto),
                     e->channels > 0 ? e->channels : -1, nnodes, nranks);
}

/* the model's launch channels at `bytes`; the communicator's channels where the model has none */
static tt_status channels_at(const tt_tune_ctx *ctx, const tt_tune_entry *e, uint64_t bytes, int *out)
{
    tt_tune_estimate est;
    tt_status st = tt_tune_eval(ctx, e->coll, e->algo, e->proto, bytes ? bytes : 1, &est);
    if (st != TT_OK) return st;
    int ch = est.enabled && est.channels > 0 ? est.channels : ctx->ch.comm_channels;
    *out = ch < 1 ? 1 : ch > 64 ? 64 : ch;
    return TT_OK;
}

/* [lo, end of lo's power-of-two bucket] clipped to max: bucket of 0 is [0, 1] */
static uint64_t bucket_end(uint64_t lo, uint64_t max)
{
    uint64_t p = 1;
    while (p <= lo && p < (1ULL << 63)) p <<= 1;
    uint64_t hi = p > lo ? p - 1 : UINT64_MAX;
    if (lo == 0) hi = 1;
    return hi < max ? hi : max;
}

static tt_status csv_rows(const tt_tune_ctx *ctx, const tt_tune_table *tab, tt_strbuf *out)
{
    for (int i = 0; i < tab->n; i++) {
        const tt_tune_entry *e = &tab->entries[i];
        if (e->algo >= TT_ALGO_NCCL_COUNT || (int)e->algo < 0 || (int)e->proto < 0)
            return tt_error_set(TT_ERR_INVALID,
                                "tune: entry %d uses algorithm '%s' which NCCL cannot run; build the table with NCCL algorithms only",
                                i, tt_algo_name(e->algo));
        if (tab->keeps_nccl) /* why this range is forced: the decision of its first sweep size */
            for (int k = 0; k < tab->ndec; k++) {
                const tt_tune_decision *d = &tab->dec[k];
                if (d->coll != e->coll || d->bytes < e->min_bytes || d->bytes > e->max_bytes || !d->forced) continue;
                tt_strbuf_printf(out, "# %s at %llu B: %s\n", tt_coll_name(d->coll), (unsigned long long)d->bytes, d->why);
                break;
            }
        if (e->channels > 0) {
            tune_entry_csv(e, ctx->nnodes, ctx->nranks, out);
            continue;
        }
        tt_tune_entry row = *e;
        uint64_t lo = e->min_bytes;
        for (;;) {
            int ch, ch2;
            tt_status st = channels_at(ctx, e, lo, &ch);
            if (st != TT_OK) return st;
            uint64_t hi = bucket_end(lo, e->max_bytes);
            while (hi < e->max_bytes) { /* extend over the next buckets with the same count */
                if ((st = channels_at(ctx, e, hi + 1, &ch2)) != TT_OK) return st;
                if (ch2 != ch) break;
                hi = bucket_end(hi + 1, e->max_bytes);
            }
            row.min_bytes = lo;
            row.max_bytes = hi;
            row.channels = ch;
            tune_entry_csv(&row, ctx->nnodes, ctx->nranks, out);
            if (hi >= e->max_bytes) break;
            lo = hi + 1;
        }
    }
    return tt_strbuf_status(out);
}

static void csv_header(const tt_tune_ctx *ctx, tt_strbuf *out)
{
    tt_strbuf_printf(out, "# topotune tuning table (model %s) for NCCL's example tuner plugin (NCCL_TUNER_CONFIG_FILE) and "
                          "topotune's\n",
                     tt_model_name(ctx->model));
    tt_strbuf_append(out, "# channels: the channel count the model runs the range on (explicit: NCCL's example plugin reads -1 as 1 channel)\n");
}

tt_status tt_tune_write_csv(const tt_tune_ctx *ctx, const tt_tune_table *tab, tt_strbuf *out)
{
    csv_header(ctx, out);
    tt_strbuf_printf(out, "# topology %s: %d node(s) x %d GPU(s), %d NIC(s)/node at %g Gb/s\n", ctx->topo->source,
                     ctx->nnodes, ctx->cl.gpus_per_node, ctx->cl.nics_per_node, ctx->cl.nic_gbps);
    if (tab->keeps_nccl) {
        int forced = 0;
        for (int k = 0; k < tab->ndec; k++) forced += tab->dec[k].forced;
        tt_strbuf_printf(out, "# sizes without a row are left to NCCL's own choice: %d of %d sweep sizes forced, each only where the "
                         "model's predicted gain is larger than its worst error on real clusters in that regime allows\n",
                         forced, tab->ndec);
    }
    tt_strbuf_append(out, "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n");
    return csv_rows(ctx, tab, out);
}

tt_status tt_tune_set_write_csv(const tt_tune_set *s, tt_strbuf *out)
{
    if (s->n < 1) return tt_error_set(TT_ERR_INVALID, "tune: an empty table set");
    csv_header(s->ctx[0], out);
    tt_strbuf_printf(out, "# topology %s; %d communicator shape(s), told apart by the nNodes and nRanks columns\n",
                     s->ctx[0]->topo->source, s->n);
    tt_strbuf_append(out, "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n");
    for (int i = 0; i < s->n; i++) {
        tt_strbuf_printf(out, "# %d ranks on %d node(s) (%d GPU(s) per node)\n", s->shapes[i].nranks, s->shapes[i].nnodes,
                         s->shapes[i].nranks / s->shapes[i].nnodes);
        tt_status st = csv_rows(s->ctx[i], &s->tab[i], out);
        if (st != TT_OK) return tt_error_prefix(st, "shape %dx%d", s->shapes[i].nranks, s->shapes[i].nnodes);
    }
    return tt_strbuf_status(out);
}
