#!/usr/bin/env bash
# Install what topotune needs to build and test, from Debian/Ubuntu packages,
# but only what pkg-config (or a command lookup) cannot already find.
# Usage: scripts/install-deps.sh [--check]   (--check: report only, exit 1 if missing)
set -u
check_only=0
[ "${1:-}" = "--check" ] && check_only=1

missing=()
need_pc() { pkg-config --exists "$1" 2>/dev/null || missing+=("$2"); }
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }

need_cmd pkg-config pkg-config
need_cmd cc gcc
need_cmd make make
if command -v pkg-config >/dev/null 2>&1; then
  need_pc libxml-2.0 libxml2-dev
  need_pc libcjson libcjson-dev
  need_pc hwloc libhwloc-dev
  need_pc libibverbs libibverbs-dev
  need_pc cmocka libcmocka-dev
  need_pc ompi-c libopenmpi-dev   # MPI for topo-exec under mpirun and tt_exec_mpi.h (optional: make MPI=0)
  # a consumer's `pkg-config --static --libs topotune` carries hwloc's private libraries; Debian's hwloc.pc
  # names -ludev there, whose link-time name (libudev.so, libudev.pc) only libudev-dev ships (docs/install.md)
  if pkg-config --exists hwloc 2>/dev/null && pkg-config --static --libs hwloc 2>/dev/null | grep -qw -- -ludev; then
    need_pc libudev libudev-dev
  fi
else
  missing+=(libxml2-dev libcjson-dev libhwloc-dev libudev-dev libibverbs-dev libcmocka-dev libopenmpi-dev)
fi
# Tools the tests and views use (optional ones are still installed when possible).
need_cmd xmllint libxml2-utils
need_cmd dot graphviz
need_cmd lstopo hwloc
need_cmd mpirun openmpi-bin

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all build dependencies present"
  exit 0
fi
echo "install-deps: missing: ${missing[*]}"
[ $check_only -eq 1 ] && exit 1
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; install the packages above by hand" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: not root and no sudo; install the packages above by hand" >&2; exit 1; fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null || { echo "install-deps: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2068
$SUDO apt-get install -y -qq --no-install-recommends ${missing[@]} >/dev/null \
  || { echo "install-deps: apt-get install ${missing[*]} failed" >&2; exit 1; }
echo "install-deps: installed ${missing[*]}"
