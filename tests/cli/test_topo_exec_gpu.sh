#!/usr/bin/env bash
# topo-exec GPU mode: without a GPU, -g / --engine nccl / --gpu-copy-bench fail
# at once with the reason and exit 2 (usage: use --host) (nothing hangs, nothing fails at load
# time); --host keeps host mode.  With a GPU: a small validated sweep on
# (virtual) GPU ranks, plan overrides, an unsupported plan refused.
source "$(dirname "$0")/lib.sh"
TE="$BIN/topo-exec"
export NCCL_NVLS_ENABLE=0

run "$TE" --host 2 -b 1K -e 4K -n 2 --no-progress
expect_rc 0 "--host keeps host ranks"
expect_grep "$TMP/out" "Out of bounds values : 0 OK" "host sweep still validated"

run "$TE" -g 2 -b 1K -e 4K -x
expect_rc 2 "unknown option in GPU mode is a usage error"

run "$TE" -g 2 -t all_gather
expect_rc 2 "GPU mode refuses collectives other than all_reduce"
expect_grep "$TMP/err" "all_reduce only" "... and says so"

run "$TE" -g 1 -b 1K -e 1K -n 1
why=$(head -1 "$TMP/err")
if grep -qE "no usable GPU|no CUDA support" "$TMP/err"; then
  expect_rc 2 "-g without a GPU is refused with exit 2"
  expect_grep "$TMP/err" "use --host N" "... naming the way out"
  run "$TE" -g 2 --engine nccl
  expect_rc 2 "--engine nccl without a GPU is refused with exit 2"
  run "$TE" --gpu-copy-bench 1M
  expect_rc 2 "--gpu-copy-bench without a GPU is refused with exit 2"
  skip "GPU sweep" "no GPU: $why"
else
  expect_rc 0 "-g 1 runs on the GPU"
  run "$TE" -g 3 -b 8 -e 1M -f 8 -n 3 --algo tree --proto ll
  expect_rc 0 "3 GPU ranks, tree/ll sweep"
  expect_grep "$TMP/out" "Out of bounds values : 0 OK" "... all values right"
  expect_grep "$TMP/out" "tree/ll" "... with the plan asked for"
  ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
  if [ "${ngpu:-1}" -lt 3 ]; then
    expect_grep "$TMP/out" "VIRTUAL RANKS" "... marked as virtual ranks"
  fi
  run "$TE" -g 2 --proto ll128
  expect_rc 2 "LL128 is refused, not replaced"
  expect_grep "$TMP/err" "available: simple, ll" "... listing what is available"
fi
finish
