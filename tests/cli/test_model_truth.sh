#!/usr/bin/env bash
# scripts/gpu/model-truth.sh --offline on the recorded one-H200 collections of 2026-12-02 (issue #20:
# virtual ranks from model-truth-h200-d, host ranks from model-truth-h200-f, 2026-12-03): the cross-validation
# figures the executor-shaped model reaches today are held, so a regression fails here.  Goals met
# today are asserted at the goal; goals missed today (the host ranks' worst held-out rows, within
# the machine's run-to-run noise or the hierarchical schedule at 2 ranks, docs/model.md) at today's
# level.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
OUT="$TMP/mt" BUILD="${BIN%/bin}" bash scripts/gpu/model-truth.sh --offline > "$TMP/out" 2> "$TMP/err"
rc=$?
[ $rc -le 1 ] && ok "model-truth --offline runs (exit $rc)" || not_ok "model-truth --offline (exit $rc): $(tail -2 "$TMP/err")"
S="$TMP/mt/summary.txt"
val() { sed -n "s/^GOAL $1: \([0-9.]*\)%.*/\1/p" "$S" | head -1; }
le() { # NAME LIMIT WHAT
  local v
  v=$(val "$1")
  if [ -n "$v" ] && awk -v v="$v" -v l="$2" 'BEGIN{exit !(v <= l)}'; then ok "$3 ($v% <= $2%)"
  else not_ok "$3 (${v:-missing}% > $2%)"; fi
}
for n in 2 4 8; do
  le "virtual $n ranks, held-out sizes, median" 10 "virtual $n ranks: held-out sizes median within the goal"
done
for n in 2 4 8; do
  le "virtual $n ranks, held-out sizes, worst" 25 "virtual $n ranks: held-out sizes worst within the goal"
done
le "virtual, held-out rank count (8), median" 15 "virtual: held-out rank count (fit 2+4, predict 8) median within the goal"
for n in 2 4 8; do
  le "host $n ranks, held-out sizes, median" 10 "host $n ranks: held-out sizes median within the goal"
done
le "host 2 ranks, held-out sizes, worst" 35 "host 2 ranks: held-out sizes worst at today's level (goal 25%)"
le "host 4 ranks, held-out sizes, worst" 42 "host 4 ranks: held-out sizes worst at today's level (goal 25%)"
le "host 8 ranks, held-out sizes, worst" 35 "host 8 ranks: held-out sizes worst at today's level (goal 25%)"
# ... and the machine's own repeatability under them: the same rows, fastest of the odd cycles
# against the even ones, differ by more than the model's worst held-out row
for n in 2 4 8; do
  rw=$(sed -n "s/^# host $n ranks, repeatability (no goal): .*worst \([0-9.]*\) %.*/\1/p" "$S")
  mw=$(val "host $n ranks, held-out sizes, worst")
  if [ -n "$rw" ] && [ -n "$mw" ] && awk -v r="$rw" -v m="$mw" 'BEGIN{exit !(m <= r)}'; then
    ok "host $n ranks: the model's worst held-out row ($mw%) is within the machine's repeatability ($rw%)"
  else not_ok "host $n ranks: repeatability line (${rw:-missing}%) against the model's worst (${mw:-missing}%)"; fi
done
le "host, held-out rank count (8), median" 15 "host: held-out rank count (fit 2+4, predict 8) median within the goal"
# the host collection ran 6 cycles per sweep: each size is one row, the fastest of its cycles
if grep -qE '^# calibration of the topotune model: 432 rows used' "$TMP/mt/calibrate-host.txt"; then
  ok "host sweeps of 6 cycles are read as one row per size (432 rows)"
else not_ok "host sweeps of 6 cycles are read as one row per size: $(head -1 "$TMP/mt/calibrate-host.txt")"; fi
# rows measured more than once carry their own spread: the worst held-out row names it, and each
# cross-validation line says how many held-out rows were predicted within theirs
if grep -qE '^#   worst held-out row: .*; its 6 repeats spread [0-9.]+ %$' "$TMP/mt/calibrate-host.txt" \
   && grep -qE '^#   own spread of the 144 held-out rows measured more than once: median [0-9.]+ %; [0-9]+ of them predicted within it$' "$TMP/mt/calibrate-host.txt" \
   && ! grep -q 'own spread of the' "$TMP/mt/calibrate-virtual.txt"; then
  ok "cross-validation names the held-out rows' own spread over their repeats (host: 6 cycles; virtual: measured once)"
else not_ok "cross-validation names the held-out rows' own spread over their repeats: $(grep -m2 -E 'worst held-out|own spread' "$TMP/mt/calibrate-host.txt")"; fi
# the worst held-out row that was not an extrapolation, beside the worst of all: at most the worst of all,
# and on 2 host ranks below it (the 64 MiB rows, outside the sizes fitted on, are the worst there)
for n in 2 4 8; do
  wi=$(sed -n "s/^# host $n ranks, held-out sizes, worst inside the fitted range (no goal): \([0-9.]*\)%$/\1/p" "$S")
  wa=$(val "host $n ranks, held-out sizes, worst")
  if [ -n "$wi" ] && awk -v i="$wi" -v a="$wa" -v n="$n" 'BEGIN{exit !(i <= a && (n != 2 || i < a))}'; then
    ok "host $n ranks: worst held-out row inside the fitted range reported ($wi% of $wa%)"
  else not_ok "host $n ranks: worst inside the fitted range (${wi:-missing}%) against the worst (${wa:-missing}%)"; fi
done
# the host-only constants are fitted and reported with their spread
for c in peer_us xfer_GBps dram_GBps cache_MiB; do
  grep -qE "^exec.host.Simple.$c +[0-9.e+-]+ +[0-9.e+-]+ \.\. " "$TMP/mt/calibrate-host.txt" && ok "host constant $c reported with its spread" \
    || not_ok "host constant $c reported with its spread"
done
# the GPU-wide term of virtual ranks (every access of the ranks on the one GPU) is fitted and set by
# the large Simple rows; host ranks have no such constant
if grep -qE '^exec\.virtual\.Simple\.l2_GBps .* rows, ' "$TMP/mt/calibrate-virtual.txt" \
   && ! grep -q '^exec\.host\..*l2_GBps' "$TMP/mt/calibrate-host.txt"; then
  ok "virtual-rank l2_GBps reported with the rows that set it (none for host ranks)"
else not_ok "virtual-rank l2_GBps reported with the rows that set it (none for host ranks)"; fi
# LL128 rows of virtual ranks are predicted (not refused) and fitted
if grep -qE '^allreduce +8 tree/ll128 ' "$TMP/mt/calibrate-virtual.txt" && grep -q '^exec.virtual.LL128.chan_GBps ' "$TMP/mt/calibrate-virtual.txt"; then
  ok "virtual-rank LL128 rows are modelled and set their own constants"
else not_ok "virtual-rank LL128 rows are modelled and set their own constants"; fi
grep -q '^GOAL .* MISSED' "$S" && grep -q '^GOAL .* MET' "$S" && ok "summary says MET and MISSED per goal" \
  || not_ok "summary says MET and MISSED per goal"
finish
