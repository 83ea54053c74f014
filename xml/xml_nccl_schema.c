/* xml_nccl_schema.c - which elements/attributes NCCL's topology loader reads.
 *
 * Facts from NCCL 2.30 (src/graph/xml.cc handler tables, see
 * docs/xml-schema.md): element placement system->cpu, cpu->pci|nic,
 * pci->pci|gpu|nic|pcilink, gpu->nvlink|c2c, nic->net.  RCCL's <xgmi> under
 * <gpu> is also kept (RCCL reads it, NCCL skips it with an INFO line).  The
 * transient `keep` attribute is never written, so it is reported unknown.
 */
#include "tt_xml.h"

#include <string.h>

typedef struct {
    const char *elem;
    const char *parents[3]; /* NULL-terminated; empty = document root */
    const char *attrs[16];  /* NULL-terminated */
} nccl_elem;

static const nccl_elem nccl_schema[] = {
    {TT_ELEM_SYSTEM, {NULL}, {TT_ATTR_VERSION, TT_ATTR_NAME, NULL}},
    {TT_ELEM_CPU, {TT_ELEM_SYSTEM, NULL},
     {TT_ATTR_HOST_HASH, TT_ATTR_NUMAID, TT_ATTR_AFFINITY, TT_ATTR_ARCH, TT_ATTR_VENDOR,
      TT_ATTR_FAMILYID, TT_ATTR_MODELID, NULL}},
    {TT_ELEM_PCI, {TT_ELEM_CPU, TT_ELEM_PCI, NULL},
     {TT_ATTR_BUSID, TT_ATTR_CLASS, TT_ATTR_VENDOR, TT_ATTR_DEVICE, TT_ATTR_SUBSYSTEM_VENDOR,
      TT_ATTR_SUBSYSTEM_DEVICE, TT_ATTR_LINK_SPEED, TT_ATTR_LINK_WIDTH, NULL}},
    {TT_ELEM_PCILINK, {TT_ELEM_PCI, NULL}, {TT_ATTR_TARGET, NULL}},
    {TT_ELEM_GPU, {TT_ELEM_PCI, NULL},
     {TT_ATTR_DEV, TT_ATTR_SM, TT_ATTR_RANK, TT_ATTR_GDR, TT_ATTR_MLOPART, NULL}},
    {TT_ELEM_NVLINK, {TT_ELEM_GPU, NULL}, {TT_ATTR_TARGET, TT_ATTR_COUNT, TT_ATTR_TCLASS, NULL}},
    {TT_ELEM_C2C, {TT_ELEM_GPU, NULL}, {TT_ATTR_BW, TT_ATTR_COUNT, NULL}},
    {TT_ELEM_XGMI, {TT_ELEM_GPU, NULL}, {TT_ATTR_TARGET, TT_ATTR_COUNT, TT_ATTR_TCLASS, NULL}},
    {TT_ELEM_NIC, {TT_ELEM_CPU, TT_ELEM_PCI, NULL}, {NULL}},
    {TT_ELEM_NET, {TT_ELEM_NIC, NULL},
     {TT_ATTR_NAME, TT_ATTR_DEV, TT_ATTR_SPEED, TT_ATTR_PORT, TT_ATTR_LATENCY, TT_ATTR_GUID,
      TT_ATTR_MAXCONN, TT_ATTR_GDR, "net", "gin", "rma", "coll", "rail", "plane"}},
};

static const nccl_elem *find_elem(const char *elem)
{
    size_t i;
    for (i = 0; i < sizeof nccl_schema / sizeof nccl_schema[0]; i++)
        if (!strcmp(nccl_schema[i].elem, elem))
            return &nccl_schema[i];
    return NULL;
}

/* parent NULL: placement is not checked (the element alone is asked about);
 * parent given: `elem` must be allowed under it (<system> under nothing). */
int tt_xml_nccl_knows(const char *parent, const char *elem, const char *attr)
{
    const nccl_elem *e;
    int i;
    if (!elem || !(e = find_elem(elem)))
        return 0;
    if (parent) {
        int ok = 0;
        for (i = 0; i < 3 && e->parents[i]; i++)
            if (!strcmp(e->parents[i], parent))
                ok = 1;
        if (!ok)
            return 0;
    }
    if (!attr)
        return 1;
    if (!strcmp(attr, TT_ATTR_KEEP))
        return 0; /* transient trim marker: never written */
    for (i = 0; i < 16 && e->attrs[i]; i++)
        if (!strcmp(e->attrs[i], attr))
            return 1;
    return 0;
}
