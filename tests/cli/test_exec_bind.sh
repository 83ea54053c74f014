#!/usr/bin/env bash
# Host ranks are bound by default where this host has a core for each (issue #34 item 5): the header's
# "# bound (default: ...)" line names the CPUs, one core per rank in the order of exec_bind.c (one hardware
# thread of every core of the process's CPU mask first); --bind none opts out and says so; more ranks than
# cores, or a CPU mask (taskset) with fewer cores than ranks, are not bound and the header says why; a mask of
# one CPU is respected; process ranks of one host take different cores (their local rank index decides).
. "$(dirname "$0")/lib.sh"
X="$BIN/topo-exec"
[ -x "$X" ] || { skip "host binding" "topo-exec not built"; finish; }
unset TOPOTUNE_HOST_BIND RANK WORLD_SIZE MASTER_ADDR MASTER_PORT OMPI_COMM_WORLD_RANK PMI_RANK
# the core order exec_bind.c documents, from sysfs and this process's CPU mask: "cpu cpu ..." (first threads
# of the cores in mask order, then the second threads)
order() {
  python3 - <<'P'
import os
cpus = sorted(os.sched_getaffinity(0))
def rd(c, w):
    try: return int(open(f"/sys/devices/system/cpu/cpu{c}/topology/{w}").read())
    except Exception: return -1
seen, lvl = {}, {}
for c in cpus:
    k = (rd(c, "physical_package_id"), rd(c, "core_id"))
    lvl[c] = seen.get(k, 0) if k[1] >= 0 else 0
    seen[k] = seen.get(k, 0) + 1
print(" ".join(str(c) for l in range(max(lvl.values()) + 1) for c in cpus if lvl[c] == l))
print(sum(1 for c in cpus if lvl[c] == 0))
P
}
read -r -a ORDER < <(order | head -1)
CORES=$(order | tail -1)
DEF='default: a core per rank; --bind none or TOPOTUNE_HOST_BIND=none opts out'
bound_line() { grep -E '^# (not )?bound' "$1"; }

if [ "$CORES" -ge 2 ]; then
  run "$X" --host 2 -b 8 -e 8 -n 10 --no-progress
  want="# bound ($DEF): rank 0 cpu ${ORDER[0]} rank 1 cpu ${ORDER[1]}"
  [ "$RC" -eq 0 ] && [ "$(bound_line "$TMP/out")" = "$want" ] && grep -q 'Out of bounds values : 0 OK' "$TMP/out" \
    && ok "--host 2 by default: bound to cores ${ORDER[0]} and ${ORDER[1]}, said in the header, exact" \
    || not_ok "--host 2 default: exit $RC, '$(bound_line "$TMP/out")' (wanted '$want') $(head -c 200 "$TMP/err")"
else
  skip "--host 2 bound by default" "this process's CPU mask has $CORES core(s)"
fi

run "$X" --host 2 -b 8 -e 8 -n 10 --no-progress --bind none
[ "$RC" -eq 0 ] && [ "$(bound_line "$TMP/out")" = "# not bound (TOPOTUNE_HOST_BIND=none)" ] \
  && ok "--bind none: not bound, said in the header" || not_ok "--bind none: exit $RC, '$(bound_line "$TMP/out")'"
run env TOPOTUNE_HOST_BIND=none "$X" --host 2 -b 8 -e 8 -n 10 --no-progress
[ "$(bound_line "$TMP/out")" = "# not bound (TOPOTUNE_HOST_BIND=none)" ] \
  && ok "TOPOTUNE_HOST_BIND=none: not bound" || not_ok "TOPOTUNE_HOST_BIND=none: '$(bound_line "$TMP/out")'"

n=$((CORES + 1))
run "$X" --host $n -b 8 -e 8 -n 5 --no-progress
want="# not bound (default: $n ranks on this host, $CORES core$([ "$CORES" = 1 ] || echo s) in this process's CPU mask)"
[ "$RC" -eq 0 ] && [ "$(bound_line "$TMP/out")" = "$want" ] \
  && ok "--host $n on $CORES core(s): not bound, the header says why" || not_ok "--host $n: exit $RC, '$(bound_line "$TMP/out")' (wanted '$want')"

