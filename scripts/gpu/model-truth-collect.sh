#!/usr/bin/env bash
# model-truth-collect.sh - the measurements the model-truth benchmark is fitted and judged on, in one
# command on the GPU machine (build carried: scripts/gpu/devcarry.sh, scripts/README.md):
#   BUILD=.devcarry/build OUT=dir bash scripts/gpu/model-truth-collect.sh [virtual|host|all]
# Every forced candidate and the default plan, at every power of two, so that held-out sizes, held-out
# rank counts and held-out algorithms can all be cut from the same sweeps offline:
#   virtual ranks on one GPU: 2, 4, 8 ranks x {ring, tree} x {ll, simple} + default, 8 B .. 1 GiB
#   host ranks (threads):     2, 4, 8 ranks x {ring, tree, halving-doubling, recursive-doubling,
#                             hierarchical} + default,
#                             8 B .. 64 MiB
# CYCLES=N (default 1) runs each host sweep N times in one process (topo-exec --cycles): the readers
# keep every row and topo-tune --calibrate takes the median per size of a sweep's repeated rows.
# The machine's CPU and cache facts (lscpu, sysfs cache sizes) go into summary.txt.
# Output: $OUT/<kind>-<n>-<algo>-<proto>.txt (topo-exec's nccl-tests-style text, which the
# measurement readers take), $OUT/summary.txt, and $OUT/model-truth-data.tgz with all of them.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-.devcarry/build}
OUT=${OUT:-/tmp/topotune-model-truth}
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
sweep() { # NAME TIMEOUT ARGS...
  local name=$1 to=$2; shift 2
  step "$name" "$to" "$B/bin/topo-exec" --no-progress "$@"
  cp "$OUT/$name.log" "$OUT/$name.txt"
}
if [ "$what" = all ] || [ "$what" = virtual ]; then
  for n in 2 4 8; do
    for a in ring tree; do
      for p in ll simple; do
        sweep "virtual-$n-$a-$p" 180 -g $n --algo $a --proto $p -b 8 -e 1G -f 2 -n 20 -w 5 -c 1
      done
    done
    sweep "virtual-$n-default-default" 180 -g $n -b 8 -e 1G -f 2 -n 20 -w 5 -c 1
  done
fi
if [ "$what" = all ] || [ "$what" = host ]; then
  for n in 2 4 8; do
    for a in ring tree halving-doubling recursive-doubling hierarchical; do
      sweep "host-$n-$a-simple" 300 --host $n --algo $a -b 8 -e 64M -f 2 -n 20 -w 3 -c 1 --cycles "$cyc"
    done
    sweep "host-$n-default-default" 300 --host $n -b 8 -e 64M -f 2 -n 20 -w 3 -c 1 --cycles "$cyc"
  done
fi
say "# done $(date -u '+%H:%M:%S UTC')"
(cd "$OUT" && tar czf model-truth-data.tgz ./*.txt)
