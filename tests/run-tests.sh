#!/usr/bin/env bash
# Run every topotune test and print one closing line:
#   check: N passed, N failed, N skipped
# Unit tests are cmocka programs in $BUILD/tests; CLI tests are scripts in
# tests/cli/*.sh printing TAP-style "ok - ..." / "not ok - ..." lines
# ("ok - ... # SKIP why" for skips).  GPU tests skip themselves without a GPU.
set -u
BUILD=${BUILD:-build}
export BUILD
export TOPOTUNE_ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOPOTUNE_ROOT"
pass=0; fail=0; skip=0; failed_names=()
logdir="$BUILD/test-logs"; mkdir -p "$logdir"

for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  timeout 300 "$t" >"$logdir/$name.log" 2>&1
  rc=$?
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$logdir/$name.log" | tail -1)
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$logdir/$name.log" | tail -1)
  s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$logdir/$name.log" | tail -1)
  p=${p:-0}; f=${f:-0}; s=${s:-0}
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed or timed out
  pass=$((pass+p)); fail=$((fail+f)); skip=$((skip+s))
  if [ "$f" -gt 0 ]; then
    failed_names+=("$name"); echo "FAIL $name (rc=$rc) - log: $logdir/$name.log"; grep -E '^\[  (ERROR|FAILED|  FAILED) \]|error:|Failure' "$logdir/$name.log" | head -20
  else
    echo "pass $name ($p passed${s:+, $s skipped})"
  fi
done

for s in tests/cli/test_*.sh; do
  [ -f "$s" ] || continue
  name=$(basename "$s" .sh)
  timeout 600 bash "$s" >"$logdir/$name.log" 2>&1
  rc=$?
  p=$(grep -c '^ok ' "$logdir/$name.log" | tr -d ' ')
  sk=$(grep -c '^ok .*# SKIP' "$logdir/$name.log" | tr -d ' ')
  f=$(grep -c '^not ok ' "$logdir/$name.log" | tr -d ' ')
  p=$((p-sk))
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  pass=$((pass+p)); fail=$((fail+f)); skip=$((skip+sk))
  if [ "$f" -gt 0 ]; then
    failed_names+=("$name"); echo "FAIL $name (rc=$rc) - log: $logdir/$name.log"; grep '^not ok' "$logdir/$name.log" | head -20
  else
    echo "pass $name ($p passed, $sk skipped)"
  fi
done

[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "check: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
