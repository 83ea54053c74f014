/* topo_scan_gdr.c - the gdr probe: can a NIC read and write GPU memory directly (GPUDirect RDMA)?
 * A peer-memory kernel module (nvidia_peermem, or the older nv_peer_mem / nv_mem_nc) or, for dma-buf
 * import, a kernel >= 5.12; read from the scan root's /sys/module, /sys/kernel/mm/memory_peers and
 * /proc/sys/kernel/osrelease.  The result goes on the nets after all probes (docs/scan.md). */
#include "topo_scan_internal.h"

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

tt_probe_state scan_probe_gdr(scan_ctx *c)
{
    char p[PATH_MAX], v[128];
    struct stat st;
    int maj = 0, min = 0;

    scan_path(c, p, sizeof p, "/sys/module/nvidia_peermem");
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
        c->gdr_peermem = 1;
        scan_fmt(c->gdr_how, sizeof c->gdr_how, "nvidia_peermem");
    } else {
        scan_path(c, p, sizeof p, "/sys/kernel/mm/memory_peers/nv_mem/version");
        if (scan_read_str(p, v, sizeof v) == 0) {
            c->gdr_peermem = 1;
            scan_fmt(c->gdr_how, sizeof c->gdr_how, "nv_peer_mem");
        } else {
            scan_path(c, p, sizeof p, "/sys/kernel/mm/memory_peers/nv_mem_nc/version");
            if (scan_read_str(p, v, sizeof v) == 0) {
                c->gdr_peermem = 1;
                scan_fmt(c->gdr_how, sizeof c->gdr_how, "nv_mem_nc");
            } else {
                scan_path(c, p, sizeof p, "/sys/module");
                /* no module directory at all: cannot tell */
                c->gdr_peermem = stat(p, &st) == 0 ? 0 : -1;
                scan_fmt(c->gdr_how, sizeof c->gdr_how, "%s",
                         c->gdr_peermem == 0 ? "no peer-memory module loaded" : "/sys/module not readable");
            }
        }
    }
    scan_path(c, p, sizeof p, "/proc/sys/kernel/osrelease");
    if (scan_read_str(p, v, sizeof v) == 0 && sscanf(v, "%d.%d", &maj, &min) == 2)
        c->kernel_dmabuf = (maj > 5 || (maj == 5 && min >= 12)) ? 1 : 0;
    else
        c->kernel_dmabuf = -1;
    scan_note(c, "peer memory: %s; kernel dma-buf import: %s", c->gdr_how,
              c->kernel_dmabuf < 0 ? "unknown" : c->kernel_dmabuf ? "yes (>= 5.12)" : "no (< 5.12)");
    c->probe->seen = c->gdr_peermem > 0;
    return c->gdr_peermem < 0 ? TT_PROBE_PARTIAL : TT_PROBE_OK;
}
