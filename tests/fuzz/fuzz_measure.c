/* fuzz_measure.c - the measurement readers of the tune module (tt_measure_parse): nccl-tests text
 * tables and -J JSON, topo-exec text and JSON, as topo-tune --calibrate/--judge-choices/--expect read
 * them.  The format is detected from the content.
 *
 * Invariants: failure sets a message and appends nothing; success appends rows with a valid
 * collective, positive time, nranks/nodes >= 0, algo/proto in range or -1, a terminated "where".
 */
#include "fuzz_common.h"
#include "tt_tune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tt_measure_set set;
    tt_measure_opts opts = TT_MEASURE_OPTS_DEFAULT;
    char *text = fuzz_cstr(data, size);
    memset(&set, 0, sizeof set);
    tt_error_clear();
    tt_status st = tt_measure_parse(text, size, "<fuzz>", &opts, &set);
    if (st != TT_OK) {
        FUZZ_CHECK(tt_error_message()[0] != '\0', "measurements refused (%s) without a message",
                   tt_status_name(st));
        FUZZ_CHECK(set.n == 0, "refused input appended %d rows", set.n);
    }
    for (int i = 0; i < set.n; i++) {
        const tt_measurement *m = &set.m[i];
        FUZZ_CHECK((unsigned)m->coll < TT_COLL_COUNT, "row %d: collective %d", i, (int)m->coll);
        FUZZ_CHECK(m->time_us > 0, "row %d: time %g", i, m->time_us);
        FUZZ_CHECK(m->nranks >= 0 && m->nodes >= 0, "row %d: nranks %d nodes %d", i, m->nranks, m->nodes);
        FUZZ_CHECK(m->algo >= -1 && m->algo < TT_ALGO_COUNT, "row %d: algo %d", i, m->algo);
        FUZZ_CHECK(m->proto >= -1 && m->proto < TT_PROTO_COUNT, "row %d: proto %d", i, m->proto);
        FUZZ_CHECK(memchr(m->where, '\0', sizeof m->where) != NULL, "row %d: where not terminated", i);
    }
    tt_measure_set_free(&set);
    free(text);
    return 0;
}
