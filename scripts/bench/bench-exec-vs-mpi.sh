#!/usr/bin/env bash
# bench-exec-vs-mpi.sh - topo-exec's AllReduce vs Open MPI's MPI_Allreduce on
# this machine's CPUs, side by side, written as a markdown table.
#
#   scripts/bench/bench-exec-vs-mpi.sh [NPROCS] [MINBYTES] [MAXBYTES] [OUT.md]
#
# Defaults: 2 processes, 8 bytes to 64 MiB (issue #34 item 4's goal: topo-exec's
# time at most MPI_Allreduce's at every size).  MINBYTES may be as small as 8
# (two floats: nccl-tests' smallest AllReduce); MAXBYTES is measured even where
# the x4 steps pass over it (8 B x 4^k never hits 64 MiB).  The table's ratio
# column is topo-exec's median time over MPI's (below 1.00: topo-exec faster).
#
# Both run NPROCS processes on 127.0.0.1, float sum, out-of-place, sizes x4
# from MINBYTES to MAXBYTES; topo-exec uses its default transport (shared
# memory between the processes) and default algorithm choice; MPI uses
# whatever Open MPI picks (vader/sm BTL, tuned collectives).  Needs mpicc and
# mpirun (Debian: libopenmpi-dev openmpi-bin) and a built topo-exec.
#
# The machine may be shared: every size is measured REPS times (default 3),
# the programs interleaved (MPI, topo-exec[, base]) so that a burst of load
# hits all of them, and the table gives the MEDIAN time of each and the ratio
# of the medians.  Small sizes get enough iterations (2000 below 64 KiB) that
# one scheduling hiccup does not decide the figure.  BASE=path/to/topo-exec
# adds a second topo-exec (e.g. a build of an older commit) as more columns,
# measured in the same loop.  The load average is printed before and after.
# RAW=file appends every repetition's time per size and program (for a log).
set -euo pipefail
cd "$(dirname "$0")/../.."
NP=${1:-2}; MINB=${2:-8}; MAXB=${3:-67108864}; OUT=${4:-/dev/stdout}
BUILD=${BUILD:-build}; X=$BUILD/bin/topo-exec; BASE=${BASE:-}; REPS=${REPS:-3}
command -v mpicc >/dev/null || { echo "bench: mpicc not found (apt-get install libopenmpi-dev openmpi-bin)" >&2; exit 2; }
[ -x "$X" ] || { echo "bench: $X not built (make BUILD=$BUILD)" >&2; exit 2; }
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "bench: BASE=$BASE is not an executable" >&2; exit 2; }
case "$REPS" in ''|*[!0-9]*|0) echo "bench: REPS=$REPS must be a positive integer" >&2; exit 2;; esac
case "$NP" in ''|*[!0-9]*|0|1) echo "bench: NPROCS=$NP must be an integer of at least 2" >&2; exit 2;; esac
for v in "$MINB" "$MAXB"; do
  case "$v" in ''|*[!0-9]*) echo "bench: sizes are byte counts ('$v')" >&2; exit 2;; esac
