/* exec_transport_shm.c - host shared-memory transport: one single-producer/
 * single-consumer byte ring per directed pair of ranks.  Head and tail are
 * free-running 64-bit byte counters; the producer publishes with a release
 * store and the consumer reads with an acquire load, so no lock is taken on
 * the data path.
 *
 * Thread ranks: the rings live in the process (exec_world.rings).
 * Process ranks on one host: after the TCP rendezvous, each pair of ranks on
 * the same machine (same boot id and host name) moves its data to a POSIX
 * shared-memory segment holding the pair's two rings.  The lower rank creates
 * the segment (shm_open + posix_fallocate, so a full /dev/shm is an error now,
 * not a SIGBUS later), the higher rank maps it and acknowledges over TCP, and
 * both unlink the name at once: from then on no name is left in /dev/shm
 * whatever happens to the processes (kill -9 included).  A creator killed
 * before its peer opened the name leaves it; the next run on the host removes
 * such names once their creator's pid is gone (shm_clean_orphans_once).  Every error
 * path before that unlinks too, the opener's included: a creator killed before its offer
 * arrived leaves a name that its surviving peer knows and removes (issue #32 item 12).
 * The opener accepts only the one name of this job's form for the pair
 * ("/tt-<nonce>-<creator pid>-<lo>-<hi>") and a segment of its own user and of the
 * expected size: a peer that offers anything else is refused, and nothing else is
 * ever opened, mapped or unlinked (issue #32 item 10).  The TCP connection stays open as the
 * liveness channel (a peer's hang-up is seen by check_peer).  Both sides map
 * with MAP_POPULATE (thread ranks: the rings are written once at creation), so
 * the page tables are filled during setup and the first collective does not
 * take a page fault per 4 KiB of ring. */
#include "exec_internal.h"
#include "exec_test_hooks.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Every send_some is one record of a line channel: SHM_LINES cache lines per direction, each with
 * SHM_LINE_BYTES of payload and a tag written last (release) that says which line of the stream it
 * is (its 1-based number, 32 bits), whether it is inline (the bytes are in the line) or bulk (the
 * bytes went to the byte ring before the tag), and how many bytes.  A small message (up to
 * SHM_INLINE_MAX bytes) is written into lines only: the receiver polls the line itself and finds
 * flag and payload in the one cache line it fetches - one cross-core miss per message instead of
 * the counter's line and then the data's (issue #34 item 4: small AllReduces between processes).
 * A large one goes to the byte ring and one line describes it, so bulk transfers keep their
 * streaming copies.  The consumer counts the lines it has finished (lines_done, read by the
 * producer only when its copy says the channel is full).  The stream stays a byte stream: a
 * receive may take part of a line or of a bulk record and the rest later. */
#define SHM_LINES 64
#define SHM_LINE_BYTES 56
#define SHM_INLINE_MAX 256
#define TAG_BULK (1ull << 31)
#define RECV_SPINS 64

#if defined(__x86_64__) || defined(__i386__)
#define cpu_pause() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_pause() __asm__ __volatile__("yield")
#else
#define cpu_pause() ((void)0)
#endif

typedef struct {
    unsigned char b[SHM_LINE_BYTES];
    _Atomic uint64_t tag; /* (line number << 32) | TAG_BULK? | bytes; 0 = never written */
} shm_line;

_Static_assert(sizeof(shm_line) == 64, "a line channel entry is one cache line");

typedef struct {
    _Alignas(64) atomic_uint_fast64_t head;       /* bulk bytes written */
    _Alignas(64) atomic_uint_fast64_t tail;       /* bulk bytes read */
    _Alignas(64) atomic_uint_fast64_t lines_done; /* lines the consumer finished */
    _Alignas(64) atomic_uint_fast64_t lines_sent; /* lines written (exec_shm_ring_used and setup only) */
    _Alignas(64) size_t cap;                      /* of data: a power of two */
    _Alignas(64) shm_line lines[SHM_LINES];
    unsigned char data[];
} shm_ring;

typedef struct {
    exec_conn base;
    shm_ring *tx, *rx;
    /* Only this side writes its own counters, so it keeps them here and never reads the shared line
     * the peer polls; of the peer's counters (they only grow) it keeps the value last read, which
     * can only understate the room, and reads the peer's line again only when that copy says too
     * little. */
    uint64_t head_mine, tail_seen, lines_mine, done_seen; /* producer side (tx) */
    uint64_t tail_mine, lines_read;                       /* consumer side (rx) */
    size_t line_off;                                      /* bytes of the current rx line taken */
    int spin;           /* a small receive with nothing there waits here briefly (see shm_recv_some) */
    void *map;          /* process mode: the mapped segment */
    size_t map_len;
    exec_conn *tcp;     /* process mode: liveness channel */
    pid_t pid;
} shm_conn;

void *exec_shm_ring_new(size_t cap)
{
    size_t span = (sizeof(shm_ring) + cap + 63) & ~(size_t)63;
    shm_ring *r = aligned_alloc(64, span);
    if (!r)
        return NULL;
    memset(r, 0, span); /* touch every page now: the first collective pays no page faults */
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->lines_done, 0);
    atomic_init(&r->lines_sent, 0);
    r->cap = cap;
    return r;
}

