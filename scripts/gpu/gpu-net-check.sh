#!/usr/bin/env bash
# gpu-net-check.sh - the GPU executor's net transport on a GPU machine, in one
# command (about 2-3 minutes on one GPU): two (and three) processes on one GPU
# forced onto the net transport (TOPOTUNE_GPU_TRANSPORT=net; the proxies' host
# connections over TCP loopback: TOPOTUNE_TRANSPORT=tcp):
#   1. the net unit tests of test_exec_gpu_ipc (AllReduce sweeps bit-exact,
#      ring and tree, simple and ll; killed peer named; stuck rank stops all)
#   2. a topo-exec pair over net and the same sweep over IPC in the same run
#      (busbw of both, ratio per size), results checked (#wrong)
#   3. the other collectives over net (all_gather, reduce_scatter, broadcast,
#      reduce) with #wrong
#   4. a killed peer in a topo-exec pair: the survivor names it within the deadline
#   5. nothing left in /dev/shm
#   6. mixed: 4 processes on 2 emulated hosts (TOPOTUNE_GPU_EMULATE_HOSTS=2): IPC inside each, net
#      between, in one communicator; the mixed unit tests (sweeps exact, killed peer, stuck rank), the
#      per-pair transport lines, the same topo-exec sweep mixed, all-IPC and all-net in one run (busbw
#      of each, ratios), the other collectives mixed (#wrong)
#   7. hierarchical AllReduce (--algo hierarchical): its unit tests (ring / tree inside, simple / ll,
#      odd counts, every op incl. avg, a killed peer named by every survivor), the plan's groups logged,
#      then in one run the same topo-exec sweep hierarchical, flat mixed, all-IPC and all-net (4 processes,
#      2 emulated hosts; busbw of each, ratios; #wrong 0 for every one); its stuck-rank unit test
#   8. GPU processes in two network namespaces with their own host names (root only; without `ip`:
#      UTS namespaces only, their own host names over loopback; SKIP otherwise): flat and hierarchical
#      AllReduce exact, pairs across on NET/tcp because the hosts differ (no emulation)
# Usage (binaries built elsewhere and carried, scripts/gpu/devcarry.sh):
#   BUILD=.devcarry/build GTESTS=.devcarry/gtests OUT=results-dir bash scripts/gpu/gpu-net-check.sh
# (UNIT_TIMEOUT, PAIR_TIMEOUT: seconds of the unit tests and of each topo-exec pair;
#  ONLY=mixed: step 6 and the /dev/shm check only; ONLY=hier: step 7 and the /dev/shm check only;
#  ONLY=netns: step 8 (GPU processes in two network namespaces) and the /dev/shm check only;
#  ONLY=net: steps 1-5 only)
# Prints PASS/FAIL lines; exit 0 when every check passed.
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-gpu-net-results}
GT=${GTESTS:-$BUILD/tests}
[ -d .devcarry/lib ] && export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
TE="$BUILD/bin/topo-exec"
summary="$OUT/summary.txt"
: > "$summary"
. "$(dirname "$0")/gpu-lib.sh"   # say, step
fails=0
pass() { say "PASS $*"; }
fail() { say "FAIL $*"; fails=$((fails + 1)); }
say "# gpu-net-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname)"
nvidia-smi -L 2>&1 | tee -a "$summary"
shm_before=$(ls /dev/shm 2>/dev/null | grep -c topotune)
ONLY=${ONLY:-all}
want() { [ "$ONLY" = all ] || [ "$ONLY" = "$1" ]; }

