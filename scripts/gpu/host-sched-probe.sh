#!/usr/bin/env bash
# host-sched-probe.sh - why does the hierarchical AllReduce of host ranks run slower than its
# schedule says (issue #20: at 2 ranks from 2 MiB about 1.6x recursive doubling, where the model's
# pipelined schedule gives 1.1x)?  Side by side in one run, interleaved over CYCLES (default 3):
# hierarchical, recursive doubling and ring AllReduce of 2 and 4 host ranks, 64 KiB .. 64 MiB x4,
# each under four settings of the shared-memory pipeline:
#   base     the defaults (1 MiB ring per pair, 512 KiB chunk, 20 us spin before yielding)
#   spin     TOPOTUNE_SPIN_US=10000000: waits never yield (a napping sender cannot stall the pipe)
#   ring8m   TOPOTUNE_SHM_RING_BYTES=8M: a sender can run 8 MiB ahead of its receiver
#   chunk128 --chunk 128K: the leader drains and reduces smaller pieces (finer pipeline)
# On the GPU machine (16 cores; build carried, scripts/README.md):
#   BUILD=.devcarry/build OUT=dir bash scripts/gpu/host-sched-probe.sh
# Prints per rank count, size and algorithm the fastest time of the cycles per setting, and the
# ratios hierarchical / recursive doubling per setting; $OUT/summary.txt and the raw sweeps.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-sched-probe.XXXXXX")}
CYC=${CYCLES:-3}
mkdir -p "$OUT"
[ -d .devcarry/lib ] && export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
summary="$OUT/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
say "# host-sched-probe $(date -u '+%Y-%m-%d %H:%M UTC') $(hostname) $(nproc) CPUs; cycles $CYC"
run() { # SETTING N ALGO: one sweep appended to $OUT/SETTING-N-ALGO.txt
  local set=$1 n=$2 a=$3 f="$OUT/$1-$2-$3.txt" env=() extra=()
  case $set in
    spin) env=(TOPOTUNE_SPIN_US=10000000) ;;
    ring8m) env=(TOPOTUNE_SHM_RING_BYTES=8M) ;;
    chunk128) extra=(--chunk 128K) ;;
  esac
  env "${env[@]}" timeout 120 "$B/bin/topo-exec" --no-progress --host "$n" --algo "$a" "${extra[@]}" \
    -b 64K -e 64M -f 4 -n 10 -w 2 -c 1 >> "$f" 2>&1 || say "# $set $n $a: exit $?"
}
for c in $(seq 1 "$CYC"); do
  for n in 2 4; do
    for set in base spin ring8m chunk128; do
      for a in hierarchical recursive-doubling ring; do
        [ "$c" = 1 ] && : > "$OUT/$set-$n-$a.txt"
        run "$set" "$n" "$a"
      done
    done
  done
done
# per rank count: size, then per setting the fastest of the cycles (faster placement) per algorithm
awk '
  FNR == 1 { k = FILENAME; sub(/.*\//, "", k); sub(/\.txt$/, "", k); split(k, p, "-"); set = p[1]; n = p[2]
             a = p[3]; files[set] = 1; ns[n] = 1 }
  /^ +[0-9]+ +[0-9]+ / { t = $6 < $10 ? $6 : $10; key = set SUBSEP n SUBSEP a SUBSEP $1
    if (!(key in mn) || t < mn[key]) mn[key] = t; sizes[$1] = 1 }
  END {
    split("base spin ring8m chunk128", S, " "); split("hierarchical recursive ring", A, " ")
    m = 0; for (s in sizes) z[++m] = s + 0
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (z[j] < z[i]) { x = z[i]; z[i] = z[j]; z[j] = x }
    for (n = 2; n <= 4; n += 2) {
      printf "# %d ranks: fastest us per setting: hierarchical / recursive-doubling / ring (hier/rd)\n", n
      for (i = 1; i <= m; i++) { line = sprintf("%10d", z[i])
        for (q = 1; q <= 4; q++) { h = mn[S[q] SUBSEP n SUBSEP "hierarchical" SUBSEP z[i]]; r = mn[S[q] SUBSEP n SUBSEP "recursive" SUBSEP z[i]]
          g = mn[S[q] SUBSEP n SUBSEP "ring" SUBSEP z[i]]
          line = line sprintf("  %s %.0f/%.0f/%.0f (%.2f)", S[q], h, r, g, r > 0 ? h / r : 0) }
        print line } } }
' "$OUT"/*-*-*.txt | tee -a "$summary"
say "# done $(date -u '+%H:%M:%S UTC')"
