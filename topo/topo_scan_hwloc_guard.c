/*
 * topo_scan_hwloc_guard.c - refuse hwloc XML that would crash hwloc itself.
 *
 * hwloc 2.9 (Debian 12) crashes inside hwloc_topology_load on some corrupt
 * files, and so does lstopo (found by fuzzing, docs/reliability.md F7): an
 * <object> with a cpuset but no complete_cpuset (NULL dereference), or a
 * bitmap attribute such as nodeset=",0x3" (assertion in hwloc_bitmap_sscanf).
 * Such files are refused with file:line before hwloc sees them.  The check is
 * textual (hwloc files carry a DOCTYPE that our own reader refuses, and it
 * must hold for malformed text too), over every "<object" tag up to its '>':
 *  - an attribute cpuset needs complete_cpuset, nodeset needs complete_nodeset;
 *  - every attribute whose name ends in "set" holds 0xHEX(,(0xHEX)?)*: words
 *    after the first may be empty (hwloc's own writer leaves all-zero words
 *    empty), the first may not (",0x3" asserts inside hwloc).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "topo_scan_internal.h"

/* Whether the tag names attribute `name` (preceded by white space, followed by
 * '='; "PUcomplete_cpuset=" does not name complete_cpuset). */
static int tag_has_attr(const char *tag, size_t n, const char *name)
{
    size_t k = strlen(name);
    for (size_t i = 1; i + k < n; i++)
        if (isspace((unsigned char)tag[i - 1]) && !memcmp(tag + i, name, k) && tag[i + k] == '=')
            return 1;
    return 0;
}

/* Every set="..." value in the tag is a hwloc bitmap string. */
static int tag_bitmaps_ok(const char *tag, size_t n)
{
    for (size_t i = 0; i + 5 <= n; i++) {
        size_t j;
        if (memcmp(tag + i, "set=\"", 5))
            continue;
        j = i + 5;
        for (int word = 0;; word++) {
            size_t digits = 0;
            /* hwloc writes an all-zero 32-bit word as nothing ("0xffffffff,,0xffffffff"
             * on 2-socket SMT machines): empty words after the first are fine; only
             * an empty first word trips hwloc_bitmap_sscanf's assertion */
            if (word > 0 && j < n && (tag[j] == ',' || tag[j] == '"')) {
                if (tag[j] == ',') {
                    j++;
                    continue;
                }
                break;
            }
            if (j + 2 > n || tag[j] != '0' || tag[j + 1] != 'x')
                return 0;
            j += 2;
            while (j < n && isxdigit((unsigned char)tag[j]))
                j++, digits++;
            if (!digits)
                return 0;
            if (j < n && tag[j] == ',') {
                j++;
                continue;
            }
            if (j >= n || tag[j] != '"')
                return 0;
            break;
        }
    }
    return 1;
}

int scan_hwloc_xml_safe(const char *data, size_t size, char *why, size_t cap)
{
    const char *p = data, *end = data + size;
    int line = 1;
    const char *counted = data;
    while (p < end) {
        const char *o = memchr(p, '<', (size_t)(end - p)), *gt;
        size_t n;
        if (!o)
            break;
        p = o + 1;
        if ((size_t)(end - p) < 6 || memcmp(p, "object", 6))
            continue;
        gt = memchr(p, '>', (size_t)(end - p));
        n = gt ? (size_t)(gt - p) : (size_t)(end - p);
        const char *what = NULL;
        if (tag_has_attr(p, n, "cpuset") && !tag_has_attr(p, n, "complete_cpuset"))
            what = "an <object> with a cpuset but no complete_cpuset";
        else if (tag_has_attr(p, n, "nodeset") && !tag_has_attr(p, n, "complete_nodeset"))
            what = "an <object> with a nodeset but no complete_nodeset";
        else if (!tag_bitmaps_ok(p, n))
            what = "a *set attribute that is not a hwloc bitmap (0xHEX,0xHEX...)";
        if (what) {
            for (; counted < o; counted++)
                line += *counted == '\n';
            snprintf(why, cap, "line %d: %s (hwloc itself would crash on it)", line, what);
            return 0;
        }
    }
    return 1;
}
