/* fuzz_scan_hwloc.c - the offline scan of an `lstopo --of xml` file
 * (tt_topo_scan with hwloc_xml set; topo_hwloc_xml.c maps hwloc's export of
 * it into our native XML), then the native writer, the reader and the graph
 * builder on what the scan produced.
 *
 * hwloc parses the file (its own code, not instrumented); the target checks
 * what topotune does with whatever topology hwloc accepts: the scan either
 * fails with a message or gives a document that writes, reads back, and
 * builds (or is refused by the builder with a message).
 */
#include <ctype.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "tt_topo.h"

/* hwloc 2.9.0 itself crashes inside hwloc_topology_load on some corrupt
 * files (lstopo too; reproducers in tests/fuzz/known/fuzz_scan_hwloc/,
 * docs/reliability.md F7): an <object> with a cpuset but no complete_cpuset
 * (NULL dereference), a bitmap attribute such as nodeset=",0x3" (assertion
 * in hwloc_bitmap_sscanf).  Such inputs are not handed to hwloc: the target
 * fuzzes topotune's handling of what hwloc accepts, not hwloc.  The check is
 * textual (hwloc files carry a DOCTYPE our own reader refuses, and it must
 * hold for malformed text too), over every "<object" tag up to its '>':
 *  - an attribute cpuset needs complete_cpuset, nodeset needs complete_nodeset;
 *  - every attribute whose name ends in "set" holds 0xHEX(,0xHEX)*. */
/* the library's guard (topo/topo_scan_hwloc_guard.c) */
int scan_hwloc_xml_safe(const char *data, size_t size, char *why, size_t cap);

static int fsh_hwloc_safe(const uint8_t *data, size_t size)
{
    char why[160];
    return scan_hwloc_xml_safe((const char *)data, size, why, sizeof why);
}

static char fsh_path[64];

static void fsh_cleanup(void)
{
    if (fsh_path[0])
        unlink(fsh_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tt_scan_options o;
    tt_xml_doc *doc = NULL, *doc2 = NULL;
    tt_topo *t = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    tt_status st;

    if (size > (1u << 20) || !fsh_hwloc_safe(data, size))
        return 0;
    if (!fsh_path[0]) {
        snprintf(fsh_path, sizeof fsh_path, "/tmp/tt-fuzz-hwloc-%d.xml", (int)getpid());
        atexit(fsh_cleanup);
    }
    f = fopen(fsh_path, "wb");
    FUZZ_CHECK(f != NULL, "cannot write %s", fsh_path);
    if (size)
        FUZZ_CHECK(fwrite(data, 1, size, f) == size, "short write to %s", fsh_path);
    fclose(f);

    tt_scan_options_default(&o);
    o.hwloc_xml = fsh_path;
    o.exclude = "nvml,cuda,ibv";
    tt_error_clear();
    st = tt_topo_scan(&o, &doc);
    if (st != TT_OK) {
        FUZZ_CHECK(doc == NULL, "failed scan returned a document");
        FUZZ_CHECK(tt_error_message()[0] != '\0', "scan failed (%s) without a message",
                   tt_status_name(st));
        return 0;
    }
    FUZZ_CHECK(doc && doc->root, "scan succeeded without a document");
    st = tt_xml_write_buffer(doc, TT_XML_NATIVE, &text, &len);
    FUZZ_CHECK(st == TT_OK, "native writer failed on a scanned doc: %s", tt_error_message());
    st = tt_xml_read_buffer(text, len, "<scan>", NULL, &doc2);
    FUZZ_CHECK(st == TT_OK, "scanned doc does not read back: %s\n%s", tt_error_message(), text);
    tt_error_clear();
    st = tt_topo_from_xml(doc2, NULL, &t);
    if (st == TT_OK)
        tt_topo_free(t);
    else
        FUZZ_CHECK(tt_error_message()[0] != '\0', "build of a scanned doc failed without a message");
    free(text);
    tt_xml_doc_free(doc2);
    tt_xml_doc_free(doc);
    return 0;
}
