/* common_log.c - leveled logging controlled by TOPOTUNE_DEBUG*. */
#include "common_internal.h"
#include "tt_common.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static pthread_once_t tt_log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t tt_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static tt_log_level tt_log_level_cur = TT_LOG_WARN;
static char tt_log_subsys[256];
static FILE *tt_log_stream;

static void tt_log_read_env(void)
{
    const char *lvl = tt_setting("TOPOTUNE_DEBUG");
    const char *sub = tt_setting("TOPOTUNE_DEBUG_SUBSYS");
    const char *file = tt_setting("TOPOTUNE_DEBUG_FILE");

    tt_log_level_cur = TT_LOG_WARN;
    if (lvl) {
        if (!strcasecmp(lvl, "NONE") || !strcmp(lvl, "0"))
            tt_log_level_cur = TT_LOG_NONE;
        else if (!strcasecmp(lvl, "INFO"))
            tt_log_level_cur = TT_LOG_INFO;
        else if (!strcasecmp(lvl, "TRACE") || !strcasecmp(lvl, "DEBUG"))
            tt_log_level_cur = TT_LOG_TRACE;
        else if (*lvl && strcasecmp(lvl, "WARN"))
            /* a typo must not silently leave the user without the output asked for */
            fprintf(stderr, "topotune WARN log: TOPOTUNE_DEBUG='%.60s' is not a level (NONE or 0, WARN, INFO, "
                            "TRACE or DEBUG); using WARN\n", lvl);
    }
    tt_log_subsys[0] = '\0';
    if (sub)
        snprintf(tt_log_subsys, sizeof tt_log_subsys, ",%s,", sub);
    if (tt_log_stream && tt_log_stream != stderr)
        fclose(tt_log_stream);
    tt_log_stream = stderr;
    if (file && *file) {
        FILE *f = fopen(file, "a");
        if (f)
            tt_log_stream = f;
        else
            fprintf(stderr, "topotune WARN log: TOPOTUNE_DEBUG_FILE='%.200s' cannot be opened (%s); logging to "
                            "standard error\n", file, strerror(errno));
    }
}

void tt_log_quiet(void)
{
    char *none;
    if (tt_setting("TOPOTUNE_DEBUG") || !(none = strdup("NONE")))
        return;
    common_setting_store(tt_setting_lookup("TOPOTUNE_DEBUG"), none);
    tt_log_reinit();
}

void tt_log_reinit(void)
{
    pthread_once(&tt_log_once, tt_log_read_env);
    pthread_mutex_lock(&tt_log_mutex);
    tt_log_read_env();
    pthread_mutex_unlock(&tt_log_mutex);
}

int tt_log_enabled(tt_log_level level, const char *subsys)
{
    pthread_once(&tt_log_once, tt_log_read_env);
    if (level > tt_log_level_cur || level == TT_LOG_NONE)
        return 0;
    if (tt_log_subsys[0] && subsys) {
        char key[64];
        snprintf(key, sizeof key, ",%s,", subsys);
        if (!strstr(tt_log_subsys, key))
            return 0;
    }
    return 1;
}

void tt_log(tt_log_level level, const char *subsys, const char *fmt, ...)
{
    static const char *names[] = {"NONE", "WARN", "INFO", "TRACE"};
    char msg[2048];
    va_list ap;

    if (!tt_log_enabled(level, subsys))
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&tt_log_mutex);
    fprintf(tt_log_stream, "topotune %s %s: %s\n", names[level], subsys ? subsys : "-", msg);
    fflush(tt_log_stream);
    pthread_mutex_unlock(&tt_log_mutex);
}
