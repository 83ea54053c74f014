/* fuzz_tune_table.c - the two JSON readers of the tune module: the tuning
 * table (tt_tune_table_parse, what the NCCL tuner plugin loads inside NCCL)
 * and the calibration file (tt_model_params_parse).  The first input byte
 * picks the reader, the rest is the JSON text.
 *
 * Invariants: failure sets a message and leaves no entries; success gives
 * positive nodes/ranks, entries with valid enums and min <= max.
 */
#include "fuzz_common.h"
#include "tt_tune.h"

static void ftt_table(const char *json)
{
    tt_tune_table tab;
    tt_status st;
    tt_error_clear();
    st = tt_tune_table_parse(json, "<fuzz>", &tab);
    if (st != TT_OK) {
        FUZZ_CHECK(tt_error_message()[0] != '\0', "table refused (%s) without a message",
                   tt_status_name(st));
        FUZZ_CHECK(tab.entries == NULL && tab.n == 0, "refused table kept %d entries", tab.n);
        return;
    }
    FUZZ_CHECK(tab.nodes >= 1 && tab.ranks >= 1, "accepted nodes=%d ranks=%d", tab.nodes, tab.ranks);
    FUZZ_CHECK(tab.n >= 0 && (tab.n == 0 || tab.entries), "accepted %d entries", tab.n);
    FUZZ_CHECK(memchr(tab.model, '\0', sizeof tab.model) != NULL, "model name not terminated");
    for (int i = 0; i < tab.n; i++) {
        const tt_tune_entry *e = &tab.entries[i];
        FUZZ_CHECK((unsigned)e->coll < TT_COLL_COUNT && (unsigned)e->algo < TT_ALGO_COUNT &&
                       (unsigned)e->proto < TT_PROTO_COUNT,
                   "entry %d: enum out of range", i);
        FUZZ_CHECK(e->min_bytes <= e->max_bytes, "entry %d: min %llu > max %llu", i,
                   (unsigned long long)e->min_bytes, (unsigned long long)e->max_bytes);
        FUZZ_CHECK(e->channels >= 0 && e->channels <= 64, "entry %d: channels %d", i, e->channels);
    }
    tt_tune_table_free(&tab);
}

static void ftt_calibration(const char *json)
{
    tt_model_params p;
    tt_status st;
    tt_model_params_default(&p);
    tt_error_clear();
    st = tt_model_params_parse(json, "<fuzz>", &p);
    if (st != TT_OK) {
        FUZZ_CHECK(tt_error_message()[0] != '\0', "calibration refused (%s) without a message",
                   tt_status_name(st));
        return;
    }
    FUZZ_CHECK(memchr(p.source, '\0', sizeof p.source) != NULL, "source not terminated");
    FUZZ_CHECK(p.max_channels >= 1, "accepted max_channels %d", p.max_channels);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *json;
    if (size < 1)
        return 0;
    json = fuzz_cstr(data + 1, size - 1);
    if (data[0] & 1)
        ftt_calibration(json);
    else
        ftt_table(json);
    free(json);
    return 0;
}
