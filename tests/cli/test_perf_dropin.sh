#!/usr/bin/env bash
# The nccl-tests drop-in (#15 parts 5-7): topo-exec started as all_reduce_perf & co. takes
# nccl-tests' options and prints its output (a parser written to nccl-tests' documented format
# reads ours unchanged), -J in nccl-tests' schema, options refused with a reason; srun without
# MASTER_ADDR (a fake Slurm environment, two processes); --version and --help of every tool.
. "$(dirname "$0")/lib.sh"
export TOPOTUNE_TIMEOUT_MS=10000
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID SLURM_NTASKS \
      SLURM_STEP_NODELIST SLURM_JOB_NODELIST SLURM_NODELIST TOPOTUNE_PREDICT_TOPO 2>/dev/null

# 1. the five names exist in the build tree and are topo-exec
for n in all_reduce_perf all_gather_perf reduce_scatter_perf broadcast_perf reduce_perf; do
  [ "$(readlink "$BIN/$n")" = topo-exec ] && ok "$BIN/$n -> topo-exec" || not_ok "$BIN/$n is not a link to topo-exec"
done

# 2. a parser written to nccl-tests' documented output (peers.md 1.4): rows are the lines not
#    starting with '#', 13 fields (size count type redop root, then time algbw busbw #wrong twice);
#    it keys on '# Collective test starting', '# Out of bounds values' and '# Avg bus bandwidth'
cat > "$TMP/nccl_parse.awk" <<'AWK'
/^# Collective test starting: / { prog = $5 }
/^# Out of bounds values : /    { oob = $7; oobok = $8 }
/^# Avg bus bandwidth    : /    { avg = $6 }
/^#/ { next }
NF == 13 && $1 ~ /^[0-9]+$/ { rows++; sum += $8 + $12; last = $1; if ($9 != "0" || $13 != "0") bad++ }
NF > 0 && NF != 13 { other++ }
END { printf "prog=%s rows=%d oob=%s %s avg=%s bad=%d other=%d last=%s mean=%g\n", prog, rows, oob, oobok, avg, bad, other, last, rows ? sum / (2 * rows) : 0 }
AWK
run env -u TOPOTUNE_PREDICT_TOPO "$BIN/all_reduce_perf" -b 8 -e 128K -f 4 -g 0 -t 4 -n 5 -w 1
expect_rc 0 "all_reduce_perf -b 8 -e 128K -f 4 -g 0 -t 4 runs"
cp "$TMP/out" "$TMP/ar.txt"
awk -f "$TMP/nccl_parse.awk" "$TMP/ar.txt" > "$TMP/parsed"
grep -q '^prog=all_reduce_perf rows=8 oob=0 OK ' "$TMP/parsed" && ok "the nccl-tests parser reads our output: $(cat "$TMP/parsed")" \
  || not_ok "nccl-tests parser: $(cat "$TMP/parsed")"
grep -q ' bad=0 other=0 last=131072 ' "$TMP/parsed" && ok "no stray lines; 8 rows up to 131072 bytes, #wrong 0" || not_ok "rows: $(cat "$TMP/parsed")"
read -r avg mean < <(sed 's/.*avg=\([^ ]*\).*mean=\([^ ]*\)/\1 \2/' "$TMP/parsed")
awk -v a="$avg" -v m="$mean" 'BEGIN{d = a - m; if (d < 0) d = -d; exit !(a > 0 && d <= 0.005 + 0.02 * a)}' \
  && ok "# Avg bus bandwidth ($avg) is the mean busbw of both placements ($mean)" || not_ok "avg $avg vs mean $mean"
expect_grep "$TMP/ar.txt" '^# nThread 4 nGpus 0 minBytes 8 maxBytes 131072 step: 4\(factor\) warmup iters: 1 iters: 5 agg iters: 1 validation: 1 graph: 0 unalign: 0$' \
  "nccl-tests' '# nThread' line"
expect_grep "$TMP/ar.txt" '^#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong $' \
  "nccl-tests' column header, byte for byte (its trailing space too; every line: tests/cli/test_perf_golden.sh)"