/* bytes written and not yet read: the bulk bytes and the payload of the inline lines not finished */
size_t exec_shm_ring_used(const void *ring)
{
    const shm_ring *r = ring;
    uint64_t done = atomic_load_explicit(&r->lines_done, memory_order_acquire);
    uint64_t sent = atomic_load_explicit(&r->lines_sent, memory_order_acquire);
    size_t used = (size_t)(atomic_load_explicit(&r->head, memory_order_acquire) -
                           atomic_load_explicit(&r->tail, memory_order_acquire));
    for (uint64_t l = done; l < sent && l < done + SHM_LINES; l++) {
        uint64_t tag = atomic_load_explicit(&r->lines[l % SHM_LINES].tag, memory_order_acquire);
        if ((uint32_t)(tag >> 32) == (uint32_t)(l + 1) && !(tag & TAG_BULK))
            used += (size_t)(tag & (TAG_BULK - 1));
    }
    return used;
}

/* the local copies of the counters, from the rings as they are when the connection is made */
static void shm_conn_counters(shm_conn *c)
{
    c->head_mine = atomic_load_explicit(&c->tx->head, memory_order_acquire);
    c->tail_seen = atomic_load_explicit(&c->tx->tail, memory_order_acquire);
    c->lines_mine = atomic_load_explicit(&c->tx->lines_sent, memory_order_acquire);
    c->done_seen = atomic_load_explicit(&c->tx->lines_done, memory_order_acquire);
    c->tail_mine = atomic_load_explicit(&c->rx->tail, memory_order_acquire);
    c->lines_read = atomic_load_explicit(&c->rx->lines_done, memory_order_acquire);
    c->line_off = 0;
}

/* lines the producer may write now */
static size_t free_lines(shm_conn *s, size_t want)
{
    size_t f = SHM_LINES - (size_t)(s->lines_mine - s->done_seen);
    if (f < want) {
        s->done_seen = atomic_load_explicit(&s->tx->lines_done, memory_order_acquire);
        f = SHM_LINES - (size_t)(s->lines_mine - s->done_seen);
    }
    return f;
}

static void put_tag(shm_conn *s, shm_line *l, uint64_t flags_len)
{
    s->lines_mine++;
    atomic_store_explicit(&l->tag, ((uint64_t)(uint32_t)s->lines_mine << 32) | flags_len, memory_order_release);
    atomic_store_explicit(&s->tx->lines_sent, s->lines_mine, memory_order_relaxed);
}

static tt_status shm_send_some(exec_conn *c, const void *buf, size_t len, size_t *moved)
{
    shm_conn *s = (shm_conn *)c;
    shm_ring *r = s->tx;
    *moved = 0;
    if (len == 0)
        return TT_OK;
    if (len <= SHM_INLINE_MAX) {
        size_t nl = free_lines(s, (len + SHM_LINE_BYTES - 1) / SHM_LINE_BYTES);
        const unsigned char *p = buf;
        while (nl-- > 0 && *moved < len) {
            size_t k = len - *moved < SHM_LINE_BYTES ? len - *moved : SHM_LINE_BYTES;
            shm_line *l = &r->lines[s->lines_mine % SHM_LINES];
            memcpy(l->b, p + *moved, k);
            put_tag(s, l, k);
            *moved += k;
        }
        return TT_OK;
    }
    if (free_lines(s, 1) == 0)
        return TT_OK;
    uint64_t head = s->head_mine;
    size_t room = r->cap - (size_t)(head - s->tail_seen);
    if (room < len) {
        s->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
        room = r->cap - (size_t)(head - s->tail_seen);
    }
    size_t n = len < room ? len : room;
    if (n > TAG_BULK - 1)
        n = TAG_BULK - 1;
    if (n) {
        size_t off = (size_t)head & (r->cap - 1);
        size_t first = r->cap - off < n ? r->cap - off : n;
        memcpy(r->data + off, buf, first);
        memcpy(r->data, (const char *)buf + first, n - first);
        atomic_store_explicit(&r->head, head + n, memory_order_release);
        s->head_mine = head + n;
        put_tag(s, &r->lines[s->lines_mine % SHM_LINES], TAG_BULK | n);
    }
    *moved = n;
    return TT_OK;
}

