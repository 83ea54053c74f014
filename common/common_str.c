/* common_str.c - string buffer, strict number parsing, whole-file I/O. */
#include "tt_common.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void tt_strbuf_init(tt_strbuf *sb) { memset(sb, 0, sizeof *sb); }

void tt_strbuf_free(tt_strbuf *sb)
{
    free(sb->data);
    memset(sb, 0, sizeof *sb);
}

static int tt_strbuf_reserve(tt_strbuf *sb, size_t extra)
{
    size_t need, ncap;
    char *p;
    if (sb->failed)
        return -1;
    need = sb->len + extra + 1;
    if (need <= sb->cap)
        return 0;
    ncap = sb->cap ? sb->cap : 256;
    while (ncap < need)
        ncap *= 2;
    p = realloc(sb->data, ncap);
    if (!p) {
        sb->failed = 1;
        return -1;
    }
    sb->data = p;
    sb->cap = ncap;
    return 0;
}

void tt_strbuf_appendn(tt_strbuf *sb, const char *s, size_t n)
{
    if (tt_strbuf_reserve(sb, n))
        return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void tt_strbuf_append(tt_strbuf *sb, const char *s) { tt_strbuf_appendn(sb, s, strlen(s)); }

void tt_strbuf_printf(tt_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    int n;
    char small[256];

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        tt_strbuf_appendn(sb, small, (size_t)n);
        return;
    }
    if (tt_strbuf_reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

/* cJSON_Print indents with tabs and writes "key":\tvalue; make it 2 spaces and
 * "key": value.  Raw tabs only occur as layout (strings escape them). */
void tt_strbuf_append_json(tt_strbuf *sb, const char *text)
{
    int bol = 1;
    for (const char *p = text; *p; p++) {
        if (*p == '\t') {
            tt_strbuf_append(sb, bol ? "  " : " ");
            continue;
        }
        bol = *p == '\n';
        tt_strbuf_appendn(sb, p, 1);
    }
    tt_strbuf_append(sb, "\n");
}

tt_status tt_strbuf_status(const tt_strbuf *sb)
{
    if (sb->failed)
        return tt_error_set(TT_ERR_NOMEM, "out of memory while formatting output");
    return TT_OK;
}

char *tt_strbuf_steal(tt_strbuf *sb, size_t *len)
{
    char *p = sb->data;
    if (!p && !sb->failed) {
        p = calloc(1, 1);
    }
    if (len)
        *len = sb->len;
    memset(sb, 0, sizeof *sb);
    return p;
}

char *tt_strdup(const char *s)
{
    size_t n;
    char *p;
    if (!s)
        return NULL;
    n = strlen(s) + 1;
    p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

tt_status tt_parse_ll(const char *s, long long *out)
{
    char *end;
    long long v;
    if (!s || !*s)
        return tt_error_set(TT_ERR_PARSE, "empty string where an integer was expected");
    while (isspace((unsigned char)*s))
        s++;
    errno = 0;
    v = strtoll(s, &end, 0);
    if (end == s)
        return tt_error_set(TT_ERR_PARSE, "'%s' is not an integer", s);
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return tt_error_set(TT_ERR_PARSE, "'%s' is not an integer (trailing '%s')", s, end);
    if (errno == ERANGE)
        return tt_error_set(TT_ERR_PARSE, "integer '%s' is out of range", s);
    *out = v;
    return TT_OK;
}

tt_status tt_parse_double(const char *s, double *out)
{
    char *end;
    double v;
    if (!s || !*s)
        return tt_error_set(TT_ERR_PARSE, "empty string where a number was expected");
    errno = 0;
    v = strtod(s, &end);
    if (end == s)
        return tt_error_set(TT_ERR_PARSE, "'%s' is not a number", s);
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return tt_error_set(TT_ERR_PARSE, "'%s' is not a number (trailing '%s')", s, end);
    if (errno == ERANGE || !isfinite(v))
        return tt_error_set(TT_ERR_PARSE, "number '%s' is out of range", s);
    *out = v;
    return TT_OK;
}

/* Suffix of a size: K/M/G/T (powers of 1024), then optional "i" (after a
 * multiplier) and "B".  Returns the end of the suffix or NULL. */
static const char *size_suffix(const char *p, uint64_t *mult)
{
    *mult = 1;
    switch (toupper((unsigned char)*p)) {
    case 'K': *mult = 1ull << 10; p++; break;
    case 'M': *mult = 1ull << 20; p++; break;
    case 'G': *mult = 1ull << 30; p++; break;
    case 'T': *mult = 1ull << 40; p++; break;
    default: break;
    }
    if (*mult > 1 && toupper((unsigned char)*p) == 'I')
        p++;
    if (toupper((unsigned char)*p) == 'B')
        p++;
    return *p ? NULL : p;
}

/* Whole numbers (decimal, or 0x hex) are parsed as integers, exactly, up to
 * UINT64_MAX; only a fraction or an exponent ("1.5G", "1e6") goes through
 * double arithmetic, and its result must be a whole number of bytes. */
tt_status tt_parse_size(const char *s, uint64_t *out)
{
    const char *p = s, *rest;
    char *end;
    uint64_t mult;
    unsigned long long iv;
    double v;
    if (!s || !*s)
        return tt_error_set(TT_ERR_PARSE, "empty size");
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '-')
        return tt_error_set(TT_ERR_PARSE, "'%s' is not a size (negative)", s);
    errno = 0;
    iv = strtoull(p, &end, (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) ? 16 : 10);
    if (end != p && *end != '.' && *end != 'e' && *end != 'E' && *end != 'p' && *end != 'P') {
        if (!(rest = size_suffix(end, &mult)))
            return tt_error_set(TT_ERR_PARSE, "'%s' is not a size (unknown suffix '%s')", s, end);
        if (errno == ERANGE || iv > UINT64_MAX / mult)
            return tt_error_set(TT_ERR_PARSE, "size '%s' is too large", s);
        *out = (uint64_t)iv * mult;
        return TT_OK;
    }
    errno = 0;
    v = strtod(p, &end);
    if (end == p || errno == ERANGE || !isfinite(v) || v < 0)
        return tt_error_set(TT_ERR_PARSE, "'%s' is not a size (expected e.g. 8, 64K, 1M, 2G)", s);
    if (!size_suffix(end, &mult))
        return tt_error_set(TT_ERR_PARSE, "'%s' is not a size (unknown suffix '%s')", s, end);
    v *= (double)mult;
    if (v > 18446744073709549568.0) /* largest double below 2^64 */
        return tt_error_set(TT_ERR_PARSE, "size '%s' is too large", s);
    if (v != floor(v))
        return tt_error_set(TT_ERR_PARSE, "size '%s' is not a whole number of bytes", s);
    *out = (uint64_t)v;
    return TT_OK;
}

tt_status tt_read_file(const char *path, size_t max_bytes, char **data, size_t *len)
{
    FILE *f;
    char *buf = NULL;
    size_t n = 0, cap = 0;

    *data = NULL;
    if (len)
        *len = 0;
    f = (!strcmp(path, "-")) ? stdin : fopen(path, "rb");
    if (!f)
        return tt_error_set(TT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        if (f != stdin)
            fclose(f);
        return tt_error_set(TT_ERR_IO, "%s: is a directory, not a file", path);
    }
    for (;;) {
        size_t got;
        if (n + 65536 + 1 > cap) {
            size_t ncap = cap ? cap * 2 : 65536 + 1;
            char *p = realloc(buf, ncap);
            if (!p) {
                free(buf);
                if (f != stdin)
                    fclose(f);
                return tt_error_set(TT_ERR_NOMEM, "%s: out of memory reading file", path);
            }
            buf = p;
            cap = ncap;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (max_bytes && n > max_bytes) {
            free(buf);
            if (f != stdin)
                fclose(f);
            return tt_error_set(TT_ERR_LIMIT, "%s: file is larger than the %zu-byte limit", path,
                                max_bytes);
        }
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int e = errno;
        free(buf);
        if (f != stdin)
            fclose(f);
        return tt_error_set(TT_ERR_IO, "%s: read error: %s", path, strerror(e));
    }
    if (f != stdin)
        fclose(f);
    buf[n] = '\0';
    *data = buf;
    if (len)
        *len = n;
    return TT_OK;
}

tt_status tt_write_file_atomic(const char *path, const char *data, size_t len)
{
    char tmp[4096];
    int fd;
    size_t off = 0;

    if (!path || !strcmp(path, "-")) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout))
            return tt_error_set(TT_ERR_IO, "writing to standard output failed: %s", strerror(errno));
        return TT_OK;
    }
    {
        struct stat lst, st;
        /* A symbolic link that another user made (in /tmp, say) is never followed: it could lead our
         * output into their file or to a FIFO nobody reads.  Ours and the system's (root's: /dev/stdout)
         * are. */
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && lst.st_uid != geteuid() && lst.st_uid != 0)
            return tt_error_set(TT_ERR_IO, "%s: a symbolic link owned by another user (uid %u): not followed, "
                                "nothing written", path, (unsigned)lst.st_uid);
        /* Not a regular file: a character device (/dev/null, a terminal) or a FIFO that a reader holds
         * open is written straight through (a rename would replace the special file); a FIFO without a
         * reader, a directory, a socket or a block device is refused instead of hanging or clobbering. */
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
                return tt_error_set(TT_ERR_IO, "%s: not a regular file (%s): nothing written", path,
                                    S_ISDIR(st.st_mode) ? "a directory" : S_ISSOCK(st.st_mode) ? "a socket"
                                                                                              : "a block device");
            int wfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
            for (int k = 0; wfd < 0 && errno == ENXIO && k < 200; k++) { /* a reader may be starting: 2 s */
                struct timespec ts = {0, 10 * 1000000L};
                nanosleep(&ts, NULL);
                wfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
            }
            if (wfd < 0)
                return tt_error_set(TT_ERR_IO, "%s: cannot open: %s", path,
                                    errno == ENXIO ? "a FIFO that nobody reads" : strerror(errno));
            int fl = fcntl(wfd, F_GETFL);
            if (fl >= 0)
                fcntl(wfd, F_SETFL, fl & ~O_NONBLOCK); /* a reader is there: let it take its time */
            while (off < len) {
                ssize_t w = write(wfd, data + off, len - off);
                if (w < 0 && errno == EINTR)
                    continue;
                if (w < 0) {
                    int e = errno;
                    close(wfd);
                    return tt_error_set(TT_ERR_IO, "%s: write failed: %s", path, strerror(e));
                }
                off += (size_t)w;
            }
            if (close(wfd) != 0)
                return tt_error_set(TT_ERR_IO, "%s: close failed: %s", path, strerror(errno));
            return TT_OK;
        }
    }
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return tt_error_set(TT_ERR_INVALID, "output path too long: %s", path);
    fd = mkstemp(tmp);
    if (fd < 0)
        return tt_error_set(TT_ERR_IO, "%s: cannot create temporary file: %s", path, strerror(errno));
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            return tt_error_set(TT_ERR_IO, "%s: write failed: %s", path, strerror(e));
        }
        off += (size_t)w;
    }
    fchmod(fd, 0644);
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return tt_error_set(TT_ERR_IO, "%s: close failed: %s", path, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return tt_error_set(TT_ERR_IO, "%s: rename failed: %s", path, strerror(e));
    }
    return TT_OK;
}
