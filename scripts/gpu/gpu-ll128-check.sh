#!/usr/bin/env bash
# gpu-ll128-check.sh - the GPU executor's LL128 protocol and --validate of the collectives other
# than AllReduce on GPU ranks, on a GPU machine, in one command under a time budget (a step that
# would pass it is skipped and says so).  Parts (PARTS, default all):
#   unit      test_exec_gpu with TT_GPU_TEST_PROTOS=ll128: exact results of ring/tree AllReduce and
#             AllGather, ReduceScatter, Broadcast, Reduce on 2/3/4/8 virtual ranks (every type, the
#             ops, in and out of place, roots, odd counts), LL128 refused on host-staged pairs, a
#             stalled rank caught by the deadline under LL128, plan errors
#   cli       topo-exec -g 4 --proto ll128 for the five collectives (checked), host-staged refused,
#             a topo-tune table whose LL128 rules now run (and whose rd rule still falls back),
#             two process ranks on one GPU (IPC) with --proto ll128
#   san       compute-sanitizer memcheck and racecheck on small LL128 runs
#   perf      AllReduce on 2/4/8 virtual ranks, --proto ll / ll128 / simple side by side, 16 B .. 1 GiB
#             (x4 steps; the run of 2026-12-02 used -b 8, so its largest size was 512 MiB)
#   validate  topo-exec -g 4 --validate -t all_gather | reduce_scatter | broadcast -r 1 | reduce -r 2
#   copy      topo-exec --gpu-copy-bench 256M and 1G (reduce-copy layouts against cudaMemcpy)
# Every check prints one line PASS / FAIL / SKIP NAME (reason); perf prints the side-by-side table
# (perf.txt); the last line is RESULT: PASS|FAIL (counts).  Logs under $OUT (logs.tgz).
# Usage (build carried by scripts/gpu/devcarry.sh), from the repository root:
#   BUILD=.devcarry/build OUT=dir [PARTS="unit san"] [BUDGET=220] bash scripts/gpu/gpu-ll128-check.sh
# (the parts run in the order PARTS names them)
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-.devcarry/build}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-gpu-ll128.XXXXXX")}
PARTS=${PARTS:-unit cli san perf validate copy}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TOPOTUNE_TIMEOUT_MS=${TOPOTUNE_TIMEOUT_MS:-20000}
[ -d .devcarry/lib ] && export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
summary="$OUT/summary.txt"
: > "$summary"
. scripts/gpu/gpu-lib.sh   # say, step, pass/fail/skipped, left/limit, the verdicts
TE="$BUILD/bin/topo-exec"
TT="$BUILD/bin/topo-tune"
UT=""
for d in "${GTESTS:-}" .devcarry/gtests "$BUILD/tests"; do
  [ -n "$d" ] && [ -x "$d/test_exec_gpu" ] && { UT="$d/test_exec_gpu"; break; }
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
T0=$(date +%s)
BUDGET=${BUDGET:-220}

say "# gpu-ll128-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname); $(nvidia-smi -L 2>&1 | head -2 | tr '\n' ' '); parts: $PARTS"
[ -x "$TE" ] || { fail "setup: $TE not found (BUILD=$BUILD)"; say "RESULT: FAIL"; exit 1; }


# ---- unit: exact results under LL128 ------------------------------------------------------------
part_unit() {
  if [ -z "$UT" ]; then fail "unit-ll128 (test_exec_gpu not found)"
  elif left 30; then TT_GPU_TEST_PROTOS=ll128 step unit-ll128 "$(limit 75)" "$UT"; unit_verdict unit-ll128 $?
  else skipped "unit-ll128 (time budget)"; fi
}

