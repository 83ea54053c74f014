# Shared helpers for CLI tests (sourced). TAP-style output, counted by tests/run-tests.sh.
set -u
: "${BUILD:=build}"
ROOT=${TOPOTUNE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
case "$BUILD" in /*) BIN="$BUILD/bin" ;; *) BIN="$ROOT/$BUILD/bin" ;; esac
FIX="$ROOT/tests/fixtures"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topotune-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
_failures=0
ok()      { echo "ok - $*"; }
not_ok()  { echo "not ok - $*"; _failures=$((_failures+1)); }
skip()    { echo "ok - $1 # SKIP ${2:-}"; }
# run CMD...: captures stdout in $TMP/out, stderr in $TMP/err, exit code in $RC
run() { "$@" >"$TMP/out" 2>"$TMP/err"; RC=$?; }
expect_rc() { # expect_rc N description
  if [ "$RC" -eq "$1" ]; then ok "$2"; else not_ok "$2 (exit $RC, wanted $1; stderr: $(head -c 300 "$TMP/err"))"; fi; }
expect_grep() { # expect_grep FILE REGEX description
  if grep -Eq -- "$2" "$1"; then ok "$3"; else not_ok "$3 (no /$2/ in $(basename "$1"): $(head -c 300 "$1"))"; fi; }
expect_no_grep() {
  if grep -Eq -- "$2" "$1"; then not_ok "$3 (/$2/ found in $(basename "$1"))"; else ok "$3"; fi; }
# free_port: a TCP port on 127.0.0.1 that nothing holds now, taken below the kernel's ephemeral range
# (ip_local_port_range), so that no socket bound to port 0 or connecting out (another rank's listener, a
# test starting at the same time) can be handed it before the rank that is to listen there binds it
free_port() {
  python3 -c '
import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    p = random.randrange(max(1024, lo - 12000), lo)
    try:
        s = socket.socket(); s.bind(("127.0.0.1", p)); s.close(); print(p); break
    except OSError:
        pass' 2>/dev/null || echo $((20000 + RANDOM % 12000))
}
finish() { exit $(( _failures > 0 ? 1 : 0 )); }

# netns_pair TAG NET: two network namespaces $NA and $NB joined by a veth pair ($VA, $VB) with the
# addresses NET.1 and NET.2 (NET like 10.251.77), lo up, and a check that unshare --uts works there
# (tests give each namespace its own host name). Root only. Returns 1 with the reason in $TMP/ns.err
# where that is not possible. ns_cleanup removes them; it also runs at exit.
netns_pair() {
  NA=$1-a$$ NB=$1-b$$ VA=${1}a$$ VB=${1}b$$
  trap 'ns_cleanup; rm -rf "$TMP"' EXIT
  : >"$TMP/ns.err"
  [ "$(id -u)" = 0 ] || { echo "not root" >"$TMP/ns.err"; return 1; }
  command -v ip >/dev/null && command -v unshare >/dev/null || { echo "ip or unshare missing" >"$TMP/ns.err"; return 1; }
  ip netns add $NA 2>>"$TMP/ns.err" && ip netns add $NB 2>>"$TMP/ns.err" &&
    ip link add $VA type veth peer name $VB 2>>"$TMP/ns.err" &&
    ip link set $VA netns $NA && ip link set $VB netns $NB &&
    ip -n $NA addr add $2.1/24 dev $VA && ip -n $NB addr add $2.2/24 dev $VB &&
    ip -n $NA link set $VA up && ip -n $NB link set $VB up &&
    ip -n $NA link set lo up && ip -n $NB link set lo up &&
    ip netns exec $NA unshare --uts true 2>>"$TMP/ns.err"
}
ns_cleanup() { ip netns del $NA 2>/dev/null; ip netns del $NB 2>/dev/null; ip link del $VA 2>/dev/null; true; }

# fake_verbs_ready WHAT: build the fake libibverbs.so.1 (tests/fixtures/stubs/fake_ibverbs_rdma.c) into
# $TMP/stubs and check that its RDMA writes (process_vm_writev into another process) are permitted here.
# Returns 1 after reporting why not: not_ok when something that should build does not, skip (naming WHAT)
# when the machine lacks a compiler, the rdma-core headers or the permission.
fake_verbs_ready() {
  if ! command -v cc >/dev/null 2>&1; then skip "$1" "no C compiler for the fake libibverbs"; return 1; fi
  if [ ! -f /usr/include/infiniband/verbs.h ]; then skip "$1" "no <infiniband/verbs.h> (rdma-core headers) here"; return 1; fi
  mkdir -p "$TMP/stubs"
  cc -shared -fPIC -O1 -o "$TMP/stubs/libibverbs.so.1" "$FIX/stubs/fake_ibverbs_rdma.c" 2>"$TMP/cc.err" ||
    { not_ok "fake libibverbs builds ($(head -c 300 "$TMP/cc.err"))"; return 1; }
  cc -o "$TMP/pvw" "$FIX/stubs/pvw_probe.c" 2>"$TMP/cc.err" || { not_ok "process_vm_writev probe builds"; return 1; }
  local why
  if ! why=$("$TMP/pvw"); then
    skip "$1" "process_vm_writev into another process is not permitted here (${why:-probe failed})"
    return 1
  fi
}