# pair NAME TRANSPORT EXTRA...: a topo-exec pair on one GPU, rank 0's output in $OUT/NAME-rank0.log
pair() {
  local name=$1 tp=$2; shift 2
  local port=$(( 20000 + (RANDOM % 20000) ))
  TOPOTUNE_TRANSPORT=tcp TOPOTUNE_DEBUG=INFO timeout ${PAIR_TIMEOUT:-30} "$TE" -g 1 --gpu-transport "$tp" --rank 1 --nranks 2 \
    --master 127.0.0.1:$port "$@" > "$OUT/$name-rank1.log" 2>&1 &
  local p1=$!
  TOPOTUNE_TRANSPORT=tcp TOPOTUNE_DEBUG=INFO step "$name-rank0" ${PAIR_TIMEOUT:-30} "$TE" -g 1 --gpu-transport "$tp" --rank 0 \
    --nranks 2 --master 127.0.0.1:$port "$@"
  local r0=$?
  wait $p1
  local r1=$?
  say "== $name: rank0 rc=$r0 rank1 rc=$r1"
  [ $r0 -eq 0 ] && [ $r1 -eq 0 ]
}
# rows: size busbw #wrong of an nccl-tests style table (out-of-place columns)
rows() { grep -E '^ +[0-9]+ +[0-9]+ ' "$1" | awk '{print $1, $8, $9}'; }
wrong_ok() { local w; w=$(grep -E '^ +[0-9]+ +[0-9]+ ' "$1" | awk '{s += $9 + $13} END {print s + 0}'); [ "$w" = 0 ]; }

# group NAME N "VAR=VALUE ..." ARGS...: N topo-exec processes on one GPU (proxies over TCP loopback),
# rank R's output in $OUT/NAME-rankR.log; 0 when every process exited 0
group() {
  local name=$1 n=$2 envs=$3; shift 3
  local port=$(( 20000 + (RANDOM % 20000) )) pids=() r rc=0
  for r in $(seq 1 $((n - 1))); do
    env TOPOTUNE_TRANSPORT=tcp TOPOTUNE_DEBUG=INFO $envs timeout ${PAIR_TIMEOUT:-30} "$TE" -g 1 --rank $r --nranks $n \
      --master 127.0.0.1:$port "$@" > "$OUT/$name-rank$r.log" 2>&1 &
    pids+=($!)
  done
  ( for v in $envs; do export "$v"; done; export TOPOTUNE_TRANSPORT=tcp TOPOTUNE_DEBUG=INFO
    step "$name-rank0" ${PAIR_TIMEOUT:-30} "$TE" -g 1 --rank 0 --nranks $n --master 127.0.0.1:$port "$@" ) || rc=1
  for r in "${!pids[@]}"; do wait "${pids[$r]}" || rc=1; done
  say "== $name: $n processes, rc=$rc"
  return $rc
}

if want net; then
# 2. AllReduce over net and over IPC, same sweep, same run
SWEEP="-b 8 -e 64M -f 8 -n 5 -w 1"
if pair ar-net net $SWEEP && wrong_ok "$OUT/ar-net-rank0.log"; then pass "all_reduce over net: #wrong 0"
else fail "all_reduce over net"; fi
grep -E ' via ' "$OUT/ar-net-rank0.log" "$OUT/ar-net-rank1.log" | head -6 | tee -a "$summary"
grep -qE 'via NET/tcp' "$OUT/ar-net-rank0.log" && pass "transport logged: NET/tcp" || fail "no 'via NET/tcp' line"
if pair ar-ipc auto $SWEEP && wrong_ok "$OUT/ar-ipc-rank0.log"; then pass "all_reduce over IPC: #wrong 0"
else fail "all_reduce over IPC"; fi
grep -hE '^ +[0-9]+ +[0-9]+ ' "$OUT/ar-net-rank0.log" | head -12 | tee -a "$summary"
say "# size(B)  busbw net (GB/s)  busbw IPC (GB/s)  net/IPC"
join <(rows "$OUT/ar-net-rank0.log" | awk '{print $1, $2}') <(rows "$OUT/ar-ipc-rank0.log" | awk '{print $1, $2}') |
  awk '{printf "%10s %12s %12s %8s\n", $1, $2, $3, ($3 > 0 ? sprintf("%.2f", $2 / $3) : "-")}' | tee -a "$summary"

# 3. killed peer: rank 1 is killed during a long sweep; rank 0 must fail naming rank 1 within the deadline
port=$(( 20000 + (RANDOM % 20000) ))
TOPOTUNE_TRANSPORT=tcp "$TE" -g 1 --gpu-transport net --rank 1 --nranks 2 --master 127.0.0.1:$port \
  -b 64M -e 64M -n 100000 -w 0 -c 0 -T 5 > "$OUT/kill-rank1.log" 2>&1 &
