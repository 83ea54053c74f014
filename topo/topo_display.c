/*
 * topo_display.c - which display-class PCI functions are compute GPUs (ranks).
 *
 * NCCL makes a GPU of every <pci> of class 0x03xxxx; a topology file of a whole host also
 * lists the display adapter of its management controller (a BMC's VGA: an AMD/ATI ES1000,
 * an ASPEED or Matrox chip), which no collective library drives.  The rule
 * (docs/xml-schema.md, "Display and management adapters"), for a <pci> of class 0x03xxxx:
 *   - a <gpu> child (NCCL or RCCL probed it as a GPU): a GPU;
 *   - no vendor id (a partial vendor file lists GPUs by class alone): a GPU;
 *   - vendor 0x10de (NVIDIA: every display-class function of theirs is a CUDA device): a GPU;
 *   - subclass 0x02 (3D controller, the class of compute-only boards): a GPU;
 *   - vendor 0x1002 (AMD) with subclass 0x80 (display controller: Instinct MI100/MI200): a GPU;
 *   - anything else (VGA 0x0300 / XGA 0x0301 from AMD, any display function of another
 *     vendor): a display or management adapter, not a rank: left a plain PCI device and
 *     listed as the finding `display-adapter` (info) in t->assumed.
 */
#include <stdio.h>
#include <string.h>

#include "topo_internal.h"

#define VENDOR_NVIDIA 0x10de
#define VENDOR_AMD 0x1002

/* Server graphics chips seen on BMCs, only to name them in the finding. */
static const struct {
    unsigned vendor, device;
    const char *name;
} known_display[] = {
    {VENDOR_AMD, 0x515e, "ATI ES1000 server graphics"},
    {VENDOR_AMD, 0x5159, "ATI RV100 / ES7000 server graphics"},
    {0x1a03, 0x2000, "ASPEED AST2xxx BMC graphics"},
    {0x102b, 0x0522, "Matrox G200e server graphics"},
    {0x102b, 0x0532, "Matrox G200eW server graphics"},
    {0x102b, 0x0534, "Matrox G200eR server graphics"},
    {0x102b, 0x0536, "Matrox G200eW3 server graphics"},
    {0x102b, 0x0538, "Matrox G200eH3 server graphics"},
};

int tt_topo__display_adapter(const tt_xml_node *el, long long cls, int has_gpu_child, char *why, size_t n)
{
    long long vendor = -1, device = -1;
    unsigned sub = (unsigned)(cls >> 8) & 0xff;
    if (has_gpu_child || (cls >> 16) != 0x03) return 0;
    if (tt_topo__read_ll(el, TT_ATTR_VENDOR, &vendor, NULL) != TT_ATTR_OK) return 0;
    if (vendor == VENDOR_NVIDIA || sub == 0x02 || (vendor == VENDOR_AMD && sub == 0x80)) return 0;
    if (tt_topo__read_ll(el, TT_ATTR_DEVICE, &device, NULL) != TT_ATTR_OK) device = -1;
    const char *name = NULL;
    for (size_t i = 0; i < sizeof known_display / sizeof known_display[0]; i++)
        if ((long long)known_display[i].vendor == vendor && (long long)known_display[i].device == device)
            name = known_display[i].name;
    char dev[40] = "";
    if (device >= 0) snprintf(dev, sizeof dev, " device 0x%04llx", device);
    snprintf(why, n,
             "display or management adapter (class 0x%06llx, vendor 0x%04llx%s%s%s): not a compute GPU, not a "
             "rank; left out of the GPUs (a class 0x03 function is a GPU with a <gpu> child, without vendor id, from "
             "NVIDIA, as a 3D controller 0x0302xx, or an AMD display controller 0x0380xx)",
             cls, vendor, dev, name ? ": " : "", name ? name : "");
    return 1;
}
