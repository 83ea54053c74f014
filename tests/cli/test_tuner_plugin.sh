#!/usr/bin/env bash
# The NCCL tuner plugin as NCCL loads it: tests/plugin/tuner_harness dlopens the .so and calls
# init/getCollInfo/finalize through our own v4/v5/v6 declarations.  Table sets from
# topo-tune --shapes (JSON and CSV), NCCL's example CSV through NCCL_TUNER_CONFIG_FILE, missing
# and malformed tables, shapes a table lacks, multi-node NVLink, and the .so's NEEDED libraries.
. "$(dirname "$0")/lib.sh"
case "$BUILD" in /*) B="$BUILD" ;; *) B="$ROOT/$BUILD" ;; esac
SO="$B/lib/libnccl-tuner-topotune.so"
H="$B/tests/plugin/tuner_harness"
T="$BIN/topo-tune"
HGX="$FIX/hgx-h100-8gpu.xml"
[ -f "$SO" ] || { not_ok "tuner plugin not built ($SO)"; finish; }
[ -x "$H" ] || { not_ok "tuner harness not built ($H)"; finish; }
unset TOPOTUNE_TUNER_TABLE NCCL_TUNER_CONFIG_FILE TOPOTUNE_TUNER_FALLBACK

# --- 1. runs wherever NCCL does: NEEDED is libc/libm/the loader only, exports are the plugin symbols
if command -v readelf >/dev/null; then
  needed=$(readelf -d "$SO" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
  # a sanitizer build (make check-asan) links its runtime into everything; allowed only then
  san=$(readelf -d "$H" | sed -n 's/.*(NEEDED).*\[\(lib[a-z]*san[^]]*\)\]/\1/p' | tr '\n' ' ')
  extra=""
  for l in $needed; do
    case " $san " in *" $l "*) continue ;; esac
    case "$l" in libc.so.6|libm.so.6|ld-linux*.so.*) ;; *) extra="$extra $l" ;; esac
  done
  [ -z "$extra" ] && ok "plugin NEEDED: $needed(libc, libm and the loader only)" || not_ok "plugin needs$extra (NEEDED: $needed)"
  case "$needed" in *cjson*|*xml2*|*hwloc*) not_ok "plugin links cJSON/libxml2/hwloc: $needed" ;; *) ok "no cJSON, libxml2 or hwloc at run time" ;; esac
else
  skip "plugin NEEDED libraries" "readelf not installed"
fi
if command -v nm >/dev/null; then
  syms=$(nm -D --defined-only "$SO" | awk '{print $3}' | grep -v '^_' | sort | tr '\n' ' ')
  [ "$syms" = "ncclTunerPlugin_v4 ncclTunerPlugin_v5 ncclTunerPlugin_v6 " ] && ok "exports exactly ncclTunerPlugin_v4/v5/v6" \
    || not_ok "exported symbols: $syms"
else
  skip "exported symbols" "nm not installed"
fi

# h VERSION STEP...: run the harness, output in $TMP/out
h() { run "$H" "$SO" "$@"; }
nwarn() { grep -c '^log W:' "$TMP/out"; }

# --- 2. a table set from topo-tune --shapes; every shape gets its own table's choice
run "$T" -i "$HGX" --shapes 2x1,4x1,8x1,16x2 --model nccl -C allreduce -f json -o "$TMP/set.json"
expect_rc 0 "topo-tune --shapes 2x1,4x1,8x1,16x2 -f json"
expect_grep "$TMP/set.json" '"schema":[[:space:]]*"topotune-tuning-table-set"' "the set has its schema name"
[ "$(grep -c '"schema":[[:space:]]*"topotune-tuning-table"' "$TMP/set.json")" = 4 ] && ok "the set holds 4 tables" \
  || not_ok "the set holds $(grep -c '"schema":[[:space:]]*"topotune-tuning-table"' "$TMP/set.json") tables"
run "$T" -i "$HGX" --shapes 2x1,4x1,8x1,16x2 --model nccl -C allreduce -f nccl-csv -o "$TMP/set.csv"
expect_rc 0 "topo-tune --shapes ... -f nccl-csv"
# expected choice at 1 MiB for a shape, from topo-tune's single-shape CSV: "ALGO/PROTO nch=N" as ids
ids() { # ALGO PROTO -> NCCL ids
  local a p; case $1 in tree) a=0;; ring) a=1;; collnet_direct) a=2;; collnet_chain) a=3;; nvls) a=4;; nvls_tree) a=5;; pat) a=6;; esac
  case $2 in ll) p=0;; ll128) p=1;; simple) p=2;; esac; echo "$a/$p"; }
expect_for() { # GPUS_PER_NODE NODES BYTES -> "a/p nch=N"
  "$T" -i "$HGX" -g "$1" -N "$2" --model nccl -C allreduce -f nccl-csv |
    awk -F, -v b="$3" '!/^#/ && $2+0 <= b && b <= $3+0 { print $4, $5, $6; exit }' | { read -r a p c; echo "$(ids "$a" "$p") nch=$c"; }; }
for fmt in json csv; do
  export TOPOTUNE_TUNER_TABLE="$TMP/set.$fmt"
  for sh in 2:2:1 4:4:1 8:8:1 16:8:2; do
    IFS=: read -r r g n <<<"$sh"
    want=$(expect_for "$g" "$n" 1048576)
    h 6 comm:$r:$n call:4:1048576
    if grep -q "^call 4 1048576 -> $want " "$TMP/out"; then ok "$fmt set, ${r}x$n: 1 MiB allreduce -> $want (as the ${r}x$n table)"
    else not_ok "$fmt set, ${r}x$n: wanted $want: $(grep '^call\|^log W' "$TMP/out" | head -3)"; fi
  done
done
# the CSV writer writes explicit channel counts, never -1
bad=$(grep -v '^#' "$TMP/set.csv" | awk -F, '$6+0 < 1' | head -1)
[ -z "$bad" ] && ok "nccl-csv: every row has an explicit channel count" || not_ok "nccl-csv row without channels: $bad"
run "$T" -i "$HGX" -N 2 -f nccl-csv -C allreduce
bad=$(grep -v '^#' "$TMP/out" | awk -F, '$6+0 < 1' | head -1)
[ -z "$bad" ] && ok "nccl-csv of a keep-NCCL table: explicit channel counts too" || not_ok "row without channels: $bad"

# --- 3. a shape the table lacks: NCCL decides, one warning per shape in the process
export TOPOTUNE_TUNER_TABLE="$TMP/set.json"
h 6 comm:32:4 call:4:1048576 comm:32:4 call:4:1048576 comm:32:4 comm:64:8
expect_rc 0 "missing shapes: init succeeds"
[ "$(grep -c '^log W:.*no table for 32 ranks on 4 nodes' "$TMP/out")" = 1 ] && ok "32x4 missing: exactly one warning for three communicators" \
  || not_ok "32x4 warnings: $(grep -c '^log W:' "$TMP/out"): $(head -c 400 "$TMP/out")"
expect_grep "$TMP/out" '^log W:.*no table for 64 ranks on 8 nodes \(it has 2x1, 4x1, 8x1, 16x2\)' "64x8 missing: its own warning, listing the shapes the file has"
[ "$(grep -c '^call 4 1048576 -> nccl nch=0' "$TMP/out")" = 2 ] && ok "missing shape: NCCL's choice (table untouched, nChannels 0)" \
  || not_ok "missing shape calls: $(grep '^call' "$TMP/out")"
TOPOTUNE_TUNER_FALLBACK=nearest h 5 comm:32:4 call:4:1048576 comm:32:4
want=$(expect_for 8 2 1048576)
grep -q "^call 4 1048576 -> $want " "$TMP/out" && ok "TOPOTUNE_TUNER_FALLBACK=nearest: 32x4 takes the 16x2 table ($want)" \
  || not_ok "nearest: wanted $want: $(grep '^call' "$TMP/out")"
[ "$(nwarn)" = 1 ] && expect_grep "$TMP/out" '^log W:.*using the nearest, 16 ranks on 2 node' "nearest: logged once, naming the shape used" \
  || not_ok "nearest: $(nwarn) warnings"
TOPOTUNE_TUNER_FALLBACK=bogus h 6 comm:32:4
expect_grep "$TMP/out" "^log W:.*TOPOTUNE_TUNER_FALLBACK='bogus' is not" "an unknown TOPOTUNE_TUNER_FALLBACK is named"

# --- 4. multi-node NVLink: 8 ranks on 2 hosts in one NVLink domain take the 8x1 table
h 6 nvl:1:8:8 comm:8:2 call:4:1048576
want=$(expect_for 8 1 1048576)
grep -q "^call 4 1048576 -> $want " "$TMP/out" && ok "nvlDomainInfo: 8 ranks, 2 nodes, 1 NVLink domain -> the 8x1 table" \
  || not_ok "nvl: wanted $want: $(head -c 400 "$TMP/out")"
expect_grep "$TMP/out" '^log I:.*1 NVLink domain\(s\), 8\.\.8 ranks each' "nvlDomainInfo is logged"
h 6 comm:8:2 call:4:1048576
grep -q '^call 4 1048576 -> nccl' "$TMP/out" && ok "without nvlDomainInfo 8x2 is a missing shape" || not_ok "8x2: $(grep '^call' "$TMP/out")"

# --- 5. v4 and v5 entry points give the same choice as v6
want=$(expect_for 8 1 1048576)
for v in 4 5; do
  h $v comm:8:1 call:4:1048576
  grep -q "^call 4 1048576 -> $want " "$TMP/out" && ok "ncclTunerPlugin_v$v: same choice ($want)" || not_ok "v$v: $(head -c 300 "$TMP/out")"
done
# a cell NCCL marked -1 is never enabled
a=${want%%/*}; p=${want#*/}; p=${p%% *}
h 6 comm:8:1 ignore:$a:$p call:4:1048576
expect_rc 0 "-1 cell: harness finds no violation"
expect_grep "$TMP/out" '^call 4 1048576 -> nccl nch=0' "-1 cell: left to NCCL"

