#!/usr/bin/env bash
# gpu-copy-check.sh - the copy efficiency of the collectives' channels (issue #14) and everything a
# change of the channel walk could break, in one command on a GPU machine, under a time budget (a step
# that would pass it is skipped and says so).  It builds nothing: it runs a new build against an old one
# (both carried), so every before/after figure comes from the same run.  Parts (PARTS, default all, run in
# the order named):
#   probe  tests/gpu/copy_layout_probe (compiled on the development machine): the executor's reduce_copy
#          in several block layouts, grids and unrolls against cudaMemcpy, with the blocks' time spread
#   copy   topo-exec --gpu-copy-bench 256M / 1G (the cudaMemcpy D2D figure), then the one-rank collective
#          `topo-exec -g 1 -b 256M -e 1G -f 4 -n 10 -w 2 -c 0` (every collective is each channel's copy
#          of its pieces) of OLD and NEW, interleaved twice; copy GB/s = 2 x algbw; the goal line says
#          whether NEW reaches GOAL_PCT (92) % of cudaMemcpy at 256 MiB and 1 GiB
#   unit   test_exec_gpu (exact results on 1/2/3/4/8 virtual ranks, every collective, protocol, type,
#          channel walks of several rounds, host-staged, stalled ranks) and test_exec_gpu_ipc (process
#          ranks over IPC and the net transport; UNIT_IPC=0 leaves it out)
#   cli    topo-exec -g 4 checked sweeps 8 B .. 128 MiB of every collective (tree AllReduce too) with the
#          default plan and with --proto ll128 (--proto ll: ring AllReduce, AllGather), -g 2 over the
#          host-staged transport (AllReduce simple, AllGather ll), two process ranks over IPC (AllReduce)
#          and over the net transport (AllGather)
#   san    compute-sanitizer memcheck and racecheck on -g 3 runs over 2 channels up to 2 MiB (every channel
#          walks several rounds of pieces) of the changed kernels (ring and tree AllReduce, AllGather,
#          ReduceScatter, Reduce, Broadcast; simple, ll, ll128; SAN_SET="TOOL PROTO COLL ARGS;..." overrides) and memcheck on
#          the unit tests' quick sweeps (one and three ranks, every collective)
#   perf   AllReduce busbw on 2/4/8 virtual ranks, --proto simple / ll / ll128, 16 B .. 1 GiB, OLD and NEW
#          side by side (perf-g<N>-<proto>.txt, ratio new / old per size); perf-late: the same, later
# Every check prints PASS / FAIL / SKIP NAME (reason); the last line is RESULT: PASS|FAIL (counts); logs in
# $OUT/logs.tgz, tables in $OUT/summary.txt.
# Usage, from the repository root (or a folder holding scripts/gpu/ and tests/gpu/ copies):
#   NEW=dir OLD=dir [GTESTS=dir] [PROBE=path] [U8=dir] OUT=dir [PARTS="probe copy"] [BUDGET=300] \
#     bash scripts/gpu/gpu-copy-check.sh
#   NEW/OLD/U8: folders holding bin/topo-exec (U8: an optional third build, compared in copy and perf
#   simple); PERF_SET ("2:simple 2:ll ... 8:ll128", ranks:protocol) narrows perf; the part perf-late
#   sweeps PERF_LATE_SET (so that a budget-cut run can put some sweeps after cli and san)
set -u
cd "$(dirname "$0")/../.." || exit 1
NEW=${NEW:-.devcarry/build}
OLD=${OLD:-}
U8=${U8:-}
GTESTS=${GTESTS:-$NEW/../gtests}
PROBE=${PROBE:-}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-gpu-copy.XXXXXX")}
PARTS=${PARTS:-probe copy unit cli san perf}
GOAL_PCT=${GOAL_PCT:-92}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TOPOTUNE_TIMEOUT_MS=${TOPOTUNE_TIMEOUT_MS:-20000}
summary="$OUT/summary.txt"
: > "$summary"
. scripts/gpu/gpu-lib.sh   # say, step, pass/fail/skipped, left/limit, the verdicts
TE="$NEW/bin/topo-exec"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
T0=$(date +%s)
BUDGET=${BUDGET:-300}

say "# gpu-copy-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname); $(nvidia-smi -L 2>&1 | head -2 | tr '\n' ' '); parts: $PARTS"
say "# NEW=$NEW OLD=${OLD:-none} U8=${U8:-none}"
[ -x "$TE" ] || { fail "setup: $TE not found (NEW=$NEW)"; say "RESULT: FAIL"; exit 1; }

