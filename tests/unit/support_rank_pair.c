/* support_rank_pair.c - two process ranks of one job as threads of the test program (support_rank_pair.h). */
#include "support_rank_pair.h"

#include <pthread.h>
#include <stdio.h>

void *rp_init_rank(void *rank)
{
    rp_rank *a = rank;
    a->c = NULL;
    a->st = tt_comm_init_rank(&a->c, 2, &a->id, a->rank);
    snprintf(a->msg, sizeof a->msg, "%s", a->st == TT_OK ? "" : tt_error_message());
    return NULL;
}

void *rp_destroy_rank(void *rank)
{
    rp_rank *a = rank;
    a->st = tt_comm_destroy(a->c);
    a->c = NULL;
    return NULL;
}

void rp_destroy_pair(rp_rank a[2])
{
    pthread_t t[2];
    int started[2] = {0, 0};
    for (int r = 0; r < 2; r++)
        if (a[r].c)
            started[r] = pthread_create(&t[r], NULL, rp_destroy_rank, &a[r]) == 0;
    for (int r = 0; r < 2; r++)
        if (started[r])
            pthread_join(t[r], NULL);
}

int rp_run_pair(rp_rank a[2])
{
    pthread_t t[2];
    int started[2] = {0, 0};
    tt_status st = tt_get_unique_id(&a[0].id, "127.0.0.1");
    for (int r = 0; r < 2; r++) {
        a[r].rank = r;
        a[r].c = NULL;
        a[r].st = st;
        snprintf(a[r].msg, sizeof a[r].msg, "%s", st == TT_OK ? "" : tt_error_message());
    }
    if (st != TT_OK)
        return 0;
    a[1].id = a[0].id;
    for (int r = 0; r < 2; r++)
        started[r] = pthread_create(&t[r], NULL, rp_init_rank, &a[r]) == 0;
    for (int r = 0; r < 2; r++)
        if (started[r])
            pthread_join(t[r], NULL);
    int ok = started[0] && started[1] && a[0].st == TT_OK && a[1].st == TT_OK;
    rp_destroy_pair(a);
    return ok;
}
