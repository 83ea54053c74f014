/*
 * exec_gpu_health.c - can this process use the machine's GPUs (tt_gpu_health_check,
 * tt_gpu_available)?  A health check must fail on a GPU node whose GPUs cannot be used, and
 * say why in words a cluster operator acts on; only a machine without any NVIDIA GPU falls back
 * to host ranks.  What CUDA says (exec_gpu_cuda_probe) is combined with what the machine shows
 * without CUDA: NVIDIA display/3D controllers on the PCI bus and the driver they are bound to,
 * the nvidia kernel module and its version, the /dev/nvidia* nodes - all read under
 * TOPOTUNE_SYSFS_ROOT (default /), so tests can stage a machine's driver state.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_gpu_health.h"
#include "exec_test_hooks.h"
#include "tt_common.h"
#include "tt_exec.h"

#define NVIDIA_VENDOR 0x10de
#define MAX_LISTED 4 /* bus ids named in a message */

typedef struct {
    char root[PATH_MAX - 64]; /* room for the paths under it */
    int npci;                          /* NVIDIA GPUs on the PCI bus, -1 unreadable */
    char busid[MAX_LISTED][16];        /* the first ones */
    int nbound_nvidia, nbound_other;   /* bound to the nvidia driver / to another one */
    char other_driver[32];             /* the other driver's name (vfio-pci, nouveau, ...) */
    int module;                        /* /sys/module/nvidia exists */
    int devnode;                       /* /dev/nvidia0 exists */
    char version[32];
} machine_view;

static void under_root(const machine_view *m, char *out, size_t n, const char *rel)
{
    const char *r = strcmp(m->root, "/") ? m->root : "";
    if ((size_t)snprintf(out, n, "%s%s", r, rel) >= n) out[0] = '\0'; /* too long: read nothing */
}

/* the first line of a small file, without its newline; 0 or -1 */
static int read_line(const char *path, char *out, size_t n)
{
    char *data = NULL;
    size_t len = 0;
    if (tt_read_file(path, 4096, &data, &len) != TT_OK) {
        tt_error_clear();
        return -1;
    }
    size_t k = strcspn(data, "\r\n");
    snprintf(out, n, "%.*s", (int)(k < n ? k : n - 1), data);
    free(data);
    return 0;
}

