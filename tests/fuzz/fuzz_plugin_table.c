/* fuzz_plugin_table.c - the NCCL tuner plugin's own table reader (plugin/tuner_table.c and
 * plugin/tuner_json.c: what runs inside every NCCL process that loads libnccl-tuner-topotune.so).
 *
 * The first input byte picks the way in, the rest is the file's text:
 *   byte % 3 == 0  tp_table_parse_json (a topotune table or table set)
 *   byte % 3 == 1  tp_table_parse_csv  (NCCL's example tuner CSV)
 *   byte % 3 == 2  tp_table_load on an in-memory file (memfd): the NUL-byte check, the byte order
 *                  mark, blank files and telling JSON from CSV, as NCCL's init reads it
 *
 * Invariants: a refused table has a message and no rules; an accepted one has rules with valid
 * collective/protocol ids, NCCL algorithm ids only (0..6), min <= max, channels >= 0 and a line;
 * the shape queries agree with the rules (every shape listed has rules, tp_table_select returns
 * only rules that apply to it).
 *
 * And a time budget per input, so that a quadratic check fails the fuzzer instead of stalling NCCL
 * (issue #32 item 1: a 1.8 MB object of 160k members took 149 s):
 *   budget = (20 ms + 0.2 us per input byte) x TOPOTUNE_TEST_SLOWDOWN x (10 under sanitizers),
 *   the best of three reads when the first is over it (a loaded machine stalls now and then)
 * The seed corpus holds inputs of a few hundred KB (many members, many tables, many CSV shapes) on
 * which the old quadratic checks took seconds; run the fuzzer with -max_len large enough to keep
 * them (scripts/dev/fuzz.sh does).
 */
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "tuner_table.h"

static double fpt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double fpt_budget(size_t size)
{
    static double scale = 0;
    if (scale == 0) {
        const char *e = getenv("TOPOTUNE_TEST_SLOWDOWN");
        scale = e && atof(e) >= 1.0 ? atof(e) : 1.0;
#if defined(__SANITIZE_ADDRESS__)
        scale *= 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
        scale *= 10;
#endif
#endif
    }
    return (0.020 + 0.2e-6 * (double)size) * scale; /* an engineering bound: the reader runs at 10-15 ns/byte here */
}

