/*
 * topo_scan_util.c - the small helpers every scan probe (and the orchestrator) shares: paths
 * under the scan root, reading small files, probe notes, <unknown> records, bus ids and PCI
 * classes.  Nothing here calls back into the orchestrator or the tree builder.
 */
#include "topo_scan_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void scan_path(const scan_ctx *c, char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    size_t n = (size_t)snprintf(buf, len, "%s", c->root);
    if (n >= len)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + n, len - n, fmt, ap);
    va_end(ap);
}

int scan_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

int scan_read_str(const char *path, char *buf, size_t len)
{
    FILE *f;
    size_t n;
    if (len == 0)
        return -1;
    buf[0] = '\0';
    f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(buf, (int)len, f)) {
        /* an empty file reads as "" but counts as unreadable: nothing to see */
        fclose(f);
        buf[0] = '\0';
        return -1;
    }
    fclose(f);
    n = strlen(buf);
    while (n > 0 && isspace((unsigned char)buf[n - 1]))
        buf[--n] = '\0';
    return 0;
}

int scan_read_ll(const char *path, long long *out)
{
    char b[64];
    if (scan_read_str(path, b, sizeof b) || tt_parse_ll(b, out) != TT_OK) {
        tt_error_clear();
        return -1;
    }
    return 0;
}

void scan_note(scan_ctx *c, const char *fmt, ...)
{
    va_list ap;
    if (!c->probe)
        return;
    va_start(ap, fmt);
    vsnprintf(c->probe->note, sizeof c->probe->note, fmt, ap);
    va_end(ap);
}

void scan_unknown(scan_ctx *c, tt_xml_node *node, const char *attr, const char *fmt, ...)
{
    char reason[400];
    va_list ap;
    tt_xml_node *u;
    const char *who;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (!node)
        node = c->sys;
    /* the same attr/reason twice on one element says nothing new */
    for (u = tt_xml_first_child(node, "unknown"); u; u = tt_xml_next_sibling(u, "unknown")) {
        const char *a = tt_xml_get(u, "attr"), *r = tt_xml_get(u, "reason");
        if (a && r && !strcmp(a, attr) && !strcmp(r, reason))
            return;
    }
    u = tt_xml_node_new("unknown");
    if (!u || tt_xml_set(u, "attr", attr) || tt_xml_set(u, "reason", reason) ||
        tt_xml_append(node, u)) {
        tt_xml_node_free(u);
        tt_error_clear();
        return;
    }
    if (c->probe) {
        tt_xml_set(u, "probe", c->probe->name);
        c->probe->missed++;
    }
    who = tt_xml_get(node, "busid");
    if (!who)
        who = tt_xml_get(node, "name");
    TT_INFO(SCAN_SUBSYS, "%s%s%s: %s unknown: %s", node->name, who ? " " : "", who ? who : "",
            attr, reason);
}

int scan_is_bdf(const char *s)
{
    /* dddd:bb:dd.f, hex digits */
    static const char shape[] = "xxxx:xx:xx.x";
    size_t i;
    if (strlen(s) != sizeof shape - 1)
        return 0;
    for (i = 0; i < sizeof shape - 1; i++) {
        if (shape[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != shape[i])
            return 0;
    }
    return 1;
}

int scan_busid_norm(const char *in, char *out, size_t len)
{
    unsigned dom, bus, dev, fn;
    char tail;
    /* NVML/CUDA write 00000000:18:00.0 (8-digit domain); sysfs 0000:18:00.0 */
    if (sscanf(in, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || dom > 0xffff ||
        bus > 0xff || dev > 0x1f || fn > 7)
        return -1;
    snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    return 0;
}

/* ---------------- PCI classes ---------------- */

int scan_class_is_gpu(long cls, long vendor)
{
    /* 0x0300xx VGA and 0x0302xx 3D controllers from NVIDIA; a BMC's VGA
     * (ASPEED 0x1a03, Matrox ...) is not a CUDA GPU. */
    return cls >= 0 && ((cls >> 8) == 0x0300 || (cls >> 8) == 0x0302) && vendor == 0x10de;
}

int scan_class_is_nic(long cls) { return cls >= 0 && (cls >> 16) == 0x02; }

int scan_class_is_nvswitch(long cls) { return cls == 0x068000; }

/* SR-IOV virtual functions by PCI id, for producers that record no physfn (hwloc XML):
 * the device ids the public PCI ID list names "Virtual Function" for the NIC vendors
 * whose PFs NCCL uses (model assumption, docs/scan.md).  NCCL merges VFs into the PF;
 * the sysfs walk skips them by their physfn link. */
int scan_pci_is_vf(unsigned vendor, unsigned device)
{
    static const unsigned mellanox[] = {0x1014, 0x1016, 0x1018, 0x101a, 0x101c, 0x101e, 0};
    static const unsigned intel[] = {0x10ed, 0x154c, 0x1889, 0};
    static const unsigned broadcom[] = {0x16dc, 0x1806, 0x1807, 0};
    const unsigned *ids = vendor == 0x15b3 ? mellanox : vendor == 0x8086 ? intel
                        : vendor == 0x14e4 ? broadcom : NULL;
    for (int i = 0; ids && ids[i]; i++)
        if (ids[i] == device)
            return 1;
    return 0;
}