# ---- cli: topo-exec with --proto ll128 ----------------------------------------------------------
part_cli() {
  for c in "all_reduce" "all_reduce --algo tree" "all_gather" "reduce_scatter -o avg -d int32" "broadcast -r 1" \
           "reduce -r 2 -o min -d half"; do
    name="ll128-g4-$(echo "$c" | tr -d ' -')"
    if left 8; then
      # shellcheck disable=SC2086
      step "$name" "$(limit 15)" "$TE" -g 4 -t $c --proto ll128 -b 8 -e 4M -f 16 -n 2 -w 1 --no-progress
      sweep_verdict "$name" $? '/ll128/'
    else skipped "$name (time budget)"; fi
  done
  if left 5; then
    TOPOTUNE_GPU_TRANSPORT=host step ll128-host-refused "$(limit 10)" "$TE" -g 2 --proto ll128 -b 8 -e 8 -n 1
    rc=$?
    if [ "$rc" = 2 ] && grep -q "LL128 needs ranks on one GPU or NVLink peers" "$OUT/ll128-host-refused.log"; then
      pass "ll128-host-refused (exit 2: $(grep -m1 'LL128 needs' "$OUT/ll128-host-refused.log" | cut -c1-200))"
    else fail "ll128-host-refused (rc=$rc; $(head -c 300 "$OUT/ll128-host-refused.log"))"; fi
  fi
  if [ -x "$TT" ] && left 10; then
    # a table of a 2-GPU NVLink machine: ring/ll128 rules for all_gather run now; allreduce's rd rules still fall back
    "$TT" -i tests/fixtures/hgx-h100-8gpu.xml -g 2 -f json -C all --max-size 1G -o "$OUT/t2.json" > "$OUT/t2.log" 2>&1
    step table-ll128-all_gather "$(limit 15)" "$TE" -g 2 -t all_gather --table "$OUT/t2.json" -b 2M -e 16M -f 8 -n 3 -w 1 --no-progress
    rc=$?
    # the header line "# plan table: FILE (N rules ...)" is always there; the count line says the fallbacks
    if grep -qE "plan table: [1-9][0-9]* size" "$OUT/table-ll128-all_gather.log"; then
      fail "table-ll128-all_gather (a fallback was counted: $(grep -m1 -E 'plan table: [0-9]+ size' "$OUT/table-ll128-all_gather.log"))"
    else sweep_verdict table-ll128-all_gather $rc 'ring/ll128'; fi
    step table-rd-all_reduce "$(limit 15)" "$TE" -g 2 --table "$OUT/t2.json" -b 1M -e 1M -n 3 -w 1 --no-progress
    rc=$?
    if [ "$rc" = 0 ] && grep -qE "plan table: [1-9][0-9]* size" "$OUT/table-rd-all_reduce.log"; then
      pass "table-rd-all_reduce (fallback still counted: $(grep -m1 -E 'plan table: [0-9]+ size' "$OUT/table-rd-all_reduce.log" | cut -c1-120))"
    else fail "table-rd-all_reduce (rc=$rc; $(grep -E 'plan table|topo-exec:' "$OUT/table-rd-all_reduce.log" | head -2 | tr '\n' ' '))"; fi
  fi
  if left 15; then
    port=$(( 20000 + (RANDOM % 20000) )); lim=$(limit 25)
    timeout "$lim" "$TE" -g 1 --rank 1 --nranks 2 --master 127.0.0.1:$port --proto ll128 -b 8 -e 64K -f 64 -n 2 -w 1 \
      > "$OUT/procs-ll128-rank1.log" 2>&1 &
    p1=$!
    step procs-ll128 "$lim" "$TE" -g 1 --rank 0 --nranks 2 --master 127.0.0.1:$port --proto ll128 -b 8 -e 64K -f 64 -n 2 -w 1
    rc0=$?
    wait $p1; rc1=$?
    if [ "$rc1" != 0 ]; then fail "procs-ll128 (rank 1 rc=$rc1: $(grep -m1 'topo-exec:' "$OUT/procs-ll128-rank1.log" | cut -c1-200))"
    else sweep_verdict procs-ll128 $rc0 'll128'; fi
  else skipped "procs-ll128 (time budget)"; fi
}

