/* cli_vendor.c - --gpu-part, printed assumptions and --vendor-file fusion (issue #19). */
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "cli_vendor.h"
#include "tt_topo.h"

int tt_cli_gpu_part_check(const char *name)
{
    char list[400];
    if (name && *name && tt_gpu_part_by_name(name)) return 0;
    tt_gpu_part_names(list, sizeof list);
    return tt_cli_usage_error("--gpu-part '%s' is not a known part (known: %s)", name ? name : "", list);
}

static int same_kind(const tt_finding *a, const tt_finding *b)
{
    return a->severity == b->severity && !strcmp(a->code, b->code);
}

/* One line per kind of assumption (code and severity) with the count; each
 * element's own line under TOPOTUNE_DEBUG=INFO. */
void tt_cli_print_assumptions(const tt_topo *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->assumed.n; i++) {
        const tt_finding *f = &t->assumed.items[i];
        int cnt = 0, alike = 1, first = 1;
        char at[32] = "";
        for (int j = 0; j < i && first; j++)
            first = !same_kind(&t->assumed.items[j], f);
        if (!first)
            continue;
        for (int j = i; j < t->assumed.n; j++) {
            const tt_finding *g = &t->assumed.items[j];
            if (!same_kind(g, f))
                continue;
            cnt++;
            alike = alike && !strcmp(g->message, f->message);
            TT_INFO("cli", "assumed: %s:%d: [%s] %s: %s", t->source, g->line, g->code, g->where,
                    g->message);
        }
        if (f->line > 0)
            snprintf(at, sizeof at, ":%d", f->line);
        if (cnt == 1)
            tt_cli_error("assumed: %s%s: %s: [%s] %s: %s", t->source, at,
                         tt_severity_name(f->severity), f->code, f->where, f->message);
        else
            tt_cli_error("assumed: %s%s: %s: [%s] %d elements (%s and %d more; TOPOTUNE_DEBUG=INFO "
                         "lists each): %s%s", t->source, at, tt_severity_name(f->severity), f->code,
                         cnt, f->where, cnt - 1, alike ? "" : "e.g. ", f->message);
    }
    if (t->gpu_fabric_unknown > 0)
        tt_cli_error("warning: GPU interconnect unknown: modelled as PCIe (%d GPU(s) without NVLink "
                     "information; name the part with --gpu-part or TOPOTUNE_GPU_PART)",
                     t->gpu_fabric_unknown);
}

tt_status tt_cli_fuse_vendor(const char *vendor_file, tt_xml_doc **doc, int quiet)
{
    tt_xml_doc *fused = NULL;
    int matched = 0;
    tt_status st = tt_topo_fuse_file(vendor_file, *doc, &fused, &matched);
    if (st != TT_OK) return st;
    if (!quiet) tt_cli_error("%s: fused with the scan: %d scanned device(s) found in the file by bus id", vendor_file, matched);
    tt_xml_doc_free(*doc);
    *doc = fused;
    return TT_OK;
}
