#!/usr/bin/env bash
# gpu-proof-scan.sh - prove the live scan on a GPU machine.
#
# Runs topo-dump's live scan, writes the native and NCCL XML, the matrix and
# the --check JSON into $OUT, times the full scan against hwloc's own load
# (lstopo --of xml when lstopo exists, else a tiny hwloc program when a C
# compiler and hwloc.h exist, else only the hwloc probe's own time), and
# compares the scan with what NCCL wrote on that machine (GPU bus id, SM,
# PCIe speed/width, NUMA node, NIC), printing PASS/FAIL/INFO lines.
#
# usage: OUT=/some/dir scripts/gpu/gpu-proof-scan.sh [NCCL_DUMP_XML]
#   BUILD: prebuilt folder with bin/topo-dump (default .devcarry/build when it
#   exists - scripts/gpu/devcarry.sh - else build); LIBDIR: dir with extra shared
#   libraries (libcjson.so.1) added to LD_LIBRARY_PATH (default .devcarry/lib).
#   NCCL's dump to compare with: the argument, else $OUT/nccl-dump-baseline.xml
#   (scripts/gpu/gpu-proof.sh writes it first), else the H100 VM fixture.
# Lines: PASS/FAIL (comparisons), TIME/RATIO (timing), SKIP, INFO.
# Every step is time-limited; the script never waits on a hung probe.
# Exit: 0 when every PASS/FAIL comparison passed, 1 otherwise.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BUILD:-}" ]; then [ -x "$ROOT/.devcarry/build/bin/topo-dump" ] && BUILD=.devcarry/build || BUILD=build; fi
[ -z "${LIBDIR:-}" ] && [ -d "$ROOT/.devcarry/lib" ] && LIBDIR="$ROOT/.devcarry/lib"
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT=${OUT:-$ROOT/gpu-proof-out}
NCCL_DUMP=${1:-}
if [ -z "$NCCL_DUMP" ]; then
  if [ -s "$OUT/nccl-dump-baseline.xml" ]; then NCCL_DUMP="$OUT/nccl-dump-baseline.xml"
  else NCCL_DUMP="$ROOT/tests/fixtures/nccl-dump-h100-vm.xml"; fi
fi
TD="$BUILD/bin/topo-dump"
[ -n "${LIBDIR:-}" ] && export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT"
fails=0; passes=0
say()  { echo "$*" | tee -a "$OUT/proof.txt"; }
pass() { say "PASS $*"; passes=$((passes+1)); }
fail() { say "FAIL $*"; fails=$((fails+1)); }
info() { say "INFO $*"; }
skp()  { say "SKIP $*"; }
tim()  { say "TIME $*"; }
lim()  { local s=$1; shift; timeout -k 5 "$s" "$@"; }   # every step: bounded
ms()   { echo $(( $(date +%s%N) / 1000000 )); }
: > "$OUT/proof.txt"

say "# gpu-proof-scan $(date -u +%FT%TZ) on $(hostname) - $(uname -r)"
if [ ! -x "$TD" ]; then fail "no $TD (build first, or set BUILD)"; exit 1; fi
if ! lim 20 "$TD" --version >/dev/null 2>"$OUT/version.err"; then
  fail "topo-dump does not start: $(head -c 300 "$OUT/version.err") (missing libcjson.so.1? set LIBDIR)"; exit 1
fi
command -v nvidia-smi >/dev/null && lim 30 nvidia-smi -L > "$OUT/nvidia-smi-L.txt" 2>&1 && info "nvidia-smi: $(head -3 "$OUT/nvidia-smi-L.txt" | tr '\n' ' ')"

# --- the scan in every output form
t0=$(ms); lim 120 "$TD" --scan-report -f native -o "$OUT/scan-native.xml" 2>"$OUT/scan-native.err"; rc=$?; t1=$(ms)
if [ $rc -eq 0 ] && [ -s "$OUT/scan-native.xml" ]; then pass "live scan, native XML ($((t1 - t0)) ms wall, process included)"
else fail "live scan failed (exit $rc): $(tail -c 400 "$OUT/scan-native.err")"; fi
grep '^scan: ' "$OUT/scan-native.err" | sed 's/^/INFO probe /' | tee -a "$OUT/proof.txt"
lim 120 "$TD" -q -f nccl -o "$OUT/scan-nccl.xml" 2>"$OUT/scan-nccl.err" && pass "NCCL-dialect XML" || fail "NCCL dialect: $(tail -c 300 "$OUT/scan-nccl.err")"
lim 120 "$TD" -q -f matrix -o "$OUT/scan-matrix.txt" 2>"$OUT/scan-matrix.err" && pass "matrix" || fail "matrix: $(tail -c 300 "$OUT/scan-matrix.err")"
lim 120 "$TD" -q -f json -o "$OUT/scan-graph.json" 2>"$OUT/scan-json.err" || info "json view failed: $(tail -c 300 "$OUT/scan-json.err")"
lim 120 "$TD" --check -f json -o "$OUT/check.json" 2>"$OUT/check.err"; rc=$?
if [ $rc -le 2 ] && [ -s "$OUT/check.json" ]; then pass "--check JSON (exit $rc: 0 clean, 1 warnings, 2 errors)"
else fail "--check failed (exit $rc): $(tail -c 300 "$OUT/check.err")"; fi
lim 120 "$TD" --check -q 2>/dev/null; lim 120 "$TD" --check 2>&1 | grep -E '^(live scan|topo-dump)' | sed 's/^/INFO check: /' | tee -a "$OUT/proof.txt"
# the scan's NCCL file must read back (NCCL_TOPO_FILE use)
lim 60 "$TD" -q -i "$OUT/scan-nccl.xml" -f nccl -o "$OUT/scan-nccl-again.xml" 2>/dev/null \
  && cmp -s "$OUT/scan-nccl.xml" "$OUT/scan-nccl-again.xml" && pass "NCCL XML reads back byte-identical" \
  || fail "NCCL XML does not read back identically"

