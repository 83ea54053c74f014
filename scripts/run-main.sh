#!/usr/bin/env bash
# The main job: scan this machine (or fall back to a bundled example topology when the scan finds no GPU),
# show and check the topology, compute a tuning table, and run a validated AllReduce sweep (GPUs when
# present, CPU executor otherwise).  Outputs go to $BUILD/run/.
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.."
B="$BUILD/bin"
R="$BUILD/run"
mkdir -p "$R"
EXAMPLE=tests/fixtures/hgx-h100-8gpu.xml
status=0
step() { printf '\n=== %s\n' "$*"; }

step "1. topology"
topo="$R/topology.xml"
if [ -x "$B/topo-dump" ] && "$B/topo-dump" --format native -o "$topo" 2>"$R/scan.log" \
   && grep -q '<gpu' "$topo"; then
  echo "live scan of $(hostname): $topo"
  live=1
else
  if [ -s "$R/scan.log" ]; then sed 's/^/  scan: /' "$R/scan.log" | head -20; fi
  echo "no GPU found by the live scan: using the bundled example topology $EXAMPLE (8x H100, NVSwitch, 8 NICs)"
  "$B/topo-dump" --input "$EXAMPLE" --format native -o "$topo" || status=1
fi
"$B/topo-dump" --input "$topo" --format matrix || status=1
"$B/topo-dump" --input "$topo" --format nccl -o "$R/topology-nccl.xml" && echo "NCCL_TOPO_FILE=$R/topology-nccl.xml"
"$B/topo-dump" --input "$topo" --validate >/dev/null 2>"$R/validate.txt"; rc=$?
echo "validation: exit $rc (0 clean, 1 warnings, 2 errors) - details in $R/validate.txt"

step "2. tuning table"
if [ -x "$B/topo-tune" ]; then
  "$B/topo-tune" --input "$topo" --format table || status=1
  "$B/topo-tune" --input "$topo" --format json -o "$R/tuning.json" && echo "JSON table: $R/tuning.json"
  "$B/topo-tune" --input "$topo" --format nccl-csv -o "$R/tuning.csv" && echo "NCCL tuner CSV: $R/tuning.csv"
else
  echo "topo-tune is not built in this version"
fi

step "3. executor"
if [ -x "$B/topo-exec" ]; then
  ngpu=0
  if [ "${live:-0}" = 1 ]; then ngpu=$(grep -c '<gpu ' "$topo"); fi
  if [ "$ngpu" -gt 0 ] && [ -s "$R/tuning.json" ] && "$B/topo-exec" -g "$ngpu" -b 8 -e 8 -n 1 -w 0 -c 0 >/dev/null 2>&1; then
    echo "GPU ranks, one per GPU, plans per size from the tuning table $R/tuning.json:"
    "$B/topo-exec" -g "$ngpu" -b 8 -e 64M -f 8 -n 20 -w 5 -c 1 --table "$R/tuning.json" || status=1
  else
    "$B/topo-exec" || status=1   # no arguments: this machine's GPUs if usable, else 4 host ranks
  fi
else
  echo "topo-exec is not built in this version"
fi
exit $status
