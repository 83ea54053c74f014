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
reduce:-b 64 -e 64 -d int32 -o max -r 1"
while IFS=: read -r coll args; do
  prog=${coll}_perf
  # shellcheck disable=SC2086
  run "$BIN/$prog" -g 0 -t 2 -n 2 -w 1 $args -J "$TMP/$coll.json"
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
