# Shared helpers for CLI tests (sourced). TAP-style output, counted by tests/run-tests.sh.
set -u
: "${BUILD:=build}"
ROOT=${TOPOTUNE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
case "$BUILD" in /*) BIN="$BUILD/bin" ;; *) BIN="$ROOT/$BUILD/bin" ;; esac
FIX="$ROOT/tests/fixtures"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topotune-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
_failures=0
ok()      { echo "ok - $*"; }
not_ok()  { echo "not ok - $*"; _failures=$((_failures+1)); }
skip()    { echo "ok - $1 # SKIP ${2:-}"; }
# run CMD...: captures stdout in $TMP/out, stderr in $TMP/err, exit code in $RC
run() { "$@" >"$TMP/out" 2>"$TMP/err"; RC=$?; }
expect_rc() { # expect_rc N description
  if [ "$RC" -eq "$1" ]; then ok "$2"; else not_ok "$2 (exit $RC, wanted $1; stderr: $(head -c 300 "$TMP/err"))"; fi; }
expect_grep() { # expect_grep FILE REGEX description
  if grep -Eq -- "$2" "$1"; then ok "$3"; else not_ok "$3 (no /$2/ in $(basename "$1"): $(head -c 300 "$1"))"; fi; }
expect_no_grep() {
  if grep -Eq -- "$2" "$1"; then not_ok "$3 (/$2/ found in $(basename "$1"))"; else ok "$3"; fi; }
finish() { exit $(( _failures > 0 ? 1 : 0 )); }
