#!/usr/bin/env bash
# topo-dump/topo-tune --input on hwloc XML exports of every version (issue #19
# part 1): the DOCTYPE accepted and never fetched, 2.x through the hwloc
# library, 3.0 through topotune's reader (named under TOPOTUNE_DEBUG=INFO),
# empty-word cpusets, GPUs/NICs/NVSwitches and link classes per dialect,
# inferred values noted, round trips and tables.  Fixtures:
# tests/fixtures/hwloc/make-hwloc-dialects.py.
. "$(dirname "$0")/lib.sh"
TD="$BIN/topo-dump"
TT="$BIN/topo-tune"
H="$ROOT/tests/fixtures/hwloc"

# count FILE REGEX: lines matching
count() { grep -Ec "$2" "$1"; }

# dialect FILE READER NGPU NNIC NNVSWITCH MATRIX-REGEX description
dialect() {
  local f=$1 reader=$2 ngpu=$3 nnic=$4 nsw=$5 re=$6 what=$7
  TOPOTUNE_DEBUG=INFO run "$TD" -i "$H/$f" -f native
  expect_rc 0 "$f: --input reads it ($what)"
  expect_grep "$TMP/err" "$f: hwloc XML format .*read by $reader" "$f: TOPOTUNE_DEBUG=INFO names the reader ($reader)"
  cp "$TMP/out" "$TMP/$f.native"
  [ "$(count "$TMP/$f.native" '<gpu ')" -eq "$ngpu" ] && ok "$f: $ngpu GPU(s)" || not_ok "$f: $(count "$TMP/$f.native" '<gpu ') GPUs, wanted $ngpu"
  [ "$(count "$TMP/$f.native" '<net ')" -eq "$nnic" ] && ok "$f: $nnic NIC port(s)" || not_ok "$f: $(count "$TMP/$f.native" '<net ') nets, wanted $nnic"
  [ "$(count "$TMP/$f.native" '<nvswitch ')" -eq "$nsw" ] && ok "$f: $nsw NVSwitch(es)" || not_ok "$f: $(count "$TMP/$f.native" '<nvswitch ') NVSwitches, wanted $nsw"
  run "$TD" -i "$H/$f" -f matrix -q
  expect_rc 0 "$f: matrix"
  expect_grep "$TMP/out" "$re" "$f: link classes in the matrix ($re)"
  # round trip: native -> read -> native keeps every attribute; nccl dialect loads
  "$TD" -q -i "$TMP/$f.native" -f native -o "$TMP/$f.rt" 2>/dev/null
  cmp -s "$TMP/$f.native" "$TMP/$f.rt" && ok "$f: native round trip keeps every attribute" || not_ok "$f: native round trip differs"
  run "$TD" -q -i "$H/$f" -f nccl -o "$TMP/$f.nccl"
  expect_rc 0 "$f: NCCL dialect written"
  run "$TD" -q -i "$TMP/$f.nccl" -f nccl -o "$TMP/$f.nccl2"
  cmp -s "$TMP/$f.nccl" "$TMP/$f.nccl2" && ok "$f: NCCL round trip is stable" || not_ok "$f: NCCL round trip differs"
  # tables: plausible (exit 0, a table with allreduce rows)
  run "$TT" -i "$H/$f"
  expect_rc 0 "$f: topo-tune --input builds tables"
  expect_grep "$TMP/out" 'allreduce' "$f: the table has allreduce entries"
}

dialect hgx8.xml "the hwloc library" 8 8 4 '^GPU0 +X +NV18 ' "hwloc 2.9 export, NVSwitch"
dialect v3-2gpu.xml "topotune's reader" 2 1 0 '^GPU0 +X +NV12 +PHB ' "hwloc 3.0, NVLink bridge"
dialect v3-hgx8.xml "topotune's reader" 8 4 4 '^GPU0 +X +NV18 +NV18 ' "hwloc 3.0, 8 GPUs, 4 NVSwitches"
dialect smt2s.xml "the hwloc library" 2 2 0 '^GPU0 +X +SYS +PHB +SYS +0-31,64-95 ' "2-socket SMT, empty-word cpusets"
dialect amd-xgmi4.xml "the hwloc library" 4 1 0 '^GPU0 +X +XGMI2 +XGMI1 +XGMI1 ' "AMD RSMI + XGMIBandwidth"
dialect power-nvlink.xml "the hwloc library" 2 0 0 '^GPU0 +X +NV2 ' "POWER, GPU-CPU NVLink"
dialect grace-c2c.xml "topotune's reader" 1 0 0 '^GPU0 +X ' "Grace, 3.0, NVLink-C2C"
dialect dgx2.xml "the hwloc library" 16 8 12 '^GPU0 +X +NV6 +NV6 .* NV6 +PIX ' "DGX-2: 16 V100, 12 class-0 NVSwitches"

