#!/usr/bin/env bash
# same-outputs.sh - run one fixed set of topo-dump / topo-tune / topo-exec commands with two builds and
# compare what they print, write and exit with.  For refactors that must not change behaviour.
#
#   scripts/dev/same-outputs.sh OLD_BIN_DIR NEW_BIN_DIR [WORK_DIR]
#   GPU=1 scripts/dev/same-outputs.sh ...     on the GPU machine: the GPU executor's runs as well
#
# Each command's stdout, stderr, written files and exit code are kept under WORK_DIR/{old,new}/NN.*
# and compared.  Measured times differ between two runs of the same binary, so topo-exec's output
# has every decimal number replaced by '#' (sizes, counts, #wrong and exit codes still compare); the
# version/commit strings and temporary paths are masked too.  Exit 0 when every command matches, 1
# (with the differing commands named) otherwise.
set -uo pipefail
OLD=${1:?usage: same-outputs.sh OLD_BIN_DIR NEW_BIN_DIR [WORK_DIR]}
NEW=${2:?usage: same-outputs.sh OLD_BIN_DIR NEW_BIN_DIR [WORK_DIR]}
WORK=${3:-$(mktemp -d /tmp/same-outputs.XXXXXX)}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
F=$ROOT/tests/fixtures
M=$F/measurements
P=$F/published
mkdir -p "$WORK/old" "$WORK/new"

