#!/usr/bin/env bash
# topo-exec: nccl-tests table layout, exact checks, every collective, plan
# overrides, bad arguments, JSON, multi-process TCP runs on 127.0.0.1
# (options and torchrun variables), kill -9 of a rank, a rank that never comes.
. "$(dirname "$0")/lib.sh"
X="$BIN/topo-exec"
export TOPOTUNE_TIMEOUT_MS=5000
unset NCCL_ALGO NCCL_PROTO RANK WORLD_SIZE MASTER_ADDR MASTER_PORT


# check_table FILE NAME: every data row has the nccl-tests columns, #wrong 0,
# and the two summary lines are there.
check_table() {
  local f=$1 name=$2
  if awk '
    /^#/ { next }
    NF == 0 { next }
    { rows++
      if (NF != 13) { print "row has " NF " fields: " $0; bad=1; next }
      if ($1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+$/) { print "size/count not integers: " $0; bad=1 }
      if ($9 != "0" || $13 != "0") { print "#wrong not 0: " $0; bad=1 }
      for (i = 6; i <= 12; i++) if (i != 9 && $i !~ /^[0-9.e+-]+$/) { print "bad number " $i; bad=1 } }
    END { if (rows == 0) { print "no rows"; bad=1 } exit bad }' "$f" >"$TMP/awk.out"; then
    ok "$name: table rows have 13 columns and #wrong = 0"
  else
    not_ok "$name: $(head -3 "$TMP/awk.out")"
  fi
  expect_grep "$f" '^# Out of bounds values : 0 OK$' "$name: out-of-bounds line"
  expect_grep "$f" '^# Avg bus bandwidth    : [0-9.e+-]+' "$name: avg bus bandwidth line"
  expect_grep "$f" '^#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong $' "$name: column header (nccl-tests' trailing space)"
}

# 1. no arguments: short validated AllReduce sweep on host ranks
run "$X"
expect_rc 0 "no arguments: validated sweep exits 0"
check_table "$TMP/out" "no arguments"
expect_grep "$TMP/out" '^ +1048576 +262144 +float +sum +-1 ' "no arguments: sweep reaches 1 MiB"

# 2. every collective, odd sizes (not divisible by ranks or by 16), several types
for spec in "all_reduce int32 sum" "all_reduce half avg" "reduce_scatter bfloat16 sum" \
            "all_gather uint8 sum" "broadcast double sum" "reduce int64 max" "all_reduce float prod"; do
  set -- $spec
  run "$X" --host 3 -t "$1" -d "$2" -o "$3" -r 2 -b 1000 -e 100000 -f 7 -n 2 -w 1 -c 2 --chunk 4K --no-progress
  expect_rc 0 "-t $1 -d $2 -o $3 on 3 host ranks"
  check_table "$TMP/out" "-t $1 -d $2"
done
for a in ring tree halving-doubling; do
  run "$X" --host 4 --algo "$a" -b 4K -e 1M -f 16 -n 2
  expect_rc 0 "--algo $a on 4 ranks"
  check_table "$TMP/out" "--algo $a"
  expect_grep "$TMP/out" "algo $a from --algo" "--algo $a shown as requested"
done
TOPOTUNE_THREAD_NODES=2 run "$X" --host 5 --algo hierarchical -b 1000 -e 1M -f 32 -n 2 -o avg -d bfloat16
expect_rc 0 "--algo hierarchical on 5 ranks in 2 emulated nodes"
check_table "$TMP/out" "--algo hierarchical"
NCCL_ALGO=Tree run "$X" --host 3 -b 1K -e 1K -n 1
expect_rc 0 "NCCL_ALGO=Tree honoured"
expect_grep "$TMP/out" "algo tree from NCCL_ALGO" "NCCL_ALGO source is reported"

