#!/usr/bin/env bash
# On the development machine: build everything into .devcarry/build and copy the shared libraries the GPU
# machine lacks (libcjson, libcmocka) into .devcarry/lib, so a device run can carry `.devcarry` (see scripts/README.md).
set -eu
cd "$(dirname "$0")/../.."
# a previous run removed the objects (and with them make's header dependencies): without this, a change
# to a header only (exec/exec_cuda_*.cuh) would leave the old binaries in place
[ -d .devcarry/build ] && [ ! -d .devcarry/build/obj ] && rm -rf .devcarry/build
make BUILD=.devcarry/build -j2 all tests >/dev/null
make BUILD=.devcarry/build -j2 $(grep -q '^plugin:' Makefile && echo plugin) >/dev/null 2>&1 || true
mkdir -p .devcarry/lib
cp -L "$(ldconfig -p | awk '/libcjson.so.1 /{print $NF; exit}')" .devcarry/lib/libcjson.so.1
cp -L "$(ldconfig -p | awk '/libcmocka.so.0 /{print $NF; exit}')" .devcarry/lib/libcmocka.so.0
# what a run carries must stay under the device's 64 MiB: the tools, the GPU unit programs and the
# libraries (carry .devcarry/build/bin, .devcarry/gtests, .devcarry/lib)
rm -rf .devcarry/build/obj .devcarry/gtests
mkdir -p .devcarry/gtests
cp .devcarry/build/tests/test_exec_gpu .devcarry/build/tests/test_exec_gpu_ipc .devcarry/build/tests/test_exec_measure \
   .devcarry/build/tests/test_exec_gpu_health \
   .devcarry/gtests/
cp .devcarry/build/lib/libnccl-tuner-topotune.so .devcarry/gtests/ 2>/dev/null || true   # plugin-load-check.sh
# symbols are not needed there (the device run returns logs, not cores): strip to stay under 64 MiB
strip --strip-unneeded .devcarry/build/bin/topo-* .devcarry/gtests/test_* 2>/dev/null || true
du -sh .devcarry
# a device run carries at most 64 MiB with the working tree: the same files packed (xz: about 7 MiB);
# carry .devcarry/carry.tar.xz and start the command with: tar xJf .devcarry/carry.tar.xz -C .devcarry
tar cJf .devcarry/carry.tar.xz -C .devcarry build/bin gtests lib
ls -la .devcarry/carry.tar.xz
