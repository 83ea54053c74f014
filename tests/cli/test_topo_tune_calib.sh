#!/usr/bin/env bash
# topo-tune measurement modes: --calibrate, --judge-choices, --expect (docs/calibration.md).
. "$(dirname "$0")/lib.sh"
TT="$BIN/topo-tune"
M="$FIX/measurements"
HOST="$M/host-pcie-8gpu.xml"

# ---- calibrate on the recorded topo-exec runs ----
run "$TT" --calibrate "$M"/exec-*.json --input "$HOST" -o "$TMP/cal.json"
expect_rc 0 "calibrate: recorded topo-exec runs"
# host ranks of our executor: the executor-shaped constants (not the topology's link classes)
expect_grep "$TMP/out" '^exec.host.Simple.step_us' "calibrate: reports the fitted per-step cost of host ranks"
expect_grep "$TMP/out" '^exec.host.Simple.launch_us' "calibrate: reports the fitted per-call cost of host ranks"
expect_grep "$TMP/out" '^exec.host.Simple.xcore_GBps +[0-9.]+ +[0-9.]+ \.\. [0-9.]+ +[0-9]+ rows, ' "calibrate: each constant with its spread and the rows that set it"
# a constant no row leans on says so (on these runs the cross-core term carries the copies' cost)
expect_grep "$TMP/out" '^exec.host.Simple.(chan_GBps|hop_us) .*(no row where it is >= 30% of the time|[0-9]+ rows, )' "calibrate: every constant's line says which rows set it, or that none does"
expect_grep "$TMP/out" '^# fitted range exec.host.simple' "calibrate: says the fitted range (extrapolation outside it)"
expect_grep "$TMP/out" '^cv sizes +host' "calibrate: cross-validation over held-out sizes by itself"
expect_grep "$TMP/out" '^cv ranks +host +8 ranks 2\+4' "calibrate: cross-validation over the held-out rank count"
expect_grep "$TMP/out" '^cv algorithm host' "calibrate: cross-validation over the held-out algorithm"
expect_grep "$TMP/out" '^# error over [0-9]+ rows: median' "calibrate: median and worst error before/after"
expect_grep "$TMP/out" 'Theil-Sen' "calibrate: robust alpha-beta per group"
expect_grep "$TMP/cal.json" '"schema": "topotune-calibration"' "calibrate: writes a calibration file"
med=$(sed -n 's/^# error over [0-9]* rows: median \([0-9.]*\)% -> \([0-9.]*\)%.*/\1 \2/p' "$TMP/out")
# the built-in host constants come from a 16-core machine; these runs are from a 2-core box
if awk -v m="$med" 'BEGIN{split(m,a," "); exit !(a[2] <= a[1])}'; then ok "calibrate: median error not worse after the fit ($med)"
else not_ok "calibrate: median error worse after the fit ($med)"; fi

# the file is accepted by --calibration and changes the prediction
run "$TT" --input "$HOST" --calibration "$TMP/cal.json" --explain 1M -C allreduce
expect_rc 0 "calibration file read back by --calibration"
cp "$TMP/out" "$TMP/explain-cal"
run "$TT" --input "$HOST" --explain 1M -C allreduce
# rows of our executor set the executor-shaped constants only: NCCL's candidates keep theirs (only the
# line naming where the constants came from differs)
if cmp -s <(grep -v '^model terms' "$TMP/out") <(grep -v '^model terms' "$TMP/explain-cal"); then ok "our executor's rows leave the NCCL-shaped predictions alone"; else not_ok "our executor's rows moved the NCCL-shaped predictions"; fi
grep -q '"exec"' "$TMP/cal.json" && ok "calibration file carries the executor constants" || not_ok "calibration file carries the executor constants"

# calibrating again from the fitted file: already fitted, error does not grow
run "$TT" --calibrate "$M"/exec-ar-ring-*.json --input "$HOST" --calibration "$TMP/cal.json"
expect_rc 0 "calibrate: JSON on stdout without -o"
expect_grep "$TMP/out" '"version": 1' "calibrate: stdout holds the calibration file"
expect_grep "$TMP/err" 'start: .*cal.json' "calibrate: report on stderr names the start values"

