#!/usr/bin/env bash
# nccl-tests-reference.sh - on the GPU machine: build NVIDIA's nccl-tests from a source tree carried
# there (never kept in this repository: NCCL_TESTS_SRC, default .devcarry/nccl-tests, exported from
# a checkout of github.com/NVIDIA/nccl-tests) against the machine's NCCL, then run each collective's
# binary with the options our drop-in tests use, text and -J JSON, and write everything to $OUT:
# the real output to compare ours with, form for form (issue #34 item 3).  With TT=path/to/bin, the
# same runs of topotune's drop-ins go beside them ($OUT/tt-*).
set -u
SRC=${NCCL_TESTS_SRC:-.devcarry/nccl-tests}
OUT=${OUT:-/tmp/nccl-tests-ref}; mkdir -p "$OUT"
[ -f "$SRC/src/common.cu" ] || { echo "nccl-tests-reference: no nccl-tests source at $SRC" >&2; exit 2; }
( cd "$SRC" && make -j"$(nproc)" MPI=0 CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" src.build ) >"$OUT/build.log" 2>&1 ||
  { echo "nccl-tests-reference: build failed"; tail -30 "$OUT/build.log"; exit 1; }
B=$SRC/build
one() { # one TAG PROG ARGS...: text to $OUT/TAG.txt, exit code to $OUT/TAG.rc
  local tag=$1; shift
  timeout 120 "$@" >"$OUT/$tag.txt" 2>"$OUT/$tag.err"; echo $? >"$OUT/$tag.rc"
}
for c in all_reduce all_gather reduce_scatter broadcast reduce; do
  for who in nccl ${TT:+tt}; do
    if [ $who = nccl ]; then p=$B/${c}_perf; else p=$TT/${c}_perf; fi
    one $who-$c "$p" -b 8 -e 1M -f 32 -g 1 -n 5 -w 1
    rm -f "$OUT/$who-$c.json"*
    one $who-$c-J "$p" -b 8 -e 1M -f 32 -g 1 -n 5 -w 1 -J "$OUT/$who-$c.json"
  done
done
for who in nccl ${TT:+tt}; do
  if [ $who = nccl ]; then p=$B/all_reduce_perf; else p=$TT/all_reduce_perf; fi
  one $who-ar-c0 "$p" -b 1K -e 1K -g 1 -n 5 -w 1 -c 0
  NCCL_TESTS_MIN_BW=100000 one $who-ar-minbw "$p" -b 1M -e 1M -g 1 -n 5 -w 1
  NCCL_TESTS_MIN_BW=0.000001 one $who-ar-minbw-ok "$p" -b 1M -e 1M -g 1 -n 5 -w 1
  rm -f "$OUT/$who-ar-I.json"*
  one $who-ar-I "$p" -b 8 -e 64K -f 8 -g 1 -n 10 -w 1 -I 1 -J "$OUT/$who-ar-I.json"
  one $who-ar-hex "$p" -b 8 -e 8 -g 1 -n 2 -w 1 -d half -o max -S 1
done
ls "$OUT" | head -80
