#!/usr/bin/env bash
# The InfiniBand verbs transport (exec/exec_transport_ib.c) between processes, on a fake libibverbs.so.1
# (tests/fixtures/stubs/fake_ibverbs_rdma.c) that really moves the bytes: RDMA writes are executed with
# process_vm_writev into the peer process, receive completions go through shared files.  Checked: exact results
# of AllReduce/AllGather/Broadcast/ReduceScatter on 2 and 4 ranks with odd counts and rings that wrap many times,
# device/port selection (TOPOTUNE_IB_HCA, first ACTIVE port, RoCE GID), auto mode (same host: shm; two "hosts"
# in network namespaces: shm+ib), and the failures: no device, a port down, a library without the verbs, a work
# completion error, a killed peer, mismatched ring sizes - each a clear error on every rank within the deadline.
. "$(dirname "$0")/lib.sh"
X="$BIN/topo-exec"
unset NCCL_ALGO NCCL_PROTO RANK WORLD_SIZE MASTER_ADDR MASTER_PORT TOPOTUNE_FAULT TOPOTUNE_TRANSPORT TOPOTUNE_IB_HCA \
  TOPOTUNE_IB_GID_INDEX TOPOTUNE_IB_RING_BYTES TOPOTUNE_DEBUG

mkdir -p "$TMP/nosym" "$TMP/reg"
fake_verbs_ready "InfiniBand transport on the fake verbs library" || finish
# a libibverbs.so.1 without any verbs in it
echo 'int tt_not_verbs(void) { return 0; }' >"$TMP/nosym.c"
cc -shared -fPIC -o "$TMP/nosym/libibverbs.so.1" "$TMP/nosym.c" || { not_ok "symbol-less library builds"; finish; }

FAKE="LD_LIBRARY_PATH=$TMP/stubs FAKE_IBV_DIR=$TMP/reg FAKE_IBV_DEVS=mlx5_0"
# launch NAME NRANKS "ENV of every rank" "ENV of rank 1" topo-exec-args...: waits; rc_R, ms_R (since start)
launch() {
  local try
  for try in 1 2 3; do
    launch_once "$@"
    # the free port can be taken between free_port and rank 0's listen (another test's connection): try another
    grep -q "cannot listen on .*Address already in use" "$TMP/$1.0.err" 2>/dev/null || return 0
  done
}
launch_once() {
  local name=$1 n=$2 envall=$3 env1=$4; shift 4
  local port; port=$(free_port); local pids=() t0; t0=$(date +%s%N)
  for r in $(seq 0 $((n - 1))); do
    local e=$envall; [ $r = 1 ] && e="$envall $env1"
    timeout -k 2 60 env TOPOTUNE_TIMEOUT_MS=4000 $e "$X" --rank $r --nranks $n --master 127.0.0.1:$port --no-progress "$@" \
      >"$TMP/$name.$r.out" 2>"$TMP/$name.$r.err" & pids+=($!)
  done
  for r in $(seq 0 $((n - 1))); do
    wait "${pids[$r]}"; eval "rc_$r=$?"; eval "ms_$r=$(( ($(date +%s%N) - t0) / 1000000 ))"
  done
}
all_rc() { local n=$1 s=""; for r in $(seq 0 $((n - 1))); do eval "s=\$s\$rc_$r"; done; echo "$s"; }
# every data row: #wrong 0 out-of-place and in-place, and at least MIN rows
rows_exact() {
  awk -v min="$2" '/^ +[0-9]/ { n++; if ($9 != "0" || $13 != "0") bad++ } END { exit !(n >= min && !bad) }' "$1"
}