static tt_status shm_recv_some(exec_conn *c, void *buf, size_t len, size_t *moved)
{
    shm_conn *s = (shm_conn *)c;
    shm_ring *r = s->rx;
    unsigned char *out = buf;
    size_t got = 0;
    while (got < len) {
        shm_line *l = &r->lines[s->lines_read % SHM_LINES];
        uint64_t tag = atomic_load_explicit(&l->tag, memory_order_acquire);
        /* A small receive (a header, a small collective's data) that finds nothing waits for the
         * line right here, up to RECV_SPINS pauses, before it returns empty-handed: the progress
         * loop between two looks (items, headers, clock) costs more than the line takes to come
         * (8 B AllReduce of 2 processes: 0.37 -> 0.29 us per call).  Not when this process's CPUs
         * are shared by more ranks than there are (exec_spin.c: the peer needs this CPU); a
         * bulk receive never waits. */
        for (int k = 0; got == 0 && s->spin && len <= SHM_INLINE_MAX && k < RECV_SPINS &&
                        (uint32_t)(tag >> 32) != (uint32_t)(s->lines_read + 1);
             k++) {
            cpu_pause();
            tag = atomic_load_explicit(&l->tag, memory_order_acquire);
        }
        if ((uint32_t)(tag >> 32) != (uint32_t)(s->lines_read + 1))
            break; /* not written yet */
        size_t rec = (size_t)(tag & (TAG_BULK - 1)), take = rec - s->line_off;
        if (take > len - got)
            take = len - got;
        if (tag & TAG_BULK) {
            size_t off = (size_t)s->tail_mine & (r->cap - 1);
            size_t first = r->cap - off < take ? r->cap - off : take;
            memcpy(out + got, r->data + off, first);
            memcpy(out + got + first, r->data, take - first);
            s->tail_mine += take;
            atomic_store_explicit(&r->tail, s->tail_mine, memory_order_release);
        } else {
            memcpy(out + got, l->b + s->line_off, take);
        }
        got += take;
        s->line_off += take;
        if (s->line_off == rec) {
            s->line_off = 0;
            s->lines_read++;
            atomic_store_explicit(&r->lines_done, s->lines_read, memory_order_release);
        }
    }
    *moved = got;
    return TT_OK;
}

static int shm_poll_fd(exec_conn *c) { return -1; }


static void shm_close(exec_conn *c)
{
    shm_conn *s = (shm_conn *)c;
    if (s->map)
        munmap(s->map, s->map_len);
    if (s->tcp)
        s->tcp->tp->close(s->tcp);
    free(s);
}

static tt_status shm_check_peer(exec_conn *c)
{
    shm_conn *s = (shm_conn *)c;
    if (!s->tcp)
        return TT_OK;
    struct pollfd p = {exec_tcp_conn_fd(s->tcp), POLLRDHUP, 0};
    if ((poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) ||
        (s->pid > 0 && kill(s->pid, 0) != 0 && errno == ESRCH))
        return tt_error_set(TT_ERR_REMOTE, "lost rank %d (process %d died or aborted)", c->peer, (int)s->pid);
    return TT_OK;
}

static tt_status shm_connect_all(tt_comm *comm)
{
    exec_world *w = comm->world;
    if (!w)
        return tt_error_set(TT_ERR_INTERNAL, "shm transport without a process-local world");
    for (int p = 0; p < comm->nranks; p++) {
        if (p == comm->rank)
            continue;
        shm_conn *c = calloc(1, sizeof *c);
        if (!c)
            return tt_error_set(TT_ERR_NOMEM, "rank %d: shm connection to rank %d", comm->rank, p);
        c->base.tp = &exec_transport_shm;
        c->base.peer = p;
        c->tx = w->rings[(size_t)comm->rank * w->nranks + p];
        c->rx = w->rings[(size_t)p * w->nranks + comm->rank];
        shm_conn_counters(c);
        c->spin = exec_rank_has_cpu(comm);
        comm->conns[p] = &c->base;
    }
    return TT_OK;
}

