#!/usr/bin/env bash
# CLI tests for topo-tune on clusters (issue "Cluster truth"): --fabric and TOPOTUNE_FABRIC, what
# --explain says is an assumption, tables for NCCL that never force a candidate a published run of
# the same machine contradicts, and --expect as a health check on published runs of real clusters
# (tests/fixtures/published/) and on degraded copies of them.
. "$(dirname "$0")/lib.sh"
T="$BIN/topo-tune"
HGX="$FIX/hgx-h100-8gpu.xml"
PUB="$FIX/published"
[ -x "$T" ] || { not_ok "topo-tune not built"; finish; }

# --- the fabric: detected, given, refused
run "$T" -i "$HGX" -N 2 -f json -C allreduce --max-size 8
expect_grep "$TMP/out" '"name":[[:space:]]*"ib"' "HGX file: InfiniBand"
expect_grep "$TMP/out" '"origin":[[:space:]]*"assumed"' "mlx5 ports without a link layer: said to be assumed"
run "$T" -i "$FIX/hgx-h100-8gpu-roce.xml" -N 2 -f json -C allreduce --max-size 8
expect_grep "$TMP/out" '"name":[[:space:]]*"roce"' "link_layer=Ethernet: RoCE"
expect_grep "$TMP/out" '"origin":[[:space:]]*"detected"' "RoCE detected from the file"
run "$T" -i "$HGX" -N 2 --fabric efa -f json -C allreduce --max-size 8
expect_grep "$TMP/out" '"name":[[:space:]]*"efa"' "--fabric efa"
expect_grep "$TMP/out" '"origin":[[:space:]]*"given"' "--fabric is said to be given"
TOPOTUNE_FABRIC=tcpx run "$T" -i "$HGX" -N 2 -f json -C allreduce --max-size 8
expect_grep "$TMP/out" '"name":[[:space:]]*"tcpx"' "TOPOTUNE_FABRIC=tcpx"
TOPOTUNE_FABRIC=tcpx run "$T" -i "$HGX" -N 2 --fabric roce -f json -C allreduce --max-size 8
expect_grep "$TMP/out" '"name":[[:space:]]*"roce"' "--fabric wins over TOPOTUNE_FABRIC"
run "$T" -i "$HGX" -N 2 --fabric omnipath
expect_rc 2 "--fabric omnipath refused"
expect_grep "$TMP/err" "--fabric: unknown fabric 'omnipath' \(expected ib, roce, efa, tcpx or socket\)" "the error names the value and the choices"
TOPOTUNE_FABRIC=ethernet run "$T" -i "$HGX" -N 2
expect_rc 2 "TOPOTUNE_FABRIC=ethernet refused"
expect_grep "$TMP/err" "TOPOTUNE_FABRIC: unknown fabric 'ethernet'" "the error names the variable"
# the fabric moves the 2-node latency floor: EFA above InfiniBand at 8 B
ib=$("$T" -i "$HGX" -N 2 --expect -C allreduce --max-size 8 | awk '$1 == "allreduce" {print $4}')
efa=$("$T" -i "$HGX" -N 2 --fabric efa --expect -C allreduce --max-size 8 | awk '$1 == "allreduce" {print $4}')
if awk -v a="$ib" -v b="$efa" 'BEGIN { exit !(a > 0 && b > 1.5 * a) }'; then ok "8 B on 2 nodes: EFA $efa us above InfiniBand $ib us"
else not_ok "8 B on 2 nodes: EFA '$efa' vs InfiniBand '$ib'"; fi
# -k above the file's NICs: built as asked (32 x 100 Gb/s, 400 GB/s per node), no far path
run "$T" -i "$HGX" -N 2 -k 32 -s 100 --fabric efa -f json -C allreduce --max-size 8
expect_grep "$TMP/out" '"nics_per_node":[[:space:]]*32' "-k 32 -s 100: the 32 NICs asked for"
expect_grep "$TMP/out" '"node_net_GBps":[[:space:]]*38[0-9]' "...carrying 4 x 12.5 GB/s per GPU, bounded by each GPU's PCIe Gen5 path (48 GB/s)"
expect_no_grep "$TMP/out" '"type_inter":[[:space:]]*"SYS"' "-k 32: no GPU reaches its NIC across the sockets"

# --- --explain: the model's terms and which are assumptions, and what a table for NCCL would do
run "$T" -i "$HGX" -N 2 --explain 1M -C allreduce
expect_rc 0 "--explain 1M on 2 nodes"
expect_grep "$TMP/out" "^model terms .*MODEL ASSUMPTIONS" "the terms are named as assumptions"
expect_grep "$TMP/out" "fabric InfiniBand \(assumed: .*network hop LL [0-9.]+ / LL128 [0-9.]+ / Simple [0-9.]+ us, [0-9]+ % of the ports" "the fabric's figures"
expect_grep "$TMP/out" "measured error of this model in 64 KiB-16 MiB, 2 nodes, ib: median [0-9]+ %" "the regime's measured error"
expect_grep "$TMP/out" "NCCL runs [a-z_]+/[a-z0-9]+ here; a table for NCCL .* would (keep|force)" "what a table for NCCL does there, and why"