# ---- san: compute-sanitizer on small LL128 runs -------------------------------------------------
part_san() {
  if [ ! -x "$CS" ]; then fail "sanitizer (compute-sanitizer not found: $CS)"; return; fi
  local tool c name
  for tc in "memcheck all_reduce --algo ring" "memcheck reduce_scatter" "racecheck all_reduce --algo tree" \
            "memcheck all_reduce --algo tree" "racecheck all_gather"; do
    tool=${tc%% *}; c=${tc#* }
    name="$tool-$(echo "$c" | tr -d ' -')"
    if left 12; then
      # shellcheck disable=SC2086
      step "$name" "$(limit 30)" "$CS" --tool $tool --error-exitcode 9 \
        "$TE" -g 3 -t $c --proto ll128 -b 8 -e 256K -f 64 -n 1 -w 0 --no-progress
      san_verdict "$name" $?
    else skipped "$name (time budget)"; fi
  done
  if [ -n "$UT" ] && left 40; then
    TT_GPU_TEST_PROTOS=ll128 TT_GPU_TEST_COLL_ONLY=small TT_GPU_TEST_QUICK=1 step memcheck-unit-colls "$(limit 50)" \
      "$CS" --tool memcheck --error-exitcode 9 "$UT"
    san_verdict memcheck-unit-colls $?
  else skipped "memcheck-unit-colls (time budget or no test_exec_gpu)"; fi
}

# ---- perf: ll vs ll128 vs simple, 2/4/8 virtual ranks, 8 B .. 1 GiB ------------------------------
part_perf() {
  for n in 2 4 8; do
    for p in ll128 ll simple; do
      name="perf-g$n-$p"
      if left 12; then
        step "$name" "$(limit 30)" "$TE" -g $n --proto $p -b 16 -e 1G -f 4 -n 3 -w 1 --check-max 16M --no-progress
        sweep_verdict "$name" $? "/$p/"
      else skipped "$name (time budget)"; fi
    done
    # side by side: size, then per protocol the out-of-place time (us) and busbw (GB/s)
    {
      echo "# AllReduce on $n virtual ranks (float sum, out of place): time us / busbw GB/s"
      printf "%12s %22s %22s %22s\n" size "ll" "ll128" "simple"
      awk -v a="$OUT/perf-g$n-ll.log" -v b="$OUT/perf-g$n-ll128.log" -v c="$OUT/perf-g$n-simple.log" '
        function rd(f, k,   l, x) { while ((getline l < f) > 0) { split(l, x); if (l ~ /^ +[0-9]+ +[0-9]+ +float/) { t[k, x[1]] = x[6]; bw[k, x[1]] = x[8]; s[x[1]] = 1 } } }
        BEGIN { rd(a, 0); rd(b, 1); rd(c, 2); n = 0; for (z in s) v[++n] = z + 0;
                for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { w = v[i]; v[i] = v[j]; v[j] = w }
                for (i = 1; i <= n; i++) { z = v[i]; printf "%12d", z;
                  for (k = 0; k < 3; k++) printf " %12s / %7s", ((k, z) in t) ? t[k, z] : "-", ((k, z) in bw) ? bw[k, z] : "-"; printf "\n" } }'
    } > "$OUT/perf-g$n.txt"
    cat "$OUT/perf-g$n.txt" | tee -a "$OUT/perf.txt" >> "$summary"
  done
}

# ---- validate: the other collectives on GPU ranks -------------------------------------------------
part_validate() {
  for c in "all_gather" "reduce_scatter" "broadcast -r 1" "reduce -r 2"; do
    name="validate-g4-$(echo "$c" | tr -d ' -')"
    if left 12; then
      # shellcheck disable=SC2086
      step "$name" "$(limit 25)" "$TE" -g 4 --validate -t $c -b 4K -e 4M -f 32 -n 3 -w 1 --no-progress
      rc=$?
      grep -E '^ +[0-9]|^# (Validate|verdict|summary)|RIGHT|WRONG' "$OUT/$name.log" | head -12 >> "$summary"
      if { [ "$rc" = 0 ] || [ "$rc" = 3 ]; } && grep -qE "$(echo "$c" | cut -d' ' -f1), 4 ranks" "$OUT/$name.log"; then
        pass "$name (exit $rc: $(grep -E 'size\(s\) judged' "$OUT/$name.log" | tail -1 | cut -c3-160))"
      else fail "$name (rc=$rc; $(grep -E 'topo-exec:|rror' "$OUT/$name.log" | head -2 | tr '\n' ' ' | cut -c1-300))"; fi
    else skipped "$name (time budget)"; fi
  done
}

# ---- copy: reduce-copy layouts against cudaMemcpy ------------------------------------------------
part_copy() {
  # the collectives' own per-channel movement: one rank, every collective is a copy of each
  # channel's pieces (64 channels); copy GB/s = 2 x algbw
  if left 10; then
    step copy-coll-g1 "$(limit 30)" "$TE" -g 1 -b 256M -e 1G -f 4 -n 10 -w 2 -c 0 --no-progress
    rc=$?
    grep -E '^ +[0-9]' "$OUT/copy-coll-g1.log" >> "$summary"
    if [ "$rc" = 0 ]; then pass "copy-coll-g1 ($(grep -E '^ +[0-9]' "$OUT/copy-coll-g1.log" | awk '{printf "%s B: %s GB/s copy; ", $1, 2 * $7}'))"
    else fail "copy-coll-g1 (rc=$rc; $(tail -2 "$OUT/copy-coll-g1.log" | tr '\n' ' '))"; fi
  fi
  for sz in 256M 1G; do
    if left 15; then
      step "copy-$sz" "$(limit 40)" "$TE" --gpu-copy-bench $sz -n 10
      rc=$?
      grep -E '^ |^# variant' "$OUT/copy-$sz.log" >> "$summary"
      if [ "$rc" = 0 ]; then pass "copy-$sz"; else fail "copy-$sz (rc=$rc; $(tail -2 "$OUT/copy-$sz.log" | tr '\n' ' '))"; fi
    else skipped "copy-$sz (time budget)"; fi
  done
}

for part in $PARTS; do
  case "$part" in
    unit|cli|san|perf|validate|copy) "part_$part" ;;
    *) fail "PARTS: unknown part '$part' (unit cli san perf validate copy)" ;;
  esac
done

finish_result