# --- 6. NCCL's example-plugin CSV through NCCL_TUNER_CONFIG_FILE (our own fixture lines)
unset TOPOTUNE_TUNER_TABLE
cat >"$TMP/nccl_tuner.conf" <<'EOF'
# NCCL example format: 8, 9 or 10 fields; -1 = any (channels -1 = NCCL's count)
allreduce,0,65536,tree,simple,2,1,-1,-1,1
allreduce,0,65536,ring,ll,3,1,-1

allreduce,65537,1048576,ring,simple,4,4,32,1,0
 allreduce , 1048577 , 4294967295 , ring , ll128 , -1 , -1 , -1 , 4 , -1
broadcast,0,32768,tree,simple,-1,1,-1,-1,1
EOF
export NCCL_TUNER_CONFIG_FILE="$TMP/nccl_tuner.conf"
h 6 comm:8:1 call:4:1000:1:1 call:4:1000:1:0 call:4:2000000:4:0 call:4:2000000:1:0 call:0:100:1:1 comm:32:4 call:4:100000:1:0 call:4:100000:2:0
expect_grep "$TMP/out" '^call 4 1000 -> 0/2 nch=2 ' "CSV: regBuff=1 line -> tree/simple, 2 channels"
expect_grep "$TMP/out" '^call 4 1000 -> 1/0 nch=3 ' "CSV: regBuff=0 falls to the next line (8 fields) -> ring/ll, 3 channels"
expect_grep "$TMP/out" '^call 4 2000000 -> 1/1 nch=0 ' "CSV: numPipeOps=4 matches, channels -1 -> NCCL's count (0)"
expect_grep "$TMP/out" '^call 4 2000000 -> nccl nch=0 ' "CSV: numPipeOps=1 matches no line -> NCCL"
expect_grep "$TMP/out" '^call 0 100 -> 0/2 nch=0 ' "CSV: broadcast line (spaces trimmed)"
expect_grep "$TMP/out" '^call 4 100000 -> 1/2 nch=4 ' "CSV: 32 ranks on 4 nodes line"
expect_grep "$TMP/out" '^call 4 100000 -> nccl' "CSV: wrong numPipeOps -> NCCL"
expect_grep "$TMP/out" '^log I:.*rules from .*nccl_tuner\.conf \(CSV\)' "CSV read through NCCL_TUNER_CONFIG_FILE"
# TOPOTUNE_TUNER_TABLE wins over NCCL_TUNER_CONFIG_FILE (and says so)
TOPOTUNE_TUNER_TABLE="$TMP/set.json" h 6 comm:8:1 call:4:1048576
grep -q "^call 4 1048576 -> $want " "$TMP/out" && expect_grep "$TMP/out" '^log W:.*NCCL_TUNER_CONFIG_FILE=.* is not read' "TOPOTUNE_TUNER_TABLE wins over NCCL_TUNER_CONFIG_FILE, named once" \
  || not_ok "precedence: $(head -c 300 "$TMP/out")"