expect_grep "$TMP/ar.txt" '^# Collective test concluded: all_reduce_perf$' "closing line names the program"
expect_no_grep "$TMP/ar.txt" '^# plan:' "no topotune plan line by default"
# fixed-width columns: the busbw field of every row ends at the same column as nccl-tests'
w=$(grep -v '^#' "$TMP/ar.txt" | grep -v '^$' | awk '{print length($0)}' | sort -u | tr '\n' ' ')
[ "$w" = "118 " ] && ok "every row is 118 characters wide, as nccl-tests' row format gives (52 + 2 x 33)" || not_ok "row widths: $w"
run "$BIN/all_reduce_perf" -b 1K -e 1K -g 0 -t 2 --topotune
expect_grep "$TMP/out" '^# plan:' "--topotune adds the plan line"
grep -v '^#' "$TMP/out" | grep -Eq '  (ring|tree|halving-doubling|recursive-doubling|hierarchical)$' && ok "--topotune adds the algorithm column" || not_ok "no algorithm column: $(grep -v '^#' "$TMP/out")"

# 3. AllGather / ReduceScatter: each rank's part a multiple of 16 bytes (nccl-tests' sizes)
run "$BIN/all_gather_perf" -b 100 -e 100 -g 0 -t 3
expect_rc 0 "all_gather_perf -b 100 -t 3"
row=$(grep -v '^#' "$TMP/out" | awk 'NF==13{print $1, $2}')
[ "$row" = "96 8" ] && ok "100 bytes on 3 ranks: 8 floats (32 B) per rank, size 96 (nccl-tests: (100/4/3) & ~3)" || not_ok "row: $row"
run "$BIN/reduce_scatter_perf" -b 1000 -e 1000 -g 0 -t 4 -d int8
row=$(grep -v '^#' "$TMP/out" | awk 'NF==13{print $1, $2, $3}')
[ "$row" = "960 240 int8" ] && ok "reduce_scatter int8 1000 B on 4 ranks: 240 per rank (a multiple of 16), size 960" || not_ok "row: $row"
run "$BIN/broadcast_perf" -b 64 -e 64 -g 0 -t 2 -r 1
expect_rc 0 "broadcast_perf -r 1"
grep -v '^#' "$TMP/out" | awk 'NF==13 && $5=="1"{f=1} END{exit !f}' && ok "root column 1" || not_ok "root: $(cat "$TMP/out")"
run "$BIN/reduce_perf" -b 64 -e 64 -g 0 -t 2 -o max -d int32
expect_rc 0 "reduce_perf -o max -d int32"

# 4. options: mapped, or refused with a reason (exit 2), never ignored
run "$BIN/all_reduce_perf" -b 1K -e 1K -g 0 -t 2 -N 3 -a 2 -p 1 -c 2 -m 2 -z 0 -G 0 -C 0 -R 0 -I 0 -u 0
expect_rc 0 "-N 3 -a 2 -p 1 -c 2 -m 2 and zero-valued -z -G -C -R -I -u are accepted"
n=$(grep -v '^#' "$TMP/out" | grep -vc '^$') # nccl-tests' output ends in an empty line
[ "$n" = 3 ] && ok "-N 3: the sweep three times" || not_ok "-N 3 gave $n rows"
for a in 0 1 3; do
  run "$BIN/all_reduce_perf" -b 1K -e 1K -g 0 -t 2 -a $a
  expect_rc 0 "-a $a"
