#!/usr/bin/env bash
# model-truth.sh - the goals of issue #20 ("Model truth past two ranks") in one command.
#   GPU machine (build carried, scripts/README.md):
#     BUILD=.devcarry/build OUT=dir bash scripts/gpu/model-truth.sh [DATA_DIR]
#       1. collect: scripts/gpu/model-truth-collect.sh (skipped when DATA_DIR holds a collection)
#       2. offline evaluation: topo-tune --calibrate per kind of ranks (virtual ranks on one GPU,
#          host ranks), whose cross-validation lines (held-out sizes per rank count, held-out rank
#          count, held-out algorithm) are checked against the goals
#       3. topo-exec --validate of the table the calibrated model computes: virtual ranks 2/4/8,
#          host ranks 2/4/8 (goal: right or within 5% at >= 90% of sizes)
#   anywhere, on recorded data (no GPU; steps 2 only):
#     bash scripts/gpu/model-truth.sh --offline [DATA_DIR...]
#       each kind of ranks is taken from the last DATA_DIR that has its sweeps; default: the
#       fixtures model-truth-h200-d (virtual ranks, 2026-12-02 13:41 UTC; its host ranks bound to
#       cores are replaced by) model-truth-h200-f (host ranks unbound, the default, 6 cycles per
#       sweep in two device calls, 2026-12-03 08:59-09:12 UTC)
# MT_FACTOR (size factor of the validate sweeps, default 2) and MT_ROUNDS (--validate-rounds, default 3)
# shorten step 3; MT_KINDS (default "virtual host") picks the kinds of ranks steps 2 and 3 evaluate.
# MT_COLLECT=virtual|host|all|none: what step 1 collects (default: all without DATA_DIR, none with);
# what it collects is used before the DATA_DIRs' sweeps of the same kind (e.g. MT_COLLECT=virtual ...
# model-truth.sh tests/fixtures/measurements/model-truth-h200-c: new virtual-rank sweeps, the recorded
# host ranks).
# Writes $OUT/summary.txt with one "GOAL ... MET|MISSED" line per goal; exit 0 when every goal
# evaluated was met, 1 otherwise (the lines say which).
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-model-truth.XXXXXX")}
mode=gpu
dirs=()
if [ "${1:-}" = --offline ]; then
  mode=offline
  shift
  dirs=("$@")
  [ ${#dirs[@]} -gt 0 ] || dirs=(tests/fixtures/measurements/model-truth-h200-d tests/fixtures/measurements/model-truth-h200-f)
elif [ $# -gt 0 ]; then
  dirs=("$@")
fi
mkdir -p "$OUT"
[ -d .devcarry/lib ] && export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
S="$OUT/summary.txt"
: > "$S"
say() { echo "$*" | tee -a "$S"; }
missed=0
goal() { # NAME VALUE LIMIT (both in %, met when VALUE <= LIMIT)
  if awk -v v="$2" -v l="$3" 'BEGIN{exit !(v + 0 <= l + 0)}'; then say "GOAL $1: $2% (<= $3%) MET"
  else say "GOAL $1: $2% (<= $3%) MISSED"; missed=1; fi
}
say "# model-truth $(date -u '+%Y-%m-%d %H:%M UTC') $(hostname), mode $mode"
collect=${MT_COLLECT:-$([ ${#dirs[@]} -eq 0 ] && echo all || echo none)}
if [ "$mode" = gpu ] && [ "$collect" != none ]; then
  OUT="$OUT/data" BUILD="$B" bash scripts/gpu/model-truth-collect.sh "$collect" > "$OUT/collect.log" 2>&1
  dirs+=("$OUT/data")
  say "# collected ($collect): $(grep -c '^== ' "$OUT/data/summary.txt") sweeps, $(grep -c '^== .*rc=[1-9]' "$OUT/data/summary.txt") failed"
fi
# the data of one kind of ranks: the last directory given that holds its sweeps
data_of() { local d found=; for d in "${dirs[@]}"; do ls "$d"/$1-*.txt > /dev/null 2>&1 && found=$d; done; echo "$found"; }
say "# data: ${dirs[*]}"
# the topology is not used for rows of our executor (executor-shaped model); --calibrate wants one
TOPO=tests/fixtures/hgx-h100-8gpu.xml
kinds=${MT_KINDS:-virtual host}
for k in $kinds; do
  data=$(data_of $k)
  [ -n "$data" ] || { say "# no $k data in ${dirs[*]}"; continue; }
  say "# $k ranks: $data"
  "$B/bin/topo-tune" --calibrate "$data"/$k-*.txt --input "$TOPO" -o "$OUT/cal-$k.json" > "$OUT/calibrate-$k.txt" 2>&1 \
    || { say "# calibrate $k failed: $(tail -1 "$OUT/calibrate-$k.txt")"; missed=1; continue; }
  say "# $k: $(grep '^# error over' "$OUT/calibrate-$k.txt")"
  grep '^cv ' "$OUT/calibrate-$k.txt" | tee -a "$S" > "$OUT/cv-$k.txt"
  # columns from the end: rows median worst start-median start-worst extrap
  while read -r _ test kind n rest; do
    set -- $rest
    eval "med=\${$(($# - 4))} worst=\${$(($# - 3))}"
    med=${med%\%}; worst=${worst%\%}
    case $test in
      sizes) goal "$kind $n ranks, held-out sizes, median" "$med" 10
             goal "$kind $n ranks, held-out sizes, worst" "$worst" 25
             # the worst row that was not an extrapolation (held-out sizes outside the fitted ones)
             ins=$(awk -v n="$n" '$1 == "cv" && $2 == "sizes" && $4 == n {f = 1; next} $1 == "cv" {f = 0}
                   f && /^#   worst of the [0-9]+ held-out rows inside the fitted range/ {print $(NF - 1); exit}' \
                   "$OUT/calibrate-$k.txt")
             [ -n "$ins" ] && say "# $kind $n ranks, held-out sizes, worst inside the fitted range (no goal): $ins%"
             # the same rows measured twice (odd against even cycles): the floor under a single row's error
             rep=$(grep -m1 "^#   repeatability of the $n ranks' rows" "$OUT/calibrate-$k.txt")
             [ -n "$rep" ] && say "# $kind $n ranks, repeatability (no goal): $(echo "$rep" | sed 's/^#   repeatability of the [0-9]* ranks. rows //')" ;;
      ranks) goal "$kind, held-out rank count ($n), median" "$med" 15 ;;
      algorithm) say "# (no goal) $kind held-out algorithm: median $med%, worst $worst%" ;;
    esac
  done < "$OUT/cv-$k.txt"
done
if [ "$mode" = gpu ]; then
  export NCCL_NVLS_ENABLE=0 CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
  for n in 2 4 8; do
    for k in $kinds; do
      [ -f "$OUT/cal-$k.json" ] || continue
      if [ $k = virtual ]; then args=(-g $n -b 8 -e 1G); else args=(--host $n -b 8 -e 64M); fi
      v="$OUT/validate-$k-$n.txt"
      timeout -k 5 300 "$B/bin/topo-exec" --no-progress "${args[@]}" -f "${MT_FACTOR:-2}" -n 20 -w 3 --validate \
        --validate-rounds "${MT_ROUNDS:-3}" --calibration "$OUT/cal-$k.json" > "$v" 2>&1
      line=$(grep -E '^# [0-9]+ size\(s\) judged' "$v")
      say "# validate $k $n ranks: ${line:-no verdict (exit $?)}"
      pct=$(echo "$line" | awk '{j=$2; r=$5; w=$7; if (j > 0) printf "%.1f", 100 - 100 * (r + w) / j; else print 100}')
      goal "$k $n ranks, table from the calibrated model: sizes neither right nor within 5%" "$pct" 10
    done
  done
fi
say "# done $(date -u '+%H:%M:%S UTC'): $([ $missed = 0 ] && echo 'every goal MET' || echo 'some goals MISSED')"
exit $missed
