#!/usr/bin/env bash
# topo-exec GPU mode: without a GPU, -g / --engine nccl / --gpu-copy-bench fail
# at once with the reason and exit 2 (usage: use --host) (nothing hangs, nothing fails at load
# time); --host keeps host mode.  With a GPU: a small validated sweep on
# (virtual) GPU ranks, plan overrides, an unsupported plan refused; process
# ranks on GPUs (-g 1 --rank R --nranks N --master ...): usage errors always,
# with a GPU two processes over CUDA IPC, only rank 0 printing the table.
source "$(dirname "$0")/lib.sh"
TE="$BIN/topo-exec"
export NCCL_NVLS_ENABLE=0

run "$TE" --host 2 -b 1K -e 4K -n 2 --no-progress
expect_rc 0 "--host keeps host ranks"
expect_grep "$TMP/out" "Out of bounds values : 0 OK" "host sweep still validated"

run "$TE" -g 2 -b 1K -e 4K -x
expect_rc 2 "unknown option in GPU mode is a usage error"

run "$TE" -g 2 -t broadcast -r 64
expect_rc 2 "-r out of range is a usage error"

run "$TE" -g 2 --rank 0 --nranks 2 --master 127.0.0.1:1
expect_rc 2 "process ranks with -g 2 are a usage error"
expect_grep "$TMP/err" "use -g 1" "... saying each process drives one GPU rank"
run "$TE" -g 1 --rank 0 --master 127.0.0.1:1
expect_rc 2 "process ranks without --nranks are a usage error"
run "$TE" -g 2 --engine nccl --rank 0 --nranks 2 --master 127.0.0.1:1
expect_rc 2 "--engine nccl with process ranks and -g 2 is a usage error"
run "$TE" -g 1 --gpu-transport wires --rank 0 --nranks 2 --master 127.0.0.1:1
expect_rc 2 "--gpu-transport with an unknown value is a usage error"
expect_grep "$TMP/err" "valid values are auto, host, net" "... listing the values"
run "$TE" --host 2 --gpu-transport net
expect_rc 2 "--gpu-transport belongs to GPU mode (host ranks refuse it)"

# two process ranks on GPUs, rank 0 and rank 1 in the background; prints
# rank 1's exit code into $TMP/rc1 and its output into $TMP/out1/err1
run_pair() { # run_pair EXTRA-ARGS...
  local port=$(( 20000 + (RANDOM % 20000) ))
  timeout 120 "$TE" -g 1 --rank 1 --nranks 2 --master 127.0.0.1:$port "$@" >"$TMP/out1" 2>"$TMP/err1" &
  local p1=$!
  run timeout 120 "$TE" -g 1 --rank 0 --nranks 2 --master 127.0.0.1:$port "$@"
  wait $p1; echo $? > "$TMP/rc1"
}

run "$TE" -g 1 -b 1K -e 1K -n 1
why=$(head -1 "$TMP/err")
if grep -qE "no NVIDIA GPU on this machine|no CUDA support" "$TMP/err"; then
  expect_rc 2 "-g without a GPU is refused with exit 2"
  expect_grep "$TMP/err" "use --host N" "... naming the way out"
  run "$TE" -g 2 --engine nccl
  expect_rc 2 "--engine nccl without a GPU is refused with exit 2"
  run "$TE" -g 2 --engine nccl -t all_gather
  expect_rc 2 "--engine nccl -t all_gather without a GPU is refused with exit 2"
  expect_grep "$TMP/err" "use --host N" "... for the missing GPU, not for the collective"
  run timeout 30 "$TE" -g 1 --engine nccl --rank 0 --nranks 2 --master 127.0.0.1:1
  expect_rc 2 "--engine nccl with process ranks without a GPU is refused with exit 2 (before any rendezvous)"
  run "$TE" --gpu-copy-bench 1M
  expect_rc 2 "--gpu-copy-bench without a GPU is refused with exit 2"
  run timeout 30 "$TE" -g 1 --rank 0 --nranks 2 --master 127.0.0.1:1
  expect_rc 2 "process ranks on GPUs without a GPU are refused with exit 2 (before any rendezvous)"
  expect_grep "$TMP/err" "use --host N" "... naming the way out"
  skip "GPU sweep" "no GPU: $why"
  skip "process ranks on GPUs" "no GPU: $why"
