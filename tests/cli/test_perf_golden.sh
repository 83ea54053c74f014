#!/usr/bin/env bash
# nccl-tests' form, byte for byte (issue #34 item 3): what each drop-in (all_reduce_perf, all_gather_perf,
# reduce_scatter_perf, broadcast_perf, reduce_perf) prints and writes with -J, compared with golden files
# written from nccl-tests 2.19's format (tests/cli/golden/README.md).  The figures that change from run to
# run are masked by the normalizers (golden/normalize-text.awk, golden/normalize-json.py), which keep
# every other byte: a missing or extra space, a changed head line, a wrong JSON type fails.
. "$(dirname "$0")/lib.sh"
export TOPOTUNE_TIMEOUT_MS=20000
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID SLURM_NTASKS \
      SLURM_STEP_NODELIST SLURM_JOB_NODELIST SLURM_NODELIST TOPOTUNE_PREDICT_TOPO NCCL_TESTS_MIN_BW 2>/dev/null
G="$ROOT/tests/cli/golden"
have_py=0
command -v python3 >/dev/null 2>&1 && have_py=1

# one run per collective: host ranks (-g 0), small sizes, few iterations; the options vary type, op and root
cases="all_reduce:-b 64 -e 256 -f 2
all_gather:-b 64 -e 256 -f 2 -d half
reduce_scatter:-b 96 -e 288 -i 96 -d int8 -o min
broadcast:-b 64 -e 256 -f 4 -d double -r 1
reduce:-b 64 -e 64 -d int32 -o max -r 1
all_reduce-per-iter:-b 64 -e 128 -f 2 -n 4 -I 1 -K 1"
while IFS=: read -r coll args; do
  prog=${coll%-per-iter}_perf
  # shellcheck disable=SC2086
  run "$BIN/$prog" -g 0 -t 2 -n 2 -w 1 $args -J "$TMP/$coll.json" # (a later -n wins)
  expect_rc 0 "$prog $args"
  awk -f "$G/normalize-text.awk" "$TMP/out" > "$TMP/$coll.txt"
  if diff -u "$G/$coll.txt" "$TMP/$coll.txt" > "$TMP/$coll.diff"; then
    ok "$prog: standard output is golden/$coll.txt byte for byte (figures masked)"
  else
    not_ok "$prog: standard output differs from golden/$coll.txt: $(head -c 1500 "$TMP/$coll.diff")"
  fi
  if [ "$have_py" = 0 ]; then
    skip "$prog -J: golden/$coll.json" "python3 is not installed"
    continue
  fi
  if python3 "$G/normalize-json.py" "$TMP/$coll.json" > "$TMP/$coll.jn" 2>&1 && diff -u "$G/$coll.json" "$TMP/$coll.jn" > "$TMP/$coll.jdiff"; then
    ok "$prog -J: nccl-tests' form (one line, %lf doubles) and golden/$coll.json key for key, type for type"
  else
    not_ok "$prog -J: $(head -c 300 "$TMP/$coll.jn") $(head -c 1500 "$TMP/$coll.jdiff" 2>/dev/null)"
  fi
done <<< "$cases"

# -I: what nccl-tests' tools/analyze_perf_json.py reads (a checker of our own: every key it reads, of the type it
# uses), on thread ranks (one process) and on two processes (fake srun), whose -J adds per_process_max_times_us
cat > "$TMP/iter_keys.py" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); nproc = int(sys.argv[2]); bad = []
num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
cfg = j.get("config", {})
if not isinstance(j.get("version"), int): bad.append("version")
for k in ("iterations", "aggregated_iterations", "per_iter_skip"):
    if not isinstance(cfg.get(k), int) or isinstance(cfg.get(k), bool): bad.append("config." + k)
for d in cfg.get("devices", []):
    if not isinstance(d.get("hostname"), str): bad.append("devices[].hostname")
if not j.get("results"): bad.append("results")
for r in j.get("results", []):
    if not isinstance(r.get("size"), int): bad.append("size")
    for key in ("out_of_place_per_iter", "in_place_per_iter"):
        p = r.get(key)
        if not isinstance(p, dict): bad.append(key); continue
        for k in ("min_us", "max_us", "avg_us", "p99_us", "cv_pct"):
            if not num(p.get(k)): bad.append(key + "." + k)
        t = p.get("times_us")
        if not (isinstance(t, list) and len(t) == cfg.get("iterations") and all(num(x) for x in t)): bad.append(key + ".times_us")
        rows = p.get("per_process_max_times_us", [])
        if len(rows) != (nproc if nproc > 1 else 0) or any(len(q) != len(t) for q in rows): bad.append(key + ".per_process_max_times_us")
        elif rows and any(abs(max(q[i] for q in rows) - t[i]) >= 0.001 for i in range(len(t))): bad.append(key + ": times_us != max of process rows")
