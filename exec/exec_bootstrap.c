/* exec_bootstrap.c - TCP rendezvous of the ranks of a multi-process
 * communicator and the full mesh of data connections.
 *
 * 1. Every rank opens a data listener (port chosen by the kernel).
 * 2. Rank 0 listens on the rendezvous address; every other rank connects to
 *    it (retrying until the deadline: rank 0 may start later) and sends a
 *    hello {magic, nonce, rank, nranks, data address}.  Rank 0 checks them
 *    (range, duplicates, nranks agreement) and answers every rank with a
 *    status and the table of data addresses, or with the error so that no
 *    rank is left waiting.
 * 3. For each pair i < j, rank j connects to rank i's data listener and
 *    introduces itself (a data connection, and for i > 0 a control one).  Connecting never waits for the other side's accept
 *    (the kernel queues it), so the mesh cannot deadlock.
 * Every step is bounded by the communicator's timeout. */
#include "exec_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BOOT_MAGIC 0x54544558u /* "TTEX" */
#define BOOT_VERSION 3u /* 2: job identity, kind, pid (issue #16); 3: MACs of the job secret (issue #32) */
#define ID_PREFIX "TTID1 "

typedef struct {
    uint32_t magic, version;
    uint64_t nonce;      /* the job's nonce (0 in a rendezvous hello of a --master/MASTER_ADDR id) */
    uint64_t job;        /* hash of the launcher's job id (job_identity), 0: none */
    int32_t rank, nranks;
    char host[64];
    int32_t port;
    int32_t kind;        /* mesh: 0 data, 1 control */
    int32_t pid;
    char jobname[60];    /* the job id as text, for messages */
    unsigned char mac[32]; /* HMAC-SHA256 of every byte above under the job secret (exec_auth.c) */
} boot_hello;

typedef struct {
    int32_t status;      /* 0 ok, 1 the job fails, 2 this process is refused (another job) */
    uint64_t nonce;      /* the job's nonce, agreed here */
    char msg[400];
    unsigned char mac[32]; /* over the hello answered, the bytes above and the table that follows (exec_auth.c) */
} boot_reply;

typedef struct {
    char host[64];
    int32_t port;
} boot_addr;

/* listeners pre-bound by tt_get_unique_id in this process */
static pthread_mutex_t prebound_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { int port, fd; } prebound[8];

int exec_boot_take_listener(int port)
{
    int fd = -1;
    pthread_mutex_lock(&prebound_mu);
    for (int i = 0; i < 8; i++)
        if (prebound[i].fd > 0 && prebound[i].port == port) {
            fd = prebound[i].fd;
            prebound[i].fd = 0;
            break;
        }
    pthread_mutex_unlock(&prebound_mu);
    return fd;
}

/* "HOST:PORT" or "[IPV6]:PORT".  An IPv6 literal without brackets is refused rather than guessed at
 * ("fe80::1:2" could be fe80::1 port 2 or an address without a port). */
static tt_status parse_host_port(const char *s, char *host, size_t hn, int *port)
{
    const char *h = s, *he = NULL, *colon = NULL;
    if (s && *s == '[') {
        const char *rb = strchr(s, ']');
        if (!rb || rb[1] != ':' || rb == s + 1)
            return tt_error_set(TT_ERR_INVALID, "rendezvous address '%s': expected [IPV6-ADDRESS]:PORT", s);
        h = s + 1;
        he = rb;
        colon = rb + 1;
    } else if (s) {
        colon = strchr(s, ':');
        if (colon && strchr(colon + 1, ':'))
            return tt_error_set(TT_ERR_INVALID,
                                "rendezvous address '%s': an IPv6 address needs brackets around it, "
                                "[ADDRESS]:PORT (e.g. [::1]:29500)", s);
        he = colon;
    }
    if (!colon || he == h)
        return tt_error_set(TT_ERR_INVALID, "rendezvous address '%s': expected HOST:PORT", s ? s : "");
    if ((size_t)(he - h) >= hn)
        return tt_error_set(TT_ERR_INVALID, "rendezvous address '%s': the host is longer than %zu characters", s,
                            hn - 1);
    long long p;
    if (tt_parse_ll(colon + 1, &p) != TT_OK || p < 1 || p > 65535)
        return tt_error_set(TT_ERR_INVALID, "rendezvous address '%s': port must be 1..65535", s);
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = '\0';
    *port = (int)p;
    return TT_OK;
}

/* "TTID1 host:port nonce[ secret]": the secret (hex) only in ids of tt_get_unique_id (exec_auth.c) */
static void encode_id(tt_unique_id *id, const char *host, int port, uint64_t nonce, const unsigned char *secret)
{
    int v6 = strchr(host, ':') != NULL; /* an IPv6 literal: in brackets, as parse_host_port reads it */
    memset(id, 0, sizeof *id);
    int n = snprintf(id->bytes, sizeof id->bytes, ID_PREFIX "%s%s%s:%d %016llx", v6 ? "[" : "", host, v6 ? "]" : "",
                     port, (unsigned long long)nonce);
    for (int i = 0; secret && i < EXEC_ID_SECRET_LEN && (size_t)n + 3 < sizeof id->bytes; i++)
        n += snprintf(id->bytes + n, sizeof id->bytes - (size_t)n, "%s%02x", i ? "" : " ", secret[i]);
}