# a .csv named by TOPOTUNE_TUNER_TABLE is read as CSV
cp "$TMP/nccl_tuner.conf" "$TMP/site.csv"
unset NCCL_TUNER_CONFIG_FILE
TOPOTUNE_TUNER_TABLE="$TMP/site.csv" h 6 comm:8:1 call:4:1000:1:1
expect_grep "$TMP/out" '^call 4 1000 -> 0/2 nch=2 ' "TOPOTUNE_TUNER_TABLE=site.csv: read as NCCL's CSV"

# --- 7. no table, missing table, malformed tables: a warning naming file:line, NCCL decides, rc 0
h 6 comm:8:1 call:4:1048576
expect_grep "$TMP/out" '^log I:.*neither TOPOTUNE_TUNER_TABLE nor NCCL_TUNER_CONFIG_FILE is set' "no table: inactive, said at INFO"
TOPOTUNE_TUNER_TABLE="$TMP/nope.json" h 6 comm:8:1 call:4:1048576
expect_rc 0 "missing table: init still succeeds"
expect_grep "$TMP/out" '^log W:.*nope\.json' "missing table: the warning names the file"
expect_grep "$TMP/out" '^call 4 1048576 -> nccl nch=0' "missing table: NCCL decides"
bad_case() { # FILE LINE-REGEX WHAT
  TOPOTUNE_TUNER_TABLE="$1" h 6 comm:8:1 call:4:1048576
  if [ "$RC" = 0 ] && grep -Eq "^log W:.*$2" "$TMP/out" && grep -q '^call 4 1048576 -> nccl nch=0' "$TMP/out"; then ok "$3"
  else not_ok "$3 (rc $RC): $(grep '^log W\|^call' "$TMP/out" | head -3)"; fi; }
