/*
 * tuner_harness.c - drives an NCCL tuner plugin .so the way NCCL does: dlopen, the
 * ncclTunerPlugin_vN symbol, init per communicator, getCollInfo with a cost table, finalize.
 * The structs below are our own declarations of the published tuner API shapes (v4, v5, v6);
 * no NCCL header is used.  Used by tests/cli/test_tuner_plugin.sh.
 *
 *   tuner_harness SO VERSION STEP...
 *     VERSION 4, 5 or 6
 *     nvl:D:MIN:MAX           the next communicator's NVLink domain info (v5/v6; default: none)
 *     comm:RANKS:NODES        finalize the current communicator (if any), init a new one
 *     ignore:ALGO:PROTO       the next call's cost table has this cell at -1 (unsupported)
 *     call:COLL:BYTES[:PIPEOPS[:REGBUFF]]   one getCollInfo (COLL: NCCL id 0..4)
 * Prints "log W|I|T|?: text" per logger call, "init RANKS NODES rc=N", per call
 * "call COLL BYTES -> ALGO/PROTO nch=N" (ALGO/PROTO ids of the one cell set to 0, or "nccl" when
 * the table is untouched), "finalize rc=N".  Exit 1 on a missing symbol, a non-zero return code,
 * more than one cell changed or a -1 cell turned usable.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*h_logger)(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);
typedef struct { int nNvlDomains, minRanksPerNvlDomain, maxRanksPerNvlDomain; } h_nvl;
typedef struct { double c[7 * 3 + 3 * 7 * 3 + 5 * 4 * 3]; } h_constants; /* 7 tables of doubles, 231 in all */
typedef int (*h_init5)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, h_logger logf, h_nvl *nvl,
                       h_constants *consts);
typedef int (*h_init4)(size_t nRanks, size_t nNodes, h_logger logf, void **ctx);
typedef int (*h_coll)(void *ctx, int collType, size_t nBytes, int numPipeOps, float **table, int numAlgo, int numProto,
                      int regBuff, int *nChannels);
typedef int (*h_fini)(void *ctx);
typedef int (*h_chunk)(void *ctx, int collType, size_t nBytes, int algo, int proto, int nChannels, size_t *chunk);
typedef struct { const char *name; h_init5 init; h_coll getCollInfo; h_fini finalize; h_chunk getChunkSize; } h_v6;
typedef struct { const char *name; h_init5 init; h_coll getCollInfo; h_fini finalize; } h_v5;
typedef struct { const char *name; h_init4 init; h_coll getCollInfo; h_fini destroy; } h_v4;

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    (void)flags; (void)file; (void)line;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("log %s: %s\n", level == 2 ? "W" : level == 3 ? "I" : level == 5 ? "T" : "?", msg);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tuner_harness SO VERSION STEP...\n");
        return 2;
    }
    int ver = atoi(argv[2]);
    if (ver < 4 || ver > 6) {
        fprintf(stderr, "tuner_harness: version %s: want 4, 5 or 6\n", argv[2]);
        return 2;
    }
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        printf("dlopen failed: %s\n", dlerror());
        return 1;
    }
    char sym[32];
    snprintf(sym, sizeof sym, "ncclTunerPlugin_v%d", ver);
    void *p = dlsym(so, sym);
    if (!p) {
        printf("no symbol %s\n", sym);
        return 1;
    }
    const char *name = ((const h_v4 *)p)->name; /* every version starts with the name */
    h_coll coll = ver == 4 ? ((const h_v4 *)p)->getCollInfo : ((const h_v5 *)p)->getCollInfo;
    h_fini fini = ver == 4 ? ((const h_v4 *)p)->destroy : ((const h_v5 *)p)->finalize;
    printf("plugin %s v%d\n", name ? name : "(null)", ver);
    if (ver == 6 && !((const h_v6 *)p)->getChunkSize) printf("v6 without getChunkSize\n");
    int bad = 0, have_nvl = 0, ign_a = -1, ign_p = -1;
    h_nvl nvl = {0, 0, 0};
    h_constants consts;
    memset(&consts, 0, sizeof consts);
    void *ctx = NULL;
    int live = 0;
    for (int i = 3; i < argc; i++) {
        const char *s = argv[i];
        int a, b, c;
        long long bytes;
        if (sscanf(s, "nvl:%d:%d:%d", &a, &b, &c) == 3) {
            nvl.nNvlDomains = a;
            nvl.minRanksPerNvlDomain = b;
            nvl.maxRanksPerNvlDomain = c;
            have_nvl = 1;
        } else if (sscanf(s, "comm:%d:%d", &a, &b) == 2) {
            if (live) printf("finalize rc=%d\n", fini(ctx)), live = 0;
            int rc = ver == 4 ? ((const h_v4 *)p)->init((size_t)a, (size_t)b, logger, &ctx)
                              : ((const h_v5 *)p)->init(&ctx, 0x1234 + (uint64_t)i, (size_t)a, (size_t)b, logger,
                                                         have_nvl ? &nvl : NULL, &consts);
            printf("init %d %d rc=%d\n", a, b, rc);
            bad |= rc != 0;
            have_nvl = 0;
            live = 1;
        } else if (sscanf(s, "ignore:%d:%d", &a, &b) == 2) {
            ign_a = a;
            ign_p = b;
        } else if (sscanf(s, "call:%d:%lld", &a, &bytes) == 2) {
            int pipe = 1, reg = 0;
            const char *q = strchr(strchr(s + 5, ':') + 1, ':');
            if (q) sscanf(q, ":%d:%d", &pipe, &reg);
            if (!live) {
                printf("call before comm\n");
                return 2;
            }
            float t[7][3];
            for (int x = 0; x < 7; x++)
                for (int y = 0; y < 3; y++) t[x][y] = 100.0f + (float)(x * 3 + y);
            if (ign_a >= 0) t[ign_a][ign_p] = -1.0f;
            int nch = 0;
            int rc = coll(ctx, a, (size_t)bytes, pipe, (float **)t, 7, 3, reg, &nch);
            bad |= rc != 0;
            int changed = 0, ca = -1, cp = -1;
            for (int x = 0; x < 7; x++)
                for (int y = 0; y < 3; y++) {
                    float want = (x == ign_a && y == ign_p) ? -1.0f : 100.0f + (float)(x * 3 + y);
                    if (t[x][y] != want) {
                        changed++;
                        ca = x;
                        cp = y;
                        if (want < 0) {
                            printf("VIOLATION: cell %d/%d was -1 and is now %g\n", x, y, t[x][y]);
                            bad = 1;
                        } else if (t[x][y] != 0.0f) {
                            printf("cell %d/%d rescaled to %g\n", x, y, t[x][y]);
                        }
                    }
                }
            if (changed > 1) {
                printf("BAD: %d cells changed\n", changed);
                bad = 1;
            }
            if (changed == 1) printf("call %d %lld -> %d/%d nch=%d rc=%d\n", a, bytes, ca, cp, nch, rc);
            else printf("call %d %lld -> nccl nch=%d rc=%d\n", a, bytes, nch, rc);
            ign_a = ign_p = -1;
        } else {
            fprintf(stderr, "tuner_harness: unknown step '%s'\n", s);
            return 2;
        }
    }
    if (live) printf("finalize rc=%d\n", fini(ctx));
    fflush(stdout);
    dlclose(so);
    return bad;
}
