#!/usr/bin/env bash
# Real-world dialects (#19 parts 3, 4): RCCL's files (version 2, <xgmi>, gcn, arch, sm as
# a gfx number), NIC speeds in a libfabric unit, a self-target NVLink, an NCCL graph file.
# Every fixture here is written by hand from public documentation (docs/xml-schema.md).
. "$(dirname "$0")/lib.sh"
D="$BIN/topo-dump"
T="$BIN/topo-tune"
MI300="$FIX/rccl-mi300x-8gpu.xml"
MI250="$FIX/rccl-mi250x-8gcd-cxi.xml"
MI200="$FIX/rccl-xgmi-4gpu.xml"
SELF="$FIX/nccl-nvlink-self.xml"
GRAPH="$FIX/nccl-graph-2gpu.xml"
MI100="$FIX/rccl-mi100-gcn-dupswitch.xml"
[ -x "$D" ] && [ -x "$T" ] || { not_ok "tools not built"; finish; }

# busbw of the 1 GiB allreduce row in a topo-tune table ($TMP/out)
busbw_1g() { awk '$1 == "0" && $2 == "B" { print $NF }' "$TMP/out" | tail -1; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

# --- each class loads with the right GPUs, NICs and link classes
run "$D" -i "$MI300" -f json
expect_rc 0 "MI300X: converts to json"
n=$(grep -c '"type":[[:space:]]*"GPU"' "$TMP/out"); [ "$n" = 8 ] && ok "MI300X: 8 GPUs" || not_ok "MI300X: $n GPUs"
n=$(grep -o '"name":[[:space:]]*"bnxt_re[0-7]"' "$TMP/out" | sort -u | wc -l); [ "$n" = 8 ] && ok "MI300X: 8 NET ports" || not_ok "MI300X: $n NET ports"
run "$D" -i "$MI300" -f matrix
n=$(grep -Eo 'XGMI1' "$TMP/out" | wc -l); [ "$n" = 56 ] && ok "MI300X: 56 single xGMI GPU pairs (7 per GPU)" || not_ok "MI300X: $n XGMI1 cells"
expect_grep "$TMP/out" '^GPU0 +X +XGMI1' "MI300X matrix: GPU0-GPU1 one xGMI link"
run "$D" -i "$MI250" -f matrix
expect_rc 0 "MI250X: converts"
expect_grep "$TMP/out" '^GPU0 +X +XGMI4 ' "MI250X: the two GCDs of a package share 4 xGMI links"
expect_grep "$TMP/out" '^GPU1 +XGMI4 +X +XGMI2 ' "MI250X: GCDs of different packages 2 links"
n=$(grep -c '^NIC[0-9]' "$TMP/out"); [ "$n" = 4 ] && ok "MI250X: 4 NICs" || not_ok "MI250X: $n NICs"
# two xGMI hops are labelled for AMD, not NVB (issue #33 item 8)
expect_grep "$TMP/out" '^GPU0 +X +XGMI4 +XGB +XGB +XGMI1 +XGB +XGB +XGMI2 ' "MI250X: GCDs two xGMI hops apart are XGB"
expect_no_grep "$TMP/out" '^GPU.* NVB ' "MI250X: no NVB cell in an all-AMD matrix"
expect_grep "$TMP/out" '^  XGB  = AMD xGMI through one intermediate GPU' "MI250X: the legend names XGB"
TOPOTUNE_DEBUG=INFO run "$D" -i "$MI250" -f matrix
expect_grep "$TMP/err" 'cxi0> speed 200000000 is above 10 Tb/s as Mb/s: read as kb/s, 200000 Mb/s' "cxi speed: unit inferred on conversion (INFO log)"

# --- the RCCL dialect is kept through every round trip
for f in "$MI300" "$MI250" "$MI200"; do
  b=$(basename "$f" .xml)
  run "$D" -i "$f" -f nccl -o "$TMP/$b.nccl.xml"
  expect_rc 0 "$b: --format nccl"
  v=$(sed -n 's/^<system version="\([0-9]*\)".*/\1/p' "$f")
  expect_grep "$TMP/$b.nccl.xml" "^<system version=\"$v\">" "$b: nccl output keeps version=\"$v\""
  expect_grep "$TMP/$b.nccl.xml" '<xgmi target=' "$b: nccl output keeps <xgmi>"
  expect_grep "$TMP/$b.nccl.xml" '<gpu dev="0" sm="9[04]" gcn="gfx9[0-9a-z:+-]*" arch="[0-9]+" rank="0" gdr="1">' "$b: nccl output keeps gcn and arch"
  run "$D" -i "$f" -f native -o "$TMP/$b.native.xml"
  run "$D" -i "$TMP/$b.native.xml" -f nccl -o "$TMP/$b.rt.xml"
  if cmp -s "$TMP/$b.nccl.xml" "$TMP/$b.rt.xml"; then ok "$b: native -> nccl gives the same file"; else not_ok "$b: native round trip differs"; fi
  run "$D" -i "$TMP/$b.nccl.xml" -f nccl -o "$TMP/$b.rt2.xml"
  if cmp -s "$TMP/$b.nccl.xml" "$TMP/$b.rt2.xml"; then ok "$b: nccl -> nccl is stable"; else not_ok "$b: nccl round trip differs"; fi
  # --validate accepts what the reader accepts
  run "$D" -i "$f" --validate
  [ "$RC" -le 1 ] && ok "$b: --validate accepts it (exit $RC)" || not_ok "$b: --validate exit $RC: $(grep error "$TMP/err" | head -2)"
  if [ "$v" = 2 ]; then expect_grep "$TMP/err" '\[rccl-dialect\]' "$b: --validate names RCCL's dialect"; fi
  expect_no_grep "$TMP/err" 'unsupported-version|not a CUDA compute capability \(major' "$b: no version error, sm not read as CUDA"
  run "$D" -i "$TMP/$b.native.xml" --validate
  [ "$RC" -le 1 ] && ok "$b: --validate accepts the native copy" || not_ok "$b: native copy --validate exit $RC"
done

# --- every inferred value has its finding
run "$D" -i "$MI300" --check
expect_grep "$TMP/err" '\[amd-gpu\] gpu 0000:05:00.0: AMD MI300 series .*from its gcn.*sm=94 is RCCL.s gfx number.*64 GB/s per xGMI link' "MI300X: --check names the model of each AMD GPU"
n=$(grep -c '\[amd-gpu\]' "$TMP/err"); [ "$n" = 8 ] && ok "MI300X: one amd-gpu finding per GPU" || not_ok "MI300X: $n amd-gpu findings"
run "$D" -i "$MI250" --check
expect_grep "$TMP/err" 'MI200 series.*50 GB/s per xGMI link' "MI250X: --check gives the MI200 xGMI bandwidth"
expect_grep "$TMP/err" 'warning: \[net-speed-unit\] net cxi0: speed=200000000 .*read as kb/s, 200 Gb/s' "cxi: --check finding for the inferred unit"
sed 's/device="0x74a1"/device="0x7fff"/; s/gcn="gfx942"/gcn="gfx999"/' "$MI300" >"$TMP/unknown-amd.xml"
run "$D" -i "$TMP/unknown-amd.xml" --check
expect_grep "$TMP/err" 'warning: \[amd-gpu\] .*unknown generation' "unknown AMD generation: a warning with the default used"
sed 's/speed="200000000"/speed="900000000000000"/' "$MI250" >"$TMP/badspeed.xml"
run "$D" -i "$TMP/badspeed.xml" --check
expect_grep "$TMP/err" '\[net-speed-unit\].*no plausible port speed in any unit' "absurd NIC speed: refused with a finding"
run "$T" -i "$TMP/badspeed.xml" -C allreduce --min-size 1M --max-size 1M
expect_rc 0 "absurd NIC speed: a single-node table still comes out"

# --- tables are plausible
run "$T" -i "$MI300" -C allreduce --min-size 1G --max-size 1G
expect_rc 0 "MI300X: topo-tune exits 0"
bw=$(busbw_1g)
ge "$bw" 150 && ok "MI300X: 1 GiB allreduce busbw $bw GB/s (hundreds)" || not_ok "MI300X: 1 GiB allreduce busbw '$bw' GB/s"
run "$T" -i "$MI300" -m nccl -C allreduce --min-size 1G --max-size 1G
bw=$(busbw_1g)
ge "$bw" 150 && ok "MI300X, nccl model: busbw $bw GB/s" || not_ok "MI300X nccl model: busbw '$bw'"
for sm in 104 120 304; do
  sed "s/sm=\"94\"/sm=\"$sm\"/" "$MI300" >"$TMP/sm$sm.xml"
  run "$T" -i "$TMP/sm$sm.xml" -C allreduce --min-size 1G --max-size 1G
  bw=$(busbw_1g)
  ge "$bw" 150 && ok "MI300X with sm=$sm: busbw $bw GB/s (sm is not read as a CUDA arch)" || not_ok "sm=$sm: busbw '$bw'"
done
run "$T" -i "$MI250" -C allreduce --min-size 1G --max-size 1G
expect_rc 0 "MI250X + cxi: a single-node table (no 'NIC speed out of range')"
expect_grep "$TMP/out" '4 NIC\(s\)/node at 200 Gb/s' "MI250X: cxi ports at 200 Gb/s"
bw=$(busbw_1g)
ge "$bw" 50 && ok "MI250X: 1 GiB allreduce busbw $bw GB/s" || not_ok "MI250X: busbw '$bw'"
run "$T" -i "$MI250" -N 2 -C allreduce --min-size 1G --max-size 1G
expect_rc 0 "MI250X + cxi: two nodes tune"
bw=$(busbw_1g)
ge "$bw" 5 && ok "MI250X x2: busbw $bw GB/s" || not_ok "MI250X x2: busbw '$bw'"

# --- an <nvlink> to the GPU's own bus id: read as NCCL does, with a warning, in every mode
run "$D" -i "$SELF"
expect_rc 0 "self-target nvlink: converts"
expect_grep "$TMP/err" 'links the GPU to itself' "self-target nvlink: conversion warns"
run "$D" -i "$SELF" --check
expect_rc 1 "self-target nvlink: --check exits 1 (warning)"
expect_grep "$TMP/err" 'warning: \[nvlink-self\]' "self-target nvlink: --check finding"
run "$D" -i "$SELF" --validate
expect_rc 1 "self-target nvlink: --validate exits 1 (warning)"
expect_grep "$TMP/err" 'warning: \[nvlink-self\]' "self-target nvlink: --validate finding"
run "$D" -i "$SELF" -f matrix
expect_grep "$TMP/out" '^GPU0 +X +NV12' "self-target nvlink: the peer's own link still joins the pair"

# --- older RCCL's numeric gcn (908) and two switch <pci> with one bus id (#33 item 7)
run "$D" -i "$MI100" -f matrix
expect_rc 0 "MI100 numeric gcn + duplicate switch: converts"
expect_grep "$TMP/out" '^GPU3 +XGMI1 +XGMI1 +XGMI1 +X ' "MI100: 4 GPUs, all pairs one xGMI link"
run "$D" -i "$MI100" --check
expect_rc 0 "MI100: --check exits 0 (infos only)"
n=$(grep -c '\[amd-gpu\] gpu .*AMD MI100 (CDNA) (from its gcn).*46 GB/s per xGMI link' "$TMP/err")
[ "$n" = 4 ] && ok "MI100: gcn=\"908\" names MI100 for each GPU" || not_ok "MI100: $n GPUs named MI100"
expect_no_grep "$TMP/err" 'unknown generation' "MI100: no unknown generation"
expect_grep "$TMP/err" ':12: info: \[duplicate-switch\] pci 0000:20:03.1: .*already used at line 3' "MI100: --check names the duplicate switch (info)"
run "$D" -i "$MI100" --validate
expect_rc 0 "MI100: --validate exits 0"
expect_grep "$TMP/err" ':12: info: \[duplicate-switch\]' "MI100: --validate names the duplicate switch (info)"
expect_no_grep "$TMP/err" 'duplicate-busid' "MI100: no duplicate-busid error"
run "$D" -i "$MI100" -f nccl -o "$TMP/mi100.nccl.xml"
n=$(grep -c 'busid="0000:20:03.1"' "$TMP/mi100.nccl.xml")
[ "$n" = 2 ] && ok "MI100: both switch elements written" || not_ok "MI100: $n switch elements written"
run "$D" -i "$TMP/mi100.nccl.xml" -f nccl -o "$TMP/mi100.rt.xml"
cmp -s "$TMP/mi100.nccl.xml" "$TMP/mi100.rt.xml" && ok "MI100: nccl round trip stable" || not_ok "MI100: round trip differs"
run "$T" -i "$MI100" -C allreduce --min-size 1G --max-size 1G
expect_rc 0 "MI100: topo-tune accepts it"
sed 's/busid="0000:43:00.0" class="0x038000"/busid="0000:20:03.1" class="0x038000"/' "$MI100" > "$TMP/dupgpu.xml"
run "$D" -i "$TMP/dupgpu.xml"
expect_rc 2 "a GPU with a switch's bus id is still refused"
expect_grep "$TMP/err" 'duplicate bus id 0000:20:03.1' "the refusal names the bus id"

# --- an NCCL graph file is refused by every mode, --check included
run "$D" -i "$GRAPH" --check
expect_rc 2 "graph file: --check refuses it"
expect_grep "$TMP/err" 'root element is <graphs>.*NCCL graph file' "graph file: --check says what it is"
run "$D" -i "$GRAPH"
expect_rc 2 "graph file: conversion refuses it"
run "$D" -i "$GRAPH" --validate
expect_rc 2 "graph file: --validate refuses it"
# every mode names it (issue #33 item 8), not only --check
X="$BIN/topo-exec"
for mode in "$D -i $GRAPH" "$D -i $GRAPH -f matrix" "$D -i $GRAPH --validate" "$T -i $GRAPH" "$T -i $GRAPH -i $GRAPH" \
            "$X --validate --topo $GRAPH --host 2 -b 1K -e 1K -n 1 --no-progress"; do
  run $mode
  m="$(basename "${mode%% *}") ${mode#* }"; m=${m//$GRAPH/GRAPH}
  [ "$RC" -ne 0 ] && grep -q 'root element is <graphs>.*an NCCL graph file (NCCL_GRAPH_DUMP_FILE' "$TMP/err" &&
    ok "graph file named by $m (exit $RC)" || not_ok "graph file: $m: exit $RC, $(head -c 300 "$TMP/err")"
done
finish