sed '6s/.*/  "version": 1,,/' "$TMP/set.json" >"$TMP/bad1.json"
bad_case "$TMP/bad1.json" 'bad1\.json:6: not valid JSON' "malformed JSON: the warning names line 6"
awk 'BEGIN{d=0} /"algorithm":/ && !d {sub(/"algorithm":[^,]*/, "\"algorithm\": \"warp\""); d=NR} {print}' "$TMP/set.json" >"$TMP/bad2.json"
ln=$(grep -n '"warp"' "$TMP/bad2.json" | cut -d: -f1)
bad_case "$TMP/bad2.json" "bad2\\.json:$((ln-4)): tables\\[0\\]: entries\\[0\\]: \"algorithm\"" "bad entry: the warning names the entry's line and index"
printf '{"schema": "topotune-tuning-table-set", "version": 1,\n "tables": [\n {"nodes": 1, "ranks": 8, "entries": []},\n {"nodes": 1, "ranks": 8, "entries": []}]}\n' >"$TMP/dup.json"
bad_case "$TMP/dup.json" 'dup\.json:4: tables\[1\] is for 8 ranks on 1 node\(s\), like tables\[0\]' "a set with one shape twice is refused, naming the line"
printf '# c\nallreduce,0,100,ring,ll,2,1,8\nallreduce,0,100,ring,ll,2,1\n' >"$TMP/bad.csv"
bad_case "$TMP/bad.csv" 'bad\.csv:3: 7 fields; want 8 to 10' "CSV with 7 fields: line 3 named"
printf 'allreduce,0,100,rhd,ll,2,1,8\n' >"$TMP/bad2.csv"
bad_case "$TMP/bad2.csv" "bad2\\.csv:1: algorithm 'rhd' is not one NCCL runs" "CSV with an algorithm NCCL cannot run: named"
printf 'allreduce,0,100,ring,ll,0,1,8\n' >"$TMP/bad3.csv"
bad_case "$TMP/bad3.csv" "bad3\\.csv:1: channels '0' must be 1\\.\\.64 or -1" "CSV with channels 0: named"

