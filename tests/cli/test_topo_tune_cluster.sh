#!/usr/bin/env bash
# CLI tests for topo-tune's sanity gate (--strict) and clusters of different hosts
# (--input a.xml b.xml ..., topo-dump --merge).  Per-host files are made here from the HGX fixture.
. "$(dirname "$0")/lib.sh"
T="$BIN/topo-tune"
D="$BIN/topo-dump"
HGX="$FIX/hgx-h100-8gpu.xml"
PCIE="$FIX/pcie-4gpu.xml"
[ -x "$T" ] && [ -x "$D" ] || { not_ok "topo-tune/topo-dump not built"; finish; }

# --- sanity gate: silent on good files, loud on absurd ones
for f in "$HGX" "$PCIE" "$FIX/nvl72-sm100.xml"; do
  run "$T" -i "$f" --strict -C allreduce
  expect_rc 0 "$(basename "$f"): no sanity warning, --strict exits 0"
  expect_no_grep "$TMP/err" 'warning' "$(basename "$f"): nothing on stderr"
done
run "$T" -i "$HGX" --nodes 4 --strict -C allreduce
expect_rc 0 "HGX x4: no sanity warning"
run "$T" -i "$PCIE" --nodes 2 --strict -C allreduce
expect_rc 0 "PCIe box x2: figures match its PCIe links, no warning"
run "$T" -i "$FIX/vendor-partial.xml" -C allreduce
expect_rc 0 "vendor-partial: table still written without --strict"
expect_grep "$TMP/err" '^topo-tune: warning: gpu-unknown: .*fix:' "vendor-partial: GPUs of unknown model named, with the fix"
run "$T" -i "$FIX/vendor-partial.xml" --strict -o "$TMP/vp.txt"
expect_rc 1 "vendor-partial --strict exits 1"
[ -e "$TMP/vp.txt" ] && not_ok "--strict wrote the table" || ok "--strict writes nothing"
sed '/<nvlink /d' "$HGX" > "$TMP/nonvl.xml"
run "$T" -i "$TMP/nonvl.xml" --strict -C allreduce
expect_rc 1 "HGX without NVLinks: --strict exits 1"
expect_grep "$TMP/err" 'warning: nvlink-missing: 8 GPUs are NVLink parts \(device 0x2330, sm 90\)' "NVLink parts without NVLink named"
sed -e 's/link_speed="32.0 GT\/s PCIe" link_width="16"/link_speed="2.5 GT\/s PCIe" link_width="1"/g' "$TMP/nonvl.xml" > "$TMP/tiny.xml"
run "$T" -i "$TMP/tiny.xml" -C allreduce --explain 1G
expect_grep "$TMP/err" 'warning: busbw-absurd: predicted busbw 0\.[0-9]+ GB/s' "busbw below 1 GB/s named"
expect_grep "$TMP/out" '^sanity checks' "--explain lists the sanity checks"
run "$T" -i "$TMP/tiny.xml" -C allreduce -f json
expect_grep "$TMP/out" '"code":[[:space:]]*"busbw-absurd"' "JSON table records the warnings"

# --- per-host files: healthy a, b; c with GPU 3 at x8; d with mlx5_2 down; e without GPU 7
cp "$HGX" "$TMP/a.xml"; cp "$HGX" "$TMP/b.xml"
sed '/busid="0000:55:00.0"/s/link_width="16"/link_width="8"/' "$HGX" > "$TMP/c.xml"
sed 's/<net name="mlx5_2"/<net state="DOWN" name="mlx5_2"/' "$HGX" > "$TMP/d.xml"
awk '/<pci busid="0000:d5:00.0"/ {skip=1} skip && /<\/pci>/ {skip=0; next} !skip' "$HGX" > "$TMP/e.xml"
grep -q 'gpu dev="7"' "$TMP/e.xml" && not_ok "e.xml still has GPU 7" || ok "e.xml made without GPU 7"

