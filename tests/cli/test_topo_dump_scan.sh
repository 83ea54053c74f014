#!/usr/bin/env bash
# topo-dump live scan: default source, --sysfs-root fake machines, --hwloc-xml
# offline twin, probe switches, --check findings and exit codes, usage errors.
. "$(dirname "$0")/lib.sh"
TD="$BIN/topo-dump"
MK="$ROOT/tests/fixtures/sysfs/make-fake-sysfs.sh"
for m in hgx8 pcie4 vm nogpu; do bash "$MK" $m "$TMP/$m" || not_ok "build fake $m"; done

# --- live scan of this machine: succeeds, reports CPUs; no GPU here -> none invented
run "$TD" --scan-report -f native
expect_rc 0 "live scan exits 0"
expect_grep "$TMP/out" '<system version="1" tt_version="1" tt_source="live"' "live scan writes a native system element"
expect_grep "$TMP/out" '<cpu numaid=' "live scan reports a CPU"
expect_grep "$TMP/err" '^scan: sysfs ' "--scan-report lists the sysfs probe"
if grep -Eq '^scan: nvml +(unavailable|off)' "$TMP/err"; then
  expect_no_grep "$TMP/out" '<gpu ' "no NVML: no GPU element invented"
else
  skip "no-GPU assertion" "NVML is available here"
fi
run "$TD" --no-nvml --no-cuda --no-ibv --no-hwloc --scan-report -q -o "$TMP/live.xml"
expect_rc 0 "live scan with every optional probe off"
expect_grep "$TMP/err" '^scan: nvml +off +.*disabled by option' "--no-nvml turns the NVML probe off"
expect_grep "$TMP/err" '^scan: hwloc +off' "--no-hwloc turns the hwloc probe off"
run "$TD" -i "$TMP/live.xml" -f matrix -q
expect_rc 0 "the live scan's XML reads back and builds a graph"
TOPOTUNE_SCAN_EXCLUDE=cuda,gdr run "$TD" --scan-report -q -o "$TMP/live2.xml"
expect_rc 0 "TOPOTUNE_SCAN_EXCLUDE=cuda,gdr: scan succeeds"
expect_grep "$TMP/err" '^scan: cuda +off +.*disabled by option' "TOPOTUNE_SCAN_EXCLUDE turns the CUDA probe off"
expect_grep "$TMP/err" '^scan: gdr +off +.*disabled by option' "TOPOTUNE_SCAN_EXCLUDE turns the gdr probe off"
TOPOTUNE_SCAN_EXCLUDE=nvml,opencl run "$TD" -q -o "$TMP/live3.xml"
expect_rc 2 "TOPOTUNE_SCAN_EXCLUDE with an unknown probe is refused"
expect_grep "$TMP/err" "TOPOTUNE_SCAN_EXCLUDE: unknown probe 'opencl' \\(valid: sysfs, gdr, hwloc, nvml, cuda, ibv\\)" "unknown probe: the valid names are listed"

# --- fake machines through the CLI
run "$TD" --sysfs-root "$TMP/hgx8" -f matrix -q
expect_rc 0 "hgx8 fake: matrix"
expect_grep "$TMP/out" '^GPU0 +X +PIX +NODE +NODE +SYS' "hgx8 fake: GPU0 row (PIX to its switch peer, SYS across sockets)"
expect_grep "$TMP/out" 'NIC7: mlx5_7' "hgx8 fake: 8 NICs"
TOPOTUNE_SYSFS_ROOT="$TMP/pcie4" run "$TD" -f native -q
expect_grep "$TMP/out" 'busid="0000:03:00.0".*cur_link_width="8"' "TOPOTUNE_SYSFS_ROOT selects the fake root (pcie4 x8 link)"
run "$TD" --sysfs-root "$TMP/hgx8" -f nccl -q
expect_rc 0 "hgx8 fake: NCCL dialect"
expect_no_grep "$TMP/out" 'unknown|cur_link|hostbridge' "NCCL dialect has none of our extensions"
expect_grep "$TMP/out" '<net name="mlx5_0" dev="0"' "NCCL dialect keeps the nets"

