#!/usr/bin/env bash
# same-outputs-gpu.sh - same-outputs.sh for topo-exec's GPU mode, on a machine with a GPU: runs one
# fixed set of GPU commands with two builds and compares rc, stdout, stderr and -J files (decimals,
# pids, times masked).  Exit 0 when every command matches.
#
#   scripts/dev/same-outputs-gpu.sh OLD_BIN_DIR NEW_BIN_DIR [WORK_DIR]
#
# (TOPOTUNE_GPU_TEST_STALL_RANK is a test hook since issue #31: the old build honours it, the new
# one ignores it, so that command is expected to differ.)
OLD=$(cd "${1:?usage: same-outputs-gpu.sh OLD_BIN_DIR NEW_BIN_DIR [WORK_DIR]}" && pwd)
NEW=$(cd "${2:?usage: same-outputs-gpu.sh OLD_BIN_DIR NEW_BIN_DIR [WORK_DIR]}" && pwd)
W=${3:-$(mktemp -d /tmp/same-outputs-gpu.XXXXXX)}
cd "$(dirname "$0")/../.."
mkdir -p $W/old $W/new
"$NEW/topo-tune" -i tests/fixtures/pcie-4gpu.xml -f json -o $W/table.json >/dev/null
"$NEW/topo-tune" -i tests/fixtures/hgx-h100-8gpu.xml -f json -o $W/table8.json >/dev/null
n=0; bad=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  n=$((n+1))
  for v in old new; do
    bin=$OLD; [ $v = new ] && bin=$NEW
    cmd=${line//@/$bin}; cmd=${cmd//%/$W/$v/j$n}; cmd=${cmd//TABLE4/$W/table.json}; cmd=${cmd//TABLE8/$W/table8.json}
    ( timeout 120 bash -c "$cmd" >$W/$v/$n.out 2>$W/$v/$n.err; echo $? >$W/$v/$n.rc )
    for f in $W/$v/$n.out $W/$v/$n.err $W/$v/j$n.json; do
      [ -f $f ] || continue
      sed -i -E -e "s#$bin#@#g" -e "s#$W/$v/#%#g" -e 's/[0-9]+\.[0-9]+(e[-+]?[0-9]+)?/#/g' -e 's/Pid +[0-9]+/Pid P/g' -e 's/"pid":\s*[0-9]+/"pid": P/' \
        -e 's/"(start_time|end_time)":\s*"[^"]*"/"\1": "M"/g' -e 's/ +/ /g' -e 's/port [0-9]+/port N/g' $f
    done
  done
  d=0
  for k in rc out err; do cmp -s $W/old/$n.$k $W/new/$n.$k || d=1; done
  [ -f $W/old/j$n.json ] && { cmp -s $W/old/j$n.json $W/new/j$n.json || d=1; }
  if [ $d = 1 ]; then bad=$((bad+1)); echo "DIFF: $line"; for k in rc out err; do diff $W/old/$n.$k $W/new/$n.$k | head -6; done; [ -f $W/old/j$n.json ] && diff $W/old/j$n.json $W/new/j$n.json | head -6
  else echo "same (rc $(cat $W/new/$n.rc)): $line"; fi
done <<'CMDS'
@/topo-exec -g 1 -b 1K -e 64K -f 4 -n 2 -w 1
@/topo-exec -g 2 -b 1K -e 64K -f 4 -n 2 -w 1 -t all_gather -J %.json
@/topo-exec -g 2 --algo ring --proto ll -b 1K -e 16K -f 4 -n 2 -w 1 -T 5 -J %.json
@/topo-exec -g 2 --predict tests/fixtures/pcie-4gpu.xml -b 1K -e 16K -f 4 -n 2 -w 1
@/topo-exec -g 1 --table TABLE4 -b 1K -e 1M -f 8 -n 2 -w 1
@/topo-exec -g 2 --table TABLE8 -b 1K -e 1M -f 8 -n 2 -w 1 -t reduce_scatter
@/topo-exec
@/all_reduce_perf -b 1K -e 64K -f 4 -n 2 -w 1 -J %.json
@/all_gather_perf -b 1K -e 64K -f 4 -n 2 -w 1 -g 2 --topotune
@/topo-exec --gpu-copy-bench 1M -n 3
@/topo-exec -g 2 --engine nccl -b 1K -e 4K -n 2
@/topo-exec -g 1 --engine nccl -b 1K -e 4K -n 2 --algo tree
@/topo-exec -g 2 -t broadcast -r 3
@/topo-exec -g 2 -t broadcast -r 1 -b 1K -e 4K -n 2
@/topo-exec -g 2 --channels 2 -b 1K -e 4K -n 2 -d half -o max
@/topo-exec -g 2 --gpu-transport host -b 1K -e 4K -n 2
@/topo-exec -g 1 --rank 0 --nranks 1 --master 127.0.0.1:29555 -b 1K -e 4K -n 2 -J %.json
TOPOTUNE_GPU_TEST_STALL_RANK=1 TOPOTUNE_TIMEOUT_MS=3000 @/topo-exec -g 2 -b 1K -e 4K -n 2
@/topo-exec --validate -g 1 -b 1K -e 64K -f 4 -n 2
@/topo-exec --validate -g 2 -b 1K -e 64K -f 4 -n 2 -J %.json
@/topo-exec -g 2 --check-max 2K -b 1K -e 8K -f 2 -n 2
@/topo-exec --ngpus=2 --no-progress -b 1K -e 4K -n 2
CMDS
echo "same-outputs-gpu: $((n-bad)) of $n commands identical; work dir $W"
[ $bad = 0 ]
