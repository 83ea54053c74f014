#!/usr/bin/env bash
# Several topology inputs (issue #33): --gpu-part for every host of several --input files or a
# merged file, display/management adapters that are not ranks, mixed GPU vendors refused, and
# cluster comparison of NICs known by PCI class only.
. "$(dirname "$0")/lib.sh"
TD="$BIN/topo-dump"
TT="$BIN/topo-tune"
TE="$BIN/topo-exec"
I="$FIX/inputs"
busbw() { grep -Eo '"busbw":[[:space:]]*[0-9.]+' "$TMP/out" | head -1 | grep -Eo '[0-9.]+$'; }
above() { awk -v b="${1:-0}" -v m="$2" 'BEGIN{exit !(b > m)}'; }

# --- item 2: --gpu-part applies to every --input file and to a merged file
cp "$FIX/vendor-partial.xml" "$TMP/p1.xml"
cp "$FIX/vendor-partial.xml" "$TMP/p2.xml"
run "$TT" -i "$TMP/p1.xml" --gpu-part A100-SXM -C allreduce --min-size 1G --max-size 1G -f json
one=$(busbw)
run "$TT" -i "$TMP/p1.xml" "$TMP/p2.xml" --gpu-part A100-SXM -C allreduce --min-size 1G --max-size 1G -f json
expect_rc 0 "two partial files with --gpu-part: tuned"
two=$(busbw)
above "$two" 100 && ok "two partial files with --gpu-part A100-SXM: busbw $two GB/s > 100 (one file: $one)" \
  || not_ok "two partial files with --gpu-part A100-SXM: busbw ${two:-none} GB/s, wanted > 100"
expect_no_grep "$TMP/err" 'gpu-unknown|interconnect unknown' "two files: no gpu-unknown warning with --gpu-part"
expect_grep "$TMP/err" 'assumed: .*\[inferred-nvlink\].*A100-SXM' "two files: the assumptions from --gpu-part are printed"
run "$TD" --merge "$TMP/p1.xml" "$TMP/p2.xml" -o "$TMP/merged.xml"
expect_rc 0 "merge two partial files"
run "$TT" -i "$TMP/merged.xml" --gpu-part A100-SXM -C allreduce --min-size 1G --max-size 1G -f json
expect_rc 0 "merged partial file with --gpu-part: tuned"
m=$(busbw)
[ "${m:-x}" = "${two:-y}" ] && ok "merged file with --gpu-part: same busbw as two files ($m)" \
  || not_ok "merged file with --gpu-part: busbw ${m:-none}, two files ${two:-none}"
expect_no_grep "$TMP/err" 'gpu-unknown' "merged file: no gpu-unknown warning with --gpu-part"
run env TOPOTUNE_GPU_PART=A100-SXM "$TT" -i "$TMP/p1.xml" "$TMP/p2.xml" -C allreduce --min-size 1G --max-size 1G -f json
[ "$(busbw)" = "${two:-y}" ] && ok "TOPOTUNE_GPU_PART and --gpu-part agree for two files" \
  || not_ok "TOPOTUNE_GPU_PART gives $(busbw), --gpu-part ${two:-none}"
run "$TT" -i "$TMP/p1.xml" "$TMP/p2.xml" -C allreduce --min-size 1G --max-size 1G -f json
expect_grep "$TMP/err" 'gpu-unknown' "two partial files without a part: still warned"

# --- item 5: a BMC's display adapter is listed, not a GPU (docs/xml-schema.md "Display and management adapters")
run "$TD" -i "$I/h100-8gpu-bmc-vga.xml" -f matrix
expect_rc 0 "BMC VGA: matrix"
expect_no_grep "$TMP/out" '^GPU8' "BMC VGA (ES1000, class 0x030000 vendor 0x1002): not GPU8"
expect_grep "$TMP/err" 'h100-8gpu-bmc-vga.xml:59: info: \[display-adapter\] 0000:03:00.0: .*vendor 0x1002 device 0x515e: ATI ES1000' \
  "BMC VGA: listed with file:line, class, vendor and device"
