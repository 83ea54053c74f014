/* exec_transport.c - the transport registry: every transport in one table. */
#include "exec_internal.h"

#include <string.h>

const exec_transport *const exec_transport_table[] = {&exec_transport_shm, &exec_transport_tcp,
#ifdef TT_HAVE_IBVERBS
                                                      &exec_transport_ib,
#endif
                                                      NULL};

const exec_transport *exec_transport_find(const char *name)
{
    for (int i = 0; exec_transport_table[i]; i++)
        if (!strcmp(exec_transport_table[i]->name, name))
            return exec_transport_table[i];
    return NULL;
}
