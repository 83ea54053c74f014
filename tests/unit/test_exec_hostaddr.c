/* test_exec_hostaddr.c - tt_host_address (the address tt_comm_init_mpi binds
 * when the ranks span hosts): numeric, one of this host's own addresses (or
 * 127.0.0.1 without any other), bindable, and a two-rank communicator meets
 * on it; buffer errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tt_exec.h"

static void test_numeric_and_own(void **state)
{
    (void)state;
    char a[64];
    assert_int_equal(tt_host_address(a, sizeof a), TT_OK);
    unsigned char bin[16];
    int v4 = inet_pton(AF_INET, a, bin) == 1, v6 = inet_pton(AF_INET6, a, bin) == 1;
    assert_true(v4 || v6);
    if (!strcmp(a, "127.0.0.1"))
        return; /* no other address on this host (e.g. a network namespace with lo only) */
    assert_false(!strncmp(a, "127.", 4) || !strcmp(a, "::1"));
    /* it is an address of one of our interfaces */
    struct ifaddrs *ifs = NULL, *i;
    int found = 0;
    assert_int_equal(getifaddrs(&ifs), 0);
    for (i = ifs; i; i = i->ifa_next) {
        char h[NI_MAXHOST];
        if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
            continue;
        socklen_t sl = i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
        if (getnameinfo(i->ifa_addr, sl, h, sizeof h, NULL, 0, NI_NUMERICHOST) == 0 && !strcmp(h, a))
            found = 1;
    }
    freeifaddrs(ifs);
    if (!found)
        fail_msg("tt_host_address gave %s, which no interface of this host has", a);
}

typedef struct {
    tt_unique_id id;
    int rank;
    tt_comm *c;
    tt_status st;
} peer;

static void *join(void *p)
{
    peer *x = p;
    x->st = tt_comm_init_rank(&x->c, 2, &x->id, x->rank);
    if (x->st == TT_OK) {
        double v = x->rank + 1.0;
        x->st = tt_allreduce(&v, &v, 1, TT_DOUBLE, TT_SUM, x->c);
        if (x->st == TT_OK)
            x->st = tt_comm_wait(x->c);
        if (x->st == TT_OK && v != 3.0)
            x->st = TT_ERR_INTERNAL;
        /* each rank leaves from its own thread, as separate processes would */
        tt_status d = tt_comm_destroy(x->c);
        if (x->st == TT_OK)
            x->st = d;
    }
    return NULL;
}

static void test_ranks_meet_there(void **state)
{
    (void)state;
    char a[64];
    peer p[2];
    pthread_t th[2];
    assert_int_equal(tt_host_address(a, sizeof a), TT_OK);
    assert_int_equal(tt_get_unique_id(&p[0].id, a), TT_OK);
    p[1].id = p[0].id;
    for (int r = 0; r < 2; r++) {
        p[r].rank = r;
        p[r].c = NULL;
        pthread_create(&th[r], NULL, join, &p[r]);
    }
    for (int r = 0; r < 2; r++)
        pthread_join(th[r], NULL);
    for (int r = 0; r < 2; r++) {
        if (p[r].st != TT_OK)
            fail_msg("rank %d over %s: status %d", r, a, (int)p[r].st);
    }
}

static void test_bad_buffers(void **state)
{
    (void)state;
    char a[4];
    assert_int_equal(tt_host_address(NULL, 64), TT_ERR_INVALID);
    assert_int_equal(tt_host_address(a, 1), TT_ERR_INVALID);
    tt_status st = tt_host_address(a, sizeof a); /* too small for any numeric address */
    assert_int_equal(st, TT_ERR_LIMIT);
    assert_non_null(strstr(tt_error_message(), "does not fit"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numeric_and_own),
        cmocka_unit_test(test_ranks_meet_there),
        cmocka_unit_test(test_bad_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