# 3. overrides that cannot apply are reported, not ignored
run "$X" --host 3 -t all_gather --algo tree -b 1K -e 1K
expect_rc 2 "tree for all_gather is refused"
expect_grep "$TMP/err" 'algorithm tree was requested for AllGather.*available: ring' "refusal says what is available"
NCCL_PROTO=LL run "$X" --host 2 -b 1K -e 1K
expect_rc 2 "NCCL_PROTO=LL refused on host ranks"
expect_grep "$TMP/err" 'protocol ll was requested.*NCCL_PROTO|NCCL_PROTO' "refusal names NCCL_PROTO"
run "$X" --host 3 --algo halving-doubling -b 1K -e 1K
expect_rc 2 "halving-doubling on 3 ranks refused"
expect_grep "$TMP/err" 'power-of-two' "refusal explains power-of-two"
NCCL_ALGO=Ring,Tree run "$X" --host 2 -b 1K -e 1K
expect_rc 2 "NCCL_ALGO lists are refused"

# 4. bad arguments: clear message, exit 2, nothing run
run "$X" -b 1M -e 1K;            expect_rc 2 "max < min refused"; expect_grep "$TMP/err" 'smaller than -b' "max < min message"
run "$X" -n 0;                   expect_rc 2 "zero iterations refused"
run "$X" --bogus;                expect_rc 2 "unknown flag refused"; expect_grep "$TMP/err" "unknown option '--bogus'" "unknown flag named"
run "$X" -d float8;              expect_rc 2 "unknown type refused"; expect_grep "$TMP/err" 'valid: int8' "valid types listed"
run "$X" -b 12Q;                 expect_rc 2 "bad size refused"
run "$X" -g 1;                   expect_rc 2 "-g without CUDA executor refused"; expect_grep "$TMP/err" 'use --host' "-g message points to --host"
run "$X" --host 2 -t broadcast -r 5; expect_rc 2 "root beyond ranks refused"
run "$X" --rank 0 --nranks 2;    expect_rc 2 "incomplete multi-process options refused"
expect_no_grep "$TMP/out" '^ +[0-9]' "no rows printed for a usage error"
run "$X" --host 2 -b 1K -e 4T;  expect_rc 2 "sizes above the available memory refused up front"
expect_grep "$TMP/err" 'MiB are available; lower -e' "memory refusal says what is needed and available"
# live progress line only when stderr is a terminal
if command -v script >/dev/null; then
  script -qec "$X --host 2 -b 1K -e 16K -f 4 -n 1" /dev/null >"$TMP/tty.out" 2>&1
  if grep -q $'\r\033\[K# all_reduce [0-9]*/3' "$TMP/tty.out"; then ok "progress line on a terminal"; else not_ok "no progress line on a terminal"; fi
  run "$X" --host 2 -b 1K -e 16K -f 4 -n 1
  expect_no_grep "$TMP/err" 'all_reduce [0-9]+/3' "no progress line when stderr is not a terminal"
else
  skip "progress line on a terminal" "script(1) not installed"
fi

# 4b. prediction source: topo-exec linked with another prediction source in place of
#     bin/cli_predict.c (the same three functions of bin/cli_predict.h) gains "pred" and
#     "err%" columns (and predicted_time in JSON)
CCX=${CC:-cc}
if command -v "$CCX" >/dev/null && command -v pkg-config >/dev/null && [ -f "$ROOT/$BUILD/lib/libtopotune.a" ]; then
  cat >"$TMP/pred.c" <<'C'
