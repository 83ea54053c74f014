#!/usr/bin/env bash
# topo-exec process ranks compare every option that changes the sequence or content of the collectives
# before the first one (issue #32 item 7): ranks started with a different --cycles, --table on one rank
# only or a different table, --average, -g/--validate options all stop at once with exit 2, the message
# naming the option and both values, nothing measured.  And the small ones of item 12: --chunk 0 and
# other zero sizes refused, --help names the mode of the GPU-only options.
. "$(dirname "$0")/lib.sh"
X="$BIN/topo-exec"
[ -x "$X" ] || { skip "topo-exec option agreement" "topo-exec not built"; finish; }
unset NCCL_ALGO NCCL_PROTO RANK WORLD_SIZE MASTER_ADDR MASTER_PORT TOPOTUNE_FAULT TOPOTUNE_CHUNK_BYTES
rows() { grep -Ec '^ +[0-9]+ ' "$1"; }

cat >"$TMP/t2.json" <<'J'
{"schema":"topotune-tuning-table","version":1,"nodes":1,"ranks":2,"model":"hand","entries":[
 {"collective":"allreduce","min_bytes":0,"max_bytes":1099511627776,"algorithm":"ring","protocol":"simple","channels":0}]}
J
sed 's/"ring"/"tree"/' "$TMP/t2.json" >"$TMP/t2tree.json"

# pair NAME "RANK0 OPTIONS" "RANK1 OPTIONS": two process ranks; rc0/rc1, ms (wall time of both)
pair() {
  local name=$1 port; port=$(free_port); local t0; t0=$(date +%s%N)
  # shellcheck disable=SC2086
  env TOPOTUNE_TIMEOUT_MS=20000 "$X" --rank 0 --nranks 2 --master 127.0.0.1:$port -b 64K -e 64K -n 2 --no-progress \
    -J "$TMP/$name.json" $2 >"$TMP/$name.0.out" 2>"$TMP/$name.0.err" &
  local p0=$!
  # shellcheck disable=SC2086
  env TOPOTUNE_TIMEOUT_MS=20000 "$X" --rank 1 --nranks 2 --master 127.0.0.1:$port -b 64K -e 64K -n 2 --no-progress \
    $3 >"$TMP/$name.1.out" 2>"$TMP/$name.1.err" &
  local p1=$!
  wait $p0; rc0=$?; wait $p1; rc1=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
}
# expect_refused NAME REGEX DESCRIPTION: both ranks exit 2 within 10 s, no row, the message on rank 0, -J says why
expect_refused() {
  local name=$1
  if [ "$rc0$rc1" = 22 ] && [ "$ms" -lt 10000 ] && [ "$(rows "$TMP/$name.0.out")" = 0 ]; then
    ok "$3: both ranks exit 2 at once (${ms} ms), nothing measured"
  else
    not_ok "$3: rcs $rc0$rc1 in ${ms} ms, $(rows "$TMP/$name.0.out") row(s) on rank 0; $(head -c 300 "$TMP/$name.0.err")"
  fi
  expect_grep "$TMP/$name.0.err" "$2" "$3: rank 0 names the option and both values"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["results"]==[] and "option" in d["errors"][0]' \
    "$TMP/$name.json" 2>/dev/null && ok "$3: -J holds the reason, no results" || not_ok "$3: -J $(head -c 200 "$TMP/$name.json" 2>&1)"
}

# 1. --cycles (more collectives on one rank than on the other)
pair cyc "--cycles 2" "--cycles 1"
expect_refused cyc 'rank 1: option --cycles is 1 there but 2 on rank 0' "--cycles 2 on rank 0, 1 on rank 1"
# 2. --table on one rank only, and two different tables
pair tab1 "--table $TMP/t2.json" ""
expect_refused tab1 'rank 1: option --table is none there but a table \(content [0-9a-f]{16}\) on rank 0' "--table on rank 0 only"
pair tab2 "--table $TMP/t2.json" "--table $TMP/t2tree.json"
expect_refused tab2 'rank 1: option --table is a table \(content [0-9a-f]{16}\) there but a table \(content [0-9a-f]{16}\) on rank 0' \
  "different --table files"
# the same table under another name is the same table
cp "$TMP/t2.json" "$TMP/t2copy.json"
pair tab3 "--table $TMP/t2.json" "--table $TMP/t2copy.json"
[ "$rc0$rc1" = 00 ] && [ "$(rows "$TMP/tab3.0.out")" = 1 ] && ok "the same table content under two names runs (exit 0)" ||
  not_ok "same table, two names: rcs $rc0$rc1; $(head -c 300 "$TMP/tab3.0.err") $(head -c 300 "$TMP/tab3.1.err")"
# 3. --average (the time across ranks: an AllReduce with another operation, or other values)
pair avg "--average min" "--average avg"
expect_refused avg 'rank 1: option --average is avg there but min on rank 0' "--average min on rank 0, avg on rank 1"
# 4. --validate on one rank only
pair val "--validate" ""
expect_refused val 'rank 1: option --validate is off there but on on rank 0' "--validate on rank 0 only"
pair vr "--validate --validate-rounds 2" "--validate"
expect_refused vr 'rank 1: option --validate-rounds is 1 there but 2 on rank 0' "--validate-rounds 2 on rank 0 only"

# 5. item 12: --chunk 0 (and other zero sizes) refused with a clear message instead of meaning the default
run "$X" --host 2 -b 1K -e 1K -n 1 --no-progress --chunk 0
[ "$RC" -eq 2 ] && grep -q -- '--chunk 0' "$TMP/err" && [ "$(rows "$TMP/out")" = 0 ] && ok "--chunk 0: exit 2 naming it" ||
  not_ok "--chunk 0: exit $RC, $(head -c 200 "$TMP/err")"
for v in "-b 0" "-e 0"; do
  run "$X" --host 2 -n 1 --no-progress $v
  [ "$RC" -eq 2 ] && grep -q 'positive' "$TMP/err" && ok "$v: exit 2" || not_ok "$v: exit $RC, $(head -c 200 "$TMP/err")"
done
# item 12: topo-exec --validate refuses a topology with two GPUs of one host on the same dev (file:line, attribute)
run "$X" --validate --topo "$FIX/invalid/duplicate-gpu-dev.xml" --host 4 -b 1K -e 1K -n 1 --no-progress
[ "$RC" -eq 2 ] && grep -q "duplicate-gpu-dev\.xml:9: <gpu> attribute 'dev': duplicate device index 0" "$TMP/err" && [ "$(rows "$TMP/out")" = 0 ] &&
  ok "--validate --topo with two GPUs on dev 0: exit 2 naming file:line and dev, nothing measured" ||
  not_ok "--validate --topo duplicate dev: exit $RC, $(head -c 300 "$TMP/err")"
# 6. item 12: --help does not list GPU-only options among host mode's
run "$X" --help
expect_rc 0 "--help: exit 0"
awk '/^GPU mode/{g=1} /--gpu-transport/{print (g ? "gpu" : "host")}' "$TMP/out" >"$TMP/gt"
[ "$(cat "$TMP/gt")" = gpu ] && ok "--help lists --gpu-transport under GPU mode only" || not_ok "--help: --gpu-transport in: $(cat "$TMP/gt")"
run "$X" --host 2 -b 1K -e 1K -n 1 --no-progress --gpu-transport host
[ "$RC" -eq 2 ] && grep -q -- "--gpu-transport.*GPU mode" "$TMP/err" && ok "--gpu-transport in host mode: exit 2 saying it is GPU mode's" ||
  not_ok "--gpu-transport in host mode: exit $RC, $(head -c 200 "$TMP/err")"
finish