# One command per line; @ is the bin dir, % the per-command output file prefix; a leading 'X ' masks
# decimals (measured times).  Commands run from the repository root with TOPOTUNE_DEBUG unset.
CMDS=$(cat <<'EOF'
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml -f nccl
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml -f json
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml -f dot
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml -f matrix
@/topo-dump -i tests/fixtures/hgx-a100-8gpu.xml -f matrix
@/topo-dump -i tests/fixtures/hgx-b200-8gpu.xml -f json
@/topo-dump -i tests/fixtures/pcie-4gpu.xml -f matrix
@/topo-dump -i tests/fixtures/nvl72-sm100.xml -f json
@/topo-dump -i tests/fixtures/rccl-mi300x-8gpu.xml -f matrix
@/topo-dump -i tests/fixtures/rccl-mi250x-8gcd-cxi.xml -f json
@/topo-dump -i tests/fixtures/nccl-dump-h100-vm.xml -f matrix
@/topo-dump -i tests/fixtures/nccl-dump-h200-vm.xml --check
@/topo-dump -i tests/fixtures/nccl-dump-h200-vm.xml --check -f json
@/topo-dump -i tests/fixtures/vendor-partial.xml --validate
@/topo-dump -i tests/fixtures/vendor-partial.xml --validate -f json
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml -o %out.xml
@/topo-dump --merge tests/fixtures/hgx-h100-8gpu.xml tests/fixtures/hgx-a100-8gpu.xml -o %cluster.xml
@/topo-dump --merge tests/fixtures/hgx-h100-8gpu.xml tests/fixtures/hgx-h100-8gpu.xml
@/topo-dump -i tests/fixtures/does-not-exist.xml
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml -f nonsense
@/topo-dump --bogus-option
@/topo-dump --sysfs-root /nonexistent --no-nvml --no-cuda --no-ibv --no-hwloc
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -f json
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -f nccl-csv
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -f env
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -C all
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -m nccl -f json
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -N 2 -g 8 -f nccl-csv
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -N 4 -g 8 -f json --fabric roce
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -N 16 -g 8 -k 8 -s 400 --fabric efa -f nccl-csv
@/topo-tune -i tests/fixtures/hgx-a100-8gpu.xml -N 2 -e 1M
@/topo-tune -i tests/fixtures/hgx-b200-8gpu.xml -N 2 -e 8G
@/topo-tune -i tests/fixtures/pcie-4gpu.xml -e 64K
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --shapes 8x1,16x2 -f json
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --nccl-only --keep-nccl off -f nccl-csv
@/topo-tune -i tests/fixtures/rccl-mi300x-8gpu.xml
@/topo-tune -i tests/fixtures/nvl72-sm100.xml -f json
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -o %table.json -f json
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --expect
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --expect -f json
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --expect --measured tests/fixtures/measurements/exec-ar-default-8.txt
@/topo-tune --calibrate tests/fixtures/measurements/exec-*.json -i tests/fixtures/measurements/host-pcie-8gpu.xml -o %calib.json
@/topo-tune -i tests/fixtures/measurements/host-pcie-8gpu.xml -c %calib.json -f json
@/topo-tune --from-measured tests/fixtures/measurements/exec-ar-default-8.json tests/fixtures/measurements/exec-ag-ring-8.json -f json
@/topo-tune --judge-choices tests/fixtures/measurements/exec-*-8.json -i tests/fixtures/measurements/host-pcie-8gpu.xml
@/topo-tune --from-measured tests/fixtures/measurements/nccl-tests-v3.json tests/fixtures/measurements/nccl-tests-handwritten.txt -f nccl-csv
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -N 2 --expect --measured tests/fixtures/published/h100-2n-ib-ghdstack-nebius.txt
@/topo-tune -i tests/fixtures/pcie-4gpu.xml -f json -o %table4.json
@/topo-tune -i tests/fixtures/does-not-exist.xml
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -N 0
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --fabric warp
@/topo-tune --bogus-option
@/topo-dump --help
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml -f svg
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml --validate
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml --validate -o %val.txt
@/topo-dump -i tests/fixtures/nccl-dump-h200-vm.xml --check -o %check.txt
@/topo-dump -i tests/fixtures/nccl-dump-h100-vm.xml
@/topo-dump -i tests/fixtures/vendor-partial.xml --gpu-part H100-SXM -f matrix
@/topo-dump -i tests/fixtures/vendor-partial.xml --gpu-part warp
@/topo-dump -i tests/fixtures/vendor-partial.xml --validate --gpu-part A100-SXM
@/topo-dump -i tests/fixtures/bad/empty.xml
@/topo-dump -i tests/fixtures/bad/not-xml.txt --validate
@/topo-dump -i %cluster.xml
@/topo-dump -i tests/fixtures/hwloc/hgx8.xml -f matrix
X @/topo-dump --hwloc-xml tests/fixtures/hwloc/hgx8.xml --no-nvml --no-cuda --no-ibv --scan-report -f json
@/topo-dump --hwloc-xml tests/fixtures/hwloc/pcie4.xml --no-nvml --no-cuda --no-ibv --vendor-file tests/fixtures/vendor/a100-sxm4-eth-partial.xml --check
@/topo-dump --hwloc-xml tests/fixtures/hwloc/vm.xml --no-nvml --no-cuda --no-ibv --validate -f json
@/topo-dump --merge
@/topo-dump --merge tests/fixtures/hgx-h100-8gpu.xml -f json
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml extra
@/topo-dump -i ""
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml --sysfs-root /x
@/topo-dump --hwloc-xml a --sysfs-root b
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml --vendor-file x
@/topo-dump -i tests/fixtures/hgx-h100-8gpu.xml --check --validate
@/topo-tune --help
@/topo-tune -i %cluster.xml
@/topo-tune -i %cluster.xml -f json
@/topo-tune -i %cluster.xml -e 1M
@/topo-tune -i %cluster.xml -N 3
@/topo-tune -i %cluster.xml --shapes 8x1
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml tests/fixtures/hgx-a100-8gpu.xml tests/fixtures/hgx-h100-8gpu.xml -f json
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -i tests/fixtures/pcie-4gpu.xml -e 64K
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --shapes 2x1,4x1,8x1,16x2
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --shapes 2x1,16x2 -f nccl-csv
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --shapes 2x1,,4x1
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --shapes 8x1 -N 2
@/topo-tune -i tests/fixtures/vendor-partial.xml --strict
@/topo-tune -i tests/fixtures/vendor-partial.xml --shapes 2x1,4x1 --strict
@/topo-tune -i tests/fixtures/vendor-partial.xml -e 1M
@/topo-tune -i tests/fixtures/vendor-partial.xml -f json
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -m nccl --keep-nccl 0.1 -f nccl-csv
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --keep-nccl 0.3 -f nccl-csv
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --min-size 1M --max-size 1K
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -C warp
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -C broadcast --min-size 1K --max-size 1M -e 64K
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -e 0
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -m bogus
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --tolerance 11
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --margin 0.1
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --measured
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --gpu-part warp
@/topo-tune --calibrate --judge-choices
@/topo-tune --from-measured
@/topo-tune --from-measured tests/fixtures/measurements/exec-ar-default-8.json -i x
@/topo-tune --from-measured tests/fixtures/measurements/exec-ar-default-8.json -f env
@/topo-tune --from-measured tests/fixtures/measurements/exec-ar-default-8.json -C allreduce --margin 0.1
@/topo-tune --from-measured tests/fixtures/measurements/exec-ar-default-8.json -C warp
@/topo-tune --judge-choices tests/fixtures/measurements/exec-*-8.json --table %table.json
@/topo-tune --judge-choices tests/fixtures/measurements/exec-*-8.json --table %table.json --tolerance 0.5 -C allreduce
@/topo-tune --judge-choices tests/fixtures/measurements/exec-*-4.json --table %table.json
@/topo-tune --judge-choices tests/fixtures/measurements/exec-*-8.json -i tests/fixtures/measurements/host-pcie-8gpu.xml --among-measured
@/topo-tune --judge-choices tests/fixtures/measurements/exec-*-8.json --among-measured --table %table.json
@/topo-tune --judge-choices tests/fixtures/measurements/exec-*-8.json -i tests/fixtures/measurements/host-pcie-8gpu.xml -m nccl
@/topo-tune --judge-choices -i tests/fixtures/measurements/host-pcie-8gpu.xml
@/topo-tune --calibrate tests/fixtures/measurements/exec-ar-*-4.json -i tests/fixtures/measurements/host-pcie-8gpu.xml -m nccl
@/topo-tune --calibrate tests/fixtures/measurements/exec-ar-*-4.json -i tests/fixtures/measurements/host-pcie-8gpu.xml -m nccl -o %x.json
@/topo-tune --calibrate tests/fixtures/measurements/exec-ar-*-4.json -i tests/fixtures/measurements/host-pcie-8gpu.xml -m nccl -c x
@/topo-tune --calibrate tests/fixtures/measurements/exec-ar-*-4.json -i tests/fixtures/measurements/host-pcie-8gpu.xml -e 1M
@/topo-tune --calibrate tests/fixtures/measurements/nope.json -i tests/fixtures/measurements/host-pcie-8gpu.xml
@/topo-tune --expect tests/fixtures/measurements/exec-ar-default-8.json -i tests/fixtures/measurements/host-pcie-8gpu.xml
@/topo-tune --expect --measured -i tests/fixtures/measurements/host-pcie-8gpu.xml
@/topo-tune --expect --measured tests/fixtures/measurements/exec-ar-default-4.json -i tests/fixtures/measurements/host-pcie-8gpu.xml -f json
@/topo-tune --expect --measured tests/fixtures/measurements/exec-ar-default-4.json -i tests/fixtures/measurements/host-pcie-8gpu.xml -N 3
@/topo-tune --expect -i tests/fixtures/hgx-h100-8gpu.xml -N 2 -C allgather --min-size 1K --max-size 1M
@/topo-tune --expect -i tests/fixtures/hgx-h100-8gpu.xml -m nccl -f json -o %exp.json
@/topo-tune --expect -i tests/fixtures/hgx-h100-8gpu.xml --strict
@/topo-tune --expect -i tests/fixtures/hgx-h100-8gpu.xml -i tests/fixtures/pcie-4gpu.xml
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml unexpected
@/topo-tune
@/topo-tune --gen-nvswitch-domain 4
@/topo-tune --gen-nvswitch-domain 0
X @/topo-tune --bench
TOPOTUNE_FABRIC=warp @/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml
TOPOTUNE_FABRIC=roce @/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml -N 2 -e 1M
X @/topo-exec --host 4 -b 1K -e 64K -f 4 -n 2 -w 1 -c 1
X @/topo-exec --host 3 -t all_gather -b 1K -e 16K -f 4 -n 2 -w 1 -c 1 -d int32
X @/topo-exec --host 4 -t reduce_scatter -b 4K -e 16K -f 2 -n 2 -w 1 -c 1 -o max
X @/topo-exec --host 4 -t broadcast -r 2 -b 1K -e 4K -f 2 -n 2 -w 1 -c 1
X @/topo-exec --host 4 -t reduce -r 1 -b 1K -e 4K -f 2 -n 2 -w 1 -c 1 -d double
X @/topo-exec --host 4 --algo tree --proto ll -b 1K -e 16K -f 4 -n 2 -w 1 -c 1 --no-progress
X @/topo-exec --host 4 --algo halving-doubling -b 1K -e 16K -f 4 -n 2 -w 1 -c 1 -J %run.json
X @/topo-exec --host 4 --predict tests/fixtures/pcie-4gpu.xml -b 1K -e 16K -f 4 -n 2 -w 1 -c 1
X @/topo-exec --host 4 --table %table4.json -b 1K -e 16K -f 4 -n 2 -w 1 -c 1
X @/all_reduce_perf -b 1K -e 16K -f 4 -n 2 -w 1 -c 1
X @/all_gather_perf -b 1K -e 16K -f 4 -n 2 -w 1 -c 1
@/topo-exec --host 4 --algo warp
X @/topo-exec -g 1
@/topo-exec --bogus-option
@/topo-exec --host 0
@/topo-exec --host 2 -b 0
@/topo-exec --host 2 -b x
@/topo-exec --host 2 -b 2K -e 1K
@/topo-exec --host 2 -i 0 -f 1
@/topo-exec --host 2 --chunk 32
@/topo-exec --host 2 --chunk x
@/topo-exec --host 2 -n 0
@/topo-exec --host 2 -w -1
@/topo-exec --host 2 -m 0
@/topo-exec --host 2 -c x
@/topo-exec --host 2 -o bogus
@/topo-exec --host 2 -d bogus
@/topo-exec --host 2 -t bogus
@/topo-exec --host 2 -t broadcast -r 5
@/topo-exec --host 2 --cycles -1
@/topo-exec --host 2 --average foo
@/topo-exec --host 2 --bind socket
@/topo-exec --host 2 -T 0
@/topo-exec --host 2 --rank 0
@/topo-exec --host 2 --rank 0 --nranks 2 --master 127.0.0.1:1
@/topo-exec --rank 1 --nranks 1 --master 127.0.0.1:1
@/topo-exec --host 2 --mpi
@/topo-exec --host 2 --validate --algo ring
@/topo-exec --host 2 --topo x
@/topo-exec --host 2 --validate --validate-margin x
@/topo-exec --host 2 -g 2
@/topo-exec --host 2 --engine nccl
@/topo-exec --host 2 --gpu-transport host
@/topo-exec --host 2 --cha 2
@/topo-exec --host 2 extra
@/topo-exec --host 2 -b
@/topo-exec --host 2 --predict tests/fixtures/does-not-exist.xml
@/topo-exec --host 2 --table tests/fixtures/does-not-exist.json -b 1K -e 1K
@/topo-exec --host 2 --master 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789
@/topo-exec --help
@/topo-exec --host 2 -V
WORLD_SIZE=2 @/topo-exec -b 1K -e 1K
NCCL_ALGO=warp @/topo-exec --host 2 -b 1K -e 1K
NCCL_PROTO=bogus @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_TIMEOUT_MS=0 @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_TIMEOUT_MS=10s @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_CHUNK_BYTES=3G @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_SHM_RING_BYTES=12K @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_IB_RING_BYTES=1 @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_SPIN_US=-1 @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_THREAD_NODES=0 @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_IB_GID_INDEX=256 @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_GPU_EMULATE_HOSTS=0 @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_HOST_BIND=socket @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_SPIN_US=x TOPOTUNE_TIMEOUT_MS=x @/topo-exec --host 2 -b 1K -e 1K
TOPOTUNE_THREAD_NODES=3 @/topo-exec --host 2 -b 1K -e 1K
X TOPOTUNE_TRANSPORT=bogus @/topo-exec --host 2 -b 1K -e 1K
@/topo-exec -g 2 --cycles 3
@/topo-exec -g 2 -m 2
@/topo-exec -g 0
@/topo-exec -g 65
@/topo-exec -g2 -b 0
@/topo-exec -g 2 --engine foo
@/topo-exec -g 2 --channels 0
@/topo-exec -g 2 --gpu-transport x
@/topo-exec -g 2 --algo warp
@/topo-exec -g 2 -b 2K -e 1K
@/topo-exec -g 2 --rank 0
@/topo-exec -g 1 --rank 0 --nranks 2 --master 127.0.0.1:1 -g 2
X @/topo-exec -g 2 --cha 4
@/topo-exec -g 2 -h
@/topo-exec -g 2 --bogus
@/topo-exec -g 2 -r 64
@/topo-exec -g 2 -T 0
@/topo-exec -g 2 extra
@/topo-exec --gpu-copy-bench 0
X @/topo-exec --gpu-copy-bench 1M
X @/topo-exec --engine nccl
NCCL_ALGO=warp @/topo-exec -g 2
@/all_reduce_perf -z 1
@/all_reduce_perf -x 1
X @/all_reduce_perf -g 2
@/all_reduce_perf -d all
@/all_reduce_perf -o all
@/all_reduce_perf -r -1
@/all_reduce_perf --bogus
@/all_reduce_perf -t 0
@/all_reduce_perf -h
X @/all_reduce_perf -t 2 -g 0 -b 1K -e 4K -f 2 -n 2 -w 1 -N 2 -m 2 -a 0
X @/broadcast_perf -t 3 -b 1K -e 4K -f 2 -n 2 -w 1 --topotune -I 0
X @/topo-exec --host 2 --bind core -b 1K -e 4K -f 2 -n 2 -w 1
X @/topo-exec --host 2 -T 5 --average max --cycles 2 -b 1K -e 4K -f 2 -n 2 -w 1
X @/topo-exec --host 2 --chec 2 -b 1K -e 4K -f 2 -n 2 -w 1
X TOPOTUNE_CHUNK_BYTES=4K TOPOTUNE_HOST_BIND=cpu @/topo-exec --host 2 -b 1K -e 4K -f 2 -n 2 -w 1 -J %envrun.json
@/topo-exec --host 2 --predict tests/fixtures/pcie-4gpu.xml --calibration tests/fixtures/does-not-exist.json -b 1K -e 4K
X TOPOTUNE_SPIN_US=5 @/topo-exec --host 2 --bind core --predict tests/fixtures/pcie-4gpu.xml -T 7 -b 1K -e 4K -f 2 -n 2 -w 1 -J %bindrun.json
X TOPOTUNE_HOST_BIND=cpu TOPOTUNE_TIMEOUT_MS=9000 @/topo-exec --host 2 --bind core -T 7 -b 1K -e 4K -f 2 -n 2 -w 1 -J %inplacerun.json
X TOPOTUNE_PREDICT_TOPO=tests/fixtures/pcie-4gpu.xml @/all_reduce_perf -t 2 -b 1K -e 4K -f 2 -n 2 -w 1 -J %perfrun.json
X TOPOTUNE_PREDICT_TOPO=tests/fixtures/pcie-4gpu.xml @/all_reduce_perf -t 2 -b 1K -e 4K -f 2 -n 2 -w 1 --predict tests/fixtures/pcie-4gpu.xml -J %perfpredrun.json
X TOPOTUNE_PREDICT_TOPO=tests/fixtures/pcie-4gpu.xml @/topo-exec --host 2 -b 1K -e 4K -f 2 -n 2 -w 1
X @/all_reduce_perf -t 2 -b 1K -e 4K -f 2 -n 2 -w 1 --topotune --predict tests/fixtures/pcie-4gpu.xml
X @/reduce_scatter_perf -t 4 -b 4K -e 16K -f 2 -n 2 -w 1 --topotune --table %table4.json
X @/topo-exec --host 4 -t reduce -r 3 --table %table4.json --predict tests/fixtures/pcie-4gpu.xml -b 1K -e 16K -f 4 -n 2 -w 1 -c 0
X @/topo-exec
X @/topo-exec --host 3 -b 1K -e 256K -f 4 -n 2 -w 1 -c 1 -J %ranks3-run.json
X @/topo-exec --host 2 -b 16K -e 256K -f 4 -n 2 -w 1 -c 1
X @/topo-exec --host 8 --algo rd -b 1K -e 64K -f 8 -n 2 -w 1 -c 1
X @/topo-exec --host 3 --algo hier -b 1K -e 64K -f 8 -n 2 -w 1 -c 1
@/topo-exec --host 3 --algo rd
@/topo-exec --host 6 --algo halving-doubling
@/topo-exec --host 4 -t all_gather --algo tree
@/topo-exec --host 4 --algo nvls
@/topo-exec --host 4 --proto ll128
@/topo-tune --help
@/topo-tune -i tests/fixtures/hgx-h100-8gpu.xml --algo warp
X env RANK=0 WORLD_SIZE=x @/topo-exec -b 1K -e 1K
X env SLURM_PROCID=0 SLURM_NTASKS=2 @/topo-exec -b 1K -e 1K
X env OMPI_COMM_WORLD_RANK=5 OMPI_COMM_WORLD_SIZE=2 @/topo-exec -b 1K -e 1K
X echo '{"schema": "topotune-tuning-table", "version": 1, "nodes": 1, "ranks": 4, "model": "topotune", "entries": [{"collective": "allreduce", "min_bytes": 0, "max_bytes": 4095, "algorithm": "tree", "protocol": "simple", "channels": 1}, {"collective": "allreduce", "min_bytes": 4096, "max_bytes": 18446744073709549568, "algorithm": "ring", "protocol": "simple", "channels": 4}]}' >%wrong4.json && TOPOTUNE_FAULT_SLOW=ring:10000 @/topo-exec --validate --host 4 --table %wrong4.json --topo tests/fixtures/pcie-4gpu.xml --validate-runners-up 1 --validate-rounds 2 -b 4K -e 16K -f 4 -n 2 -w 1 -J %wrongvalrun.json
X TOPOTUNE_FAULT_SLOW=ring:10000 @/topo-exec --validate --host 4 --table %wrong4.json --topo tests/fixtures/pcie-4gpu.xml --validate-runners-up 1 -b 4K -e 16K -f 4 -n 2 -w 1
X TOPOTUNE_FAULT_SLOW=recursive-doubling:10000 @/topo-exec --validate --host 4 --table %wrong4.json --topo tests/fixtures/pcie-4gpu.xml --validate-runners-up 1 --validate-margin 50 -b 4K -e 16K -f 4 -n 2 -w 1 -J %rightvalrun.json
X @/topo-exec --validate --host 4 -b 1K -e 16K -f 4 -n 2 -w 1 --validate-runners-up 0 --no-progress -J %onlyvalrun.json
X @/topo-exec --validate --host 4 -t all_gather -b 4 -e 64 -f 4 -n 2 -w 1 --validate-runners-up 0 -d int32
X @/topo-exec --validate --host 4 -t broadcast -r 1 -b 1K -e 4K -f 4 -n 2 -w 1 --validate-runners-up 0 -J %bcastvalrun.json
@/topo-exec --validate --host 4 --table %table4.json -b 1K -e 8K -f 8 -n 2 -w 1
X TOPOTUNE_FAULT=corrupt:1:40 TOPOTUNE_FAULT_SLOW=ring:10000 @/topo-exec --validate --host 2 -b 1K -e 16K -f 4 -n 2 -w 1 --validate-runners-up 1 -J %failvalrun.json >%failval.txt 2>%failval.log; r=$?; sed -i -E 's/rank [01]: AllReduce [^"]*/rank R: (which rank sees it first varies)/' %failval.txt %failval.log %failvalrun.json; cat %failval.txt; cat %failval.log >&2; rm %failval.txt %failval.log; exit $r
X @/topo-exec --validate --rank 1 --nranks 2 --master 127.0.0.1:29617 -b 1K -e 4K -f 4 -n 2 -w 1 --validate-runners-up 0 & @/topo-exec --validate --rank 0 --nranks 2 --master 127.0.0.1:29617 -b 1K -e 4K -f 4 -n 2 -w 1 --validate-runners-up 0; r=$?; wait; exit $r
@/topo-exec --validate --host 4 --validate-rounds 0
@/topo-exec --validate --host 4 --validate-runners-up 8
@/topo-exec --validate --host 4 --topo tests/fixtures/does-not-exist.xml -b 1K -e 1K
@/topo-exec --validate --host 4 --table %wrong4.json -t all_gather -b 1K -e 1K
@/topo-exec --validate --host 2 --table %wrong4.json -b 1K -e 1K
@/topo-exec --validate --host 2 --table tests/fixtures/does-not-exist.json -b 1K -e 1K
@/topo-exec --validate --host 2 --table tests/fixtures/hgx-h100-8gpu.xml -b 1K -e 1K
@/topo-exec --validate --host 2 --topo tests/fixtures/pcie-4gpu.xml --calibration tests/fixtures/does-not-exist.json -b 1K -e 1K
@/topo-exec --validate --host 2 -b 1K -e 1K -n 2 -w 1 -J /nonexistent/dir/v.json
EOF
)