# --- timing: full scan vs hwloc's own load
runs=5; tot=0
for i in $(seq $runs); do t0=$(ms); lim 120 "$TD" -q -o /dev/null 2>/dev/null; t1=$(ms); tot=$((tot + t1 - t0)); done
full=$((tot / runs)); tim "full topo-dump scan (process start, all probes, XML out) $full ms, average of $runs"
tot=0
for i in $(seq $runs); do t0=$(ms); lim 120 "$TD" -q --no-nvml --no-cuda --no-ibv -o /dev/null 2>/dev/null; t1=$(ms); tot=$((tot + t1 - t0)); done
tim "topo-dump --no-nvml --no-cuda --no-ibv (sysfs + hwloc) $((tot / runs)) ms, average of $runs"
hw=$(sed -n 's/^scan: hwloc .* \([0-9.]*\)ms: .*/\1/p' "$OUT/scan-native.err" | head -1)
[ -n "$hw" ] && tim "hwloc probe inside the scan (topology load with all I/O) ${hw} ms"
ref=""
if command -v lstopo >/dev/null 2>&1; then
  t0=$(ms); lim 120 lstopo --of xml --whole-io -f "$OUT/lstopo.xml" >/dev/null 2>&1; t1=$(ms)
  ref=$((t1 - t0)); tim "lstopo --of xml --whole-io $ref ms"
  lim 120 "$TD" -q --hwloc-xml "$OUT/lstopo.xml" -f native -o "$OUT/twin-native.xml" 2>/dev/null && pass "offline twin from this machine's lstopo XML" || fail "offline twin"
elif command -v cc >/dev/null 2>&1 && [ -f /usr/include/hwloc.h ]; then
  cat > "$OUT/hwload.c" <<'EOF'
#include <hwloc.h>
#include <stdio.h>
#include <time.h>
int main(int argc, char **argv) {
  struct timespec a, b; hwloc_topology_t t;
  clock_gettime(CLOCK_MONOTONIC, &a);
  hwloc_topology_init(&t);
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(t)) return 1;
  if (argc > 1 && hwloc_topology_export_xml(t, argv[1], 0)) return 2;
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.1f\n", (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
  hwloc_topology_destroy(t); return 0; }
EOF
  hwlib=$(ls /usr/lib/*/libhwloc.so /usr/lib/*/libhwloc.so.15 2>/dev/null | head -1)
  if [ -n "$hwlib" ] && lim 60 cc -O1 -o "$OUT/hwload" "$OUT/hwload.c" "$hwlib" 2>"$OUT/hwload.err"; then
    t0=$(ms); v=$(lim 120 "$OUT/hwload" "$OUT/hwloc-export.xml"); t1=$(ms); ref=$((t1 - t0))
    tim "lstopo absent; hwloc load+XML export (tiny program, all I/O): ${v:-?} ms inside, $ref ms with process start"
    [ -s "$OUT/hwloc-export.xml" ] && lim 120 "$TD" -q --hwloc-xml "$OUT/hwloc-export.xml" -f native -o "$OUT/twin-native.xml" 2>/dev/null \
      && pass "offline twin from this machine's hwloc XML export" || info "offline twin from the hwloc export failed"
  else skp "timing reference: lstopo absent and the tiny hwloc program did not build: $(head -c 200 "$OUT/hwload.err")"; fi
else
  skp "timing reference: lstopo absent and no C compiler/hwloc.h: only the hwloc probe time above"
fi
if [ -n "$ref" ] && [ "$ref" -gt 0 ]; then
  say "RATIO full scan / hwloc-only load = $(awk -v a="$full" -v b="$ref" 'BEGIN { printf "%.2f", a / b }') ($full ms / $ref ms, both with process start)"
