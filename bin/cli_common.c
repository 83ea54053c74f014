/* cli_common.c - exit codes, messages, option parsing and output for the
 * topotune tools. */
#include "cli_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

static char cli_prog[64] = "topotune";

void tt_cli_init(const char *prog)
{
    const char *slash;
    if (!prog || !*prog)
        return;
    slash = strrchr(prog, '/');
    snprintf(cli_prog, sizeof cli_prog, "%s", slash ? slash + 1 : prog);
    (void)tt_log_enabled(TT_LOG_WARN, NULL); /* reads TOPOTUNE_DEBUG* now: a typo is reported at start */
}

const char *tt_cli_prog(void) { return cli_prog; }

void tt_cli_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", cli_prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int tt_cli_fail(tt_status st)
{
    const char *m = tt_error_message();
    tt_cli_error("%s", (m && *m) ? m : tt_status_name(st));
    return TT_CLI_EXIT_ERROR;
}

static char cli_last[512];

const char *tt_cli_last_bad(void) { return cli_last; }

int tt_cli_bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cli_last, sizeof cli_last, fmt, ap); /* kept: topo-exec -J records why it stopped */
    va_end(ap);
    fprintf(stderr, "%s: %s\n", cli_prog, cli_last);
    return TT_CLI_EXIT_ERROR;
}

int tt_cli_int_option(const char *name, const char *s, long long lo, long long hi, long long *out)
{
    if (tt_parse_ll(s, out) != TT_OK || *out < lo || *out > hi)
        return tt_cli_bad("%s '%s' must be an integer in %lld..%lld", name, s, lo, hi);
    return 0;
}

int tt_cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", cli_prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (try '%s --help')\n", cli_prog);
    return TT_CLI_EXIT_ERROR;
}

int tt_cli_print_version(void)
{
    printf("%s (topotune) %s\n", cli_prog, TT_VERSION_STRING);
    return TT_CLI_EXIT_OK;
}

int tt_cli_getopt(int argc, char *const argv[], const char *shortopts,
                  const struct option *longopts)
{
    char opts[128];
    int c, idx = -1;

    snprintf(opts, sizeof opts, ":%s", shortopts ? shortopts : "");
    opterr = 0;
    c = getopt_long(argc, argv, opts, longopts, &idx);
    if (c == '?') {
        const char *arg = (optind > 0 && optind <= argc) ? argv[optind - 1] : "?";
        if (optopt && (!arg || strncmp(arg, "--", 2)))
            tt_cli_usage_error("unknown option '-%c'", optopt);
        else
            tt_cli_usage_error("unknown option '%s'", arg);
        return '?';
    }
    if (c == ':') {
        const char *arg = (optind > 0 && optind <= argc) ? argv[optind - 1] : "?";
        if (arg && !strncmp(arg, "--", 2)) {
            const char *eq = strchr(arg, '=');
            tt_cli_usage_error("option '%.*s' needs a value",
                               (int)(eq ? (size_t)(eq - arg) : strlen(arg)), arg);
        } else {
            tt_cli_usage_error("option '-%c' needs a value", optopt);
        }
        return '?';
    }
    return c;
}

int tt_cli_choice(const char *option, const char *value, const char *const *choices)
{
    char list[256];
    size_t len = 0;
    int i;

    for (i = 0; choices[i]; i++)
        if (value && !strcmp(value, choices[i]))
            return i;
    list[0] = '\0';
    for (i = 0; choices[i] && len < sizeof list; i++) {
        int n = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", choices[i]);
        if (n < 0)
            break;
        len += (size_t)n;
    }
    tt_cli_usage_error("unknown %s '%s' (one of: %s)", option, value ? value : "", list);
    return -1;
}

int tt_cli_exit_for_severity(int max_severity)
{
    if (max_severity >= 2)
        return TT_CLI_EXIT_ERROR;
    if (max_severity == 1)
        return TT_CLI_EXIT_WARN;
    return TT_CLI_EXIT_OK;
}

tt_status tt_cli_write_json(const char *path, const cJSON *j)
{
    char *txt = cJSON_Print(j);
    if (!txt) return tt_error_set(TT_ERR_NOMEM, "out of memory writing JSON");
    size_t len = strlen(txt);
    txt[len] = '\n'; /* in place of the terminator: the buffer is written by length */
    tt_status st = tt_cli_write_output(path, txt, len + 1);
    free(txt);
    return st;
}

tt_status tt_cli_write_output(const char *path, const char *data, size_t len)
{
    if (!path || !strcmp(path, "-")) {
        if (len && fwrite(data, 1, len, stdout) != len)
            return tt_error_set(TT_ERR_IO, "cannot write to standard output");
        if (fflush(stdout) != 0)
            return tt_error_set(TT_ERR_IO, "cannot write to standard output");
        return TT_OK;
    }
    return tt_write_file_atomic(path, data, len);
}