p1=$!
t0=$(date +%s.%N)
TOPOTUNE_TRANSPORT=tcp timeout 25 "$TE" -g 1 --gpu-transport net --rank 0 --nranks 2 --master 127.0.0.1:$port \
  -b 64M -e 64M -n 100000 -w 0 -c 0 -T 5 > "$OUT/kill-rank0.log" 2>&1 &
p0=$!
sleep 6
kill -9 $p1
tk=$(date +%s.%N)
wait $p0
r0=$?
t1=$(date +%s.%N)
wait $p1 2>/dev/null
kill -9 $p0 2>/dev/null
el=$(awk "BEGIN{printf \"%.2f\", $t1 - $tk}")
grep -iE 'rank 1|error|fail' "$OUT/kill-rank0.log" | head -3 | tee -a "$summary"
if [ $r0 -ne 0 ] && [ $r0 -ne 124 ] && grep -q 'rank 1' "$OUT/kill-rank0.log"; then
  pass "killed peer named by the survivor (exit $r0) ${el} s after the kill (deadline 5 s)"
else fail "killed peer: survivor exit $r0 after ${el} s"; fi

# 4. unit tests (net only)
TT_GPU_TEST_FILTER='*net*' step net-unit ${UNIT_TIMEOUT:-70} "$GT/test_exec_gpu_ipc"
rc=$?
grep -E '^# |OK|PASSED|FAILED|SKIPPED|ERROR' "$OUT/net-unit.log" | head -40 | tee -a "$summary"
if [ $rc -eq 0 ] && grep -q 'PASSED  \] 4 test' "$OUT/net-unit.log"; then pass "net unit tests (4)"
else fail "net unit tests (rc $rc)"; fi

# 5. the other collectives over net
for t in all_gather reduce_scatter broadcast reduce; do
  if pair "$t-net" net -t $t -b 8 -e 4M -f 16 -n 3 -w 1 && wrong_ok "$OUT/$t-net-rank0.log"; then
    pass "$t over net: #wrong 0"
  else fail "$t over net"; fi
done
grep -hE '^ +[0-9]+ +[0-9]+ ' "$OUT/all_gather-net-rank0.log" | tail -2 | tee -a "$summary"
fi

# 6. mixed: IPC inside an emulated host, net between them, in one communicator
if want mixed; then
TT_GPU_TEST_FILTER='*mixed*' step mixed-unit ${UNIT_TIMEOUT:-90} "$GT/test_exec_gpu_ipc"
rc=$?
grep -E '^# |OK|PASSED|FAILED|SKIPPED|ERROR' "$OUT/mixed-unit.log" | head -40 | tee -a "$summary"
if [ $rc -eq 0 ] && grep -q 'PASSED  \] 3 test' "$OUT/mixed-unit.log"; then pass "mixed unit tests (3)"
else fail "mixed unit tests (rc $rc)"; fi
MSWEEP="-b 8 -e 16M -f 8 -n 5 -w 1"
EMU="TOPOTUNE_GPU_EMULATE_HOSTS=2"
if group ar-mixed 4 "$EMU" $MSWEEP && wrong_ok "$OUT/ar-mixed-rank0.log"; then pass "all_reduce mixed (4 processes, 2 emulated hosts): #wrong 0"
else fail "all_reduce mixed"; fi
grep -hE ' via ' "$OUT"/ar-mixed-rank[0-3].log | sed 's/.*INFO gpu: //' | sort -u | head -12 | tee -a "$summary"
nipc=$(grep -hE 'rank [0-3] -> [0-3] via IPC' "$OUT"/ar-mixed-rank[0-3].log | grep -c 'same host')
nnet=$(grep -hE 'rank [0-3] -> [0-3] via NET/tcp' "$OUT"/ar-mixed-rank[0-3].log | grep -c 'hosts differ: emulated host')
if [ "$nipc" -ge 1 ] && [ "$nnet" -ge 1 ] && ! grep -qhE 'rank (0 -> 1|1 -> 0|2 -> 3|3 -> 2) via NET' "$OUT"/ar-mixed-rank[0-3].log &&
   ! grep -qhE 'rank (0|1) -> (2|3) via IPC|rank (2|3) -> (0|1) via IPC' "$OUT"/ar-mixed-rank[0-3].log; then
  pass "per-pair transport logged: $nipc IPC line(s) (same host), $nnet NET/tcp line(s) (hosts differ)"
