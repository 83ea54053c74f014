#!/usr/bin/env bash
# Fault injection in the executor (docs/reliability.md): a dropped TCP connection, a corrupted message and an
# exhausted /dev/shm each end with a clear error on every surviving rank within the deadline, naming the cause,
# with no process and no shared-memory segment left behind.  (Killed, stopped and absent ranks are in
# test_topo_exec.sh.)
. "$(dirname "$0")/lib.sh"
X="$BIN/topo-exec"
unset NCCL_ALGO NCCL_PROTO RANK WORLD_SIZE MASTER_ADDR MASTER_PORT TOPOTUNE_FAULT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 30000)); }
shm_before=$(ls /dev/shm 2>/dev/null | grep -c topotune)

# launch NAME NRANKS ENV...: NRANKS processes on 127.0.0.1, each with ENV; waits, records rc and time per rank
launch() {
  local name=$1 n=$2; shift 2
  local port; port=$(free_port); local pids=() t0; t0=$(date +%s%N)
  for r in $(seq 0 $((n - 1))); do
    env TOPOTUNE_TIMEOUT_MS=3000 "$@" "$X" --rank $r --nranks $n --master 127.0.0.1:$port -b 64K -e 64K -n 20 -w 1 \
      --no-progress >"$TMP/$name.$r.out" 2>"$TMP/$name.$r.err" & pids+=($!)
  done
  for r in $(seq 0 $((n - 1))); do
    wait "${pids[$r]}"; eval "rc_$r=$?"; eval "ms_$r=$(( ($(date +%s%N) - t0) / 1000000 ))"
  done
}

# 1. rank 1 drops its TCP connections as collective #3 starts: ranks 0 and 2 fail, naming rank 1
launch drop 3 TOPOTUNE_TRANSPORT=tcp TOPOTUNE_FAULT=drop-tcp:1:3
for r in 0 2; do
  eval "rc=\$rc_$r ms=\$ms_$r"
  [ "$rc" -ne 0 ] && [ "$ms" -lt 10000 ] && ok "drop-tcp: rank $r exits $rc after $ms ms" || not_ok "drop-tcp: rank $r rc=$rc after $ms ms"
  expect_grep "$TMP/drop.$r.err" 'rank 1 closed the connection|connection to rank 1 lost|lost connection to rank 1' "drop-tcp: rank $r names rank 1 ($(head -c 150 "$TMP/drop.$r.err"))"
done
eval "rc=\$rc_1"; [ "$rc" -ne 0 ] && ok "drop-tcp: rank 1 itself exits $rc" || not_ok "drop-tcp: rank 1 rc=$rc"
expect_grep "$TMP/drop.1.err" 'fault injection: rank 1 drops its TCP connections before collective #3' "drop-tcp: the injecting rank says what it did"

# 2. rank 2 corrupts its collective header (#3): the others refuse it, naming rank 2
launch corrupt 3 TOPOTUNE_FAULT=corrupt:2:3
for r in 0 1; do
  eval "rc=\$rc_$r ms=\$ms_$r"
  [ "$rc" -ne 0 ] && [ "$ms" -lt 10000 ] && ok "corrupt: rank $r exits $rc after $ms ms" || not_ok "corrupt: rank $r rc=$rc after $ms ms"
  expect_grep "$TMP/corrupt.$r.err" 'rank 2 sent data that is not a collective header' "corrupt: rank $r names rank 2"
done
expect_grep "$TMP/corrupt.2.err" 'corrupted collective header \(fault injection\)' "corrupt: rank 2 reports its own corrupted header"

# 3. /dev/shm too small for the shared-memory transport (a private 64 KiB tmpfs in a mount namespace)
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
  port=$(free_port)
  unshare -m bash -c "mount -t tmpfs -o size=64k tmpfs /dev/shm || exit 99
    for r in 0 1; do TOPOTUNE_TIMEOUT_MS=3000 TOPOTUNE_TRANSPORT=shm '$X' --rank \$r --nranks 2 --master 127.0.0.1:$port \
      -b 4M -e 4M -n 2 --no-progress >'$TMP/shm.'\$r.out 2>'$TMP/shm.'\$r.err & done; wait" 2>"$TMP/unshare.err"
  if [ $? -eq 99 ]; then skip "exhausted /dev/shm" "cannot mount a tmpfs in a mount namespace here"
  else
    for r in 0 1; do
      expect_grep "$TMP/shm.$r.err" '/dev/shm has no room|rank [01]' "shm full: rank $r fails with a clear error ($(head -c 160 "$TMP/shm.$r.err"))"
    done
    grep -q '/dev/shm has no room' "$TMP/shm.0.err" "$TMP/shm.1.err" && ok "shm full: the error says /dev/shm has no room" || not_ok "shm full: no '/dev/shm has no room' message"
  fi
else
  skip "exhausted /dev/shm" "needs root and unshare -m"
fi

# 4. nothing left behind
sleep 0.2
left=$(pgrep -f "$X --rank" | wc -l)
[ "$left" -eq 0 ] && ok "no topo-exec process left" || not_ok "$left topo-exec processes left"
shm_after=$(ls /dev/shm 2>/dev/null | grep -c topotune)
[ "$shm_after" -le "$shm_before" ] && ok "no shared-memory segment left in /dev/shm" || not_ok "segments left: $(ls /dev/shm | grep topotune)"
finish