#include <stddef.h>
#include <string.h>
#include "cli_predict.h"
/* a fake model: 10 us per KiB for all_reduce, nothing for the rest */
int topo_exec_predict_us(const char *coll, size_t bytes, int nranks, const char *algo, const char *proto, double *us)
{
    if (strcmp(coll, "all_reduce")) return 1;
    *us = 10.0 * (double)bytes / 1024.0;
    return 0;
}
int topo_exec_predict_plan_us(const char *coll, size_t bytes, int nranks, const char *algo, const char *proto,
                              int channels, int kind, double *us)
{
    return topo_exec_predict_us(coll, bytes, nranks, algo, proto, us);
}
int topo_exec_predict_enabled(void) { return 1; }
C
  san=""  # a SANITIZE=1 library needs the same instrumentation at link time
  if command -v nm >/dev/null && nm "$ROOT/$BUILD/lib/libtopotune.a" 2>/dev/null | grep -q '__asan_'; then
    san="-fsanitize=address,undefined"
  fi
  culibs=""  # a CUDA build's library needs the CUDA runtime (the GPU mode is linked in)
  if command -v nm >/dev/null && nm "$ROOT/$BUILD/lib/libtopotune.a" 2>/dev/null | grep -q ' U cudaMalloc$'; then
    nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    culibs="-L$(dirname "$(dirname "$nv")")/lib64 -lcudart_static -lrt -lstdc++"
  fi
  clisrc=$(ls "$ROOT"/bin/cli_*.c | grep -v '/cli_predict\.c$')
  if "$CCX" $san -std=gnu11 -D_GNU_SOURCE -pthread -I"$ROOT/exec" -I"$ROOT/common" -I"$ROOT/tune" -I"$ROOT/topo" \
       -I"$ROOT/xml" $(pkg-config --cflags libcjson libxml-2.0) -I"$ROOT/bin" -o "$TMP/topo-exec-pred" "$ROOT/bin/topo-exec.c" "$ROOT/bin/topo_exec_mpi.c" \
       $clisrc "$TMP/pred.c" "$ROOT/$BUILD/lib/libtopotune.a" \
       $(pkg-config --libs libcjson libxml-2.0 hwloc) -ldl -lm $culibs 2>"$TMP/cc.err"; then
    run "$TMP/topo-exec-pred" --host 2 -b 1K -e 4K -f 4 -n 2 -J "$TMP/p.json"
    expect_rc 0 "topo-exec with a prediction source"
    expect_grep "$TMP/out" '#wrong     pred    err%     time' "prediction columns in the header"
    if awk '!/^#/ && NF { n++; if (NF != 17) bad=1; if ($10 != "10.00" && $10 != "40.00") bad=1 } END { exit !(n == 2 && !bad) }' "$TMP/out"; then
      ok "rows have 17 columns with the predicted time"; else not_ok "prediction rows: $(grep -v '^#' "$TMP/out" | head -2)"; fi
    expect_grep "$TMP/p.json" '"predicted_time":\s*10' "predicted_time in JSON"
    run "$TMP/topo-exec-pred" --host 2 -t all_gather -b 1K -e 1K -n 1
    if awk '!/^#/ && NF { if ($10 != "N/A" || $11 != "N/A") bad=1 } END { exit bad }' "$TMP/out"; then
      ok "no prediction -> N/A"; else not_ok "N/A columns: $(grep -v '^#' "$TMP/out" | head -1)"; fi
  else
    not_ok "building topo-exec with a prediction source: $(head -c 300 "$TMP/cc.err")"
  fi
else
  skip "prediction source" "no C compiler or pkg-config"
fi

# 5. JSON output (atomic file)
run "$X" --host 2 -b 1K -e 64K -f 8 -n 2 -J "$TMP/r.json"
expect_rc 0 "-J run"
if command -v python3 >/dev/null; then
  if python3 - "$TMP/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["collective"] == "all_reduce" and d["config"]["nranks"] == 2
assert [r["size"] for r in d["results"]] == [1024, 8192, 65536], d["results"]
for r in d["results"]:
    for p in ("out_of_place", "in_place"):
        assert r[p]["nwrong"] == 0 and r[p]["bus_bw"] >= 0 and r[p]["time"] > 0
assert d["out_of_bounds"]["okay"] == "true" and d["errors"] == [""]  # nccl-tests: strings for booleans, [""] for no error
PY
  then ok "JSON has config, 3 results with nwrong 0, no errors"; else not_ok "JSON content"; fi
else
  skip "JSON content" "python3 not installed"
fi