else fail "per-pair transport lines: $nipc IPC, $nnet NET (or a pair on the wrong transport)"; fi
grep -h '^# process ranks on GPUs' "$OUT/ar-mixed-rank0.log" | tee -a "$summary"
grep -q 'mixed: CUDA IPC inside a host, net transport between hosts; 8 of 12 directed pairs on net' "$OUT/ar-mixed-rank0.log" &&
  pass "topo-exec header: mixed, 8 of 12 pairs on net" || fail "topo-exec header does not say mixed (8 of 12 pairs on net)"
if group ar-ipc4 4 "" $MSWEEP && wrong_ok "$OUT/ar-ipc4-rank0.log"; then pass "all_reduce all-IPC (4 processes): #wrong 0"
else fail "all_reduce all-IPC (4 processes)"; fi
if group ar-net4 4 "TOPOTUNE_GPU_TRANSPORT=net" $MSWEEP && wrong_ok "$OUT/ar-net4-rank0.log"; then
  pass "all_reduce all-net (4 processes): #wrong 0"
else fail "all_reduce all-net (4 processes)"; fi
grep -hE '^ +[0-9]+ +[0-9]+ ' "$OUT/ar-mixed-rank0.log" | tee -a "$summary"
say "# 4 processes, AllReduce float sum out of place: busbw (GB/s) mixed, all-IPC, all-net; ratios"
say "# size(B)       mixed       IPC       net  mixed/IPC  mixed/net"
join <(rows "$OUT/ar-mixed-rank0.log" | awk '{print $1, $2}') \
     <(join <(rows "$OUT/ar-ipc4-rank0.log" | awk '{print $1, $2}') <(rows "$OUT/ar-net4-rank0.log" | awk '{print $1, $2}')) |
  awk '{printf "%10s %10s %9s %9s %10s %10s\n", $1, $2, $3, $4, ($3 > 0 ? sprintf("%.2f", $2 / $3) : "-"),
        ($4 > 0 ? sprintf("%.2f", $2 / $4) : "-")}' | tee -a "$summary"
for t in all_gather reduce_scatter broadcast reduce; do
  if group "$t-mixed" 4 "$EMU" -t $t -b 8 -e 4M -f 16 -n 3 -w 1 && wrong_ok "$OUT/$t-mixed-rank0.log"; then
    pass "$t mixed: #wrong 0"
  else fail "$t mixed"; fi
done
fi

# 7. hierarchical AllReduce: intra-host ReduceScatter (IPC), inter-host AllReduce (net), intra-host AllGather
if want hier; then
TT_GPU_TEST_FILTER='*hier*' step hier-unit ${HIER_UNIT_TIMEOUT:-400} "$GT/test_exec_gpu_ipc"
rc=$?
grep -E '^# |OK|PASSED|FAILED|SKIPPED|ERROR' "$OUT/hier-unit.log" | head -40 | tee -a "$summary"
if [ $rc -eq 0 ] && grep -q 'PASSED  \] 3 test' "$OUT/hier-unit.log"; then pass "hierarchical unit tests (3: exact, killed peer, stuck rank)"
else fail "hierarchical unit tests (rc $rc)"; fi
HSWEEP="-b 8 -e 16M -f 8 -n 5 -w 1"
HEMU="TOPOTUNE_GPU_EMULATE_HOSTS=2"
if group ar-hier 4 "$HEMU" --algo hierarchical $HSWEEP && wrong_ok "$OUT/ar-hier-rank0.log"; then
  pass "all_reduce hierarchical (4 processes, 2 emulated hosts): #wrong 0"
else fail "all_reduce hierarchical"; fi
grep -h 'hierarchical AllReduce: rank' "$OUT"/ar-hier-rank[0-3].log | sed 's/.*INFO gpu: //' | tee -a "$summary"
[ "$(grep -h 'hierarchical AllReduce: rank [0-3]: 2 host(s) x 2 rank(s)' "$OUT"/ar-hier-rank[0-3].log | wc -l)" -eq 4 ] &&
  pass "plan groups logged by all 4 ranks (2 hosts x 2 ranks)" || fail "plan groups not logged by every rank"
