/* common_error.c - thread-local error messages and status names. */
#include "tt_common.h"

#include <stdio.h>
#include <string.h>

#define TT_ERRMSG_MAX 1024

static __thread char tt_errmsg[TT_ERRMSG_MAX];

tt_status tt_error_set(tt_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tt_errmsg, sizeof tt_errmsg, fmt, ap);
    va_end(ap);
    tt_log(TT_LOG_INFO, "error", "%s: %s", tt_status_name(code), tt_errmsg);
    return code;
}

tt_status tt_error_prefix(tt_status code, const char *fmt, ...)
{
    char prefix[TT_ERRMSG_MAX];
    char old[TT_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, tt_errmsg, sizeof old);
    /* Build "prefix: old" by hand; a message longer than the buffer is cut. */
    {
        size_t n = strnlen(prefix, sizeof tt_errmsg - 1);
        memcpy(tt_errmsg, prefix, n);
        if (old[0] && n + 2 < sizeof tt_errmsg) {
            size_t room = sizeof tt_errmsg - 1 - (n + 2);
            size_t m = strnlen(old, room);
            tt_errmsg[n] = ':';
            tt_errmsg[n + 1] = ' ';
            memcpy(tt_errmsg + n + 2, old, m);
            n += 2 + m;
        }
        tt_errmsg[n] = '\0';
    }
    return code;
}

const char *tt_error_message(void) { return tt_errmsg; }

void tt_error_clear(void) { tt_errmsg[0] = '\0'; }

const char *tt_status_name(tt_status code)
{
    switch (code) {
    case TT_OK: return "ok";
    case TT_ERR_INVALID: return "invalid input";
    case TT_ERR_PARSE: return "parse error";
    case TT_ERR_IO: return "I/O error";
    case TT_ERR_NOMEM: return "out of memory";
    case TT_ERR_LIMIT: return "limit exceeded";
    case TT_ERR_UNSUPPORTED: return "unsupported";
    case TT_ERR_NOT_FOUND: return "not found";
    case TT_ERR_SYSTEM: return "system error";
    case TT_ERR_TIMEOUT: return "timeout";
    case TT_ERR_REMOTE: return "remote failure";
    case TT_ERR_MISMATCH: return "mismatch";
    case TT_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}
