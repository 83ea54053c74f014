#!/usr/bin/env bash
# Who can join a job (issue #32 items 9, 10, 12; docs/reliability.md, "Who can join a job"):
#  - a hello that does not prove the job secret (HMAC-SHA256) is refused alone with the reason, and the
#    job's own ranks still join and pass;
#  - the key file (~/.config/topotune/job-secret) is created 0600 on first use, refused when other users
#    can read it or another user owns it; no secret at all is a warning;
#  - two users (root only: `nobody` through setpriv): a rogue process of the other user, with topo-exec or a
#    hand-made hello, is refused, the job passes, and the other user cannot read the key file; its symbolic
#    link in a shared folder does not redirect root's -J (item 11);
#  - a rank killed during shared-memory setup: the survivor removes the segment's name.
. "$(dirname "$0")/lib.sh"
X="$BIN/topo-exec"
unset NCCL_ALGO NCCL_PROTO RANK WORLD_SIZE MASTER_ADDR MASTER_PORT TOPOTUNE_FAULT TOPOTUNE_JOB_ID \
  TOPOTUNE_JOB_SECRET TOPOTUNE_JOB_SECRET_FILE SLURM_JOB_ID TORCHELASTIC_RUN_ID OMPI_MCA_ess_base_jobid PMIX_NAMESPACE
export HOME="$TMP/home"
mkdir -p "$HOME"
KEY="$HOME/.config/topotune/job-secret"

# wait_rcs PIDS...: rc_<i> for each pid, in order
wait_rcs() { local i=0; for p in "$@"; do wait "$p"; eval "rc_$i=$?"; i=$((i + 1)); done; }
# start R N PORT NAME ENV...: one rank in the background, pid appended to $pids
start() {
  local r=$1 n=$2 port=$3 name=$4; shift 4
  env "$@" TOPOTUNE_TIMEOUT_MS=4000 "$X" --rank $r --nranks $n --master 127.0.0.1:$port -b 64K -e 64K -n 5 -w 1 \
    --no-progress >"$TMP/$name.$r.out" 2>"$TMP/$name.$r.err" & pids+=($!)
}

# 1. a stray rank 1 with another TOPOTUNE_JOB_SECRET waits on the port first: refused alone, the job passes
port=$(free_port); pids=()
start 1 2 $port stray TOPOTUNE_JOB_SECRET=not-the-secret; sleep 0.3
start 0 2 $port job TOPOTUNE_JOB_SECRET=s3cret-of-the-job; sleep 0.6
start 1 2 $port job TOPOTUNE_JOB_SECRET=s3cret-of-the-job
wait_rcs "${pids[@]}"
[ "$rc_0" -ne 0 ] && [ "$rc_1$rc_2" = 00 ] && ok "stray rank with another secret: refused (exit $rc_0), the job's ranks exit 0" ||
  not_ok "stray rank with another secret: stray rc=$rc_0, job ranks $rc_1$rc_2: $(head -c 300 "$TMP/job.1.err") | $(head -c 200 "$TMP/stray.1.err")"
expect_grep "$TMP/stray.1.err" 'proves a different job secret.*set the same TOPOTUNE_JOB_SECRET on every rank' \
  "stray rank: told it proves a different job secret"
expect_grep "$TMP/job.0.err" 'refused a process that proves a different job secret.*rank 1' "rank 0 logs whom it refused"

# 2. the default key file: created 0600 (folder 0700) on first use by 4 ranks started at once; all agree
port=$(free_port); pids=()
for r in 0 1 2 3; do start $r 4 $port key; done
wait_rcs "${pids[@]}"
[ "$rc_0$rc_1$rc_2$rc_3" = 0000 ] && ok "4 ranks, no secret yet: all exit 0" ||
  not_ok "4 ranks creating the key file: rcs $rc_0$rc_1$rc_2$rc_3: $(head -c 300 "$TMP/key.1.err")"
if [ -f "$KEY" ] && [ "$(stat -c %a "$KEY")" = 600 ] && [ "$(stat -c %a "$(dirname "$KEY")")" = 700 ] &&
   [ "$(wc -c <"$KEY")" -ge 33 ]; then
  ok "key file created: mode 600, folder 700, $(wc -c <"$KEY") bytes"
else
  not_ok "key file $KEY: $(ls -la "$(dirname "$KEY")" 2>&1 | tr '\n' ' ')"
fi
expect_no_grep "$TMP/key.0.err" 'no job secret' "no warning with a key file"

# 3. a key file that others can read, a FIFO, an empty file: refused with the reason, no hang
chmod 644 "$KEY"
run timeout 10 env TOPOTUNE_TIMEOUT_MS=2000 "$X" --rank 0 --nranks 2 --master 127.0.0.1:$(free_port) -b 1K -e 1K --no-progress
[ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] && grep -q "job-secret.*readable by other users (mode 644).*chmod 600" "$TMP/err" &&
  ok "key file of mode 644: refused (exit $RC), chmod 600 named" || not_ok "key file of mode 644: exit $RC: $(head -c 300 "$TMP/err")"