# 6. multi-process on 127.0.0.1 (2..4 processes): TCP rendezvous, then shared
# memory between the processes of this host (or TCP with TOPOTUNE_TRANSPORT=tcp)
ls /dev/shm 2>/dev/null | grep '^tt-' >"$TMP/shm.before"
for n in 2 3 4; do
  port=$(free_port); pids=()
  tr=shm; [ $n -eq 3 ] && tr=tcp
  for ((r = 0; r < n; r++)); do
    TOPOTUNE_TRANSPORT=$tr "$X" --rank $r --nranks $n --master 127.0.0.1:$port -t all_reduce -b 1000 -e 300000 -f 17 -n 2 \
      >"$TMP/mp$r.out" 2>"$TMP/mp$r.err" & pids+=($!)
  done
  rcs=""
  for ((r = 0; r < n; r++)); do wait ${pids[$r]}; rcs="$rcs$?"; done
  if [ "$rcs" = "$(printf '0%.0s' $(seq $n))" ]; then ok "$n processes over TCP exit 0"; else not_ok "$n processes over TCP: exit codes $rcs ($(cat "$TMP"/mp*.err | head -c 300))"; fi
  check_table "$TMP/mp0.out" "$n processes"
  expect_grep "$TMP/mp0.out" "Rank +$((n-1)) .* $tr\$" "$n processes: transport $tr, all ranks listed"
  if [ ! -s "$TMP/mp1.out" ]; then ok "$n processes: only rank 0 prints the table"; else not_ok "rank 1 printed output"; fi
done
# an unknown TOPOTUNE_TRANSPORT is refused by every rank, the valid names listed from the transport table
port=$(free_port)
for r in 0 1; do
  TOPOTUNE_TRANSPORT=carrier-pigeon TOPOTUNE_TIMEOUT_MS=4000 "$X" --rank $r --nranks 2 --master 127.0.0.1:$port -b 1K -e 1K -n 1 \
    >"$TMP/bt$r.out" 2>"$TMP/bt$r.err" & eval bp$r=$!
done
wait $bp0; r0=$?; wait $bp1; r1=$?
if [ $r0 != 0 ] && [ $r1 != 0 ]; then ok "unknown TOPOTUNE_TRANSPORT refused"; else not_ok "unknown TOPOTUNE_TRANSPORT: exit codes $r0$r1"; fi
expect_grep "$TMP/bt0.err" "TOPOTUNE_TRANSPORT='carrier-pigeon' \\(valid: auto, shm, ib, tcp\\)" "unknown TOPOTUNE_TRANSPORT: valid names listed"
port=$(free_port)
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$X" -t reduce_scatter -b 4K -e 4K -n 1 \
    >"$TMP/tr$r.out" 2>"$TMP/tr$r.err" & eval tp$r=$!
done
wait $tp0; r0=$?; wait $tp1; r1=$?
if [ $r0$r1 = 00 ]; then ok "torchrun variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)"; else not_ok "torchrun variables: $r0$r1 $(cat "$TMP/tr0.err")"; fi
check_table "$TMP/tr0.out" "torchrun variables"

# 6b. launched by mpirun (Open MPI's rank variables; no MPI library in topotune)
if command -v mpirun >/dev/null; then
  port=$(free_port)
  run mpirun --allow-run-as-root --oversubscribe -np 3 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$port \
    "$X" -b 1000 -e 100000 -f 10 -n 2 --no-progress
  expect_rc 0 "mpirun -np 3 (OMPI_COMM_WORLD_RANK/SIZE + MASTER_ADDR/PORT)"
  check_table "$TMP/out" "mpirun"
  expect_grep "$TMP/out" 'Rank +2 .* shm$' "mpirun: 3 ranks joined"
else
  skip "mpirun launch" "mpirun not installed"
fi
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=4 run "$X" -b 1K -e 1K
expect_rc 2 "launcher variables without MASTER_ADDR/PORT refused (no silent independent jobs)"
expect_grep "$TMP/err" 'OMPI_COMM_WORLD_SIZE=4 says this process is one of several ranks' "refusal explains why"

# 7. kill -9 of one rank mid-collective: the others fail fast, naming it
#    (shm: shared memory between the processes, TCP kept as liveness channel; tcp: sockets only)
for tr in shm tcp; do
port=$(free_port); pids=()
for r in 0 1 2 3; do
  TOPOTUNE_TRANSPORT=$tr TOPOTUNE_TIMEOUT_MS=4000 "$X" --rank $r --nranks 4 --master 127.0.0.1:$port -b 64K -e 1M -f 16 -n 1000000 -c 0 \
    -J "$TMP/k$r.json" >"$TMP/k$r.out" 2>"$TMP/k$r.err" & pids+=($!)