done
for bad in "-G 1:CUDA graph" "-C 1:CPU launch time" "-R 1:registration" "-z 1:blocking" "-I 2:-I (per-iteration timing: 0 or 1)" "-K 1:add -I 1" \
           "-y 1:NULL CUDA stream" "-D 1:device API" "-M 1:memory usage" "-u 1:unaligned" "-S 1:timestamp" \
           "-x 1:CTA policy" "-d all:one data type" "-o all:once per operation" "-r -1:all roots" "-a 4:-a" \
           "--bogus:unknown option"; do
  opt=${bad%%:*}; why=${bad#*:}
  run "$BIN/all_reduce_perf" -g 0 $opt
  if [ "$RC" = 2 ] && grep -q "^all_reduce_perf: .*$why" "$TMP/err"; then ok "$opt refused: $(head -c 110 "$TMP/err")"
  else not_ok "$opt: rc $RC, $(cat "$TMP/err")"; fi
done
if "$BIN/topo-exec" -g 1 -b 8 -e 8 >/dev/null 2>&1; then
  skip "-g 8 without a GPU is refused" "this machine has a usable GPU"
else
  run "$BIN/all_reduce_perf" -b 8 -e 8G -f 2 -g 8
  [ "$RC" = 2 ] && grep -q '^all_reduce_perf: -g 8: refused, .*-g 0 -t 8' "$TMP/err" \
    && ok "-g 8 without a usable GPU is refused, naming -g 0 -t 8: $(head -c 140 "$TMP/err")" || not_ok "-g 8: rc $RC $(cat "$TMP/err")"
  run "$BIN/all_reduce_perf" -b 8 -e 8
  expect_rc 0 "no -g on a machine without GPU: host ranks"
  expect_grep "$TMP/err" '^all_reduce_perf: .*: host ranks, 1 thread\(s\) per process \(-g 0\)' "and says so on stderr"
  expect_no_grep "$TMP/out" 'host ranks, 1 thread' "... not on stdout, which has nccl-tests' lines only"
fi
run "$BIN/all_reduce_perf" --help
expect_grep "$TMP/out" '-t,--nthreads' "--help lists nccl-tests' options"

# 5. -J: nccl-tests' JSON schema (version 3)
run "$BIN/all_reduce_perf" -b 1K -e 4K -f 2 -g 0 -t 2 -J "$TMP/r.json"
expect_rc 0 "-J F.json"
python3 - "$TMP/r.json" > "$TMP/j" 2>&1 <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
need = ["version", "start_time", "args", "env", "nccl_version", "config", "results", "out_of_bounds",
        "average_bus_bandwidth", "errors", "end_time"]
miss = [k for k in need if k not in j]
cfg = ["nthreads", "ngpus", "minimum_bytes", "maximum_bytes", "step_factor", "warmup_iters", "iterations",
       "aggregated_iterations", "validation", "graph", "blocking_collectives", "per_iter_timing", "per_iter_skip",
       "parallel_init", "devices"]
miss += ["config." + k for k in cfg if k not in j["config"]]
dev = ["rank", "group", "pid", "hostname", "device", "device_hex", "device_info"]
miss += ["devices[0]." + k for k in dev if k not in j["config"]["devices"][0]]
res = ["size", "count", "type", "redop", "root", "out_of_place", "in_place", "actual_iterations", "experiment_name"]
miss += ["results[0]." + k for k in res if k not in j["results"][0]]
miss += ["out_of_place." + k for k in ["time", "alg_bw", "bus_bw", "nwrong"] if k not in j["results"][0]["out_of_place"]]
ok = (not miss and j["version"] == 3 and j["args"][0].endswith("all_reduce_perf") and len(j["results"]) == 3
      and j["config"]["nthreads"] == 2 and len(j["config"]["devices"]) == 2 and j["out_of_bounds"]["okay"] == "true")
print("OK" if ok else "BAD missing=%s version=%s" % (miss, j.get("version")))
PY
grep -q '^OK$' "$TMP/j" && ok "-J has nccl-tests' keys (version 3, config.devices, results, out_of_bounds, ...)" || not_ok "-J: $(cat "$TMP/j")"
# 2 host ranks at 1-4 KiB run recursive doubling by default, which NCCL cannot run: a table for NCCL
# refuses those rows by name; 3 ranks run the tree (an NCCL algorithm) and make a table
# (nccl-tests' form has no word of what ran: topo-tune reads the drop-in's -J with --topotune)
run "$BIN/topo-tune" --from-measured "$TMP/r.json" -f json -o "$TMP/t.json"
[ "$RC" -ge 2 ] && grep -q "config.ngpus 0: host ranks of topotune's nccl-tests drop-in.*--topotune" "$TMP/err" \
  && ok "topo-tune --from-measured on the plain drop-in -J names --topotune" || not_ok "plain -J: rc $RC $(cat "$TMP/err")"
run "$BIN/all_reduce_perf" -b 1K -e 4K -f 2 -g 0 -t 2 --topotune -J "$TMP/r.json"
run "$BIN/topo-tune" --from-measured "$TMP/r.json" -f json -o "$TMP/t.json"
[ "$RC" -ge 2 ] && grep -q "ran 'rd', which NCCL cannot run" "$TMP/err" \
  && ok "topo-tune --from-measured refuses the drop-in's recursive-doubling rows by name" || not_ok "from-measured rd: rc $RC $(cat "$TMP/err")"
run "$BIN/all_reduce_perf" -b 1K -e 4K -f 2 -g 0 -t 3 --topotune -J "$TMP/r3.json"
expect_rc 0 "-J F.json, 3 ranks"
run "$BIN/topo-tune" --from-measured "$TMP/r3.json" -f json -o "$TMP/t.json"
[ "$RC" -le 1 ] && ok "topo-tune --from-measured reads the drop-in's -J" || not_ok "from-measured: $(cat "$TMP/err")"

# 6. Slurm: srun without MASTER_ADDR (fake: two processes with Slurm's variables, node list localhost)
port=$(free_port)
slurm() { env SLURM_PROCID=$1 SLURM_NTASKS=2 SLURM_LOCALID=$1 SLURM_STEP_NODELIST=localhost SLURM_JOB_ID=77 \
              SLURM_STEP_ID=0 TOPOTUNE_MASTER_PORT=$port "${@:2}"; }
slurm 1 "$BIN/topo-exec" -b 1K -e 64K -f 4 --no-progress >"$TMP/s1.out" 2>"$TMP/s1.err" &
p1=$!
slurm 0 "$BIN/topo-exec" -b 1K -e 64K -f 4 --no-progress >"$TMP/s0.out" 2>"$TMP/s0.err"
r0=$?; wait $p1; r1=$?
[ $r0 = 0 ] && [ $r1 = 0 ] && ok "fake srun: two topo-exec processes meet without MASTER_ADDR" \
  || not_ok "fake srun: rc $r0/$r1 $(cat "$TMP/s0.err" "$TMP/s1.err")"
[ "$(grep -c '^#  Rank' "$TMP/s0.out")" = 2 ] && ok "rank 0 reports 2 ranks" || not_ok "ranks: $(grep '^#  Rank' "$TMP/s0.out")"
[ ! -s "$TMP/s1.out" ] && ok "rank 1 prints nothing" || not_ok "rank 1 printed: $(head -3 "$TMP/s1.out")"
port=$(free_port)
slurm 1 "$BIN/all_reduce_perf" -b 1K -e 1K >"$TMP/p1.out" 2>"$TMP/p1.err" &
p1=$!
slurm 0 "$BIN/all_reduce_perf" -b 1K -e 1K -J "$TMP/s.json" >"$TMP/p0.out" 2>"$TMP/p0.err"
r0=$?; wait $p1; r1=$?
[ $r0 = 0 ] && [ $r1 = 0 ] && awk -f "$TMP/nccl_parse.awk" "$TMP/p0.out" | grep -q 'rows=1 oob=0 OK' \
  && ok "fake srun all_reduce_perf: 2 processes, one row" || not_ok "srun all_reduce_perf: rc $r0/$r1 $(cat "$TMP/p0.err" "$TMP/p1.err" "$TMP/p0.out")"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j["config"]["nthreads"]==1 and len(j["config"]["devices"])==2))' "$TMP/s.json" \
  && ok "its -J: nthreads 1, two devices" || not_ok "srun -J: $(head -c 300 "$TMP/s.json")"
