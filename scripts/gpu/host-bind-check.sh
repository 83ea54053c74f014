#!/usr/bin/env bash
# host-bind-check.sh - does binding host ranks' workers to CPUs (topo-exec --bind, TOPOTUNE_HOST_BIND)
# make the host-rank measurements repeat better?  On the GPU machine (16 cores; build carried):
#   BUILD=.devcarry/build OUT=dir bash scripts/gpu/host-bind-check.sh [RANKS...]   (default 4 8)
# Per rank count: the ring AllReduce sweep 1 KiB .. 64 MiB x4, -n 20 -w 3, CYCLES times (default 3) for
# each policy, interleaved (none, core, none, core, ...), one process per sweep.  Prints per size and
# policy the fastest and slowest of the cycles and their spread ((max - min) / min), then per policy
# the median spread and the median time ratio core / none; $OUT/summary.txt and the raw sweeps.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-bind.XXXXXX")}
CYC=${CYCLES:-3}
mkdir -p "$OUT"
[ -d .devcarry/lib ] && export LD_LIBRARY_PATH=$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
summary="$OUT/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
say "# host-bind-check $(date -u '+%Y-%m-%d %H:%M UTC') $(hostname) $(nproc) CPUs; cycles $CYC"
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(4 8)
for n in "${ranks[@]}"; do
  for c in $(seq 1 "$CYC"); do
    for pol in none core; do
      f="$OUT/ring-$n-$pol.txt"
      [ "$c" = 1 ] && : > "$f"
      timeout 120 "$B/bin/topo-exec" --no-progress --host "$n" --algo ring --bind "$pol" -b 1K -e 64M -f 4 -n 20 -w 3 -c 1 >> "$f" 2>&1 \
        || say "# ring $n ranks --bind $pol cycle $c: exit $?"
    done
  done
  grep -h '^# bound' "$OUT/ring-$n-core.txt" | head -1 | tee -a "$summary"
  # per size and policy: the cycles' times (faster placement), then their spread
  awk -v n="$n" '
    FNR == 1 { pol = FILENAME; sub(/.*-/, "", pol); sub(/\.txt$/, "", pol) }
    /^ +[0-9]+ +[0-9]+ / { t = $6 < $10 ? $6 : $10; s = $1; k = pol SUBSEP s
      if (!(k in mn) || t < mn[k]) mn[k] = t; if (!(k in mx) || t > mx[k]) mx[k] = t; sizes[s] = 1 }
    END {
      printf "# %d ranks: size, then per policy fastest / slowest (us) and spread\n", n
      ns = 0; for (s in sizes) ss[++ns] = s + 0
      for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++) if (ss[j] < ss[i]) { x = ss[i]; ss[i] = ss[j]; ss[j] = x }
      for (i = 1; i <= ns; i++) { s = ss[i]; a = "none" SUBSEP s; b = "core" SUBSEP s
        sa = (mx[a] - mn[a]) / mn[a]; sb = (mx[b] - mn[b]) / mn[b]; ra[i] = sa; rb[i] = sb; rt[i] = mn[b] / mn[a]
        printf "%10d  none %9.2f / %9.2f %5.1f%%   core %9.2f / %9.2f %5.1f%%   core/none %.2f\n", s, mn[a], mx[a], 100 * sa, mn[b], mx[b], 100 * sb, rt[i] }
      # medians
      for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++) {
        if (ra[j] < ra[i]) { x = ra[i]; ra[i] = ra[j]; ra[j] = x } if (rb[j] < rb[i]) { x = rb[i]; rb[i] = rb[j]; rb[j] = x }
        if (rt[j] < rt[i]) { x = rt[i]; rt[i] = rt[j]; rt[j] = x } }
      m = int((ns + 1) / 2)
      printf "# %d ranks: median spread of the cycles: none %.1f%%, core %.1f%% (worst %.1f%% / %.1f%%); median fastest core/none %.2f\n", n, 100 * ra[m], 100 * rb[m], 100 * ra[ns], 100 * rb[ns], rt[m] }
  ' "$OUT/ring-$n-none.txt" "$OUT/ring-$n-core.txt" | tee -a "$summary"
done
say "# done $(date -u '+%H:%M:%S UTC')"