# GPU=1 (on a machine with an NVIDIA GPU): the GPU executor's runs too (virtual ranks on one GPU)
GPU_CMDS=$(cat <<'EOF'
X @/topo-exec -g 1 -b 8 -e 64M -f 8 -n 5 -w 2 -c 1
X @/topo-exec -g 4 -b 8 -e 256M -f 8 -n 5 -w 2 -c 1
X @/topo-exec -g 4 --algo tree -b 1K -e 16M -f 16 -n 5 -w 2 -c 1
X @/topo-exec -g 4 --algo ring --proto ll -b 1K -e 1M -f 16 -n 5 -w 2 -c 1
X @/topo-exec -g 4 --proto ll128 -b 1K -e 16M -f 16 -n 5 -w 2 -c 1
X @/topo-exec -g 3 -t all_gather -b 1K -e 4M -f 16 -n 5 -w 2 -c 1
X @/topo-exec -g 4 -t reduce_scatter -b 4K -e 4M -f 16 -n 5 -w 2 -c 1
X @/topo-exec -g 4 -t broadcast -r 1 -b 1K -e 4M -f 16 -n 5 -w 2 -c 1
X @/topo-exec -g 4 -t reduce -r 2 -b 1K -e 4M -f 16 -n 5 -w 2 -c 1 -d float
X @/topo-exec -g 4 --table %table4.json -b 1K -e 16M -f 16 -n 5 -w 2 -c 1
X @/topo-exec -g 2 --predict tests/fixtures/pcie-4gpu.xml -b 1K -e 1M -f 16 -n 5 -w 2 -c 1
X @/all_reduce_perf -g 4 -b 8 -e 16M -f 16 -n 5 -w 2 -c 1
X @/all_gather_perf -g 2 -b 8 -e 1M -f 16 -n 5 -w 2 -c 1
X @/topo-exec -g 4 --validate --table %table4.json -b 1K -e 1M -f 32 --validate-rounds 1
@/topo-exec -g 4 --algo warp
@/topo-exec -g 4 --proto warp
X @/topo-exec -g 2 -b 1K -e 64K -f 4 -n 2 -w 1 -t all_gather -J %g2.json
X @/topo-exec -g 2 --algo ring --proto ll -b 1K -e 16K -f 4 -n 2 -w 1 -T 5 -J %g3.json
X @/topo-exec -g 1 --table %table4.json -b 1K -e 1M -f 8 -n 2 -w 1
X @/topo-exec -g 2 --table %table.json -b 1K -e 1M -f 8 -n 2 -w 1 -t reduce_scatter
X @/topo-exec
X @/all_reduce_perf -b 1K -e 64K -f 4 -n 2 -w 1 -J %g8.json
X @/all_gather_perf -b 1K -e 64K -f 4 -n 2 -w 1 -g 2 --topotune
X @/topo-exec --gpu-copy-bench 1M -n 3
X @/topo-exec -g 2 --engine nccl -b 1K -e 4K -n 2
X @/topo-exec -g 1 --engine nccl -b 1K -e 4K -n 2 --algo tree
X @/topo-exec -g 2 -t broadcast -r 3
X @/topo-exec -g 2 --channels 2 -b 1K -e 4K -n 2 -d half -o max
X @/topo-exec -g 2 --gpu-transport host -b 1K -e 4K -n 2
X @/topo-exec -g 1 --rank 0 --nranks 1 --master 127.0.0.1:29555 -b 1K -e 4K -n 2 -J %g17.json
X @/topo-exec --validate -g 1 -b 1K -e 64K -f 4 -n 2
X @/topo-exec --validate -g 2 -b 1K -e 64K -f 4 -n 2 -J %g20.json
X @/topo-exec -g 2 --check-max 2K -b 1K -e 8K -f 2 -n 2
X @/topo-exec --ngpus=2 --no-progress -b 1K -e 4K -n 2
EOF
)
[ "${GPU:-0}" = 1 ] && CMDS+=$'\n'"$GPU_CMDS"

