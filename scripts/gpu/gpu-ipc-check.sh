#!/usr/bin/env bash
# gpu-ipc-check.sh - the GPU executor's process ranks (CUDA IPC) on a GPU
# machine, in one command: the IPC unit tests (test_exec_gpu_ipc: 2 and 3
# processes, host-staged through shm, killed peer, stuck rank), the thread-mode
# unit tests (quick), the GPU CLI test (topo-exec -g 1 --rank ...), two
# processes of topo-exec with the transport log, and compute-sanitizer
# memcheck on a quick run of the IPC tests.
# Usage (binaries built elsewhere and carried):
#   BUILD=path/to/build OUT=results-dir bash scripts/gpu/gpu-ipc-check.sh
# Then: the launcher-environment start (RANK/WORLD_SIZE/MASTER_*; mpirun with
# OMPI_COMM_WORLD_* when mpirun is there) and each process of a topo-exec pair
# under compute-sanitizer memcheck.
# SKIP_SAN=1 leaves out compute-sanitizer; SKIP_BASE=1 runs only the second part.
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-gpu-ipc-results}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
TE="$BUILD/bin/topo-exec"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
summary="$OUT/summary.txt"
: > "$summary"
. "$(dirname "$0")/gpu-lib.sh"   # say, step
say "# gpu-ipc-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname)"
nvidia-smi -L 2>&1 | tee -a "$summary"
nvidia-smi --query-gpu=name,compute_mode,driver_version --format=csv 2>&1 | tee -a "$summary"
df -h /dev/shm 2>&1 | tail -1 | tee -a "$summary"

if [ -z "${SKIP_BASE:-}" ]; then
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

if [ -z "${SKIP_SAN:-}" ] && [ -x "$CS" ]; then
  TT_GPU_TEST_QUICK=1 step ipc-memcheck ${SAN_TIMEOUT:-90} "$CS" --tool memcheck --target-processes all \
    --error-exitcode 9 "$BUILD/tests/test_exec_gpu_ipc"
  grep -E 'ERROR SUMMARY|PASSED|FAILED|OK \]|SKIPPED' "$OUT/ipc-memcheck.log" | tail -14 | tee -a "$summary"
fi
fi # SKIP_BASE

# launcher environment (tt_comm_init_env): torchrun's variables, 3 processes
port=$(( 20000 + (RANDOM % 20000) ))
for r in 1 2; do
  RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 60 "$TE" -g 1 -b 8 -e 4M -f 16 -n 3 \
    > "$OUT/env-rank$r.log" 2>&1 &
done
RANK=0 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port step env-rank0 60 "$TE" -g 1 -b 8 -e 4M -f 16 -n 3
wait
grep -vE '^topotune' "$OUT/env-rank0.log" | grep -E 'process ranks|Rank|^ +[0-9]|Out of bounds' | tee -a "$summary"
say "env-rank1/2 stdout lines: $(grep -c . "$OUT/env-rank1.log") $(grep -c . "$OUT/env-rank2.log")"

if command -v mpirun >/dev/null; then
  port=$(( 20000 + (RANDOM % 20000) ))
  step mpirun 90 mpirun --allow-run-as-root --oversubscribe -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$port \
    "$TE" -g 1 -b 8 -e 1M -f 32 -n 3
  grep -E 'process ranks|Rank|^ +[0-9]|Out of bounds|rror' "$OUT/mpirun.log" | head -20 | tee -a "$summary"
fi

if [ -z "${SKIP_SAN:-}" ] && [ -x "$CS" ]; then
  port=$(( 20000 + (RANDOM % 20000) ))
  timeout 120 "$CS" --tool memcheck --error-exitcode 9 "$TE" -g 1 --rank 1 --nranks 2 --master 127.0.0.1:$port \
    -b 8 -e 4M -f 8 -n 2 -w 1 > "$OUT/pair-memcheck-rank1.log" 2>&1 &
  p1=$!
  step pair-memcheck-rank0 120 "$CS" --tool memcheck --error-exitcode 9 "$TE" -g 1 --rank 0 --nranks 2 \
    --master 127.0.0.1:$port -b 8 -e 4M -f 8 -n 2 -w 1
  wait $p1; say "== pair-memcheck-rank1: rc=$?"
  grep -hE 'ERROR SUMMARY|Out of bounds' "$OUT/pair-memcheck-rank0.log" "$OUT/pair-memcheck-rank1.log" | tee -a "$summary"
fi
say "# done $(date -u '+%H:%M:%S UTC')"
