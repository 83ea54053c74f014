#!/usr/bin/env bash
# NCCL rows with NCCL's structure (topo-tune --model nccl in the measurement modes) and the
# conservative tables for the plugin (--keep-nccl); docs/model.md, docs/calibration.md section 10.
. "$(dirname "$0")/lib.sh"
TT="$BIN/topo-tune"
B="$FIX/measurements/gpu-h200x2-b"
A="$FIX/measurements/gpu-h200x2"

med() { sed -n "s/^# error over [0-9]* rows ($1): .*layer median \([0-9.]*\)%.*/\1/p" "$TMP/out"; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }

# ---- out of the box: NCCL's default-choice rows, constants fitted on the forced sweeps only ----
run "$TT" --calibrate --model nccl "$B"/s-nccl-default-*.txt --input "$B/scan.xml"
expect_rc 0 "--calibrate --model nccl reports NCCL rows"
expect_grep "$TMP/out" 'part: sm90-nvl18-1node' "the H200 NV18 part is recognised"
m=$(med "NCCL's own choice")
if le "$m" 7; then ok "held-out default runs (4 x gpu-h200x2-b): median $m% <= 7% (was 51% with the topotune model)"
else not_ok "default-choice median error $m%"; fi
expect_grep "$TMP/out" 'nccl/any +ring/ll +8 ' "a default row at 8 B is predicted as NCCL's choice ring/ll"
expect_grep "$TMP/out" 'nccl/any +ring/simple +2097152 ' "... and at 2 MiB as ring/simple"
run "$TT" --calibrate --model nccl "$A/sweep-nccl-default.txt" --input "$A/scan.xml"
m=$(med "NCCL's own choice")
if le "$m" 15; then ok "held-out session (gpu-h200x2, 17:49 UTC): median $m% <= 15%"; else not_ok "other session: $m%"; fi
run "$TT" --calibrate --model nccl "$B"/s-nccl-{ring,tree}-*.txt --input "$B/scan.xml"
m=$(med "forced algorithm\/protocol")
if le "$m" 2; then ok "forced sweeps (in sample): median $m%"; else not_ok "forced: $m%"; fi
run "$TT" --calibrate --model nccl "$B"/s-ours-default-small.txt --input "$B/scan.xml"
expect_rc 2 "rows of our executor are not NCCL rows"
expect_grep "$TMP/err" 'evaluate it with --model topotune|none of the' "... and the message says so"
run "$TT" --calibrate --model nccl "$B"/s-nccl-default-1-small.txt --input "$B/scan.xml" -o "$TMP/x.json"
expect_rc 2 "--model nccl writes no calibration file"

# ---- the other measurement modes accept --model nccl ----
run "$TT" --expect --measured "$B"/s-nccl-default-1-*.txt --input "$B/scan.xml" --model nccl
expect_rc 0 "--expect --model nccl: every row of a healthy run passes"
expect_grep "$TMP/out" 'nccl model \(sm90-nvl18-1node\)' "... naming the model and part"
run "$TT" --judge-choices --model nccl "$B"/s-nccl-{ring,tree}-*.txt --input "$B/scan.xml"
expect_rc 1 "--judge-choices --model nccl: NCCL's own choice judged against its forced sweeps"
expect_grep "$TMP/out" 'sizes 2097152..2097152 bytes: use ring/ll instead of ring/simple' "... NCCL's choice at 2 MiB is not the fastest"
run "$TT" --judge-choices --model nccl --calibration /dev/null "$B"/s-nccl-ring-ll-small.txt --input "$B/scan.xml"
expect_rc 2 "--calibration does not go with --model nccl in measurement modes"

# ---- conservative table for the plugin (recorded failure: up to 27 % slower at 512 B-8 KiB) ----
run "$TT" --calibrate "$B"/s-nccl-{ring,tree}-*.txt --input "$B/scan.xml" -o "$TMP/cal-nccl.json"
expect_rc 0 "calibrate the topotune model on NCCL's forced sweeps (as gpu-multi-vs-nccl.sh)"
run "$TT" -i "$B/scan.xml" --calibration "$TMP/cal-nccl.json" --nccl-only -C allreduce --max-size 8G -f json -o "$TMP/t.json"
expect_rc 0 "the plugin's table from the calibrated model"
expect_grep "$TMP/t.json" '"keep_nccl_margin":[[:space:]]*0.15' "it is conservative by default (margin 15 %)"
if awk '/"min_bytes"/ { gsub(/[^0-9]/, ""); if ($0 + 0 < 1048576) bad = 1 } END { exit bad }' "$TMP/t.json"; then
  ok "no entry below 1 MiB: NCCL keeps its choice where the recorded failure was"; else not_ok "entries below 1 MiB"; fi
if ! grep -q '"channels":[[:space:]]*[1-9]' "$TMP/t.json"; then ok "entries leave the channel count to NCCL"; else not_ok "channels forced"; fi
# recorded: the table's only measured forced size, 2 MiB ring/ll128, against NCCL's own choice (median of 4 runs)
f=$(awk '!/^#/ && $1 == 2097152 { print ($6 < $10 ? $6 : $10) }' "$B/s-nccl-ring-ll128-small.txt")
d=$(cat "$B"/s-nccl-default-[1-4]-small.txt | awk '!/^#/ && $1 == 2097152 { print ($6 < $10 ? $6 : $10) }' | sort -n | awk '{ v[NR] = $1 } END { print (v[2] + v[3]) / 2 }')
if grep -q '"ring"' "$TMP/t.json" && awk -v f="$f" -v d="$d" 'BEGIN { exit !(f <= 1.03 * d) }'; then
  ok "recorded: the forced ring/ll128 at 2 MiB ($f us) is not slower than NCCL alone ($d us)"; else not_ok "2 MiB: $f vs $d"; fi
run "$TT" -i "$B/scan.xml" --calibration "$TMP/cal-nccl.json" --nccl-only -C allreduce --keep-nccl off -f json -o "$TMP/t0.json"
if grep -q '"channels":[[:space:]]*[1-9]' "$TMP/t0.json" && ! grep -q keep_nccl "$TMP/t0.json"; then
  ok "--keep-nccl off: the old table (every size, the model's channels)"; else not_ok "--keep-nccl off"; fi
run "$TT" -i "$B/scan.xml" --model nccl --nccl-only --keep-nccl 0.1
expect_rc 2 "--keep-nccl with --model nccl is refused"
run "$TT" -i "$B/scan.xml" --nccl-only --keep-nccl -1
expect_rc 2 "--keep-nccl rejects a negative margin"
finish