done
[ "$MINB" -ge 8 ] && [ $((MINB % 4)) -eq 0 ] && [ $((MAXB % 4)) -eq 0 ] && [ "$MAXB" -ge "$MINB" ] ||
  { echo "bench: MINBYTES ($MINB) must be at least 8, both multiples of 4 (floats), MAXBYTES >= MINBYTES" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/mpi_ar" scripts/bench/bench_mpi_allreduce.c
iters_for() {
  local b=$1
  if [ "$b" -ge 67108864 ]; then echo 3; elif [ "$b" -ge 4194304 ]; then echo 10
  elif [ "$b" -ge 262144 ]; then echo 100; elif [ "$b" -ge 65536 ]; then echo 500; else echo 2000; fi
}
warm_for() { local b=$1; if [ "$b" -ge 4194304 ]; then echo 2; else echo 20; fi; }

# one topo-exec run: prints "size time_us busbw ok|WRONG"; started by mpirun when the binary was
# built with MPI (MPI bootstrap, as nccl-tests), else by hand with a TCP rendezvous on 127.0.0.1
run_tt() {
  local bin=$1 b=$2 launch r p port
  local args=(-b "$b" -e "$b" -n "$(iters_for "$b")" -w "$(warm_for "$b")" -c 1 --no-progress)
  if ldd "$bin" 2>/dev/null | grep -q 'libmpi\.so'; then launch=mpirun; else launch=rendezvous; fi
  if [ $launch = mpirun ]; then
    mpirun --allow-run-as-root --oversubscribe -np "$NP" "$bin" "${args[@]}" >"$tmp/tt0.out" 2>&1 ||
      { echo "bench: $bin failed at $b bytes:" >&2; tail -5 "$tmp/tt0.out" >&2; exit 1; }
  else
    port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
    local pids=()
    for ((r = 0; r < NP; r++)); do
      "$bin" --rank $r --nranks "$NP" --master 127.0.0.1:$port "${args[@]}" >"$tmp/tt$r.out" 2>&1 & pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || { echo "bench: $bin failed at $b bytes" >&2; exit 1; }; done
  fi
  awk '/^ +[0-9]+ / && NF >= 13 { print $1, $6, $8, ($9 == "0" ? "ok" : "WRONG") }' "$tmp/tt0.out" # rows only (not logs)
}
run_mpi() {
  local b=$1
  mpirun --allow-run-as-root --oversubscribe -np "$NP" "$tmp/mpi_ar" "$b" "$b" 4 "$(iters_for "$b")" "$(warm_for "$b")"
}
# median of the second column of the lines of file $1 (time); prints "time busbw checks"
median() { sort -g -k2,2 "$1" | awk '{ l[NR] = $0 } END { split(l[int((NR + 1) / 2)], f, " "); c = "ok"
  for (i = 1; i <= NR; i++) { split(l[i], g, " "); if (g[4] != "ok") c = "WRONG" } print f[2], f[3], c }'; }

echo "bench: load average before: $(cut -d' ' -f1-3 /proc/loadavg), $REPS repetitions, $(date -u '+%Y-%m-%d %H:%M UTC')" >&2
{
  if [ -n "$BASE" ]; then
    echo "| size (B) | topo-exec time (us) | MPI_Allreduce time (us) | base topo-exec time (us) | exec/MPI | base/MPI | exec/base | checks |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---|"
  else
    echo "| size (B) | topo-exec time (us) | topo-exec busbw (GB/s) | MPI_Allreduce time (us) | MPI busbw (GB/s) | time ratio exec/MPI | checks |"
    echo "|---:|---:|---:|---:|---:|---:|---|"
  fi
} >"$OUT"
# the sizes: x4 from MINBYTES, and MAXBYTES itself
sizes=()
for ((b = MINB; b <= MAXB; b *= 4)); do sizes+=("$b"); done
[ "${sizes[${#sizes[@]} - 1]}" -eq "$MAXB" ] || sizes+=("$MAXB")
for b in "${sizes[@]}"; do
  : >"$tmp/m"; : >"$tmp/t"; : >"$tmp/o"
  for ((k = 0; k < REPS; k++)); do
    run_mpi "$b" >>"$tmp/m"
    run_tt "$X" "$b" >>"$tmp/t"
    [ -z "$BASE" ] || run_tt "$BASE" "$b" >>"$tmp/o"
  done
  if [ -n "${RAW:-}" ]; then # every repetition's time, for the log: "size mpi|exec|base t1 t2 ..."
    { echo "$b mpi $(awk '{ printf "%s ", $2 }' "$tmp/m")"; echo "$b exec $(awk '{ printf "%s ", $2 }' "$tmp/t")"
      [ -z "$BASE" ] || echo "$b base $(awk '{ printf "%s ", $2 }' "$tmp/o")"; } >>"$RAW"
  fi
  read -r mt mbw mc < <(median "$tmp/m")
  read -r tt tbw tc < <(median "$tmp/t")
  if [ -n "$BASE" ]; then
    read -r ot obw oc < <(median "$tmp/o")
    awk -v b="$b" -v t="$tt" -v m="$mt" -v o="$ot" -v c="exec $tc, mpi $mc, base $oc" \
      'BEGIN { printf "| %d | %s | %s | %s | %.2f | %.2f | %.2f | %s |\n", b, t, m, o, t / m, o / m, t / o, c }' >>"$OUT"
  else
    awk -v b="$b" -v t="$tt" -v tb="$tbw" -v m="$mt" -v mb="$mbw" -v c="exec $tc, mpi $mc" \
      'BEGIN { printf "| %d | %s | %s | %s | %s | %.2f | %s |\n", b, t, tb, m, mb, t / m, c }' >>"$OUT"
  fi
done
echo "bench: load average after: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')" >&2