tt_status exec_boot_id_decode(const tt_unique_id *id, exec_boot_id *out)
{
    char buf[sizeof id->bytes + 1];
    memset(out, 0, sizeof *out);
    memcpy(buf, id->bytes, sizeof id->bytes);
    buf[sizeof id->bytes] = '\0';
    if (strncmp(buf, ID_PREFIX, strlen(ID_PREFIX)))
        return tt_error_set(TT_ERR_INVALID, "unique id: not a topotune id");
    char *hp = buf + strlen(ID_PREFIX);
    char *sp = strchr(hp, ' ');
    if (!sp)
        return tt_error_set(TT_ERR_INVALID, "unique id: missing nonce");
    *sp = '\0';
    tt_status st = parse_host_port(hp, out->host, sizeof out->host, &out->port);
    if (st != TT_OK)
        return st;
    char *end;
    out->nonce = strtoull(sp + 1, &end, 16);
    if (*end == ' ') { /* the job secret */
        for (int i = 0; i < EXEC_ID_SECRET_LEN; i++) {
            unsigned v;
            if (sscanf(end + 1 + 2 * i, "%2x", &v) != 1)
                return tt_error_set(TT_ERR_INVALID, "unique id: malformed job secret");
            out->secret[i] = (unsigned char)v;
        }
        out->has_secret = 1;
    }
    return TT_OK;
}

static int resolve(const char *host, int port, struct sockaddr_storage *ss, socklen_t *sl)
{
    struct addrinfo hints = {0}, *res = NULL;
    char ps[16];
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(host, ps, &hints, &res) != 0 || !res)
        return -1;
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sl = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static tt_status listen_on(const char *host, int port, int *fd_out, int *port_out)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    if (resolve(host, port, &ss, &sl) != 0)
        return tt_error_set(TT_ERR_INVALID, "cannot resolve address '%s'", host);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return tt_error_set(TT_ERR_SYSTEM, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 256) != 0) {
        int e = errno;
        close(fd);
        return tt_error_set(TT_ERR_SYSTEM, "cannot listen on %s:%d: %s", host, port, strerror(e));
    }
    set_nonblock(fd);
    struct sockaddr_storage got;
    socklen_t gl = sizeof got;
    getsockname(fd, (struct sockaddr *)&got, &gl);
    *port_out = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                                : ((struct sockaddr_in *)&got)->sin_port);
    *fd_out = fd;
    return TT_OK;
}

tt_status tt_get_unique_id(tt_unique_id *id, const char *addr)
{
    if (!id)
        return tt_error_set(TT_ERR_INVALID, "tt_get_unique_id: NULL id");
    const char *host = addr ? addr : "127.0.0.1";
    int fd, port;
    if (strlen(host) >= sizeof ((exec_boot_id *)0)->host)
        return tt_error_set(TT_ERR_INVALID, "tt_get_unique_id: address '%.80s...' longer than 63 characters", host);
    tt_status st = listen_on(host, 0, &fd, &port);
    if (st != TT_OK)
        return st;
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
        nonce = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    unsigned char secret[EXEC_ID_SECRET_LEN];
    if ((st = exec_auth_new_id_secret(secret)) != TT_OK) {
        close(fd);
        return st;
    }
    pthread_mutex_lock(&prebound_mu);
    int slot = -1;
    for (int i = 0; i < 8; i++)
        if (prebound[i].fd <= 0) {
            slot = i;
            break;
        }
    if (slot >= 0) {
        prebound[slot].port = port;
        prebound[slot].fd = fd;
    }
    pthread_mutex_unlock(&prebound_mu);
    if (slot < 0) {
        close(fd);
        return tt_error_set(TT_ERR_LIMIT, "tt_get_unique_id: more than 8 unused ids in this process");
    }
    encode_id(id, host, port, nonce, secret);
    tt_memzero(secret, sizeof secret);
    return TT_OK;
}

tt_status tt_unique_id_from_addr(tt_unique_id *id, const char *host_port)
{
    char host[64];
    int port;
    if (!id)
        return tt_error_set(TT_ERR_INVALID, "tt_unique_id_from_addr: NULL id");
    tt_status st = parse_host_port(host_port, host, sizeof host, &port);
    if (st != TT_OK)
        return st;
    encode_id(id, host, port, 0, NULL);
    return TT_OK;
}