# 1. exact results, 2 and 4 ranks, odd counts, rings that wrap (16 KiB ring, up to 3 MiB messages).  2 ranks: the
#    fake executes each write when it is posted; 4 ranks: later, a few per completion poll (FAKE_IBV_ASYNC=1), so
#    completions lag, credits overtake acknowledgements and a rank may exit with writes still queued (drained)
for n in 2 4; do
  async=0; [ $n = 4 ] && async=1
  for t in all_reduce all_gather broadcast reduce_scatter; do
    launch c$n$t $n "$FAKE FAKE_IBV_ASYNC=$async TOPOTUNE_TRANSPORT=ib TOPOTUNE_IB_RING_BYTES=16K" "" -t $t -b 1 -e 3M -f 7 -n 1 -w 0 -c 1 -d int32 -r $((n - 1))
    if [ "$(all_rc $n)" = "$(printf '0%.0s' $(seq $n))" ] && rows_exact "$TMP/c$n$t.0.out" 8; then
      ok "$n ranks over ib (async completions: $async): $t, 8 sizes 0..3 MiB (odd counts), 16 KiB ring, #wrong 0 everywhere"
    else
      not_ok "$n ranks over ib: $t: rcs $(all_rc $n) $(grep -E '^ +[0-9]' "$TMP/c$n$t.0.out" | head -3) $(head -c 300 "$TMP/c$n$t.0.err" "$TMP/c$n$t.1.err")"
    fi
  done
done
expect_grep "$TMP/c4all_reduce.0.out" 'Rank +3 .* ib$' "tt_comm_transport says ib"
# default 1 MiB ring, 12 MiB float AllReduce (ring algorithm: wraps every ring 10+ times), and the tree (small sizes)
launch big 4 "$FAKE FAKE_IBV_ASYNC=1 TOPOTUNE_TRANSPORT=ib TOPOTUNE_DEBUG=INFO" "" -b 4K -e 12M -f 48 -n 2 -c 1
[ "$(all_rc 4)" = 0000 ] && rows_exact "$TMP/big.0.out" 3 && ok "4 ranks, 4 KiB..12 MiB AllReduce on the default ring: exact" ||
  not_ok "4 ranks big AllReduce: rcs $(all_rc 4) $(head -c 300 "$TMP/big.0.err")"
expect_grep "$TMP/big.2.err" 'INFO exec: rank 2: InfiniBand mlx5_0 port 1 \(InfiniBand, lid 1, ring 1048576 bytes\) to rank\(s\) 0,1,3' \
  "TOPOTUNE_DEBUG=INFO logs device, port and peers"
ls "$TMP/reg" | grep -q . && not_ok "fake registry not empty after clean exits: $(ls "$TMP/reg" | head -3)" ||
  ok "every QP and registration released at exit (fake registry empty)"

# 2. device selection: first ACTIVE port (mlx5_0 down), TOPOTUNE_IB_HCA, RoCE with a GID
launch sel 2 "LD_LIBRARY_PATH=$TMP/stubs FAKE_IBV_DIR=$TMP/reg FAKE_IBV_DEVS=mlx5_0,mlx5_1,mlx5_2 FAKE_IBV_DOWN=mlx5_0 TOPOTUNE_TRANSPORT=ib TOPOTUNE_DEBUG=INFO" "" -b 64K -e 64K -n 1
[ "$(all_rc 2)" = 00 ] && ok "mlx5_0 down: runs" || not_ok "mlx5_0 down: rcs $(all_rc 2) $(head -c 300 "$TMP/sel.0.err")"
expect_grep "$TMP/sel.0.err" 'rank 0: InfiniBand mlx5_1 port 1' "first ACTIVE port chosen (mlx5_1)"
launch hca 2 "LD_LIBRARY_PATH=$TMP/stubs FAKE_IBV_DIR=$TMP/reg FAKE_IBV_DEVS=mlx5_0,mlx5_1,mlx5_2 TOPOTUNE_IB_HCA=mlx5_2:1 FAKE_IBV_ROCE=mlx5_2 TOPOTUNE_IB_GID_INDEX=3 TOPOTUNE_TRANSPORT=ib TOPOTUNE_DEBUG=INFO" "" -b 64K -e 64K -n 1
[ "$(all_rc 2)" = 00 ] && rows_exact "$TMP/hca.0.out" 1 && ok "TOPOTUNE_IB_HCA=mlx5_2:1 on RoCE with GID index 3: exact" ||
  not_ok "TOPOTUNE_IB_HCA: rcs $(all_rc 2) $(head -c 300 "$TMP/hca.0.err")"
