#!/usr/bin/env bash
# Build and run the libFuzzer targets in tests/fuzz/ (docs/reliability.md).
#
#   scripts/dev/fuzz.sh [TARGET...]        build, then fuzz each target FUZZ_SECONDS (default 60)
#   scripts/dev/fuzz.sh --build-only       only build the fuzzers
#   scripts/dev/fuzz.sh --replay           build gcc replay programs ($FUZZ_BUILD/replay/<target>)
#                                      and run them over corpus + regressions (no libFuzzer)
#
# Variables: FUZZ_SECONDS (60), FUZZ_BUILD (build-fuzz), FUZZ_CC (clang), FUZZ_JOBS (2 compile jobs),
#            FUZZ_UBSAN_SKIP (UBSan checks to leave out, default none),
#            FUZZ_CLI_RUNS (random CLI argument vectors after the fuzzers, 0 = skip; default 200).
# The library's sources are compiled again with clang and the same sanitizers
# (address, undefined, fuzzer-no-link) into $FUZZ_BUILD; the normal build is not touched.
# Committed seeds (tests/fuzz/corpus/<target>) are copied to $FUZZ_BUILD/corpus/<target>,
# where new inputs accumulate; crashes land in $FUZZ_BUILD/artifacts/<target>/.
# Exit status: 0 when no target crashed, 1 otherwise (the crash file is named).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
FUZZ_CC=${FUZZ_CC:-clang}
FUZZ_JOBS=${FUZZ_JOBS:-2}
FUZZ_CLI_RUNS=${FUZZ_CLI_RUNS:-200}
ALL_TARGETS=$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')

mode=fuzz
targets=()
for a in "$@"; do
  case "$a" in
    --build-only) mode=build ;;
    --replay) mode=replay ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    fuzz_*) targets+=("$a") ;;
    *) echo "fuzz.sh: unknown argument '$a'" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=($ALL_TARGETS)

PKGS="libxml-2.0 libcjson hwloc"
PKG_CFLAGS=$(pkg-config --cflags $PKGS)
PKG_LIBS=$(pkg-config --libs $PKGS)
if pkg-config --exists libibverbs; then
  PKG_CFLAGS="$PKG_CFLAGS -DTT_HAVE_IBVERBS=1 $(pkg-config --cflags libibverbs)"
  PKG_LIBS="$PKG_LIBS $(pkg-config --libs libibverbs)"
fi
INC="-Icommon -Ixml -Itopo -Itune -Iexec -Iplugin -Itests/fuzz"
BASE="-std=gnu11 -D_GNU_SOURCE -pthread -g -O1 -fno-omit-frame-pointer $INC $PKG_CFLAGS"
# The fuzz targets use common, xml, topo and tune, and the tuner plugin's table reader
# (fuzz_plugin_table); exec is not linked in.
LIB_SRCS="$(ls common/*.c xml/*.c topo/*.c tune/*.c) plugin/tuner_table.c plugin/tuner_json.c"

