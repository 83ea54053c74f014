#!/usr/bin/env bash
# CLI tests for topo-tune: formats, choices at the reference's worked examples, errors.
. "$(dirname "$0")/lib.sh"
T="$BIN/topo-tune"
HGX="$FIX/hgx-h100-8gpu.xml"
VM="$FIX/nccl-dump-h100-vm.xml"
PCIE="$FIX/pcie-4gpu.xml"
[ -x "$T" ] || { not_ok "topo-tune not built"; finish; }

# --- NCCL model on the HGX fixture, 1 node: ring/LL up to 1 MiB, NVLS above (reference 8a)
run "$T" --input "$HGX" --model nccl --format nccl-csv --collective allreduce
expect_rc 0 "nccl-csv exits 0"
expect_grep "$TMP/out" '^# topotune tuning table \(model nccl\) for NCCL' "nccl-csv: the first line names the model once (was 'topotune topotune' for the default model)"
expect_grep "$TMP/out" '^# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff$' "csv header in NCCL example-plugin column order"
expect_grep "$TMP/out" '^allreduce,1048576,2097151,ring,ll,24,1,8,-1,-1$' "1 MiB: ring/ll on 24 channels"
expect_grep "$TMP/out" '^allreduce,2097152,34359738367,nvls,simple,16,1,8,-1,-1$' "from 2 MiB: nvls/simple 16 channels"
lines=$(grep -vc '^#' "$TMP/out")
[ "$lines" -ge 2 ] && ok "csv has $lines rules" || not_ok "csv has $lines rules"

# --- 4 nodes: the fixture has 2 NICs per PCIe switch, so the tree is BALANCED (no x0.85):
# tree/LL busBw min(min(384*.92, 8*36)/3.8, 20.4) = 20.4, algBw 10.2, lat 35.2;
# 64 KiB: 35.2 + 65536/(1000*10.2*0.6) = 45.91 us
run "$T" -i "$HGX" --nodes 4 --model nccl --explain 64K --collective allreduce
expect_rc 0 "explain exits 0"
expect_grep "$TMP/out" 'tree/ll +45\.91 .*<= fastest' "4x8 64 KiB: tree/ll 45.91 us is fastest"
expect_grep "$TMP/out" 'nvls/simple +disabled: NVLS on several nodes needs CollNet' "explain names why NVLS is off"

# --- JSON schema
run "$T" -i "$HGX" --nodes 2 --format json -o "$TMP/t.json"
expect_rc 0 "json to file exits 0"
expect_grep "$TMP/t.json" '"schema":[[:space:]]*"topotune-tuning-table"' "json schema name"
expect_grep "$TMP/t.json" '"ranks":[[:space:]]*16' "json ranks = 2 x 8"
expect_grep "$TMP/t.json" '"model":[[:space:]]*"topotune"' "default model is topotune"
if command -v python3 >/dev/null; then
  python3 - "$TMP/t.json" <<'PY' && ok "json entries have every field and contiguous ranges" || not_ok "json entries check"
import json,sys
d=json.load(open(sys.argv[1]))
keys={"collective","min_bytes","max_bytes","algorithm","protocol","channels","predicted_us","algbw","busbw"}
prev={}
for e in d["entries"]:
    assert keys <= set(e), e
    c=e["collective"]
    assert e["min_bytes"] == prev.get(c, -1) + 1, e
    prev[c]=e["max_bytes"]
assert set(prev)=={"allreduce","allgather","reducescatter","broadcast","reduce"}
PY
else skip "json check" "no python3"; fi

# --- determinism
run "$T" -i "$HGX" --nodes 2 --format json -o "$TMP/t2.json"
cmp -s "$TMP/t.json" "$TMP/t2.json" && ok "same input, same bytes" || not_ok "output differs between runs"

# --- human table with crossovers
run "$T" -i "$HGX" --nodes 4 --collective allgather
expect_rc 0 "table exits 0"
expect_grep "$TMP/out" '^allgather' "table section per collective"
expect_grep "$TMP/out" 'crossovers' "table lists crossovers"

# --- env hints
run "$T" -i "$HGX" --nodes 2 --format env
expect_rc 0 "env exits 0"
expect_grep "$TMP/out" '^export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1' "NCCL_IB_HCA from nearest NICs"
run "$T" -i "$VM" --format env
expect_grep "$TMP/out" 'NCCL_TOPO_FILE' "VM without NUMA: NCCL_TOPO_FILE advice"
expect_grep "$TMP/out" '^export NCCL_SOCKET_IFNAME==eth0' "socket NIC: NCCL_SOCKET_IFNAME"
run "$T" -i "$PCIE" --format env
expect_grep "$TMP/out" 'No NVLink' "PCIe box: P2P note"

# --- calibration file
cat > "$TMP/cal.json" <<'J'
{"schema":"topotune-calibration","version":1,"links":{"NVL":{"alpha_us":1.0}}}
J
run "$T" -i "$HGX" --calibration "$TMP/cal.json" --format json
expect_grep "$TMP/out" "\"calibration\":[[:space:]]*\"$TMP/cal.json\"" "calibration file recorded in the table"
echo '{"schema":"topotune-calibration","version":1,"links":{"NVL":{"alpha":1}}}' > "$TMP/bad.json"
run "$T" -i "$HGX" --calibration "$TMP/bad.json"
expect_rc 2 "bad calibration exits 2"
expect_grep "$TMP/err" "links.NVL: unknown member 'alpha'" "bad calibration names the member"

