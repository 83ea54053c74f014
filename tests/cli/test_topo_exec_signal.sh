#!/usr/bin/env bash
# SIGTERM / SIGINT of rank 0 (Slurm's scancel or time limit, Ctrl-C) during a sweep (issue #32 item 8):
# the rows measured so far stay on stdout with the reason, -J is replaced by a file holding those rows and
# "stopped by SIGTERM after N size(s)", and the process then dies by that signal (a shell's status 143 /
# 130), within about a second even when a collective is blocked.  The other ranks fail on the lost peer
# as before.
. "$(dirname "$0")/lib.sh"
X="$BIN/topo-exec"
[ -x "$X" ] || { skip "topo-exec signals" "topo-exec not built"; finish; }
unset NCCL_ALGO NCCL_PROTO RANK WORLD_SIZE MASTER_ADDR MASTER_PORT TOPOTUNE_FAULT TOPOTUNE_CHUNK_BYTES
rows() { grep -Ec '^ +[0-9]+ ' "$1"; }
old_json() { echo '{"results":[{"size":1,"old":true}],"errors":[]}' >"$1"; }
# wait_rows FILE N: until FILE holds N table rows (at most 20 s)
wait_rows() { for _ in $(seq 200); do [ "$(rows "$1")" -ge "$2" ] && return 0; sleep 0.1; done; return 1; }
# after_kill PID: waits for PID, sets rc and ms (time since the kill)
after_kill() { local t0; t0=$(date +%s%N); kill "-$2" "$1"; wait "$1"; rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 )); }
# check_json FILE SIG NROWS_AT_LEAST: -J holds the measured rows and the reason
check_json() {
  python3 - "$1" "$2" "$3" <<'P' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
res, err = d["results"], d["errors"]
assert not any(r.get("old") for r in res), "the old file is still there"
assert len(res) >= int(sys.argv[3]), "%d results, wanted at least %s" % (len(res), sys.argv[3])
want = "stopped by %s after %d size(s)" % (sys.argv[2], len(res))
assert err and err[0].startswith(want), "errors %r, wanted %r" % (err, want)
P
}

# 1. thread mode (--host 2, --cycles 0: until killed), SIGTERM after rows have appeared
old_json "$TMP/t.json"
"$X" --host 2 -b 1K -e 256K -f 4 -n 50 --cycles 0 --no-progress -J "$TMP/t.json" >"$TMP/t.out" 2>"$TMP/t.err" &
pid=$!
if wait_rows "$TMP/t.out" 3; then
  after_kill $pid TERM
  n=$(rows "$TMP/t.out")
  [ "$rc" -eq 143 ] && [ "$ms" -lt 1500 ] && ok "--host 2, SIGTERM: dies by SIGTERM (status 143) in ${ms} ms" ||
    not_ok "--host 2, SIGTERM: status $rc after ${ms} ms; $(head -c 300 "$TMP/t.err")"
  expect_grep "$TMP/t.out" "^# Collective test FAILED after $n size\(s\): stopped by SIGTERM after $n size\(s\)" \
    "--host 2, SIGTERM: the $n rows stay on stdout, the footer says why"
  why=$(check_json "$TMP/t.json" SIGTERM "$n") && ok "--host 2, SIGTERM: -J replaced, holding the $n rows and the reason" ||
    not_ok "--host 2, SIGTERM: -J: $why"
else
  not_ok "--host 2 sweep printed no rows in 20 s: $(head -c 300 "$TMP/t.err")"; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
fi

# 2. SIGINT (Ctrl-C), thread mode; job control on so that the background process does not ignore SIGINT
old_json "$TMP/i.json"
set -m
"$X" --host 2 -b 1K -e 256K -f 4 -n 50 --cycles 0 --no-progress -J "$TMP/i.json" >"$TMP/i.out" 2>"$TMP/i.err" &
pid=$!
set +m
if wait_rows "$TMP/i.out" 2; then
  after_kill $pid INT
  n=$(rows "$TMP/i.out")
  [ "$rc" -eq 130 ] && [ "$ms" -lt 1500 ] && ok "--host 2, SIGINT: dies by SIGINT (status 130) in ${ms} ms" ||
    not_ok "--host 2, SIGINT: status $rc after ${ms} ms; $(head -c 300 "$TMP/i.err")"
  why=$(check_json "$TMP/i.json" SIGINT "$n") && ok "--host 2, SIGINT: -J holds the $n rows and the reason" ||
    not_ok "--host 2, SIGINT: -J: $why"
  expect_grep "$TMP/i.err" "stopped by SIGINT after $n size\(s\)" "--host 2, SIGINT: the reason on stderr"
else
  not_ok "--host 2 (SIGINT) printed no rows in 20 s: $(head -c 300 "$TMP/i.err")"; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
fi

# 3. process mode: rank 1 stopped (SIGSTOP) so that rank 0 is blocked inside a collective (20 s deadline);
#    SIGTERM of rank 0 still ends it within about a second with its rows in -J; rank 1, continued, fails on
#    the lost peer
old_json "$TMP/p.json"
port=$(free_port)
env TOPOTUNE_TIMEOUT_MS=20000 "$X" --rank 0 --nranks 2 --master 127.0.0.1:$port -b 1K -e 256K -f 4 -n 50 --cycles 0 \
  --no-progress -J "$TMP/p.json" >"$TMP/p0.out" 2>"$TMP/p0.err" &
