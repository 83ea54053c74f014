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
    {"system", {NULL}, {"version", "name", NULL}},
    {"cpu", {"system", NULL},
     {"host_hash", "numaid", "affinity", "arch", "vendor", "familyid", "modelid", NULL}},
    {"pci", {"cpu", "pci", NULL},
     {"busid", "class", "vendor", "device", "subsystem_vendor", "subsystem_device", "link_speed",
      "link_width", NULL}},
    {"pcilink", {"pci", NULL}, {"target", NULL}},
    {"gpu", {"pci", NULL}, {"dev", "sm", "rank", "gdr", "mlopart", NULL}},
    {"nvlink", {"gpu", NULL}, {"target", "count", "tclass", NULL}},
    {"c2c", {"gpu", NULL}, {"bw", "count", NULL}},
    {"xgmi", {"gpu", NULL}, {"target", "count", "tclass", NULL}}, /* RCCL */
    {"nic", {"cpu", "pci", NULL}, {NULL}},
    {"net", {"nic", NULL},
     {"name", "dev", "speed", "port", "latency", "guid", "maxconn", "gdr", "net", "gin", "rma", "coll",
      "rail", "plane"}},
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
    if (!strcmp(attr, "keep"))
        return 0; /* transient trim marker: never written */
    for (i = 0; i < 16 && e->attrs[i]; i++)
        if (!strcmp(e->attrs[i], attr))
            return 1;
    return 0;
}
