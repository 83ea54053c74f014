#!/usr/bin/env bash
# gpu-multi-vs-nccl.sh - the multi-GPU validation against NCCL in one command, on a machine
# with 2+ GPUs and the build carried (scripts/gpu/devcarry.sh, scripts/README.md):
#   BUILD=.devcarry/build OUT=dir bash scripts/gpu/gpu-multi-vs-nccl.sh
# 1. topology: NVLink matrix vs `nvidia-smi topo -m`; NCCL accepts our NCCL-mode file
# 2. our executor: ring/tree x ll/simple forced and the default plan, 8 B .. 8 GiB (x4);
#    NCCL (--engine nccl): ring/tree x ll/ll128/simple forced and its own choice, same sizes
#    small sizes (8 B .. 2 MiB) take 200 timed calls, large ones (8 MiB .. 2 GiB) 20; 8 GiB is
#    measured for the default plans only (filling 8 GiB host buffers per sweep costs seconds)
# 3. prediction: topo-tune --calibrate on our forced sweeps, then our default plan at the sizes
#    in between (16 B .. 512 MiB) with --predict: pred/err% per size, median/worst error
# 4. NCCL with our tuner plugin against NCCL's own choice, interleaved (default, plugin,
#    default, plugin) per size: the table from `topo-tune --from-measured` on step 2's NCCL
#    sweeps, and the model table calibrated on them
# Every step is time-limited; NVLink multicast stays off (NCCL_NVLS_ENABLE=0).
set -u
B=${BUILD:-.devcarry/build}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/topotune-multi-vs-nccl.XXXXXX")}
W="$OUT/w"
mkdir -p "$W"
S="$OUT/summary.txt"
: > "$S"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
say() { echo "$*" | tee -a "$S"; }
lim() { local t=$1; shift; timeout -k 5 "$t" "$@"; }
say "# gpu-multi-vs-nccl $(date -u '+%Y-%m-%d %H:%M UTC') $(hostname)"
nvidia-smi -L | tee -a "$S"
NG=$(nvidia-smi -L | grep -c '^GPU')
TE="$B/bin/topo-exec"
TT="$B/bin/topo-tune"

# 1. topology
nvidia-smi topo -m > "$W/nvidia-smi-topo.txt" 2>&1
lim 60 "$B/bin/topo-dump" -q -f native -o "$W/scan.xml"; say "scan: exit $?"
lim 60 "$B/bin/topo-dump" -q -i "$W/scan.xml" -f matrix -o "$W/matrix.txt"
lim 60 "$B/bin/topo-dump" -q -i "$W/scan.xml" -f nccl -o "$W/scan-nccl.xml"
head -$((NG + 1)) "$W/nvidia-smi-topo.txt" | tee -a "$S"
head -$((NG + 1)) "$W/matrix.txt" | tee -a "$S"
python3 - "$W/nvidia-smi-topo.txt" "$W/matrix.txt" "$NG" <<'PY' | tee -a "$S"
import re, sys
ng = int(sys.argv[3])
def cells(path):
    rows = {}
    for line in open(path):
        line = re.sub(r'\x1b\[[0-9;]*m', '', line)
        f = line.split()
        if f and re.fullmatch(r'GPU\d+', f[0]) and len(f) > ng:
            rows[f[0]] = f[1:1 + ng]
    return rows
a, b = cells(sys.argv[1]), cells(sys.argv[2])
same = all(a.get(g) == b.get(g) for g in a) and len(a) == ng
print(("PASS" if same else "FAIL") + " GPU x GPU matrix: nvidia-smi %s, topo-dump %s" % (a, b))
PY
gcc -O2 -I/usr/local/cuda/include tests/gpu/nccl_one_rank.c -L/usr/local/cuda/lib64 -lcudart -lnccl -o "$W/nccl_one_rank" 2>"$W/cc.err"
NCCL_TOPO_FILE="$W/scan-nccl.xml" NCCL_DEBUG=INFO lim 120 "$W/nccl_one_rank" > "$W/nccl-topo.log" 2>&1
say "NCCL ($NG GPUs) with our scan as NCCL_TOPO_FILE: exit $?, NCCL WARN lines $(grep -c 'NCCL WARN' "$W/nccl-topo.log"); $(grep 'all-reduce' "$W/nccl-topo.log")"

