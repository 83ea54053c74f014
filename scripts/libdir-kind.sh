#!/usr/bin/env bash
# libdir-kind.sh DIR - how the dynamic loader finds a shared library installed in DIR; prints one word:
#   system    DIR is one of the loader's built-in search directories (/usr/lib, /lib/<multiarch>, ...)
#   ldconfig  DIR is listed in /etc/ld.so.conf (found once `ldconfig` has refreshed the cache)
#   other     neither: a program needs an rpath (or LD_LIBRARY_PATH) to find it
# `make install` uses it to decide whether topotune.pc's Libs carry -Wl,-rpath,${libdir} (docs/install.md).
set -u
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
canon() { realpath -m "$1" 2>/dev/null || echo "$1"; }
want=$(canon "$1")

# the loader's built-in directories: glibc's ld.so --help lists them (glibc >= 2.33); the fixed four otherwise
ldso=$(ldd /bin/sh 2>/dev/null | awk '$1 ~ /^\/.*ld-/ {print $1; exit}')
system_dirs() {
  [ -n "$ldso" ] && "$ldso" --help 2>/dev/null | sed -n 's/^ *\(\/[^ ]*\) (system search path)$/\1/p'
  printf '%s\n' /lib /usr/lib /lib64 /usr/lib64
}
# /etc/ld.so.conf and the files it includes (one directory a line, `include GLOB`, # comments)
conf_dirs() {
  local f line g
  for f in "$@"; do
    [ -r "$f" ] || continue
    while read -r line; do
      line=${line%%#*}
      case "$line" in
        include\ *) for g in ${line#include }; do conf_dirs "$g"; done ;;
        /*) echo "${line%% *}" ;;
      esac
    done <"$f"
  done
}
while read -r d; do [ -n "$d" ] && [ "$(canon "$d")" = "$want" ] && { echo system; exit 0; }; done < <(system_dirs)
while read -r d; do [ -n "$d" ] && [ "$(canon "$d")" = "$want" ] && { echo ldconfig; exit 0; }; done < <(conf_dirs /etc/ld.so.conf)
echo other