# --- 7b. hardening (issue #32): regular files only, read once per process, strict strings, limits
if command -v mkfifo >/dev/null; then
  mkfifo "$TMP/fifo.json"
  TOPOTUNE_TUNER_TABLE="$TMP/fifo.json" run timeout 20 "$H" "$SO" 6 comm:8:1 call:4:1048576
  [ "$RC" = 0 ] && grep -q '^log W:.*fifo\.json: is a FIFO; a tuner table must be a regular file' "$TMP/out" \
    && grep -q '^call 4 1048576 -> nccl nch=0' "$TMP/out" && ok "a FIFO is refused at once (no wait for a writer), NCCL decides" \
    || not_ok "FIFO (rc $RC): $(head -c 300 "$TMP/out")"
else
  skip "FIFO table" "mkfifo not installed"
fi
bad_case "-" "'-' \\(standard input\\) is not accepted as a tuner table" "'-' (the application's stdin) is refused"
bad_case "$TMP" "is a directory; a tuner table must be a regular file" "a directory is refused"
printf '{"schema": "topotune-tuning-table", "version": 1, "nodes": 1, "ranks": 8, "entries": [\n{"collective": "allreduce\\u0000garbage", "min_bytes": 0, "max_bytes": 1048576, "algorithm": "ring", "protocol": "ll"}]}\n' >"$TMP/nul.json"
bad_case "$TMP/nul.json" 'nul\.json:2: not valid JSON: a \\u0000 escape \(NUL\) inside a string' "\"allreduce\\u0000garbage\" is refused, naming the line"
printf '{"schema": "topotune-tuning-table", "version": 1, "model": "\377", "nodes": 1, "ranks": 8, "entries": []}\n' >"$TMP/utf8.json"
bad_case "$TMP/utf8.json" 'utf8\.json:1: not valid JSON: invalid UTF-8 in a string \(byte offset 60\)' "invalid UTF-8 in a string: refused, naming line and offset"
: >"$TMP/empty.json"
bad_case "$TMP/empty.json" 'empty\.json: is empty; keeping' "an empty file: 'is empty'"
{ printf '\357\273\277'; cat "$TMP/set.json"; } >"$TMP/bom.json"
TOPOTUNE_TUNER_TABLE="$TMP/bom.json" h 6 comm:8:1 call:4:1048576
expect_grep "$TMP/out" '^log I:.*rules from .*bom\.json \(model ' "a JSON table with a UTF-8 byte order mark: read as JSON"
# read once per process: three communicators, one read
TOPOTUNE_TUNER_TABLE="$TMP/set.json" h 6 comm:8:1 comm:8:1 comm:16:2 call:4:1048576
[ "$(grep -c '^log I: topotune tuner: read .*set\.json' "$TMP/out")" = 1 ] && [ "$(grep -c 'rules from' "$TMP/out")" = 3 ] \
  && ok "three communicators, the table read once" || not_ok "reads: $(grep -c 'tuner: read' "$TMP/out"), inits: $(grep -c 'rules from' "$TMP/out")"