# nccl-tests text (hand-written), every rank count on an 8-GPU topology
run "$TT" --calibrate "$M/nccl-tests-handwritten.txt" --input "$FIX/hgx-h100-8gpu.xml" --nics-per-node 8 --nic-speed 400 -o "$TMP/cal2.json"
expect_rc 0 "calibrate: nccl-tests text tables (two runs, MPI prefixes)"
expect_grep "$TMP/out" 'allgather +4 nccl/any' "calibrate: nccl-tests rows are NCCL's own choice"

# errors
run "$TT" --calibrate --input "$HOST"
expect_rc 2 "calibrate: no file is a usage error"
printf ' 1024 256 float sum -1 1.0 0.5\n' > "$TMP/bad.txt"
run "$TT" --calibrate "$TMP/bad.txt" --input "$HOST" --collective allreduce -o "$TMP/never.json"
expect_rc 2 "calibrate: malformed row"
expect_grep "$TMP/err" 'bad.txt:1: result row has 7 columns' "calibrate: error names file:line"
[ -e "$TMP/never.json" ] && not_ok "calibrate: no output after an error" || ok "calibrate: no output after an error"
# host ranks follow the executor's schedule, whatever GPUs the topology has
run "$TT" --calibrate "$M/exec-ar-ring-8.json" --input "$FIX/pcie-4gpu.xml"
expect_rc 0 "calibrate: 8 host ranks on a 4-GPU topology (host ranks need no GPU)"
expect_grep "$TMP/err" '^exec.host.Simple.step_us' "calibrate: 8 host ranks fitted with the executor-shaped model"
run "$TT" --judge-choices "$M/exec-ar-ring-8.json" --input "$HOST" --measured
expect_rc 2 "--measured without --expect"

# ---- judge the table's choices ----
run "$TT" --judge-choices "$M"/exec-ar-ring-8.json "$M"/exec-ar-tree-8.json "$M"/exec-ar-halving-doubling-8.json --input "$HOST"
expect_rc 1 "judge: wrong choices give exit 1"
expect_grep "$TMP/out" '^fix: allreduce, 8 ranks, sizes [0-9]+\.\.[0-9]+ bytes: use ' "judge: names the size range to fix"
expect_grep "$TMP/out" 'table choice not measured' "judge: LL choices cannot be judged on host runs"
"$TT" --input "$HOST" -f json -C allreduce -o "$TMP/table.json"
run "$TT" --judge-choices "$M"/exec-ar-*-8.json --table "$TMP/table.json" --tolerance 10
expect_rc 0 "judge: everything right at a 1000% tolerance"
run "$TT" --judge-choices "$M"/exec-ar-ring-4.json --table "$TMP/table.json"
expect_rc 2 "judge: table for other ranks"
expect_grep "$TMP/err" 'measured with 4 ranks, the table .* is for 8' "judge: says which ranks differ"
run "$TT" --judge-choices "$M"/exec-ar-{ring,tree,halving-doubling}-*.json --input "$HOST" --calibration "$TMP/cal.json" --among-measured
expect_rc 1 "judge --among-measured: the calibrated model's ranking of runnable candidates"
expect_grep "$TMP/out" ' 0 without a measurement' "judge --among-measured: every choice is a measured candidate"
expect_grep "$TMP/out" '^allreduce +2 +1024 ' "judge --among-measured: every rank count"
run "$TT" --judge-choices "$M/exec-ar-ring-8.json" --table "$TMP/table.json" --among-measured
expect_rc 2 "judge: --among-measured with --table is a usage error"
run "$TT" --judge-choices "$M/nccl-tests-handwritten.json" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 2 "judge: nccl-tests rows name no algorithm"
run "$TT" --judge-choices "$M/exec-ar-ring-8.json" --input "$HOST" --tolerance -1
expect_rc 2 "judge: negative tolerance"