/* Blocking-with-deadline full read/write on a non-blocking socket. */
static tt_status io_full(int fd, void *buf, size_t len, int is_send, int64_t deadline,
                         const char *what)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = is_send ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                            : recv(fd, (char *)buf + done, len - done, MSG_DONTWAIT);
        if (r > 0) {
            done += (size_t)r;
            continue;
        }
        if (r == 0)
            return tt_error_set(TT_ERR_REMOTE, "%s: connection closed by the other side", what);
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return tt_error_set(TT_ERR_REMOTE, "%s: %s", what, strerror(errno));
        int64_t left = deadline - exec_now_ms();
        if (left <= 0)
            return tt_error_set(TT_ERR_TIMEOUT, "%s: timed out", what);
        struct pollfd p = {fd, (short)(is_send ? POLLOUT : POLLIN), 0};
        poll(&p, 1, left > 100 ? 100 : (int)left);
    }
    return TT_OK;
}

/* Connects before the deadline, retrying (the other side may start later).  refused_ms > 0: gives up once
 * every attempt for that long was refused (nobody listens any more: the other side has exited). */
static tt_status connect_until(const char *host, int port, int64_t deadline, int refused_ms, int *out,
                               const char *what)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    if (resolve(host, port, &ss, &sl) != 0)
        return tt_error_set(TT_ERR_INVALID, "%s: cannot resolve '%s'", what, host);
    int last_err = 0;
    int64_t refused_since = -1;
    while (exec_now_ms() < deadline) {
        int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return tt_error_set(TT_ERR_SYSTEM, "socket: %s", strerror(errno));
        set_nonblock(fd);
        int r = connect(fd, (struct sockaddr *)&ss, sl);
        if (r != 0 && errno == EINPROGRESS) {
            int64_t left = deadline - exec_now_ms();
            struct pollfd p = {fd, POLLOUT, 0};
            if (poll(&p, 1, left > 0 ? (int)left : 0) == 1) {
                int err = 0;
                socklen_t el = sizeof err;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
                r = err ? -1 : 0;
                errno = err ? err : ETIMEDOUT;
            } else {
                errno = ETIMEDOUT;
                r = -1;
            }
        }
        if (r == 0) {
            *out = fd;
            return TT_OK;
        }
        last_err = errno;
        close(fd);
        if (last_err != ECONNREFUSED)
            refused_since = -1;
        else if (refused_since < 0)
            refused_since = exec_now_ms();
        if (refused_ms > 0 && refused_since >= 0 && exec_now_ms() - refused_since >= refused_ms)
            return tt_error_set(TT_ERR_REMOTE, "%s: %s:%d refuses connections now (for %d ms): has it exited?", what,
                                host, port, refused_ms);
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return tt_error_set(TT_ERR_TIMEOUT, "%s: could not connect to %s:%d before the deadline (%s)",
                        what, host, port, last_err ? strerror(last_err) : "timed out");
}

static tt_status connect_retry(const char *host, int port, int64_t deadline, int *out, const char *what)
{
    return connect_until(host, port, deadline, 0, out, what);
}

static void local_host_of(int fd, char *host, size_t n, const char *fallback)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, host, (socklen_t)n, NULL, 0, NI_NUMERICHOST) == 0)
        return;
    snprintf(host, n, "%s", fallback);
}

/* ---- job identity (issue #16 item 2) ----
 * The launcher's job id where there is one: a rank of another job that reaches this rendezvous port
 * (a leftover of an earlier run) is refused and logged, and the job's own rank still joins.  Without
 * one, rank 0 draws a nonce at the rendezvous that every later connection (data mesh, control mesh,
 * shared-memory names) must carry. */
