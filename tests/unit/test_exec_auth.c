/* test_exec_auth.c - the job secret (exec/exec_auth.c, issue #32 item 9):
 *  - tt_get_unique_id's id carries a random secret (decoded back; two ids differ), tt_unique_id_from_addr's none;
 *  - where the secret comes from: the id first, then TOPOTUNE_JOB_SECRET, then the key file;
 *  - a rank holding an id of the same address but another secret is refused alone with the reason, and the
 *    job's own rank 1 still joins (process ranks as threads of this process, TCP: tests/unit/support_rank_pair.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_internal.h"
#include "support_rank_pair.h"
#include "tt_exec.h"

static void test_id_secret(void **state)
{
    (void)state;
    tt_unique_id a, b;
    exec_boot_id da, db;
    assert_int_equal(tt_get_unique_id(&a, "127.0.0.1"), TT_OK);
    assert_int_equal(tt_get_unique_id(&b, "127.0.0.1"), TT_OK);
    assert_int_equal(exec_boot_id_decode(&a, &da), TT_OK);
    assert_int_equal(exec_boot_id_decode(&b, &db), TT_OK);
    assert_true(da.has_secret && db.has_secret);
    assert_memory_not_equal(da.secret, db.secret, sizeof da.secret);
    close(exec_boot_take_listener(da.port)); /* the listeners tt_get_unique_id bound */
    close(exec_boot_take_listener(db.port));
    tt_unique_id c;
    assert_int_equal(tt_unique_id_from_addr(&c, "127.0.0.1:29999"), TT_OK);
    exec_boot_id dc;
    assert_int_equal(exec_boot_id_decode(&c, &dc), TT_OK);
    assert_false(dc.has_secret);
    /* a malformed secret is an error, not a silent "no secret" */
    tt_unique_id bad = a;
    char *sp = strrchr(bad.bytes, ' ');
    assert_non_null(sp);
    memcpy(sp + 1, "zz", 2);
    assert_int_equal(exec_boot_id_decode(&bad, &dc), TT_ERR_INVALID);
}

static void test_key_order(void **state)
{
    (void)state;
    char dir[] = "/tmp/tt-auth-XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/key", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("file-secret\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0600), 0);
    exec_boot_id id;
    memset(&id, 0, sizeof id);
    setenv("TOPOTUNE_JOB_SECRET_FILE", path, 1);
    unsetenv("TOPOTUNE_JOB_SECRET");
    assert_int_equal(exec_auth_load(&id), TT_OK);
    assert_int_equal(id.key.len, 11); /* the trailing newline is not part of it */
    assert_memory_equal(id.key.key, "file-secret", 11);
    assert_non_null(strstr(id.key.source, path));
    setenv("TOPOTUNE_JOB_SECRET", "env-secret", 1);
    assert_int_equal(exec_auth_load(&id), TT_OK);
    assert_string_equal(id.key.source, "TOPOTUNE_JOB_SECRET");
    assert_memory_equal(id.key.key, "env-secret", 10);
    id.has_secret = 1;
    memset(id.secret, 7, sizeof id.secret);
    assert_int_equal(exec_auth_load(&id), TT_OK);
    assert_int_equal(id.key.len, EXEC_ID_SECRET_LEN);
    assert_int_equal(id.key.key[0], 7);
    /* a key of any length gives the MACs of HMAC with that key, and a different key different MACs */
    unsigned char m1[32], m2[32], msg[200] = {1};
    exec_auth_mac(&id.key, "hello", msg, sizeof msg, NULL, 0, NULL, 0, m1);
    assert_true(exec_auth_ok(&id.key, "hello", msg, sizeof msg, NULL, 0, NULL, 0, m1));
    assert_false(exec_auth_ok(&id.key, "reply", msg, sizeof msg, NULL, 0, NULL, 0, m1)); /* the kind counts */
    for (size_t i = 0; i < sizeof msg; i += 13) { /* every byte counts */
        msg[i] ^= 1;
        assert_false(exec_auth_ok(&id.key, "hello", msg, sizeof msg, NULL, 0, NULL, 0, m1));
        msg[i] ^= 1;
    }
    id.key.key[0] ^= 1;
    exec_auth_mac(&id.key, "hello", msg, sizeof msg, NULL, 0, NULL, 0, m2);
    assert_memory_not_equal(m1, m2, sizeof m1);
    exec_auth_forget(&id);
    assert_int_equal(id.key.len, 0);
    unsetenv("TOPOTUNE_JOB_SECRET");
    unsetenv("TOPOTUNE_JOB_SECRET_FILE");
    unlink(path);
    rmdir(dir);
}

static void test_other_secret_refused(void **state)
{
    (void)state;
    setenv("TOPOTUNE_TRANSPORT", "tcp", 1);
    setenv("TOPOTUNE_TIMEOUT_MS", "5000", 1);
    rp_rank job[2] = {{.rank = 0}, {.rank = 1}}, stray = {.rank = 1};
    assert_int_equal(tt_get_unique_id(&job[0].id, "127.0.0.1"), TT_OK);
    job[1].id = job[0].id;
    /* the same address and nonce, another secret: the last hex digit changed */
    stray.id = job[0].id;
    char *last = stray.id.bytes + strlen(stray.id.bytes) - 1;
    *last = *last == '0' ? '1' : '0';
    pthread_t t0, ts, t1;
    pthread_create(&t0, NULL, rp_init_rank, &job[0]);
    pthread_create(&ts, NULL, rp_init_rank, &stray);
    pthread_join(ts, NULL);
    assert_int_not_equal(stray.st, TT_OK);
    if (!strstr(stray.msg, "proves a different job secret"))
        fail_msg("the stray rank says: %s", stray.msg);
    pthread_create(&t1, NULL, rp_init_rank, &job[1]);
    pthread_join(t0, NULL);
    pthread_join(t1, NULL);
    if (job[0].st != TT_OK || job[1].st != TT_OK)
        fail_msg("the job's ranks: '%s' | '%s'", job[0].msg, job[1].msg);
    rp_destroy_pair(job);
    unsetenv("TOPOTUNE_TRANSPORT");
    unsetenv("TOPOTUNE_TIMEOUT_MS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_id_secret),
        cmocka_unit_test(test_key_order),
        cmocka_unit_test(test_other_secret_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