# 2. sweeps: name, extra args...  (two size ranges, one file each)
sweep() {
  local name=$1; shift
  lim 120 "$TE" -g "$NG" -b 8 -e 2M -f 4 -n 200 -w 20 "$@" > "$W/s-$name-small.txt" 2>&1; local r1=$?
  lim 150 "$TE" -g "$NG" -b 8M -e ${LARGE_MAX:-2G} -f 4 -n 20 -w 5 "$@" > "$W/s-$name-large.txt" 2>&1; local r2=$?
  say "sweep $name: exit $r1/$r2 ($*)"
}
for a in ring tree; do for p in ll simple; do sweep "ours-$a-$p" --algo $a --proto $p; done; done
sweep ours-default
for a in ring tree; do for p in ll ll128 simple; do sweep "nccl-$a-$p" --engine nccl --algo $a --proto $p; done; done
sweep nccl-default-1 --engine nccl
sweep nccl-default-2 --engine nccl

# 8 GiB, the default plans only
for nm in ours-default nccl-default-1; do
  extra=""; [ "$nm" != ours-default ] && extra="--engine nccl"
  lim 100 "$TE" -g "$NG" -b 8G -e 8G -n 10 -w 3 -c 0 $extra > "$W/s-$nm-8g.txt" 2>&1
  say "8 GiB $nm: exit $?"
done
# 3. calibration and held-out prediction of our default plan
lim 120 "$TT" --calibrate "$W"/s-ours-{ring,tree}-*.txt --input "$W/scan.xml" -o "$W/cal-ours.json" > "$W/cal-ours.txt" 2>&1
say "calibrate (our forced sweeps): exit $?; $(grep -E '^# error' "$W/cal-ours.txt")"
lim 120 "$TE" -g "$NG" -b 16 -e 1M -f 4 -n 200 -w 20 --predict "$W/scan.xml" --calibration "$W/cal-ours.json" \
  > "$W/held-small.txt" 2>&1; r1=$?
lim 150 "$TE" -g "$NG" -b 4M -e 512M -f 4 -n 20 -w 5 --predict "$W/scan.xml" --calibration "$W/cal-ours.json" \
  > "$W/held-large.txt" 2>&1
say "held-out default plan with prediction: exit $r1/$?"
grep -hE '^ *[0-9]|Prediction error' "$W"/held-small.txt "$W"/held-large.txt | tee -a "$S"
python3 - "$W" <<'PY' | tee -a "$S"
import sys, statistics, os
errs = []
for f in ("held-small.txt", "held-large.txt"):
    for line in open(os.path.join(sys.argv[1], f)):
        x = line.split()
        if len(x) >= 17 and x[0].isdigit():
            for m, p in ((5, 9), (11, 15)):
                try: errs.append(abs(float(x[p]) - float(x[m])) / float(x[m]))
                except ValueError: pass
if errs:
    print("held-out prediction error over %d placements (16 B .. 512 MiB): median %.1f%%, worst %.1f%%"
          % (len(errs), 100 * statistics.median(errs), 100 * max(errs)))
PY
# our executor driven by a table measured on this machine (no baseline: fastest candidate per size)
lim 60 "$TT" --from-measured "$W"/s-ours-{ring,tree}-*.txt -f json -o "$W/ours-measured.json" > /dev/null 2>&1
sweep ours-table --table "$W/ours-measured.json"

# the calibration loop on GPUs: does the calibrated model's table choose right here? (topo-exec --validate)
lim 150 "$TE" -g "$NG" --validate --topo "$W/scan.xml" --calibration "$W/cal-ours.json" -b 8 -e 64M -f 8 -n 50 -w 10 \
  -J "$W/validate.json" > "$W/validate.txt" 2>&1
say "validate (model calibrated on this machine): exit $? (0 right, 3 table wrong somewhere)"
grep -vE '^#  Rank' "$W/validate.txt" | tail -25 | tee -a "$S"

# 4. NCCL tables and the plugin
lim 60 "$TT" --from-measured "$W"/s-nccl-{ring,tree}-*.txt "$W"/s-nccl-default-[12]-*.txt --margin 0.03 \
  -f json -o "$W/plugin-measured.json" > /dev/null 2>"$W/from-measured.err"
