#!/usr/bin/env bash
# Multi-GPU run (issue 7 and the GPU executor's re-check), one command, on a machine with 2+ GPUs and
# `.devcarry` carried (scripts/devcarry.sh + libcmocka.so.0 in .devcarry/lib):
#   OUT=dir bash scripts/gpu-multi.sh
# 1. the GPU executor checks (scripts/gpu-exec-check.sh, racecheck left out for time)
# 2. topo-dump there: NVLink matrix vs `nvidia-smi topo -m`; NCCL accepts our NCCL-mode file
# 3. topo-tune table; topo-exec AllReduce ring/tree x ll/simple 8 B .. 8 GiB beside NCCL (its default choice,
#    and NCCL with our tuner plugin), in the same run
# Every step is time-limited; NVLink multicast stays off (NCCL_NVLS_ENABLE=0).
set -u
OUT=${OUT:-/tmp/topotune-multi}; mkdir -p "$OUT/w"
W="$OUT/w"; S="$OUT/summary.txt"; : > "$S"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH="$PWD/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
B="$PWD/.devcarry/build"
say() { echo "$*" | tee -a "$S"; }
lim() { local t=$1; shift; timeout -k 5 "$t" "$@"; }
say "# gpu-multi $(date -u '+%Y-%m-%d %H:%M UTC') $(hostname)"
nvidia-smi -L | tee -a "$S"
NG=$(nvidia-smi -L | grep -c '^GPU')

# 1. executor checks
SKIP_RACE=1 SAN_TIMEOUT=100 BUILD="$B" OUT="$OUT/exec-check" lim 240 bash scripts/gpu-exec-check.sh >/dev/null 2>&1
say "gpu-exec-check: exit $?"; grep -E '^(==|ok|not ok|\[  PASSED|\[  FAILED)|ERROR SUMMARY|%|VIRTUAL| via ' "$OUT/exec-check/summary.txt" | head -40 | tee -a "$S"

# 2. topology
nvidia-smi topo -m > "$W/nvidia-smi-topo.txt" 2>&1
lim 60 "$B/bin/topo-dump" -q -f native -o "$W/scan.xml"; say "scan: exit $?"
lim 60 "$B/bin/topo-dump" -q -i "$W/scan.xml" -f matrix -o "$W/matrix.txt"
lim 60 "$B/bin/topo-dump" -q -i "$W/scan.xml" -f nccl -o "$W/scan-nccl.xml"
lim 60 "$B/bin/topo-dump" -i "$W/scan.xml" --check > /dev/null 2> "$W/check.txt"; say "--check: exit $?"
cat "$W/nvidia-smi-topo.txt" | head -$((NG + 2)) | tee -a "$S"
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
rc=$?; warns=$(grep -c 'NCCL WARN' "$W/nccl-topo.log")
say "NCCL ($NG GPUs) with our scan as NCCL_TOPO_FILE: exit $rc, NCCL WARN lines $warns; $(grep 'all-reduce' "$W/nccl-topo.log")"
grep -E 'via P2P|Channel 00' "$W/nccl-topo.log" | head -3 | tee -a "$S"

# 3. tables and sweeps
lim 60 "$B/bin/topo-tune" -i "$W/scan.xml" --format table > "$W/table.txt" 2>&1
lim 60 "$B/bin/topo-tune" -i "$W/scan.xml" --nccl-only --format json -o "$W/table.json" 2>>"$W/table.txt"
sed -n '1,16p' "$W/table.txt" | tee -a "$S"
sweep() { # name, extra args...
  local name=$1; shift
  lim 90 "$B/bin/topo-exec" -g "$NG" -b 8 -e 8G -f 4 -n 10 -w 2 "$@" > "$W/sweep-$name.txt" 2>&1
  say "sweep $name: exit $? ($*)"
}
for a in ring tree; do for p in ll simple; do sweep "$a-$p" --algo $a --proto $p; done; done
sweep ours-default
sweep nccl-default --engine nccl
NCCL_TUNER_PLUGIN="$B/lib/libnccl-tuner-topotune.so" TOPOTUNE_TUNER_TABLE="$W/table.json" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING,INIT \
  sweep nccl-plugin --engine nccl
grep -iE 'topotune tuner' "$W/sweep-nccl-plugin.txt" | head -4 | tee -a "$S"
python3 - "$W" <<'PY' | tee -a "$S"
import glob, os, re, sys
w = sys.argv[1]
data = {}
for f in sorted(glob.glob(os.path.join(w, "sweep-*.txt"))):
    name = os.path.basename(f)[6:-4]
    for line in open(f):
        x = line.split()
        if len(x) >= 13 and x[0].isdigit():
            data.setdefault(int(x[0]), {})[name] = (float(x[5]), float(x[7]), x[8])  # oop time us, busbw, wrong
names = sorted({n for d in data.values() for n in d})
print("size " + " ".join("%14s" % n for n in names) + "   (out-of-place busbw GB/s; time us at 8 B)")
for s in sorted(data):
    print("%-10d " % s + " ".join("%14s" % ("%.2f%s" % (data[s][n][1] if s > 8 else data[s][n][0], "" if data[s][n][2] in ("0", "N/A") else "!") if n in data[s] else "-") for n in names))
PY
tar czf "$OUT/w.tgz" -C "$OUT" w exec-check 2>/dev/null && rm -rf "$W" "$OUT/exec-check"
say "# done"