fi

# --- compare with NCCL's dump of this machine
info "comparing with NCCL's dump $NCCL_DUMP"
if [ ! -f "$NCCL_DUMP" ]; then skp "no NCCL dump at $NCCL_DUMP: comparison skipped"
elif ! command -v python3 >/dev/null 2>&1; then skp "python3 absent: NCCL comparison skipped"
else
  lim 60 python3 - "$NCCL_DUMP" "$OUT/scan-native.xml" <<'PY' | tee -a "$OUT/proof.txt"
import sys, xml.etree.ElementTree as ET
nccl = ET.parse(sys.argv[1]).getroot()
try:
    ours = ET.parse(sys.argv[2]).getroot()
except Exception as e:
    print("FAIL our native XML does not parse: %s" % e); sys.exit(0)
def gpus(root):
    out = {}
    for cpu in root.iter("cpu"):
        for pci in cpu.iter("pci"):
            g = pci.find("gpu")
            if g is not None:
                out[pci.get("busid").lower()] = (pci, g, cpu)
    return out
def nets(root):
    return {n.get("name"): n for n in root.iter("net")}
ng, og = gpus(nccl), gpus(ours)
ok = lambda c, m: print(("PASS " if c else "FAIL ") + m)
ok(set(ng) == set(og), "GPU bus ids: NCCL %s, scan %s" % (sorted(ng), sorted(og)))
for b in sorted(set(ng) & set(og)):
    (np_, nG, nC), (op, oG, oC) = ng[b], og[b]
    ok(nG.get("sm") == oG.get("sm"), "%s sm: NCCL %s, scan %s" % (b, nG.get("sm"), oG.get("sm")))
    ok(nG.get("dev") == oG.get("dev"), "%s dev: NCCL %s, scan %s" % (b, nG.get("dev"), oG.get("dev")))
    ok(np_.get("link_speed") == op.get("link_speed"), "%s PCIe link_speed: NCCL '%s', scan '%s'" % (b, np_.get("link_speed"), op.get("link_speed")))
    if np_.get("link_width") == op.get("link_width"):
        print("PASS %s PCIe link_width %s" % (b, op.get("link_width")))
    else:
        print("INFO %s PCIe link_width: NCCL %s, scan %s (cur %s, max %s): NCCL takes min(device, '..') and reads 0 "
              "where the parent has no max_link_width (root bus of a VM); the scan uses the device's own maximum"
              % (b, np_.get("link_width"), op.get("link_width"), op.get("cur_link_width"), op.get("max_link_width")))
    for a in ("class", "vendor", "device", "subsystem_vendor", "subsystem_device"):
        ok(np_.get(a) == op.get(a), "%s %s: NCCL %s, scan %s" % (b, a, np_.get(a), op.get(a)))
    ok(nC.get("numaid") == oC.get("numaid"), "%s numaid: NCCL %s, scan %s" % (b, nC.get("numaid"), oC.get("numaid")))
    if nG.get("gdr") is not None:
        ok(nG.get("gdr") == oG.get("gdr"), "%s gdr: NCCL %s, scan %s" % (b, nG.get("gdr"), oG.get("gdr")))
    print("INFO %s scan: name=%s uuid=%s memory_mb=%s cuda_dev=%s" % (b, oG.get("name"), oG.get("uuid"), oG.get("memory_mb"), oG.get("cuda_dev")))
nc = nccl.find("cpu"); oc = [c for c in ours.iter("cpu")]
for a in ("arch", "vendor", "familyid", "modelid"):
    ok(any(c.get(a) == nc.get(a) for c in oc), "cpu %s: NCCL %s, scan %s" % (a, nc.get(a), sorted({str(c.get(a)) for c in oc})))
nn, on = nets(nccl), nets(ours)
for name, n in nn.items():
    o = on.get(name)
    ok(o is not None, "NIC %s present in the scan" % name)
    if o is not None:
        if n.get("speed") == o.get("speed"):
            print("PASS NIC %s speed %s" % (name, o.get("speed")))
        else:
            print("INFO NIC %s speed: NCCL %s, scan %s (NCCL writes 10000 when the interface reports none; the scan leaves it unknown)"
                  % (name, n.get("speed"), o.get("speed")))
unk = sum(1 for _ in ours.iter("unknown"))
print("INFO scan has %d <unknown> record(s)" % unk)
for u in ours.iter("unknown"):
    print("INFO   unknown %s: %s" % (u.get("attr"), u.get("reason")))
PY
fi
passes=$((passes + $(grep -c '^PASS' "$OUT/proof.txt") - passes))
fails=$(grep -c '^FAIL' "$OUT/proof.txt")
say "# summary: $(grep -c '^PASS' "$OUT/proof.txt") PASS, $fails FAIL"
[ "$fails" -eq 0 ]