say "measured plugin table: exit $? ($(grep -c '"algorithm"' "$W/plugin-measured.json" 2>/dev/null) entries)"
lim 60 "$TT" --from-measured "$W"/s-nccl-{ring,tree}-*.txt "$W"/s-nccl-default-[12]-*.txt --margin 0.03 | tee -a "$S"
lim 120 "$TT" --calibrate "$W"/s-nccl-{ring,tree}-*.txt --input "$W/scan.xml" -o "$W/cal-nccl.json" > "$W/cal-nccl.txt" 2>&1
say "calibrate (NCCL forced sweeps): exit $?; $(grep -E '^# error' "$W/cal-nccl.txt")"
lim 60 "$TT" -i "$W/scan.xml" --calibration "$W/cal-nccl.json" --nccl-only -f json -o "$W/plugin-model.json"
PLUG="$B/lib/libnccl-tuner-topotune.so"
psweep() { # name, table
  local name=$1 tab=$2
  NCCL_TUNER_PLUGIN="$PLUG" TOPOTUNE_TUNER_TABLE="$tab" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING \
    sweep "$name" --engine nccl
  grep -hiE 'topotune tuner' "$W/s-$name-small.txt" | head -2 | tee -a "$S"
}
sweep nccl-default-3 --engine nccl
psweep plugin-measured-1 "$W/plugin-measured.json"
sweep nccl-default-4 --engine nccl
psweep plugin-measured-2 "$W/plugin-measured.json"
psweep plugin-model-1 "$W/plugin-model.json"

# summary table: out-of-place and in-place best time per size, per run
python3 - "$W" <<'PY' | tee -a "$S"
import glob, os, re, sys, statistics
w = sys.argv[1]
data = {}
for f in sorted(glob.glob(os.path.join(w, "s-*-*.txt"))):
    name = re.sub(r"-(small|large|8g)\.txt$", "", os.path.basename(f)[2:])
    for line in open(f):
        x = line.split()
        if len(x) >= 13 and x[0].isdigit() and len(x) <= 15:
            try: t = min(float(x[5]), float(x[9]))
            except ValueError: continue
            ok = x[8] in ("0", "N/A") and x[12] in ("0", "N/A")
            data.setdefault(int(x[0]), {})[name] = (t, float(x[7]), ok, float(x[5]), float(x[9]))
names = sorted({n for d in data.values() for n in d})
print("# best of out-of-place/in-place time (us) per size; ! = wrong results")
print("%-11s" % "size" + "".join("%17s" % n[:16] for n in names))
for s in sorted(data):
    print("%-11d" % s + "".join("%17s" % ("%.2f%s" % (data[s][n][0], "" if data[s][n][2] else "!") if n in data[s] else "-") for n in names))
def med(s, keys):
    v = [data[s][k][0] for k in keys if k in data[s]]
    return statistics.median(v) if v else None
print("\n# NCCL + plugin vs NCCL's own choice (default-3/-4 interleaved with plugin-1/-2): ratio plugin/default time")
worst, best = 0, 9
for s in sorted(data):
    d = med(s, ["nccl-default-3", "nccl-default-4"]); p = med(s, ["plugin-measured-1", "plugin-measured-2"])
    m = med(s, ["plugin-model-1"])
    if d and p:
        r = p / d; worst = max(worst, r); best = min(best, r)
        print("%-11d default %9.2f  measured-table %9.2f (x%.3f)  model-table %s" % (s, d, p, r, "%9.2f (x%.3f)" % (m, m / d) if m else "-"))
print("measured-table plugin: worst x%.3f, best x%.3f (goal: never above x1.03, below x1.00 somewhere)" % (worst, best))
print("\n# our default plan vs NCCL's own choice: busbw (GB/s) from 64 MiB, 8 B latency")
for s in sorted(data):
    o = data[s].get("ours-default"); n1 = [data[s][k] for k in ("nccl-default-1", "nccl-default-2") if k in data[s]]
    if not o or not n1: continue
    nb = statistics.median([v[1] for v in n1])
    if s >= 64 << 20:
        print("%-11d ours %7.1f  nccl %7.1f  ratio %.3f" % (s, o[1], nb, o[1] / nb if nb else 0))
    if s == 8:
        no = statistics.median([v[3] for v in n1]); ni = statistics.median([v[4] for v in n1])
        print("8 B: ours out-of-place %.2f us, in-place %.2f us; NCCL %.2f / %.2f us; ratio (best of each) %.3f"
              % (o[3], o[4], no, ni, min(o[3], o[4]) / min(no, ni)))
PY
tar czf "$OUT/w.tgz" -C "$OUT" w 2>/dev/null
say "# done $(date -u '+%H:%M:%S UTC')"
