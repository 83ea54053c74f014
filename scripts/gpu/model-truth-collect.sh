#!/usr/bin/env bash
# model-truth-collect.sh - the measurements the model-truth benchmark is fitted and judged on, in one
# command on the GPU machine (build carried: scripts/gpu/devcarry.sh, scripts/README.md):
#   BUILD=.devcarry/build OUT=dir bash scripts/gpu/model-truth-collect.sh [virtual|host|all]
# Every forced candidate and the default plan, at every power of two, so that held-out sizes, held-out
# rank counts and held-out algorithms can all be cut from the same sweeps offline:
#   virtual ranks on one GPU: 2, 4, 8 ranks x {ring, tree} x {ll, ll128, simple} + default, 8 B .. 1 GiB
#   host ranks (threads):     2, 4, 8 ranks x {ring, tree, halving-doubling, recursive-doubling,
#                             hierarchical} + default,
#                             8 B .. 64 MiB
# CYCLES=N (default 1) runs the host sweeps N times over, interleaved (every sweep once, then every sweep
# again, ...), each cycle's table appended to the sweep's file: the readers keep one row per size of a
# file, the fastest of its cycles, so a sweep that met a busy moment of the machine does not bias the
# comparison between algorithms (the 2026-12-02 06:49 collection ran its cycles back to back inside
# one process, --cycles, and the first sweep of each rank count came out 10-25 % slower than the same
# schedule measured minutes later).
# The machine's CPU and cache facts (lscpu, sysfs cache sizes) go into summary.txt.
# Output: $OUT/<kind>-<n>-<algo>-<proto>.txt (topo-exec's nccl-tests-style text, which the
# measurement readers take), $OUT/summary.txt, and $OUT/model-truth-data.tgz with all of them.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-.devcarry/build}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-model-truth.XXXXXX")}
what=${1:-all}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
[ -d .devcarry/lib ] && export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
summary="$OUT/summary.txt"
. scripts/gpu/gpu-lib.sh
say "# model-truth-collect $(date -u '+%Y-%m-%d %H:%M UTC') $(hostname) $(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
cyc=${CYCLES:-1}
say "# cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1); $(lscpu 2>/dev/null | grep -E '^(L1d|L2|L3) cache' | tr -s ' ' | tr '\n' ';')"
for c in /sys/devices/system/cpu/cpu0/cache/index*; do
  [ -r "$c/size" ] && say "# cache: level $(cat "$c/level") $(cat "$c/type") $(cat "$c/size") shared by cpus $(cat "$c/shared_cpu_list" 2>/dev/null)"
done
c=1
sweep() { # NAME TIMEOUT ARGS...   (cycle $c > 1: the table is appended to NAME.txt)
  local name=$1 to=$2; shift 2
  step "$name.c$c" "$to" "$B/bin/topo-exec" --no-progress "$@"
  if [ "$c" -gt 1 ]; then cat "$OUT/$name.c$c.log" >> "$OUT/$name.txt"; else cp "$OUT/$name.c$c.log" "$OUT/$name.txt"; fi
  rm -f "$OUT/$name.c$c.log"
}
if [ "$what" = all ] || [ "$what" = virtual ]; then
  for n in 2 4 8; do
    for a in ring tree; do
      for p in ll ll128 simple; do
        sweep "virtual-$n-$a-$p" 180 -g $n --algo $a --proto $p -b 8 -e 1G -f 2 -n 20 -w 5 -c 1
      done
    done
    sweep "virtual-$n-default-default" 180 -g $n -b 8 -e 1G -f 2 -n 20 -w 5 -c 1
  done
fi
if [ "$what" = all ] || [ "$what" = host ]; then
  for c in $(seq 1 "$cyc"); do
    for n in 2 4 8; do
      for a in ring tree halving-doubling recursive-doubling hierarchical; do
        sweep "host-$n-$a-simple" 180 --host $n --algo $a -b 8 -e 64M -f 2 -n 20 -w 3 -c 1
      done
      sweep "host-$n-default-default" 180 --host $n -b 8 -e 64M -f 2 -n 20 -w 3 -c 1
    done
  done
fi
say "# done $(date -u '+%H:%M:%S UTC')"
(cd "$OUT" && tar czf model-truth-data.tgz ./*.txt)