done
# wait until rank 0 printed its header (all connected), then a little more
for i in $(seq 100); do grep -q 'in-place' "$TMP/k0.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
kill -9 ${pids[2]}; t0=$(date +%s%N)
for r in 0 1 3; do
  wait ${pids[$r]}; rc=$?; dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ $rc -ne 0 ] && [ $dt -lt 4000 ]; then ok "$tr: kill -9 rank 2: rank $r exits $rc after ${dt} ms (< deadline)"; else not_ok "$tr: kill -9: rank $r rc=$rc after ${dt} ms"; fi
  expect_grep "$TMP/k$r.err" 'rank 2' "$tr: kill -9: rank $r names rank 2"
  expect_grep "$TMP/k$r.err" 'AllReduce #[0-9]+ \((ring|tree|recursive-doubling)\) step' "$tr: kill -9: rank $r names collective and step"
done
wait ${pids[2]} 2>/dev/null
expect_grep "$TMP/k0.out" '^# Collective test FAILED' "$tr: kill -9: rank 0's table ends with FAILED"
if command -v python3 >/dev/null; then
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["errors"] and "rank 2" in d["errors"][0], d["errors"]' "$TMP/k0.json"; then
    ok "$tr: kill -9: JSON written with the error"; else not_ok "$tr: kill -9: JSON error entry"; fi
fi
done
ls /dev/shm 2>/dev/null | grep '^tt-' >"$TMP/shm.after"
if cmp -s "$TMP/shm.before" "$TMP/shm.after"; then ok "no /dev/shm segments left behind (kill -9 included)"; else not_ok "left in /dev/shm: $(comm -13 "$TMP/shm.before" "$TMP/shm.after" | head -5)"; fi

# 7b. a rank that is alive but stuck (SIGSTOP): the others give up at the
#     deadline and every one of them names it (failure reports relayed by rank 0)
for tr in shm tcp; do
port=$(free_port); pids=()
for r in 0 1 2 3; do
  TOPOTUNE_TRANSPORT=$tr TOPOTUNE_TIMEOUT_MS=1000 "$X" --rank $r --nranks 4 --master 127.0.0.1:$port -b 1M -e 1M -n 1000000 -c 0 \
    >"$TMP/st$r.out" 2>"$TMP/st$r.err" & pids+=($!)
done
for i in $(seq 100); do grep -q 'in-place' "$TMP/st0.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
kill -STOP ${pids[3]}; t0=$(date +%s%N)
for r in 0 1 2; do
  wait ${pids[$r]}; rc=$?; dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ $rc -eq 1 ] && [ $dt -lt 4000 ]; then ok "$tr: stuck rank 3: rank $r exits 1 after ${dt} ms (deadline 1000 ms)"; else not_ok "$tr: stuck rank 3: rank $r rc=$rc after ${dt} ms"; fi
  expect_grep "$TMP/st$r.err" '(waiting for|sending to) rank 3' "$tr: stuck rank 3: rank $r names rank 3 ($(head -c 160 "$TMP/st$r.err"))"
done
kill -9 ${pids[3]}; wait ${pids[3]} 2>/dev/null
done

# 8. a rank that never comes: the others give up within the deadline, naming it
port=$(free_port); pids=()
for r in 0 1; do
  TOPOTUNE_TIMEOUT_MS=800 "$X" --rank $r --nranks 3 --master 127.0.0.1:$port -b 1K -e 1K \
    >"$TMP/m$r.out" 2>"$TMP/m$r.err" & pids+=($!)
done
t0=$(date +%s%N)
for r in 0 1; do
  wait ${pids[$r]}; rc=$?; dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ $rc -eq 1 ] && [ $dt -lt 5000 ]; then ok "missing rank: rank $r exits 1 after ${dt} ms"; else not_ok "missing rank: rank $r rc=$rc after ${dt} ms"; fi
  expect_grep "$TMP/m$r.err" 'rank\(s\) 2 never connected' "missing rank: rank $r names rank 2"
