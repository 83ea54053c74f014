/*
 * exec_gpu_health.h - what CUDA says about this machine's GPUs (exec_cuda_comm.cu, or
 * exec_gpu_stub.c in builds without CUDA), for the health check of exec_gpu_health.c.  C and C++.
 */
#ifndef EXEC_GPU_HEALTH_H
#define EXEC_GPU_HEALTH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int built;          /* 1: this build has CUDA; 0: the stub (nothing below is set) */
    int count;          /* cudaGetDeviceCount's answer (0 on an error) */
    int err;            /* its cudaError_t, 0 = cudaSuccess */
    char errname[48];   /* cudaGetErrorName */
    char errmsg[160];   /* cudaGetErrorString */
    int runtime_ver;    /* cudaRuntimeGetVersion: 1000 x major + 10 x minor */
    int driver_ver;     /* cudaDriverGetVersion: the CUDA version the driver supports; 0 = no driver library */
} exec_gpu_cuda_state;

/* cudaError_t values the health check tells apart (the CUDA runtime API's documented numbers) */
enum {
    EXEC_CUDA_ERR_NO_DEVICE = 100,            /* cudaErrorNoDevice */
    EXEC_CUDA_ERR_INSUFFICIENT_DRIVER = 35,   /* cudaErrorInsufficientDriver */
    EXEC_CUDA_ERR_SYSTEM_NOT_READY = 802,     /* cudaErrorSystemNotReady (NVSwitch systems: fabric manager) */
    EXEC_CUDA_ERR_DRIVER_MISMATCH = 803,      /* cudaErrorSystemDriverMismatch */
    EXEC_CUDA_ERR_DEVICES_UNAVAILABLE = 46,   /* cudaErrorDevicesUnavailable (exclusive or prohibited mode) */
};

/* Ask CUDA once per call; never fails (errors are in *s). */
void exec_gpu_cuda_probe(exec_gpu_cuda_state *s);

#ifdef __cplusplus
}
#endif
#endif