static uint64_t job_identity(char *name, size_t n)
{
    char text[256];
    tt_job_identity(text, sizeof text); /* exec_launcher_env.c */
    size_t len = strlen(text) < n ? strlen(text) : n - 1; /* the name for messages: cut short */
    memcpy(name, text, len);
    name[len] = '\0';
    if (!text[0])
        return 0;
    uint64_t h = 1469598103934665603ull; /* FNV-1a of the whole text (the name may be cut short) */
    for (const char *p = text; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h ? h : 1;
}

/* Once per process, where the rendezvous has no nonce to tell jobs apart (--master, MASTER_ADDR): that a
 * process of another run on the same port (a leftover, a restarted job's previous attempt) could take a
 * rank of this job, and which variables would prevent it. */
static void job_identity_warn(const exec_boot_id *id)
{
    static int warned;
    char text[256];
    if (id->nonce || tt_job_identity(text, sizeof text) || __atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        return;
    TT_WARN("exec", "no job id: none of " TT_JOB_ID_VARS " is set%s%s: a leftover process of an earlier run on this "
            "rendezvous port could take a rank of this job; set TOPOTUNE_JOB_ID (the same value on every rank, "
            "another one per run) or start the ranks with a launcher that sets one",
            text[0] ? ", only " : "", text);
}

static void hello_init(boot_hello *h, const tt_comm *comm, uint64_t nonce, int kind)
{
    memset(h, 0, sizeof *h); /* padding too: the struct goes on the wire */
    h->magic = BOOT_MAGIC;
    h->version = BOOT_VERSION;
    h->nonce = nonce;
    h->rank = comm->rank;
    h->nranks = comm->nranks;
    h->kind = kind;
    h->pid = (int32_t)getpid();
    h->job = job_identity(h->jobname, sizeof h->jobname);
}

/* MACs of the job secret (exec_auth.c): a hello over all its fields; a reply over the hello it answers,
 * its own fields and the table sent after it (tn 0: none) */
static void hello_seal(boot_hello *h, const exec_job_key *k)
{
    exec_auth_mac(k, "hello", h, offsetof(boot_hello, mac), NULL, 0, NULL, 0, h->mac);
}

static int hello_proven(const boot_hello *h, const exec_job_key *k)
{
    return exec_auth_ok(k, "hello", h, offsetof(boot_hello, mac), NULL, 0, NULL, 0, h->mac);
}

static void reply_seal(boot_reply *r, const unsigned char *hello_mac, const exec_job_key *k, const void *t, size_t tn)
{
    exec_auth_mac(k, "reply", hello_mac, 32, r, offsetof(boot_reply, mac), t, tn, r->mac);
}

static int reply_proven(const boot_reply *r, const unsigned char *hello_mac, const exec_job_key *k, const void *t,
                        size_t tn)
{
    return exec_auth_ok(k, "reply", hello_mac, 32, r, offsetof(boot_reply, mac), t, tn, r->mac);
}

/* ---- hellos read concurrently (issue #16 item 1) ----
 * A listener's connections are read side by side, each with a short limit of its own: a health probe, a
 * port scanner, `nc` or an HTTP request is dropped and logged, and never holds up the ranks behind it. */
#define HELLO_MS 2000 /* a rank sends its hello right after connecting: 2 s is generous */
#define PEND_MAX 64

typedef struct {
    int fd;
    int64_t t0;
    size_t got;
    boot_hello h;
    char peer[64];
} pend_conn;

typedef struct {
    int lfd;
    const char *where; /* "rendezvous 127.0.0.1:29500", "rank 2: data listener" */
    pend_conn p[PEND_MAX];
    int np;
    int dropped;
    char last_drop[200];
} hello_wait;

static void peer_name(int fd, char *buf, size_t n)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char h[64] = "?", s[16] = "?";
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
        getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, s, sizeof s, NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(buf, n, "%s:%s", h, s);
}

#define DROP_LOGGED 10 /* connections dropped and logged one by one; the rest are counted (hello_wait_close) */

/* Closes pending connection i.  The others keep their order: p[0] is always the oldest (issue #32 item 5:
 * moving the newest into the freed slot made "the oldest" at PEND_MAX a rank that had just connected). */
static void pend_drop(hello_wait *w, int i, const char *why)
{
    w->dropped++;
    snprintf(w->last_drop, sizeof w->last_drop, "%s %s", w->p[i].peer, why);
    if (w->dropped <= DROP_LOGGED)
        TT_WARN("exec", "%s: dropped a connection from %s: %s%s", w->where, w->p[i].peer, why,
                w->dropped == DROP_LOGGED ? " (further drops are counted, not logged one by one)" : "");
    close(w->p[i].fd);
    memmove(&w->p[i], &w->p[i + 1], sizeof *w->p * (size_t)(w->np - i - 1));
    w->np--;
}

static int pend_complete(const pend_conn *c) { return c->got == sizeof c->h; }

/* Reads what has arrived on pending connection i: 0 kept (complete or not yet), -1 dropped. */
static int pend_read(hello_wait *w, int i)
{
    pend_conn *c = &w->p[i];
    if (pend_complete(c))
        return 0;
    ssize_t r = recv(c->fd, (char *)&c->h + c->got, sizeof c->h - c->got, MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        pend_drop(w, i, "closed before a complete hello");
        return -1;
    }
    if (r > 0)
        c->got += (size_t)r;
    if (c->got >= sizeof c->h.magic && c->h.magic != BOOT_MAGIC) {
        unsigned char *b = (unsigned char *)&c->h;
        char why[96];
        snprintf(why, sizeof why, "not a topotune rank (first bytes %02x %02x %02x %02x%s)", b[0], b[1], b[2],
                 b[3], !memcmp(b, "GET ", 4) || !memcmp(b, "HEAD", 4) || !memcmp(b, "POST", 4) ? ": HTTP" : "");
        pend_drop(w, i, why);
        return -1;
    }
    if (c->got >= 8 && c->h.version != BOOT_VERSION) {
        char why[96];
        snprintf(why, sizeof why, "a topotune rank of another version (protocol %u, this one %u)", c->h.version,
                 BOOT_VERSION);
        pend_drop(w, i, why);
        return -1;
    }
    return 0;
}

/* The connection to drop when every slot is taken: the oldest that has sent nothing, else the oldest with a
 * partial hello; never one with a complete hello (a rank waiting to be answered).  -1: none. */
static int pend_victim(const hello_wait *w)
{
    int partial = -1;
    for (int i = 0; i < w->np; i++) {
        if (w->p[i].got == 0)
            return i;
        if (partial < 0 && !pend_complete(&w->p[i]))
            partial = i;
    }
    return partial;
}

/* The next complete hello of a topotune rank (magic and version checked); TT_ERR_TIMEOUT at the deadline.
 * Under a flood of connections that send nothing (issue #32 item 5) the ranks still get through: each
 * connection is read as soon as it is accepted, a full table makes room by dropping the oldest stranger,
 * and a rank whose connection was dropped all the same connects again (boot_worker). */
static tt_status next_hello(hello_wait *w, int64_t deadline, int hello_ms, int *fd_out, boot_hello *h_out)
{
    for (;;) {
        for (int i = 0; i < w->np; i++) /* a complete hello waiting: the oldest first */
            if (pend_complete(&w->p[i])) {
                *fd_out = w->p[i].fd;
                *h_out = w->p[i].h;
                h_out->host[sizeof h_out->host - 1] = '\0';
                h_out->jobname[sizeof h_out->jobname - 1] = '\0';
                memmove(&w->p[i], &w->p[i + 1], sizeof *w->p * (size_t)(w->np - i - 1));
                w->np--;
                return TT_OK;
            }
        int64_t now = exec_now_ms();
        for (int i = w->np - 1; i >= 0; i--) /* counted from the accept: a slow trickle is no way to stay */
            if (now - w->p[i].t0 > hello_ms) {
                char why[96];
                snprintf(why, sizeof why, "no hello within %d ms (%zu of %zu bytes; a probe or scanner?)", hello_ms,
                         w->p[i].got, sizeof w->p[i].h);
                pend_drop(w, i, why);
            }
        if (now >= deadline)
            return TT_ERR_TIMEOUT;
        struct pollfd pfd[PEND_MAX + 1];
        pfd[0] = (struct pollfd){w->lfd, POLLIN, 0};
        for (int i = 0; i < w->np; i++)
            pfd[i + 1] = (struct pollfd){w->p[i].fd, POLLIN, 0};
        int64_t left = deadline - now;
        poll(pfd, (nfds_t)w->np + 1, left > 50 ? 50 : (int)left);
        for (int k = 0; k < 4 * PEND_MAX; k++) { /* the connections waiting in the backlog (a bounded batch) */
            int victim = w->np == PEND_MAX ? pend_victim(w) : -1;
            if (w->np == PEND_MAX && victim < 0)
                break; /* every slot holds a rank's hello: those first */
            int fd = accept4(w->lfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd < 0)
                break;
            set_nonblock(fd);
            if (victim >= 0) /* flooded: the oldest stranger makes room */
                pend_drop(w, victim, "too many connections without a hello (the oldest is dropped)");
            pend_conn *c = &w->p[w->np++];
            memset(c, 0, sizeof *c);
            c->fd = fd;
            c->t0 = exec_now_ms();
            peer_name(fd, c->peer, sizeof c->peer);
            pend_read(w, w->np - 1); /* a rank sends its hello right after connecting: often here already */
        }
        for (int i = w->np - 1; i >= 0; i--)
            pend_read(w, i);
    }
}

static void hello_wait_close(hello_wait *w)
{
    for (int i = 0; i < w->np; i++)
        close(w->p[i].fd);
    w->np = 0;
    if (w->dropped > DROP_LOGGED)
        TT_WARN("exec", "%s: dropped %d connection(s) in all that sent no hello of this protocol (last: %s)", w->where,
                w->dropped, w->last_drop);
}

static int hello_limit(const tt_comm *comm)
{
    return comm->timeout_ms > 0 && comm->timeout_ms < HELLO_MS ? comm->timeout_ms : HELLO_MS;
}

/* Rank 0: collect hellos, check, answer everyone. */
static tt_status boot_master(tt_comm *comm, exec_boot_id *id, boot_addr *table, int64_t deadline)
{
    int n = comm->nranks;
    int lfd = exec_boot_take_listener(id->port), port;
    if (lfd < 0) {
        tt_status st = listen_on(id->host, id->port, &lfd, &port);
        if (st != TT_OK)
            return tt_error_prefix(st, "rank 0: rendezvous");
    }
    int *fds = calloc((size_t)n, sizeof *fds);
    int32_t *pids = calloc((size_t)n, sizeof *pids);
    unsigned char (*hmacs)[32] = calloc((size_t)n, sizeof *hmacs); /* each rank's hello MAC, for its reply's */
    if (!fds || !pids || !hmacs) {
        free(fds);
        free(pids);
        free(hmacs);
        close(lfd);
        return tt_error_set(TT_ERR_NOMEM, "rendezvous");
    }
    job_identity_warn(id);
    char myjob[60];
    uint64_t job = job_identity(myjob, sizeof myjob);
    /* the job's nonce: tt_get_unique_id's, else drawn now */
    uint64_t nonce = id->nonce;
    while (!nonce && getrandom(&nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
        nonce = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ (uint64_t)exec_now_ms();
    hello_wait w;
    memset(&w, 0, sizeof w);
    w.lfd = lfd;
    char where[128];
    snprintf(where, sizeof where, "rank 0: rendezvous %s:%d", id->host, id->port);
    w.where = where;
    tt_status st = TT_OK;
    char err[400] = "";
    int got = 1, foreign = 0, badmac = 0;
    char foreign_desc[200] = "", badmac_desc[200] = "";
    while (got < n) {
        int fd;
        boot_hello h;
        st = next_hello(&w, deadline, hello_limit(comm), &fd, &h);
        if (st != TT_OK) {
            char miss[256] = "", extra[440] = "";
            size_t len = 0;
            for (int r = 1; r < n; r++)
                if (!fds[r])
                    len += (size_t)snprintf(miss + len, len < sizeof miss ? sizeof miss - len : 0,
                                            "%s%d", len ? ", " : "", r);
            if (badmac)
                snprintf(extra, sizeof extra, "; refused %d process(es) that prove a different job secret (last: %s): %s",
                         badmac, badmac_desc, exec_auth_hint(&id->key));
            else if (foreign)
                snprintf(extra, sizeof extra, "; refused %d process(es) of another job (last: %s)", foreign,
                         foreign_desc);
            else if (w.dropped)
                snprintf(extra, sizeof extra, "; dropped %d connection(s) that were not topotune ranks (last: %.200s)",
                         w.dropped, w.last_drop);
            snprintf(err, sizeof err, "rendezvous at %s:%d: timed out after %d ms: rank(s) %s never connected%s",
                     id->host, id->port, comm->timeout_ms, miss, extra);
            st = TT_ERR_TIMEOUT;
            break;
        }
        if (!hello_proven(&h, &id->key)) {
            /* without the job secret (another user, another secret): refused alone, as another job's rank */
            boot_reply rep;
            memset(&rep, 0, sizeof rep);
            rep.status = 2;
            snprintf(rep.msg, sizeof rep.msg,
                     "this process (rank %d, pid %d) proves a different job secret than rank 0 of the job at this "
                     "rendezvous: %s", h.rank, h.pid, exec_auth_hint(&id->key));
            reply_seal(&rep, h.mac, &id->key, NULL, 0);
            io_full(fd, &rep, sizeof rep, 1, exec_now_ms() + 200, "reply");
            close(fd);
            badmac++;
            snprintf(badmac_desc, sizeof badmac_desc, "claims rank %d, pid %d on %.60s", h.rank, h.pid, h.host);
            TT_WARN("exec", "%s: refused a process that proves a different job secret: %s (this job's secret: %s); %s",
                    where, badmac_desc, id->key.source, exec_auth_hint(&id->key));
            continue;
        }
        if (h.nonce != id->nonce || h.job != job) {
            /* another job's rank: refused alone, with the reason; this job goes on waiting for its own */
            boot_reply rep;
            memset(&rep, 0, sizeof rep);
            rep.status = 2;
            snprintf(rep.msg, sizeof rep.msg,
                     "this process (%s) is not part of the job at this rendezvous (%s): a leftover of an earlier "
                     "job on the same port?",
                     h.job ? h.jobname : "no job id", job ? myjob : "no job id");
            reply_seal(&rep, h.mac, &id->key, NULL, 0);
            io_full(fd, &rep, sizeof rep, 1, exec_now_ms() + 200, "reply");
            close(fd);
            foreign++;
            snprintf(foreign_desc, sizeof foreign_desc, "rank %d pid %d on %.60s, %.60s", h.rank, h.pid, h.host,
                     h.job ? h.jobname : "no job id");
            TT_WARN("exec", "%s: refused a process of another job: %s (this job: %s)", where, foreign_desc,
                    job ? myjob : "no job id");
            continue;
        }
        if (h.nranks != n)
            snprintf(err, sizeof err, "rendezvous: rank %d was started with %d ranks, rank 0 with %d",
                     h.rank, h.nranks, n);
        else if (h.rank <= 0 || h.rank >= n)
            snprintf(err, sizeof err, "rendezvous: a process claims rank %d, valid ranks are 0..%d",
                     h.rank, n - 1);
        else if (fds[h.rank])
            snprintf(err, sizeof err,
                     "rendezvous: two processes claim rank %d (pids %d and %d on %s and %s): a leftover of an earlier "
                     "job? give each job an identity (TOPOTUNE_JOB_ID, or the launcher's SLURM_JOB_ID / "
                     "TORCHELASTIC_RUN_ID)",
                     h.rank, pids[h.rank], h.pid, table[h.rank].host, h.host);
        if (err[0]) {
            boot_reply rep;
            memset(&rep, 0, sizeof rep);
            rep.status = 1;
            snprintf(rep.msg, sizeof rep.msg, "%s", err);
            reply_seal(&rep, h.mac, &id->key, NULL, 0);
            io_full(fd, &rep, sizeof rep, 1, deadline, "reply");
            close(fd);
            st = TT_ERR_MISMATCH;
            break;
        }
        fds[h.rank] = fd;
        pids[h.rank] = h.pid;
        memcpy(hmacs[h.rank], h.mac, sizeof h.mac);
        memcpy(table[h.rank].host, h.host, sizeof h.host);
        table[h.rank].port = h.port;
        got++;
    }
    hello_wait_close(&w);
    boot_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.status = st == TT_OK ? 0 : 1;
    rep.nonce = nonce;
    snprintf(rep.msg, sizeof rep.msg, "%s", err);
    for (int r = 1; r < n; r++) {
        if (!fds[r])
            continue;
        reply_seal(&rep, hmacs[r], &id->key, st == TT_OK ? table : NULL, st == TT_OK ? sizeof *table * (size_t)n : 0);
        if (io_full(fds[r], &rep, sizeof rep, 1, deadline, "reply") == TT_OK && st == TT_OK &&
            io_full(fds[r], table, sizeof *table * (size_t)n, 1, deadline, "table") == TT_OK)
            comm->ctl[r] = fds[r]; /* kept: the failure-report channel (exec_ctl.c) */
        else
            close(fds[r]);
    }
    free(fds);
    free(pids);
    free(hmacs);
    close(lfd);
    if (st != TT_OK)
        return tt_error_set(st, "rank 0: %s", err);
    id->nonce = nonce;
    return TT_OK;
}

/* A rank: hello to rank 0, then its answer.  A connection closed before any of the answer came (rank 0
 * dropped it under a flood of other connections, issue #32 item 5) is not a refusal: the rank connects
 * again and resends its hello until the deadline.  A refusal is an answer with a status. */
#define REDIAL_REFUSED_MS 1500 /* after a drop: refused this long means rank 0 is gone, not busy */
static tt_status boot_worker(tt_comm *comm, exec_boot_id *id, boot_addr *table,
                             const char *my_host, int my_port, int64_t deadline)
{
    int fd;
    char what[128];
    snprintf(what, sizeof what, "rank %d: rendezvous with rank 0 at %s:%d", comm->rank, id->host, id->port);
    job_identity_warn(id);
    boot_hello h;
    hello_init(&h, comm, id->nonce, 0);
    h.port = my_port;
    snprintf(h.host, sizeof h.host, "%s", my_host);
    hello_seal(&h, &id->key);
    boot_reply rep;
    _Static_assert(offsetof(boot_reply, status) == 0, "the status leads the reply");
    tt_status st;
    for (int redial = 0;; redial++) {
        st = redial ? connect_until(id->host, id->port, deadline, REDIAL_REFUSED_MS, &fd, what)
                    : connect_retry(id->host, id->port, deadline, &fd, what);
        if (st != TT_OK)
            return redial ? tt_error_prefix(st, "rank %d: rank 0 dropped the rendezvous connection %d time(s) before "
                                                "answering", comm->rank, redial)
                          : st;
        st = io_full(fd, &h, sizeof h, 1, deadline, what);
        if (st == TT_OK)
            st = io_full(fd, &rep.status, sizeof rep.status, 0, deadline, what);
        if (st != TT_ERR_REMOTE || exec_now_ms() >= deadline)
            break;
        close(fd); /* closed before the answer: dropped, not refused */
        if (!redial)
            TT_WARN("exec", "%s: the connection was closed before rank 0 answered (a flooded rendezvous port?): "
                    "connecting again", what);
        struct timespec ts = {0, (20 + (long)(getpid() % 40)) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (st == TT_OK)
        st = io_full(fd, (char *)&rep + sizeof rep.status, sizeof rep - sizeof rep.status, 0, deadline, what);
    if (st == TT_OK && rep.status != 0) {
        rep.msg[sizeof rep.msg - 1] = '\0';
        int proven = reply_proven(&rep, h.mac, &id->key, NULL, 0);
        st = tt_error_set(TT_ERR_MISMATCH, "rank %d: rank 0 refused the rendezvous: %s%s%s%s", comm->rank, rep.msg,
                          proven ? "" : " (this rank's secret: ", proven ? "" : id->key.source,
                          proven ? "" : "; the refusal does not prove it)");
    } else if (st == TT_OK) {
        st = io_full(fd, table, sizeof *table * (size_t)comm->nranks, 0, deadline, what);
        if (st == TT_OK && !reply_proven(&rep, h.mac, &id->key, table, sizeof *table * (size_t)comm->nranks))
            st = tt_error_set(TT_ERR_MISMATCH, "%s: the answer does not prove this job's secret (this rank's: %s): "
                              "not the job's rank 0 (another program on the port?) or rank 0 has another secret: %s",
                              what, id->key.source, exec_auth_hint(&id->key));
    }
    if (st == TT_OK) {
        comm->ctl[0] = fd; /* kept: the failure-report channel (exec_ctl.c) */
        id->nonce = rep.nonce; /* the job's, from now on */
    } else {
        close(fd);
    }
    return st;
}

/* Whether RLIMIT_NOFILE allows `need` descriptors (raised to the hard limit when it does not). */
static void fd_room(int need)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)need) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)need ? (rlim_t)need : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

tt_status exec_tcp_bootstrap(tt_comm *comm, exec_boot_id *id)
{
    int n = comm->nranks, me = comm->rank;
    int64_t deadline = exec_now_ms() + comm->timeout_ms;
    boot_addr *table = calloc((size_t)n, sizeof *table);
    if (!table)
        return tt_error_set(TT_ERR_NOMEM, "rendezvous table");
    tt_status st = exec_auth_load(id); /* the job secret that hellos and replies prove */
    if (st != TT_OK) {
        free(table);
        return tt_error_prefix(st, "rank %d", me);
    }
    fd_room(2 * n + 256); /* a data and a control connection per peer */
    /* data listener on the address that reaches the rendezvous */
    char my_host[64];
    snprintf(my_host, sizeof my_host, "%s", id->host);
    if (me != 0) {
        /* learn the local address towards rank 0 without a connection */
        struct sockaddr_storage ss;
        socklen_t sl;
        if (resolve(id->host, id->port, &ss, &sl) == 0) {
            int ufd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (ufd >= 0 && connect(ufd, (struct sockaddr *)&ss, sl) == 0)
                local_host_of(ufd, my_host, sizeof my_host, id->host);
            if (ufd >= 0)
                close(ufd);
        }
    }
    int lfd, lport;
    st = listen_on(my_host, 0, &lfd, &lport);
    if (st != TT_OK) {
        exec_auth_forget(id);
        free(table);
        return tt_error_prefix(st, "rank %d: data listener", me);
    }
    if (me == 0) {
        snprintf(table[0].host, sizeof table[0].host, "%s", my_host);
        table[0].port = lport;
        st = boot_master(comm, id, table, deadline);
    } else {
        /* a little longer than rank 0's deadline, so that rank 0's verdict
         * (e.g. "rank 2 never connected") arrives before this rank gives up */
        st = boot_worker(comm, id, table, my_host, lport, deadline + 1000);
    }
    /* mesh: connect to lower ranks, accept higher ranks.  Each pair gets a data connection and, between
     * ranks other than 0 (whose rendezvous sockets serve), a control connection: failure reports go from
     * every rank to every rank directly, so a stopped rank 0 cannot hide who is stuck (exec_ctl.c) */
    for (int p = 0; st == TT_OK && p < me; p++) {
        for (int kind = 0; st == TT_OK && kind < (p > 0 ? 2 : 1); kind++) {
            char what[128];
            int fd;
            snprintf(what, sizeof what, "rank %d: connecting to rank %d", me, p);
            table[p].host[sizeof table[p].host - 1] = '\0';
            st = connect_retry(table[p].host, table[p].port, deadline, &fd, what);
            if (st != TT_OK)
                break;
            boot_hello h;
            hello_init(&h, comm, id->nonce, kind);
            hello_seal(&h, &id->key);
            st = io_full(fd, &h, sizeof h, 1, deadline, what);
            if (st == TT_OK && kind == 1)
                comm->ctl[p] = fd;
            else if (st == TT_OK && !(comm->conns[p] = exec_tcp_conn_new(fd, p)))
                st = tt_error_set(TT_ERR_NOMEM, "tcp connection");
            if (st != TT_OK)
                close(fd);
        }
    }
    hello_wait w;
    memset(&w, 0, sizeof w);
    w.lfd = lfd;
    char where[64];
    snprintf(where, sizeof where, "rank %d: data listener", me);
    w.where = where;
    int want = (n - 1 - me) * (me > 0 ? 2 : 1), have = 0;
    while (st == TT_OK && have < want) {
        int fd;
        boot_hello h;
        st = next_hello(&w, deadline, hello_limit(comm), &fd, &h);
        if (st != TT_OK) {
            char miss[256] = "";
            size_t len = 0;
            for (int r = me + 1; r < n; r++)
                if (!comm->conns[r] || (me > 0 && comm->ctl[r] < 0))
                    len += (size_t)snprintf(miss + len, len < sizeof miss ? sizeof miss - len : 0,
                                            "%s%d", len ? ", " : "", r);
            st = tt_error_set(TT_ERR_TIMEOUT, "rank %d: rank(s) %s did not connect before the deadline",
                              me, miss);
            break;
        }
        if (!hello_proven(&h, &id->key)) {
            TT_WARN("exec", "rank %d: refused a connection on the data listener that proves a different job secret "
                    "(claims rank %d, pid %d)", me, h.rank, h.pid);
            close(fd);
            continue;
        }
        if (h.nonce != id->nonce || h.rank <= me || h.rank >= n || h.kind < 0 || h.kind > (me > 0 ? 1 : 0) ||
            (h.kind == 0 ? comm->conns[h.rank] != NULL : comm->ctl[h.rank] >= 0)) {
            TT_WARN("exec", "rank %d: ignoring a stray connection on the data listener (claims rank %d, %s)", me,
                    h.rank, h.nonce != id->nonce ? "another job" : "not expected");
            close(fd);
            continue;
        }
        if (h.kind == 1)
            comm->ctl[h.rank] = fd;
        else if (!(comm->conns[h.rank] = exec_tcp_conn_new(fd, h.rank))) {
            close(fd);
            st = tt_error_set(TT_ERR_NOMEM, "tcp connection");
        }
        have++;
    }
    hello_wait_close(&w);
    close(lfd);
    free(table);
    exec_auth_forget(id);
    return st;
}