static int shm_can_connect(const tt_comm *comm, int peer, int forced);
static tt_status shm_upgrade(tt_comm *comm, const unsigned char *want, int forced);

const exec_transport exec_transport_shm = {
    .name = "shm",
    .connect_all = shm_connect_all,
    .can_connect = shm_can_connect,
    .upgrade = shm_upgrade,
    .send_some = shm_send_some,
    .recv_some = shm_recv_some,
    .poll_fd = shm_poll_fd,
    .check_peer = shm_check_peer,
    .close = shm_close,
};

/* ---- process mode ------------------------------------------------------ */

typedef struct {
    int32_t status; /* 0 = segment ready, else no shm for this pair */
    char name[60];
    char err[192];
} shm_offer;

static size_t ring_span(size_t cap) { return (sizeof(shm_ring) + cap + 63) & ~(size_t)63; }

/* blocking setup transfer over the pair's TCP connection (exec_tcp_setup_io) */
static tt_status io(exec_conn *c, void *buf, size_t len, int is_send, int64_t deadline, int me)
{
    return exec_tcp_setup_io(c, buf, len, is_send, deadline, me, "shared-memory");
}

/* Lower rank of a pair: create, size, map and initialise the segment. */
static tt_status create_segment(const char *name, size_t cap, void **map, size_t *len)
{
    *len = 2 * ring_span(cap);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        return tt_error_set(TT_ERR_SYSTEM, "shm_open(%s): %s", name, strerror(errno));
    int e = posix_fallocate(fd, 0, (off_t)*len);
    if (e) {
        close(fd);
        shm_unlink(name);
        return tt_error_set(TT_ERR_SYSTEM,
                            "/dev/shm has no room for %zu bytes (%s): a container's /dev/shm may be too small; "
                            "enlarge it, lower TOPOTUNE_SHM_RING_BYTES or set TOPOTUNE_TRANSPORT=tcp",
                            *len, strerror(e));
    }
    *map = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0); /* pre-faulted: see top */
    close(fd);
    if (*map == MAP_FAILED) {
        shm_unlink(name);
        return tt_error_set(TT_ERR_SYSTEM, "mmap of %s: %s", name, strerror(errno));
    }
    for (int i = 0; i < 2; i++) {
        shm_ring *r = (shm_ring *)((char *)*map + i * ring_span(cap));
        atomic_init(&r->head, 0);
        atomic_init(&r->tail, 0);
        atomic_init(&r->lines_done, 0);
        atomic_init(&r->lines_sent, 0);
        r->cap = cap;
    }
    return TT_OK;
}

/* The only name a pair's segment can have: the job's nonce, the creator's pid, the pair's ranks. */
static void pair_name(char *out, size_t n, uint64_t nonce, int creator_pid, int lo, int hi)
{
    snprintf(out, n, "/tt-%016llx-%d-%d-%d", (unsigned long long)nonce, creator_pid, lo, hi);
}

/* Removes the pair's name where it is there and ours (a peer killed after creating it). */
static void unlink_if_ours(const char *name, int me, int peer)
{
    char path[128];
    struct stat sb;
    snprintf(path, sizeof path, "/dev/shm%s", name);
    if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() && shm_unlink(name) == 0)
        TT_WARN("exec", "rank %d: removed /dev/shm%s (%lld bytes), the shared-memory segment that rank %d made for this "
                "pair: the setup failed", me, name, (long long)sb.st_size, peer);
}

/* *ours: the name is a segment of this user (only then may the opener unlink it) */
static tt_status open_segment(const char *name, size_t cap, void **map, size_t *len, int *ours)
{
    *len = 2 * ring_span(cap);
    *ours = 0;
    int fd = shm_open(name, O_RDWR | O_NOFOLLOW, 0600);
    if (fd < 0)
        return tt_error_set(TT_ERR_SYSTEM, "shm_open(%s): %s", name, strerror(errno));
    struct stat stt;
    const char *bad = NULL;
    if (fstat(fd, &stt) != 0)
        bad = strerror(errno);
    else if (!S_ISREG(stt.st_mode))
        bad = "not a regular file";
    else if (stt.st_uid != geteuid())
        bad = "it belongs to another user";
    *ours = !bad;
    if (bad) {
        close(fd);
        return tt_error_set(TT_ERR_MISMATCH, "segment %s: %s (uid %u; this rank runs as uid %u): refused, not mapped",
                            name, bad, (unsigned)stt.st_uid, (unsigned)geteuid());
    }
    if ((size_t)stt.st_size != *len) {
        close(fd);
        return tt_error_set(TT_ERR_MISMATCH, "segment %s has the wrong size (%lld bytes, expected %zu: ranks use "
                            "different TOPOTUNE_SHM_RING_BYTES?)", name, (long long)stt.st_size, *len);
    }
    *map = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0); /* pre-faulted: see top */
    close(fd);
    if (*map == MAP_FAILED)
        return tt_error_set(TT_ERR_SYSTEM, "mmap of %s: %s", name, strerror(errno));
    return TT_OK;
}