# --- every NCCL-dialect pci carries the two attributes NCCL stops without
for src in "--sysfs-root $TMP/hgx8" "--sysfs-root $TMP/pcie4" "--sysfs-root $TMP/vm" "--sysfs-root $TMP/nogpu" "--hwloc-xml $FIX/hwloc/hgx8.xml"; do
  # shellcheck disable=SC2086
  "$TD" $src -f nccl -q -o "$TMP/n.xml"
  bad=$(grep '<pci ' "$TMP/n.xml" | grep -v 'link_speed="[^"]*" link_width="[^"]*"' | head -1)
  if [ -s "$TMP/n.xml" ] && [ -z "$bad" ]; then ok "NCCL file of ${src##*/}: every pci has link_speed and link_width"
  else not_ok "NCCL file of ${src##*/}: pci without link attributes: $bad"; fi
done

# --- offline twin
run "$TD" --hwloc-xml "$FIX/hwloc/hgx8.xml" -f matrix -q
expect_rc 0 "hwloc twin of hgx8: matrix"
expect_grep "$TMP/out" '^GPU0 +X +NV18 ' "hwloc twin: NVLinkBandwidth gives NV18"
run "$TD" --hwloc-xml "$TMP/nonexistent.xml"
expect_rc 2 "missing hwloc XML: exit 2"
expect_grep "$TMP/err" 'nonexistent.xml' "missing hwloc XML is named"
run "$TD" -i "$FIX/hwloc/vm.xml" -q -o "$TMP/vm-input.xml"
expect_rc 0 "an hwloc XML given to --input is read"
"$TD" --hwloc-xml "$FIX/hwloc/vm.xml" -q -o "$TMP/vm-alias.xml"
cmp -s "$TMP/vm-input.xml" "$TMP/vm-alias.xml" && ok "--input and --hwloc-xml give the same document" || not_ok "--input and --hwloc-xml differ on vm.xml"

# --- live hwloc probe on a fake machine (hwloc honours HWLOC_FSROOT; sysfs probe off so hwloc
# builds the tree): hwloc's export of the loaded topology goes through the same XML mapper as a file
FAKE_SYSFS_HWLOC=1 bash "$MK" hgx8 "$TMP/hw-hgx8" || not_ok "build fake hgx8 for hwloc"
export HWLOC_THISSYSTEM=0 HWLOC_COMPONENTS=-x86,-pci
HWLOC_FSROOT="$TMP/hw-hgx8" TOPOTUNE_SCAN_EXCLUDE=sysfs,nvml,cuda,ibv TOPOTUNE_DEBUG=INFO \
  run "$TD" -f native --scan-report -o "$TMP/hw-live.xml"
expect_rc 0 "live hwloc scan of the fake hgx8 (HWLOC_FSROOT)"
expect_grep "$TMP/err" 'live hwloc topology .*mapped through the hwloc XML mapper' "INFO: the live topology is mapped through the XML mapper"
expect_grep "$TMP/err" '^scan: hwloc .*live topology exported by hwloc, mapped as hwloc XML, format 2\.0: 2 NUMA node\(s\), 20 kept PCI device\(s\)' "live hwloc note: 2 NUMA nodes, 20 kept devices"
"$TD" --hwloc-xml "$FIX/hwloc/hgx8.xml" -f native -q -o "$TMP/hw-file.xml"
grep -o '<pci busid="[^"]*" class="[^"]*" vendor="[^"]*" device="[^"]*"' "$TMP/hw-live.xml" > "$TMP/hw-live.pci"
grep -o '<pci busid="[^"]*" class="[^"]*" vendor="[^"]*" device="[^"]*"' "$TMP/hw-file.xml" > "$TMP/hw-file.pci"
[ -s "$TMP/hw-live.pci" ] && cmp -s "$TMP/hw-live.pci" "$TMP/hw-file.pci" \
  && ok "live hwloc and the lstopo file of the same machine give the same PCI tree" \
  || not_ok "live hwloc vs file PCI tree: $(diff "$TMP/hw-live.pci" "$TMP/hw-file.pci" | head -5)"