else
  expect_rc 0 "-g 1 runs on the GPU"
  run "$TE" -g 3 -b 8 -e 1M -f 8 -n 3 --algo tree --proto ll
  expect_rc 0 "3 GPU ranks, tree/ll sweep"
  expect_grep "$TMP/out" "Out of bounds values : 0 OK" "... all values right"
  expect_grep "$TMP/out" "tree/ll" "... with the plan asked for"
  ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
  if [ "${ngpu:-1}" -lt 3 ]; then
    expect_grep "$TMP/out" "VIRTUAL RANKS" "... marked as virtual ranks"
  fi
  # the other collectives on GPU ranks (ring; Broadcast/Reduce as a chain from/to the root)
  for c in "all_gather" "reduce_scatter" "broadcast -r 1" "reduce -r 2 -o max" "reduce_scatter -o avg -d int32"; do
    run "$TE" -g 3 -t $c -b 8 -e 1M -f 8 -n 2
    expect_rc 0 "3 GPU ranks, -t $c"
    expect_grep "$TMP/out" "Out of bounds values : 0 OK" "... all values right"
  done
  run "$TE" -g 4 -t all_gather -b 100K -e 100K -n 2 --proto ll
  expect_rc 0 "4 GPU ranks, all_gather on LL"
  expect_grep "$TMP/out" "ring/ll" "... ring/ll ran"
  run "$TE" -g 3 -t all_gather --algo tree
  expect_rc 2 "tree for all_gather on GPU ranks is refused"
  expect_grep "$TMP/err" "available: ring" "... listing what is available"
  # LL128: between ranks of one GPU (and NVLink peers) it runs; through host memory it is refused
  if [ "${ngpu:-1}" -lt 2 ]; then
    run "$TE" -g 2 -b 8 -e 4M -f 8 -n 2 --proto ll128
    expect_rc 0 "2 virtual GPU ranks, --proto ll128"
    expect_grep "$TMP/out" "Out of bounds values : 0 OK" "... all values right"
    expect_grep "$TMP/out" "ring/ll128" "... ring/ll128 ran"
  fi
  TOPOTUNE_GPU_TRANSPORT=host run "$TE" -g 2 -b 8 -e 8 -n 1 --proto ll128
  expect_rc 2 "LL128 through host memory is refused, not replaced"
  expect_grep "$TMP/err" "LL128 needs ranks on one GPU or NVLink peers.*host-staged" "... naming the pair's link"

  TOPOTUNE_DEBUG=INFO run_pair -b 8 -e 1M -f 8 -n 3
  expect_rc 0 "2 process ranks on GPUs (rank 0)"
  [ "$(cat "$TMP/rc1")" = 0 ] && ok "... rank 1 exits 0" || not_ok "... rank 1 exits $(cat "$TMP/rc1"): $(head -c 300 "$TMP/err1")"
  expect_grep "$TMP/out" "process ranks on GPUs" "... the header says process ranks on GPUs"
  expect_grep "$TMP/out" "Out of bounds values : 0 OK" "... all values right"
  if [ "${ngpu:-1}" -lt 2 ]; then
    expect_grep "$TMP/out" "VIRTUAL RANKS" "... ranks sharing the GPU are marked VIRTUAL"
    expect_grep "$TMP/err" "rank 0 -> 1 via IPC \(same GPU\)" "... transport logged under TOPOTUNE_DEBUG=INFO"
  else
    expect_grep "$TMP/err" "rank 0 -> 1 via IPC" "... transport logged under TOPOTUNE_DEBUG=INFO"
  fi
  if [ -s "$TMP/out1" ]; then not_ok "... only rank 0 prints (rank 1: $(head -c 200 "$TMP/out1"))"; else ok "... only rank 0 prints"; fi
  # issue #32 item 7: GPU process ranks started with different options stop before the first collective
  for d in "-e 512K|-e 1M|-e \(maxbytes\) is 524288 there but 1048576" "--check-max 4K|--check-max 1M|--check-max is 4096 there but 1048576"; do
    IFS='|' read -r o1 o0 msg <<<"$d"
    port=$(( 20000 + (RANDOM % 20000) )); t0=$(date +%s%N)
    timeout 120 "$TE" -g 1 --rank 1 --nranks 2 --master 127.0.0.1:$port -b 8 -f 8 -n 2 $o1 >"$TMP/out1" 2>"$TMP/err1" &
    p1=$!
    run timeout 120 "$TE" -g 1 --rank 0 --nranks 2 --master 127.0.0.1:$port -b 8 -f 8 -n 2 $o0
    wait $p1; rc1=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    [ "$RC$rc1" = 22 ] && ! grep -Eq '^ +[0-9]+ ' "$TMP/out" && ok "GPU process ranks, $o0 on rank 0 and $o1 on rank 1: both exit 2 in ${ms} ms, nothing measured" ||
      not_ok "GPU process ranks, $o0 / $o1: exits $RC/$rc1 after ${ms} ms; $(head -c 300 "$TMP/err") $(head -c 300 "$TMP/err1")"
    expect_grep "$TMP/err" "rank 1: option $msg on rank 0" "... rank 0 names the option and both values"
  done
  run_pair -t reduce_scatter -b 8 -e 1M -f 8 -n 2
  expect_rc 0 "2 process ranks on GPUs, reduce_scatter"
  expect_grep "$TMP/out" "Out of bounds values : 0 OK" "... all values right"
  run_pair -t broadcast -r 1 -b 8 -e 1M -f 8 -n 2
  expect_rc 0 "2 process ranks on GPUs, broadcast from rank 1"
  expect_grep "$TMP/out" "Out of bounds values : 0 OK" "... all values right"
  # NCCL as the engine: every collective (one GPU: one NCCL rank per process or thread)
  if [ -e /usr/lib/x86_64-linux-gnu/libnccl.so.2 ] || ldconfig -p 2>/dev/null | grep -q libnccl.so.2; then
    for c in "all_reduce" "all_gather" "reduce_scatter" "broadcast" "reduce -o max"; do
      run "$TE" -g 1 --engine nccl -t $c -b 8 -e 1M -f 8 -n 2
      expect_rc 0 "--engine nccl -g 1 -t $c"
      expect_grep "$TMP/out" "Out of bounds values : 0 OK" "... all values right"
    done
    if [ "${ngpu:-1}" -lt 2 ]; then
      run_pair --engine nccl -b 8 -e 1K -n 1
      expect_rc 2 "--engine nccl with two processes on one GPU is refused (NCCL runs one rank per GPU)"
      expect_grep "$TMP/err" "share a GPU" "... naming why"
    else
      CUDA_VISIBLE_DEVICES=0,1 run_pair --engine nccl -t all_gather -b 8 -e 1M -f 8 -n 2
      expect_rc 0 "--engine nccl across two processes (NCCL's unique id over our bootstrap)"
      expect_grep "$TMP/out" "Out of bounds values : 0 OK" "... all values right"
    fi
  else
    skip "--engine nccl on GPUs" "libnccl.so.2 not installed"
  fi
  TOPOTUNE_GPU_TRANSPORT=host TOPOTUNE_DEBUG=INFO run_pair -b 1K -e 64K -f 8 -n 2 --algo tree --proto ll
  expect_rc 0 "2 process ranks host-staged through shared memory"
  expect_grep "$TMP/out" "Out of bounds values : 0 OK" "... all values right"
  expect_grep "$TMP/err" "via host-staged \(shm\)" "... transport logged"
fi
finish
