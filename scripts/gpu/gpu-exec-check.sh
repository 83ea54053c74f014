#!/usr/bin/env bash
# gpu-exec-check.sh - everything the GPU executor is checked with on a GPU
# machine, in one command (figures: docs/benchmarks.md):
#   unit tests (test_exec_gpu), compute-sanitizer memcheck + racecheck on a
#   quick run of them, reduce-copy vs cudaMemcpy at 256 MiB and 1 GiB,
#   virtual-rank AllReduce latency at 8 B and busbw 8 B..1 GiB for 2, 4, 8
#   ranks, the transport log line, and the NCCL engine on one rank.
# SKIP_COLL=1 leaves out the collective latency/bandwidth part, SKIP_RACE=1
# the racecheck run.
# Usage (binaries built elsewhere and carried):
#   BUILD=path/to/build OUT=results-dir bash scripts/gpu/gpu-exec-check.sh
# With the build carried by scripts/gpu/devcarry.sh (add libcmocka.so.0 to .devcarry/lib when the
# GPU machine lacks it):
#   export LD_LIBRARY_PATH=$PWD/.devcarry/lib; BUILD=.devcarry/build bash scripts/gpu/gpu-exec-check.sh
# (a copy elsewhere needs gpu-lib.sh beside it)
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-gpu-results}
FINAL_OUT=$OUT
OUT="$FINAL_OUT/logs"        # every log; packed into logs.tgz at the end
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0          # never NVLink SHARP / multicast on these machines
export TOPOTUNE_TIMEOUT_MS=${TOPOTUNE_TIMEOUT_MS:-20000}
TE="$BUILD/bin/topo-exec"
summary="$FINAL_OUT/summary.txt"
: > "$summary"
. "$(dirname "$0")/gpu-lib.sh"   # say, step
say "# gpu-exec-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname)"
nvidia-smi -L 2>&1 | tee -a "$summary"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1 | tee -a "$summary"

step unit 200 "$BUILD/tests/test_exec_gpu"
grep -E '^# |PASSED|FAILED|SKIPPED|ERROR' "$OUT/unit.log" | head -40 | tee -a "$summary"

# the CLI test of GPU mode (needs tests/cli/ beside the build: the repository, or a copy)
if [ -f tests/cli/test_topo_exec_gpu.sh ]; then
  BUILD=$BUILD TOPOTUNE_ROOT=$PWD step cli-gpu 120 bash tests/cli/test_topo_exec_gpu.sh
  grep -E '^(ok|not ok)' "$OUT/cli-gpu.log" | tee -a "$summary"
fi

for sz in 256M 1G; do
  step copy-$sz 120 "$TE" --gpu-copy-bench $sz -n 20
  tail -4 "$OUT/copy-$sz.log" | tee -a "$summary"
done

if [ -z "${SKIP_COLL:-}" ]; then
TOPOTUNE_DEBUG=INFO step transport-log 60 "$TE" -g 2 -b 1M -e 1M -n 2
grep -E ' via ' "$OUT/transport-log.log" | head -4 | tee -a "$summary"

for n in 2 4 8; do
  step lat-$n 120 "$TE" -g $n -b 8 -e 8 -n 2000 -w 200
  grep -E '^ +8 ' "$OUT/lat-$n.log" | tee -a "$summary"
  for p in ll simple; do
    step lat-$n-ring-$p 120 "$TE" -g $n -b 8 -e 8 -n 2000 -w 200 --algo ring --proto $p
    grep -E '^ +8 ' "$OUT/lat-$n-ring-$p.log" | tee -a "$summary"
  done
  step busbw-$n 200 "$TE" -g $n -b 8 -e 1G -f 2 -n 20 -w 3
  grep -vE '^#' "$OUT/busbw-$n.log" | tee -a "$summary"
  grep -E 'Out of bounds|Avg bus' "$OUT/busbw-$n.log" | tee -a "$summary"
done

step nccl-1 120 "$TE" -g 1 --engine nccl -b 8 -e 64M -f 8 -n 20 -w 3
tail -12 "$OUT/nccl-1.log" | tee -a "$summary"
step tt-1 120 "$TE" -g 1 -b 8 -e 64M -f 8 -n 20 -w 3
tail -12 "$OUT/tt-1.log" | tee -a "$summary"
fi  # SKIP_COLL
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$CS" ]; then
  TT_GPU_TEST_QUICK=1 step memcheck ${SAN_TIMEOUT:-150} "$CS" --tool memcheck --error-exitcode 9 "$BUILD/tests/test_exec_gpu"
  grep -E 'ERROR SUMMARY|PASSED|FAILED' "$OUT/memcheck.log" | tail -3 | tee -a "$summary"
  [ -z "${SKIP_RACE:-}" ] && TT_GPU_TEST_QUICK=1 step racecheck ${SAN_TIMEOUT:-150} "$CS" --tool racecheck --error-exitcode 9 "$BUILD/tests/test_exec_gpu"
  grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' "$OUT/racecheck.log" | tail -3 | tee -a "$summary"
else
  say "compute-sanitizer not found: memcheck/racecheck not run"
fi

say "# done $(date -u '+%H:%M:%S UTC')"
tar czf "$FINAL_OUT/logs.tgz" -C "$FINAL_OUT" logs && rm -rf "$OUT"