if command -v taskset >/dev/null; then
  last=${ORDER[$((${#ORDER[@]} - 1))]}
  run taskset -c "$last" "$X" --host 1 -b 8 -e 8 -n 5 --no-progress
  [ "$(bound_line "$TMP/out")" = "# bound ($DEF): rank 0 cpu $last" ] \
    && ok "a mask of CPU $last (taskset): the rank stays on it" || not_ok "taskset -c $last: '$(bound_line "$TMP/out")'"
  run taskset -c "$last" "$X" --host 2 -b 8 -e 8 -n 5 --no-progress
  [ "$RC" -eq 0 ] && [ "$(bound_line "$TMP/out")" = "# not bound (default: 2 ranks on this host, 1 core in this process's CPU mask)" ] \
    && ok "2 ranks in a 1-CPU mask: not bound, the header says why" || not_ok "taskset 2 ranks: exit $RC '$(bound_line "$TMP/out")'"
else
  skip "a restricted CPU mask" "no taskset"
fi

# process ranks on one host: the local rank index picks the core (rank 0's header; rank 1 says it at INFO)
if [ "$CORES" -ge 2 ]; then
  port=$(free_port)
  env TOPOTUNE_TIMEOUT_MS=20000 "$X" --rank 0 --nranks 2 --master 127.0.0.1:$port -b 8 -e 8 -n 5 --no-progress \
    >"$TMP/p0.out" 2>"$TMP/p0.err" &
  p0=$!
  env TOPOTUNE_TIMEOUT_MS=20000 TOPOTUNE_DEBUG=INFO TOPOTUNE_DEBUG_SUBSYS=exec "$X" --rank 1 --nranks 2 \
    --master 127.0.0.1:$port -b 8 -e 8 -n 5 --no-progress >"$TMP/p1.out" 2>"$TMP/p1.err" &
  p1=$!
  wait $p0; rc0=$?; wait $p1; rc1=$?
  [ "$rc0$rc1" = 00 ] && [ "$(bound_line "$TMP/p0.out")" = "# bound ($DEF): rank 0 cpu ${ORDER[0]}" ] \
    && grep -q "rank 1: worker bound to CPU ${ORDER[1]} (default, local rank 1 of 2)" "$TMP/p1.err" \
    && ok "2 processes: rank 0 on CPU ${ORDER[0]}, rank 1 on CPU ${ORDER[1]}" \
    || not_ok "2 processes: rcs $rc0$rc1, '$(bound_line "$TMP/p0.out")'; $(grep -i bound "$TMP/p1.err" | head -c 300)"
else
  skip "2 processes bound to 2 cores" "this process's CPU mask has $CORES core(s)"
fi

# a launcher that bound each process to one CPU (mpirun's default for 2 ranks): that CPU is the binding
if command -v taskset >/dev/null && [ "${#ORDER[@]}" -ge 2 ]; then
  port=$(free_port)
  env TOPOTUNE_TIMEOUT_MS=20000 taskset -c "${ORDER[1]}" "$X" --rank 0 --nranks 2 --master 127.0.0.1:$port -b 8 -e 8 -n 5 \
    --no-progress >"$TMP/q0.out" 2>"$TMP/q0.err" &
  p0=$!
  env TOPOTUNE_TIMEOUT_MS=20000 taskset -c "${ORDER[0]}" "$X" --rank 1 --nranks 2 --master 127.0.0.1:$port -b 8 -e 8 -n 5 \
    --no-progress >"$TMP/q1.out" 2>"$TMP/q1.err" &
  p1=$!
  wait $p0; rc0=$?; wait $p1; rc1=$?
  want="# bound (default: this process's CPU mask holds CPU ${ORDER[1]} alone, as its launcher bound it): rank 0 cpu ${ORDER[1]}"
  [ "$rc0$rc1" = 00 ] && [ "$(bound_line "$TMP/q0.out")" = "$want" ] \
    && ok "2 processes each in a 1-CPU mask: the launcher's CPU is said" || not_ok "1-CPU masks: rcs $rc0$rc1 '$(bound_line "$TMP/q0.out")'"
else
  skip "processes in 1-CPU masks" "no taskset or one CPU"
fi

run env TOPOTUNE_HOST_BIND=numa "$X" --host 2 -b 8 -e 8 -n 1 --no-progress
[ "$RC" -eq 2 ] && grep -q "TOPOTUNE_HOST_BIND='numa': must be auto, core, cpu or none" "$TMP/err" \
  && ok "TOPOTUNE_HOST_BIND=numa: exit 2 naming the choices" || not_ok "numa: exit $RC $(head -c 200 "$TMP/err")"
finish