chmod 600 "$KEY"
mkfifo "$TMP/fifo"; chmod 600 "$TMP/fifo"
run timeout 10 env TOPOTUNE_TIMEOUT_MS=2000 TOPOTUNE_JOB_SECRET_FILE="$TMP/fifo" "$X" --rank 0 --nranks 2 \
  --master 127.0.0.1:$(free_port) -b 1K -e 1K --no-progress
[ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] && grep -q "fifo.*not a regular file" "$TMP/err" &&
  ok "TOPOTUNE_JOB_SECRET_FILE naming a FIFO: refused (exit $RC), no hang" || not_ok "FIFO key file: exit $RC: $(head -c 300 "$TMP/err")"
: >"$TMP/empty"; chmod 600 "$TMP/empty"
run timeout 10 env TOPOTUNE_TIMEOUT_MS=2000 TOPOTUNE_JOB_SECRET_FILE="$TMP/empty" "$X" --rank 0 --nranks 2 \
  --master 127.0.0.1:$(free_port) -b 1K -e 1K --no-progress
[ "$RC" -ne 0 ] && grep -q "empty.*is empty" "$TMP/err" && ok "an empty key file: refused (exit $RC)" ||
  not_ok "empty key file: exit $RC: $(head -c 300 "$TMP/err")"

# 4. no secret at all (HOME unset): a warning, and the job still runs
port=$(free_port); pids=()
for r in 0 1; do start $r 2 $port nohome -u HOME; done
wait_rcs "${pids[@]}"
[ "$rc_0$rc_1" = 00 ] && ok "HOME unset, no secret: both ranks exit 0" || not_ok "HOME unset: rcs $rc_0$rc_1: $(head -c 300 "$TMP/nohome.0.err")"
expect_grep "$TMP/nohome.0.err" 'no job secret.*any local user can join' "HOME unset: warned that anyone on the host can join"

# 5. -J never records the secret's value
port=$(free_port); pids=()
for r in 0 1; do
  TOPOTUNE_JOB_SECRET=do-not-write-me TOPOTUNE_TIMEOUT_MS=4000 "$X" --rank $r --nranks 2 --master 127.0.0.1:$port -b 1K -e 1K \
    -n 2 --no-progress -J "$TMP/r$r.json" >"$TMP/json.$r.out" 2>"$TMP/json.$r.err" & pids+=($!)
done
wait_rcs "${pids[@]}"
if [ "$rc_0$rc_1" = 00 ] && [ -s "$TMP/r0.json" ] && ! grep -q do-not-write-me "$TMP/r0.json"; then
  ok "-J: TOPOTUNE_JOB_SECRET's value not written ($(grep -o 'TOPOTUNE_JOB_SECRET=[^"]*' "$TMP/r0.json"))"
else
  not_ok "-J with a secret: rcs $rc_0$rc_1, $(grep -o 'TOPOTUNE_JOB_SECRET=[^"]*' "$TMP/r0.json" 2>&1)"
fi

# 6. two users: root runs the job, `nobody` tries to join
if [ "$(id -u)" != 0 ]; then
  skip "another user cannot join the job" "not root: no second user to run as"
elif ! command -v setpriv >/dev/null || ! getent passwd nobody >/dev/null; then
  skip "another user cannot join the job" "no setpriv or no user nobody"
elif ! setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>"$TMP/setpriv.err"; then
  skip "another user cannot join the job" "setpriv to nobody refused here: $(head -c 100 "$TMP/setpriv.err")"
else
  AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  chmod 755 "$TMP" "$HOME" # only the key file's own mode and its folder's keep nobody out
  if "${AS_NOBODY[@]}" cat "$KEY" >"$TMP/stolen" 2>"$TMP/steal.err"; then
    not_ok "nobody read the key file $KEY"
  else
    ok "nobody cannot read the key file ($(head -c 80 "$TMP/steal.err"))"
  fi
  # 6a. topo-exec of nobody as rank 1, waiting on the port before the job starts
  port=$(free_port); pids=()
  start 1 2 $port rogue "${AS_NOBODY[@]}" env HOME=/nonexistent; sleep 0.3
  start 0 2 $port job2; sleep 0.6
  start 1 2 $port job2
  wait_rcs "${pids[@]}"
  [ "$rc_0" -ne 0 ] && [ "$rc_1$rc_2" = 00 ] && ok "nobody's topo-exec as rank 1: refused (exit $rc_0), the job's ranks exit 0" ||
    not_ok "nobody's topo-exec as rank 1: rogue rc=$rc_0, job ranks $rc_1$rc_2: $(head -c 300 "$TMP/job2.1.err") | $(head -c 200 "$TMP/rogue.1.err")"
  expect_grep "$TMP/rogue.1.err" 'proves a different job secret' "nobody's topo-exec: told why"
  # 6b. a hand-made hello of nobody (rank 1, nonce 0, no job id, as every --master hello had before)
  ver=$(sed -n 's/^#define BOOT_VERSION \([0-9]*\)u.*/\1/p' "$ROOT/exec/exec_bootstrap.c")
  size=$((168 + (ver >= 3 ? 32 : 0)))
  cat >"$TMP/hello.py" <<'EOF'
