#!/usr/bin/env bash
# topo-exec --table FILE: plans per size from a topo-tune JSON table (host ranks).
. "$(dirname "$0")/lib.sh"
TX="$BIN/topo-exec"
[ -x "$TX" ] || { skip "topo-exec --table" "topo-exec not built"; finish; }
cat > "$TMP/t4.json" <<'J'
{"schema":"topotune-tuning-table","version":1,"nodes":1,"ranks":4,"model":"hand","entries":[
 {"collective":"allreduce","min_bytes":0,"max_bytes":4096,"algorithm":"ring","protocol":"ll","channels":0},
 {"collective":"allreduce","min_bytes":4097,"max_bytes":65536,"algorithm":"rhd","protocol":"simple","channels":0},
 {"collective":"allreduce","min_bytes":65537,"max_bytes":1099511627776,"algorithm":"tree","protocol":"simple","channels":0}]}
J
run "$TX" --host 4 --table "$TMP/t4.json" -b 1K -e 256K -f 4 -n 1 -w 0 --no-progress -J "$TMP/o.json"
expect_rc 0 "--table: 4 host ranks follow a hand-made table"
algos=$(python3 -c 'import json,sys; print(" ".join(r["algo"] for r in json.load(open(sys.argv[1]))["results"]))' "$TMP/o.json" 2>&1)
[ "$algos" = "ring ring halving-doubling halving-doubling tree" ] && ok "--table: per-size algorithms ring, rhd, tree as the rules say" \
  || not_ok "--table algorithms: $algos"
expect_grep "$TMP/out" '^# plan table: .*t4.json \(3 rules, model hand\)' "--table: header names the table"
expect_grep "$TMP/out" '^# plan table: [1-9][0-9]* call\(s\) on this process ran a fallback' "--table: LL rules on host ranks are counted as fallbacks"
run "$TX" --host 4 --table "$TMP/t4.json" --algo ring -b 16K -e 16K -n 1 -w 0 --no-progress -J "$TMP/o2.json"
a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["algo"])' "$TMP/o2.json" 2>&1)
[ "$a" = ring ] && ok "--table: an explicit --algo wins over the rule" || not_ok "--algo with --table ran $a"
run "$TX" --host 2 --table "$TMP/t4.json" -b 1K -e 1K -n 1 --no-progress
expect_rc 2 "--table built for 4 ranks on a 2-rank run: refused"
expect_grep "$TMP/err" 'built for 4 ranks but this run has 2' "... naming both counts"
printf '{"schema":"topotune-tuning-table","version":1,"nodes":1,"ranks":4,"entries":[{"collective":"allreduce","min_bytes":9,"max_bytes":1}]}' > "$TMP/bad.json"
run "$TX" --host 4 --table "$TMP/bad.json" -b 1K -e 1K -n 1 --no-progress
expect_rc 2 "--table with a malformed entry: exit 2"
expect_grep "$TMP/err" 'bad.json' "... naming the file"
run "$TX" --host 4 --table "$TMP/missing.json" -b 1K -e 1K -n 1 --no-progress
expect_rc 2 "--table with a missing file: exit 2"
finish
