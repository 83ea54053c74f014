/*
 * exec_gpu_net.h - the GPU executor's network transport (internal; C and
 * C++): GPU ranks in processes that reach each other only through a host
 * communicator (other hosts, or forced apart on one host).
 *
 * Every net connection (directed pair, role, channel) has pinned, device-
 * mapped host memory on BOTH sides, with the layout of a receive block
 * (exec_gpu_internal.h): Simple slots, LL slots, a head word, plus a tail
 * word and a step-info ring on the sender side.  The sender's kernel writes
 * its own host FIFO as if it were the peer's buffer and publishes head (and
 * step info: bytes | protocol << 32); the proxy thread of the sending
 * process forwards each published step over the host transport; the proxy
 * of the receiving process writes it into that process's FIFO and publishes
 * head there.  Credits go back the same way: the receiving kernel's tail
 * word is forwarded to the sender's tail word.  The host transport is a
 * second host communicator of the same processes (tcp, ib or shm, chosen
 * like any host communicator's: TOPOTUNE_TRANSPORT).
 *
 * Selection (exec_gpu_select.c, no CUDA), per directed pair: TOPOTUNE_GPU_TRANSPORT
 * = auto | host | net; auto takes net for a pair whose processes are on
 * different hosts (real ones, or emulated ones: TOPOTUNE_GPU_EMULATE_HOSTS=K,
 * a testing aid) and peer GPU memory (IPC) for a pair on one host, so one
 * communicator mixes both; net forces every pair onto net.
 */
#ifndef EXEC_GPU_NET_H
#define EXEC_GPU_NET_H

#include <stddef.h>
#include <stdint.h>

#include "exec_gpu_internal.h"
#include "tt_common.h"
#include "tt_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Engineering choices (docs/gpu-executor.md): */
#define GPU_NET_CHANNELS 4          /* channel cap of a communicator with net pairs */

/* TOPOTUNE_GPU_TRANSPORT */
enum { GPU_TP_AUTO = 0, GPU_TP_HOST = 1, GPU_TP_NET = 2 };
/* Parse a TOPOTUNE_GPU_TRANSPORT value (NULL or "" = auto) into *mode;
 * TT_ERR_INVALID naming the value and the valid ones otherwise. */
tt_status exec_gpu_transport_parse(const char *value, int *mode);

/* What every process says about itself at setup (process mode). */
typedef struct {
    int mode;           /* its TOPOTUNE_GPU_TRANSPORT */
    const char *host;   /* host name */
    const char *boot;   /* boot id */
    int emulate;        /* its TOPOTUNE_GPU_EMULATE_HOSTS (0: unset) */
} exec_gpu_where;

/* Parse TOPOTUNE_GPU_EMULATE_HOSTS for a communicator of n process ranks
 * (NULL or "" = 0, off): K in 1..n; TT_ERR_INVALID naming the variable, the
 * value and the range otherwise. */
tt_status exec_gpu_emulate_parse(const char *value, int n, int *k);
/* The emulated host of rank r among n with k emulated hosts: r * k / n
 * (contiguous blocks, as TOPOTUNE_THREAD_NODES splits thread ranks); 0 when
 * k <= 0. */
int exec_gpu_emulated_host(int r, int n, int k);

/* The transport of one directed pair (a -> b) of process ranks. */
typedef struct {
    int net;            /* 1: net transport (pinned FIFOs + proxy); 0: same host (IPC or host-staged) */
    int apart;          /* 1: the processes are on different real hosts (host name or boot id) */
    char why[160];      /* the reason, for the per-pair log line */
} exec_gpu_pair;

/* Decide, identically in every process, the transport of every directed
 * pair: pairs[a * n + b] for a != b (the diagonal is left zeroed).  In order:
 * a rank forcing net (GPU_TP_NET) makes every pair net; processes on
 * different hosts (host name or boot id) are net; processes on different
 * emulated hosts (TOPOTUNE_GPU_EMULATE_HOSTS, the same value on every rank)
 * are net; the others share a host.  Errors: TT_ERR_UNSUPPORTED when a rank
 * forces host-staged memory while the ranks span (real or emulated) hosts;
 * TT_ERR_INVALID when the ranks disagree (net on one, host on another; a
 * different TOPOTUNE_GPU_EMULATE_HOSTS). */
tt_status exec_gpu_pairs_select(int n, const exec_gpu_where *w, exec_gpu_pair *pairs);

/* One net connection as the proxy sees it (host pointers). */
typedef struct {
    int peer;                            /* the other rank */
    int is_send;                         /* 1: this process's kernel sends on it */
    int role;                            /* the RECEIVER's role (GPU_CONN_*) */
    int channel;
    char *simple;                        /* GPU_SIMPLE_SLOTS x GPU_SIMPLE_SLOT_BYTES */
    char *ll;                            /* GPU_LL_SLOTS x GPU_LL_SLOT_LINES x 16 */
    volatile unsigned long long *head;   /* send: written by the kernel; recv: by the proxy */
    volatile unsigned long long *tail;   /* send: written by the proxy; recv: by the kernel */
    volatile unsigned long long *info;   /* send only: [GPU_NET_INFO_SLOTS] bytes | proto << 32 */
    /* proxy state */
    unsigned long long done;             /* send: steps forwarded; recv: steps delivered */
    unsigned long long credited;         /* recv: tail value last forwarded */
} exec_gpu_netconn;

typedef struct exec_gpu_proxy exec_gpu_proxy;

/* Start the progress thread of this process over `net` (a host communicator
 * of the same ranks).  conns is kept (not copied) until exec_gpu_proxy_stop.
 * abort_word / err: this process's control words (mapped host memory the
 * kernels poll); the proxy raises them when a peer's connection breaks
 * (err->what = 4, err->peer = that rank) or a peer reports an abort, and
 * sends this process's abort (err record) to every peer once it is raised.
 * timeout_ms: a peer that accepts no byte of a pending message for that long
 * is named as stuck. */
tt_status exec_gpu_proxy_start(exec_gpu_proxy **out, tt_comm *net, exec_gpu_netconn *conns, int nconns,
                               volatile int *abort_word, gpu_err *err, int timeout_ms);
/* Stop and join the thread (bounded: the loop checks the stop flag every turn). */
void exec_gpu_proxy_stop(exec_gpu_proxy *p);
/* Close the proxy's host communicator without a barrier (messages of the
 * proxies may still be in its streams); after exec_gpu_proxy_stop. */
void exec_gpu_net_comm_close(tt_comm *net);
/* Bytes moved so far (sent, received): for logs and tests. */
void exec_gpu_proxy_bytes(const exec_gpu_proxy *p, unsigned long long *sent, unsigned long long *received);

#ifdef __cplusplus
}
#endif

#endif
