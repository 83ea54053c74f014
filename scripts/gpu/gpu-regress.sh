#!/usr/bin/env bash
# gpu-regress.sh - after a change to the executor or the tools, everything that only a GPU can run, in
# one command on the GPU machine (build carried: scripts/gpu/devcarry.sh; unit programs in $GTESTS):
#   BUILD=.devcarry/build GTESTS=.devcarry/gtests OUT=dir bash scripts/gpu/gpu-regress.sh
# the GPU unit programs (executor, IPC, measuring module), the GPU CLI test, GPU mode with a tuning
# table on virtual ranks, --validate on GPU ranks, the NCCL engine, and the README's main job.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-.devcarry/build}
GTESTS=${GTESTS:-$BUILD/tests}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-gpu-regress.XXXXXX")}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TOPOTUNE_TIMEOUT_MS=${TOPOTUNE_TIMEOUT_MS:-20000}
[ -d .devcarry/lib ] && export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
summary="$OUT/summary.txt"
: > "$summary"
. scripts/gpu/gpu-lib.sh
B="$BUILD/bin"
failed=""
# must NAME RC [ALLOWED...]: a step whose exit code is not 0 (or one of ALLOWED) fails the run
must() { local n=$1 rc=$2; shift 2; for a in 0 "$@"; do [ "$rc" = "$a" ] && return 0; done; failed="$failed $n"; }
say "# gpu-regress $(date -u '+%Y-%m-%d %H:%M UTC') $(hostname); $(nvidia-smi -L 2>&1 | head -2 | tr '\n' ' ')"
for t in test_exec_gpu test_exec_gpu_ipc test_exec_measure; do
  step "$t" 240 "$GTESTS/$t"; must "$t" $?
  grep -E 'PASSED|FAILED|SKIPPED|ERROR' "$OUT/$t.log" | tail -4 | tee -a "$summary"
done
BUILD=$BUILD TOPOTUNE_ROOT=$PWD step cli-gpu 240 bash tests/cli/test_topo_exec_gpu.sh; must cli-gpu $?
grep -E '^(ok|not ok)' "$OUT/cli-gpu.log" | tee -a "$summary"
step table 60 "$B/topo-tune" --input tests/fixtures/hgx-h100-8gpu.xml -g 4 --format json -o "$OUT/t4.json"; must table $?
step gpu-table 120 "$B/topo-exec" -g 4 -b 8 -e 64M -f 8 -n 10 -w 2 --table "$OUT/t4.json"; must gpu-table $?
grep -E '^# plan table|Out of bounds|Avg bus|fallback' "$OUT/gpu-table.log" | tee -a "$summary"
step gpu-validate 180 "$B/topo-exec" -g 2 -b 1K -e 16M -f 16 -n 10 -w 2 --validate --topo tests/fixtures/hgx-h100-8gpu.xml
must gpu-validate $? 3   # 3 = the table was judged wrong somewhere (a verdict, not a failure)
tail -6 "$OUT/gpu-validate.log" | tee -a "$summary"
step nccl-1 120 "$B/topo-exec" -g 1 --engine nccl -b 8 -e 64M -f 8 -n 10 -w 2; must nccl-1 $?
grep -E 'Out of bounds|Avg bus|error' "$OUT/nccl-1.log" | tee -a "$summary"
BUILD=$BUILD step main-job 300 bash scripts/run-main.sh; must main-job $?
grep -E '^=== |live scan|Out of bounds|Avg bus|plan table|validation:' "$OUT/main-job.log" | tee -a "$summary"
say "# done $(date -u '+%H:%M:%S UTC')"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log)
if [ -n "$failed" ]; then say "RESULT: FAIL:$failed"; exit 1; fi
say "RESULT: PASS"