run "$TD" -i "$I/h100-8gpu-bmc-vga.xml" --validate
expect_rc 0 "BMC VGA: --validate clean (not a GPU without <gpu>, its slow x1 link does not matter)"
run "$TT" -i "$I/h100-8gpu-bmc-vga.xml" -C allreduce --min-size 1G --max-size 1G -f json
expect_rc 0 "BMC VGA: tuned"
expect_grep "$TMP/out" '"ranks":[[:space:]]*8,' "BMC VGA: 8 ranks"
expect_no_grep "$TMP/err" 'gpu-unknown|gpu-part' "BMC VGA: no --gpu-part asked"
run "$TT" -i "$I/h100-sxm-partial-aspeed-vga.xml" -C allreduce --min-size 1G --max-size 1G -f json
expect_rc 0 "partial file with an ASPEED VGA: tuned"
expect_no_grep "$TMP/err" 'gpu-unknown|interconnect unknown' "partial file with an ASPEED VGA: no gpu-unknown warning"
expect_grep "$TMP/err" '\[display-adapter\] 0000:03:00.0: .*ASPEED' "partial file: the ASPEED VGA is listed"
bb=$(busbw)
above "$bb" 100 && ok "partial file with an ASPEED VGA: NVSwitch board inferred, busbw $bb GB/s > 100" \
  || not_ok "partial file with an ASPEED VGA: busbw ${bb:-none} GB/s, wanted > 100"

run env TOPOTUNE_DEBUG=INFO "$TD" -i "$I/hwloc-pcie4-es1000.xml" -f matrix
expect_rc 0 "hwloc export with an ES1000 VGA: read"
expect_no_grep "$TMP/out" '^GPU4' "hwloc export: the ES1000 is not GPU4"
expect_grep "$TMP/err" 'PCI 0000:05:00.0 \(class 0x0300, vendor 0x1002 device 0x515e\) is a display or management adapter' \
  "hwloc export: the ES1000 is named (INFO) and left out"
expect_no_grep "$TMP/err" 'unknown generation|gpu-interconnect-unknown' "hwloc export: no AMD-generation or interconnect warning for it"

# --- item 4: GPUs of two vendors never make one communicator, whatever tells the vendor
run "$TT" -i "$I/node-nvidia-noids.xml" "$I/node-amd-noids.xml" -C allreduce
expect_rc 2 "an NVIDIA node and an AMD node without vendor ids: refused"
expect_grep "$TMP/err" 'node-amd-noids.xml:4: GPU 0000:c1:00.0: RCCL.s <gpu arch>.*node-nvidia-noids.xml:4: GPU 0000:18:00.0: NCCL.s <gpu sm> without RCCL.s gcn/arch.*cannot form one communicator across vendors' \
  "mixed nodes: both files, lines and the evidence are named"
run "$TD" --merge "$I/node-nvidia-noids.xml" "$I/node-amd-noids.xml" -o "$TMP/mixed.xml"
run "$TT" -i "$TMP/mixed.xml" -C allreduce
expect_rc 2 "a merged file of an NVIDIA and an AMD node: refused"
expect_grep "$TMP/err" 'across vendors' "merged mixed file: said why"
run "$TT" -i "$I/host-nvidia-and-amd.xml" -C allreduce
expect_rc 2 "one host with NVIDIA and AMD compute GPUs: refused"
expect_grep "$TMP/err" 'host-nvidia-and-amd.xml:12: GPU 0000:c1:00.0 is AMD \(vendor 0x1002\) but .*host-nvidia-and-amd.xml:4: GPU 0000:18:00.0 is NVIDIA \(vendor 0x10de\).*across vendors' \
  "one mixed host: both GPUs named by file:line"