expect_grep "$TMP/hca.1.err" 'rank 1: InfiniBand mlx5_2 port 1 \(RoCE' "TOPOTUNE_IB_HCA picks mlx5_2, RoCE link layer"
launch hcax 2 "$FAKE TOPOTUNE_TRANSPORT=ib TOPOTUNE_IB_HCA=mlx5_9" "" -b 1K -e 1K -n 1
[ "$rc_0$rc_1" = 11 ] && ok "unknown TOPOTUNE_IB_HCA: both ranks exit 1" || not_ok "unknown HCA: rcs $rc_0$rc_1"
expect_grep "$TMP/hcax.0.err" "rank 0: TOPOTUNE_IB_HCA='mlx5_9': no RDMA device named mlx5_9" "unknown HCA named"

# 3. auto mode, one host: shared memory, never verbs between local ranks
launch auto 3 "$FAKE" "" -b 64K -e 64K -n 1
[ "$(all_rc 3)" = 000 ] && ok "auto mode on one host runs" || not_ok "auto one host: $(all_rc 3)"
expect_grep "$TMP/auto.0.out" 'Rank +2 .* shm$' "auto mode on one host: shm, not ib"

# 4. failures: every rank fails with a clear message naming rank, peer, device, verbs status
launch nodev 2 "LD_LIBRARY_PATH=$TMP/stubs FAKE_IBV_DIR=$TMP/reg FAKE_IBV_DEVS= TOPOTUNE_TRANSPORT=ib" "" -b 1K -e 1K -n 1
[ "$rc_0$rc_1" = 11 ] && ok "no RDMA device: both ranks exit 1" || not_ok "no device: rcs $rc_0$rc_1"
expect_grep "$TMP/nodev.1.err" 'rank 1: no RDMA device found by libibverbs \(TOPOTUNE_TRANSPORT=ib\)' "no device: clear message"
launch nolib 2 "LD_LIBRARY_PATH=$TMP/nosym TOPOTUNE_TRANSPORT=ib" "" -b 1K -e 1K -n 1
[ "$rc_0$rc_1" = 11 ] && ok "library without verbs: both ranks exit 1" || not_ok "no verbs: rcs $rc_0$rc_1"
expect_grep "$TMP/nolib.0.err" 'rank 0: libibverbs.so.1 lacks ibv_get_device_list' "library without verbs: names the missing symbol"
launch down 3 "$FAKE TOPOTUNE_TRANSPORT=ib" "FAKE_IBV_DOWN=mlx5_0" -b 1K -e 1K -n 1
[ "$(all_rc 3)" = 111 ] && ok "port down on rank 1: all 3 ranks exit 1" || not_ok "port down: rcs $(all_rc 3)"
expect_grep "$TMP/down.1.err" 'rank 1: no ACTIVE RDMA port \(mlx5_0 port 1: DOWN\)' "port down: rank 1 names device, port, state"
for r in 0 2; do
  expect_grep "$TMP/down.$r.err" "rank $r: rank 1 could not set up InfiniBand: rank 1: no ACTIVE RDMA port" "port down: rank $r names rank 1 and why"
done
launch ring 2 "$FAKE TOPOTUNE_TRANSPORT=ib" "TOPOTUNE_IB_RING_BYTES=64K" -b 1K -e 1K -n 1
[ "$rc_0$rc_1" = 11 ] && ok "different ring sizes: both exit 1" || not_ok "ring mismatch: rcs $rc_0$rc_1"
expect_grep "$TMP/ring.0.err" 'rank 0: rank 1 uses a 65536-byte InfiniBand ring, this rank 1048576 \(set the same TOPOTUNE_IB_RING_BYTES' "ring mismatch named"

