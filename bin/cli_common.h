/*
 * cli_common.h - helpers shared by the topotune command-line tools
 * (topo-dump, topo-tune, topo-exec): exit codes, one-line error messages,
 * option parsing with one-line usage errors, and atomic output.
 *
 * Messages go to stderr as "<prog>: <message>", one line each.
 */
#ifndef TT_CLI_COMMON_H
#define TT_CLI_COMMON_H

#include <getopt.h>
#include <stddef.h>

#include "tt_common.h"

/* Exit codes of every topotune tool. */
#define TT_CLI_EXIT_OK 0    /* success; no finding above info */
#define TT_CLI_EXIT_WARN 1  /* success, but warnings were found */
#define TT_CLI_EXIT_ERROR 2 /* errors found, bad input, failed I/O or usage error */

/* Remember the program name used in messages (basename of argv[0] or a
 * fixed name). */
void tt_cli_init(const char *prog);
const char *tt_cli_prog(void);

/* "<prog>: <message>" on stderr. */
void tt_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<prog>: <tt_error_message()>" (or the status name when empty); returns
 * TT_CLI_EXIT_ERROR. */
int tt_cli_fail(tt_status st);
/* "<prog>: <message>" on stderr; returns TT_CLI_EXIT_ERROR (for option errors). */
int tt_cli_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The last message of tt_cli_bad ("" before any). */
const char *tt_cli_last_bad(void);
/* Integer option value in lo..hi: 0, or a message naming the option and TT_CLI_EXIT_ERROR. */
int tt_cli_int_option(const char *name, const char *s, long long lo, long long hi, long long *out);
/* "<prog>: <message> (try '<prog> --help')"; returns TT_CLI_EXIT_ERROR. */
int tt_cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<prog> (topotune) <version>" on stdout; returns TT_CLI_EXIT_OK. */
int tt_cli_print_version(void);

/* getopt_long without getopt's own messages: returns the option like
 * getopt_long, -1 at the end, or '?' after printing a one-line usage error
 * for an unknown option or a missing value (the caller exits with
 * TT_CLI_EXIT_ERROR).  `shortopts` must not start with ':' (added here). */
int tt_cli_getopt(int argc, char *const argv[], const char *shortopts,
                  const struct option *longopts);

/* Index of `value` in the NULL-terminated `choices`, or -1 after a usage
 * error naming the option and the valid choices. */
int tt_cli_choice(const char *option, const char *value, const char *const *choices);

/* Exit code for the highest finding severity (-1 none, 0 info, 1 warning,
 * 2 error). */
int tt_cli_exit_for_severity(int max_severity);

/* Write `len` bytes to `path` atomically, or to stdout when path is NULL or
 * "-".  On failure an existing file is left untouched. */
tt_status tt_cli_write_output(const char *path, const char *data, size_t len);
/* The cJSON document `j`, pretty-printed with a final newline, written like tt_cli_write_output. */
struct cJSON;
tt_status tt_cli_write_json(const char *path, const struct cJSON *j);

#endif
