#!/usr/bin/env bash
# cluster-truth.sh - topo-tune out of the box against published results of real clusters.
#
#   scripts/bench/cluster-truth.sh [FACT-TABLE...]      (default: every tests/fixtures/published/*.txt)
#
# For each fact table (tests/fixtures/published/README.md) it runs topo-tune with the table's own
# `# topo-tune:` arguments (a bundled topology, -N/-g/-k/-s/--fabric; no calibration) and prints, per
# sweep and pooled over the sweeps, the median and worst time error per size class (<= 64 KiB,
# 64 KiB-16 MiB, >= 16 MiB) of the default model and of --model nccl, the error at each sweep's
# largest size, the harm count (rows the default NCCL table forces where the model itself predicts
# the forced candidate slower than what NCCL measured), and --expect's verdicts on the healthy run
# and on two degraded copies (large sizes that lost 25 % of their bandwidth, small sizes whose time
# doubled).  Markdown on stdout; the figures of docs/benchmarks.md "Cluster truth" come from it.
#
# Env: BUILD (default build) picks the topo-tune; CALIB=file evaluates the default model with a
# calibration file instead of the built-in constants.  Needs python3.  The constants themselves are
# fitted by scripts/bench/cluster_fit.py (docs/model.md "Where the constants come from").
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
[ -x "$BUILD/bin/topo-tune" ] || { echo "cluster-truth: $BUILD/bin/topo-tune not built (make BUILD=$BUILD)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "cluster-truth: python3 not found" >&2; exit 2; }
echo "# cluster truth: $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $("$BUILD/bin/topo-tune" --version)"
echo
TOPOTUNE="$BUILD/bin/topo-tune" exec python3 scripts/bench/cluster_truth.py "$@"