run env SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_STEP_NODELIST='node[01-02' "$BIN/topo-exec" -b 1K -e 1K
[ "$RC" = 2 ] && grep -q "host list" "$TMP/err" && ok "a malformed node list is refused: $(cat "$TMP/err")" || not_ok "bad list: rc $RC $(cat "$TMP/err")"
(cd "$TMP" && SLURM_PROCID=5 "$BIN/topo-dump" -i "$FIX/hgx-h100-8gpu.xml" -o 'dump-%h-%t.xml' -q)
h=$(hostname | cut -d. -f1)
[ -s "$TMP/dump-$h-5.xml" ] && ok "srun topo-dump -o %h-%t.xml: this host's name and the task's rank" || not_ok "no $TMP/dump-$h-5.xml: $(ls "$TMP")"

# 8. the busbw plot (scripts/plot-busbw.py, matplotlib): our -J with predictions, nccl-tests text
if python3 -c 'import matplotlib' 2>/dev/null; then
  "$BIN/topo-exec" --host 2 -b 1K -e 64K -f 4 --no-progress -J "$TMP/p.json" --predict "$FIX/hgx-h100-8gpu.xml" >/dev/null 2>&1
  run python3 "$ROOT/scripts/plot-busbw.py" "$TMP/p.json" --nccl "$TMP/ar.txt" -o "$TMP/b.png"
  [ "$RC" = 0 ] && [ "$(head -c 8 "$TMP/b.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] \
    && grep -q '(3 curve(s))' "$TMP/out" && ok "plot-busbw.py: a PNG with measured, predicted and NCCL curves" \
    || not_ok "plot-busbw.py: rc $RC $(cat "$TMP/out" "$TMP/err")"
  run python3 "$ROOT/scripts/plot-busbw.py" "$TMP/r.json" "$TMP/ar.txt" -o "$TMP/c.svg"
  [ "$RC" = 0 ] && grep -q '<svg' "$TMP/c.svg" && ok "plot-busbw.py: nccl-tests JSON and text, SVG" || not_ok "svg: $(cat "$TMP/err")"
  echo "not a result" > "$TMP/bad.txt"
  run python3 "$ROOT/scripts/plot-busbw.py" "$TMP/bad.txt" -o "$TMP/d.png"
  [ "$RC" = 2 ] && grep -q 'no result rows' "$TMP/err" && ok "plot-busbw.py refuses a file without results" || not_ok "bad input: rc $RC"