run "$T" -i "$TMP/a.xml" "$TMP/b.xml" -C allreduce -f json -o "$TMP/ab.json"
expect_rc 0 "two healthy hosts exit 0"
expect_grep "$TMP/err" '2 hosts, 0 differ' "healthy hosts: none differ"
expect_grep "$TMP/ab.json" '"nodes":[[:space:]]*2' "nodes = number of files"
run "$T" -i "$TMP/a.xml" "$TMP/b.xml" "$TMP/c.xml" "$TMP/d.xml" -C allreduce -f json -o "$TMP/abcd.json"
expect_rc 0 "four hosts exit 0"
expect_grep "$TMP/err" 'host c.xml differs: GPU 3 PCIe link 32.0 GT/s PCIe x8 \(majority 32.0 GT/s PCIe x16\)' "degraded PCIe link named"
expect_grep "$TMP/err" 'host d.xml differs: NIC mlx5_2 state DOWN' "NIC down named"
expect_grep "$TMP/err" 'host d.xml: NET port mlx5_2 recorded down, left out' "down port left out of the model"
expect_no_grep "$TMP/err" 'host (a|b).xml differs' "healthy hosts not named"
expect_grep "$TMP/err" 'host (c|d).xml is the slowest' "a degraded host is chosen"
if command -v python3 >/dev/null; then
  python3 - "$TMP/ab.json" "$TMP/abcd.json" <<'PY' && ok "JSON records hosts and chosen; the chosen (degraded) host is the slowest" || not_ok "cluster JSON check"
import json,sys
h=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2]))
cl=d["topology"]["cluster"]
assert [x["name"] for x in cl["hosts"]]==["a.xml","b.xml","c.xml","d.xml"], cl
assert cl["chosen"] in ("c.xml","d.xml"), cl
assert [x["differs"] for x in cl["hosts"]]==[False,False,True,True]
assert d["version"]==1 and d["nodes"]==4
bw={x["name"]:x["busbw_GBps"] for x in cl["hosts"]}
assert bw[cl["chosen"]] == min(bw.values()) and bw[cl["chosen"]] < bw["a.xml"], bw
PY
else skip "cluster JSON check" "no python3"; fi
run "$T" -i "$TMP/a.xml" -i "$TMP/b.xml" -i "$TMP/e.xml" -C allreduce
expect_rc 0 "repeated --input accumulates"
expect_grep "$TMP/err" 'host e.xml differs: 7 GPUs \(majority 8\)' "missing GPU named"
expect_grep "$TMP/err" '7 ranks per node' "ranks per node = the fewest GPUs"
run "$T" -i "$TMP/a.xml" "$TMP/e.xml" -g 8
expect_rc 2 "-g above a host's GPUs refused"
expect_grep "$TMP/err" 'host e.xml .* has 7 GPUs' "refusal names the host"
run "$T" -i "$TMP/a.xml" "$TMP/b.xml" --nodes 3
expect_rc 2 "--nodes not matching the files refused"
expect_grep "$TMP/err" '--nodes 3 but the input describes 2 hosts' "refusal says why"
run "$T" -i "$TMP/a.xml" "$TMP/b.xml" --nodes 2 -C allreduce
expect_rc 0 "--nodes matching the files accepted"

# --- hostile inputs name the file
run "$T" -i "$TMP/a.xml" "$TMP/nothere.xml"
expect_rc 2 "unreadable host file exits 2"
expect_grep "$TMP/err" 'nothere.xml' "unreadable file named"
run "$T" -i "$TMP/a.xml" "$FIX/rccl-xgmi-4gpu.xml"
expect_rc 2 "AMD with NVIDIA refused"
expect_grep "$TMP/err" 'rccl-xgmi-4gpu.xml.*AMD' "mixed vendors named"
run "$T" -i "$TMP/a.xml" "$FIX/bad/not-xml.txt"
expect_rc 2 "not XML refused"
expect_grep "$TMP/err" 'not-xml.txt' "not-XML file named"
run "$T" --calibrate "$TMP/x" --input "$TMP/a.xml" --input "$TMP/b.xml"
expect_rc 2 "several inputs with a measurement mode refused"

# --- topo-dump --merge and the merged file as input
run "$D" --merge "$TMP/a.xml" "$TMP/b.xml" "$TMP/c.xml" "$TMP/d.xml" -o "$TMP/cluster.xml"
expect_rc 0 "topo-dump --merge exits 0"
expect_grep "$TMP/cluster.xml" '^<cluster version="1">' "merged file has the <cluster> root"
expect_grep "$TMP/cluster.xml" '<system version="1" host="c">' "hosts named after their files"
run "$T" -i "$TMP/cluster.xml" -C allreduce -f json -o "$TMP/m.json"
expect_rc 0 "topo-tune reads the merged file"
expect_grep "$TMP/err" 'host c differs: GPU 3 PCIe link' "merged file: degraded host named"
expect_grep "$TMP/m.json" '"nodes":[[:space:]]*4' "merged file: one node per host"
run "$D" --merge "$TMP/a.xml" "$TMP/a.xml" -o "$TMP/dup.xml"
expect_rc 2 "the same host twice refused"
run "$D" --merge
expect_rc 2 "--merge without files refused"
finish
