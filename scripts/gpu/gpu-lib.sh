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
