#!/usr/bin/env bash
# scripts/gpu/model-truth.sh --offline on the recorded one-H200 collection of 2026-12-02 (issue #20): the
# cross-validation figures the executor-shaped model reaches today are held, so a regression
# fails here.  Goals met today are asserted at the goal; goals missed today (host ranks: the
# 8 B - 16 KiB region of the shared-memory transport, docs/model.md) at today's level.
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
le "virtual 2 ranks, held-out sizes, worst" 25 "virtual 2 ranks: held-out sizes worst within the goal"
le "virtual 4 ranks, held-out sizes, worst" 40 "virtual 4 ranks: held-out sizes worst at today's level (goal 25%)"
le "virtual 8 ranks, held-out sizes, worst" 45 "virtual 8 ranks: held-out sizes worst at today's level (goal 25%)"
le "virtual, held-out rank count (8), median" 15 "virtual: held-out rank count (fit 2+4, predict 8) median within the goal"
le "host 2 ranks, held-out sizes, median" 15 "host 2 ranks: held-out sizes median at today's level (goal 10%)"
le "host 4 ranks, held-out sizes, median" 16 "host 4 ranks: held-out sizes median at today's level (goal 10%)"
le "host 8 ranks, held-out sizes, median" 21 "host 8 ranks: held-out sizes median at today's level (goal 10%)"
le "host, held-out rank count (8), median" 21 "host: held-out rank count median at today's level (goal 15%)"
# LL128 rows of virtual ranks are predicted (not refused) and fitted
if grep -qE '^allreduce +8 tree/ll128 ' "$TMP/mt/calibrate-virtual.txt" && grep -q '^exec.virtual.LL128.chan_GBps ' "$TMP/mt/calibrate-virtual.txt"; then
  ok "virtual-rank LL128 rows are modelled and set their own constants"
else not_ok "virtual-rank LL128 rows are modelled and set their own constants"; fi
grep -q '^GOAL .* MISSED' "$S" && grep -q '^GOAL .* MET' "$S" && ok "summary says MET and MISSED per goal" \
  || not_ok "summary says MET and MISSED per goal"
finish
