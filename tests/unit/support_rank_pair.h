/* support_rank_pair.h - a job of two process ranks run as two threads of one test program (TCP rendezvous on
 * 127.0.0.1; the transport is TOPOTUNE_TRANSPORT's), each rank's status and error message kept apart. */
#ifndef SUPPORT_RANK_PAIR_H
#define SUPPORT_RANK_PAIR_H
#include "tt_exec.h"

typedef struct {
    tt_unique_id id; /* the id this rank joins with (the job's, or a forged one) */
    int rank;
    tt_comm *c;      /* NULL until its init succeeded */
    tt_status st;    /* of its last init or destroy */
    char msg[1024];  /* tt_error_message() of a failed init; "" after a good one */
} rp_rank;

/* pthread start routines: tt_comm_init_rank(&c, 2, &id, rank), and tt_comm_destroy(c) */
void *rp_init_rank(void *rank);
void *rp_destroy_rank(void *rank);
/* destroys side by side the ranks of a[0..1] whose init succeeded (the destroy is a barrier of both) */
void rp_destroy_pair(rp_rank a[2]);
/* a fresh id for 127.0.0.1, both ranks' init side by side, then rp_destroy_pair; 1 when both joined
 * (a[r].msg says why not) */
int rp_run_pair(rp_rank a[2]);
#endif
