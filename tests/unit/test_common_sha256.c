/* test_common_sha256.c - SHA-256 and HMAC-SHA256 (common/common_sha256.c) against published vectors:
 * the FIPS 180-4 examples (NIST "SHA256.pdf": "abc", the 448-bit message, one million 'a') and the
 * RFC 4231 HMAC-SHA256 test cases 1-7 (case 5 compares the first 128 bits, as the RFC does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_common.h"

static void hex(const unsigned char *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

static size_t unhex(const char *s, unsigned char *out)
{
    size_t n = strlen(s) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
    return n;
}

static void expect_sha(const void *msg, size_t n, const char *want)
{
    unsigned char d[TT_SHA256_LEN];
    char got[2 * TT_SHA256_LEN + 1];
    tt_sha256(msg, n, d);
    hex(d, sizeof d, got);
    assert_string_equal(got, want);
}

static void test_sha256_fips(void **state)
{
    (void)state;
    expect_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
               "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* one million 'a', fed in uneven pieces: the block buffering of tt_sha256_update */
    tt_sha256_ctx c;
    tt_sha256_init(&c);
    char a[997];
    memset(a, 'a', sizeof a);
    size_t left = 1000000;
    for (size_t piece = 1; left; piece = piece % 997 + 1) {
        size_t k = piece < left ? piece : left;
        tt_sha256_update(&c, a, k);
        left -= k;
    }
    unsigned char d[TT_SHA256_LEN];
    char got[65];
    tt_sha256_final(&c, d);
    hex(d, sizeof d, got);
    assert_string_equal(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* every length around the padding boundaries (55, 56, 63, 64 bytes): one call equals byte by byte */
    unsigned char m[130];
    for (size_t i = 0; i < sizeof m; i++)
        m[i] = (unsigned char)(i * 7 + 1);
    for (size_t n = 0; n <= sizeof m; n++) {
        unsigned char d1[TT_SHA256_LEN], d2[TT_SHA256_LEN];
        tt_sha256(m, n, d1);
        tt_sha256_init(&c);
        for (size_t i = 0; i < n; i++)
            tt_sha256_update(&c, m + i, 1);
        tt_sha256_final(&c, d2);
        assert_memory_equal(d1, d2, sizeof d1);
    }
}

/* RFC 4231 cases 6 and 7: a key of 131 bytes 0xaa (longer than the block: hashed first) */
#define AA10 "aaaaaaaaaaaaaaaaaaaa"
#define KEY_131_AA AA10 AA10 AA10 AA10 AA10 AA10 AA10 AA10 AA10 AA10 AA10 AA10 AA10 "aa"

typedef struct {
    const char *key, *data, *mac; /* hex */
    size_t maclen;
} rfc4231_case;

static void test_hmac_rfc4231(void **state)
{
    (void)state;
    static const rfc4231_case cases[] = {
        {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", 32},
        {"4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", 32},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe", 32},
        {"0102030405060708090a0b0c0d0e0f10111213141516171819",
         "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b", 32},
        {"0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "546573742057697468205472756e636174696f6e",
         "a3b6167473100ee06e0c796c2955552b", 16},
        {KEY_131_AA,
         "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", 32},
        {KEY_131_AA,
         "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b657920616e6420"
         "61206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565647320746f20626520686173"
         "686564206265666f7265206265696e6720757365642062792074686520484d414320616c676f726974686d2e",
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2", 32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned char key[256], data[256], mac[TT_SHA256_LEN];
        char got[65];
        size_t kl = unhex(cases[i].key, key), dl = unhex(cases[i].data, data);
        tt_hmac_sha256(key, kl, data, dl, mac);
        hex(mac, cases[i].maclen, got);
        if (strcmp(got, cases[i].mac))
            fail_msg("RFC 4231 test case %zu: got %s, want %s", i + 1, got, cases[i].mac);
        /* incremental: the same MAC from pieces */
        tt_hmac_sha256_ctx c;
        unsigned char mac2[TT_SHA256_LEN];
        tt_hmac_sha256_init(&c, key, kl);
        tt_hmac_sha256_update(&c, data, dl / 3);
        tt_hmac_sha256_update(&c, data + dl / 3, dl - dl / 3);
        tt_hmac_sha256_final(&c, mac2);
        assert_memory_equal(mac, mac2, sizeof mac);
    }
}

static void test_equal_ct(void **state)
{
    (void)state;
    unsigned char a[32] = {1, 2, 3}, b[32] = {1, 2, 3};
    assert_true(tt_mem_equal_ct(a, b, sizeof a));
    b[31] ^= 0x80;
    assert_false(tt_mem_equal_ct(a, b, sizeof a));
    assert_true(tt_mem_equal_ct(a, b, 0));
    tt_memzero(a, sizeof a);
    for (size_t i = 0; i < sizeof a; i++)
        assert_int_equal(a[i], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_fips),
        cmocka_unit_test(test_hmac_rfc4231),
        cmocka_unit_test(test_equal_ct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
