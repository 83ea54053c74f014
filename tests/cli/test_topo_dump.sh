#!/usr/bin/env bash
# topo-dump: conversions, round trips, NCCL limits, matrix contents,
# validation exit codes and messages, hostile input, atomic output, usage.
. "$(dirname "$0")/lib.sh"
TD="$BIN/topo-dump"
GOOD="hgx-h100-8gpu pcie-4gpu vendor-partial rccl-xgmi-4gpu nccl-dump-h100-vm"
have_py=0; command -v python3 >/dev/null 2>&1 && have_py=1

# --- every good fixture converts to every format --------------------------------
for g in $GOOD; do
  for fmt in native nccl json dot matrix; do
    run "$TD" --input "$FIX/$g.xml" --format "$fmt" --quiet
    if [ "$RC" -eq 0 ] && [ -s "$TMP/out" ]; then ok "$g converts to $fmt"
    else not_ok "$g converts to $fmt (exit $RC: $(head -c 300 "$TMP/err"))"; fi
  done
done

# --- round trips are byte-stable --------------------------------------------------
for g in $GOOD; do
  for fmt in native nccl; do
    "$TD" -q -i "$FIX/$g.xml" -f $fmt -o "$TMP/a.xml" && "$TD" -q -i "$TMP/a.xml" -f $fmt -o "$TMP/b.xml" \
      && "$TD" -q -i "$TMP/b.xml" -f $fmt -o "$TMP/c.xml"
    if cmp -s "$TMP/a.xml" "$TMP/b.xml" && cmp -s "$TMP/b.xml" "$TMP/c.xml"; then ok "$g: $fmt round trip is byte-identical"
    else not_ok "$g: $fmt round trip differs: $(diff "$TMP/a.xml" "$TMP/b.xml" | head -5)"; fi
  done
  # native and back to NCCL gives the same NCCL file as the direct way
  "$TD" -q -i "$FIX/$g.xml" -f native -o "$TMP/n.xml" && "$TD" -q -i "$TMP/n.xml" -f nccl -o "$TMP/n2.xml" \
    && "$TD" -q -i "$FIX/$g.xml" -f nccl -o "$TMP/d.xml"
  if cmp -s "$TMP/n2.xml" "$TMP/d.xml"; then ok "$g: native -> nccl equals direct nccl"
  else not_ok "$g: native -> nccl differs from direct nccl: $(diff "$TMP/n2.xml" "$TMP/d.xml" | head -5)"; fi
done

# --- NCCL output obeys NCCL's parser limits ---------------------------------------
for g in $GOOD; do
  "$TD" -q -i "$FIX/$g.xml" -f nccl -o "$TMP/nccl.xml"
  if head -c 5 "$TMP/nccl.xml" | grep -q '<?xml'; then not_ok "$g: nccl output has an <?xml prolog"; else ok "$g: nccl output has no prolog"; fi
  if grep -q "$(printf '\t')" "$TMP/nccl.xml"; then not_ok "$g: nccl output has tabs"; else ok "$g: nccl output has no tabs"; fi
  maxattr=$(grep -o '<[a-z][^>]*>' "$TMP/nccl.xml" | awk '{ n = gsub(/="/, "&"); if (n > m) m = n } END { print m + 0 }')
  nelem=$(grep -o '<[a-z]' "$TMP/nccl.xml" | wc -l)
  if [ "$maxattr" -le 16 ] && [ "$nelem" -le 256 ]; then ok "$g: nccl output within 16 attributes ($maxattr) and 256 elements ($nelem)"
  else not_ok "$g: nccl output breaks NCCL limits: $maxattr attributes, $nelem elements"; fi
  expect_no_grep "$TMP/nccl.xml" 'tt_version|tt_source|<unknown' "$g: nccl output has none of topotune's additions"
done

