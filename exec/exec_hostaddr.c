/* exec_hostaddr.c - an address of this host that other hosts can reach, for
 * rendezvous ids made without a user-given address (tt_comm_init_mpi in
 * tt_exec_mpi.h uses it when the ranks span several hosts).
 *
 * Order (an engineering choice, see docs/exec.md): the source address the
 * kernel would use towards the default route (found with a connected UDP
 * socket, which sends nothing), else the first interface that is up, not
 * loopback, with an IPv4 address, then IPv6, else 127.0.0.1 (single host). */
#include "exec_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* numeric form of a non-loopback, non-wildcard address, or 0 */
static int usable(const struct sockaddr *sa, char *buf, size_t n)
{
    socklen_t sl;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        uint32_t a = ntohl(s4->sin_addr.s_addr);
        if (a == 0 || (a >> 24) == 127)
            return 0;
        sl = sizeof *s4;
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) || IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ||
            IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr)) /* link-local needs a scope id: not portable */
            return 0;
        sl = sizeof *s6;
    } else {
        return 0;
    }
    return getnameinfo(sa, sl, buf, (socklen_t)n, NULL, 0, NI_NUMERICHOST) == 0;
}

/* the local end of a UDP "connection" towards an address outside every local
 * subnet: the kernel picks the default route's source address */
static int default_route_source(int family, char *buf, size_t n)
{
    struct sockaddr_storage dst = {0};
    socklen_t dl;
    if (family == AF_INET) {
        struct sockaddr_in *d = (struct sockaddr_in *)&dst;
        d->sin_family = AF_INET;
        d->sin_port = htons(9);                        /* discard; nothing is sent */
        inet_pton(AF_INET, "192.0.2.1", &d->sin_addr); /* TEST-NET-1 (RFC 5737) */
        dl = sizeof *d;
    } else {
        struct sockaddr_in6 *d = (struct sockaddr_in6 *)&dst;
        d->sin6_family = AF_INET6;
        d->sin6_port = htons(9);
        inet_pton(AF_INET6, "2001:db8::1", &d->sin6_addr); /* documentation prefix (RFC 3849) */
        dl = sizeof *d;
    }
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_storage me;
    socklen_t ml = sizeof me;
    int ok = connect(fd, (struct sockaddr *)&dst, dl) == 0 &&
             getsockname(fd, (struct sockaddr *)&me, &ml) == 0 && usable((struct sockaddr *)&me, buf, n);
    close(fd);
    return ok;
}

tt_status tt_host_address(char *buf, size_t n)
{
    if (!buf || n < 2)
        return tt_error_set(TT_ERR_INVALID, "tt_host_address: buffer too small");
    char tmp[NI_MAXHOST];
    if (default_route_source(AF_INET, tmp, sizeof tmp) || default_route_source(AF_INET6, tmp, sizeof tmp))
        goto found;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) == 0) {
        for (int fam = 0; fam < 2; fam++)
            for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
                if (i->ifa_addr && (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK) &&
                    i->ifa_addr->sa_family == (fam ? AF_INET6 : AF_INET) && usable(i->ifa_addr, tmp, sizeof tmp)) {
                    freeifaddrs(ifs);
                    goto found;
                }
        freeifaddrs(ifs);
    }
    snprintf(tmp, sizeof tmp, "127.0.0.1");
    TT_INFO("exec", "tt_host_address: no non-loopback address found, using 127.0.0.1");
found:
    if (strlen(tmp) >= n)
        return tt_error_set(TT_ERR_LIMIT, "tt_host_address: address '%s' does not fit %zu bytes", tmp, n);
    snprintf(buf, n, "%s", tmp);
    return TT_OK;
}
