/*
 * tune_write.c - one call for what topo-tune writes for a context: the table (text, JSON, NCCL's
 * CSV, with the cluster of hosts and the sanity warnings in the JSON), the NCCL environment hints,
 * or --explain's candidates at one size; and a table set (--shapes) in one of its formats.
 */
#include "tune_internal.h"

static tt_status write_explain(const tt_tune_ctx *ctx, const tt_tune_write_opts *o, const tt_tune_json_extra *x,
                               tt_strbuf *out)
{
    tt_status st = tt_tune_write_explain(ctx, o->colls, o->explain_bytes, out);
    if (st == TT_OK && x && x->hosts && x->slowest) tt_strbuf_printf(out, "\ncluster: %s\n", x->slowest->why);
    if (st == TT_OK && x && x->warnings && x->warnings->n > 0) {
        tt_strbuf_append(out, "\nsanity checks (the prediction may be wrong):\n");
        for (int i = 0; i < x->warnings->n; i++)
            tt_strbuf_printf(out, "  warning %s: %s\n", x->warnings->items[i].code, x->warnings->items[i].message);
        st = tt_strbuf_status(out);
    }
    return st;
}

tt_status tt_tune_write_output(const tt_topo *topo, const tt_tune_ctx *ctx, const tt_tune_write_opts *o,
                               const tt_tune_json_extra *x, tt_strbuf *out)
{
    if (o->explain) return write_explain(ctx, o, x, out);
    if (o->format == TT_TUNE_FMT_ENV) return tt_tune_write_env(topo, ctx, out);
    tt_tune_table tab;
    tt_status st = o->keep_margin >= 0
                       ? tt_tune_table_build_keep_nccl(ctx, o->colls, o->min_size, o->max_size, o->keep_margin, &tab)
                       : tt_tune_table_build(ctx, o->colls, o->min_size, o->max_size, o->nccl_only, &tab);
    if (st != TT_OK) return st;
    tt_tune_json_extra none = {0};
    st = o->format == TT_TUNE_FMT_JSON  ? tt_tune_write_json_ex(ctx, &tab, x ? x : &none, out)
         : o->format == TT_TUNE_FMT_CSV ? tt_tune_write_csv(ctx, &tab, out)
                                        : tt_tune_write_text(ctx, &tab, out);
    tt_tune_table_free(&tab);
    return st;
}

tt_status tt_tune_set_write(const tt_tune_set *s, tt_tune_format f, tt_strbuf *out)
{
    return f == TT_TUNE_FMT_JSON ? tt_tune_set_write_json(s, out)
           : f == TT_TUNE_FMT_CSV ? tt_tune_set_write_csv(s, out)
                                  : tt_tune_set_write_text(s, out);
}
