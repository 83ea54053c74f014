#!/usr/bin/env bash
# topo-validate.sh - was the tuning table's choice right on this machine?
#
# Runs topo-exec once per candidate algorithm (same sizes, iterations and ranks), keeps the
# JSON of each run, and has topo-tune judge the table's choice against the runner-ups
# (topo-tune --judge-choices, docs/calibration.md section 3).  No executor change needed.
#
#   scripts/topo-validate.sh [--bin DIR] [--algos a,b,c] [--keep DIR]
#                            (--table T.json | --input TOPO [--calibration C] [--among-measured])
#                            [--tolerance X] -- TOPO-EXEC-ARGS...
#   e.g. scripts/topo-validate.sh --input node.xml --among-measured -- --host 8 -b 1K -e 64M -f 4
#
# Candidates: all_reduce ring, tree, halving-doubling (hierarchical too when asked with
# --algos); other collectives ring.  A candidate topo-exec refuses for these ranks (exit 2,
# e.g. halving-doubling on 6 ranks) is reported and left out.
# Exit: topo-tune's (0 every choice right, 1 some wrong, 2 error); 2 when a run fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin="$here/../build/bin"
algos=""
keep=""
judge=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --algos) algos=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --table|--input|--calibration|--tolerance|--nodes|--gpus-per-node|--nics-per-node|--nic-speed)
      [ $# -ge 2 ] || { echo "topo-validate: $1 needs a value" >&2; exit 2; }
      judge+=("$1" "$2"); shift 2 ;;
    --among-measured) judge+=("$1"); shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "topo-validate: unknown option '$1' (topo-exec arguments go after --)" >&2; exit 2 ;;
  esac
done
[ ${#judge[@]} -gt 0 ] || { echo "topo-validate: give --table T.json or --input TOPO" >&2; exit 2; }
for t in topo-exec topo-tune; do
  [ -x "$bin/$t" ] || { echo "topo-validate: $bin/$t not found (build first, or --bin DIR)" >&2; exit 2; }
done
for a in "$@"; do
  case "$a" in --algo|--algo=*|-J|--output_file|--output_file=*)
    echo "topo-validate: '$a' is set by topo-validate (one run per candidate)" >&2; exit 2 ;;
  esac
done
coll=all_reduce
prev=""
for a in "$@"; do
  if [ "$prev" = "-t" ] || [ "$prev" = "--op-name" ]; then coll=$a; fi
  case "$a" in --op-name=*) coll=${a#--op-name=} ;; esac
  prev=$a
done
if [ -z "$algos" ]; then
  case "$coll" in all_reduce|allreduce) algos="ring,tree,halving-doubling" ;; *) algos="ring" ;; esac
fi
dir=${keep:-$(mktemp -d "${TMPDIR:-/tmp}/topo-validate.XXXXXX")}
mkdir -p "$dir" || exit 2
[ -n "$keep" ] || trap 'rm -rf "$dir"' EXIT
n=0
IFS=, read -r -a list <<<"$algos"
for a in "${list[@]}"; do
  "$bin/topo-exec" "$@" --algo "$a" --no-progress -J "$dir/run-$a.json" >"$dir/run-$a.txt" 2>"$dir/run-$a.err"
  rc=$?
  if [ $rc -eq 0 ]; then
    n=$((n + 1)); echo "# measured $a ($dir/run-$a.json)"
  elif [ $rc -eq 2 ]; then
    echo "# $a left out: $(head -n 1 "$dir/run-$a.err")"; rm -f "$dir/run-$a.json"
  else
    echo "topo-validate: topo-exec --algo $a failed (exit $rc): $(head -n 3 "$dir/run-$a.err")" >&2; exit 2
  fi
done
[ $n -ge 1 ] || { echo "topo-validate: no candidate could run" >&2; exit 2; }
"$bin/topo-tune" --judge-choices "$dir"/run-*.json "${judge[@]}"