# rows FILE: the data rows of a nccl-tests table (size count type ...)
rows() { grep -E '^ +[0-9]+ +[0-9]+ +[a-z]' "$1"; }

# ---- probe: what limits the channels' copy -----------------------------------------------------
part_probe() {
  if [ -z "$PROBE" ] || [ ! -x "$PROBE" ]; then skipped "probe (no probe binary: PROBE=$PROBE)"; return; fi
  if left 20; then
    step probe "$(limit 60)" "$PROBE" 256 1024
    rc=$?
    cat "$OUT/probe.log" >> "$summary"
    if [ "$rc" = 0 ] && ! grep -q WRONG "$OUT/probe.log"; then pass "probe"; else fail "probe (rc=$rc)"; fi
  else skipped "probe (time budget)"; fi
}

# ---- copy: the one-rank collective of OLD and NEW against cudaMemcpy --------------------------
# memcpy_gbs LOG: the median of the bench's memcpy column
memcpy_gbs() { grep -E '^  [a-z]' "$1" | awk '{print $(NF-4)}' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
part_copy() {
  local sz build tag i
  for sz in 256M 1G; do
    if left 15; then
      step "copy-bench-$sz" "$(limit 40)" "$TE" --gpu-copy-bench $sz -n 20
      rc=$?
      grep -E '^  [a-z]' "$OUT/copy-bench-$sz.log" >> "$summary"
      if [ "$rc" = 0 ]; then pass "copy-bench-$sz (cudaMemcpy median $(memcpy_gbs "$OUT/copy-bench-$sz.log") GB/s)"
      else fail "copy-bench-$sz (rc=$rc; $(tail -2 "$OUT/copy-bench-$sz.log" | tr '\n' ' '))"; fi
    else skipped "copy-bench-$sz (time budget)"; fi
  done
  local builds="new:$NEW"
  [ -n "$OLD" ] && builds="old:$OLD $builds"
  [ -n "$U8" ] && builds="$builds u8:$U8"
  for i in 1 2; do
    for b in $builds; do
      tag=${b%%:*}; build=${b#*:}
      if left 10; then
        step "copy-g1-$tag-$i" "$(limit 30)" "$build/bin/topo-exec" -g 1 -b 256M -e 1G -f 4 -n 10 -w 2 -c 0 --no-progress
        rc=$?
        [ "$rc" = 0 ] || fail "copy-g1-$tag-$i (rc=$rc; $(tail -2 "$OUT/copy-g1-$tag-$i.log" | tr '\n' ' '))"
      fi
    done
  done
  # table: size, memcpy, per build and run the copy GB/s (2 x out-of-place algbw) and its share of memcpy
  local m256 m1g
  m256=$(memcpy_gbs "$OUT/copy-bench-256M.log" 2>/dev/null); m1g=$(memcpy_gbs "$OUT/copy-bench-1G.log" 2>/dev/null)
  {
    echo "# one-rank collective copy (2 x out-of-place algbw, GB/s) against cudaMemcpy D2D (bench median)"
    printf "%12s %10s" size memcpy
    for b in $builds; do for i in 1 2; do printf " %16s" "${b%%:*}-$i"; done; done; echo
    for s in 268435456 1073741824; do
      m=$([ "$s" = 268435456 ] && echo "${m256:-0}" || echo "${m1g:-0}")
      printf "%12s %10s" "$s" "$m"
      for b in $builds; do for i in 1 2; do
        f="$OUT/copy-g1-${b%%:*}-$i.log"
        g=$(rows "$f" 2>/dev/null | awk -v s="$s" '$1 == s {printf "%.1f", 2 * $7}')
        printf " %16s" "${g:--} ($(awk -v g="${g:-0}" -v m="$m" 'BEGIN{if (m > 0) printf "%.1f%%", 100 * g / m; else printf "-"}'))"
      done; done; echo
    done
  } > "$OUT/copy.txt"
  cat "$OUT/copy.txt" >> "$summary"
  # the goal: NEW's worse run at both sizes
  for s in 268435456 1073741824; do
    m=$([ "$s" = 268435456 ] && echo "${m256:-0}" || echo "${m1g:-0}")
    worst=$(for i in 1 2; do rows "$OUT/copy-g1-new-$i.log" 2>/dev/null | awk -v s="$s" '$1 == s {print 2 * $7}'; done |
            sort -g | head -1)
    pct=$(awk -v g="${worst:-0}" -v m="$m" 'BEGIN{if (m > 0) printf "%.1f", 100 * g / m; else print 0}')
    if awk -v p="$pct" -v goal="$GOAL_PCT" 'BEGIN{exit !(p >= goal)}'; then
      pass "goal-copy-$s (new: $worst GB/s = $pct % of cudaMemcpy $m GB/s, goal $GOAL_PCT %)"
    else fail "goal-copy-$s (new: ${worst:-none} GB/s = $pct % of cudaMemcpy $m GB/s, goal $GOAL_PCT %)"; fi
  done
}

# ---- unit: exact results ----------------------------------------------------------------------
part_unit() {
  if [ ! -x "$GTESTS/test_exec_gpu" ]; then fail "unit (test_exec_gpu not found in $GTESTS)"; return; fi
  if left 40; then step unit-gpu "$(limit 120)" "$GTESTS/test_exec_gpu"; unit_verdict unit-gpu $?
  else skipped "unit-gpu (time budget)"; fi
  [ "${UNIT_IPC:-1}" = 0 ] && { skipped "unit-gpu-ipc (UNIT_IPC=0)"; return; }
  if [ -x "$GTESTS/test_exec_gpu_ipc" ] && left 40; then
    step unit-gpu-ipc "$(limit 120)" "$GTESTS/test_exec_gpu_ipc"; unit_verdict unit-gpu-ipc $?
  else skipped "unit-gpu-ipc (time budget or not found)"; fi
}

# ---- cli: checked sweeps of every collective, transports ---------------------------------------
# pair NAME TRANSPORT ARGS...: two process ranks on this GPU, rank 1 in the background
pair() {
  local name=$1 tr=$2; shift 2
  local port=$(( 20000 + (RANDOM % 20000) )) lim
  lim=$(limit 40)
  timeout "$lim" "$TE" -g 1 --rank 1 --nranks 2 --master 127.0.0.1:$port --gpu-transport "$tr" "$@" \
    > "$OUT/$name-rank1.log" 2>&1 &
  local p1=$!
  step "$name" "$lim" "$TE" -g 1 --rank 0 --nranks 2 --master 127.0.0.1:$port --gpu-transport "$tr" "$@"
  local rc0=$?
  wait $p1; local rc1=$?
  if [ "$rc1" != 0 ]; then fail "$name (rank 1 rc=$rc1: $(grep -m1 'topo-exec:' "$OUT/$name-rank1.log" | cut -c1-200))"
  else sweep_verdict "$name" $rc0; fi
}
part_cli() {
  local c p name
  for c in "all_reduce" "all_reduce --algo tree" "all_gather" "reduce_scatter -o avg -d int32" "broadcast -r 1" \
           "reduce -r 2 -o max -d half"; do
    for p in default ll ll128; do
      # LL at 128 MiB is slow: forced on ring AllReduce and AllGather only (the unit tests run it everywhere)
      case "$p:$c" in ll:all_reduce|ll:all_gather|default:*|ll128:*) ;; *) continue ;; esac
      name="g4-$(echo "$c" | tr -d ' -')-$p"
      if left 10; then
        # shellcheck disable=SC2046,SC2086
        step "$name" "$(limit 40)" "$TE" -g 4 -t $c $([ $p = default ] || echo --proto $p) -b 8 -e 128M -f 8 -n 2 -w 1 \
          --check-max 128M --no-progress
        sweep_verdict "$name" $? "$([ $p = default ] && echo /simple/ || echo /$p/)"
      else skipped "$name (time budget)"; fi
    done
  done
  for cp in all_reduce:simple all_gather:ll; do
    c=${cp%%:*}; p=${cp#*:}
    {
      name="host-staged-g2-$c-$p"
      if left 10; then
        TOPOTUNE_GPU_TRANSPORT=host step "$name" "$(limit 30)" "$TE" -g 2 -t $c --proto $p -b 8 -e 16M -f 16 -n 2 -w 1 --no-progress
        sweep_verdict "$name" $? "/$p/"
      else skipped "$name (time budget)"; fi
    }
  done
  if left 20; then pair procs-ipc auto -b 8 -e 64M -f 8 -n 2 -w 1; else skipped "procs-ipc (time budget)"; fi
  if left 20; then pair procs-net net -t all_gather -b 8 -e 16M -f 8 -n 2 -w 1; else skipped "procs-net (time budget)"; fi
}

# ---- san: compute-sanitizer on small runs of the changed kernels -------------------------------
part_san() {
  if [ ! -x "$CS" ]; then fail "sanitizer (compute-sanitizer not found: $CS)"; return; fi
  local tc tool c name
  local set=${SAN_SET:-memcheck simple all_reduce --algo ring;memcheck ll all_reduce --algo tree;memcheck ll128 all_gather;memcheck simple reduce_scatter;memcheck simple reduce -r 2;racecheck simple all_reduce --algo ring;racecheck ll broadcast -r 1}
  local ifs=$IFS
  IFS=';'
  for tc in $set; do
    IFS=$ifs
    tool=${tc%% *}; c=${tc#* }; p=${c%% *}; c=${c#* }
    name="$tool-$p-$(echo "$c" | tr -d ' -')"
    if left 12; then
      # 2 channels: at 2 MiB every channel walks several rounds of pieces (simple: 2 x 3 x 256 KiB a round)
      # shellcheck disable=SC2086
      step "$name" "$(limit 40)" "$CS" --tool $tool --error-exitcode 9 \
        "$TE" -g 3 -t $c --proto $p --channels 2 -b 8 -e 2M -f 8 -n 1 -w 0 --no-progress
      san_verdict "$name" $?
    else skipped "$name (time budget)"; fi
  done
  IFS=$ifs
  if [ -x "$GTESTS/test_exec_gpu" ] && left 40; then
    TT_GPU_TEST_COLL_ONLY=small TT_GPU_TEST_QUICK=1 step memcheck-unit-colls "$(limit 60)" \
      "$CS" --tool memcheck --error-exitcode 9 "$GTESTS/test_exec_gpu"
    san_verdict memcheck-unit-colls $?
  else skipped "memcheck-unit-colls (time budget or no test_exec_gpu)"; fi
}

# ---- perf: AllReduce busbw, OLD against NEW ----------------------------------------------------
# part_perf "N:PROTO ...": the rank counts and protocols to sweep
part_perf() {
  local n p b tag build np
  local builds="new:$NEW"
  [ -n "$OLD" ] && builds="old:$OLD $builds"
  for np in $1; do
      n=${np%%:*}; p=${np#*:}
      local bl="$builds"
      [ -n "$U8" ] && [ "$p" = simple ] && bl="$bl u8:$U8"
      for b in $bl; do
        tag=${b%%:*}; build=${b#*:}
        name="perf-g$n-$p-$tag"
        if left 10; then
          step "$name" "$(limit 30)" "$build/bin/topo-exec" -g $n --proto $p -b 16 -e 1G -f 4 -n 3 -w 1 --check-max 16M --no-progress
          sweep_verdict "$name" $? "/$p/"
        else skipped "$name (time budget)"; fi
      done
      # side by side: size, per build out-of-place time (us) / busbw (GB/s), new / old busbw
      {
        echo "# AllReduce on $n virtual ranks, --proto $p (float sum, out of place): time us / busbw GB/s"
        printf "%12s" size; for b in $bl; do printf " %22s" "${b%%:*}"; done; printf " %9s\n" "new/old"
        awk -v files="$(for b in $bl; do printf '%s ' "$OUT/perf-g$n-$p-${b%%:*}.log"; done)" '
          BEGIN { nf = split(files, f, " ");
                  for (k = 1; k <= nf; k++) while ((getline l < f[k]) > 0) { split(l, x);
                    if (l ~ /^ +[0-9]+ +[0-9]+ +float/) { t[k, x[1]] = x[6]; bw[k, x[1]] = x[8]; s[x[1]] = 1 } }
                  m = 0; for (z in s) v[++m] = z + 0;
                  for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { w = v[i]; v[i] = v[j]; v[j] = w }
                  for (i = 1; i <= m; i++) { z = v[i]; printf "%12d", z;
                    for (k = 1; k <= nf; k++) printf " %12s / %7s", ((k, z) in t) ? t[k, z] : "-", ((k, z) in bw) ? bw[k, z] : "-";
                    o = bw[1, z] + 0; nw = bw[2, z] + 0;
                    if (nf >= 2 && o > 0) printf " %8.3f\n", nw / o; else printf " %8s\n", "-" } }'
      } > "$OUT/perf-g$n-$p.txt"
      cat "$OUT/perf-g$n-$p.txt" >> "$summary"
  done
}
PERF_SET=${PERF_SET:-2:simple 2:ll 2:ll128 4:simple 4:ll 4:ll128 8:simple 8:ll 8:ll128}

for part in $PARTS; do
  case "$part" in
    probe|copy|unit|cli|san) "part_$part" ;;
    perf) part_perf "$PERF_SET" ;;
    perf-late) part_perf "${PERF_LATE_SET:-}" ;;
    *) fail "PARTS: unknown part '$part' (probe copy unit cli san perf perf-late)" ;;
  esac
done

finish_result
