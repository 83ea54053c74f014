#!/usr/bin/env bash
# Random argument vectors for the command-line tools (part of make fuzz; docs/reliability.md).
#
#   scripts/dev/fuzz-cli.sh [RUNS]      RUNS argument vectors in all (default 200), spread over the tools
#
# Each vector is 0..6 words drawn from the tool's own options (read from --help), option values
# (fixtures, numbers, sizes, formats) and hostile words (empty, very long, '-', '--', '%n', bytes
# above 0x7f, '=' forms).  A run fails when the tool dies by a signal, reports a sanitizer error,
# runs past FUZZ_CLI_TIMEOUT seconds (default 30), or exits non-zero without a message on stderr.
# Tools come from build-asan/bin when it exists (make check-asan builds it), else from $BUILD/bin.
# FUZZ_CLI_SEED fixes the random sequence (printed at the start, so any run can be repeated).
# Failing vectors are written, shell-quoted, to ${FUZZ_BUILD:-build-fuzz}/cli-failures.txt.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
RUNS=${1:-200}
TIMEOUT=${FUZZ_CLI_TIMEOUT:-30}
SEED=${FUZZ_CLI_SEED:-$(( $(date +%s) % 32768 ))}
RANDOM=$SEED
BIN=${FUZZ_CLI_BIN:-}
if [ -z "$BIN" ]; then
  if [ -d build-asan/bin ]; then BIN=build-asan/bin; else BIN=${BUILD:-build}/bin; fi
fi
BIN=$(cd "$BIN" && pwd)
out="$ROOT/${FUZZ_BUILD:-build-fuzz}"; mkdir -p "$out"
fails="$out/cli-failures.txt"; : >"$fails"
work=$(mktemp -d "${TMPDIR:-/tmp}/topotune-fuzzcli.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp tests/fixtures/hgx-h100-8gpu.xml tests/fixtures/pcie-4gpu.xml tests/fixtures/nccl-dump-h100-vm.xml \
   tests/fixtures/bad/truncated.xml tests/fixtures/bad/billion-laughs.xml tests/fixtures/hwloc/vm.xml "$work"/
cp tests/fuzz/corpus/fuzz_tune_table/cal-full "$work/cal.json" 2>/dev/null && sed -i '1s/^.//' "$work/cal.json"
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export HWLOC_COMPONENTS=${HWLOC_COMPONENTS:--pci}   # see check-asan in the Makefile

long=$(printf 'A%.0s' $(seq 1 5000))
values=(hgx-h100-8gpu.xml pcie-4gpu.xml nccl-dump-h100-vm.xml truncated.xml billion-laughs.xml vm.xml cal.json
        missing.xml /nonexistent/dir/x.xml out.xml - -- "" 0 1 2 -1 8 400 4096 99999999999999999999 1e308 nan
        0x10 64K 1M 16G 1.5 abc native nccl json dot matrix table nccl-csv env topotune allreduce allgather all
        "$long" $'\x80\xff' '%n%s%s' '--=' '-i=' "$work")
tools=()
for t in "$BIN"/topo-*; do [ -x "$t" ] && tools+=("$t"); done
[ ${#tools[@]} -eq 0 ] && { echo "fuzz-cli: no tools in $BIN" >&2; exit 1; }
declare -A opts
for t in "${tools[@]}"; do
  opts[$t]=$("$t" --help 2>&1 | grep -oE '(^|[ ,])--?[a-zA-Z][-a-zA-Z]*' | tr -d ' ,' | sort -u | tr '\n' ' ')
done
# not topo-exec --mpi: it starts an MPI job, whose library allocations (Open MPI unloads its
# components) LeakSanitizer reports unnamed; tests/cli/test_topo_exec_mpi.sh covers that mode
for t in "${tools[@]}"; do opts[$t]=${opts[$t]//--mpi /}; done
# topo-exec runs collectives: keep its vectors to what finishes quickly.
pick() { local -n arr=$1; echo "${arr[RANDOM % ${#arr[@]}]}"; }
echo "fuzz-cli: $RUNS vectors over ${#tools[@]} tools from $BIN (FUZZ_CLI_SEED=$SEED, timeout ${TIMEOUT}s)"
bad=0; timeouts=0; crashes=0; silent=0; rcs=()
start=$(date +%s)
for ((r = 0; r < RUNS; r++)); do
  t=${tools[RANDOM % ${#tools[@]}]}
  read -r -a o <<<"${opts[$t]}"
  args=()
  n=$((RANDOM % 7))
  for ((k = 0; k < n; k++)); do
    case $((RANDOM % 3)) in
      0) args+=("$(pick o)") ;;
      1) args+=("$(pick o)" "$(pick values)") ;;
      2) args+=("$(pick values)") ;;
    esac
  done
  (cd "$work" && timeout -k 5 "$TIMEOUT" "$t" "${args[@]}" </dev/null >"$work/.out" 2>"$work/.err")
  rc=$?
  why=""
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then why="timeout"; timeouts=$((timeouts+1))
  elif [ $rc -ge 128 ]; then why="signal $((rc-128))"; crashes=$((crashes+1))
  elif grep -qE 'AddressSanitizer|LeakSanitizer|runtime error' "$work/.err"; then why="sanitizer"; crashes=$((crashes+1))
  elif [ $rc -ne 0 ] && [ ! -s "$work/.err" ]; then why="exit $rc without a message"; silent=$((silent+1))
  fi
  rcs+=("$rc")
  if [ -n "$why" ]; then
    bad=1
    line="$(basename "$t")"; for a in "${args[@]}"; do line+=" $(printf '%q' "$a" | cut -c1-80)"; done
    echo "fuzz-cli: FAIL ($why): $line" | tee -a "$fails"
    grep -E 'ERROR|runtime error|SUMMARY|#[0-9] ' "$work/.err" | head -8 | tee -a "$fails"
  fi
done
dist=$(printf '%s\n' "${rcs[@]}" | sort -n | uniq -c | awk '{printf "%s rc=%s, ", $1, $2}')
echo "fuzz-cli: $RUNS vectors in $(( $(date +%s) - start ))s: ${dist%, }; $crashes crashes, $timeouts timeouts, $silent silent failures"
exit $bad
