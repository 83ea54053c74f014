/*
 * topo_scan_hwloc.c - the hwloc probe: the live machine as hwloc 2.x sees it,
 * or an `lstopo --of xml` file (the offline twin).
 *
 * Live, hwloc loads this machine with every I/O object kept (filter
 * KEEP_ALL: the bridges above a kept device become the same bus-id chain the
 * sysfs probe reads from realpaths), PCI from hwloc's Linux sysfs discovery,
 * and HWLOC_FSROOT honoured as hwloc always does (fake roots).  The loaded
 * topology is then exported to an XML buffer (hwloc_topology_export_xmlbuffer,
 * format 2.0: cpusets, nodesets, infos, OS devices, distances all travel in
 * it), parsed by topotune's hardened reader and mapped by the one hwloc
 * mapper of topo_hwloc_xml.c, the same code an offline file goes through.
 * When the sysfs probe already built the tree, the mapper only cross-checks
 * that hwloc sees the same devices (differences are recorded).
 *
 * Offline files (--hwloc-xml, --input on an hwloc export) go straight to
 * topo_hwloc_xml.c (hwloc 2.x library or topotune's reader for 3.0).
 */
#include "topo_scan_internal.h"

#include <hwloc.h>

tt_probe_state scan_probe_hwloc(scan_ctx *c)
{
    hwloc_topology_t t;
    char *buf = NULL;
    int blen = 0;
    tt_probe_state ps;
    const char *xml = c->opt->hwloc_xml;
    if (xml && xml[0])
        return scan_hwloc_xml_file(c, xml); /* offline: topo_hwloc_xml.c */
    if (hwloc_get_api_version() >> 16 != HWLOC_API_VERSION >> 16) {
        scan_note(c, "hwloc library 0x%x does not match headers 0x%x", hwloc_get_api_version(),
                  HWLOC_API_VERSION);
        return TT_PROBE_UNAVAILABLE;
    }
    if (hwloc_topology_init(&t)) {
        scan_note(c, "hwloc_topology_init failed");
        return TT_PROBE_FAILED;
    }
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
    /* PCI from sysfs (hwloc's linux component) rather than the libpciaccess
     * plugin: same devices, no config-space reads, and that plugin leaks */
    hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
    if (hwloc_topology_load(t) != 0) {
        scan_note(c, "hwloc_topology_load failed");
        hwloc_topology_destroy(t);
        return TT_PROBE_FAILED;
    }
    if (hwloc_topology_export_xmlbuffer(t, &buf, &blen, 0) != 0 || !buf || blen <= 0) {
        scan_note(c, "hwloc could not export the live topology to XML");
        if (buf)
            hwloc_free_xmlbuffer(t, buf);
        hwloc_topology_destroy(t);
        return TT_PROBE_FAILED;
    }
    TT_INFO(SCAN_SUBSYS, "live hwloc topology (hwloc %s, API %u.%u) exported to XML (%d bytes): mapped "
                         "through the hwloc XML mapper (topo_hwloc_xml.c)", HWLOC_VERSION,
            hwloc_get_api_version() >> 16, (hwloc_get_api_version() >> 8) & 0xff, blen - 1);
    /* blen counts the terminating NUL */
    ps = scan_hwloc_xml_live(c, buf, (size_t)blen - 1);
    hwloc_free_xmlbuffer(t, buf);
    hwloc_topology_destroy(t);
    return ps;
}
