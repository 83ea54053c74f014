#!/usr/bin/env bash
# topo-exec launched by mpirun in a build with MPI (like nccl-tests' MPI=1): one table from rank 0,
# #wrong 0 for every collective, a rank with different options or a failing rank stops everyone
# clearly, two emulated hosts (network namespaces) meet over a non-loopback address; and a library
# user's program (tests/cli/mpi_allreduce_example.c) built with mpicc against this build's
# libtopotune, bootstrapping with tt_comm_init_mpi (exec/tt_exec_mpi.h).
# Skips with the reason where mpirun is missing or cannot start here.
. "$(dirname "$0")/lib.sh"
X="$BIN/topo-exec"
export TOPOTUNE_TIMEOUT_MS=5000
unset NCCL_ALGO NCCL_PROTO RANK WORLD_SIZE MASTER_ADDR MASTER_PORT TOPOTUNE_FAULT TOPOTUNE_BOOTSTRAP_ADDR
# Open MPI in containers and CI, for this script only: run as root, more ranks than cores, only
# the self and shared-memory transports with ob1 (no openib/UCX/TCP probing and warnings on hosts
# with or without such hardware), no CMA single-copy (needs ptrace rights containers often lack).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_osc=^ucx OMPI_MCA_mca_base_component_show_load_errors=0
MPIRUN=(timeout 60 mpirun --allow-run-as-root --oversubscribe)
# ASan builds (make check-asan): Open MPI unloads its components (dlclose) in MPI_Finalize, so
# LeakSanitizer reports their allocations from "<unknown module>", which no suppression can name.
# Leak checking is off for the processes this script starts; the same executor code is
# leak-checked by test_topo_exec.sh (rendezvous mode) and the unit tests.  Everything else of
# ASan/UBSan stays on.
if nm "$BIN/../lib/libtopotune.a" 2>/dev/null | grep -q ' __asan_init'; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi

# no MPI needed for this one
run "$X" --mpi --host 2 -b 1K -e 1K
expect_rc 2 "--mpi with --host is refused"

if ! command -v mpirun >/dev/null; then
  skip "topo-exec under mpirun" "mpirun not installed (apt-get install openmpi-bin libopenmpi-dev)"; finish
fi
if ! timeout 30 mpirun --allow-run-as-root --oversubscribe -np 2 true >"$TMP/probe" 2>&1; then
  skip "topo-exec under mpirun" "mpirun cannot start 2 processes here: $(grep -v '^-*$' "$TMP/probe" | head -2 | tr '\n' ' ')"
  finish
fi

# two network namespaces joined by a veth pair (root only), for section 6
ns_ok=0
if netns_pair ttm 10.251.79; then
  ns_ok=1
fi

