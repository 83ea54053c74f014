#!/usr/bin/env bash
# Run the unit test programs ($BUILD/tests/test_*) under valgrind memcheck
# (make check-valgrind; docs/reliability.md).  A test fails when valgrind
# reports an error or a definite/indirect leak (--error-exitcode=1) or when
# the test itself fails.  Prints one line per test with its time, then
#   valgrind: N passed, N failed, N skipped (Ns)
# VALGRIND_SKIP: space-separated test names to leave out (default below, with
# the reason in docs/reliability.md).  VALGRIND_TIMEOUT: seconds per test (900).
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export TOPOTUNE_ROOT="$ROOT"
command -v valgrind >/dev/null || { echo "valgrind: not installed (apt-get install valgrind)" >&2; exit 1; }
# Default skips: none (the executor's thread/TCP tests take ~40-80 s under memcheck, which fits).
VALGRIND_SKIP=${VALGRIND_SKIP-}
# hwloc's libpciaccess plugin leaks once unloaded (third-party; see check-asan in the Makefile).
export HWLOC_COMPONENTS=${HWLOC_COMPONENTS:--pci}
export TOPOTUNE_TEST_SLOWDOWN=${TOPOTUNE_TEST_SLOWDOWN:-50}   # timing bounds in tests, see test_xml_hostile.c
VALGRIND_TIMEOUT=${VALGRIND_TIMEOUT:-900}
logdir="$BUILD/valgrind-logs"; mkdir -p "$logdir"
pass=0; fail=0; skipped=0; t0=$(date +%s)
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  if [[ " $VALGRIND_SKIP " == *" $name "* ]]; then
    echo "skip $name (VALGRIND_SKIP)"; skipped=$((skipped+1)); continue
  fi
  s=$(date +%s)
  timeout "$VALGRIND_TIMEOUT" valgrind -q --error-exitcode=99 --leak-check=full \
      --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
      --track-origins=yes --child-silent-after-fork=yes \
      --suppressions=tests/fuzz/valgrind.supp "$t" >"$logdir/$name.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - s ))
  if [ $rc -eq 0 ]; then
    echo "pass $name (${secs}s)"; pass=$((pass+1))
  else
    why="test failed"; [ $rc -eq 99 ] && why="valgrind errors"; [ $rc -eq 124 ] && why="timeout"
    echo "FAIL $name (${secs}s, rc=$rc: $why) - log: $logdir/$name.log"
    grep -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched|[0-9,]+ bytes in)' "$logdir/$name.log" | head -5
    fail=$((fail+1))
  fi
done
echo "valgrind: $pass passed, $fail failed, $skipped skipped ($(( $(date +%s) - t0 ))s)"
[ $fail -eq 0 ]
