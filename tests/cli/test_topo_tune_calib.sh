#!/usr/bin/env bash
# topo-tune measurement modes: --calibrate, --judge-choices, --expect (docs/calibration.md).
. "$(dirname "$0")/lib.sh"
TT="$BIN/topo-tune"
M="$FIX/measurements"
HOST="$M/host-pcie-8gpu.xml"

# ---- calibrate on the recorded topo-exec runs ----
run "$TT" --calibrate "$M"/exec-*.json --input "$HOST" -o "$TMP/cal.json"
expect_rc 0 "calibrate: recorded topo-exec runs"
expect_grep "$TMP/out" '^links.PCI.alpha_us' "calibrate: reports the fitted link latency"
expect_grep "$TMP/out" '^protocols.Simple.base_us' "calibrate: reports the fitted protocol base"
expect_grep "$TMP/out" '^# error over [0-9]+ rows: median' "calibrate: median and worst error before/after"
expect_grep "$TMP/out" 'Theil-Sen' "calibrate: robust alpha-beta per group"
expect_grep "$TMP/cal.json" '"schema": "topotune-calibration"' "calibrate: writes a calibration file"
med=$(sed -n 's/^# error over [0-9]* rows: median \([0-9.]*\)% -> \([0-9.]*\)%.*/\1 \2/p' "$TMP/out")
if awk -v m="$med" 'BEGIN{split(m,a," "); exit !(a[2] < a[1] / 2)}'; then ok "calibrate: median error at least halved ($med)"
else not_ok "calibrate: median error not halved ($med)"; fi

# the file is accepted by --calibration and changes the prediction
run "$TT" --input "$HOST" --calibration "$TMP/cal.json" --explain 1M -C allreduce
expect_rc 0 "calibration file read back by --calibration"
cp "$TMP/out" "$TMP/explain-cal"
run "$TT" --input "$HOST" --explain 1M -C allreduce
if cmp -s "$TMP/out" "$TMP/explain-cal"; then not_ok "calibration changes the predictions"; else ok "calibration changes the predictions"; fi

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
run "$TT" --calibrate "$M/exec-ar-ring-8.json" --input "$FIX/pcie-4gpu.xml"
expect_rc 2 "calibrate: 8-rank runs on a 4-GPU topology"
expect_grep "$TMP/err" 'none of the 9 rows' "calibrate: says no row fits the topology"
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
expect_grep "$TMP/out" 'PASS >= 80% of the prediction' "expect: states the bands"
run "$TT" --expect --measured "$M/nccl-tests-handwritten.json" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 0 "expect: a healthy run passes"
expect_grep "$TMP/out" '3 PASS, 0 WARN, 0 FAIL -> PASS' "expect: summary"
# the same run with the NVLink bandwidth halved: large sizes fail
sed 's/"time": 4601.3/"time": 9202.6/; s/"time": 4598.9/"time": 9197.8/' "$M/nccl-tests-handwritten.json" > "$TMP/slow.json"
run "$TT" --expect --measured "$TMP/slow.json" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 2 "expect: half the busbw fails (exit 2)"
expect_grep "$TMP/out" '^allreduce +1073741824 .*FAIL' "expect: the failing size is named"
sed 's/"time": 4601.3/"time": 5800/; s/"time": 4598.9/"time": 5800/' "$M/nccl-tests-handwritten.json" > "$TMP/warn.json"
run "$TT" --expect --measured "$TMP/warn.json" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 1 "expect: 70% of the busbw warns (exit 1)"
run "$TT" --expect --measured "$M/nccl-tests-handwritten.txt" --input "$FIX/hgx-h100-8gpu.xml"
expect_rc 2 "expect: runs of different rank counts in one judgement"
expect_grep "$TMP/err" 'nccl-tests-handwritten.txt:[0-9]+: measured with 4 ranks but the expectation is for 8' "expect: names the row"
run "$TT" --expect "$M/exec-ar-ring-8.json" --input "$HOST"
expect_rc 2 "expect: files need --measured"
finish