run_set() { # BIN_DIR OUT_DIR
    local bin=$1 out=$2 n=0 line mask cmd
    # the table file topo-exec --table reads comes from topo-tune of the same build
    while IFS= read -r line; do
        [ -z "$line" ] && continue
        n=$((n + 1)); mask=0
        case $line in "X "*) mask=1; line=${line#X } ;; esac
        cmd=${line//@/$bin}; cmd=${cmd//%/$out/shared.}
        ( cd "$ROOT" && env -u TOPOTUNE_DEBUG timeout 120 bash -c "$cmd" >"$out/$n.out" 2>"$out/$n.err"; echo $? >"$out/$n.rc" )
        printf '%s\n' "$line" >"$out/$n.cmd"
        for f in "$out/$n.out" "$out/$n.err"; do
            sed -i -e "s#$out/shared\.#%#g" -e "s#$bin#@#g" -e 's/version [0-9][^ ,)]*/version V/g' \
                -e 's/"tt_version":[[:space:]]*"[^"]*"/"tt_version": "V"/g' -e 's/tt_git="[^"]*"/tt_git="G"/g' \
                -e 's/"\(created\|date\|git\|commit\)":[[:space:]]*"[^"]*"/"\1": "M"/g' \
                -e 's/Pid  *[0-9][0-9]*/Pid P/g' -e 's/pid [0-9][0-9]*/pid P/g' "$f"
            [ $mask = 1 ] && sed -i -E -e 's/[-+]?[0-9]+\.[0-9]+(e[-+]?[0-9]+)?/#/g' -e 's/ +/ /g' -e 's/port [0-9]+/port N/g' "$f"
        done
    done <<<"$CMDS"
    # files written by the commands (the topo-exec JSON is masked like its stdout)
    for f in "$out"/shared.*; do
        [ -f "$f" ] || continue
        case $f in *run.json|*/shared.g*.json) sed -i -E -e 's/[-+]?[0-9]+\.[0-9]+(e[-+]?[0-9]+)?/#/g' -e 's/"pid":\s*[0-9]+/"pid": P/' "$f" ;; esac
        sed -i -e 's/--calibrate, [0-9-]* [0-9:]* UTC/--calibrate, D UTC/' -e 's/"\(created\|date\|git\|commit\|tt_version\|start_time\|end_time\)":[[:space:]]*"[^"]*"/"\1": "M"/g' \
            -e "s#$out/shared\.#%#g" -e "s#$bin#@#g" "$f"
    done
}

run_set "$OLD" "$WORK/old"
run_set "$NEW" "$WORK/new"
bad=0; total=0
for c in "$WORK"/old/*.cmd; do
    n=$(basename "$c" .cmd); total=$((total + 1))
    for k in rc out err; do
        if ! cmp -s "$WORK/old/$n.$k" "$WORK/new/$n.$k"; then
            echo "DIFF ($k): $(cat "$c")"; diff "$WORK/old/$n.$k" "$WORK/new/$n.$k" | head -8; bad=$((bad + 1)); break
        fi
    done
done
for f in "$WORK"/old/shared.*; do
    [ -f "$f" ] || continue
    g=$WORK/new/$(basename "$f")
    cmp -s "$f" "$g" || { echo "DIFF (file): $(basename "$f")"; diff "$f" "$g" | head -8; bad=$((bad + 1)); }
done
echo "same-outputs: $((total - bad)) of $total commands identical (rc, stdout, stderr), written files compared; work dir $WORK"
[ $bad = 0 ]