pid0=$!
env TOPOTUNE_TIMEOUT_MS=20000 "$X" --rank 1 --nranks 2 --master 127.0.0.1:$port -b 1K -e 256K -f 4 -n 50 --cycles 0 \
  --no-progress >"$TMP/p1.out" 2>"$TMP/p1.err" &
pid1=$!
if wait_rows "$TMP/p0.out" 2; then
  kill -STOP $pid1
  sleep 0.5 # rank 0 now waits inside a collective for rank 1
  n0=$(rows "$TMP/p0.out")
  after_kill $pid0 TERM
  n=$(rows "$TMP/p0.out")
  [ "$rc" -eq 143 ] && [ "$ms" -lt 1500 ] && ok "process ranks, rank 0 blocked in a collective, SIGTERM: status 143 in ${ms} ms" ||
    not_ok "process ranks, blocked rank 0, SIGTERM: status $rc after ${ms} ms; $(head -c 300 "$TMP/p0.err")"
  [ "$n" = "$n0" ] && ok "... no row measured after the stop ($n rows)" || not_ok "rows $n0 before the kill, $n after"
  why=$(check_json "$TMP/p.json" SIGTERM "$n") && ok "... -J holds rank 0's $n rows and the reason" || not_ok "... -J: $why"
  kill -CONT $pid1
  t0=$(date +%s%N); wait $pid1; rc1=$?; ms1=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ "$rc1" -eq 1 ] && [ "$ms1" -lt 25000 ] && grep -q 'rank 0' "$TMP/p1.err" &&
    ok "... rank 1 fails on the lost rank 0 (exit 1 in ${ms1} ms)" || not_ok "rank 1: exit $rc1 after ${ms1} ms; $(head -c 300 "$TMP/p1.err")"
else
  not_ok "process ranks printed no rows in 20 s: $(head -c 300 "$TMP/p0.err")"
  kill -9 $pid0 $pid1 2>/dev/null; wait 2>/dev/null
fi

# 4. scancel: SIGTERM to every rank at once; rank 0 writes its rows, rank 1 waits a second for that, then
#    both are gone (rank 1 failed on the lost rank 0, or ended by the signal)
old_json "$TMP/s.json"
port=$(free_port)
env TOPOTUNE_TIMEOUT_MS=20000 "$X" --rank 0 --nranks 2 --master 127.0.0.1:$port -b 1K -e 256K -f 4 -n 50 --cycles 0 \
  --no-progress -J "$TMP/s.json" >"$TMP/s0.out" 2>"$TMP/s0.err" &
pid0=$!
env TOPOTUNE_TIMEOUT_MS=20000 "$X" --rank 1 --nranks 2 --master 127.0.0.1:$port -b 1K -e 256K -f 4 -n 50 --cycles 0 \
  --no-progress >"$TMP/s1.out" 2>"$TMP/s1.err" &
pid1=$!
if wait_rows "$TMP/s0.out" 2; then
  t0=$(date +%s%N); kill -TERM $pid0 $pid1; wait $pid0; rc0=$?; wait $pid1; rc1=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 )); n=$(rows "$TMP/s0.out")
  [ "$rc0" -eq 143 ] && { [ "$rc1" -eq 1 ] || [ "$rc1" -eq 143 ]; } && [ "$ms" -lt 2500 ] &&
    ok "SIGTERM to both ranks (scancel): rank 0 status 143, rank 1 status $rc1, both gone in ${ms} ms" ||
    not_ok "SIGTERM to both ranks: statuses $rc0/$rc1 after ${ms} ms; $(head -c 300 "$TMP/s1.err")"
  why=$(check_json "$TMP/s.json" SIGTERM "$n") && ok "... -J holds rank 0's $n rows and the reason" || not_ok "... -J: $why"
else
  not_ok "two ranks printed no rows in 20 s: $(head -c 300 "$TMP/s0.err")"
  kill -9 $pid0 $pid1 2>/dev/null; wait 2>/dev/null
fi

# 5. SIGTERM while the ranks still wait for each other (rendezvous): -J replaced by the reason, nothing measured
old_json "$TMP/r.json"
port=$(free_port)
env TOPOTUNE_TIMEOUT_MS=20000 "$X" --rank 0 --nranks 2 --master 127.0.0.1:$port -b 1K -e 1K --no-progress -J "$TMP/r.json" \
  >"$TMP/r.out" 2>"$TMP/r.err" &
pid=$!
sleep 1
after_kill $pid TERM
[ "$rc" -eq 143 ] && [ "$ms" -lt 1500 ] && ok "SIGTERM during the rendezvous: status 143 in ${ms} ms" || not_ok "rendezvous SIGTERM: status $rc after ${ms} ms"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["results"]==[] and "stopped by SIGTERM" in d["errors"][0], d' \
  "$TMP/r.json" 2>/dev/null && ok "... -J replaced, holding the reason and no results" || not_ok "... -J: $(head -c 300 "$TMP/r.json")"
finish