# ---- expected-performance envelope ----
run "$TT" --expect --input "$FIX/hgx-h100-8gpu.xml" -C allreduce --min-size 1M --max-size 1G
expect_rc 0 "expect: envelope"
expect_grep "$TMP/out" '^allreduce +1073741824 ' "expect: one row per size"
expect_grep "$TMP/out" "PASS within the model's measured error in the size's regime" "expect: states how the bands are made"
expect_grep "$TMP/out" '^allreduce +1073741824 +nvls/simple .* >= 16 MiB, 1 node$' "expect: each size names NCCL's choice and its regime"
# a published healthy run of this machine (DGX H100, one process per GPU) passes at every size
DGX="$FIX/published/h100-1n-nvlink-ghdgxcbenchmarking.txt"
run "$TT" --expect --measured "$DGX" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 0 "expect: a healthy published run passes"
expect_grep "$TMP/out" '^# 32 PASS, 0 WARN, 0 FAIL -> PASS' "expect: summary"
# the same run with the NVLink bandwidth halved at 1 GiB: that size fails
awk '$1 == 1073741824 { printf "%s %.1f %.1f -\n", $1, 2 * $2, 2 * $3; next } { print }' "$DGX" > "$TMP/slow.txt"
run "$TT" --expect --measured "$TMP/slow.txt" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 2 "expect: half the busbw fails (exit 2)"
expect_grep "$TMP/out" '^allreduce +1073741824 .*FAIL .*lost bandwidth' "expect: the failing size is named, with the cause"
awk '$1 == 1073741824 { printf "%s %.1f %.1f -\n", $1, $2 / 0.8, $3 / 0.8; next } { print }' "$DGX" > "$TMP/warn.txt"
run "$TT" --expect --measured "$TMP/warn.txt" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 1 "expect: 80% of the busbw warns (exit 1)"
expect_grep "$TMP/out" '^allreduce +1073741824 .*WARN .*slower than a healthy machine' "expect: ... slower than a healthy machine"
# a thread that drove 8 GPUs (nccl-tests -g 8) launches them one after the other: its small sizes expect more
run "$TT" --expect --measured "$M/nccl-tests-handwritten.json" --input "$FIX/hgx-h100-8gpu.xml" -f json
expect_grep "$TMP/out" '"bytes":[[:space:]]*1024,' "expect -f json: rows"
gpt=$(tr -d ' \t\n' < "$TMP/out" | grep -o '"bytes":1024,[^}]*' | grep -o '"pred_us":[0-9.]*' | cut -d: -f2)
one=$("$TT" --expect --input "$FIX/hgx-h100-8gpu.xml" -C allreduce --min-size 1K --max-size 1K | awk '$2 == 1024 {print $4}')
if awk -v a="$gpt" -v b="$one" 'BEGIN { exit !(a > b + 10) }'; then ok "-g 8 run: 1 KiB expected at $gpt us, one process per GPU at $one us"
else not_ok "-g 8 run: 1 KiB expected at '$gpt' us against '$one'"; fi
run "$TT" --expect --measured "$M/nccl-tests-handwritten.txt" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 2 "expect: runs of different rank counts in one judgement"
expect_grep "$TMP/err" 'nccl-tests-handwritten.txt:[0-9]+: measured with 4 ranks but the expectation is for 8' "expect: names the row"
run "$TT" --expect "$M/exec-ar-ring-8.json" --input "$HOST"
expect_rc 2 "expect: files need --measured"
# every published form of nccl-tests output (docs/calibration.md, section 1)
run "$TT" --expect --measured "$M/nccl-tests-2019-allreduce-4node.txt" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 2 "expect: a table of nccl-tests 2.0 - 2.11 does not name its collective"
expect_grep "$TMP/err" 'nccl-tests-2019-allreduce-4node.txt:24: .*--collective' "expect: says file:line and --collective"
run "$TT" --expect --measured "$M/nccl-tests-2019-allreduce-4node.txt" --input "$FIX/hgx-h100-8gpu.xml" -C allreduce
expect_grep "$TMP/out" 'expected busbw, 4 node\(s\) x 4 GPU\(s\)' "expect: the table without root column: 16 ranks on 4 hosts"
expect_grep "$TMP/out" '^allreduce +1048576 +[a-z_]+/[a-z0-9]+ +15\.8[0-9]+ .*nccl-tests-2019-allreduce-4node.txt:28' "expect: its 1 MiB row read from the time column (123.9 us), not the algbw"
run "$TT" --expect --measured "$M/facts-handwritten.txt" --input "$FIX/hgx-h100-8gpu.xml" -N 2 -g 8
expect_rc 1 "expect: a fact table of a published result (its invented 1 MiB row is far faster than real clusters: WARN)"
expect_grep "$TMP/out" '^allreduce +1048576 +[a-z_]+/[a-z0-9]+ +61\.200 .*WARN .*facts-handwritten.txt:17: .*under-predicts' "expect: the fact table's busbw-only row"
printf '# topotune published result, version 1\n# source: x\ncollective allreduce\nranks 16\nnodes 2\n8 1.0 - -\n' > "$TMP/pub.txt"
run "$TT" --expect --measured "$TMP/pub.txt" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 2 "expect: an incomplete fact table is refused"
expect_grep "$TMP/err" 'pub.txt:6: no .# hardware:. line' "expect: names file:line of the fact table"