# --- native notes what is unknown -------------------------------------------------
run "$TD" -q -i "$FIX/nccl-dump-h100-vm.xml"
expect_rc 0 "VM dump converts to native"
expect_grep "$TMP/out" '^<system version="1" tt_version="1" tt_source="nccl">' "native output marks version and NCCL source"
expect_grep "$TMP/out" '<unknown attr="numaid" reason=' "native output notes the unknown NUMA node"
expect_grep "$TMP/out" '<unknown attr="link_width" reason=' "native output notes the unknown link width"
[ "$(grep -c '<unknown' "$TMP/out")" -eq 2 ] && ok "exactly two unknown notes" || not_ok "unknown notes: $(grep -c '<unknown' "$TMP/out")"
cp "$TMP/out" "$TMP/native.xml"
run "$TD" -q -i "$TMP/native.xml"
[ "$(grep -c '<unknown' "$TMP/out")" -eq 2 ] && ok "notes are not added twice" || not_ok "notes duplicated"
sed 's/tt_source="nccl"/tt_source="scan"/' "$TMP/native.xml" > "$TMP/scan.xml"
run "$TD" -q -i "$TMP/scan.xml"
expect_grep "$TMP/out" 'tt_source="scan"' "a native input keeps its tt_source"

# --- matrix -----------------------------------------------------------------------
run "$TD" -q -i "$FIX/hgx-h100-8gpu.xml" -f matrix
expect_rc 0 "matrix of HGX H100"
row() { grep -E "^$1 " "$TMP/out" | tr -s ' '; }
hdr=$(head -1 "$TMP/out" | tr -s ' ')
case "$hdr" in *"GPU0 GPU1 GPU2 GPU3 GPU4 GPU5 GPU6 GPU7 NIC0"*"CPU Affinity NUMA Affinity GPU NUMA ID") ok "matrix header lists GPUs, NICs, affinities and GPU NUMA ID";;
  *) not_ok "matrix header: $hdr";; esac
r0=$(row GPU0); r7=$(row GPU7)
case "$r0" in "GPU0 X NV18 NV18 NV18 NV18 NV18 NV18 NV18 PIX "*) ok "GPU0: NV18 to every GPU, PIX to its NIC";; *) not_ok "GPU0 row: $r0";; esac
[ "$(echo "$r0" | awk '{print $12, $14, $17}')" = "NODE SYS SYS" ] && ok "GPU0: NODE to a NIC of its socket, SYS to the other socket" \
  || not_ok "GPU0 row NIC cells: $r0"
[ "$(echo "$r0" | awk '{print $(NF-1), $NF}')" = "0 N/A" ] && [ "$(echo "$r7" | awk '{print $(NF-1), $NF}')" = "1 N/A" ] \
  && ok "NUMA affinity GPU0=0, GPU7=1; GPU NUMA ID N/A (NCCL files have none)" || not_ok "NUMA affinity: $r0 / $r7"
expect_grep "$TMP/out" '^  NIC0: mlx5_0$' "NIC legend maps NIC0 to mlx5_0"
run "$TD" -q -i "$FIX/nccl-dump-h100-vm.xml" -f matrix
r0=$(row GPU0)
[ "$(echo "$r0" | awk '{print $(NF-2), $(NF-1), $NF}')" = "N/A N/A N/A" ] && ok "VM dump: CPU/NUMA affinity and GPU NUMA ID N/A (NCCL's dump has no driver view)" || not_ok "VM GPU0 row: $r0"
run "$TD" -q -i "$FIX/rccl-xgmi-4gpu.xml" -f matrix
expect_grep "$TMP/out" '^GPU0 +X +XGMI' "RCCL fixture: xGMI links shown as XGMI#"

# --- dot and json are well formed ---------------------------------------------------
if command -v dot >/dev/null 2>&1; then
  for g in $GOOD; do
    "$TD" -q -i "$FIX/$g.xml" -f dot -o "$TMP/g.dot"
    if dot -Tsvg "$TMP/g.dot" -o "$TMP/g.svg" 2>"$TMP/dot.err" && [ -s "$TMP/g.svg" ]; then ok "$g: dot -Tsvg accepts the drawing"
    else not_ok "$g: dot rejects: $(head -c 300 "$TMP/dot.err")"; fi
  done
