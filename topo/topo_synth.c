/*
 * topo_synth.c - synthetic topologies built in memory (no file, no scan):
 *
 *   tt_topo_synth_host   the stand-in topo-exec --validate models host ranks on: n ranks as n PCIe
 *                        GPUs under one CPU, the shape of tests/fixtures/measurements/host-pcie-8gpu.xml
 *                        (docs/calibration.md section 6);
 *   tt_topo_synth_nvl72  an NVL72-like NVSwitch domain of SM100 GPUs, four per CPU (topo-tune --bench,
 *                        and --gen-nvswitch-domain, which wrote tests/fixtures/nvl72-sm100.xml).
 *
 * Both are built with the XML tree API; written with the native writer they give, byte for byte,
 * the files the tools used to print.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tt_topo.h"

/* Append a child element with attribute name/value pairs (NULL-terminated). */
static tt_xml_node *add_el(tt_xml_node *parent, const char *name, tt_status *st, ...)
{
    if (*st != TT_OK) return NULL;
    tt_xml_node *n = tt_xml_node_new(name);
    if (!n) {
        *st = tt_error_set(TT_ERR_NOMEM, "out of memory building a synthetic topology");
        return NULL;
    }
    va_list ap;
    va_start(ap, st);
    const char *a;
    while (*st == TT_OK && (a = va_arg(ap, const char *)) != NULL) *st = tt_xml_set(n, a, va_arg(ap, const char *));
    va_end(ap);
    if (*st == TT_OK) *st = tt_xml_append(parent, n);
    if (*st != TT_OK) {
        tt_xml_node_free(n);
        return NULL;
    }
    return n;
}

static tt_status new_doc(const char *source, tt_xml_doc **out)
{
    *out = tt_xml_doc_new("system", source);
    if (!*out) return tt_error_set(TT_ERR_NOMEM, "out of memory building a synthetic topology");
    tt_status st = tt_xml_set((*out)->root, "version", "1");
    if (st != TT_OK) {
        tt_xml_doc_free(*out);
        *out = NULL;
    }
    return st;
}

static tt_status finish(tt_status st, tt_xml_doc **out)
{
    if (st != TT_OK) {
        tt_xml_doc_free(*out);
        *out = NULL;
    }
    return st;
}

/* MODEL ASSUMPTION (docs/calibration.md section 6): host ranks move data through host memory,
 * which the topotune model maps to the PCI link class; a calibration file fitted on host runs
 * makes its numbers real. */
tt_status tt_topo_synth_host(int nranks, tt_xml_doc **out)
{
    *out = NULL;
    if (nranks < 1 || nranks > TT_TOPO_MAX_TYPE_NODES)
        return tt_error_set(TT_ERR_INVALID, "host stand-in: %d ranks (1..%d)", nranks, TT_TOPO_MAX_TYPE_NODES);
    tt_status st = new_doc(TT_TOPO_SYNTH_HOST_SOURCE, out);
    if (st != TT_OK) return st;
    tt_xml_node *cpu = add_el((*out)->root, "cpu", &st, "host_hash", "0x1", "numaid", "0", "arch", "x86_64", "vendor",
                              "GenuineIntel", "familyid", "6", "modelid", "143", (const char *)NULL);
    for (int i = 0; i < nranks && st == TT_OK; i++) {
        int bus = 0x11 + i;
        char busid[32], num[16];
        snprintf(busid, sizeof busid, "%04x:%02x:00.0", bus >> 8, bus & 0xff);
        snprintf(num, sizeof num, "%d", i);
        tt_xml_node *pci = add_el(cpu, "pci", &st, "busid", busid, "class", "0x030200", "vendor", "0x10de", "device",
                                  "0x26b9", "subsystem_vendor", "0x10de", "subsystem_device", "0x1851", "link_speed",
                                  "16.0 GT/s PCIe", "link_width", "16", (const char *)NULL);
        add_el(pci, "gpu", &st, "dev", num, "sm", "89", "rank", num, "gdr", "1", (const char *)NULL);
    }
    return finish(st, out);
}

tt_status tt_topo_synth_nvl72(int ngpu, tt_xml_doc **out)
{
    *out = NULL;
    if (ngpu < 1 || ngpu > TT_TOPO_MAX_TYPE_NODES)
        return tt_error_set(TT_ERR_INVALID, "NVSwitch domain: %d GPUs (1..%d)", ngpu, TT_TOPO_MAX_TYPE_NODES);
    tt_status st = new_doc(TT_TOPO_SYNTH_NVL72_SOURCE, out);
    if (st != TT_OK) return st;
    int per_cpu = 4, ncpu = (ngpu + per_cpu - 1) / per_cpu;
    for (int c = 0; c < ncpu && st == TT_OK; c++) {
        char numa[16];
        snprintf(numa, sizeof numa, "%d", c);
        tt_xml_node *cpu = add_el((*out)->root, "cpu", &st, "numaid", numa, "arch", "arm64", "vendor", "ARM",
                                  "familyid", "0", "modelid", "0", (const char *)NULL);
        for (int k = 0; k < per_cpu && c * per_cpu + k < ngpu && st == TT_OK; k++) {
            int g = c * per_cpu + k;
            char busid[32], num[16];
            snprintf(busid, sizeof busid, "%04x:01:00.0", g + 1);
            snprintf(num, sizeof num, "%d", g);
            tt_xml_node *pci = add_el(cpu, "pci", &st, "busid", busid, "class", "0x030200", "vendor", "0x10de",
                                      "device", "0x2941", "subsystem_vendor", "0x10de", "subsystem_device", "0x2046",
                                      "link_speed", "32.0 GT/s PCIe", "link_width", "16", (const char *)NULL);
            tt_xml_node *gpu = add_el(pci, "gpu", &st, "dev", num, "sm", "100", "rank", num, "gdr", "1",
                                      (const char *)NULL);
            add_el(gpu, "nvlink", &st, "target", "0000:00:00.0", "count", "18", "tclass", "0x068000",
                   (const char *)NULL);
        }
    }
    return finish(st, out);
}
