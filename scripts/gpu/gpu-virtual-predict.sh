#!/usr/bin/env bash
# gpu-virtual-predict.sh - virtual ranks on ONE GPU: measured against predicted time per size,
# one command on a GPU machine with the build carried (scripts/README.md):
#   BUILD=.devcarry/build OUT=dir bash scripts/gpu/gpu-virtual-predict.sh
# 1. fit sweeps: 2, 4, 8 virtual ranks, ring/tree x ll/simple forced, 8 B .. 1 GiB (x4)
# 2. topo-tune --calibrate on them, one fit per rank count (topology: the bundled 8-GPU NVSwitch
#    fixture stands in for "ranks joined by one link class"; on one GPU that class is the GPU's
#    own memory, shared by all its ranks)
# 3. held-out sweeps at the sizes in between (16 B .. 512 MiB, x4) with the default plan and
#    --predict/--calibration: per-size pred/err% columns and the median/worst error line
set -u
B=${BUILD:-.devcarry/build}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-vpred.XXXXXX")}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
TOPO=tests/fixtures/hgx-h100-8gpu.xml
S="$OUT/summary.txt"
: > "$S"
say() { echo "$*" | tee -a "$S"; }
say "# gpu-virtual-predict $(date -u '+%Y-%m-%d %H:%M UTC') $(hostname), CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
fits=()
for n in 2 4 8; do
  for a in ring tree; do
    for p in ll simple; do
      f="$OUT/fit-$n-$a-$p.txt"
      timeout -k 5 120 "$B/bin/topo-exec" -g $n --algo $a --proto $p -b 8 -e 1G -f 4 -n 20 -w 5 --check-max 64M \
        > "$f" 2>&1
      say "fit $n ranks $a/$p: exit $? ($(grep -c '^ *[0-9]' "$f") sizes)"
      fits+=("$f")
    done
  done
done
# One calibration per rank count: virtual ranks share one GPU's memory and SMs, so the bandwidth
# a rank gets falls with the rank count, which no topology link class describes (a model limit,
# docs/benchmarks.md); each rank count is therefore its own "machine" for the fit.
for n in 2 4 8; do
  timeout 60 "$B/bin/topo-tune" --calibrate "$OUT"/fit-$n-*.txt --input "$TOPO" -o "$OUT/cal-virtual-$n.json" \
    > "$OUT/calibrate-$n.txt" 2>&1
  say "calibrate $n ranks: exit $?; $(grep -E '^# error' "$OUT/calibrate-$n.txt")"
  h="$OUT/held-$n.txt"
  timeout -k 5 120 "$B/bin/topo-exec" -g $n -b 16 -e 512M -f 4 -n 20 -w 5 --check-max 64M \
    --predict "$TOPO" --calibration "$OUT/cal-virtual-$n.json" > "$h" 2>&1
  say "held-out $n virtual ranks, default plan: exit $?"
  grep -E '^ *[0-9]|Prediction error|VIRTUAL' "$h" | tee -a "$S"
done
say "# done $(date -u '+%H:%M:%S UTC')"
