#!/usr/bin/env bash
# gpu-validate-procs.sh - topo-exec --validate on GPU process ranks (-g 1 --rank R --nranks 4
# --master ...), on a GPU machine, in one command (about 1-2 minutes on one H200; every process on
# GPU 0, proxies' host connections over TCP loopback: TOPOTUNE_TRANSPORT=tcp):
#   1. a cluster table for 2 nodes x 2 GPUs (topo-tune --nodes 2 --gpus-per-node 2 --model nccl on
#      the HGX fixture: ring/ll, ring/ll128, tree/simple entries) and one for 1 node x 4 GPUs
#   2. 4 processes on 2 emulated hosts (TOPOTUNE_GPU_EMULATE_HOSTS=2: IPC inside a host, net between)
#      validate the 2-node table over 8 B .. 16 MiB x8, 2 interleaved rounds, every candidate
#      measured (--validate-runners-up 7): every process exits 0 or 3 and all the same, only rank 0
#      prints, 8 size lines, hierarchical/simple and hierarchical/ll measured at the judged sizes,
#      no wrong result (report and -J nwrong), the table's ll128 sizes "not judged" with the
#      executor's reason (ll128 cannot run on net pairs)
#   3. the 2-node table on 4 processes on one host: refused by every process (exit 2, nodes named)
#   4. the 1-node table on 4 processes on one host: as 2, without any hierarchical candidate
#   5. processes started differently stop together naming the rank: rank 3 with another -e
#      (options), rank 3 with another --validate-rounds (the plan), exit 2 everywhere, fast
#   6. nothing left in /dev/shm
# Usage (binaries built elsewhere and carried, scripts/gpu/devcarry.sh):
#   BUILD=.devcarry/build OUT=results-dir bash scripts/gpu/gpu-validate-procs.sh
# (RUN_TIMEOUT: seconds of each 4-process validation, default 200: the whole script took 57 s on the H200; its 2-host validation alone 108-137 s on the H100 of 2026-12-06.)  Prints PASS/FAIL lines and a
# RESULT line; exit 0 when every check passed.  Logs: $OUT/NAME-rankR.log (stdout), .err (stderr).
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-gpu-validate-procs-results}
[ -d .devcarry/lib ] && export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
TE="$BUILD/bin/topo-exec"
TT="$BUILD/bin/topo-tune"
HGX=tests/fixtures/hgx-h100-8gpu.xml
summary="$OUT/summary.txt"
: > "$summary"
. "$(dirname "$0")/gpu-lib.sh"   # say, pass, fail, finish_result
T0=$(date +%s)
say "# gpu-validate-procs $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname)"
nvidia-smi -L 2>&1 | tee -a "$summary"
shm_before=$(ls /dev/shm 2>/dev/null | grep -c topotune)

