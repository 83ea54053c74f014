#!/usr/bin/env bash
# On the development machine: build everything into .devcarry/build and copy the shared libraries the GPU
# machine lacks (libcjson) into .devcarry/lib, so a device run can carry `.devcarry` (see scripts/README.md).
set -eu
cd "$(dirname "$0")/../.."
make BUILD=.devcarry/build -j2 all tests >/dev/null
make BUILD=.devcarry/build -j2 $(grep -q '^plugin:' Makefile && echo plugin) >/dev/null 2>&1 || true
mkdir -p .devcarry/lib
cp -L "$(ldconfig -p | awk '/libcjson.so.1 /{print $NF; exit}')" .devcarry/lib/libcjson.so.1
du -sh .devcarry