static void fpt_check(const tp_table *t, tt_status st, const char *how)
{
    if (st != TT_OK) {
        FUZZ_CHECK(tt_error_message()[0] != '\0', "%s: refused (%s) without a message", how, tt_status_name(st));
        FUZZ_CHECK(t->n == 0 && t->r == NULL, "%s: refused table kept %d rules", how, t->n);
        return;
    }
    FUZZ_CHECK(t->n >= 0 && (t->n == 0 || t->r), "%s: %d rules", how, t->n);
    FUZZ_CHECK(memchr(t->model, '\0', sizeof t->model) != NULL, "%s: model name not terminated", how);
    for (int i = 0; i < t->n; i++) {
        const tp_rule *r = &t->r[i];
        FUZZ_CHECK((unsigned)r->coll < TT_COLL_COUNT && (unsigned)r->proto < TT_PROTO_COUNT,
                   "%s: rule %d: collective %d / protocol %d out of range", how, i, (int)r->coll, (int)r->proto);
        FUZZ_CHECK((int)r->algo >= 0 && (int)r->algo <= 6, "%s: rule %d: algorithm %d is not one NCCL runs", how, i,
                   (int)r->algo);
        FUZZ_CHECK(r->min_bytes <= r->max_bytes, "%s: rule %d: min %llu > max %llu", how, i,
                   (unsigned long long)r->min_bytes, (unsigned long long)r->max_bytes);
        FUZZ_CHECK(r->channels >= 0, "%s: rule %d: channels %d", how, i, r->channels);
        FUZZ_CHECK(r->line >= 1, "%s: rule %d: line %d", how, i, r->line);
        FUZZ_CHECK(r->nranks == -1 || r->nranks >= 1, "%s: rule %d: nRanks %d", how, i, r->nranks);
        FUZZ_CHECK(r->nnodes == -1 || r->nnodes >= 1, "%s: rule %d: nNodes %d", how, i, r->nnodes);
    }
    /* the shape queries, as the plugin's init uses them (a few shapes: the time budget holds) */
    tp_shape shapes[8];
    int ns = tp_table_shapes(t, shapes, 8);
    FUZZ_CHECK(ns >= 0, "%s: %d shapes", how, ns);
    for (int k = 0; k < ns && k < 8; k++) {
        FUZZ_CHECK(tp_table_has_shape(t, shapes[k].nranks, shapes[k].nnodes), "%s: listed shape %d/%d has no rule",
                   how, shapes[k].nranks, shapes[k].nnodes);
        tp_rule *sel = NULL;
        int nsel = 0;
        FUZZ_CHECK(tp_table_select(t, shapes[k].nranks, shapes[k].nnodes, &sel, &nsel) == TT_OK, "%s: select: %s",
                   how, tt_error_message());
        FUZZ_CHECK(nsel >= 1 && nsel <= t->n, "%s: shape %d/%d selects %d of %d rules", how, shapes[k].nranks,
                   shapes[k].nnodes, nsel, t->n);
        for (int i = 0; i < nsel; i++)
            FUZZ_CHECK((sel[i].nranks < 0 || sel[i].nranks == shapes[k].nranks) &&
                           (sel[i].nnodes < 0 || sel[i].nnodes == shapes[k].nnodes),
                       "%s: a selected rule (line %d) is for another shape", how, sel[i].line);
        free(sel);
    }
    tp_shape near;
    if (tp_table_nearest(t, 8, 1, &near))
        FUZZ_CHECK(tp_table_has_shape(t, near.nranks, near.nnodes), "%s: nearest shape %d/%d has no rule", how,
                   near.nranks, near.nnodes);
}

/* tp_table_load on the text as a file: a memfd is a regular file, opened again through /proc */
static tt_status fpt_load(const uint8_t *data, size_t size, tp_table *t)
{
    int fd = memfd_create("fuzz-table", MFD_CLOEXEC);
    if (fd < 0)
        return tp_table_parse_csv("", "<no memfd>", t); /* refused: "is empty"-like, still checked */
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0)
            abort();
        done += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    tt_status st = tp_table_load(path, 0, t);
    close(fd);
    return st;
}

/* One read of the input with the invariants checked; the seconds it took. */
static double fpt_run(const uint8_t *data, size_t size)
{
    int how = data[0] % 3;
    tp_table t;
    memset(&t, 0, sizeof t);
    tt_error_clear();
    double t0 = fpt_now();
    tt_status st;
    if (how == 2) {
        st = fpt_load(data + 1, size - 1, &t);
    } else {
        char *text = fuzz_cstr(data + 1, size - 1);
        st = how == 0 ? tp_table_parse_json(text, "<fuzz>", &t) : tp_table_parse_csv(text, "<fuzz>", &t);
        free(text);
    }
    static const char *const names[] = {"json", "csv", "load"};
    fpt_check(&t, st, names[how]);
    tp_table_free(&t);
    return fpt_now() - t0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* over the budget: the best of three reads counts, so that a stall of a loaded machine (seen once:
     * 0.207 s for a 2.8 KB CSV that takes 1 ms) is not taken for a quadratic reader */
    double took = fpt_run(data, size), budget = fpt_budget(size);
    for (int again = 0; again < 2 && took > budget; again++) {
        double t = fpt_run(data, size);
        took = t < took ? t : took;
    }
    FUZZ_CHECK(took <= budget, "%s: %zu bytes took %.3f s (best of 3), over the budget of %.3f s (quadratic somewhere?)",
               data[0] % 3 == 0 ? "json" : data[0] % 3 == 1 ? "csv" : "load", size, took, budget);
    return 0;
}
