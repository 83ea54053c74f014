#!/usr/bin/env bash
# export-map.sh HEADER... - the linker version script of libtopotune.so: every function the public
# headers declare (a tt_ name followed by "(") is exported, everything else stays local.
# Called by the Makefile; the list is the public API by construction.
set -eu
echo "{"
echo "  global:"
sed -n 's/.*[^A-Za-z0-9_]\(tt_[a-z0-9_]*\)[[:space:]]*(.*/\1/p; s/^\(tt_[a-z0-9_]*\)[[:space:]]*(.*/\1/p' "$@" |
  sort -u | sed 's/.*/    &;/'
echo "  local: *;"
echo "};"