# --- tables for NCCL: CSV and JSON say why; none forces a candidate a published run contradicts
run "$T" -i "$HGX" -N 2 -f nccl-csv
expect_rc 0 "nccl-csv on 2 nodes"
expect_grep "$TMP/out" "^# sizes without a row are left to NCCL's own choice: [0-9]+ of 160 sweep sizes forced" "the CSV header says how many sizes are forced"
for n in 2 4 16; do
  run "$T" -i "$HGX" -N $n -f json --nccl-only
  expect_rc 0 "JSON table for NCCL, $n nodes"
  expect_grep "$TMP/out" '"decisions":' "$n nodes: decisions[] says why per size"
done
if command -v python3 >/dev/null; then
  cat >"$TMP/harm.py" <<'PY'
import json, os, subprocess, sys
tt, pub, fix = sys.argv[1:4]
harm = forced = sweeps = 0
for f in sorted(os.listdir(pub)):
    if not f.endswith(".txt"):
        continue
    head, rows = {}, {}
    for line in open(os.path.join(pub, f)):
        if line.startswith("# topo-tune:"):
            head["args"] = line.split(":", 1)[1].split()
        elif line.split() and line.split()[0] in ("collective", "ranks"):
            head[line.split()[0]] = line.split()[1]
        elif line[:1].isdigit():
            t = [float(x) for x in line.split()[1:3] if x != "-"]
            if t:
                rows[int(line.split()[0])] = min(t)
    a = head.get("args", ["none"])
    if a[0] == "none":
        continue
    a = [os.path.join(fix, x) if i and a[i - 1] in ("-i", "--input") else x for i, x in enumerate(a)]
    out = subprocess.run([tt] + a + ["-f", "json", "--nccl-only", "-C", head["collective"]], capture_output=True, text=True)
    sweeps += 1
    for d in json.loads(out.stdout)["decisions"]:
        if d["forced"] and d["bytes"] in rows:
            forced += 1
            harm += d["best_us"] > rows[d["bytes"]]
print(sweeps, forced, harm)
PY
  read -r sw fo ha < <(python3 "$TMP/harm.py" "$T" "$PUB" "$FIX")
  if [ "${sw:-0}" -ge 20 ] && [ "${ha:-1}" -eq 0 ]; then ok "tables for NCCL on $sw published machines: $fo forced rows, none predicted slower than what NCCL measured"
  else not_ok "tables for NCCL on the published machines: sweeps '$sw' forced '$fo' harmful '$ha'"; fi
else
  skip "tables for NCCL against the published runs" "python3 not found"
fi

# --- --expect as a health check on published runs
f="$PUB/h100-2n-ib-ghnccltests309.txt"
args=$(sed -n 's/^# topo-tune: //p' "$f" | sed "s|-i |-i $FIX/|")
run "$T" $args --expect --measured "$f" -f json
expect_grep "$TMP/out" '"schema":[[:space:]]*"topotune-expect"' "--expect -f json"
pass=$(grep -c '"verdict":[[:space:]]*"PASS"' "$TMP/out"); total=$(grep -c '"meas_us"' "$TMP/out")
if [ "$total" -ge 30 ] && [ $((pass * 10)) -ge $((total * 9)) ]; then ok "healthy 2 x 8 H100 NDR run: $pass of $total sizes PASS"
else not_ok "healthy 2 x 8 H100 NDR run: $pass of $total sizes PASS"; fi
# the same run with its large sizes 25 % slower (a fabric that lost bandwidth) and its small sizes twice slower
awk '$1 ~ /^[0-9]+$/ && $1 >= 16777216 { printf "%s %.3f - -\n", $1, ($2 == "-" ? $3 : $2) / 0.75; next }
     $1 ~ /^[0-9]+$/ && $1 <= 65536 { printf "%s %.3f - -\n", $1, 2 * ($2 == "-" ? $3 : $2); next } { print }' "$f" > "$TMP/slow.txt"
run "$T" $args --expect --measured "$TMP/slow.txt"
expect_rc 2 "the degraded copy FAILs"
big=$(awk '$1 == "allreduce" && $2 >= 16777216' "$TMP/out" | grep -c 'WARN\|FAIL'); bign=$(awk '$1 == "allreduce" && $2 >= 16777216' "$TMP/out" | wc -l)
small=$(awk '$1 == "allreduce" && $2 <= 65536' "$TMP/out" | grep -c 'WARN\|FAIL'); smalln=$(awk '$1 == "allreduce" && $2 <= 65536' "$TMP/out" | wc -l)
if [ "$bign" -gt 0 ] && [ "$big" -eq "$bign" ]; then ok "large sizes that lost 25 % of their bandwidth: $big of $bign flagged"
else not_ok "large sizes that lost 25 %: $big of $bign flagged"; fi
if [ "$smalln" -gt 0 ] && [ "$small" -eq "$smalln" ]; then ok "small sizes twice slower: $small of $smalln flagged"
else not_ok "small sizes twice slower: $small of $smalln flagged"; fi
# far above the model: WARN, said to be the model's fault
awk '$1 ~ /^[0-9]+$/ { printf "%s %.3f - -\n", $1, ($2 == "-" ? $3 : $2) / 10; next } { print }' "$f" > "$TMP/fast.txt"
run "$T" $args --expect --measured "$TMP/fast.txt"
expect_rc 1 "a run 10x faster than the model WARNs"
expect_grep "$TMP/out" 'WARN .*the model under-predicts' "...saying the model under-predicts"
expect_no_grep "$TMP/out" '^allreduce .* PASS ' "...and no size of it PASSes"
finish
