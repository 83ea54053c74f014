#!/usr/bin/env bash
# gpu-collectives-check.sh - the GPU executor's AllGather, ReduceScatter, Broadcast and Reduce
# (ring; the rooted ones as a pipelined chain along the ring) on a GPU machine, in one command
# that stays under 150 seconds (a deadline: a step that would pass it is skipped and says so):
#   1. test_exec_gpu with TT_GPU_TEST_COLL_ONLY=1: exact results of the four collectives on
#      1/2/3/4/8 virtual ranks (every type, ops, both protocols, in and out of place, every root,
#      odd counts), host-staged, P2P with 2+ GPUs, a stalled rank, plan errors
#   2. topo-exec -g 4 -t all_gather | reduce_scatter | broadcast -r 1 | reduce -r 2: a short
#      checked sweep each (8 B .. 16 MiB), plus reduce_scatter avg/int32 and reduce min/half
#   3. compute-sanitizer memcheck on a small case: the quick unit tests of the collectives on
#      1 and 3 virtual ranks, and topo-exec -g 3 -t all_gather / reduce_scatter (in-place layouts)
#   4. all_gather_perf (the nccl-tests drop-in) in GPU mode; two process ranks (CUDA IPC) with
#      -t reduce_scatter and -t broadcast -r 1; AllReduce still right (quick unit run, -g 4 sweep)
# Every check prints one line PASS / FAIL / SKIP NAME (reason); the last line is
# RESULT: PASS|FAIL (counts).  Logs and summary.txt under $OUT, packed into $OUT/logs.tgz.
# Usage (build carried by scripts/gpu/devcarry.sh), from the repository root:
#   BUILD=.devcarry/build OUT=dir bash scripts/gpu/gpu-collectives-check.sh
# (GTESTS=dir: where test_exec_gpu lives, default .devcarry/gtests, else $BUILD/tests)
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-.devcarry/build}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-gpu-collectives.XXXXXX")}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TOPOTUNE_TIMEOUT_MS=${TOPOTUNE_TIMEOUT_MS:-20000}
[ -d .devcarry/lib ] && export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
summary="$OUT/summary.txt"
: > "$summary"
. scripts/gpu/gpu-lib.sh   # say, step, pass/fail/skipped, left/limit, the verdicts
TE="$BUILD/bin/topo-exec"
UT=""
for d in "${GTESTS:-}" .devcarry/gtests "$BUILD/tests"; do
  [ -n "$d" ] && [ -x "$d/test_exec_gpu" ] && { UT="$d/test_exec_gpu"; break; }
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
T0=$(date +%s)
BUDGET=${BUDGET:-140}   # seconds for the whole script (the lead's limit is 150)

say "# gpu-collectives-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname); $(nvidia-smi -L 2>&1 | head -2 | tr '\n' ' ')"
[ -x "$TE" ] || { fail "setup: $TE not found (BUILD=$BUILD)"; say "RESULT: FAIL"; exit 1; }


# ---- 1. unit tests of the four collectives -------------------------------------------------
if [ -z "$UT" ]; then
  fail "unit-colls (test_exec_gpu not found in GTESTS, .devcarry/gtests or $BUILD/tests)"
else
  TT_GPU_TEST_COLL_ONLY=1 step unit-colls "$(limit 60)" "$UT"; unit_verdict unit-colls $?
fi

# ---- 2. topo-exec sweeps on 4 (virtual) ranks ------------------------------------------------
for c in "all_gather" "reduce_scatter" "broadcast -r 1" "reduce -r 2" \
         "reduce_scatter -o avg -d int32" "reduce -r 3 -o min -d half"; do
  name="sweep-g4-$(echo "$c" | tr -d ' -')"
  if left 8; then
    # shellcheck disable=SC2086
    step "$name" "$(limit 15)" "$TE" -g 4 -t $c -b 8 -e 16M -f 8 -n 5 -w 1 --no-progress; sweep_verdict "$name" $?
    grep -E '^ +[0-9]+ ' "$OUT/$name.log" | tail -3 >> "$summary"
  else
    skipped "$name (time budget)"
  fi
done

# ---- 3. compute-sanitizer memcheck on small cases ---------------------------------------------
if [ ! -x "$CS" ]; then
  fail "memcheck (compute-sanitizer not found: $CS)"
else
  if [ -n "$UT" ] && left 20; then
    TT_GPU_TEST_COLL_ONLY=small TT_GPU_TEST_QUICK=1 step memcheck-unit "$(limit 50)" \
      "$CS" --tool memcheck --error-exitcode 9 "$UT"
    san_verdict memcheck-unit $?
  else
    skipped "memcheck-unit (time budget or no test_exec_gpu)"
  fi
  for c in "all_gather" "reduce_scatter"; do
    if left 12; then
      step "memcheck-$c" "$(limit 25)" "$CS" --tool memcheck --error-exitcode 9 \
        "$TE" -g 3 -t $c -b 8 -e 256K -f 16 -n 1 -w 0 --no-progress
      rc=$?
      san_verdict "memcheck-$c" $rc
    else
      skipped "memcheck-$c (time budget)"
    fi
  done
fi

# ---- 4. drop-in, process ranks, AllReduce unchanged ------------------------------------------
if [ -x "$BUILD/bin/all_gather_perf" ] && left 8; then
  step dropin-all_gather_perf "$(limit 15)" "$BUILD/bin/all_gather_perf" -g 4 -b 8 -e 4M -f 8 -n 3 -w 1
  sweep_verdict dropin-all_gather_perf $?
else
  skipped "dropin-all_gather_perf (time budget or no $BUILD/bin/all_gather_perf)"
fi

for c in "reduce_scatter" "broadcast -r 1"; do
  name="procs-$(echo "$c" | tr -d ' -')"
  if left 15; then
    port=$(( 20000 + (RANDOM % 20000) ))
    lim=$(limit 25)
    # shellcheck disable=SC2086
    timeout "$lim" "$TE" -g 1 --rank 1 --nranks 2 --master 127.0.0.1:$port -t $c -b 8 -e 4M -f 8 -n 3 -w 1 \
      > "$OUT/$name-rank1.log" 2>&1 &
    p1=$!
    # shellcheck disable=SC2086
    step "$name" "$lim" "$TE" -g 1 --rank 0 --nranks 2 --master 127.0.0.1:$port -t $c -b 8 -e 4M -f 8 -n 3 -w 1
    rc0=$?
    wait $p1; rc1=$?
    if [ "$rc1" != 0 ]; then
      fail "$name (rank 1 rc=$rc1: $(grep -E 'topo-exec:' "$OUT/$name-rank1.log" | head -1 | cut -c1-200))"
    else
      sweep_verdict "$name" $rc0
    fi
  else
    skipped "$name (time budget)"
  fi
done

if left 10; then
  step sweep-g4-all_reduce "$(limit 15)" "$TE" -g 4 -b 8 -e 16M -f 8 -n 5 -w 1 --no-progress
  sweep_verdict sweep-g4-all_reduce $?
else
  skipped "sweep-g4-all_reduce (time budget)"
fi
if [ -n "$UT" ] && left 15; then
  TT_GPU_TEST_QUICK=1 step unit-all-quick "$(limit 40)" "$UT"; unit_verdict unit-all-quick $?
else
  skipped "unit-all-quick (time budget or no test_exec_gpu)"
fi

finish_result