# ---- the loop on this machine: topo-exec runs -> calibrate, judge ----
X="$BIN/topo-exec"
if [ -x "$X" ]; then
  for a in ring tree; do
    run "$X" --host 2 --algo $a -b 1K -e 256K -f 4 -n 3 -w 1 --no-progress -J "$TMP/live-$a.json"
    expect_rc 0 "topo-exec --algo $a run recorded"
  done
  run "$TT" --calibrate "$TMP"/live-*.json --input "$HOST" -o "$TMP/cal-live.json"
  expect_rc 0 "calibrate: fresh topo-exec JSON"
  expect_grep "$TMP/out" '^# calibration of the topotune model: 10 rows used, 0 skipped' "calibrate: every fresh row used"
  run "$TT" --judge-choices "$TMP"/live-*.json --input "$HOST" --calibration "$TMP/cal-live.json" --among-measured
  if [ "$RC" -le 1 ] && grep -Eq '^# [0-9]+ right, [0-9]+ wrong, 0 without' "$TMP/out"; then ok "judge: fresh runs judged (exit $RC)"
  else not_ok "judge: fresh runs (exit $RC: $(head -c 300 "$TMP/err"))"; fi
  # (topo-exec --validate, which measures the candidates itself: tests/cli/test_topo_exec_validate.sh)
  # topo-exec predicts with the calibration (--predict / --calibration, bin/cli_predict.c)
  # --from-measured: a table of the fastest measured candidates, NCCL's own choice kept within the margin
G="$FIX/measurements/gpu-h200x2"
run "$TT" --from-measured "$G"/sweep-ring-ll.txt "$G"/sweep-ring-simple.txt "$G"/sweep-tree-ll.txt "$G"/sweep-tree-simple.txt "$G"/sweep-nccl-default.txt
expect_rc 0 "from-measured: recorded 2xH200 sweeps"
expect_grep "$TMP/out" '^allreduce +8 +8\.\.15 +ring/ll +11\.35 +19\.20 +\+40\.9% +force' "from-measured: 8 B forced to ring/ll (+40.9% on NCCL's choice)"
expect_grep "$TMP/out" '^allreduce +524288 .*leave to NCCL' "from-measured: 512 KiB left to NCCL (its choice is faster)"
run "$TT" --from-measured --margin 0.5 "$G"/sweep-ring-ll.txt "$G"/sweep-nccl-default.txt -f json -o "$TMP/meas.json"
expect_rc 0 "from-measured: JSON with a 50% margin"
expect_grep "$TMP/meas.json" '"model":[[:space:]]*"measured"' "from-measured JSON: model measured"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["entries"]; sys.exit(not (d["ranks"]==2 and len(e)==0 and len(d["decisions"])==16))' "$TMP/meas.json" 2>/dev/null; then
  # ring/ll beats NCCL's choice by at most 40.9% (8 B): with a 50% margin nothing is forced
  ok "from-measured: 50% margin forces nothing, all 16 sizes listed as decisions"; else
  not_ok "from-measured JSON: $(head -c 300 "$TMP/meas.json")"; fi
run "$TT" --from-measured "$G"/sweep-ring-ll.txt "$G"/sweep-nccl-default.txt -f nccl-csv
expect_grep "$TMP/out" '^allreduce,8,16383,ring,ll,-1,1,2,-1,-1$' "from-measured: NCCL tuner CSV, equal neighbours merged (8 B..16 KiB ring/ll)"
# the run of 2026-11-29 19:39 (gpu-h200x2-b): the table rebuilt from its NCCL sweeps is the one NCCL used there
G2="$FIX/measurements/gpu-h200x2-b"
run "$TT" --from-measured "$G2"/s-nccl-ring-*.txt "$G2"/s-nccl-tree-*.txt "$G2"/s-nccl-default-[12]-*.txt -f json -o "$TMP/pm.json"
# (the rules NCCL applies: collective, byte range, algorithm, protocol)
if python3 -c 'import json,sys
k=("collective","min_bytes","max_bytes","algorithm","protocol")
a,b=[[tuple(e[x] for x in k) for e in json.load(open(f))["entries"]] for f in sys.argv[1:3]]
sys.exit(not (a==b and len(a)==4))' "$TMP/pm.json" "$G2/plugin-measured.json" 2>/dev/null; then
  ok "from-measured: NCCL's recorded sweeps give the plugin table that run used (4 ranges)"; else not_ok "from-measured rebuild differs: $(head -c 400 "$TMP/pm.json")"; fi