else
  skip "dot -Tsvg accepts the drawings" "graphviz not installed"
fi
"$TD" -q -i "$FIX/hgx-h100-8gpu.xml" -f dot -o "$TMP/g.dot"
expect_grep "$TMP/g.dot" 'label="NVL 370\.8"' "dot labels NVLink edges with GB/s"
[ "$(grep -c 'subgraph cluster_cpu' "$TMP/g.dot")" -eq 2 ] && ok "dot: one cluster per CPU" || not_ok "dot clusters: $(grep -c 'subgraph cluster_cpu' "$TMP/g.dot")"
if [ $have_py -eq 1 ]; then
  for g in $GOOD; do
    "$TD" -q -i "$FIX/$g.xml" -f json -o "$TMP/t.json"
    if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="topotune-topology" and d["version"]==1 and d["nodes"] and d["links"]' "$TMP/t.json" 2>"$TMP/py.err"
    then ok "$g: json parses with schema and version"; else not_ok "$g: json: $(tail -1 "$TMP/py.err")"; fi
  done
  "$TD" -q -i "$FIX/hgx-h100-8gpu.xml" -f json -o "$TMP/t.json"
  if python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
p={(x["from"],x["to"]):x for x in d["paths"]}
assert p[("GPU0","GPU1")]["type"]=="NVL" and abs(p[("GPU0","GPU1")]["bw"]-370.8)<1e-9, p[("GPU0","GPU1")]
assert p[("GPU0","mlx5_0")]["type"]=="PIX", p[("GPU0","mlx5_0")]
assert len(d["paths"])==8*7+8*8*2, len(d["paths"])' "$TMP/t.json" 2>"$TMP/py.err"
  then ok "json paths: GPU0-GPU1 NVL 370.8, GPU0-mlx5_0 PIX, every GPU/GPU and GPU/NET pair"
  else not_ok "json paths: $(tail -1 "$TMP/py.err")"; fi
else
  skip "json parses" "python3 not installed"
fi

