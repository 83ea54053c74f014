/*
 * common_internal.h - what the files of common share that is not public API (not installed, not
 * exported: the export map is made from the public tt_*.h headers only).
 */
#ifndef TT_COMMON_INTERNAL_H
#define TT_COMMON_INTERNAL_H

#include "tt_common.h"

/* Keep `copy` (malloc'd, or NULL for unset) as the row's value for this process; the value it
 * replaces is freed (common_settings.c).  For tt_setting_set and the log's quiet mode. */
int common_setting_store(const tt_setting_info *s, char *copy);

#endif
