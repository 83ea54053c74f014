# gpu-lib.sh - helpers sourced by the GPU-machine scripts (gpu-exec-check.sh, gpu-ipc-check.sh).
# Needs $summary (the summary file) and $OUT (where each step's log goes).

# say TEXT: print and append to the summary
say() { echo "$*" | tee -a "$summary"; }

# step NAME TIMEOUT COMMAND...: run COMMAND under a time limit, log to $OUT/NAME.log, put its exit
# code and duration in the summary; returns the exit code
step() {
  local name=$1 to=$2; shift 2
  local t0=$(date +%s.%N)
  timeout "$to" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  say "== $name: rc=$rc ($(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s)"
  return $rc
}

# ---- PASS/FAIL/SKIP checks under a time budget (gpu-collectives-check.sh, gpu-ll128-check.sh) ----
# Needs T0 (start, seconds) and BUDGET (seconds); counts in npass, nfail, nskip.
npass=0 nfail=0 nskip=0
pass() { say "PASS $*"; npass=$((npass + 1)); }
fail() { say "FAIL $*"; nfail=$((nfail + 1)); }
skipped() { say "SKIP $*"; nskip=$((nskip + 1)); }
# finish_result: the closing lines of a checking script (time taken, logs.tgz of $OUT/*.log, the
# RESULT line) and its exit code: 0 when nothing failed
finish_result() {
  say "# done $(date -u '+%H:%M:%S UTC'), $(( $(date +%s) - T0 )) s"
  (cd "$OUT" && tar czf logs.tgz ./*.log) 2>/dev/null
  if [ "$nfail" = 0 ]; then
    say "RESULT: PASS ($npass passed, $nskip skipped)"
    exit 0
  fi
  say "RESULT: FAIL ($nfail failed, $npass passed, $nskip skipped)"
  exit 1
}
# left NEED: 0 when at least NEED seconds of the budget are left; sets LEFT
left() { LEFT=$((BUDGET - ($(date +%s) - T0))); [ "$LEFT" -ge "$1" ]; }
# limit WANT: the step's time limit, cut to what is left of the budget
limit() { left 1; if [ "$LEFT" -lt 1 ]; then echo 1; elif [ "$LEFT" -lt "$1" ]; then echo "$LEFT"; else echo "$1"; fi; }
# sweep_verdict NAME RC [GREP]: rc 0, nccl-tests' "Out of bounds values : 0 OK", and GREP in the log when given
sweep_verdict() {
  local log="$OUT/$1.log"
  if [ "$2" = 0 ] && grep -q "Out of bounds values : 0 OK" "$log" && { [ -z "${3:-}" ] || grep -qE "$3" "$log"; }; then
    pass "$1 ($(grep -E 'Avg bus bandwidth' "$log" | sed 's/^# *//'))"
  else
    fail "$1 (rc=$2${3:+, want $3}; $(grep -E 'Out of bounds|topo-exec:|_perf:|rror' "$log" | head -2 | tr '\n' ' ' | cut -c1-300))"
  fi
}
# unit_verdict NAME RC: a cmocka program's log (no GPU is a failure here: these scripts run on GPU machines)
unit_verdict() {
  local log="$OUT/$1.log"
  grep -E '^# (virtual|SKIP|rank|protocols|Broadcast|.*LL128|.*wrong)|PASSED|FAILED|ERROR' "$log" | head -40 >> "$summary"
  if grep -q '^# SKIP no GPU' "$log"; then
    fail "$1 (no usable GPU: $(grep -m1 '^# GPU:' "$log"))"
  elif [ "$2" = 0 ] && grep -q PASSED "$log" && ! grep -qE 'FAILED|ERROR' "$log"; then
    pass "$1 ($(grep -E '^\[  PASSED  \]' "$log" | head -1 | sed 's/\[  PASSED  \] //'), $(grep -cE '^\[  SKIPPED \]' "$log") skipped lines)"
  elif [ "$2" = 124 ]; then
    fail "$1 (timed out)"
  else
    fail "$1 (rc=$2; $(grep -E 'FAILED|ERROR|wrong|error' "$log" | head -3 | tr '\n' ' ' | cut -c1-300))"
  fi
}
# san_verdict NAME RC: compute-sanitizer memcheck ("ERROR SUMMARY: 0 errors") or racecheck ("0 hazards")
san_verdict() {
  local log="$OUT/$1.log" es
  es=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)
  if [ "$2" = 0 ] && echo "$es" | grep -qE 'SUMMARY: 0 (errors|hazards)'; then
    pass "$1 ($es)"
  elif [ "$2" = 124 ]; then
    fail "$1 (timed out under compute-sanitizer; $es)"
  else
    fail "$1 (rc=$2; ${es:-no SUMMARY}; $(grep -E '=========  *(Invalid|Out of|Program hit|Race|Error)|FAILED' "$log" | head -2 | tr '\n' ' ' | cut -c1-300))"
  fi
}
