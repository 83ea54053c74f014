/*
 * tuner_log.c - the tuner plugin's logging: messages go to NCCL's logger under the TUNING
 * subsystem; a warning is given once per process for each distinct text (a process with many
 * communicators of one shape gets one warning, not one per communicator).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "tuner_plugin.h"

#define TP_ONCE_MAX 256

static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t once_seen[TP_ONCE_MAX];
static int once_n;

static void emit(tp_logger f, tp_level level, const char *msg)
{
    if (f) f(level, TP_SUBSYS_TUNING, __FILE__, __LINE__, "%s", msg);
}

void tp_log(tp_logger f, tp_level level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    emit(f, level, msg);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

void tp_warn_once(tp_logger f, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    uint64_t h = fnv1a(msg);
    int seen = 0;
    pthread_mutex_lock(&once_lock);
    for (int i = 0; i < once_n && !seen; i++) seen = once_seen[i] == h;
    if (!seen && once_n < TP_ONCE_MAX) once_seen[once_n++] = h; /* full: later texts warn every time */
    pthread_mutex_unlock(&once_lock);
    emit(f, seen ? TP_LOG_INFO : TP_LOG_WARN, msg);
}