# procs NAME "VAR=VALUE ..." "RANK3-ARGS" ARGS...: 4 topo-exec processes -g 1 --rank R --nranks 4, the
# environment and ARGS for all (rank 3 gets RANK3-ARGS after them); rank R's stdout in
# $OUT/NAME-rankR.log, stderr in $OUT/NAME-rankR.err; sets RCS ("rc0 rc1 rc2 rc3") and SECS
procs() {
  local name=$1 envs=$2 extra3=$3; shift 3
  local port=$(( 20000 + (RANDOM % 20000) )) pids=() r t0=$(date +%s)
  for r in 0 1 2 3; do
    # shellcheck disable=SC2086
    env TOPOTUNE_TRANSPORT=tcp $envs timeout "${RUN_TIMEOUT:-200}" "$TE" -g 1 --rank $r --nranks 4 \
      --master 127.0.0.1:$port "$@" $([ $r = 3 ] && echo "$extra3") > "$OUT/$name-rank$r.log" 2> "$OUT/$name-rank$r.err" &
    pids+=($!)
  done
  RCS=""
  for r in 0 1 2 3; do wait "${pids[$r]}"; RCS="$RCS $?"; done
  RCS=${RCS# }
  SECS=$(( $(date +%s) - t0 ))
  say "== $name: exit codes $RCS ($SECS s)"
}
# all_rc "RCS" WANT...: every code the same and one of WANT
all_rc() {
  local rcs=$1 first; shift
  first=${rcs%% *}
  for c in $rcs; do [ "$c" = "$first" ] || return 1; done
  for w in "$@"; do [ "$first" = "$w" ] && return 0; done
  return 1
}
# the size lines of a report (not the comment lines)
sizes() { grep -E '^ +[0-9]+  ' "$1"; }
# check_report NAME HIER(1/0): the checks of a finished validation (rank 0's log and -J file)
check_report() {
  local name=$1 hier=$2 log="$OUT/$1-rank0.log" n
  if all_rc "$RCS" 0 3; then pass "$name: every process exits $(echo "$RCS" | cut -d' ' -f1) (0 right, 3 table wrong somewhere)"
  else fail "$name: exit codes $RCS ($(grep -h 'topo-exec:' "$OUT/$name"-rank*.err | head -3 | tr '\n' ' ' | cut -c1-400))"; fi
  n=$(sizes "$log" | wc -l)
  [ "$n" = 8 ] && pass "$name: 8 size lines (8 B .. 16 MiB x8)" || fail "$name: $n size lines, wanted 8"
  sizes "$log" | cut -c1-200 | tee -a "$summary"
  grep -E '^# (ranks|table|runner-ups|[0-9]+ size|table wrong|the table)' "$log" | tee -a "$summary"
  if ! grep -qE '^# [0-9]+ size\(s\) judged' "$log"; then fail "$name: no summary line in rank 0's report"
  elif grep -qE 'WRONG RESULT|Out of bounds|validation FAILED' "$log"; then
    fail "$name: wrong results or a failure ($(grep -E 'WRONG RESULT|Out of bounds|FAILED' "$log" | head -2 | cut -c1-300))"
  else pass "$name: no wrong result, no failure in the report"; fi
  if [ -s "$OUT/$name.json" ] && grep -q '"nwrong"' "$OUT/$name.json" && ! grep -qE '"nwrong":[[:space:]]*[1-9]' "$OUT/$name.json"
  then pass "$name: -J: nwrong 0 for every result"
  else fail "$name: -J $OUT/$name.json missing, without nwrong, or with wrong results"; fi
  local quiet=1
  for r in 1 2 3; do [ -s "$OUT/$name-rank$r.log" ] && quiet=0; done
  [ -s "$log" ] && [ $quiet = 1 ] && pass "$name: only rank 0 prints" || fail "$name: ranks 1-3 printed ($(head -c 200 "$OUT/$name-rank1.log"))"
  local judged nh nl
  judged=$(sizes "$log" | grep -vc 'not judged')
  nh=$(sizes "$log" | grep -v 'not judged' | grep -c 'hierarchical/simple')
  nl=$(sizes "$log" | grep -v 'not judged' | grep -c 'hierarchical/ll')
  if [ "$hier" = 1 ]; then
    grep -qE '^# ranks: 4 processes, one GPU rank each, on 2 host\(s\) \(emulated\): CUDA IPC inside a host, net' "$log" &&
      pass "$name: header: 4 processes on 2 emulated hosts, IPC inside, net between" || fail "$name: no '# ranks:' line for 2 hosts"
    if [ "$judged" -gt 0 ] && [ "$nh" = "$judged" ] && [ "$nl" = "$judged" ]; then
      pass "$name: hierarchical/simple and hierarchical/ll measured at all $judged judged sizes"
    else fail "$name: hierarchical candidates at $nh (simple) / $nl (ll) of $judged judged sizes"; fi
    if sizes "$log" | grep 'not judged' | grep -q 'll128.*net'; then
      pass "$name: the table's ll128 sizes not judged, with the executor's reason"
    else fail "$name: no 'not judged: table choice ring/ll128 ... net' line"; fi
  else
    grep -qE '^# ranks: 4 processes, one GPU rank each, on 1 host\(s\)' "$log" &&
      pass "$name: header: 4 processes on 1 host" || fail "$name: no '# ranks:' line for 1 host"
    if [ "$judged" -gt 0 ] && ! grep -q hierarchical "$log" "$OUT/$name.json"; then
      pass "$name: $judged judged sizes, no hierarchical candidate on one host"
    else fail "$name: $judged judged sizes, hierarchical lines: $(grep -c hierarchical "$log")"; fi
  fi
}

# 1. the tables
"$TT" -i "$HGX" --nodes 2 --gpus-per-node 2 --model nccl -C allreduce --min-size 8 --max-size 16M -f json \
  -o "$OUT/table-2x2.json" > "$OUT/topo-tune-2x2.log" 2>&1
r1=$?
"$TT" -i "$HGX" --nodes 1 --gpus-per-node 4 --model nccl -C allreduce --min-size 8 --max-size 16M -f json \
  -o "$OUT/table-1x4.json" > "$OUT/topo-tune-1x4.log" 2>&1
r2=$?
if [ $r1 = 0 ] && [ $r2 = 0 ] && grep -qE '"nodes":[[:space:]]*2' "$OUT/table-2x2.json" && grep -qE '"ranks":[[:space:]]*4' "$OUT/table-2x2.json"
then pass "topo-tune: tables for 2 nodes x 2 GPUs and 1 node x 4 GPUs"
else fail "topo-tune tables (exit $r1/$r2: $(head -c 300 "$OUT/topo-tune-2x2.log"))"; fi

V="--validate -b 8 -e 16M -f 8 -n 4 -w 1 --validate-rounds 2 --validate-runners-up 7 --no-progress"
# 2. 2 emulated hosts, the 2-node table
# shellcheck disable=SC2086
procs hier2 "TOPOTUNE_GPU_EMULATE_HOSTS=2" "" $V --table "$OUT/table-2x2.json" -J "$OUT/hier2.json"
check_report hier2 1

# 3. one host, the 2-node table: refused by every process, the nodes named
# shellcheck disable=SC2086
procs refuse1 "" "" $V --table "$OUT/table-2x2.json"
if all_rc "$RCS" 2 && grep -qF 'on 2 node(s) but these 4 GPU ranks span 1 host(s)' "$OUT/refuse1-rank0.err"; then
  pass "one host, 2-node table: every process exits 2 naming the nodes ($SECS s)"
else fail "one host, 2-node table: exit codes $RCS ($(head -c 300 "$OUT/refuse1-rank0.err"))"; fi

# 4. one host, the 1-node table
# shellcheck disable=SC2086
procs flat1 "" "" $V --table "$OUT/table-1x4.json" -J "$OUT/flat1.json"
check_report flat1 0

# 5. processes started differently: the options, then the plan, named; all stop, fast
# shellcheck disable=SC2086
procs mism-opt "TOPOTUNE_GPU_EMULATE_HOSTS=2" "-e 1M" $V --table "$OUT/table-2x2.json"
if all_rc "$RCS" 2 && grep -qF 'rank 3: option -e (maxbytes)' "$OUT/mism-opt-rank0.err" && [ "$SECS" -lt 30 ]; then
  pass "rank 3 with another -e: every process exits 2, rank 0 names rank 3 ($SECS s)"
else fail "rank 3 with another -e: exit codes $RCS after $SECS s ($(head -c 300 "$OUT/mism-opt-rank0.err"))"; fi
# shellcheck disable=SC2086
procs mism-plan "TOPOTUNE_GPU_EMULATE_HOSTS=2" "--validate-rounds 1" $V --table "$OUT/table-2x2.json"
# (since issue #32 item 7 the option itself is compared before the plans: either message names rank 3)
if all_rc "$RCS" 2 && grep -qE 'rank 3: (option --validate-rounds|the ranks derived different candidates)' \
     "$OUT/mism-plan-rank0.err" && [ "$SECS" -lt 30 ]; then
  pass "rank 3 with another --validate-rounds: every process exits 2, rank 0 names rank 3 ($SECS s)"
else fail "rank 3 with another --validate-rounds: exit codes $RCS after $SECS s ($(head -c 300 "$OUT/mism-plan-rank0.err"))"; fi

# 6. nothing left behind
shm_after=$(ls /dev/shm 2>/dev/null | grep -c topotune)
if [ "$shm_after" -le "$shm_before" ]; then pass "/dev/shm: no topotune segment left ($shm_after)"
else fail "/dev/shm: $shm_after topotune segment(s) left"; ls -la /dev/shm | tee -a "$summary"; fi
for f in "$OUT"/*.err; do cp "$f" "${f%.err}.err.log"; done 2>/dev/null   # into logs.tgz too
finish_result
