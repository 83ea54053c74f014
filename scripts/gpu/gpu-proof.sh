#!/usr/bin/env bash
# Run on the GPU machine (device tool) with `.devcarry` carried (scripts/gpu/devcarry.sh made it):
#   bash scripts/gpu/gpu-proof.sh
# Proves, in one command: NCCL loads our NCCL-dialect output as NCCL_TOPO_FILE (a one-process NCCL run
# over all GPUs with NCCL_DEBUG=INFO), and runs the live-scan proof when scripts/gpu/gpu-proof-scan.sh exists.
# Everything is written under $OUT (summary.txt + work.tgz). Each step is time-limited.
set -u
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-proof.XXXXXX")}
W="$OUT/work"; mkdir -p "$W"
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="/usr/local/cuda/bin:$PATH"
B="$PWD/.devcarry/build/bin"
S="$OUT/summary.txt"
say() { echo "$*" | tee -a "$S"; }
say "# topotune GPU proof, $(date -u '+%Y-%m-%d %H:%M UTC'), $(hostname)"
nvidia-smi -L 2>&1 | tee -a "$S"
nvidia-smi topo -m >"$W/nvidia-smi-topo.txt" 2>&1
grep -h 'NCCL_VERSION_CODE\|define NCCL_MAJOR\|define NCCL_MINOR\|define NCCL_PATCH' /usr/include/nccl.h 2>/dev/null | tee -a "$S"

if ! gcc -O2 -I/usr/local/cuda/include tests/gpu/nccl_one_rank.c -L/usr/local/cuda/lib64 -lcudart -lnccl \
     -o "$W/nccl_one_rank" 2>"$W/build-nccl-check.log"; then
  say "FAIL build of tests/gpu/nccl_one_rank.c"; cat "$W/build-nccl-check.log" | tee -a "$S"
fi

# NCCL's own view of this machine, for comparison.
NCCL_TOPO_DUMP_FILE="$W/nccl-dump-baseline.xml" NCCL_DEBUG=INFO timeout 180 "$W/nccl_one_rank" \
  >"$W/nccl-baseline.log" 2>&1
say "baseline NCCL run (no topology file): exit $?"

nccl_with() { # nccl_with NAME FILE: run NCCL with our file, keep its log and its own dump of what it built
  local name=$1 file=$2
  NCCL_TOPO_FILE="$file" NCCL_TOPO_DUMP_FILE="$W/nccl-dump-from-$name.xml" NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT,GRAPH,ENV timeout 180 "$W/nccl_one_rank" >"$W/nccl-with-$name.log" 2>&1
  local rc=$?
  local warns; warns=$(grep -c 'NCCL WARN' "$W/nccl-with-$name.log")
  say "NCCL with NCCL_TOPO_FILE=$name: exit $rc, NCCL WARN lines: $warns"
  grep -E 'NCCL_TOPO_FILE|topology file|XML|all-reduce' "$W/nccl-with-$name.log" | sed 's/^/    /' | head -8 | tee -a "$S"
  grep 'NCCL WARN' "$W/nccl-with-$name.log" | sed 's/^/    /' | head -5 | tee -a "$S"
  if [ $rc -eq 0 ] && [ "$warns" -eq 0 ]; then say "PASS NCCL accepts $name"; else say "FAIL NCCL with $name"; fi
}

# 1. our NCCL-dialect output of NCCL's own dump (fixture from this machine) and of the example server.
"$B/topo-dump" --input tests/fixtures/nccl-dump-h100-vm.xml --format nccl -o "$W/ours-from-fixture.xml" \
  2>"$W/topo-dump-fixture.err" || { say "FAIL topo-dump conversion"; cat "$W/topo-dump-fixture.err" | tee -a "$S"; }
[ -s "$W/ours-from-fixture.xml" ] && nccl_with fixture "$W/ours-from-fixture.xml"
if [ -s "$W/nccl-dump-baseline.xml" ]; then
  "$B/topo-dump" --input "$W/nccl-dump-baseline.xml" --format nccl -o "$W/ours-from-baseline.xml" 2>>"$W/topo-dump-fixture.err" \
    && nccl_with baseline "$W/ours-from-baseline.xml"
fi

# 2. live scan proof, when the scan exists.
if [ -f scripts/gpu/gpu-proof-scan.sh ]; then
  OUT="$W" timeout 400 bash scripts/gpu/gpu-proof-scan.sh >"$W/scan-proof.log" 2>&1
  say "scan proof: exit $?"; grep -E '^(PASS|FAIL|SKIP|TIME|RATIO)' "$W/scan-proof.log" | tee -a "$S"
  [ -s "$W/scan-nccl.xml" ] && nccl_with livescan "$W/scan-nccl.xml"
fi
# 3. NCCL loads our tuner plugin and its table for this machine.
PLUGIN="$PWD/.devcarry/build/lib/libnccl-tuner-topotune.so"
if [ -f "$PLUGIN" ]; then
  topo_for_table="$W/scan-native.xml"; [ -s "$topo_for_table" ] || topo_for_table=tests/fixtures/nccl-dump-h100-vm.xml
  "$B/topo-tune" --input "$topo_for_table" --nccl-only --format json -o "$W/tuning-table.json" 2>"$W/topo-tune.err" \
    || { say "FAIL topo-tune table for this machine"; head -5 "$W/topo-tune.err" | tee -a "$S"; }
  NCCL_TUNER_PLUGIN="$PLUGIN" TOPOTUNE_TUNER_TABLE="$W/tuning-table.json" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV \
    timeout 180 "$W/nccl_one_rank" >"$W/nccl-with-tuner.log" 2>&1
  rc=$?
  say "NCCL with our tuner plugin: exit $rc"
  grep -iE 'tuner|topotune' "$W/nccl-with-tuner.log" | sed 's/^/    /' | head -12 | tee -a "$S"
  if [ $rc -eq 0 ] && grep -qi 'topotune' "$W/nccl-with-tuner.log"; then say "PASS NCCL loaded the topotune tuner plugin"; else say "FAIL tuner plugin not seen in NCCL's log"; fi
fi
[ -f scripts/gpu/gpu-extra.sh ] && { timeout 300 bash scripts/gpu/gpu-extra.sh "$W" >"$W/extra.log" 2>&1; say "extra: exit $?"; tail -40 "$W/extra.log" >>"$S"; }
tar czf "$OUT/work.tgz" -C "$OUT" work && rm -rf "$W"
say "# done"
