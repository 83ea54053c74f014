#!/usr/bin/env bash
# Process ranks' header lines carry every rank's real pid and host name, as nccl-tests prints them (issue #34
# item 4a): two processes meet through --rank/--nranks/--master; rank 0's "#  Rank R Group 0 Pid P on HOST"
# lines hold the pids this test started and this machine's host name, never "Pid -1 on -"; the same with
# the nccl-tests name all_reduce_perf under a launcher's environment (RANK/WORLD_SIZE/MASTER_*).
. "$(dirname "$0")/lib.sh"
X="$BIN/topo-exec"
[ -x "$X" ] || { skip "process ranks' pids" "topo-exec not built"; finish; }
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT OMPI_COMM_WORLD_RANK PMI_RANK TOPOTUNE_FAULT
host=$(python3 -c 'import socket; print(socket.gethostname()[:63])')

# check NAME PID0 PID1 DESC: rank 0's output NAME.0.out lists both ranks with these pids on this host
check() {
  local l0 l1
  l0=$(grep -E '^#  Rank +0 Group +0 Pid' "$TMP/$1.0.out"); l1=$(grep -E '^#  Rank +1 Group +0 Pid' "$TMP/$1.0.out")
  if [ "$rc0$rc1" = 00 ] && echo "$l0" | grep -Eq "Pid +$2 on +$host " && echo "$l1" | grep -Eq "Pid +$3 on +$host "; then
    ok "$4: rank lines show pids $2 and $3 on $host"
  else
    not_ok "$4: rcs $rc0$rc1; '$l0' / '$l1' (wanted pids $2 $3 on $host) $(head -c 200 "$TMP/$1.0.err")"
  fi
  expect_no_grep "$TMP/$1.0.out" 'Pid +-1 on +- ' "$4: no 'Pid -1 on -'"
}

port=$(free_port)
env TOPOTUNE_TIMEOUT_MS=20000 "$X" --rank 0 --nranks 2 --master 127.0.0.1:$port -b 8 -e 1K -f 4 -n 5 --no-progress \
  >"$TMP/a.0.out" 2>"$TMP/a.0.err" &
p0=$!
env TOPOTUNE_TIMEOUT_MS=20000 "$X" --rank 1 --nranks 2 --master 127.0.0.1:$port -b 8 -e 1K -f 4 -n 5 --no-progress \
  >"$TMP/a.1.out" 2>"$TMP/a.1.err" &
p1=$!
wait $p0; rc0=$?; wait $p1; rc1=$?
check a $p0 $p1 "topo-exec --rank/--nranks/--master"

AR="$BIN/all_reduce_perf"
if [ -x "$AR" ]; then
  port=$(free_port)
  env TOPOTUNE_TIMEOUT_MS=20000 RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$AR" -g 0 -b 8 -e 8 -n 5 \
    >"$TMP/b.0.out" 2>"$TMP/b.0.err" &
  p0=$!
  env TOPOTUNE_TIMEOUT_MS=20000 RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$AR" -g 0 -b 8 -e 8 -n 5 \
    >"$TMP/b.1.out" 2>"$TMP/b.1.err" &
  p1=$!
  wait $p0; rc0=$?; wait $p1; rc1=$?
  check b $p0 $p1 "all_reduce_perf under a launcher's environment"
else
  skip "all_reduce_perf process ranks" "all_reduce_perf not built"
fi
finish
