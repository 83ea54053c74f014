#!/usr/bin/env bash
# health-check.sh - on the GPU machine: the GPU health check of the nccl-tests drop-ins and topo-exec
# (issue #34 item 1) where CUDA really sees a GPU: a plain all_reduce_perf runs on the GPU, the same
# with every GPU hidden (CUDA_VISIBLE_DEVICES=) fails naming the cause instead of running host ranks,
# -g 0 still runs host ranks, NCCL_TESTS_MIN_BW fails a GPU run with FAILED and exit 7 (item 2), and
# topo-exec without arguments takes the GPU.  BIN: the tools (default .devcarry/build/bin).
set -u
cd "$(dirname "$0")/../.."
BIN=${BIN:-.devcarry/build/bin}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-health.XXXXXX")}
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: > "$summary"
T0=$(date +%s)
. scripts/gpu/gpu-lib.sh
say "# health-check $(date -u '+%Y-%m-%d %H:%M UTC') $(nvidia-smi -L 2>/dev/null | head -1)"
t() { "$@" >"$LOG/out" 2>"$LOG/err"; RC=$?; }
LOG=$(mktemp -d)
t "$BIN/all_reduce_perf" -b 8 -e 1M -f 32 -n 5 -w 1
[ $RC = 0 ] && grep -q '^# nThread 1 nGpus 1 ' "$LOG/out" && pass "all_reduce_perf on the GPU (exit 0, nGpus 1)" || fail "all_reduce_perf: rc $RC $(head -c 300 "$LOG/err")"
t env CUDA_VISIBLE_DEVICES= "$BIN/all_reduce_perf" -b 8 -e 1M -f 32 -n 5 -w 1
[ $RC = 1 ] && grep -q 'CUDA_VISIBLE_DEVICES= hides every GPU' "$LOG/err" && [ ! -s "$LOG/out" ] \
  && pass "every GPU hidden: exit 1, $(head -c 160 "$LOG/err")" || fail "hidden GPUs: rc $RC out $(head -c 200 "$LOG/out") err $(head -c 300 "$LOG/err")"
t env CUDA_VISIBLE_DEVICES= "$BIN/topo-exec" -g 1 -b 8 -e 8
[ $RC = 1 ] && pass "topo-exec -g 1 with every GPU hidden: exit 1" || fail "topo-exec -g 1 hidden: rc $RC $(head -c 300 "$LOG/err")"
t env CUDA_VISIBLE_DEVICES= "$BIN/all_reduce_perf" -g 0 -t 2 -b 8 -e 8
[ $RC = 0 ] && pass "-g 0: host ranks (exit 0)" || fail "-g 0: rc $RC $(head -c 300 "$LOG/err")"
t env NCCL_TESTS_MIN_BW=100000 "$BIN/all_reduce_perf" -b 1M -e 1M -n 5 -w 1
[ $RC = 7 ] && grep -q '^# Avg bus bandwidth *: .* FAILED$' "$LOG/out" && pass "NCCL_TESTS_MIN_BW on the GPU: FAILED, exit 7" || fail "MIN_BW GPU: rc $RC $(tail -3 "$LOG/out")"
# one rank's AllReduce moves nothing over the bus (busbw 0 fails any gate, in nccl-tests too): broadcast's busbw is its algbw
t env NCCL_TESTS_MIN_BW=0.000001 "$BIN/broadcast_perf" -b 1M -e 1M -n 5 -w 1
[ $RC = 0 ] && grep -q '^# Avg bus bandwidth *: .* OK$' "$LOG/out" && pass "NCCL_TESTS_MIN_BW met on the GPU: OK, exit 0" || fail "MIN_BW ok GPU: rc $RC $(tail -3 "$LOG/out")"
t timeout 300 "$BIN/topo-exec"
[ $RC = 0 ] && grep -q '^# topo-exec without arguments: 1 GPU rank' "$LOG/out" && pass "topo-exec without arguments takes the GPU" || fail "topo-exec no args: rc $RC $(head -3 "$LOG/out")"
t .devcarry/gtests/test_exec_gpu_health
[ $RC = 0 ] && pass "test_exec_gpu_health (staged driver states) on the GPU machine" || fail "test_exec_gpu_health: $(tail -5 "$LOG/out")"
rm -rf "$LOG"
finish_result