static tt_status wrap(tt_comm *comm, int p, void *map, size_t len, size_t cap, pid_t pid)
{
    shm_conn *c = calloc(1, sizeof *c);
    if (!c) {
        munmap(map, len);
        return tt_error_set(TT_ERR_NOMEM, "shm connection");
    }
    shm_ring *lo_to_hi = map, *hi_to_lo = (shm_ring *)((char *)map + ring_span(cap));
    int lower = comm->rank < p;
    c->base.tp = &exec_transport_shm;
    c->base.peer = p;
    c->tx = lower ? lo_to_hi : hi_to_lo;
    c->rx = lower ? hi_to_lo : lo_to_hi;
    shm_conn_counters(c);
    c->spin = exec_rank_has_cpu(comm); /* after the host exchange: this host's ranks are known */
    c->map = map;
    c->map_len = len;
    c->tcp = comm->conns[p];
    c->pid = pid;
    comm->conns[p] = &c->base;
    return TT_OK;
}

/* Names of segments whose creator is gone (kill -9 between shm_open and its peer's unlink, e.g. during a
 * long posix_fallocate of a large ring) are removed by the next run on the host: the name holds the
 * creator's pid ("/tt-<nonce>-<pid>-<lo>-<hi>"); a segment older than SHM_STALE_S whose pid no longer exists
 * cannot be in anybody's setup any more (setups take far less). */
#define SHM_STALE_S 10
static void shm_clean_orphans_once(void)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    time_t now = time(NULL);
    while (d && (e = readdir(d)) != NULL) {
        unsigned long long nonce;
        int pid, lo, hi, used = 0;
        if (sscanf(e->d_name, "tt-%16llx-%d-%d-%d%n", &nonce, &pid, &lo, &hi, &used) != 4 ||
            e->d_name[used] != '\0' || pid <= 0)
            continue;
        struct stat sb;
        char path[300];
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        if (stat(path, &sb) != 0 || sb.st_uid != geteuid() || now - sb.st_mtime < SHM_STALE_S)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char name[300];
        snprintf(name, sizeof name, "/%s", e->d_name);
        if (shm_unlink(name) == 0)
            TT_WARN("exec", "removed /dev/shm/%s (%lld bytes): a shared-memory segment left by pid %d, which is gone",
                    e->d_name, (long long)sb.st_size, pid);
    }
    if (d)
        closedir(d);
}

static pthread_once_t shm_clean_once = PTHREAD_ONCE_INIT;

/* can_connect: the pair is on one machine (same boot id and host name, see
 * exec_host_exchange). */
static int shm_can_connect(const tt_comm *comm, int peer, int forced)
{
    (void)forced;
    return comm->node[peer] == comm->node[comm->rank];
}

