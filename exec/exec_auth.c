/* exec_auth.c - who can join a job (docs/reliability.md, "Who can join a job"): the job secret and the
 * MACs that prove it in the rendezvous.
 *
 * Every hello (rendezvous and mesh) carries HMAC-SHA256 of all its fields under the job secret, and rank
 * 0's reply carries one over the hello it answers, the reply and the address table: a process without
 * the secret is refused with the reason (exec_bootstrap.c), and a listener that is not the job's rank 0
 * cannot feed a rank a table.  The secret, first found:
 *   1. the unique id of tt_get_unique_id (16 random bytes, passed out of band by the application, as
 *      NCCL's unique id is: MPI's broadcast in tt_exec_mpi.h);
 *   2. TOPOTUNE_JOB_SECRET (the same text on every rank);
 *   3. the key file TOPOTUNE_JOB_SECRET_FILE, default ~/.config/topotune/job-secret, created with 32
 *      random bytes (hex) and mode 0600 on first use (its folders 0700).  A key file that is not a
 *      regular file, that another user owns or can read or write, or that is empty is refused: an
 *      error with the reason, never a silent downgrade;
 *   4. none (HOME unset, the default key file cannot be created): a warning that any local user can
 *      join, and the MACs use the empty key (ranks without a secret still agree with each other).
 * Trailing white space of a key file is not part of the secret (`echo S > file` matches
 * TOPOTUNE_JOB_SECRET=S). */
#include "exec_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_FILE_MAX 4096

static void set_key(exec_job_key *k, const void *s, size_t n, const char *source)
{
    if (n > sizeof k->key) { /* HMAC hashes a key longer than its block: the same MACs */
        tt_sha256(s, n, k->key);
        k->len = TT_SHA256_LEN;
    } else {
        memcpy(k->key, s, n);
        k->len = n;
    }
    snprintf(k->source, sizeof k->source, "%s", source);
}