else
  skip "plot-busbw.py" "matplotlib is not installed (python3-matplotlib)"
fi

# 7. every tool: --version, and --help lists every option the README shows for it
for t in topo-dump topo-tune topo-exec all_reduce_perf; do
  run "$BIN/$t" --version
  [ "$RC" = 0 ] && grep -Eq "^$t .*[0-9]+\.[0-9]+\.[0-9]+" "$TMP/out" && ok "$t --version: $(cat "$TMP/out")" || not_ok "$t --version: rc $RC $(cat "$TMP/out" "$TMP/err")"
done
for t in topo-dump topo-tune topo-exec; do
  "$BIN/$t" --help > "$TMP/help" 2>&1
  opts=$(grep -E "(^|/| )$t " "$ROOT/README.md" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
  miss=""
  for o in $opts; do grep -q -- "$o" "$TMP/help" || miss="$miss $o"; done
  [ -z "$miss" ] && ok "$t --help lists the README's options ($(echo $opts | wc -w))" || not_ok "$t --help lacks:$miss"
done
# nccl-tests' CI gate: NCCL_TESTS_MIN_BW fails a run below 0.9x the value (FAILED, exit 7), says OK above it;
# -T 0 is nccl-tests' "no timeout" (accepted; the library's default deadline stays)
run env NCCL_TESTS_MIN_BW=1000 "$BIN/all_reduce_perf" -g 0 -t 2 -b 1M -e 1M -n 2 -w 1
expect_rc 7 "NCCL_TESTS_MIN_BW=1000: below the gate, exit 7"
expect_grep "$TMP/out" '^# Avg bus bandwidth    : [0-9.e+-]+ FAILED$' "... the average line ends in FAILED"
run env NCCL_TESTS_MIN_BW=0.000001 "$BIN/all_reduce_perf" -g 0 -t 2 -b 1M -e 1M -n 2 -w 1
expect_rc 0 "NCCL_TESTS_MIN_BW far below the run: exit 0"
expect_grep "$TMP/out" '^# Avg bus bandwidth    : [0-9.e+-]+ OK$' "... the average line ends in OK"
run env NCCL_TESTS_MIN_BW=fast "$BIN/all_reduce_perf" -g 0 -t 2 -b 1M -e 1M -n 2 -w 1
expect_rc 0 "NCCL_TESTS_MIN_BW=fast: not a number, not checked"
expect_grep "$TMP/err" "NCCL_TESTS_MIN_BW='fast' is not a bandwidth" "... said on stderr"
run "$BIN/all_reduce_perf" -g 0 -t 2 -b 8 -e 8 -n 2 -w 1 -T 0
expect_rc 0 "-T 0 (nccl-tests: no timeout) is accepted"
finish