/* upgrade: every wanted pair gets a segment; any failure is an error. */
static tt_status shm_upgrade(tt_comm *comm, const unsigned char *want, int forced)
{
    (void)forced;
    if (!comm->boot || !comm->peer_pid)
        return tt_error_set(TT_ERR_INTERNAL, "shm upgrade without the rendezvous and host exchange");
    pthread_once(&shm_clean_once, shm_clean_orphans_once);
    uint64_t nonce = ((const exec_boot_id *)comm->boot)->nonce;
    int n = comm->nranks, me = comm->rank;
    int64_t deadline = exec_now_ms() + comm->timeout_ms;
    size_t cap = 1u << 20;
    const char *rb = tt_setting("TOPOTUNE_SHM_RING_BYTES");
    uint64_t v;
    if (rb && tt_parse_size(rb, &v) == TT_OK && v >= 4096 && v <= (1ull << 30) && !(v & (v - 1)))
        cap = (size_t)v;
    void **maps = calloc((size_t)n, sizeof *maps);
    char (*names)[60] = calloc((size_t)n, sizeof *names);
    if (!maps || !names) {
        free(maps);
        free(names);
        return tt_error_set(TT_ERR_NOMEM, "shared-memory setup");
    }
    size_t len = 2 * ring_span(cap);
    tt_status st = TT_OK;
#define LOCAL(p) (want[p])
    /* 2. lower rank of each local pair offers a segment */
    for (int p = me + 1; st == TT_OK && p < n; p++) {
        if (!LOCAL(p))
            continue;
        shm_offer off = {0, "", ""};
        pair_name(names[p], sizeof names[p], nonce, (int)getpid(), me, p);
        size_t l;
        if (create_segment(names[p], cap, &maps[p], &l) != TT_OK) {
            off.status = 1;
            snprintf(off.err, sizeof off.err, "%s", tt_error_message());
            names[p][0] = '\0';
            st = tt_error_prefix(TT_ERR_SYSTEM, "rank %d: shared memory with rank %d", me, p);
        } else {
            snprintf(off.name, sizeof off.name, "%s", names[p]);
            exec_test_shm_offer(off.name, sizeof off.name, l); /* NULL hook outside the tests */
        }
        tt_status s2 = io(comm->conns[p], &off, sizeof off, 1, deadline, me);
        if (st == TT_OK)
            st = s2;
    }
    /* 3. higher rank maps and acknowledges */
    for (int p = 0; st == TT_OK && p < me; p++) {
        if (!LOCAL(p))
            continue;
        shm_offer off;
        st = io(comm->conns[p], &off, sizeof off, 0, deadline, me);
        if (st != TT_OK)
            break;
        off.name[sizeof off.name - 1] = off.err[sizeof off.err - 1] = '\0';
        size_t l;
        char ack = 0, expect[60];
        int ours = 0;
        pair_name(expect, sizeof expect, nonce, comm->peer_pid[p], p, me);
        if (off.status != 0) {
            st = tt_error_set(TT_ERR_REMOTE, "rank %d: rank %d could not set up shared memory: %s", me, p, off.err);
        } else if (strcmp(off.name, expect)) { /* never open or unlink a name the peer chose */
            for (char *q = off.name; *q; q++)
                if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e)
                    *q = '?';
            st = tt_error_set(TT_ERR_MISMATCH, "rank %d: rank %d offered the shared-memory segment '%s', which is not "
                              "this job's name for the pair ('%s'): refused, nothing opened or removed", me, p,
                              off.name, expect);
        } else if (open_segment(off.name, cap, &maps[p], &l, &ours) != TT_OK) {
            st = tt_error_prefix(TT_ERR_SYSTEM, "rank %d: shared memory with rank %d", me, p);
        } else {
            ack = 1;
        }
        /* the name is no longer needed by anybody: unlinked here too, so that a creator killed
         * before its own unlink (step 4) leaves nothing behind */
        if (ours)
            shm_unlink(off.name);
        tt_status s2 = io(comm->conns[p], &ack, 1, 1, deadline, me);
        if (st == TT_OK)
            st = s2;
    }
    /* 4. lower rank: acknowledged -> unlink the name (also on every error) */
    for (int p = me + 1; p < n; p++) {
        if (!names[p][0])
            continue;
        char ack = 0;
        if (st == TT_OK) {
            st = io(comm->conns[p], &ack, 1, 0, deadline, me);
            if (st == TT_OK && !ack)
                st = tt_error_set(TT_ERR_REMOTE, "rank %d: rank %d could not map the shared memory", me, p);
        }
        shm_unlink(names[p]);
    }
    /* the opener's side of a failure: a lower rank that died between creating its segment and the offer
     * (or before its own unlink) leaves a name that only this rank still knows */
    for (int p = 0; st != TT_OK && p < me; p++)
        if (LOCAL(p) && !maps[p]) {
            char expect[60];
            pair_name(expect, sizeof expect, nonce, comm->peer_pid[p], p, me);
            unlink_if_ours(expect, me, p);
        }
    /* 5. switch the local pairs over */
    for (int p = 0; p < n; p++) {
        if (!maps[p])
            continue;
        if (st == TT_OK)
            st = wrap(comm, p, maps[p], len, cap, (pid_t)comm->peer_pid[p]);
        else
            munmap(maps[p], len);
    }
#undef LOCAL
    free(maps);
    free(names);
    return st;
}