/* the key file at path into k; *absent when there is none */
static tt_status read_key_file(const char *path, exec_job_key *k, int *absent)
{
    *absent = 0;
    /* O_NONBLOCK: a FIFO is opened at once (and refused below) instead of waiting for a writer */
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            *absent = 1;
            return TT_OK;
        }
        return tt_error_set(TT_ERR_IO, "job key file %s: %s", path, strerror(errno));
    }
    struct stat sb;
    tt_status st = TT_OK;
    if (fstat(fd, &sb) != 0)
        st = tt_error_set(TT_ERR_IO, "job key file %s: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = tt_error_set(TT_ERR_INVALID, "job key file %s is not a regular file: refused (a key file is a private "
                          "regular file; or set TOPOTUNE_JOB_SECRET)", path);
    else if (sb.st_uid != geteuid())
        st = tt_error_set(TT_ERR_INVALID, "job key file %s belongs to another user (uid %u; this process runs as uid "
                          "%u): refused; use a key file of your own (TOPOTUNE_JOB_SECRET_FILE) or TOPOTUNE_JOB_SECRET",
                          path, (unsigned)sb.st_uid, (unsigned)geteuid());
    else if (sb.st_mode & 077)
        st = tt_error_set(TT_ERR_INVALID, "job key file %s is %s by other users (mode %03o): refused; chmod 600 %s",
                          path, sb.st_mode & 044 ? "readable" : "writable", (unsigned)(sb.st_mode & 0777), path);
    else if (sb.st_size > KEY_FILE_MAX)
        st = tt_error_set(TT_ERR_INVALID, "job key file %s holds %lld bytes, more than %d: not a key file?", path,
                          (long long)sb.st_size, KEY_FILE_MAX);
    char buf[KEY_FILE_MAX + 1];
    size_t n = 0;
    while (st == TT_OK && n < sizeof buf) {
        ssize_t r = read(fd, buf + n, sizeof buf - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            st = tt_error_set(TT_ERR_IO, "job key file %s: %s", path, strerror(errno));
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        n--;
    if (st == TT_OK && !n)
        st = tt_error_set(TT_ERR_INVALID, "job key file %s is empty: refused (remove it and a new one is made, or "
                          "write a secret into it)", path);
    if (st == TT_OK) {
        char src[sizeof k->source];
        snprintf(src, sizeof src, "the key file %s", path);
        set_key(k, buf, n, src);
    }
    tt_memzero(buf, sizeof buf);
    return st;
}

/* A new key file: written under a temporary name and linked into place, so that ranks starting at once
 * on one host (or on hosts sharing the home folder) all end up with the one that was linked first. */
static tt_status create_key_file(const char *path)
{
    unsigned char rnd[32 + 8];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return tt_error_set(TT_ERR_SYSTEM, "job key file %s: no random bytes for a new secret (%s)", path,
                            strerror(errno));
    char text[2 * 32 + 2], tmp[4200];
    for (int i = 0; i < 32; i++)
        snprintf(text + 2 * i, 3, "%02x", rnd[i]);
    text[64] = '\n';
    text[65] = '\0';
    unsigned long long tag;
    memcpy(&tag, rnd + 32, sizeof tag);
    snprintf(tmp, sizeof tmp, "%s.new-%d-%016llx", path, (int)getpid(), tag);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    tt_status st = TT_OK;
    if (fd < 0)
        return tt_error_set(TT_ERR_IO, "cannot create the job key file %s: %s", path, strerror(errno));
    if (write(fd, text, 65) != 65 || fsync(fd) != 0)
        st = tt_error_set(TT_ERR_IO, "cannot write the job key file %s: %s", path, strerror(errno));
    close(fd);
    if (st == TT_OK && link(tmp, path) != 0 && errno != EEXIST) /* EEXIST: another rank was first */
        st = tt_error_set(TT_ERR_IO, "cannot create the job key file %s: %s", path, strerror(errno));
    else if (st == TT_OK)
        TT_INFO("exec", "job key file %s is in place (mode 0600): ranks on other hosts need the same file (a shared "
                "home folder) or TOPOTUNE_JOB_SECRET", path);
    unlink(tmp);
    tt_memzero(text, sizeof text);
    tt_memzero(rnd, sizeof rnd);
    return st;
}

static atomic_int warned_none;

static void no_secret(exec_job_key *k, const char *why)
{
    memset(k, 0, sizeof *k);
    snprintf(k->source, sizeof k->source, "no secret (%.180s)", why);
    if (!atomic_exchange(&warned_none, 1))
        TT_WARN("exec", "no job secret (%s): any local user can join this job and supply a rank's data; set "
                "TOPOTUNE_JOB_SECRET (the same on every rank) or TOPOTUNE_JOB_SECRET_FILE (docs/reliability.md, "
                "\"Who can join a job\")", why);
}

tt_status exec_auth_load(exec_boot_id *id)
{
    exec_job_key *k = &id->key;
    memset(k, 0, sizeof *k);
    if (id->has_secret) {
        set_key(k, id->secret, sizeof id->secret, "the unique id (tt_get_unique_id)");
        return TT_OK;
    }
    const char *s = tt_setting("TOPOTUNE_JOB_SECRET");
    if (s && *s) {
        set_key(k, s, strlen(s), "TOPOTUNE_JOB_SECRET");
        return TT_OK;
    }
    const char *f = tt_setting("TOPOTUNE_JOB_SECRET_FILE");
    int dflt = !f || !*f;
    char path[4096];
    if (dflt) {
        const char *home = tt_setting("HOME");
        if (!home || home[0] != '/') {
            no_secret(k, home && *home ? "HOME is not an absolute path" : "HOME is not set");
            return TT_OK;
        }
        snprintf(path, sizeof path, "%s/.config", home);
        mkdir(path, 0700); /* the folders of the default key file, private; they may exist */
        snprintf(path, sizeof path, "%s/.config/topotune", home);
        mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/.config/topotune/job-secret", home);
    } else {
        snprintf(path, sizeof path, "%s", f);
    }
    int absent;
    tt_status st = read_key_file(path, k, &absent);
    if (st == TT_OK && absent) {
        st = create_key_file(path);
        if (st == TT_OK)
            st = read_key_file(path, k, &absent);
        if (st == TT_OK && absent)
            st = tt_error_set(TT_ERR_IO, "job key file %s vanished right after it was made", path);
        if (st != TT_OK && dflt) { /* no home folder to write (e.g. a system user's /nonexistent) */
            char why[300];
            snprintf(why, sizeof why, "%s", tt_error_message());
            no_secret(k, why);
            return TT_OK;
        }
    }
    if (st != TT_OK)
        return tt_error_prefix(st, "job authentication");
    TT_INFO("exec", "job secret: %s", k->source);
    return TT_OK;
}

const char *exec_auth_hint(const exec_job_key *k)
{
    return strncmp(k->source, "the unique id", 13) ? "set the same TOPOTUNE_JOB_SECRET on every rank"
                                                   : "give every rank the same unique id (tt_get_unique_id)";
}

void exec_auth_forget(exec_boot_id *id) { tt_memzero(&id->key, sizeof id->key); }

tt_status exec_auth_new_id_secret(unsigned char secret[EXEC_ID_SECRET_LEN])
{
    if (getrandom(secret, EXEC_ID_SECRET_LEN, 0) != EXEC_ID_SECRET_LEN)
        return tt_error_set(TT_ERR_SYSTEM, "tt_get_unique_id: no random bytes for the job secret (%s)", strerror(errno));
    return TT_OK;
}

/* each piece with its length first, so that pieces cannot be shifted into one another */
static void piece(tt_hmac_sha256_ctx *h, const void *p, size_t n)
{
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    tt_hmac_sha256_update(h, len, sizeof len);
    if (n)
        tt_hmac_sha256_update(h, p, n);
}

void exec_auth_mac(const exec_job_key *k, const char *what, const void *a, size_t an, const void *b, size_t bn,
                   const void *c, size_t cn, unsigned char mac[32])
{
    tt_hmac_sha256_ctx h;
    tt_hmac_sha256_init(&h, k->key, k->len);
    piece(&h, "topotune rendezvous", 19);
    piece(&h, what, strlen(what));
    piece(&h, a, a ? an : 0);
    piece(&h, b, b ? bn : 0);
    piece(&h, c, c ? cn : 0);
    tt_hmac_sha256_final(&h, mac);
}

int exec_auth_ok(const exec_job_key *k, const char *what, const void *a, size_t an, const void *b, size_t bn,
                 const void *c, size_t cn, const unsigned char mac[32])
{
    unsigned char mine[32];
    exec_auth_mac(k, what, a, an, b, bn, c, cn, mine);
    return tt_mem_equal_ct(mine, mac, sizeof mine);
}
