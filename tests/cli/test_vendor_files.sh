#!/usr/bin/env bash
# Partial vendor NCCL files (issue #19): GPUs and NICs known by PCI class only,
# the part table filling the fabric from device ids or --gpu-part, every
# assumption printed, the un-inferred file warned about, round trips, and the
# fusion of a vendor file with a (fake) scan by bus id.
. "$(dirname "$0")/lib.sh"
TD="$BIN/topo-dump"
TT="$BIN/topo-tune"
V="$FIX/vendor"
MK="$ROOT/tests/fixtures/sysfs/make-fake-sysfs.sh"
cnt() { grep -Ec -- "$1" "$2"; }
eq() { if [ "$1" = "$2" ]; then ok "$3"; else not_ok "$3 (got '$1', wanted '$2')"; fi; }

# --- 8x H100 SXM5 with device ids, 8 IB NICs by class: NVSwitch fabric inferred
run "$TD" -i "$V/h100-sxm-partial.xml" -f matrix
expect_rc 0 "h100 partial: matrix"
expect_grep "$TMP/out" '^GPU0 +X +NV18 +NV18 +NV18 +NV18 +NV18 +NV18 +NV18 +PIX +PXB +NODE +NODE +SYS' \
  "h100 partial: NV18 to every GPU (inferred NVSwitch), PIX to its NIC, PXB to the NIC under the sibling leaf switch"
expect_grep "$TMP/out" 'NIC7: ib-0000:dc:00.0' "h100 partial: 8 NICs from class 0x0207xx in the matrix"
# one assumed: line per kind, with the count (issue #33 item 8: 17 lines before)
eq "$(cnt '^topo-dump: assumed: ' "$TMP/err")" 3 "h100 partial: 3 assumed: lines (one per kind), not 17"
eq "$(cnt '\[inferred-nvlink\] 8 elements \(0000:18:00.0 and 7 more; TOPOTUNE_DEBUG=INFO lists each\): inferred' "$TMP/err")" 1 "h100 partial: inferred-nvlink: one line for the 8 GPUs"
eq "$(cnt '\[inferred-net\] 8 elements \(0000:19:00.0 and 7 more; TOPOTUNE_DEBUG=INFO lists each\): e\.g\. ' "$TMP/err")" 1 "h100 partial: inferred-net: one line for the 8 NICs"
eq "$(cnt '\[inferred-nvswitch\]' "$TMP/err")" 1 "h100 partial: the synthesised NVSwitch has its finding"
TOPOTUNE_DEBUG=INFO run "$TD" -i "$V/h100-sxm-partial.xml" -f matrix
eq "$(cnt 'INFO cli: assumed: .*\[inferred-nvlink\] 0000:' "$TMP/err")" 8 "h100 partial: TOPOTUNE_DEBUG=INFO lists the 8 GPUs"
eq "$(cnt 'INFO cli: assumed: .*\[inferred-net\] 0000:' "$TMP/err")" 8 "h100 partial: TOPOTUNE_DEBUG=INFO lists the 8 NICs"
run "$TD" -i "$V/h100-sxm-partial.xml" -f matrix
expect_grep "$TMP/err" 'inferred from device id 0x2330 \(H100 SXM5 80GB: NVLink 4, 18 links x 25 GB/s per direction, sm 9.0\): 18 links via NVSwitch.*not seen' \
  "h100 partial: the finding names the device id, the part, the fabric and 'not seen'"
