#!/usr/bin/env bash
# The GPU net transport's proxy (exec/exec_gpu_proxy.c) over the InfiniBand verbs host transport, without a GPU
# or an HCA: test_exec_gpu_net's IB cases (TT_NET_TEST_IB=1) run on the fake libibverbs.so.1
# (tests/fixtures/stubs/fake_ibverbs_rdma.c, RDMA writes executed with process_vm_writev, as test_exec_ib.sh uses
# it): Simple and LL steps of every size both ways on two channels, bytes exact, the transport reported as ib;
# an abort travels as a proxy message and a peer's exit is seen by the survivor's proxy.  Once with completions
# executed when posted, once lagging (FAKE_IBV_ASYNC=1).
. "$(dirname "$0")/lib.sh"
case "$BUILD" in /*) T="$BUILD/tests" ;; *) T="$ROOT/$BUILD/tests" ;; esac
unset TOPOTUNE_TRANSPORT TOPOTUNE_IB_HCA TOPOTUNE_IB_GID_INDEX TOPOTUNE_IB_RING_BYTES TOPOTUNE_DEBUG
if [ ! -x "$T/test_exec_gpu_net" ]; then skip "proxy over IB verbs" "no $T/test_exec_gpu_net (make tests)"; finish; fi
mkdir -p "$TMP/reg"
fake_verbs_ready "proxy over IB verbs on the fake verbs library" || finish
for async in 0 1; do
  log="$TMP/ib$async.log"
  env LD_LIBRARY_PATH="$TMP/stubs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_IBV_DIR="$TMP/reg" FAKE_IBV_DEVS=mlx5_0 \
    FAKE_IBV_ASYNC=$async TT_NET_TEST_IB=1 TT_NET_TEST_FILTER='*_ib' TOPOTUNE_TIMEOUT_MS=5000 \
    timeout 200 "$T/test_exec_gpu_net" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && grep -q '^\[  PASSED  \] 2 test' "$log" && ! grep -q SKIPPED "$log"; then
    ok "proxy over ib (async completions: $async): steps exact both ways, abort and dead peer seen ($(grep -m1 -o 'ib: [0-9]* payload bytes each way, exact' "$log"))"
  else
    not_ok "proxy over ib (async completions: $async): rc $rc: $(grep -E 'exit|ERROR|FAIL|rank' "$log" | head -5 | tr '\n' ' ')"
  fi
  expect_grep "$log" 'rank 0: exit 0: ib: [0-9]+ payload bytes each way, exact' "async $async: the proxies' host communicator is ib"
done
finish