import os, socket, struct, sys, time
port, ver, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
end = time.time() + 5
while True:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        break
    except OSError:
        if time.time() > end:
            raise
        time.sleep(0.05)
h = struct.pack("<IIQQii64siii60s", 0x54544558, ver, 0, 0, 1, 2, b"127.0.0.1", 40000, 0, os.getpid(), b"")
s.sendall(h + b"\0" * (size - len(h)))
rep = b""
while len(rep) < 16:
    b = s.recv(4096)
    if not b:
        break
    rep += b
print("status=%d msg=%s" % (struct.unpack("<i", rep[:4])[0], rep[16:416].split(b"\0")[0].decode(errors="replace")))
EOF
  port=$(free_port); pids=()
  start 0 2 $port job3; sleep 0.3
  "${AS_NOBODY[@]}" /usr/bin/python3 "$TMP/hello.py" $port "$ver" $size >"$TMP/hello.out" 2>"$TMP/hello.err"
  start 1 2 $port job3
  wait_rcs "${pids[@]}"
  grep -q '^status=2 .*proves a different job secret' "$TMP/hello.out" &&
    ok "nobody's hand-made hello (protocol $ver): refused ($(head -c 120 "$TMP/hello.out"))" ||
    not_ok "nobody's hand-made hello: $(head -c 200 "$TMP/hello.out") $(head -c 200 "$TMP/hello.err")"
  [ "$rc_0$rc_1" = 00 ] && ok "hand-made hello: the job's ranks exit 0" ||
    not_ok "hand-made hello: job ranks $rc_0$rc_1: $(head -c 300 "$TMP/job3.0.err")"
  # 6c. a key file that another user owns is refused, even when its mode is private
  cp "$KEY" "$TMP/their-key"; chown nobody "$TMP/their-key"; chmod 600 "$TMP/their-key"
  run timeout 10 env TOPOTUNE_TIMEOUT_MS=2000 TOPOTUNE_JOB_SECRET_FILE="$TMP/their-key" "$X" --rank 0 --nranks 2 \
    --master 127.0.0.1:$(free_port) -b 1K -e 1K --no-progress
  [ "$RC" -ne 0 ] && grep -q "their-key.*belongs to another user (uid 65534" "$TMP/err" &&
    ok "a key file of another user: refused (exit $RC)" || not_ok "key file of another user: exit $RC: $(head -c 300 "$TMP/err")"
  # 6d. item 11 with two users: nobody's symbolic link in a shared sticky folder, pointing at root's file, is
  #     not followed by root's -J (the fix landed before this test: d7f4262)
  mkdir -m 1777 "$TMP/shared"; echo precious >"$TMP/victim"
  "${AS_NOBODY[@]}" ln -s "$TMP/victim" "$TMP/shared/r.json"
  run timeout 20 "$X" --host 2 -b 1K -e 1K -n 2 --no-progress -J "$TMP/shared/r.json"
  [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] && [ "$(cat "$TMP/victim")" = precious ] && grep -q "owned by another user" "$TMP/err" &&
    ok "-J through nobody's symbolic link to root's file: refused (exit $RC), the file untouched" ||
    not_ok "-J through nobody's link: exit $RC, victim '$(head -c 40 "$TMP/victim")': $(head -c 200 "$TMP/err")"
  chmod 700 "$TMP"
fi

# 7. kill -9 of the creator while its shared-memory segment is being sized (256 MiB ring: a long
#    posix_fallocate): the survivor knows the name and removes it; no name of the job is left
port=$(free_port); pids=()
ls /dev/shm | grep '^tt-' | sort >"$TMP/shm0"
for r in 0 1; do
  TOPOTUNE_TRANSPORT=shm TOPOTUNE_SHM_RING_BYTES=256M TOPOTUNE_TIMEOUT_MS=3000 "$X" --rank $r --nranks 2 --master 127.0.0.1:$port \
    -b 1K -e 1K -n 1 --no-progress >"$TMP/k$r.out" 2>"$TMP/k$r.err" & pids+=($!)
done
for i in $(seq 300); do ls /dev/shm | grep '^tt-' | sort | comm -13 "$TMP/shm0" - | grep -q "^tt-[0-9a-f]*-${pids[0]}-" && break; sleep 0.01; done
seen=$(ls /dev/shm | grep "^tt-[0-9a-f]*-${pids[0]}-")
kill -9 ${pids[0]}; wait ${pids[0]} 2>/dev/null; wait ${pids[1]}; rc1=$?
left=$(ls /dev/shm | grep "^tt-[0-9a-f]*-${pids[0]}-")
if [ -z "$seen" ]; then
  skip "survivor removes the segment of a killed creator" "the kill came too late (no segment seen)"
elif [ -z "$left" ] && [ "$rc1" -ne 0 ]; then
  ok "kill -9 of the creator during shm setup: the survivor (exit $rc1) removed $seen"
else
  not_ok "kill -9 of the creator during shm setup: left in /dev/shm: '$left' (survivor rc=$rc1: $(head -c 200 "$TMP/k1.err"))"
fi
finish