# a work completion error injected on rank 1 (its 40th signalled send; its QP then goes to the error state, so
# its peers' writes to it fail too, whichever comes first): every rank fails, naming rank 1 and the verbs status
launch wc 4 "$FAKE TOPOTUNE_TRANSPORT=ib" "FAKE_IBV_WC_ERR=40" -b 1M -e 1M -n 20
[ "$(all_rc 4)" = 1111 ] && ok "completion error: all 4 ranks exit 1" || not_ok "completion error: rcs $(all_rc 4)"
# (a rank may see rank 1's exit before rank 1's report arrives: then it names rank 1 as lost)
nstatus=0
for r in 0 1 2 3; do
  eval "ms=\$ms_$r"
  expect_grep "$TMP/wc.$r.err" 'AllReduce #[0-9]+ \(ring\) step .*(InfiniBand \((rank 1, peer rank [023]|rank [023], peer rank 1), mlx5_0 port 1\): work completion error on the (data|credit) write|lost connection to rank 1)' \
    "completion error: rank $r names rank 1 (${ms} ms)"
  grep -qF 'transport retry counter exceeded (status 12, vendor error 0x81)' "$TMP/wc.$r.err" && nstatus=$((nstatus + 1))
done
expect_grep "$TMP/wc.1.err" '^topo-exec: rank 1: AllReduce #[0-9]+ .*InfiniBand \(rank 1, peer rank [023], mlx5_0 port 1\): work completion error on the (data|credit) write: transport retry counter exceeded \(status 12, vendor error 0x81\)' \
  "completion error: rank 1 reports its own completion with device and verbs status"
# rank 1 itself always quotes it: 0 means the status never reached a message
[ "$nstatus" -ge 1 ] && ok "completion error: $nstatus of 4 ranks quote the verbs status (the others name rank 1 as lost)" ||
  not_ok "completion error: no rank quotes the verbs status (transport retry counter exceeded ...)"

# a killed peer: the others fail within the deadline (4 s), naming it
port=$(free_port); pids=()
for r in 0 1 2 3; do
  env TOPOTUNE_TIMEOUT_MS=4000 $FAKE TOPOTUNE_TRANSPORT=ib "$X" --rank $r --nranks 4 --master 127.0.0.1:$port -b 1M -e 1M \
    -n 1000000 -c 0 >"$TMP/k$r.out" 2>"$TMP/k$r.err" & pids+=($!)
done
( sleep 40; kill -9 ${pids[@]} 2>/dev/null ) & wd=$!   # nothing may hang
for i in $(seq 150); do grep -q 'in-place' "$TMP/k0.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
kill -9 ${pids[2]}; t0=$(date +%s%N)
for r in 0 1 3; do
  { wait ${pids[$r]}; } 2>/dev/null; rc=$?; dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ $rc -eq 1 ] && [ $dt -lt 4000 ]; then ok "killed rank 2: rank $r exits 1 after $dt ms"; else not_ok "killed rank 2: rank $r rc=$rc after $dt ms"; fi
  expect_grep "$TMP/k$r.err" 'lost connection to rank 2|peer rank 2' "killed rank 2: rank $r names it ($(head -c 200 "$TMP/k$r.err"))"
done
{ wait ${pids[2]}; } 2>/dev/null
kill $wd 2>/dev/null; wait $wd 2>/dev/null

# a stuck peer (SIGSTOP; the fake still writes into its memory, as an HCA would, but no credit comes back):
# the others give up at the deadline (1 s) and name it
port=$(free_port); pids=()
for r in 0 1 2 3; do
  env TOPOTUNE_TIMEOUT_MS=1000 $FAKE TOPOTUNE_TRANSPORT=ib "$X" --rank $r --nranks 4 --master 127.0.0.1:$port -b 1M -e 1M \
    -n 1000000 -c 0 >"$TMP/s$r.out" 2>"$TMP/s$r.err" & pids+=($!)