topo_exec_under_mpirun() {
# one_table FILE NAME: exactly one header and one summary (only rank 0 prints), every row #wrong 0
one_table() {
  local n
  n=$(grep -c '^# Collective test concluded' "$1")
  [ "$n" = 1 ] && ok "$2: one table (only rank 0 prints)" || not_ok "$2: $n tables"
  if awk '!/^#/ && NF { rows++; if (NF != 13 || $9 != "0" || $13 != "0") bad = 1 } END { exit (bad || !rows) }' "$1"; then
    ok "$2: every row has #wrong 0"
  else
    not_ok "$2: rows: $(grep -v '^#' "$1" | head -3)"
  fi
}

# 1. the nccl-tests way: mpirun -np N, no other setup
for np in 2 4; do
  t0=$(date +%s%N)
  run "${MPIRUN[@]}" -np $np "$X" -b 8 -e 4M -f 4 -c 1 --no-progress
  expect_rc 0 "mpirun -np $np topo-exec -b 8 -e 4M -f 4 -c 1 ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
  one_table "$TMP/out" "-np $np"
  expect_grep "$TMP/out" "^#  Rank +$((np - 1)) Group  0 Pid +[0-9]+ on .* shm$" "-np $np: all ranks listed with their pid and host"
  expect_no_grep "$TMP/out" 'Pid +-1 ' "-np $np: no rank without its pid"
  expect_grep "$TMP/out" '^ +4194304 |^ +2097152 ' "-np $np: the sweep reached the last size"
done

# 2. every collective, other types and ops, a non-zero root
for t in all_reduce reduce_scatter all_gather broadcast reduce; do
  run "${MPIRUN[@]}" -np 3 "$X" -t $t -b 24 -e 96K -f 8 -n 2 -r 2 --no-progress
  expect_rc 0 "-np 3 -t $t -r 2"
  one_table "$TMP/out" "-t $t"
done
run "${MPIRUN[@]}" -np 3 "$X" -d int64 -o max -b 1K -e 64K -f 8 -n 2 --algo ring --no-progress
expect_rc 0 "-np 3 -d int64 -o max --algo ring"
one_table "$TMP/out" "int64 max ring"
expect_grep "$TMP/out" 'algo ring' "the plan line shows --algo ring"

# --mpi without a launcher: an MPI singleton, one rank
run timeout 60 "$X" --mpi -b 1K -e 4K -f 2 -n 2 --no-progress
expect_rc 0 "--mpi outside mpirun: a singleton MPI job of one rank"
expect_grep "$TMP/out" '^#  Rank  0 Group  0 Pid +[0-9]+ ' "--mpi singleton: rank 0 listed with its pid"

# 3. ranks started with different options (MPMD): all stop before running anything, exit 2
t0=$(date +%s%N)
run "${MPIRUN[@]}" -np 1 "$X" -b 8 -e 4M -f 4 --no-progress : -np 1 "$X" -b 8 -e 1M -f 4 --no-progress
dt=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_rc 2 "MPMD with -e 4M on rank 0 and -e 1M on rank 1 exits 2 (${dt} ms)"
expect_grep "$TMP/err" 'rank 1: option -e \(maxbytes\) is 1048576 here but 4194304 on rank 0' "the mismatch names the rank, the option and both values"
expect_grep "$TMP/err" 'nothing run: rank 1 refused' "rank 0 says why it stops"
expect_no_grep "$TMP/out" 'Collective test concluded' "no table is printed"
run "${MPIRUN[@]}" -np 2 "$X" -t broadcast -b 1K -e 1K : -np 1 "$X" -t reduce -b 1K -e 1K
expect_rc 2 "MPMD with different -t exits 2"
expect_grep "$TMP/err" 'rank 2: option -t \(collective\) is reduce here but broadcast on rank 0' "-t mismatch named"
# issue #32 item 7: --cycles and --table are compared too, before anything runs
run "${MPIRUN[@]}" -np 1 "$X" -b 1K -e 1K --cycles 2 --no-progress : -np 1 "$X" -b 1K -e 1K --no-progress
expect_rc 2 "MPMD with --cycles 2 on rank 0 only exits 2"
expect_grep "$TMP/err" 'rank 1: option --cycles is 1 here but 2 on rank 0' "--cycles mismatch named"
expect_no_grep "$TMP/out" '^ +[0-9]+ ' "... nothing measured"
run "${MPIRUN[@]}" -np 1 "$X" -b 1K -e 1K : -np 1 "$X" -b 1K -e 1K --no-such-option
if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then ok "a rank with a bad option: the job fails (exit $RC), nobody hangs"; else not_ok "bad option on one rank: exit $RC"; fi
expect_grep "$TMP/err" "unknown option '--no-such-option'" "the bad option is named"
run "${MPIRUN[@]}" -np 2 "$X" -t reduce -r 2 -b 1K -e 1K
expect_rc 2 "-r 2 with 2 ranks is refused on every rank"

# 4. a rank failing mid-run (fault injection): every rank fails fast naming it, one summary
t0=$(date +%s%N)
run "${MPIRUN[@]}" -np 3 -x TOPOTUNE_FAULT=corrupt:1:3 "$X" -b 1K -e 64K -f 4 -n 2 --no-progress
dt=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ "$RC" -eq 1 ] && [ $dt -lt 15000 ]; then ok "corrupt header from rank 1: exit 1 after ${dt} ms"; else not_ok "fault: exit $RC after ${dt} ms"; fi
expect_grep "$TMP/err" 'rank 0: AllReduce #3 .*rank 1' "rank 0 names rank 1"
expect_grep "$TMP/err" 'rank 2: AllReduce #3 .*rank 1' "rank 2 names rank 1"
expect_grep "$TMP/out" '^# Collective test FAILED' "rank 0's table ends with the failure"

# 5. mpirun with MASTER_ADDR/MASTER_PORT set still takes the variables' rendezvous (as without MPI):
#    (its header has the rendezvous' "# job:" line) and knows every rank's pid from its host exchange
port=$(free_port)
run "${MPIRUN[@]}" -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$port "$X" -b 1K -e 1K -n 2 --no-progress
expect_rc 0 "mpirun with MASTER_ADDR/MASTER_PORT: exit 0"
expect_grep "$TMP/out" '^# job: ' "MASTER_ADDR/MASTER_PORT set: the variables' rendezvous is used, not MPI"
expect_grep "$TMP/out" '^#  Rank +1 Group  0 Pid +[0-9]+ on ' "MASTER_ADDR/MASTER_PORT set: rank 1's pid from the rendezvous"