expect_grep "$TMP/err" 'speed 400 Gb/s assumed \(its PCIe link runs at 32 GT/s\)' "h100 partial: NIC speed assumption named"
expect_no_grep "$TMP/err" 'interconnect unknown' "h100 partial: no unknown-interconnect warning"
run "$TD" -i "$V/h100-sxm-partial.xml" -f json -q
expect_grep "$TMP/out" '"name": "ib-0000:19:00.0"' "h100 partial: JSON has the NIC ports"
expect_grep "$TMP/out" '"assumptions"' "h100 partial: JSON lists the assumptions"
[ "$(cnt '"code": "inferred-' "$TMP/out")" = 17 ] && ok "h100 partial: JSON has 17 inferred findings" \
  || not_ok "h100 partial: JSON inferred findings $(cnt '"code": "inferred-' "$TMP/out")"
expect_no_grep "$TMP/err" '.' "-q: nothing on stderr"
run "$TD" -i "$V/h100-sxm-partial.xml" --validate -q
expect_rc 1 "h100 partial: --validate exits 1 (warnings of a partial file)"
run "$TD" -i "$V/h100-sxm-partial.xml" --validate
expect_grep "$TMP/err" 'info: \[inferred-nvlink\]' "--validate lists the assumptions"

# tables plausible: 1 GiB AllReduce busbw on the inferred NVSwitch board
run "$TT" -i "$V/h100-sxm-partial.xml" -C allreduce --min-size 1G --max-size 1G -f json
expect_rc 0 "h100 partial: topo-tune table"
bb=$(grep -Eo '"busbw":[[:space:]]*[0-9.]+' "$TMP/out" | head -1 | grep -Eo '[0-9.]+$')
awk -v b="${bb:-0}" 'BEGIN{exit !(b > 100)}' && ok "h100 partial: 1 GiB AllReduce busbw $bb GB/s > 100" \
  || not_ok "h100 partial: 1 GiB AllReduce busbw ${bb:-none} GB/s, wanted > 100"
expect_no_grep "$TMP/err" 'interconnect unknown' "h100 partial: topo-tune does not warn"
expect_grep "$TMP/err" 'assumed: .*\[inferred-nvlink\]' "h100 partial: topo-tune prints the assumptions"
run "$TT" -i "$V/h100-sxm-partial.xml" -f env
expect_no_grep "$TMP/out" 'P2P_LEVEL=SYS' "h100 partial: -f env gives no SYS advice (fabric inferred)"
expect_no_grep "$TMP/out" 'NCCL_IB_HCA=' "h100 partial: NIC names are unknown: no NCCL_IB_HCA"
expect_grep "$TMP/out" 'known by PCI class only' "h100 partial: -f env says why"
run "$TT" -i "$V/h100-sxm-partial.xml" --nodes 4 -C allreduce --min-size 1M --max-size 1M
expect_rc 0 "h100 partial: --nodes 4 works (NICs from PCI class)"
expect_grep "$TMP/out" '8 NIC\(s\)/node at 400 Gb/s' "h100 partial: 8 NICs at the assumed 400 Gb/s"
run "$TT" -i "$V/h100-sxm-partial.xml" --explain 1G -C allreduce
expect_grep "$TMP/out" '^assumed: \[inferred-nvswitch\]' "--explain lists the assumptions"

# --- the un-inferred file: no device ids, no part named
run "$TT" -i "$FIX/vendor-partial.xml" -C allreduce --min-size 1G --max-size 1G
expect_rc 0 "vendor-partial: tuned"
expect_grep "$TMP/err" 'warning: GPU interconnect unknown: modelled as PCIe' "vendor-partial: stderr says the interconnect is unknown"
run "$TT" -i "$FIX/vendor-partial.xml" --explain 1G -C allreduce
expect_grep "$TMP/out" '^GPU interconnect unknown: modelled as PCIe' "vendor-partial: --explain says so"
run "$TT" -i "$FIX/vendor-partial.xml" -f env
expect_no_grep "$TMP/out" 'P2P_LEVEL=SYS' "vendor-partial: -f env does not advise SYS"
expect_grep "$TMP/out" 'GPU interconnect unknown' "vendor-partial: -f env says the interconnect is unknown"
run "$TT" -i "$FIX/vendor-partial.xml" --nodes 4 -C allreduce --min-size 1M --max-size 1M
expect_rc 0 "vendor-partial: --nodes 4 works"
run "$TD" -i "$FIX/vendor-partial.xml" -f matrix
expect_grep "$TMP/out" '^GPU0 +X +PIX +NODE +NODE +SYS +SYS +SYS +SYS +PIX +NODE +SYS +SYS' "vendor-partial: PIX to its NIC, PCIe only"
expect_grep "$TMP/out" 'NIC3: ib-0104:00:00.0' "vendor-partial: 4 NICs"

# --gpu-part / TOPOTUNE_GPU_PART name the part when there is no device id
run "$TD" -i "$FIX/vendor-partial.xml" --gpu-part A100-SXM -f matrix
expect_grep "$TMP/out" '^GPU0 +X +NV12 +NV12' "--gpu-part A100-SXM: NV12 through an inferred NVSwitch"
expect_grep "$TMP/err" 'part given by option \(A100-SXM\), no device id in the file' "--gpu-part: the finding says the part was given by option"
expect_no_grep "$TMP/err" 'interconnect unknown' "--gpu-part: no unknown warning"
TOPOTUNE_GPU_PART=h200_sxm run "$TT" -i "$FIX/vendor-partial.xml" -C allreduce --min-size 1G --max-size 1G
expect_grep "$TMP/err" 'H200 SXM 141GB' "TOPOTUNE_GPU_PART=h200_sxm names the part"
run "$TT" -i "$FIX/vendor-partial.xml" --gpu-part Z999
expect_rc 2 "--gpu-part unknown: usage error"
expect_grep "$TMP/err" "not a known part \(known: .*H100-SXM" "--gpu-part unknown: lists the known parts"

# --- 4x A100 SXM4, Ethernet NICs: direct mesh of an HGX 4-GPU board
run "$TD" -i "$V/a100-sxm4-eth-partial.xml" -f matrix
expect_grep "$TMP/out" '^GPU0 +X +NV4 +NV4 +NV4 +PIX +NODE' "a100 4-GPU: NV4 to each peer, PIX to its Ethernet NIC"
expect_grep "$TMP/err" 'HGX 4-GPU board assumed, no NVSwitch' "a100 4-GPU: the board assumption is printed"
expect_grep "$TMP/err" "Ethernet NIC from PCI class 0x020000 .* 'eth-0000:42:00.0'.* 200 Gb/s" "a100 4-GPU: Ethernet NIC, 200 Gb/s assumed from Gen4"

# --- H100 PCIe cards: NVLink bridges are optional, never assumed
run "$TT" -i "$V/h100-pcie-partial.xml" -C allreduce --min-size 1M --max-size 1M
expect_grep "$TMP/err" 'H100 PCIe is a PCIe card: NVLink bridges .* not assumed' "h100 pcie: bridges not assumed, said why"
expect_grep "$TMP/err" 'warning: GPU interconnect unknown: modelled as PCIe \(2 GPU' "h100 pcie: interconnect unknown warning"
expect_grep "$TMP/err" 'compute capability 9.0 inferred from device id 0x2331' "h100 pcie: the SM is inferred and said"

# --- round trips keep every attribute of the dialect
for f in "$V"/*.xml "$FIX/vendor-partial.xml"; do
  b=$(basename "$f" .xml)
  "$TD" -i "$f" -f nccl -q -o "$TMP/$b.nccl.xml" && "$TD" -i "$TMP/$b.nccl.xml" -f nccl -q -o "$TMP/$b.nccl2.xml" \
    && cmp -s "$TMP/$b.nccl.xml" "$TMP/$b.nccl2.xml" || { not_ok "$b: NCCL round trip stable"; continue; }
  lost=0
  for a in busid class vendor device link_speed link_width numaid affinity arch familyid modelid; do
    [ "$(grep -o " $a=\"[^\"]*\"" "$f" | sort | md5sum)" = "$(grep -o " $a=\"[^\"]*\"" "$TMP/$b.nccl.xml" | sort | md5sum)" ] || lost=1
  done
  [ $lost = 0 ] && ok "$b: NCCL round trip keeps every attribute" || not_ok "$b: NCCL round trip lost attributes"
  "$TD" -i "$f" -q -o "$TMP/$b.native.xml" && "$TD" -i "$TMP/$b.native.xml" -q -o "$TMP/$b.native2.xml" &&
    cmp -s "$TMP/$b.native.xml" "$TMP/$b.native2.xml" && ok "$b: native round trip byte-stable" || not_ok "$b: native round trip"
  expect_no_grep "$TMP/$b.nccl.xml" '<gpu|<net|<nvlink' "$b: nothing inferred is written into the file"
done

# --- fusion: vendor file (physical tree, classes only) + fake HGX scan, matched by bus id
bash "$MK" hgx8 "$TMP/hgx8" || not_ok "build fake hgx8"
run "$TD" --sysfs-root "$TMP/hgx8" --vendor-file "$V/hgx8-fake-vendor.xml" -f native
expect_rc 0 "fusion: scan + vendor file"
expect_grep "$TMP/err" '15 scanned device\(s\) found in the file by bus id' "fusion: 15 devices matched by bus id (8 GPUs, 7 NICs)"
expect_grep "$TMP/out" 'tt_source="fused".*tt_vendor_file=' "fusion: the result says it is fused"
expect_grep "$TMP/out" '<pci busid="ffff:ff:01.0"' "fusion: the vendor file's PCIe tree is kept"
expect_grep "$TMP/out" '<pci busid="0000:cc:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16" vendor="0x10de" device="0x2330"' \
  "fusion: empty attributes and device ids filled from the scan"
expect_grep "$TMP/out" '<net name="mlx5_0"' "fusion: NIC ports from the scan"
expect_grep "$TMP/out" '<pci busid="0000:b7:00.0"' "fusion: a device the file lacks is added under its scanned parent"
expect_no_grep "$TMP/out" '<pci busid="0000:15:00.0"' "fusion: scanned bridges whose devices are all in the file are not copied"
run "$TD" --sysfs-root "$TMP/hgx8" --vendor-file "$V/hgx8-fake-vendor.xml" -f matrix -q
expect_grep "$TMP/out" '^GPU0 +X +NODE +NODE +NODE +SYS .* +PIX +NODE +NODE +NODE +SYS' "fusion: the vendor tree decides the GPU-NIC classes (scan without NVML: GPUs not probed, nothing inferred)"
expect_grep "$TMP/out" 'NIC7: mlx5_7' "fusion: the NIC the file lacks is there"
run "$TD" -i "$V/h100-sxm-partial.xml" --vendor-file "$V/hgx8-fake-vendor.xml"
expect_rc 2 "--vendor-file with --input: usage error"
if command -v cc >/dev/null 2>&1; then
  mkdir -p "$TMP/stubs"
  cc -shared -fPIC -O1 -o "$TMP/stubs/libnvidia-ml.so.1" "$FIX/stubs/fake_nvml.c" 2>/dev/null &&
  cc -shared -fPIC -O1 -o "$TMP/stubs/libcuda.so.1" "$FIX/stubs/fake_cuda.c" 2>/dev/null
  HGX=":18:00.0,:2a:00.0,:3a:00.0,:4c:00.0,:9a:00.0,:ac:00.0,:ba:00.0,:cc:00.0"
  env LD_LIBRARY_PATH="$TMP/stubs" TOPOTUNE_SCAN_DEVICE_PROBES=1 FAKE_NVML_GPUS=$HGX \
    "$TD" --sysfs-root "$TMP/hgx8" --vendor-file "$V/hgx8-fake-vendor.xml" -o "$TMP/f.xml" 2>"$TMP/err"; RC=$?
  expect_rc 0 "fusion with stub NVML"
  eq "$(cnt '<gpu dev=' "$TMP/f.xml")" 8 "fusion: the scan's <gpu> elements land in the vendor tree"
  [ "$(cnt '<nvlink target=' "$TMP/f.xml")" = 32 ] && ok "fusion: NVLinks from the scan" || not_ok "fusion: nvlinks $(cnt '<nvlink target=' "$TMP/f.xml")"
  expect_no_grep "$TMP/err" 'inferred-nvlink' "fusion: NVLink seen, nothing inferred"
  run "$TD" -i "$TMP/f.xml" -f matrix -q
  expect_grep "$TMP/out" '^GPU0 +X +NV18' "fusion: NV18 from the scanned NVLinks"
else
  skip "fusion with stub NVML" "no C compiler"
fi
finish
