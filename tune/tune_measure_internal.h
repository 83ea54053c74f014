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
tt_status tm_parse_text(const char *text, size_t len, const char *name, const tt_measure_opts *o,
                        tt_measure_set *set);
tt_status tm_parse_json(const char *text, size_t len, const char *name, const tt_measure_opts *o,
                        tt_measure_set *set);

#endif
