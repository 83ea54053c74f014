#!/usr/bin/env bash
# plugin-load-check.sh - does NCCL load our tuner plugin on a stock GPU image (issue #15 part 1)?
#   GPU machine, build carried (scripts/gpu/devcarry.sh copies the plugin into .devcarry/gtests):
#     OUT=dir bash scripts/gpu/plugin-load-check.sh
# The plugin is loaded by NCCL inside PyTorch (a process that has never loaded libcjson or
# libtopotune, and with no LD_LIBRARY_PATH of ours), one rank, a table set for 1x1/2x1/8x1.
# Prints PASS/FAIL lines; exit 0 when every check passed, 1 otherwise, 3 when PyTorch is missing.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-.devcarry/build}
SO=${PLUGIN:-$PWD/.devcarry/gtests/libnccl-tuner-topotune.so}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-plugin-check.XXXXXX")}
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: > "$summary"
. scripts/gpu/gpu-lib.sh
fail=0
check() { if [ "$1" = 0 ]; then say "PASS $2"; else say "FAIL $2"; fail=1; fi; }
say "# plugin-load-check $(date -u '+%Y-%m-%d %H:%M UTC') $(hostname)"
[ -f "$SO" ] || { say "FAIL plugin not found: $SO"; exit 1; }
readelf -d "$SO" | awk '/NEEDED/{print $NF}' | tr -d '[]' > "$OUT/needed.txt"
say "# NEEDED: $(tr '\n' ' ' < "$OUT/needed.txt")"
! grep -vqE '^(libc|libm|ld-linux-x86-64)\.so' "$OUT/needed.txt"; check $? "the plugin needs only libc, libm and the loader"
LD_LIBRARY_PATH=$PWD/.devcarry/lib "$B/bin/topo-tune" -i tests/fixtures/hgx-h100-8gpu.xml --shapes 1x1,2x1,8x1 -f json \
  -o "$OUT/table-set.json" > "$OUT/topo-tune.log" 2>&1
check $? "topo-tune --shapes 1x1,2x1,8x1 writes a table set"
python3 -c 'import torch' 2>/dev/null || { say "SKIP PyTorch not installed: NCCL cannot be driven without a GPU program"; exit 3; }
cat > "$OUT/one_rank.py" <<'PY'
import torch, torch.distributed as dist
dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29533", rank=0, world_size=1)
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print("all_reduce result", x[0].item())
dist.destroy_process_group()
PY
env -u LD_LIBRARY_PATH TOPOTUNE_TUNER_TABLE="$OUT/table-set.json" NCCL_TUNER_PLUGIN="$SO" NCCL_NVLS_ENABLE=0 \
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING timeout 120 python3 "$OUT/one_rank.py" > "$OUT/nccl.log" 2>&1
check $? "a one-rank NCCL all_reduce through PyTorch with the plugin exits 0"
grep -q "all_reduce result 1.0" "$OUT/nccl.log"; check $? "... with the right result"
grep -E "TUNER|topotune" "$OUT/nccl.log" | head -20 | tee -a "$summary" > /dev/null
grep -qiE "Using topotune|TUNER/Plugin.*topotune" "$OUT/nccl.log"; check $? "NCCL loaded the topotune plugin"
! grep -qiE "Failed to (open|load).*tuner|dlopen.*tuner.*fail" "$OUT/nccl.log"; check $? "no failed dlopen of the plugin"
say "# done $(date -u '+%H:%M:%S UTC')"
exit $fail