grep -qE 'hierarchical/(simple|ll)/' "$OUT/ar-hier-rank0.log" &&
  pass "rows ran hierarchical (last column)" || fail "no row says hierarchical in its last column"
if group ar-hflat 4 "$HEMU" $HSWEEP && wrong_ok "$OUT/ar-hflat-rank0.log"; then pass "all_reduce flat mixed: #wrong 0"
else fail "all_reduce flat mixed"; fi
if group ar-hipc 4 "" $HSWEEP && wrong_ok "$OUT/ar-hipc-rank0.log"; then pass "all_reduce all-IPC: #wrong 0"
else fail "all_reduce all-IPC"; fi
if group ar-hnet 4 "TOPOTUNE_GPU_TRANSPORT=net" $HSWEEP && wrong_ok "$OUT/ar-hnet-rank0.log"; then
  pass "all_reduce all-net: #wrong 0"
else fail "all_reduce all-net"; fi
grep -hE '^ +[0-9]+ +[0-9]+ ' "$OUT/ar-hier-rank0.log" | tee -a "$summary"
say "# 4 processes, AllReduce float sum out of place: busbw (GB/s) hierarchical, flat mixed, all-IPC, all-net; ratios"
say "# size(B)        hier     mixed       IPC       net  hier/mixed  hier/net  hier/IPC"
join <(rows "$OUT/ar-hier-rank0.log" | awk '{print $1, $2}') \
     <(join <(rows "$OUT/ar-hflat-rank0.log" | awk '{print $1, $2}') \
            <(join <(rows "$OUT/ar-hipc-rank0.log" | awk '{print $1, $2}') <(rows "$OUT/ar-hnet-rank0.log" | awk '{print $1, $2}'))) |
  awk 'function r(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }
       {printf "%10s %10s %9s %9s %9s %11s %9s %9s\n", $1, $2, $3, $4, $5, r($2, $3), r($2, $5), r($2, $4)}' |
  tee -a "$summary"
say "# (expected: hier/mixed > 1 at the large sizes - each process moves 1/2 of the bytes over net, the two"
say "#  proxies of a host in parallel; informational, not a PASS/FAIL: one GPU time-slices the 4 processes)"
fi

