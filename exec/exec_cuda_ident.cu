/*
 * exec_cuda_ident.cu - a CUDA device as nccl-tests' rank lines name it (tt_gpu_device_ident): its PCI
 * address (domain, bus, device) and its name, from the CUDA runtime's device properties.
 */
#include <cuda_runtime.h>
#include <stdio.h>

#include "tt_common.h"
#include "tt_exec.h"

extern "C" tt_status tt_gpu_device_ident(int device, char *pci, size_t pcilen, char *name, size_t namelen)
{
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* not sticky: the next CUDA call starts clean */
        return tt_error_set(TT_ERR_SYSTEM, "device %d: cudaGetDeviceProperties: %s", device, cudaGetErrorString(e));
    }
    if (pci && pcilen) snprintf(pci, pcilen, "%04x:%02x:%02x", p.pciDomainID, p.pciBusID, p.pciDeviceID);
    if (name && namelen) snprintf(name, namelen, "%s", p.name);
    return TT_OK;
}