# --- findings from an hwloc file name the file and the line of its PCI object (issue #33 item 8:
# they said scan:0:), through the hwloc library (its re-export) and through topotune's reader
l=$(grep -n 'pci_busid="0000:10:00.0"' "$H/dgx2.xml" | cut -d: -f1)
for rd in hwloc topotune; do
  TOPOTUNE_HWLOC_READER=$([ $rd = topotune ] && echo topotune) run "$TD" -i "$H/dgx2.xml" --validate
  expect_grep "$TMP/err" "^$H/dgx2.xml:$l: warning: \[unknown-link-width\] pci 0000:10:00.0:" "dgx2 ($rd reader): --validate says file:line of the object"
  expect_no_grep "$TMP/err" 'scan:0:' "dgx2 ($rd reader): no scan:0: in --validate"
done
TOPOTUNE_DEBUG=INFO run "$TT" -i "$H/dgx2.xml" -C allreduce --min-size 1G --max-size 1G
expect_no_grep "$TMP/err" 'scan:0:' "dgx2: topo-tune's messages have no scan:0:"
l=$(grep -n 'pci_busid="0000:14:00.0"' "$H/dgx2.xml" | cut -d: -f1)
expect_grep "$TMP/err" "assumed: $H/dgx2.xml:$l: info: \[inferred-sm\]" "dgx2: the assumption names file:line of the first GPU"

# --- SR-IOV (issue #33 item 8): 6 ConnectX-6 PFs with 2 VFs each are 6 NICs, not 18
dialect sriov.xml "the hwloc library" 2 6 0 '^GPU0 +X +PHB +PHB ' "6 NIC PFs, 12 SR-IOV VFs left out"
expect_grep "$TMP/sriov.xml.native" 'attr="pci" reason="12 SR-IOV virtual function\(s\) left out' "sriov: the VFs left out are named"
expect_no_grep "$TMP/sriov.xml.native" 'device="0x101c"' "sriov: no VF in the tree"

# --- DGX-2 (issue #33 item 6): every NVSwitch kept, the one without vendor id too (NCCL takes
# any NVLink target that is no GPU or CPU for its switch); sm from the part table by device id
N="$TMP/dgx2.xml.native"
[ "$(count "$N" '<nvlink target="[0-9a-f:.]*" count="1" tclass="0x068000" bw_mbps="25000"/>')" -eq 96 ] &&
  ok "dgx2: 96 GPU->NVSwitch links (16 x 6), all of class 0x068000" || not_ok "dgx2: $(count "$N" 'tclass="0x068000"') NVSwitch links"
expect_no_grep "$N" 'tclass="0x000000"' "dgx2: no NVLink of class 0"
expect_grep "$N" 'attr="class" reason="the file gives device 0000:0000 class 0x0000, named by the NVLinkBandwidth matrix' "dgx2: the vendor-less NVSwitch has its finding"
run "$TD" -i "$TMP/dgx2.xml.nccl" --validate
expect_no_grep "$TMP/err" 'NCCL ignores' "dgx2: --validate finds no link NCCL would ignore"
run "$TT" -i "$H/dgx2.xml" -f json -o "$TMP/dgx2.json"
expect_rc 0 "dgx2: json table"
expect_grep "$TMP/dgx2.json" '"sm_min":[[:space:]]*70,' "dgx2: the table records sm 70 (V100-SXM3 by device id 0x1db8)"
n=$(grep -c 'assumed: .*\[inferred-sm\] 16 elements .*compute capability 7.0 inferred from device id 0x1db8' "$TMP/err")
[ "$n" = 1 ] && ok "dgx2: the inferred sm is one assumed: line for the 16 GPUs" || not_ok "dgx2: $n inferred-sm lines"
run "$TT" -i "$H/dgx2.xml" -C allreduce
expect_grep "$TMP/out" 'll128' "dgx2: LL128 is in the table (sm 70)"
run "$TT" -i "$H/dgx2.xml" -C allreduce --min-size 1G --max-size 1G
bw=$(awk '$1 == "0" && $2 == "B" { print $NF }' "$TMP/out" | tail -1)
# A model figure, not a measurement: 16 V100 on NVSwitch, 6 NVLinks of 20 GB/s (NCCL's SM70 figure)
# per GPU; the ring bound is 120 GB/s busbw.  Issue #33 reports about 130 GB/s for this machine; no
# measurement of ours backs that, so only a plausible range is asserted (it was 63 GB/s algbw).
awk -v b="$bw" 'BEGIN { exit !(b + 0 >= 100 && b + 0 <= 150) }' && ok "dgx2: 1 GiB allreduce busbw $bw GB/s in [100, 150]" ||
  not_ok "dgx2: 1 GiB allreduce busbw '$bw'"

