/* cli_scan.c - topo-dump's live-scan source. */
#include <stdio.h>
#include <string.h>

#include "cli_scan.h"

tt_status tt_cli_scan_load(const tt_cli_scan_opts *o, tt_xml_doc **doc, const char **label)
{
    static char buf[600];
    char excl[64];
    tt_scan_options so;
    tt_scan_report rep;
    tt_status st;

    if (o->quiet)
        tt_log_quiet();
    tt_scan_options_default(&so);
    so.hwloc_xml = o->hwloc_xml;
    so.sysfs_root = o->sysfs_root;
    /* --no-nvml etc. are shorthands for the exclusion list */
    snprintf(excl, sizeof excl, "%s%s%s%s", o->no_nvml ? "nvml," : "", o->no_cuda ? "cuda," : "",
             o->no_ibv ? "ibv," : "", o->no_hwloc ? "hwloc," : "");
    so.exclude = excl;
    st = tt_topo_scan_report(&so, doc, &rep);
    if (st != TT_OK) {
        tt_scan_report_free(&rep);
        return st;
    }
    if (o->hwloc_xml)
        snprintf(buf, sizeof buf, "%s", o->hwloc_xml);
    else if (o->sysfs_root)
        snprintf(buf, sizeof buf, "scan of %s", o->sysfs_root);
    else
        snprintf(buf, sizeof buf, "live scan");
    *label = buf;
    if (o->report) {
        tt_strbuf sb;
        tt_strbuf_init(&sb);
        if (tt_scan_report_write_text(&rep, &sb) == TT_OK && sb.data)
            fputs(sb.data, stderr);
        tt_strbuf_free(&sb);
    }
    tt_scan_report_free(&rep);
    return TT_OK;
}