# the mapper's NVSwitch rule holds live too (no NVLink matrix on the fake: links 0)
[ "$(grep -c '<nvswitch busid="0000:0[5-8]:00.0" visible="1" links="0"/>' "$TMP/hw-live.xml")" = 4 ] \
  && ok "live hwloc: the 4 NVSwitches are listed" || not_ok "live hwloc: NVSwitches not listed"
HWLOC_FSROOT="$TMP/hw-hgx8" TOPOTUNE_SCAN_EXCLUDE=nvml,cuda,ibv run "$TD" -f native --scan-report -q
expect_grep "$TMP/err" '^scan: hwloc .*cross-check: hwloc sees 20 kept PCI device\(s\), [0-9]+ missing from the sysfs tree' "with sysfs on, live hwloc only cross-checks"
unset HWLOC_THISSYSTEM HWLOC_COMPONENTS

# --- --check
run "$TD" --sysfs-root "$TMP/pcie4" --check
expect_rc 1 "pcie4: --check exits 1 (warnings)"
expect_grep "$TMP/err" 'warning: \[pcie-downtrained\] pci 0000:03:00.0: link trained at x8' "pcie4: downtrained link named"
run "$TD" --sysfs-root "$TMP/pcie4" --check -f json -q
expect_rc 1 "pcie4: --check JSON exits 1"
expect_grep "$TMP/out" '"code": "pcie-downtrained"' "pcie4: JSON finding"
run "$TD" --sysfs-root "$TMP/nogpu" --check -q
expect_rc 0 "nogpu: --check clean (exit 0)"
echo '1: DOWN' > "$TMP/hgx8/sys/class/infiniband/mlx5_3/ports/1/state"
run "$TD" --sysfs-root "$TMP/hgx8" --check
expect_rc 2 "hgx8 with a port down: --check exits 2"
expect_grep "$TMP/err" 'error: \[ib-port-not-active\] net mlx5_3 port 1' "the down port is named"
run "$TD" --sysfs-root "$TMP/vm" --check
expect_grep "$TMP/err" '\[no-numa\]' "vm: no NUMA information reported"
run "$TD" -i "$FIX/nccl-dump-h100-vm.xml" --check
expect_rc 1 "--check also works on a file (NCCL's VM dump: no NUMA)"

# --- usage errors
run "$TD" --sysfs-root "$TMP/vm" -i "$FIX/nccl-dump-h100-vm.xml"
expect_rc 2 "--input with --sysfs-root is a usage error"
run "$TD" --check --validate -i "$FIX/nccl-dump-h100-vm.xml"
expect_rc 2 "--check with --validate is a usage error"
run "$TD" --sysfs-root "$TMP/does-not-exist"
expect_rc 2 "a missing sysfs root: exit 2"
expect_grep "$TMP/err" 'does-not-exist' "and it is named"
# hwloc XML shapes that crash hwloc 2.9 itself (found by fuzzing, docs/reliability.md F7) are refused
# with file:line before hwloc sees them
for f in "$ROOT"/tests/fuzz/known/fuzz_scan_hwloc/hwloc-2.9-*.xml; do
  [ -f "$f" ] || continue
  run timeout 30 "$TD" --hwloc-xml "$f" -f native -o "$TMP/crash.xml"
  [ "$RC" -eq 2 ] && grep -q "$(basename "$f"): line [0-9]*: .*hwloc itself would crash" "$TMP/err" \
    && ok "hwloc crasher $(basename "$f"): exit 2 with file:line" || not_ok "hwloc crasher $(basename "$f"): exit $RC: $(head -c 300 "$TMP/err")"
done
finish