done

# 9. two "nodes": network namespaces joined by a veth pair, each with its own host
#    name (UTS namespace), 2 ranks per node: shm inside a node, TCP between nodes
ns_ok=0
if netns_pair ttx 10.251.77; then
  ns_ok=1
fi
if [ $ns_ok = 1 ]; then
  port=$(free_port); pids=()
  for r in 0 1 2 3; do
    ns=$NA; node=node-a; [ $r -ge 2 ] && { ns=$NB; node=node-b; }
    ip netns exec $ns unshare --uts sh -c "hostname $node && exec \"\$0\" \"\$@\"" \
      "$X" --rank $r --nranks 4 --master 10.251.77.1:$port -t all_reduce -b 1000 -e 1M -f 32 -n 2 \
      >"$TMP/ns$r.out" 2>"$TMP/ns$r.err" & pids+=($!)
  done
  rcs=""; for r in 0 1 2 3; do wait ${pids[$r]}; rcs="$rcs$?"; done
  if [ "$rcs" = 0000 ]; then ok "2 nodes (netns + veth) x 2 ranks exit 0"; else not_ok "2 nodes: exit codes $rcs ($(head -c 300 "$TMP/ns0.err"))"; fi
  check_table "$TMP/ns0.out" "2 nodes"
  expect_grep "$TMP/ns0.out" 'Rank +3 .* shm\+tcp$' "2 nodes: shm inside a node, tcp between nodes"
  port=$(free_port); pids=()
  for r in 0 1 2 3; do
    ns=$NA; node=node-a; [ $r -ge 2 ] && { ns=$NB; node=node-b; }
    ip netns exec $ns unshare --uts sh -c "hostname $node && exec \"\$0\" \"\$@\"" \
      "$X" --rank $r --nranks 4 --master 10.251.77.1:$port --algo hierarchical -b 1000 -e 1M -f 32 -n 2 \
      >"$TMP/nh$r.out" 2>"$TMP/nh$r.err" & pids+=($!)
  done
  rcs=""; for r in 0 1 2 3; do wait ${pids[$r]}; rcs="$rcs$?"; done
  if [ "$rcs" = 0000 ]; then ok "2 nodes: --algo hierarchical exits 0"; else not_ok "2 nodes hierarchical: exit codes $rcs ($(head -c 300 "$TMP/nh0.err"))"; fi
  check_table "$TMP/nh0.out" "2 nodes hierarchical"
  # a node that disappears: kill both ranks of node b mid-run
  port=$(free_port); pids=()
  for r in 0 1 2 3; do
    ns=$NA; node=node-a; [ $r -ge 2 ] && { ns=$NB; node=node-b; }
    TOPOTUNE_TIMEOUT_MS=4000 ip netns exec $ns unshare --uts sh -c "hostname $node && exec \"\$0\" \"\$@\"" \
      "$X" --rank $r --nranks 4 --master 10.251.77.1:$port -b 1M -e 1M -n 1000000 -c 0 \
      >"$TMP/nk$r.out" 2>"$TMP/nk$r.err" & pids+=($!)
  done
  for i in $(seq 100); do grep -q 'in-place' "$TMP/nk0.out" 2>/dev/null && break; sleep 0.1; done
  sleep 0.3
  kill -9 ${pids[2]} ${pids[3]}; t0=$(date +%s%N)
  for r in 0 1; do
    wait ${pids[$r]}; rc=$?; dt=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [ $rc -ne 0 ] && [ $dt -lt 4000 ]; then ok "node b killed: rank $r exits $rc after ${dt} ms"; else not_ok "node b killed: rank $r rc=$rc after ${dt} ms"; fi
    expect_grep "$TMP/nk$r.err" 'rank [23]' "node b killed: rank $r names a rank of node b"
  done
  wait ${pids[2]} ${pids[3]} 2>/dev/null
else
  skip "2 nodes over network namespaces" "namespaces not available here (need root, ip, unshare): $(head -c 200 "$TMP/ns.err")"
fi
ns_cleanup

finish