# big tables: 160k members (over the limit), 80k CSV shapes, a set of 60k tables: well under 10 s
big_case() { # FILE REGEX WHAT
  local t0 t1; t0=$(date +%s%N)
  TOPOTUNE_TUNER_TABLE="$1" run timeout 60 "$H" "$SO" 6 comm:8:1 comm:8:1 call:4:1048576
  t1=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ "$RC" = 0 ] && [ "$t1" -lt 10000 ] && grep -Eq "$2" "$TMP/out"; then ok "$3 (${t1} ms, two inits)"
  else not_ok "$3 (rc $RC, ${t1} ms): $(grep '^log W' "$TMP/out" | head -2)"; fi; }
awk 'BEGIN { printf "{\"schema\": \"topotune-tuning-table\", \"version\": 1, \"nodes\": 1, \"ranks\": 8, \"entries\": [],\n";
             for (i = 0; i < 160000; i++) printf "\"m%d\": %d,\n", i, i; print "\"end\": 0}" }' >"$TMP/members.json"
big_case "$TMP/members.json" 'log W:.*members\.json:65[0-9]*: not valid JSON: an object with more than 65536 members' \
  "a 160k-member object: refused by the member limit"
awk 'BEGIN { for (i = 0; i < 80000; i++) printf "allreduce,0,1048576,ring,ll,-1,%d,%d\n", 1 + int(i / 1000), 8 * (1 + int(i / 1000)) + i % 1000 }' >"$TMP/shapes.csv"
big_case "$TMP/shapes.csv" '^call 4 1048576 -> 1/0 nch=0' "a CSV of 80k shapes: read once, applied"
awk 'BEGIN { printf "{\"schema\": \"topotune-tuning-table-set\", \"version\": 1, \"tables\": [\n";
             for (i = 0; i < 60000; i++) printf "%s{\"schema\": \"topotune-tuning-table\", \"version\": 1, \"nodes\": %d, \"ranks\": %d, \"entries\": [{\"collective\": \"allreduce\", \"min_bytes\": 0, \"max_bytes\": 1048576, \"algorithm\": \"ring\", \"protocol\": \"ll\"}]}\n", i ? "," : "", 1 + int(i / 1000), 8 * (1 + int(i / 1000)) + i % 1000;
             print "]}" }' >"$TMP/bigset.json"
big_case "$TMP/bigset.json" '^call 4 1048576 -> 1/0 nch=0' "a set of 60k tables: read once, applied"
[ "$(grep -c 'tuner: read ' "$TMP/out")" = 1 ] && ok "the 60k-table set was read once for two communicators" || not_ok "set reads: $(grep -c 'tuner: read ' "$TMP/out")"

# --- 8. topo-tune --shapes errors
run "$T" -i "$HGX" --shapes 3x2
expect_rc 2 "--shapes 3x2 (ranks not a multiple of nodes): exit 2"
expect_grep "$TMP/err" 'shape 3x2: the rank count must be a positive multiple' "--shapes 3x2: named"
run "$T" -i "$HGX" --shapes 8x1,8x1 -f json
expect_rc 2 "--shapes 8x1,8x1: exit 2"
expect_grep "$TMP/err" 'shape 8x1 is listed twice' "a shape listed twice: named"
run "$T" -i "$HGX" --shapes 32x2
expect_grep "$TMP/err" 'shape 32x2 .*16 ranks per node but the topology has only 8 GPUs' "--shapes 32x2 on an 8-GPU node: named"
run "$T" -i "$HGX" --shapes 8x1,x2
expect_rc 2 "--shapes 8x1,x2: exit 2"
run "$T" -i "$HGX" --shapes 8x1 -N 2
expect_rc 2 "--shapes with --nodes: exit 2"
run "$T" -i "$HGX" --shapes 2x1,8x1 -C allreduce
expect_rc 0 "--shapes with the human table"
[ "$(grep -c '^== shape ' "$TMP/out")" = 2 ] && ok "human table: one section per shape" || not_ok "sections: $(grep '^==' "$TMP/out")"
finish