run "$TT" --from-measured "$FIX"/measurements/exec-ar-ring-2.json "$FIX"/measurements/exec-ar-ring-4.json
expect_rc 2 "from-measured: mixed rank counts refused"
expect_grep "$TMP/err" 'one communicator shape.*2 ranks.*4 ranks' "... naming both shapes"
run "$TT" --from-measured --margin 1.5 "$G"/sweep-ring-ll.txt
expect_rc 2 "from-measured: --margin out of range"
run "$TT" --from-measured
expect_rc 2 "from-measured: no files"
run "$TT" --margin 0.1 -i "$FIX/pcie-4gpu.xml"
expect_rc 2 "--margin without --from-measured"

if [ -x "$BIN/topo-exec" ] && cp "$BIN/topo-exec" "$TMP/topo-exec-pred"; then
    run "$TMP/topo-exec-pred" --predict "$HOST" --calibration "$TMP/cal.json" --host 2 --algo ring \
      -b 1K -e 64K -f 8 -n 2 --no-progress -J "$TMP/pred.json"
    expect_rc 0 "predicting topo-exec runs"
    expect_grep "$TMP/out" '#wrong     pred    err%' "predicting topo-exec: pred/err% columns"
    # 1 KiB ring on 2 ranks with cal.json: base + 2 steps of (alpha + step_us) + channel cost, > 0
    if awk '!/^#/ && NF { n++; if (NF != 17 || $10 + 0 <= 0) bad=1 } END { exit !(n == 3 && !bad) }' "$TMP/out"; then
      ok "predicting topo-exec: every row has a prediction"; else not_ok "prediction rows: $(grep -v '^#' "$TMP/out" | head -2)"; fi
    expect_grep "$TMP/pred.json" '"predicted_time":' "predicting topo-exec: JSON predicted_time"
    run "$TT" --calibrate "$TMP/pred.json" --input "$HOST" -o "$TMP/pred-cal.json"
    expect_rc 0 "calibrate reads topo-exec JSON with predictions"
    run "$TMP/topo-exec-pred" --host 2 -b 1K -e 1K -n 1 --no-progress
    if awk '!/^#/ && NF { if (NF != 13) bad=1 } END { exit bad }' "$TMP/out" && ! grep -q 'pred    err%' "$TMP/out"; then
      ok "topo-exec without --predict: the plain nccl-tests table"; else not_ok "no --predict: $(grep -v '^#' "$TMP/out" | head -1)"; fi
    TOPOTUNE_PREDICT_TOPO="$HOST" run "$TMP/topo-exec-pred" --host 2 -b 1K -e 1K -n 1 --no-progress
    if awk '!/^#/ && NF { n++; if (NF != 17 || $10 + 0 <= 0) bad=1 } END { exit !(n == 1 && !bad) }' "$TMP/out"; then
      ok "TOPOTUNE_PREDICT_TOPO works like --predict"; else not_ok "env prediction: $(grep -v '^#' "$TMP/out" | head -1)"; fi
    run "$TMP/topo-exec-pred" --predict "$TMP/does-not-exist.xml" --host 2 -b 1K -e 1K -n 1 --no-progress
    expect_rc 2 "an unreadable --predict topology: exit 2 before running"
    expect_grep "$TMP/err" 'prediction off: .*does-not-exist' "... naming the file and the reason"
    TOPOTUNE_PREDICT_TOPO="$TMP/none.xml" run "$TMP/topo-exec-pred" --host 2 -b 1K -e 1K -n 1 --no-progress
    expect_grep "$TMP/err" 'prediction off: .*none.xml' "predicting topo-exec: unreadable topology is reported"
  else
    not_ok "topo-exec not built"
  fi
else
  skip "topo-exec loop" "topo-exec not built"
fi
finish
