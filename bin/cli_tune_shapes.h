/* cli_tune_shapes.h - topo-tune --shapes: one table per communicator shape in one file. */
#ifndef CLI_TUNE_SHAPES_H
#define CLI_TUNE_SHAPES_H

#include "cli_tune_hosts.h"

/* Parse "2x1,4x1,8x1,16x2" (ranks x nodes); a usage error is printed and -1 returned. */
int tt_cli_parse_shapes(const char *s, tt_tune_shape **out, int *n);
/* Build the set on (topo, cl), print each shape's sanity warnings (a->strict: exit 1, nothing
 * written), write the set as a->fmt (0 table, 1 json, 2 nccl-csv). */
int tt_cli_tune_shapes(const tt_topo *topo, const tt_cluster *cl, const tt_cli_tune_args *a, const tt_tune_shape *shapes,
                       int n);

#endif
