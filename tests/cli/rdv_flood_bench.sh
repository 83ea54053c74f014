#!/usr/bin/env bash
# rdv_flood_bench.sh [IDLE...]: how long a 4-rank --master job takes with IDLE connections that send nothing
# (dialled again whenever rank 0 drops them, rdv_flood.py) on its rendezvous port: rank 0 starts, the flood
# connects, then ranks 1-3 start; the time is from their start until all 4 exit (-b 1K -e 1K -n 1 -w 0: the
# rendezvous is most of it).  RUNS (default 5) runs per count: the median and the failures.  BUILD=dir picks the build.
# Figures in docs/reliability.md ("Rendezvous").
set -u
: "${BUILD:=build}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case "$BUILD" in /*) X="$BUILD/bin/topo-exec" ;; *) X="$ROOT/$BUILD/bin/topo-exec" ;; esac
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
[ $# -gt 0 ] || set -- 0 120 500
for idle in "$@"; do
  times=() fails=0
  for run in $(seq ${RUNS:-5}); do
    port=$(( 20000 + RANDOM % 12000 ))
    TOPOTUNE_JOB_ID=bench "$X" -T 10 --rank 0 --nranks 4 --master 127.0.0.1:$port -b 1K -e 1K -n 1 -w 0 \
      --no-progress >/dev/null 2>"$TMP/r0.err" & pids=($!)
    flood=""
    if [ "$idle" -gt 0 ]; then
      rm -f "$TMP/ready"
      python3 "$ROOT/tests/cli/rdv_flood.py" "$TMP/ready" "$idle" 0 0 $port 2>/dev/null & flood=$!
      for i in $(seq 300); do [ -s "$TMP/ready" ] && break; sleep 0.05; done
      sleep 0.5
    else
      sleep 0.2
    fi
    t0=$(date +%s%N)
    for r in 1 2 3; do
      TOPOTUNE_JOB_ID=bench "$X" -T 10 --rank $r --nranks 4 --master 127.0.0.1:$port -b 1K -e 1K -n 1 -w 0 \
        --no-progress >/dev/null 2>/dev/null & pids+=($!)
    done
    ok=1; for p in "${pids[@]}"; do wait $p || ok=0; done
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    [ -n "$flood" ] && { kill $flood; wait $flood 2>/dev/null; }
    if [ $ok = 1 ]; then times+=($ms); else fails=$((fails + 1)); times+=("${ms}F"); fi
  done
  med=$(printf '%s\n' "${times[@]}" | tr -d F | sort -n | sed -n "$(( (${RUNS:-5} + 1) / 2 ))p")
  echo "idle=$idle runs(ms)=${times[*]} median=${med} ms failed=$fails/${RUNS:-5}"
done
