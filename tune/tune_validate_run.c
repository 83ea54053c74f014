/*
 * tune_validate_run.c - the loop of topo-exec --validate over a planned sweep (tune_validate.c
 * planned it): per size, the candidates measured by the caller (tune does not see the executor:
 * the measurement is a callback) in interleaved rounds, each keeping its fastest time; the
 * verdict (tune_verdict.c); and the exit code of the run.  tune_validate_report.c writes it out.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tune_internal.h"

void tt_validate_start_time(char *b, size_t n)
{
    time_t t = time(NULL);
    struct tm tmv;
    strftime(b, n, "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tmv));
}

static void clear_results(tt_validate_cand *c)
{
    for (int p = 0; p < 2; p++) {
        c->t[p] = c->algbw[p] = c->busbw[p] = 0;
        c->wrong[p] = -1;
    }
}

/* Fold one round into the candidate: the fastest time per placement counts (noise only ever adds
 * time), with the bandwidths at that time; wrong results are never hidden (the most of any round). */
static void keep_best(tt_validate_cand *dst, const tt_validate_cand *r, int first)
{
    for (int p = 0; p < 2; p++) {
        if (first || (r->t[p] > 0 && (dst->t[p] <= 0 || r->t[p] < dst->t[p]))) {
            dst->t[p] = r->t[p];
            dst->algbw[p] = r->algbw[p];
            dst->busbw[p] = r->busbw[p];
        }
        if (first || r->wrong[p] > dst->wrong[p]) dst->wrong[p] = r->wrong[p];
    }
}

int tt_validate_measure(tt_validate_run *r, const tt_validate_measurer *m)
{
    for (int i = 0; i < r->nsz; i++)
        for (int k = 0; k < r->sz[i].nc; k++) clear_results(&r->sz[i].c[k]);
    for (int i = 0; i < r->nsz; i++) {
        tt_validate_size *z = &r->sz[i];
        for (int round = 0; round < r->rounds && z->nc > 0; round++) {
            tt_validate_cand c[TT_VALIDATE_MAXC];
            memcpy(c, z->c, sizeof c);
            for (int k = 0; k < z->nc; k++) clear_results(&c[k]);
            tt_status st = m->measure(m->user, r, i, round, c);
            for (int k = 0; k < z->nc; k++) keep_best(&z->c[k], &c[k], round == 0);
            if (st != TT_OK) { /* what was measured before the failure stays */
                r->failed = 1;
                snprintf(r->err, sizeof r->err, "%s", tt_error_message());
                return 1;
            }
        }
        tt_validate_judge_size(z, r->margin);
        if (m->judged) m->judged(m->user, r, i);
    }
    return 0;
}

int tt_validate_oob(const tt_validate_run *r)
{
    int oob = 0;
    for (int i = 0; i < r->nsz; i++)
        for (int k = 0; k < r->sz[i].nc; k++)
            for (int p = 0; p < 2; p++) oob += r->sz[i].c[k].wrong[p] > 0;
    return oob;
}

int tt_validate_exit_code(const tt_validate_run *r, int rc)
{
    int nwrong = 0;
    for (int i = 0; i < r->nsz; i++) nwrong += r->sz[i].verdict == TT_VERDICT_WRONG;
    if (r->failed && !rc) rc = 1;
    if (!rc && tt_validate_oob(r)) rc = TT_VALIDATE_EXIT_WRONG_RESULTS;
    if (!rc && nwrong) rc = TT_VALIDATE_EXIT_TABLE_WRONG;
    return rc;
}