# the other tools that read a topology say it too: topo-dump --validate warns, topo-exec --validate --topo
# refuses, --predict refuses (it would predict for a communicator that cannot exist)
run "$TD" --validate -i "$I/host-nvidia-and-amd.xml"
expect_rc 1 "topo-dump --validate of a host with NVIDIA and AMD GPUs: a warning"
expect_grep "$TMP/err" 'mixed-gpu-vendors.*host-nvidia-and-amd.xml:12: GPU 0000:c1:00.0 is AMD' "... mixed-gpu-vendors naming the GPUs"
run "$TE" --validate --host 2 -b 8 -e 64 --topo "$I/host-nvidia-and-amd.xml"
expect_rc 2 "topo-exec --validate --topo of a mixed host: refused"
expect_grep "$TMP/err" 'across vendors' "... saying why"
run "$TE" --host 2 -b 8 -e 64 -n 1 -w 0 --predict "$I/host-nvidia-and-amd.xml"
expect_rc 2 "topo-exec --predict of a mixed host: refused"
expect_grep "$TMP/err" 'prediction off: .*across vendors' "... saying why"
run "$TT" -i "$I/host-nvidia-and-amd.xml" "$I/node-nvidia-noids.xml" -C allreduce
expect_rc 2 "a mixed host among several inputs: refused"
run "$TT" -i "$I/h100-8gpu-bmc-vga.xml" "$I/h100-8gpu-bmc-vga.xml" -C allreduce
expect_rc 2 "the same file twice is still a usage error (host given twice)"
cp "$I/h100-8gpu-bmc-vga.xml" "$TMP/n1.xml"; cp "$I/h100-8gpu-bmc-vga.xml" "$TMP/n2.xml"
run "$TT" -i "$TMP/n1.xml" "$TMP/n2.xml" -C allreduce
expect_rc 0 "NVIDIA hosts beside an AMD display adapter: one communicator of the NVIDIA GPUs"
expect_grep "$TMP/err" '2 hosts, 0 differ' "NVIDIA hosts with a BMC VGA: the adapter is no GPU and no vendor"
for f in node-nvidia-noids node-amd-noids; do
  run "$TT" -i "$I/$f.xml" -C allreduce
  expect_rc 0 "$f alone: tuned"
done
# an AMD GPU known by RCCL's arch and class 0x0380 only is no "NVLink part" for its sm-like number
run "$TT" -i "$I/node-amd-noids.xml" -C allreduce
expect_no_grep "$TMP/err" 'nvlink-missing' "node-amd-noids alone: no nvlink-missing warning (AMD by the vendor rule)"

# --- item 3: cluster comparison counts and compares NICs known by PCI class only
B="$FIX/vendor/h100-sxm-partial.xml" # 8 InfiniBand NICs of class 0x0207xx, no <net>
for h in a b c; do cp "$B" "$TMP/cn-$h.xml"; done
run "$TT" -i "$TMP/cn-a.xml" "$TMP/cn-b.xml" "$TMP/cn-c.xml" -C allreduce
expect_grep "$TMP/err" '3 hosts, 0 differ from the majority' "class-only NICs: identical hosts do not differ"
cp "$I/classnic-one-removed.xml" "$TMP/cn-d.xml"
run "$TT" -i "$TMP/cn-a.xml" "$TMP/cn-b.xml" "$TMP/cn-c.xml" "$TMP/cn-d.xml" -C allreduce
expect_grep "$TMP/err" '4 hosts, 1 differs from the majority' "a host with one class-only NIC removed differs"
expect_grep "$TMP/err" 'host cn-d.xml differs: NIC ib-0000:2b:00.0 absent \(majority present\)' "the missing class-only NIC is named"
expect_grep "$TMP/err" 'host cn-d.xml differs: 7 NIC ports \(majority 8\)' "the NIC count differs"
cp "$I/classnic-gen4.xml" "$TMP/cn-e.xml"
run "$TT" -i "$TMP/cn-a.xml" "$TMP/cn-b.xml" "$TMP/cn-c.xml" "$TMP/cn-e.xml" -C allreduce
expect_grep "$TMP/err" '4 hosts, 1 differs from the majority' "a host with one class-only NIC at Gen4 differs"
expect_grep "$TMP/err" 'host cn-e.xml differs: NIC ib-0000:2b:00.0 PCIe link 16.0 GT/s PCIe x16 \(majority 32.0 GT/s PCIe x16\)' \
  "the downgraded class-only NIC is named with both links"
run "$TD" --merge "$TMP/cn-a.xml" "$TMP/cn-b.xml" "$TMP/cn-c.xml" "$TMP/cn-e.xml" -o "$TMP/cn-merged.xml"
run "$TT" -i "$TMP/cn-merged.xml" -C allreduce
expect_grep "$TMP/err" '4 hosts, 1 differs from the majority' "merged file: the Gen4 class-only NIC differs too"

finish
