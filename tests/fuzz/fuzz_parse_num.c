/* fuzz_parse_num.c - strict number parsing in common/: tt_parse_ll,
 * tt_parse_double, tt_parse_size.
 *
 * Invariants: failure sets a message; an accepted integer prints and parses
 * back to itself; an accepted double is finite and round-trips through
 * "%.17g"; an accepted size of plain decimal digits equals strtoull's value,
 * and every accepted size prints and parses back to itself.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>

#include "fuzz_common.h"
#include "tt_common.h"

static int fpn_all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s, buf[64];
    long long ll, ll2;
    double d, d2;
    uint64_t u, u2;
    tt_status st;

    if (size > 256)
        return 0;
    s = fuzz_cstr(data, size);

    tt_error_clear();
    st = tt_parse_ll(s, &ll);
    if (st != TT_OK) {
        FUZZ_CHECK(tt_error_message()[0], "tt_parse_ll failed without a message");
    } else {
        snprintf(buf, sizeof buf, "%lld", ll);
        FUZZ_CHECK(tt_parse_ll(buf, &ll2) == TT_OK && ll2 == ll, "integer %lld does not round-trip", ll);
    }

    tt_error_clear();
    st = tt_parse_double(s, &d);
    if (st != TT_OK) {
        FUZZ_CHECK(tt_error_message()[0], "tt_parse_double failed without a message");
    } else {
        FUZZ_CHECK(isfinite(d), "accepted a non-finite double from '%s'", s);
        snprintf(buf, sizeof buf, "%.17g", d);
        FUZZ_CHECK(tt_parse_double(buf, &d2) == TT_OK && d2 == d, "double %s does not round-trip", buf);
    }

    tt_error_clear();
    st = tt_parse_size(s, &u);
    if (st != TT_OK) {
        FUZZ_CHECK(tt_error_message()[0], "tt_parse_size failed without a message");
    } else {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)u);
        FUZZ_CHECK(tt_parse_size(buf, &u2) == TT_OK && u2 == u, "size %s does not round-trip (got %llu)",
                   buf, (unsigned long long)u2);
        if (fpn_all_digits(s)) {
            errno = 0;
            unsigned long long ref = strtoull(s, NULL, 10);
            FUZZ_CHECK(errno == 0 && ref == u, "size '%s' parsed as %llu, strtoull says %llu", s,
                       (unsigned long long)u, ref);
        }
    }
    free(s);
    return 0;
}