static long read_hex_file(const char *path)
{
    char b[32];
    if (read_line(path, b, sizeof b)) return -1;
    char *e;
    long v = strtol(b, &e, 16);
    return e == b ? -1 : v;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* NVIDIA GPUs on the PCI bus, the driver each is bound to */
static void scan_pci(machine_view *m)
{
    char dir[PATH_MAX], p[PATH_MAX + 300], link[PATH_MAX];
    under_root(m, dir, sizeof dir, "/sys/bus/pci/devices");
    DIR *d = opendir(dir);
    if (!d) {
        m->npci = -1;
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s/vendor", dir, e->d_name);
        if (read_hex_file(p) != NVIDIA_VENDOR) continue;
        snprintf(p, sizeof p, "%s/%s/class", dir, e->d_name);
        long cls = read_hex_file(p);
        if (cls < 0 || ((cls >> 8) != 0x0300 && (cls >> 8) != 0x0302)) continue; /* VGA or 3D controller */
        if (m->npci < MAX_LISTED) snprintf(m->busid[m->npci], sizeof m->busid[0], "%.15s", e->d_name);
        m->npci++;
        snprintf(p, sizeof p, "%s/%s/driver", dir, e->d_name);
        ssize_t k = readlink(p, link, sizeof link - 1);
        if (k <= 0) continue; /* no driver bound */
        link[k] = '\0';
        const char *base = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
        if (!strcmp(base, "nvidia")) {
            m->nbound_nvidia++;
        } else {
            m->nbound_other++;
            snprintf(m->other_driver, sizeof m->other_driver, "%.31s", base);
        }
    }
    closedir(d);
    /* readdir order is the file system's: name the lowest bus ids */
    qsort(m->busid, (size_t)(m->npci < MAX_LISTED ? m->npci : MAX_LISTED), sizeof m->busid[0],
          (int (*)(const void *, const void *))strcmp);
}

static void scan_machine(machine_view *m)
{
    char p[PATH_MAX + 64];
    const char *root = tt_setting("TOPOTUNE_SYSFS_ROOT");
    memset(m, 0, sizeof *m);
    if (!root || !*root) root = "/";
    if (strlen(root) >= sizeof m->root) { /* a root too long to read under: nothing seen */
        m->npci = -1;
        return;
    }
    snprintf(m->root, sizeof m->root, "%s", root);
    scan_pci(m);
    under_root(m, p, sizeof p, "/sys/module/nvidia");
    m->module = is_dir(p);
    under_root(m, p, sizeof p, "/sys/module/nvidia/version");
    if (m->module && read_line(p, m->version, sizeof m->version)) m->version[0] = '\0';
    under_root(m, p, sizeof p, "/dev/nvidia0");
    m->devnode = access(p, F_OK) == 0;
}

/* "2 NVIDIA GPU(s) on the PCI bus (0000:17:00.0, 0000:65:00.0)" */
static void gpu_list(const machine_view *m, char *out, size_t n)
{
    if (m->npci <= 0) {
        snprintf(out, n, "an NVIDIA GPU device node (/dev/nvidia0)");
        return;
    }
    size_t k = (size_t)snprintf(out, n, "%d NVIDIA GPU(s) on the PCI bus (", m->npci);
    for (int i = 0; i < m->npci && i < MAX_LISTED && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", i ? ", " : "", m->busid[i]);
    if (k < n) snprintf(out + k, n - k, "%s)", m->npci > MAX_LISTED ? ", ..." : "");
}

static void cuda_version(int v, char *out, size_t n)
{
    snprintf(out, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* why a machine with GPUs cannot use them, from the most basic cause up */
static void explain_broken(const machine_view *m, const exec_gpu_cuda_state *c, char *why, size_t n)
{
    char gpus[160], rv[16], dv[16];
    gpu_list(m, gpus, sizeof gpus);
    const char *vis = tt_setting("CUDA_VISIBLE_DEVICES"); /* CUDA's own variable */
    if (!c->built) {
        snprintf(why, n, "%s, but this build of topotune has no CUDA support (nvcc was not found at build time; "
                 "rebuild with the CUDA Toolkit)", gpus);
    } else if (m->npci > 0 && m->nbound_nvidia == 0 && m->nbound_other > 0) {
        snprintf(why, n, "%s bound to the %s driver, not to nvidia: no NVIDIA driver for them", gpus,
                 m->other_driver);
    } else if (!m->module) {
        snprintf(why, n, "no NVIDIA driver: %s, but the nvidia kernel module is not loaded (check `lsmod | grep "
                 "nvidia`, dmesg; install or load the driver)", gpus);
    } else if (c->err == EXEC_CUDA_ERR_INSUFFICIENT_DRIVER && c->driver_ver == 0) {
        snprintf(why, n, "no NVIDIA driver library: the nvidia kernel module%s%s is loaded for %s, but libcuda.so.1 "
                 "was not found (install the driver's user-space part; in a container, start it with the NVIDIA "
                 "container runtime)", m->version[0] ? " " : "", m->version, gpus);
    } else if (c->err == EXEC_CUDA_ERR_INSUFFICIENT_DRIVER || c->err == EXEC_CUDA_ERR_DRIVER_MISMATCH) {
        cuda_version(c->runtime_ver, rv, sizeof rv);
        cuda_version(c->driver_ver, dv, sizeof dv);
        snprintf(why, n, "the NVIDIA driver%s%s is too old for this build: it supports CUDA %s, topotune was built "
                 "with CUDA %s (update the driver, or build with an older CUDA Toolkit) [%s]", m->version[0] ? " " : "",
                 m->version, dv, rv, c->errname);
    } else if (c->err == EXEC_CUDA_ERR_NO_DEVICE && vis) {
        snprintf(why, n, "CUDA_VISIBLE_DEVICES=%.40s hides every GPU from this process (%s)", vis, gpus);
    } else if (c->err == EXEC_CUDA_ERR_SYSTEM_NOT_READY) {
        snprintf(why, n, "%s, but CUDA says the system is not ready: on NVSwitch systems the NVIDIA fabric manager "
                 "(nvidia-fabricmanager) must be running [%s]", gpus, c->errname);
    } else if (c->err == EXEC_CUDA_ERR_DEVICES_UNAVAILABLE) {
        snprintf(why, n, "%s, but every GPU is busy or prohibited (compute mode exclusive-process or prohibited: "
                 "nvidia-smi -q -d COMPUTE) [%s]", gpus, c->errname);
    } else {
        snprintf(why, n, "%s, nvidia driver%s%s loaded, but CUDA cannot use them: %s [%s]", gpus,
                 m->version[0] ? " " : "", m->version, c->errmsg, c->errname);
    }
}

void tt_gpu_health_check(tt_gpu_health *h)
{
    machine_view m;
    exec_gpu_cuda_state c;
    memset(h, 0, sizeof *h);
    if (!exec_test_cuda_probe(&c)) exec_gpu_cuda_probe(&c);
    scan_machine(&m);
    h->npci = m.npci;
    h->driver = m.module;
    snprintf(h->driver_version, sizeof h->driver_version, "%s", m.version);
    if (c.built && c.err == 0 && c.count > 0) {
        h->state = TT_GPU_READY;
        h->ncuda = c.count;
        snprintf(h->why, sizeof h->why, "%d CUDA device(s)", c.count);
        return;
    }
    if (m.npci > 0 || m.devnode) {
        h->state = TT_GPU_BROKEN;
        explain_broken(&m, &c, h->why, sizeof h->why);
    } else {
        h->state = TT_GPU_ABSENT;
        snprintf(h->why, sizeof h->why, "no NVIDIA GPU on this machine (%s%s)",
                 m.npci < 0 ? "the PCI bus could not be read, no /dev/nvidia0" : "none on the PCI bus",
                 c.built ? "" : "; this build of topotune has no CUDA support either");
    }
    TT_INFO("gpu", "GPU health: %s", h->why);
}

int tt_gpu_available(char *why, size_t whylen)
{
    tt_gpu_health h;
    tt_gpu_health_check(&h);
    if (why && whylen) snprintf(why, whylen, "%s", h.why);
    return h.ncuda;
}
