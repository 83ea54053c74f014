#!/usr/bin/env bash
# gpu-ipc-check.sh - the GPU executor's process ranks (CUDA IPC) on a GPU
# machine, in one command: the IPC unit tests (test_exec_gpu_ipc: 2 and 3
# processes, host-staged through shm, killed peer, stuck rank), the thread-mode
# unit tests (quick), the GPU CLI test (topo-exec -g 1 --rank ...), two
# processes of topo-exec with the transport log, and compute-sanitizer
# memcheck on a quick run of the IPC tests.
# Usage (binaries built elsewhere and carried):
#   BUILD=path/to/build OUT=results-dir bash scripts/gpu-ipc-check.sh
# SKIP_SAN=1 leaves out compute-sanitizer.
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-gpu-ipc-results}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
TE="$BUILD/bin/topo-exec"
summary="$OUT/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
step() { # name, timeout, command...
  local name=$1 to=$2; shift 2
  local t0=$(date +%s.%N)
  timeout "$to" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  say "== $name: rc=$rc ($(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s)"
  return $rc
}
say "# gpu-ipc-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname)"
nvidia-smi -L 2>&1 | tee -a "$summary"
nvidia-smi --query-gpu=name,compute_mode,driver_version --format=csv 2>&1 | tee -a "$summary"
df -h /dev/shm 2>&1 | tail -1 | tee -a "$summary"

step ipc-unit ${UNIT_TIMEOUT:-120} "$BUILD/tests/test_exec_gpu_ipc"
grep -E '^# |OK|PASSED|FAILED|SKIPPED|ERROR' "$OUT/ipc-unit.log" | head -60 | tee -a "$summary"

port=$(( 20000 + (RANDOM % 20000) ))
TOPOTUNE_DEBUG=INFO timeout 60 "$TE" -g 1 --rank 1 --nranks 2 --master 127.0.0.1:$port -b 8 -e 64M -f 8 -n 5 -w 1 \
  > "$OUT/pair-rank1.log" 2>&1 &
p1=$!
TOPOTUNE_DEBUG=INFO step pair-rank0 60 "$TE" -g 1 --rank 0 --nranks 2 --master 127.0.0.1:$port -b 8 -e 64M -f 8 -n 5 -w 1
wait $p1; say "== pair-rank1: rc=$?"
grep -vE 'topotune INFO (exec|boot|transport)' "$OUT/pair-rank0.log" | head -40 | tee -a "$summary"
grep -E ' via ' "$OUT/pair-rank1.log" | head -4 | tee -a "$summary"

if [ -f tests/cli/test_topo_exec_gpu.sh ]; then
  BUILD=$BUILD TOPOTUNE_ROOT=$PWD step cli-gpu 90 bash tests/cli/test_topo_exec_gpu.sh
  grep -E '^(ok|not ok)' "$OUT/cli-gpu.log" | tee -a "$summary"
fi

TT_GPU_TEST_QUICK=1 step unit-threads 90 "$BUILD/tests/test_exec_gpu"
grep -E '^# |PASSED|FAILED|SKIPPED|ERROR' "$OUT/unit-threads.log" | head -30 | tee -a "$summary"

CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -z "${SKIP_SAN:-}" ] && [ -x "$CS" ]; then
  TT_GPU_TEST_QUICK=1 step ipc-memcheck ${SAN_TIMEOUT:-90} "$CS" --tool memcheck --target-processes all \
    --error-exitcode 9 "$BUILD/tests/test_exec_gpu_ipc"
  grep -E 'ERROR SUMMARY|PASSED|FAILED|OK \]|SKIPPED' "$OUT/ipc-memcheck.log" | tail -14 | tee -a "$summary"
fi
say "# done $(date -u '+%H:%M:%S UTC')"