# --- errors: exit 2 with a clear message
run "$T" -i "$HGX" --nodes 0;              expect_rc 2 "--nodes 0 exits 2"; expect_grep "$TMP/err" 'nodes' "--nodes 0 message"
run "$T" -i "$HGX" --nic-speed 0;          expect_rc 2 "--nic-speed 0 exits 2"; expect_grep "$TMP/err" 'nic-speed' "nic speed message"
run "$T" -i "$HGX" --gpus-per-node 9;      expect_rc 2 "more ranks than GPUs exits 2"; expect_grep "$TMP/err" 'only 8 GPUs' "ranks message"
run "$T" -i "$HGX" --collective alltoall;  expect_rc 2 "unknown collective exits 2"; expect_grep "$TMP/err" "unknown collective 'alltoall'" "collective message"
run "$T" -i "$HGX" --model magic;          expect_rc 2 "unknown model exits 2"; expect_grep "$TMP/err" "unknown model 'magic'" "model message"
run "$T" -i "$HGX" --format yaml;          expect_rc 2 "unknown format exits 2"
run "$T" -i "$HGX" --explain 12Q;          expect_rc 2 "bad size exits 2"; expect_grep "$TMP/err" "not a size" "size message"
run "$T" -i "$VM" --nodes 4 --nics-per-node 0; expect_rc 2 "several nodes without NICs exits 2"
run "$T" -i "$TMP/missing.xml";            expect_rc 2 "missing input exits 2"; expect_grep "$TMP/err" 'missing.xml' "missing input named"
run "$T";                                  expect_rc 2 "no --input exits 2"
printf '<system version="1"><cpu numaid="0"/></system>\n' > "$TMP/nogpu.xml"
run "$T" -i "$TMP/nogpu.xml";              expect_rc 2 "topology without GPU exits 2"; expect_grep "$TMP/err" 'no GPU' "no GPU message"
# an output file is not clobbered on error
echo keep > "$TMP/keep.txt"
run "$T" -i "$HGX" --nodes 0 -o "$TMP/keep.txt"
grep -qx keep "$TMP/keep.txt" && ok "failed run leaves the output file alone" || not_ok "output clobbered"

# --- sizes with suffixes
run "$T" -i "$HGX" --model nccl --collective allreduce --min-size 1M --max-size 1M --format nccl-csv
expect_grep "$TMP/out" '^allreduce,0,2097151,ring,ll,24,1,8,-1,-1$' "--min-size/--max-size with suffixes"
# --- benchmark (hidden): every full table well under a second
run "$T" --bench -i "$HGX"
expect_rc 0 "--bench exits 0"
expect_grep "$TMP/out" '^\| generated NVL72 \(72 GPUs\) +\| +1 \| +72 \|' "bench covers the generated NVL72 domain"
expect_grep "$TMP/out" '\| +4096 \| +32768 \| nccl ' "bench covers 4096 nodes"
slow=$(awk -F'|' '/^\| / && $7 ~ /[0-9]/ { if ($7 + 0 > 1000) print }' "$TMP/out")
[ -z "$slow" ] && ok "every bench row below 1000 ms" || not_ok "slow bench rows: $slow"
# --- fixture generator (hidden)
run "$T" --gen-nvswitch-domain 72
cmp -s "$TMP/out" "$FIX/nvl72-sm100.xml" && ok "generator reproduces the NVL72 fixture" || not_ok "generator output differs from the fixture"
# issue #32 item 12: two GPUs of one host with the same dev are refused (file:line, attribute), as a duplicate bus id
run "$T" -i "$FIX/invalid/duplicate-gpu-dev.xml" -o "$TMP/dupdev.json"
expect_rc 2 "two GPUs with dev=0 on one host: exit 2"
expect_grep "$TMP/err" "duplicate-gpu-dev\.xml:9: <gpu> attribute 'dev': duplicate device index 0: GPU 0000:24:00\.0 has it, and so has GPU 0000:23:00\.0 \(line 6\)" \
  "... naming file:line, the attribute and both GPUs"
[ ! -e "$TMP/dupdev.json" ] && ok "... no table written" || not_ok "a table was written for a contradictory topology"
# the same dev on two hosts (host_hash) is fine
cp "$FIX/pcie-4gpu.xml" "$TMP/twohosts.xml"
python3 - "$TMP/twohosts.xml" <<'P'
import sys, re
s = open(sys.argv[1]).read()
a = s.index('<cpu '); b = s.index('</cpu>') + len('</cpu>')
cpu = s[a:b]
cpu2 = re.sub(r'host_hash="[^"]*"', 'host_hash="0x1111222233334444"', cpu)
cpu2 = re.sub(r'busid="0000:([0-9a-f]{2})', lambda m: 'busid="0001:' + m.group(1), cpu2)
cpu2 = re.sub(r'guid="0x[0-9a-f]+"', 'guid="0x1c34da0300e07a99"', cpu2)
open(sys.argv[1], 'w').write(s[:b] + '\n  ' + cpu2 + s[b:])
P
run "$BIN/topo-dump" -i "$TMP/twohosts.xml" --validate
[ "$RC" -le 1 ] && ! grep -q 'duplicate-gpu-dev' "$TMP/err" && ok "dev 0..3 on each of two hosts (host_hash): no duplicate-gpu-dev finding (exit $RC)" ||
  not_ok "two hosts with dev 0..3 each: exit $RC, $(head -c 300 "$TMP/err")"
run "$T" --version; expect_rc 0 "--version"
run "$T" --help; expect_rc 0 "--help"; expect_grep "$TMP/out" 'nic-speed' "help lists options"
run "$T" --input "$HGX" --format nccl-csv --collective allreduce
expect_no_grep "$TMP/out" 'topotune topotune' "nccl-csv of the default model: no 'topotune topotune'"
finish
