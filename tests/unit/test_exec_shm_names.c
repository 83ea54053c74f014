/* test_exec_shm_names.c - the shared-memory names a rank accepts from its peer (exec/exec_transport_shm.c,
 * issue #32 item 10): two process ranks (threads of this process, TCP rendezvous, shared memory) whose lower
 * rank offers (tests/unit/support_rank_pair.c), through the test hook exec_test_hook.shm_offer, what a hostile peer would:
 *  - another file's name ("/tt-victim-PID"): refused, the file neither opened nor removed;
 *  - a name of the right form for another nonce, pid or pair: refused;
 *  - the right name, but a segment of another user (root only: chown to nobody) or of another size: refused.
 * Each time both ranks fail with the reason, and no name of this process is left in /dev/shm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_internal.h"
#include "exec_test_hooks.h"
#include "support_rank_pair.h"
#include "tt_exec.h"

/* names in /dev/shm made by this process ("tt-<nonce>-<our pid>-...") */
static int our_names(void)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    char mine[32];
    int n = 0;
    snprintf(mine, sizeof mine, "-%d-", (int)getpid());
    while (d && (e = readdir(d)))
        n += !strncmp(e->d_name, "tt-", 3) && strstr(e->d_name, mine) != NULL;
    if (d)
        closedir(d);
    return n;
}

static char victim[64];
static enum { OFFER_VICTIM, OFFER_OTHER_NONCE, OFFER_OTHER_PAIR, OFFER_OTHER_PID, OFFER_CHOWN,
              OFFER_RESIZE } mode;

static void hostile_offer(char *name, size_t n, size_t len)
{
    unsigned long long nonce;
    int pid, lo, hi;
    assert_int_equal(sscanf(name, "/tt-%16llx-%d-%d-%d", &nonce, &pid, &lo, &hi), 4);
    if (mode == OFFER_VICTIM) {
        snprintf(name, n, "%s", victim);
    } else if (mode == OFFER_OTHER_NONCE) {
        snprintf(name, n, "/tt-%016llx-%d-%d-%d", nonce ^ 1, pid, lo, hi);
    } else if (mode == OFFER_OTHER_PAIR) {
        snprintf(name, n, "/tt-%016llx-%d-%d-%d", nonce, pid, lo, hi + 1);
    } else if (mode == OFFER_OTHER_PID) {
        snprintf(name, n, "/tt-%016llx-%d-%d-%d", nonce, pid + 1, lo, hi);
    } else {
        int fd = shm_open(name, O_RDWR, 0);
        assert_true(fd >= 0);
        if (mode == OFFER_CHOWN)
            assert_int_equal(fchown(fd, 65534, 65534), 0);
        else
            assert_int_equal(ftruncate(fd, (off_t)len + 4096), 0);
        close(fd);
    }
}

static void expect_refused(const char *what, const char *want)
{
    rp_rank a[2];
    exec_test_hook.shm_offer = hostile_offer;
    int ok = rp_run_pair(a);
    exec_test_hook.shm_offer = NULL;
    if (ok)
        fail_msg("%s: both ranks joined", what);
    char path[96];
    struct stat sb;
    snprintf(path, sizeof path, "/dev/shm%s", victim);
    if (mode == OFFER_VICTIM && stat(path, &sb) != 0)
        fail_msg("%s: %s was removed by the rank it was offered to (%s)", what, path, a[1].msg);
    if (!strstr(a[1].msg, want))
        fail_msg("%s: rank 1 says '%s', wanted '%s'", what, a[1].msg, want);
    if (a[0].st == TT_OK)
        fail_msg("%s: rank 0 passed", what);
    int left = our_names();
    if (left)
        fail_msg("%s: %d name(s) of this process left in /dev/shm", what, left);
}

static void test_hostile_names(void **state)
{
    (void)state;
    setenv("TOPOTUNE_TRANSPORT", "shm", 1);
    setenv("TOPOTUNE_TIMEOUT_MS", "5000", 1);
    /* another file in /dev/shm (another user's, in the attack): neither opened nor removed */
    snprintf(victim, sizeof victim, "/tt-victim-%d", (int)getpid());
    int fd = shm_open(victim, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 4096), 0);
    close(fd);
    mode = OFFER_VICTIM;
    expect_refused("a victim's name", "which is not this job's name for the pair");
    shm_unlink(victim);
    mode = OFFER_OTHER_NONCE;
    expect_refused("another job's nonce", "which is not this job's name for the pair");
    mode = OFFER_OTHER_PAIR;
    expect_refused("another pair", "which is not this job's name for the pair");
    mode = OFFER_OTHER_PID;
    expect_refused("another creator pid", "which is not this job's name for the pair");
    mode = OFFER_RESIZE;
    expect_refused("a segment of another size", "has the wrong size");
    /* and without a hook, the pair still joins and leaves no name */
    rp_rank a[2];
    if (!rp_run_pair(a))
        fail_msg("plain pair: %s | %s", a[0].msg, a[1].msg);
    assert_int_equal(our_names(), 0);
    unsetenv("TOPOTUNE_TRANSPORT");
    unsetenv("TOPOTUNE_TIMEOUT_MS");
}

static void test_other_owner(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* giving a segment to another user needs root */
    setenv("TOPOTUNE_TRANSPORT", "shm", 1);
    setenv("TOPOTUNE_TIMEOUT_MS", "5000", 1);
    mode = OFFER_CHOWN;
    expect_refused("a segment of another user", "belongs to another user");
    unsetenv("TOPOTUNE_TRANSPORT");
    unsetenv("TOPOTUNE_TIMEOUT_MS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_other_owner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