done
( sleep 40; kill -9 ${pids[@]} 2>/dev/null ) & wd=$!
for i in $(seq 150); do grep -q 'in-place' "$TMP/s0.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
kill -STOP ${pids[3]}; t0=$(date +%s%N)
for r in 0 1 2; do
  wait ${pids[$r]}; rc=$?; dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ $rc -eq 1 ] && [ $dt -lt 4000 ]; then ok "stopped rank 3: rank $r exits 1 after $dt ms (deadline 1000 ms)"; else not_ok "stopped rank 3: rank $r rc=$rc after $dt ms"; fi
  expect_grep "$TMP/s$r.err" 'waiting for rank 3|sending to rank 3|all waiting for rank 3' "stopped rank 3: rank $r names it ($(head -c 200 "$TMP/s$r.err"))"
done
kill -9 ${pids[3]}; kill -CONT ${pids[3]} 2>/dev/null; { wait ${pids[3]}; } 2>/dev/null
kill $wd 2>/dev/null; wait $wd 2>/dev/null

# 5. auto mode across two "hosts" (network namespaces + own host names), 2 ranks each: shm inside, ib between
if netns_pair ttib 10.251.78; then
  for mode in ib tcp; do
    port=$(free_port); pids=()
    for r in 0 1 2 3; do
      ns=$NA; node=node-a; [ $r -ge 2 ] && { ns=$NB; node=node-b; }
      devs=mlx5_0; [ $mode = tcp ] && [ $r = 3 ] && devs=   # rank 3 without a device: its pairs stay on TCP
      env TOPOTUNE_TIMEOUT_MS=4000 LD_LIBRARY_PATH=$TMP/stubs FAKE_IBV_DIR=$TMP/reg FAKE_IBV_DEVS=$devs TOPOTUNE_DEBUG=INFO \
        timeout -k 2 60 ip netns exec $ns unshare --uts sh -c "hostname $node && exec \"\$0\" \"\$@\"" \
        "$X" --rank $r --nranks 4 --master 10.251.78.1:$port -b 1000 -e 2M -f 45 -n 1 -c 1 --no-progress \
        >"$TMP/ns$mode$r.out" 2>"$TMP/ns$mode$r.err" & pids+=($!)
    done
    rcs=""; for r in 0 1 2 3; do wait ${pids[$r]}; rcs="$rcs$?"; done
    if [ "$rcs" = 0000 ] && rows_exact "$TMP/ns${mode}0.out" 3; then ok "auto, 2 hosts x 2 ranks ($mode case): exact"
    else not_ok "auto 2 hosts ($mode case): rcs $rcs $(head -c 300 "$TMP/ns${mode}0.err")"; fi
  done
  expect_grep "$TMP/nsib0.out" 'Rank +3 .* shm\+ib$' "auto mode: shm inside a host, ib between hosts"
  expect_grep "$TMP/nsib0.err" 'rank 0: InfiniBand mlx5_0 port 1 .* to rank\(s\) 2,3' "auto mode: rank 0 uses ib to the other host's ranks"
  expect_grep "$TMP/nstcp0.out" 'Rank +3 .* shm\+ib\+tcp$' "auto mode, rank 3 without a device: shm+ib+tcp"
  expect_grep "$TMP/nstcp0.err" 'rank 0: InfiniBand mlx5_0 port 1 .* to rank\(s\) 2$' "auto mode: a rank without a device stays on TCP with everybody"
  expect_grep "$TMP/nstcp3.err" 'rank 3: no RDMA device found by libibverbs; ranks on other hosts use TCP' "auto mode: the rank without a device says so"
  ns_cleanup
else
  skip "auto mode across two hosts" "needs root, ip netns and unshare --uts ($(head -c 100 "$TMP/ns.err" 2>/dev/null))"
fi
finish
