#!/usr/bin/env bash
# bench-exec-vs-mpi.sh - topo-exec's AllReduce vs Open MPI's MPI_Allreduce on
# this machine's CPUs, side by side, written as a markdown table.
#
#   scripts/bench/bench-exec-vs-mpi.sh [NPROCS] [MINBYTES] [MAXBYTES] [OUT.md]
#
# Both run NPROCS processes on 127.0.0.1, float sum, out-of-place, sizes x4
# from MINBYTES to MAXBYTES; topo-exec uses its default transport (shared
# memory between the processes) and default algorithm choice; MPI uses
# whatever Open MPI picks (vader/sm BTL, tuned collectives).  Needs mpicc and
# mpirun (Debian: libopenmpi-dev openmpi-bin) and a built topo-exec.
set -euo pipefail
cd "$(dirname "$0")/../.."
NP=${1:-4}; MINB=${2:-1024}; MAXB=${3:-268435456}; OUT=${4:-/dev/stdout}
BUILD=${BUILD:-build}; X=$BUILD/bin/topo-exec
command -v mpicc >/dev/null || { echo "bench: mpicc not found (apt-get install libopenmpi-dev openmpi-bin)" >&2; exit 2; }
[ -x "$X" ] || { echo "bench: $X not built (make BUILD=$BUILD)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/mpi_ar" scripts/bench/bench_mpi_allreduce.c
iters_for() { local b=$1; if [ "$b" -ge 67108864 ]; then echo 3; elif [ "$b" -ge 4194304 ]; then echo 10; else echo 50; fi; }

# MPI: one run per size range class to keep the iteration counts sane
: >"$tmp/mpi.txt"
b=$MINB
while [ "$b" -le "$MAXB" ]; do
  mpirun --allow-run-as-root --oversubscribe -np "$NP" "$tmp/mpi_ar" "$b" "$b" 4 "$(iters_for "$b")" 2 >>"$tmp/mpi.txt"
  b=$((b * 4))
done
# topo-exec: NP processes, same sizes; started by mpirun when topo-exec was built with MPI
# (MPI bootstrap, as nccl-tests), else by hand with a TCP rendezvous on 127.0.0.1
: >"$tmp/tt.txt"
if ldd "$X" 2>/dev/null | grep -q 'libmpi\.so'; then launch=mpirun; else launch=rendezvous; fi
echo "bench: topo-exec launched by $launch" >&2
b=$MINB
while [ "$b" -le "$MAXB" ]; do
  args=(-b "$b" -e "$b" -n "$(iters_for "$b")" -w 2 -c 1 --no-progress)
  if [ $launch = mpirun ]; then
    mpirun --allow-run-as-root --oversubscribe -np "$NP" "$X" "${args[@]}" >"$tmp/tt0.out" 2>&1
  else
    port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
    pids=()
    for ((r = 0; r < NP; r++)); do
      "$X" --rank $r --nranks "$NP" --master 127.0.0.1:$port "${args[@]}" >"$tmp/tt$r.out" 2>&1 & pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
  fi
  awk '!/^#/ && NF >= 13 { print $1, $6, $8, ($9 == "0" ? "ok" : "WRONG"), $7 }' "$tmp/tt0.out" >>"$tmp/tt.txt"
  b=$((b * 4))
done
{
  echo "| size (B) | topo-exec time (us) | topo-exec busbw (GB/s) | MPI_Allreduce time (us) | MPI busbw (GB/s) | time ratio exec/MPI | checks |"
  echo "|---:|---:|---:|---:|---:|---:|---|"
  join <(sort -k1,1 "$tmp/tt.txt") <(sort -k1,1 "$tmp/mpi.txt") | sort -n -k1,1 |
    awk '{ printf "| %d | %s | %s | %s | %s | %.2f | exec %s, mpi %s |\n", $1, $2, $3, $6, $7, $2 / $6, $4, $8 }'
} >"$OUT"