print("OK" if not bad else "BAD %s" % sorted(set(bad)))
PY
if [ "$have_py" = 1 ]; then
  v=$(python3 "$TMP/iter_keys.py" "$TMP/all_reduce-per-iter.json" 1 2>&1)
  [ "$v" = OK ] && ok "-I -J: every key analyze_perf_json.py reads, of its type (one process)" || not_ok "-I -J keys: $v"
  port=$(free_port)
  srun2() { env SLURM_PROCID=$1 SLURM_NTASKS=2 SLURM_LOCALID=$1 SLURM_STEP_NODELIST=localhost SLURM_JOB_ID=78 \
              SLURM_STEP_ID=0 TOPOTUNE_MASTER_PORT=$port "${@:2}"; }
  srun2 1 "$BIN/all_reduce_perf" -g 0 -b 1K -e 2K -f 2 -n 5 -I 1 >"$TMP/i1.out" 2>"$TMP/i1.err" &
  p1=$!
  srun2 0 "$BIN/all_reduce_perf" -g 0 -b 1K -e 2K -f 2 -n 5 -I 1 -J "$TMP/i2.json" >"$TMP/i0.out" 2>"$TMP/i0.err"
  r0=$?; wait $p1; r1=$?
  v=$(python3 "$TMP/iter_keys.py" "$TMP/i2.json" 2 2>&1)
  [ "$r0$r1" = 00 ] && [ "$v" = OK ] && ok "-I -J on 2 processes: per_process_max_times_us, times_us their max per iteration" \
    || not_ok "-I on 2 processes: rc $r0/$r1 $v $(cat "$TMP/i0.err" "$TMP/i1.err")"
else
  skip "-I -J keys" "python3 is not installed"
fi

# -e above the memory: nccl-tests' line after the rank lines ("#" before it), the preamble with the -e asked for;
# -i 32T: one size (8 bytes) is measured
run "$BIN/all_reduce_perf" -g 0 -t 2 -b 8 -e 64T -i 32T -n 2 -w 1
if [ "$RC" = 0 ]; then
  got=$(awk -f "$G/normalize-text.awk" "$TMP/out" | sed -n '3p;7,11p' | sed 's/to [0-9]* due/to N due/')
  want="# nThread 2 nGpus 0 minBytes 8 maxBytes 70368744177664 step: 35184372088832(bytes) warmup iters: 1 iters: 2 agg iters: 1 validation: 1 graph: 0 unalign: 0
#  Rank  1 Group  0 Pid PPPPPP on HHHHHHHHHH device -1 [0000:00:00] host rank (shm)
#
# Reducing maxBytes to N due to memory limitation
#
#                                                              out-of-place                       in-place          "
  [ "$got" = "$want" ] && ok "-e 64T: '# Reducing maxBytes to N due to memory limitation' after the rank lines, as nccl-tests" \
    || not_ok "-e 64T: $got"
else
  skip "-e 64T: '# Reducing maxBytes'" "rc $RC: $(head -c 200 "$TMP/err")"
fi

# NCCL_TESTS_MIN_BW: nccl-tests' verdict ends the average line and is average_bus_bandwidth.okay (a string)
run env NCCL_TESTS_MIN_BW=100000 "$BIN/all_reduce_perf" -g 0 -t 2 -b 64 -e 64 -n 2 -w 1 -J "$TMP/min.json"
expect_rc 7 "NCCL_TESTS_MIN_BW above the run: exit 7 (nccl-tests' testNumResults)"
expect_grep "$TMP/out" '^# Avg bus bandwidth    : [0-9.e+-]+ FAILED$' "... '# Avg bus bandwidth    : X FAILED'"
run env NCCL_TESTS_MIN_BW=0.0000001 "$BIN/all_reduce_perf" -g 0 -t 2 -b 64 -e 64 -n 2 -w 1 -J "$TMP/minok.json"
expect_rc 0 "NCCL_TESTS_MIN_BW below the run: exit 0"
expect_grep "$TMP/out" '^# Avg bus bandwidth    : [0-9.e+-]+ OK$' "... '# Avg bus bandwidth    : X OK'"
if [ "$have_py" = 1 ]; then
  v=$(python3 -c 'import json,sys; print(*[json.load(open(f))["average_bus_bandwidth"]["okay"] for f in sys.argv[1:]])' \
      "$TMP/min.json" "$TMP/minok.json" "$TMP/all_reduce.json" 2>&1)
  [ "$v" = "false true unchecked" ] && ok "-J average_bus_bandwidth.okay: \"false\", \"true\", \"unchecked\" without NCCL_TESTS_MIN_BW" \
    || not_ok "average_bus_bandwidth.okay: $v"
else
  skip "-J average_bus_bandwidth.okay" "python3 is not installed"
fi
# topotune's lines come back with --topotune only (the goldens above have none of them)
run "$BIN/all_reduce_perf" -g 0 -t 2 -b 64 -e 64 -n 2 -w 1 --topotune -J "$TMP/tt.json"
expect_grep "$TMP/out" '^# plan: ' "--topotune: the plan line"
if [ "$have_py" = 1 ]; then
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j["tool"] == "topo-exec" and "algo" in j["results"][0]))' "$TMP/tt.json" \
    && ok "--topotune -J: topotune's keys (tool, results[].algo) after nccl-tests'" || not_ok "--topotune -J: $(head -c 300 "$TMP/tt.json")"
fi
finish
