/*
 * tune_measure_internal.h - private helpers shared by the measurement readers.
 */
#ifndef TUNE_MEASURE_INTERNAL_H
#define TUNE_MEASURE_INTERNAL_H

#include <strings.h>

#include "tt_tune.h"

tt_status tm_push(tt_measure_set *set, const tt_measurement *m);
void tm_finish_times(tt_measurement *m);
tt_status tm_coll_from_prog(const char *prog, tt_coll *out);
int tm_type_size(const char *t);

/* The readers append rows to set; *zero_rows counts the size-0 rows they skipped (nothing can be
 * timed there), so that a file of only those is refused as such. */
tt_status tm_parse_text(const char *text, size_t len, const char *name, const tt_measure_opts *o,
                        tt_measure_set *set, int *zero_rows);
tt_status tm_parse_json(const char *text, size_t len, const char *name, const tt_measure_opts *o,
                        tt_measure_set *set, int *zero_rows);
/* "# topotune published result, version 1" (tests/fixtures/published/README.md) */
#define TM_FACTS_MAGIC "# topotune published result"
tt_status tm_parse_facts(const char *text, size_t len, const char *name, const tt_measure_opts *o,
                         tt_measure_set *set, int *zero_rows);

/* ---- launcher prefixes (tune_measure_prefix.c) ----
 * Open MPI --tag-output "[1,0]<stdout>:" (Open MPI 5 / PRRTE: "[1,0]<stdout>: "), srun / mpirun -l
 * "0: ", Intel MPI / MPICH -prepend-rank "[0] ", pdsh "host: ". */
enum { TM_PFX_NONE, TM_PFX_OMPI, TM_PFX_LABEL, TM_PFX_BRACKET, TM_PFX_HOST };
typedef struct {
    int kind;        /* TM_PFX_* */
    char group[24];  /* Open MPI job id ("" otherwise): ranks of one job share it */
    char member[64]; /* the rank ("0") or host name */
    long num;        /* the rank as a number; -1 for hosts */
} tm_prefix;
/* The line after its launcher prefix (s when it has none; p->kind TM_PFX_NONE).  A host prefix is
 * only a candidate: any "word: " looks like one, the caller decides. */
const char *tm_prefix_strip(const char *s, tm_prefix *p);

/* ---- result-row columns (tune_measure_cols.c) ----
 * Where a row's figures are: from the column header of every published nccl-tests form (and
 * topo-exec's), or inferred from the row itself when there is no header. */
typedef struct {
    int size, count, type, root;                  /* token index; -1 absent */
    int time[2], algbw[2], busbw[2], err[2];      /* per placement (out-of-place, in-place); -1 absent */
    int nplace;                                   /* placements of a full row (1 or 2) */
    int place0;                                   /* which placement the first one is (0 oop, 1 ip) */
    int last;                                     /* tokens a full row needs */
    int tend[2];                                  /* header: character column where each "time" ends */
    double unit_us;                               /* us per printed time unit (1000: the 2017 ms form) */
    int from_header;                              /* 0: inferred from the row */
    int ncols;                                    /* words of the header / columns of the inferred row */
    char form[96];                                /* the layout in words, for messages */
} tm_cols;
/* hdr: the comment line from its '#'.  *is_header 0 when the line is no column header (st TT_OK). */
tt_status tm_cols_header(const char *hdr, const char *name, int line, tm_cols *c, int *is_header);
/* tok[0..nt) the tokens of a row, tend[i] the character column where tok[i] ends. */
tt_status tm_cols_infer(char *const *tok, int nt, const char *name, int line, tm_cols *c);
/* Read one row into m (bytes, times, busbw, algo/proto/channels from a topo-exec plan column);
 * *zero = 1 for a size-0 row (m not filled, not an error); *hint = size / (count x type size) or 0. */
tt_status tm_cols_row(const tm_cols *c, char *const *tok, const int *tend, int nt, const char *name, int line,
                      tt_measurement *m, int *zero, int *hint);

#endif
