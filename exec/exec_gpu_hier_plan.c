/* exec_gpu_hier_plan.c - the hierarchical GPU AllReduce's groups and shards (exec_gpu_hier.h).
 * No CUDA, so the rules are unit-tested on any machine (tests/unit/test_exec_gpu_hier.c). */
#include "exec_gpu_hier.h"

#include <string.h>

tt_status exec_gpu_hier_group(int n, const unsigned char *same, exec_gpu_hier_groups *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1 || n > EXEC_HIER_MAX || !same)
        return tt_error_set(TT_ERR_INVALID, "hierarchical plan: %d ranks (allowed 1..%d)", n, EXEC_HIER_MAX);
    out->n = n;
    int count[EXEC_HIER_MAX] = {0}, first[EXEC_HIER_MAX];
    for (int r = 0; r < n; r++) {
        /* host of r: the lowest rank sharing it (r itself when none lower does) */
        int h = r;
        for (int b = 0; b < r; b++)
            if (same[(size_t)r * n + b] || same[(size_t)b * n + r]) {
                h = b;
                break;
            }
        if (h == r) {
            first[out->nhosts] = r;
            out->host_of[r] = out->nhosts++;
        } else {
            out->host_of[r] = out->host_of[h];
        }
    }
    /* an equivalence: within a host every pair shares it, across hosts none does */
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (a == b) continue;
            int s = same[(size_t)a * n + b] != 0, want = out->host_of[a] == out->host_of[b];
            if (s != want)
                return tt_error_set(TT_ERR_INVALID, "hierarchical plan: ranks %d and %d %s, but through rank %d "
                                                    "they %s (the per-pair transports do not split the ranks "
                                                    "into hosts)",
                                    a, b, s ? "share a host (no net pair)" : "are joined by the net transport",
                                    first[out->host_of[a]], want ? "would share one" : "would not");
        }
    for (int r = 0; r < n; r++) out->local_of[r] = count[out->host_of[r]]++;
    out->L = count[0];
    for (int h = 1; h < out->nhosts; h++)
        if (count[h] != out->L)
            return tt_error_set(TT_ERR_UNSUPPORTED, "hierarchical plan: hosts hold different numbers of ranks: host "
                                                    "of rank %d has %d, host of rank %d has %d (needs the same count "
                                                    "on every host)", first[0], out->L, first[h], count[h]);
    for (int r = 0; r < n; r++) out->member[out->host_of[r] * out->L + out->local_of[r]] = r;
    return TT_OK;
}

int exec_gpu_hier_intra(const exec_gpu_hier_groups *hg, int rank, int *out, int *me)
{
    int h = hg->host_of[rank];
    for (int i = 0; i < hg->L; i++) out[i] = hg->member[h * hg->L + i];
    *me = hg->local_of[rank];
    return hg->L;
}

int exec_gpu_hier_inter(const exec_gpu_hier_groups *hg, int rank, int *out, int *me)
{
    int i = hg->local_of[rank];
    for (int h = 0; h < hg->nhosts; h++) out[h] = hg->member[h * hg->L + i];
    *me = hg->host_of[rank];
    return hg->nhosts;
}

exec_gpu_hier_split exec_gpu_hier_shards(size_t count, int L)
{
    exec_gpu_hier_split s;
    if (L < 1) L = 1;
    s.shard = count / (size_t)L;
    s.tail_off = s.shard * (size_t)L;
    s.tail = count - s.tail_off;
    return s;
}

int exec_gpu_hier_applies(const exec_gpu_hier_groups *hg) { return hg->nhosts > 1 && hg->L > 1; }
