#!/usr/bin/env bash
# A broken GPU node fails the health check (issue #34 item 1): with NVIDIA GPUs on the PCI bus but
# no usable driver, all_reduce_perf & co. and topo-exec -g N exit non-zero naming why ("no NVIDIA
# driver", not CUDA's "driver version is insufficient"); host ranks run only with -g 0, on a
# machine without any NVIDIA GPU, or for topo-exec without arguments (the README's main job, which
# warns).  The driver state is staged: a machine under TOPOTUNE_SYSFS_ROOT (the PCI devices, the
# nvidia module); CUDA answers for the real machine, so this runs where CUDA sees no GPU.
. "$(dirname "$0")/lib.sh"
export TOPOTUNE_TIMEOUT_MS=10000
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID SLURM_NTASKS \
      SLURM_STEP_NODELIST SLURM_JOB_NODELIST SLURM_NODELIST TOPOTUNE_PREDICT_TOPO CUDA_VISIBLE_DEVICES 2>/dev/null
AR="$BIN/all_reduce_perf"; TE="$BIN/topo-exec"

# machines: none (a host bridge only), nodrv (two NVIDIA GPUs, no nvidia module)
M=$TMP/machines
mkpci() { mkdir -p "$1/sys/bus/pci/devices/$2"; echo "$3" >"$1/sys/bus/pci/devices/$2/vendor"; echo "$4" >"$1/sys/bus/pci/devices/$2/class"; }
mkpci "$M/none" 0000:00:00.0 0x8086 0x060000
mkpci "$M/none" 0000:03:00.0 0x1a03 0x030000   # a BMC's VGA is no GPU
mkpci "$M/nodrv" 0000:00:00.0 0x8086 0x060000
mkpci "$M/nodrv" 0000:17:00.0 0x10de 0x030200
mkpci "$M/nodrv" 0000:65:00.0 0x10de 0x030200

TOPOTUNE_SYSFS_ROOT=$M/none run "$AR" -b 8 -e 8 -n 1 -w 0
if grep -q '^# nThread 1 nGpus [1-9]' "$TMP/out"; then
  skip "broken GPU node fails the health check" "CUDA sees a GPU on this machine (the staged machines need one without)"
  finish
fi
expect_rc 0 "no NVIDIA GPU at all: host ranks (exit 0)"
expect_grep "$TMP/err" '^all_reduce_perf: no NVIDIA GPU on this machine \(none on the PCI bus.*\): host ranks, 1 thread\(s\) per process \(-g 0\)' \
  "... and standard error says why"
expect_no_grep "$TMP/err" 'insufficient|no usable GPU \(no usable GPU' "... in our words, not nested"

for prog in all_reduce_perf all_gather_perf broadcast_perf; do
  TOPOTUNE_SYSFS_ROOT=$M/nodrv run timeout 30 "$BIN/$prog" -b 8 -e 8 -t 2
  expect_rc 1 "$prog on GPUs without a driver: exit 1, no host ranks"
  # a CUDA build says "no NVIDIA driver"; a build without CUDA (the sanitizer build) says that
  expect_grep "$TMP/err" "^$prog: (no NVIDIA driver: 2 NVIDIA GPU\(s\) on the PCI bus \(0000:17:00.0, 0000:65:00.0\), but the nvidia kernel module is not loaded|2 NVIDIA GPU\(s\) on the PCI bus .*, but this build of topotune has no CUDA support).*; -g 0 runs host ranks instead$" \
    "... naming why: $(head -c 150 "$TMP/err")"
  expect_no_grep "$TMP/err" 'insufficient for CUDA runtime|no usable GPU' "... in our words"
  [ -s "$TMP/out" ] && not_ok "... printed a table: $(head -c 100 "$TMP/out")" || ok "... and nothing on stdout"
done
TOPOTUNE_SYSFS_ROOT=$M/nodrv run "$AR" -b 8 -e 8 -g 1
expect_rc 1 "-g 1 on GPUs without a driver: exit 1"
TOPOTUNE_SYSFS_ROOT=$M/nodrv run "$AR" -b 8 -e 8 -g 0 -t 2
expect_rc 0 "-g 0 on GPUs without a driver: host ranks, as asked"
expect_grep "$TMP/out" '^# Avg bus bandwidth' "... a whole table"
TOPOTUNE_SYSFS_ROOT=$M/nodrv run "$TE" -g 2 -b 8 -e 8
expect_rc 1 "topo-exec -g 2 on GPUs without a driver: exit 1"
expect_grep "$TMP/err" '^topo-exec: -g 2: (no NVIDIA driver|.*no CUDA support).*; use --host N for host ranks$' "... naming why"
TOPOTUNE_SYSFS_ROOT=$M/none run "$TE" -g 2 -b 8 -e 8
expect_rc 2 "topo-exec -g 2 on a machine without GPUs: a usage error (exit 2)"
expect_grep "$TMP/err" '^topo-exec: -g 2: no NVIDIA GPU on this machine' "... saying so"
TOPOTUNE_SYSFS_ROOT=$M/nodrv run "$TE" --gpu-copy-bench 1M
expect_rc 1 "--gpu-copy-bench on GPUs without a driver: exit 1"

# the README's main job keeps its fallback, loudly
TOPOTUNE_SYSFS_ROOT=$M/nodrv run timeout 120 "$TE"
expect_rc 0 "topo-exec without arguments on a broken GPU node: host ranks (the main job's fallback)"
expect_grep "$TMP/err" "^topo-exec: WARNING: this machine's GPUs cannot be used: " "... with a warning on stderr"
expect_grep "$TMP/out" '^# topo-exec without arguments: GPUs not usable: .*: 4 host ranks$' "... and the header line"
expect_no_grep "$TMP/out" 'no usable GPU \(' "... not nested"
finish