# 6. two emulated hosts (network namespaces joined by a veth pair, own host names): mpirun starts
#    the second host's ranks through an rsh agent that enters its namespace.  Rank 0 must then bind
#    a non-loopback address (tt_host_address): shm inside a host, tcp between them.
if [ $ns_ok = 1 ]; then
  cat >"$TMP/agent.sh" <<AGENT
#!/bin/sh
shift   # the host name: always the second namespace
exec ip netns exec $NB unshare --uts sh -c "hostname node-b; \$*"
AGENT
  chmod +x "$TMP/agent.sh"
  printf '10.251.79.1 slots=2\n10.251.79.2 slots=2\n' >"$TMP/hosts"
  run timeout 60 ip netns exec $NA unshare --uts sh -c 'hostname node-a; exec "$@"' sh \
    mpirun --allow-run-as-root --hostfile "$TMP/hosts" -np 4 --mca plm_rsh_agent "$TMP/agent.sh" \
    --mca btl self,tcp "$X" -b 1K -e 1M -f 8 -n 2 --no-progress
  expect_rc 0 "2 hosts (netns) x 2 ranks under mpirun"
  one_table "$TMP/out" "2 hosts"
  expect_grep "$TMP/out" 'Rank +3 .* on +node-b .* shm\+tcp$' "2 hosts: rank 3 on node-b, shm inside a host, tcp between"
else
  skip "mpirun over 2 emulated hosts" "network namespaces not available here: $(head -c 200 "$TMP/ns.err")"
fi
}
if ldd "$X" 2>/dev/null | grep -q 'libmpi\.so'; then
  topo_exec_under_mpirun
else
  run "$X" --mpi -b 1K -e 1K
  expect_rc 2 "topo-exec without MPI: --mpi is refused"
  expect_grep "$TMP/err" 'built without MPI' "and the message says the build has no MPI"
  skip "topo-exec under mpirun (MPI bootstrap)" "this topo-exec was built without MPI (make MPI=0, or no Open MPI found)"
fi

# 7. a library user's program: tt_comm_init_mpi from tt_exec_mpi.h, built with mpicc
if ! command -v mpicc >/dev/null; then
  skip "tt_comm_init_mpi example" "mpicc not installed (apt-get install libopenmpi-dev)"; finish
fi
lib="$BIN/../lib/libtopotune.a"
extra=()
nm "$lib" 2>/dev/null | grep -q ' __asan_init' && extra+=(-fsanitize=address,undefined)
pcl=$(pkg-config --libs libxml-2.0 libcjson hwloc 2>/dev/null)
pkg-config --exists libibverbs 2>/dev/null && pcl="$pcl $(pkg-config --libs libibverbs)"
# shellcheck disable=SC2086
run mpicc -std=gnu11 -Wall -Wextra -Werror -O2 "${extra[@]}" -I"$ROOT/exec" -I"$ROOT/common" \
  "$ROOT/tests/cli/mpi_allreduce_example.c" "$lib" $pcl -ldl -lpthread -lm -o "$TMP/example"
expect_rc 0 "mpicc builds a program using tt_exec_mpi.h against libtopotune.a (no MPI inside the library)"
if ldd "$BIN/../lib/libtopotune.so" 2>/dev/null | grep -q libmpi; then not_ok "libtopotune.so links libmpi"
else ok "libtopotune.so does not depend on libmpi"; fi
run "${MPIRUN[@]}" -np 3 "$TMP/example"
expect_rc 0 "mpirun -np 3 example: world and split communicators, AllReduce checked against MPI_Allreduce"
[ "$(grep -c '^rank [0-2]: PASS 3 ranks' "$TMP/out")" = 3 ] && ok "all 3 ranks pass" \
  || not_ok "example: $(head -c 400 "$TMP/out") $(head -c 300 "$TMP/err")"
# the ranks meet on a non-loopback address of this host, as they would across hosts
addr=$( (ip -4 -o addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }') )
if [ -n "$addr" ]; then
  run "${MPIRUN[@]}" -np 3 -x TOPOTUNE_BOOTSTRAP_ADDR="$addr" "$TMP/example"
  expect_rc 0 "TOPOTUNE_BOOTSTRAP_ADDR=$addr (non-loopback): the example passes"
else
  skip "rendezvous on a non-loopback address" "this host has no global IPv4 address"
fi
run "${MPIRUN[@]}" -np 3 -x TOPOTUNE_BOOTSTRAP_ADDR=192.0.2.7 "$TMP/example" badaddr
expect_rc 0 "rank 0 cannot bind TOPOTUNE_BOOTSTRAP_ADDR: every rank returns an error, nobody hangs"
[ "$(grep -c "could not create the rendezvous: cannot listen on 192.0.2.7" "$TMP/out")" = 3 ] \
  && ok "all 3 ranks name rank 0 and the address" || not_ok "badaddr: $(head -c 400 "$TMP/out")"
finish