# 8. two "hosts" that are really apart as far as the processes can tell: two network namespaces
#    joined by a veth pair, each with its own host name (UTS namespace), 2 GPU processes in each; the
#    pairs across are net because the host names differ (no emulation), TCP goes over the veth, not
#    loopback; flat and hierarchical AllReduce exact, the transport lines say why. Root only: without
#    ip netns / unshare the step says SKIP (neither a pass nor a failure).
if want netns; then
  NSA=ttg-a$$ NSB=ttg-b$$ VA=ttga$$ VB=ttgb$$ NET=10.251.78
  ns_ok=0 ns_why= ns_mode=veth
  [ "$(id -u)" = 0 ] || ns_why="not root"
  for c in ip unshare; do command -v $c > /dev/null || ns_why="${ns_why:+$ns_why; }no '$c' command"; done
  # without ip (no veth pair): host names of their own (UTS namespaces) over the one network, loopback
  if [ "$ns_why" = "no 'ip' command" ] && unshare --uts true 2> "$OUT/netns.err"; then ns_mode=uts ns_ok=1 NET=127.0.0; fi
  if [ -z "$ns_why" ] &&
     ip netns add $NSA 2> "$OUT/netns.err" && ip netns add $NSB 2>> "$OUT/netns.err" &&
     ip link add $VA type veth peer name $VB 2>> "$OUT/netns.err" &&
     ip link set $VA netns $NSA && ip link set $VB netns $NSB &&
     ip -n $NSA addr add $NET.1/24 dev $VA && ip -n $NSB addr add $NET.2/24 dev $VB &&
     ip -n $NSA link set $VA up && ip -n $NSB link set $VB up &&
     ip -n $NSA link set lo up && ip -n $NSB link set lo up &&
     ip netns exec $NSA unshare --uts true 2>> "$OUT/netns.err"; then ns_ok=1; fi
  # nsgroup NAME ARGS...: ranks 0,1 in namespace a (host name gpu-node-a), 2,3 in b; 0 when all exit 0
  nsgroup() {
    local name=$1; shift
    local port=$(( 20000 + (RANDOM % 20000) )) pids=() r rc=0 ns node
    for r in 0 1 2 3; do
      ns=$NSA node=gpu-node-a; [ $r -ge 2 ] && ns=$NSB node=gpu-node-b
      local inns=(ip netns exec $ns); [ $ns_mode = uts ] && inns=()
      TOPOTUNE_TRANSPORT=tcp TOPOTUNE_DEBUG=INFO timeout ${PAIR_TIMEOUT:-60} "${inns[@]}" unshare --uts \
        sh -c "hostname $node && exec \"\$0\" \"\$@\"" "$TE" -g 1 --rank $r --nranks 4 --master $NET.1:$port "$@" \
        > "$OUT/$name-rank$r.log" 2>&1 &
      pids+=($!)
    done
    for r in "${!pids[@]}"; do wait "${pids[$r]}" || rc=1; done
    say "== $name: 4 processes, 2 host names ($ns_mode: $([ $ns_mode = veth ] && echo 'network namespaces, veth' || echo 'UTS namespaces only, loopback')), rc=$rc"
    return $rc
  }
  if [ $ns_ok = 1 ]; then
    NSWEEP="-b 8 -e 16M -f 8 -n 5 -w 1"
    if nsgroup ns-flat $NSWEEP && wrong_ok "$OUT/ns-flat-rank0.log"; then pass "netns: all_reduce flat, 2 namespaces x 2: #wrong 0"
    else fail "netns: all_reduce flat"; fi
    grep -h ' via ' "$OUT"/ns-flat-rank[0-3].log | sed 's/.*INFO gpu: //' | sort -u | head -8 | tee -a "$summary"
    nnet=$(grep -hE 'rank [0-3] -> [0-3] via NET/tcp' "$OUT"/ns-flat-rank[0-3].log | grep -c 'hosts differ')
    if [ "$nnet" -ge 1 ] && ! grep -qhE 'rank (0|1) -> (2|3) via IPC|rank (2|3) -> (0|1) via IPC' "$OUT"/ns-flat-rank[0-3].log &&
       ! grep -qhE 'TOPOTUNE_GPU_EMULATE_HOSTS' "$OUT"/ns-flat-rank[0-3].log; then
      pass "netns: pairs across the namespaces on NET/tcp because the hosts differ ($nnet line(s)), none emulated"
    else fail "netns: per-pair transports (net lines: $nnet)"; fi
    if nsgroup ns-hier --algo hierarchical $NSWEEP && wrong_ok "$OUT/ns-hier-rank0.log" &&
       grep -qE 'hierarchical/(simple|ll)/' "$OUT/ns-hier-rank0.log"; then
      pass "netns: all_reduce hierarchical, 2 namespaces x 2: #wrong 0"
    else fail "netns: all_reduce hierarchical"; fi
    grep -h 'hierarchical AllReduce: rank' "$OUT"/ns-hier-rank[0-3].log | sed 's/.*INFO gpu: //' | head -4 | tee -a "$summary"
    say "# netns, 4 processes, AllReduce float sum out of place: busbw (GB/s) hierarchical, flat"
    join <(rows "$OUT/ns-hier-rank0.log" | awk '{print $1, $2}') <(rows "$OUT/ns-flat-rank0.log" | awk '{print $1, $2}') |
      awk '{printf "%10s %9s %9s %8s\n", $1, $2, $3, ($3 > 0 ? sprintf("%.2f", $2 / $3) : "-")}' | tee -a "$summary"
  else
    say "SKIP netns: network namespaces not available here: ${ns_why:-$(head -c 200 "$OUT/netns.err" 2> /dev/null)}"
  fi
  [ $ns_mode = veth ] && { ip netns del $NSA 2> /dev/null; ip netns del $NSB 2> /dev/null; ip link del $VA 2> /dev/null; }
fi

# nothing left behind (every mode)
shm_after=$(ls /dev/shm 2>/dev/null | grep -c topotune)
if [ "$shm_after" -le "$shm_before" ]; then pass "/dev/shm: no topotune segment left ($shm_after)"
else fail "/dev/shm: $shm_after topotune segment(s) left"; ls -la /dev/shm | tee -a "$summary"; fi
say "# done $(date -u '+%H:%M:%S UTC'): $fails failure(s)"
[ $fails -eq 0 ]
