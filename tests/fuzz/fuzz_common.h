/* fuzz_common.h - shared by the fuzz targets in tests/fuzz/.
 *
 * Each target defines LLVMFuzzerTestOneInput().  The same source is built
 * three ways: with libFuzzer (scripts/dev/fuzz.sh, clang), with the standalone
 * replay main (replay_main.c), and inside the cmocka replay test
 * (tests/unit/test_fuzz_replay.c, which renames the entry point of each
 * target with a #define before including it).  A broken invariant prints
 * what broke and aborts, which every driver reports as a crash.
 */
#ifndef TT_FUZZ_COMMON_H
#define TT_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                       \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "fuzz invariant broken at %s:%d: %s: ", __FILE__,       \
                    __LINE__, #cond);                                               \
            fprintf(stderr, __VA_ARGS__);                                           \
            fputc('\n', stderr);                                                    \
            abort();                                                                \
        }                                                                           \
    } while (0)

/* NUL-terminated copy of the fuzz input (the library's text parsers take C strings). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