# --- validation of good fixtures -------------------------------------------------------
# clean: hgx, pcie-4gpu; rccl-xgmi has only info findings (<xgmi> is RCCL's);
# warnings expected: vendor-partial (no <gpu>/<nic> children, empty link), VM dump (numaid -1, width 0)
for spec in hgx-h100-8gpu:0 pcie-4gpu:0 rccl-xgmi-4gpu:0 vendor-partial:1 nccl-dump-h100-vm:1; do
  g=${spec%%:*}; want=${spec##*:}
  run "$TD" -i "$FIX/$g.xml" --validate
  expect_rc "$want" "--validate $g exits $want"
done
run "$TD" -i "$FIX/nccl-dump-h100-vm.xml" --validate
expect_grep "$TMP/err" 'nccl-dump-h100-vm\.xml:2: warning: \[unknown-numa\] cpu numaid=-1: ' "VM dump: unknown NUMA warning with file:line"
expect_grep "$TMP/err" 'nccl-dump-h100-vm\.xml:3: warning: \[unknown-link-width\]' "VM dump: link width warning with file:line"
run "$TD" -i "$FIX/nccl-dump-h100-vm.xml" --validate --quiet
[ "$RC" -eq 1 ] && [ ! -s "$TMP/err" ] && ok "--quiet: exit code only" || not_ok "--quiet (exit $RC, stderr $(head -c 100 "$TMP/err"))"
run "$TD" -i "$FIX/nccl-dump-h100-vm.xml" --validate -o "$TMP/findings.txt"
[ "$RC" -eq 1 ] && [ ! -s "$TMP/err" ] && grep -q '^.*nccl-dump-h100-vm\.xml:2: warning: \[unknown-numa\]' "$TMP/findings.txt" \
  && ok "--validate -o writes the text findings to the file" || not_ok "--validate -o (exit $RC)"
run "$TD" -i "$FIX/nccl-dump-h100-vm.xml" --validate --format json
expect_rc 1 "--validate --format json keeps the exit code"
if [ $have_py -eq 1 ]; then
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="topotune-findings" and d["counts"]["warning"]==2 and d["findings"][0]["code"]=="unknown-numa" and d["findings"][0]["line"]==2' "$TMP/out" 2>"$TMP/py.err"
  then ok "findings JSON: schema, counts, code and line"; else not_ok "findings JSON: $(tail -1 "$TMP/py.err")"; fi
fi

# --- each invalid fixture: expected exit code, codes and lines ------------------------
for f in "$ROOT"/tests/fixtures/invalid/*.xml; do
  name=$(basename "$f")
  expect=$(sed -n '1s/.*expect: \(.*\) -->.*/\1/p' "$f")
  want=$(echo "$expect" | sed -n 's/.*rc=\([0-9]\).*/\1/p')
  run "$TD" -i "$f" --validate
  bad=""
  [ "$RC" -eq "$want" ] || bad="exit $RC, wanted $want"
  set -- $expect; shift
  while [ $# -ge 2 ]; do
    code=${1#code=}; line=${2#line=}; shift 2
    grep -Eq -- "^$(printf '%s' "$f" | sed 's/[.[\*^$/]/\\&/g'):$line: (error|warning|info): \[$code\] [^ ].*: " "$TMP/err" || bad="$bad; no [$code] at line $line"
  done
  if [ -z "$bad" ]; then ok "invalid/$name: $expect"; else not_ok "invalid/$name: $bad: $(head -c 300 "$TMP/err")"; fi
done
# conversion builds the graph: a file the builder refuses exits 2 with file:line ...
run "$TD" -i "$ROOT/tests/fixtures/invalid/nvlink-target-missing.xml" -f json
expect_rc 2 "unbuildable file: exit 2"
expect_grep "$TMP/err" '^topo-dump: .*nvlink-target-missing\.xml:7: ' "unbuildable file: message names file:line"
# ... while a lint error the builder tolerates converts, with a one-line summary
run "$TD" -i "$ROOT/tests/fixtures/invalid/missing-arch.xml" -f json
expect_rc 0 "file with a lint error the builder tolerates converts"
expect_grep "$TMP/err" '^topo-dump: .*missing-arch\.xml: 1 error\(s\), 0 warning\(s\); run with --validate' "conversion summarizes lint findings on stderr"

# --- hostile and non-topology input -----------------------------------------------------
for f in "$FIX"/bad/*; do
  [ -f "$f" ] || continue
  name=$(basename "$f")
  start=$(date +%s)
  run timeout 20 "$TD" -i "$f" -f json
  took=$(( $(date +%s) - start ))
  if [ "$RC" -eq 2 ] && grep -q "^topo-dump: .*$name" "$TMP/err" && [ "$(wc -l < "$TMP/err")" -le 3 ] && [ $took -le 10 ]; then
    ok "bad/$name: exit 2 naming the file (${took}s)"
  else not_ok "bad/$name: exit $RC in ${took}s: $(head -c 300 "$TMP/err")"; fi
done
printf '<topology version="2.0">\n  <object type="Machine" os_index="0"/>\n</topology>\n' > "$TMP/hwloc.xml"
TOPOTUNE_DEBUG=INFO run "$TD" -i "$TMP/hwloc.xml"
expect_rc 0 "hwloc XML given to --input is read (offline hwloc scan)"
expect_grep "$TMP/err" "hwloc\.xml: hwloc XML format 2\.0: .*read by topotune's reader" "a file the hwloc library refuses is read by topotune's reader, named under TOPOTUNE_DEBUG=INFO"
run sh -c "\"$TD\" -i - < \"$TMP/hwloc.xml\""
expect_rc 2 "hwloc XML on standard input: exit 2"
expect_grep "$TMP/err" 'hwloc XML on standard input: give the file name' "hwloc XML on standard input: says to give the file name"
run "$TD" -i "$TMP/does-not-exist.xml"
expect_rc 2 "missing input file: exit 2"
expect_grep "$TMP/err" 'does-not-exist\.xml' "missing input file is named"

run sh -c "\"$TD\" -q -i - -f nccl < \"$FIX/pcie-4gpu.xml\""
"$TD" -q -i "$FIX/pcie-4gpu.xml" -f nccl -o "$TMP/direct.xml"
[ "$RC" -eq 0 ] && cmp -s "$TMP/out" "$TMP/direct.xml" && ok "--input - reads standard input" || not_ok "--input - (exit $RC)"

# --- -o is atomic -------------------------------------------------------------------------
echo "precious" > "$TMP/keep.txt"
run "$TD" -i "$FIX/bad/truncated.xml" -o "$TMP/keep.txt"
[ "$RC" -eq 2 ] && [ "$(cat "$TMP/keep.txt")" = "precious" ] && ok "-o: unreadable input leaves the old file intact" \
  || not_ok "-o on bad input (exit $RC, file: $(head -c 50 "$TMP/keep.txt"))"
run "$TD" -i "$ROOT/tests/fixtures/invalid/root-graphs.xml" -o "$TMP/keep.txt"
[ "$RC" -eq 2 ] && [ "$(cat "$TMP/keep.txt")" = "precious" ] && ok "-o: non-topology input leaves the old file intact" \
  || not_ok "-o on non-topology input (exit $RC)"
run "$TD" -i "$FIX/pcie-4gpu.xml" -f matrix -o "$TMP/keep.txt" -q
[ "$RC" -eq 0 ] && grep -q '^GPU0 ' "$TMP/keep.txt" && [ ! -s "$TMP/out" ] && ok "-o writes the file, nothing on stdout" || not_ok "-o success (exit $RC)"
ls "$TMP"/keep.txt.tmp.* >/dev/null 2>&1 && not_ok "-o left a temporary file" || ok "-o leaves no temporary file"
run "$TD" -i "$FIX/pcie-4gpu.xml" -o "$TMP/no-such-dir/out.xml"
expect_rc 2 "-o into a missing folder: exit 2"

# --- usage ----------------------------------------------------------------------------------
run "$TD" --bogus
[ "$RC" -eq 2 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q "unknown option '--bogus'.*--help" "$TMP/err" \
  && ok "unknown option: exit 2, one line with a hint" || not_ok "unknown option (exit $RC: $(cat "$TMP/err"))"
run "$TD" -x
[ "$RC" -eq 2 ] && grep -q "unknown option '-x'" "$TMP/err" && ok "unknown short option: exit 2" || not_ok "unknown short option (exit $RC: $(cat "$TMP/err"))"
run "$TD" --input
[ "$RC" -eq 2 ] && grep -q "option '--input' needs a value" "$TMP/err" && ok "missing value: exit 2" || not_ok "missing value (exit $RC: $(cat "$TMP/err"))"
run "$TD" -i "$FIX/pcie-4gpu.xml" --format jpeg
[ "$RC" -eq 2 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q "unknown format 'jpeg' (one of: native, nccl, json, dot, matrix, svg, png)" "$TMP/err" \
  && ok "unknown format: exit 2 listing the formats" || not_ok "unknown format (exit $RC: $(cat "$TMP/err"))"
run "$TD" -q
[ "$RC" -le 1 ] && grep -q '<system version="1" tt_version="1" tt_source="live"' "$TMP/out" \
  && ok "no input: live scan of this machine (exit $RC)" || not_ok "no input: live scan (exit $RC: $(head -c 300 "$TMP/err"))"
run "$TD" -i "$FIX/pcie-4gpu.xml" extra
expect_rc 2 "stray argument: exit 2"
run "$TD" --help
[ "$RC" -eq 0 ] && grep -q '^Exit codes:' "$TMP/out" && grep -q -- '--validate' "$TMP/out" && ok "--help documents options and exit codes" || not_ok "--help (exit $RC)"
run "$TD" --version
[ "$RC" -eq 0 ] && grep -Eq '^topo-dump \(topotune\) [0-9]+\.[0-9]+\.[0-9]+$' "$TMP/out" && ok "--version" || not_ok "--version: $(cat "$TMP/out")"
# -o to something that is not a regular file (a FIFO here; /dev/null in real use) writes through it and
# leaves the special file in place instead of renaming a temporary file over it
mkfifo "$TMP/fifo"
(timeout 20 cat "$TMP/fifo" > "$TMP/fifo.out") &
reader=$!
run timeout 20 "$TD" -q -i "$FIX/pcie-4gpu.xml" -f nccl -o "$TMP/fifo"
wait $reader
[ "$RC" -eq 0 ] && [ -p "$TMP/fifo" ] && grep -q '<system version="1">' "$TMP/fifo.out" \
  && ok "-o FIFO: written through, still a FIFO" || not_ok "-o FIFO (exit $RC; $(ls -l "$TMP/fifo"))"
# ... but a FIFO nobody reads is refused within seconds (it used to hang), a directory is refused, and a
# symbolic link another user made (in /tmp, say) is not followed: the file it points at stays as it was
mkfifo "$TMP/fifo2"
t0=$(date +%s)
run timeout 20 "$TD" -q -i "$FIX/pcie-4gpu.xml" -o "$TMP/fifo2"
[ "$RC" -eq 2 ] && [ $(( $(date +%s) - t0 )) -lt 10 ] && grep -q 'a FIFO that nobody reads' "$TMP/err" \
  && ok "-o FIFO without a reader: refused, no hang" || not_ok "-o FIFO without a reader (exit $RC: $(cat "$TMP/err"))"
run "$TD" -q -i "$FIX/pcie-4gpu.xml" -o "$TMP"
expect_rc 2 "-o a directory: refused"
expect_grep "$TMP/err" 'not a regular file \(a directory\): nothing written' "... saying what it is"
printf 'theirs\n' > "$TMP/victim"
ln -s "$TMP/victim" "$TMP/link"
if [ "$(id -u)" = 0 ] && chown -h 65534:65534 "$TMP/link" 2>/dev/null; then
  run "$TD" -q -i "$FIX/pcie-4gpu.xml" -o "$TMP/link"
  [ "$RC" -eq 2 ] && grep -q 'symbolic link owned by another user (uid 65534): not followed' "$TMP/err" \
    && [ "$(cat "$TMP/victim")" = theirs ] && [ -L "$TMP/link" ] \
    && ok "-o another user's symlink: refused, its target untouched" || not_ok "-o another user's symlink (exit $RC: $(cat "$TMP/err"))"
else
  skip "another user's symlink" "needs root to give a link another owner"
fi
# pictures through Graphviz when it is installed
if command -v dot >/dev/null 2>&1; then
  run "$TD" -q -i "$FIX/hgx-h100-8gpu.xml" -f svg -o "$TMP/t.svg"
  [ "$RC" -eq 0 ] && grep -q '<svg' "$TMP/t.svg" && grep -q 'GPU7' "$TMP/t.svg" && ok "--format svg renders the drawing" || not_ok "--format svg (exit $RC)"
  run "$TD" -q -i "$FIX/hgx-h100-8gpu.xml" -f png -o "$TMP/t.png"
  [ "$RC" -eq 0 ] && [ "$(head -c 4 "$TMP/t.png" | tail -c 3)" = "PNG" ] && ok "--format png writes a PNG" || not_ok "--format png (exit $RC)"
else
  skip "--format svg/png" "Graphviz's dot not installed"
fi
run env PATH=/nonexistent "$TD" -q -i "$FIX/pcie-4gpu.xml" -f svg -o "$TMP/none.svg"
[ "$RC" -eq 2 ] && grep -q "needs Graphviz's dot" "$TMP/err" && [ ! -e "$TMP/none.svg" ] \
  && ok "--format svg without Graphviz: exit 2 saying what to install, no file" || not_ok "svg without dot (exit $RC: $(cat "$TMP/err"))"
# --- issue #16: bounded output, -i DIR, GPU ranks in --validate -----------------------
# 2000 GPUs in a 350 KB file made -f json write 620 MB (5.3 GB of memory, 20 s): 400 GPUs (159600 paths)
# are refused now, quickly and with the limit named; matrix still works
python3 - "$TMP/many.xml" <<'PY'
import sys
n = 400
rows = ['<system version="1">', '  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">']
for i in range(n):
    rows.append('    <pci busid="0000:%02x:%02x.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">'
                '<gpu dev="%d" sm="90" rank="%d" gdr="1"/></pci>' % (1 + i // 32, i % 32, i, i))
rows += ['  </cpu>', '</system>']
open(sys.argv[1], 'w').write('\n'.join(rows) + '\n')
PY
t0=$(date +%s%N)
run "$TD" -q -i "$TMP/many.xml" -f json -o "$TMP/many.json"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$RC" -ne 0 ] && grep -q 'would hold 159600 paths (400 GPUs, 0 NICs): more than its limit' "$TMP/err" && [ ! -s "$TMP/many.json" ] \
  && ok "400 GPUs: -f json refused in $ms ms naming the path limit, no file" || not_ok "400 GPUs -f json: exit $RC, $(head -c 200 "$TMP/err"), $(wc -c <"$TMP/many.json" 2>/dev/null) bytes"
run "$TD" -q -i "$TMP/many.xml" -f matrix
[ "$RC" -eq 0 ] && ok "400 GPUs: -f matrix still works" || not_ok "400 GPUs matrix: exit $RC $(head -c 200 "$TMP/err")"
run "$TD" -q -i "$TMP" -f json
[ "$RC" -ne 0 ] && grep -q 'is a directory' "$TMP/err" && ok "-i DIR: 'is a directory', not 'read error'" || not_ok "-i DIR: exit $RC: $(cat "$TMP/err")"
sed 's/rank="1"/rank="0"/' "$FIX/pcie-4gpu.xml" >"$TMP/dup.xml"
if grep -q 'rank="0"' "$TMP/dup.xml" && [ "$(grep -c 'rank="0"' "$TMP/dup.xml")" -ge 2 ]; then
  run "$TD" -i "$TMP/dup.xml" --validate
  grep -q 'duplicate-id.*rank' "$TMP/out" "$TMP/err" && ok "--validate: a duplicate GPU rank is a finding" || not_ok "duplicate GPU rank: no finding ($(head -c 300 "$TMP/out"))"
else
  skip "duplicate GPU rank" "pcie-4gpu.xml has no rank=\"1\""
fi
sed 's/rank="3"/rank="17"/' "$FIX/pcie-4gpu.xml" >"$TMP/range.xml"
run "$TD" -i "$TMP/range.xml" --validate
grep -q 'rank-range' "$TMP/out" "$TMP/err" && ok "--validate: a GPU rank out of range is a finding" || not_ok "GPU rank 17 of 4: no finding ($(head -c 300 "$TMP/out"))"

# issue #33 item 8: an unknown CPU vendor is one warning with the count, not one per CPU node
sed 's/vendor="AuthenticAMD"/vendor=""/' "$ROOT/tests/fixtures/hgx-a100-8gpu.xml" > "$TMP/novendor.xml"
for tool in "$TD -f matrix" "$BIN/topo-tune -C allreduce --min-size 1G --max-size 1G"; do
  run $tool -i "$TMP/novendor.xml"
  n=$(grep -c "vendor '' unknown" "$TMP/err")
  [ "$RC" = 0 ] && [ "$n" = 1 ] && grep -q "vendor '' unknown: inter-socket bandwidth .* assumed (4 CPU node(s))" "$TMP/err" &&
    ok "$(basename "${tool%% *}"): vendor '' unknown said once for the 4 CPU nodes" || not_ok "$(basename "${tool%% *}"): exit $RC, $n vendor lines"
done
finish
