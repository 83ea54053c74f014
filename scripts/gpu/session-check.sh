#!/usr/bin/env bash
# session-check.sh - one device call after a day's merges: the GPU regression, the net transport and
# LL128 checks, and the host-rank + LL128 virtual-rank model-truth collection; writes only summaries
# and archives to $OUT (the device returns a limited number of files per call).
#   GPU machine, build carried (scripts/gpu/devcarry.sh):  OUT=dir bash scripts/gpu/session-check.sh
# Parts (PARTS, default all, in this order): regress net ll128 host ll128-sweeps
set -u
cd "$(dirname "$0")/../.."
export BUILD=${BUILD:-.devcarry/build} GTESTS=${GTESTS:-.devcarry/gtests}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-session.XXXXXX")}
PARTS=${PARTS:-regress net ll128 host ll128-sweeps}
W=$(mktemp -d)
mkdir -p "$OUT"
[ -d .devcarry/lib ] && export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
summary="$OUT/summary.txt"
: > "$summary"
. scripts/gpu/gpu-lib.sh
say "# session-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') $(hostname); parts: $PARTS"
for part in $PARTS; do
  case $part in
    regress) OUT=$W/regress timeout 240 bash scripts/gpu/gpu-regress.sh > /dev/null 2>&1
             say "== regress rc=$?"; cat "$W/regress/summary.txt" >> "$summary"
             cp "$W/regress/logs.tgz" "$OUT/regress-logs.tgz" 2>/dev/null ;;
    net) OUT=$W/net timeout 120 bash scripts/gpu/gpu-net-check.sh > /dev/null 2>&1
         say "== net rc=$?"; cat "$W/net/summary.txt" >> "$summary" ;;
    ll128) OUT=$W/ll128 PARTS="unit cli validate" BUDGET=${LL128_BUDGET:-110} timeout 150 \
             bash scripts/gpu/gpu-ll128-check.sh > /dev/null 2>&1
           say "== ll128 rc=$?"; cat "$W/ll128/summary.txt" >> "$summary" ;;
    host) OUT=$W/mt BUILD=$BUILD timeout 240 bash scripts/gpu/model-truth-collect.sh host > /dev/null 2>&1
          say "== host collection rc=$?"; cat "$W/mt/summary.txt" >> "$summary" ;;
    ll128-sweeps)
      mkdir -p "$W/mt"
      for n in 2 4 8; do
        for a in ring tree; do
          timeout 60 "$BUILD/bin/topo-exec" --no-progress -g $n --algo $a --proto ll128 -b 8 -e 1G -f 2 -n 20 -w 5 -c 1 \
            > "$W/mt/virtual-$n-$a-ll128.txt" 2>&1
          say "== virtual-$n-$a-ll128: rc=$?"
        done
      done ;;
    *) say "unknown part $part" ;;
  esac
done
[ -d "$W/mt" ] && (cd "$W/mt" && tar czf "$OUT/model-truth-data.tgz" ./*.txt)
say "# done $(date -u '+%H:%M:%S UTC')"
rm -rf "$W"