if [ "$mode" = replay ]; then
  # gcc, normal flags, no sanitizers: what a user's build runs.
  out="$FUZZ_BUILD/replay"; mkdir -p "$out"
  bad=0
  for t in "${targets[@]}"; do
    cc $BASE -O2 -Wall -Wextra -Wno-unused-parameter -o "$out/$t" tests/fuzz/replay_main.c "tests/fuzz/$t.c" \
       $LIB_SRCS $PKG_LIBS -ldl -lm || exit 1
    dirs=()
    for d in "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t"; do [ -d "$d" ] && dirs+=("$d"); done
    [ ${#dirs[@]} -eq 0 ] && continue
    if "$out/$t" "${dirs[@]}" 2>"$out/$t.log"; then
      echo "replay $t: $(grep -c '^replay ' "$out/$t.log") inputs ok"
    else
      echo "replay $t: FAILED (log $out/$t.log)"; tail -5 "$out/$t.log"; bad=1
    fi
  done
  exit $bad
fi

command -v "$FUZZ_CC" >/dev/null || { echo "fuzz.sh: $FUZZ_CC not found (apt-get install clang)" >&2; exit 1; }
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# FUZZ_UBSAN_SKIP=check[,check]: leave UBSan checks out (e.g. float-cast-overflow while a known
# finding is open, to fuzz past it); objects go to their own folder. Default: every check on.
suffix=""
if [ -n "${FUZZ_UBSAN_SKIP:-}" ]; then
  SAN="$SAN -fno-sanitize=$FUZZ_UBSAN_SKIP"; suffix="-no-$(echo "$FUZZ_UBSAN_SKIP" | tr , -)"
  echo "fuzz: UBSan checks left out: $FUZZ_UBSAN_SKIP"
fi
objdir="$FUZZ_BUILD/obj$suffix"; mkdir -p "$objdir" "$FUZZ_BUILD/bin"
# Compile the library (only what changed).
echo "fuzz: compiling the library with $FUZZ_CC $SAN,fuzzer-no-link"
printf '%s\n' $LIB_SRCS | xargs -P "$FUZZ_JOBS" -I{} sh -c '
  src={}; obj="'"$objdir"'/$(echo "$src" | tr / _).o"
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find common xml topo tune plugin -name "*.h" -newer "$obj" | head -1)" ]; then
    '"$FUZZ_CC $BASE $SAN"' -fsanitize=fuzzer-no-link -c "$src" -o "$obj" || exit 255
  fi' || { echo "fuzz: library build failed" >&2; exit 1; }
lib="$FUZZ_BUILD/libtopotune-fuzz$suffix.a"
rm -f "$lib"
# only the objects of today's sources (a removed source must not linger in the archive)
ar rcs "$lib" $(for src in $LIB_SRCS; do echo "$objdir/$(echo "$src" | tr / _).o"; done)
for t in "${targets[@]}"; do
  $FUZZ_CC $BASE $SAN -fsanitize=fuzzer -o "$FUZZ_BUILD/bin/$t" "tests/fuzz/$t.c" \
    "$lib" $PKG_LIBS -ldl -lm || { echo "fuzz: $t does not build" >&2; exit 1; }
done
[ "$mode" = build ] && { echo "fuzz: built ${targets[*]} in $FUZZ_BUILD/bin"; exit 0; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:abort_on_error=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/fuzz/lsan-fuzz.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
bad=0
summary=()
for t in "${targets[@]}"; do
  corpus="$FUZZ_BUILD/corpus/$t"; art="$FUZZ_BUILD/artifacts/$t"; mkdir -p "$corpus" "$art"
  [ -d "tests/fuzz/corpus/$t" ] && cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null
  dict=()
  case "$t" in
    fuzz_xml_read|fuzz_topo_build) dict=(-dict=tests/fuzz/xml.dict) ;;
    fuzz_tune_table) dict=(-dict=tests/fuzz/json.dict) ;;
    # inputs up to 1 MiB: the target's time budget per input catches a quadratic reader only on big ones
    fuzz_plugin_table) dict=(-dict=tests/fuzz/json.dict -max_len=1048576) ;;
    fuzz_scan_hwloc) dict=(-dict=tests/fuzz/hwloc.dict) ;;
  esac
  seeds=$(ls "$corpus" | wc -l)
  log="$FUZZ_BUILD/$t.log"
  echo "fuzz: $t for ${FUZZ_SECONDS}s ($seeds corpus inputs)"
  start=$(date +%s)
  "$FUZZ_BUILD/bin/$t" "${dict[@]}" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
     -print_final_stats=1 -artifact_prefix="$art/" "$corpus" >"$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | tr -d 'cov: ')
  after=$(ls "$corpus" | wc -l)
  line="$t: ${secs}s, ${execs:-?} executions, coverage ${cov:-?} edges, corpus $seeds -> $after inputs"
  if [ $rc -ne 0 ]; then
    bad=1
    crash=$(ls -t "$art" | head -1)
    line="$line, CRASH rc=$rc: $art/$crash (log $log)"
    grep -E 'ERROR|runtime error|fuzz invariant|SUMMARY' "$log" | head -5
  fi
  echo "fuzz: $line"; summary+=("$line")
done

if [ "$FUZZ_CLI_RUNS" -gt 0 ] && [ -x scripts/dev/fuzz-cli.sh ]; then
  scripts/dev/fuzz-cli.sh "$FUZZ_CLI_RUNS" || bad=1
fi
echo "fuzz summary:"; printf '  %s\n' "${summary[@]}"
exit $bad