# --- dialect details
N="$TMP/v3-hgx8.xml.native"
[ "$(count "$N" 'class="0x068000" vendor="0x10de" device="0x22a3"')" -eq 4 ] && ok "v3-hgx8: all 4 NVSwitches (class 0x0680 and 0x0000 in the file) are 0x068000" || not_ok "v3-hgx8: NVSwitch classes"
[ "$(count "$N" 'attr="class" reason="the file gives NVIDIA device 22a3 class 0x0000')" -eq 2 ] && ok "v3-hgx8: the two class-0x0000 NVSwitches have their finding" || not_ok "v3-hgx8: NVSwitch class findings"
expect_grep "$N" '<nvlink target="[0-9a-f:.]*" count="4" tclass="0x068000" bw_mbps="100000"/>' "v3-hgx8: GPU->NVSwitch link count from bandwidth"
expect_grep "$N" 'attr="nvlink.count" reason="hwloc gives MB/s per GPU pair' "v3-hgx8: inferred link counts have their finding"
expect_grep "$N" 'class="0x030200"' "v3-hgx8: 3.0 pci_type keeps the prog-if byte"
expect_no_grep "$N" 'attr="class" reason="hwloc keeps 16-bit PCI classes' "v3-hgx8: no 16-bit-class finding for a 3.0 file"
expect_grep "$TMP/hgx8.xml.native" 'attr="class" reason="hwloc keeps 16-bit PCI classes' "hgx8 (2.0): the 16-bit-class finding stays"
expect_grep "$TMP/v3-2gpu.xml.native" 'hostname="v3-2gpu"' "v3-2gpu: HostName from the 3.0 <topology> infos"
expect_grep "$TMP/v3-2gpu.xml.native" 'arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143"' "v3-2gpu: CPU identity"
expect_grep "$TMP/v3-2gpu.xml.native" '<net name="mlx5_0" dev="0" port="1" .*state="ACTIVE"' "v3-2gpu: OpenFabrics OS device (osdev_type mask 48) gives the NIC"
expect_grep "$TMP/smt2s.xml.native" 'affinity="00000000,ffffffff,00000000,ffffffff"' "smt2s: empty cpuset words read as zero words"
expect_grep "$TMP/amd-xgmi4.xml.native" '<gpu dev="0" rank="0" uuid="a1b2c3d4e5f60000" name="AMD Instinct MI250X">' "amd-xgmi4: RSMI OS device gives the GPU"
expect_grep "$TMP/amd-xgmi4.xml.native" '<xgmi target="0000:c6:00.0" count="2" tclass="0x038000"' "amd-xgmi4: XGMIBandwidth gives xgmi links"
expect_grep "$TMP/power-nvlink.xml.native" 'tclass="0x068001" bw_mbps="50000"' "power-nvlink: GPU-CPU NVLink kept (tclass 0x068001)"
expect_grep "$TMP/power-nvlink.xml.native" 'attr="nvlink.tclass" reason="2 GPU-CPU link' "power-nvlink: the CPU link has its finding"
expect_grep "$TMP/grace-c2c.xml.native" '<c2c count="18" bw="25000"/>' "grace-c2c: GPU-CPU NVLink-C2C kept as c2c"

# --- both readers agree on 2.x files
for f in hgx8 pcie4 vm nogpu smt2s amd-xgmi4 power-nvlink dgx2 sriov; do
  "$TD" -q -i "$H/$f.xml" -o "$TMP/a.xml" 2>/dev/null
  TOPOTUNE_HWLOC_READER=topotune "$TD" -q -i "$H/$f.xml" -o "$TMP/b.xml" 2>/dev/null
  cmp -s "$TMP/a.xml" "$TMP/b.xml" && ok "$f: hwloc library and topotune's reader give the same document" || not_ok "$f: the two readers differ"
done
TOPOTUNE_DEBUG=INFO run env TOPOTUNE_HWLOC_READER=topotune "$TD" -i "$H/vm.xml"
expect_grep "$TMP/err" "TOPOTUNE_HWLOC_READER=topotune" "TOPOTUNE_HWLOC_READER=topotune forces (and names) topotune's reader"

# --- --hwloc-xml stays the alias
"$TD" -q --hwloc-xml "$H/v3-2gpu.xml" -o "$TMP/alias.xml"
"$TD" -q -i "$H/v3-2gpu.xml" -o "$TMP/input.xml"
cmp -s "$TMP/alias.xml" "$TMP/input.xml" && ok "--hwloc-xml is an alias of --input for hwloc files" || not_ok "--hwloc-xml and --input differ"

# --- the DOCTYPE is accepted, never fetched; any other external DTD refused
sed 's|"hwloc2.dtd"|"http://127.0.0.1:9/hwloc2.dtd"|' "$H/v3-2gpu.xml" > "$TMP/dtd-http.xml"
run timeout 20 "$TD" -i "$TMP/dtd-http.xml"
expect_rc 2 "a DOCTYPE pointing at a URL is refused"
expect_grep "$TMP/err" "external DTD 'http://127.0.0.1:9/hwloc2.dtd' is not allowed" "and named"
echo '<!ENTITY x "y">' > "$TMP/evil.dtd"
# LeakSanitizer cannot run under ptrace: the traced runs leave leak checks to the untraced ones
NOLSAN="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
sed "s|\"hwloc2.dtd\"|\"$TMP/evil.dtd\"|" "$H/v3-2gpu.xml" > "$TMP/dtd-file.xml"
run env "$NOLSAN" strace -f -e trace=open,openat -o "$TMP/trace" "$TD" -i "$TMP/dtd-file.xml"
if [ -s "$TMP/trace" ]; then
  expect_rc 2 "a DOCTYPE pointing at a local file is refused"
  expect_no_grep "$TMP/trace" 'evil\.dtd' "and the local DTD file is never opened"
else
  run "$TD" -i "$TMP/dtd-file.xml"
  expect_rc 2 "a DOCTYPE pointing at a local file is refused"
  skip "local DTD never opened" "strace not available"
fi
printf '<!ELEMENT topology (x)>\n' > "$TMP/hwloc2.dtd"
(cd "$TMP" && env "$NOLSAN" strace -f -e trace=open,openat -o "$TMP/trace2" "$TD" -q -i "$H/v3-2gpu.xml" -o "$TMP/o.xml" 2>/dev/null; echo $? > "$TMP/rc2")
if [ -s "$TMP/trace2" ]; then
  [ "$(cat "$TMP/rc2")" -eq 0 ] && ok "hwloc2.dtd next to the run: still read" || not_ok "hwloc2.dtd next to the run: exit $(cat "$TMP/rc2")"
  expect_no_grep "$TMP/trace2" 'hwloc2\.dtd' "the hwloc DOCTYPE's DTD is never opened"
else
  skip "hwloc2.dtd never opened" "strace not available"
fi
sed 's|<!DOCTYPE topology SYSTEM "hwloc2.dtd">|<!DOCTYPE topology SYSTEM "hwloc2.dtd" [ <!ENTITY e "x"> ]>|' "$H/v3-2gpu.xml" > "$TMP/dtd-ent.xml"
run "$TD" -i "$TMP/dtd-ent.xml"
expect_rc 2 "the hwloc DOCTYPE with an internal entity declaration is refused"
sed '/<!DOCTYPE/d' "$H/v3-2gpu.xml" > "$TMP/nodoctype.xml"
run "$TD" -q -i "$TMP/nodoctype.xml" -f matrix
expect_rc 0 "an hwloc file without DOCTYPE is recognised by its root <topology>"
expect_grep "$TMP/out" '^GPU0 +X +NV12 ' "and read the same"
finish
