#!/usr/bin/env bash
# The NVML and CUDA probes replayed with stub libraries (tests/fixtures/stubs)
# on the fake sysfs machines: GPUs, NVLinks aggregated per NVSwitch, links
# down, P2P matrix, CUDA ordinals, NVML failing, GPUs outside the PCI tree.
. "$(dirname "$0")/lib.sh"
TD="$BIN/topo-dump"
MK="$ROOT/tests/fixtures/sysfs/make-fake-sysfs.sh"
if ! command -v cc >/dev/null 2>&1; then skip "stub NVML/CUDA" "no C compiler"; finish; fi
mkdir -p "$TMP/stubs"
cc -shared -fPIC -O1 -o "$TMP/stubs/libnvidia-ml.so.1" "$FIX/stubs/fake_nvml.c" &&
  cc -shared -fPIC -O1 -o "$TMP/stubs/libcuda.so.1" "$FIX/stubs/fake_cuda.c" || { not_ok "stubs build"; finish; }
for m in hgx8 vm; do bash "$MK" $m "$TMP/$m" || not_ok "build fake $m"; done
HGX=":18:00.0,:2a:00.0,:3a:00.0,:4c:00.0,:9a:00.0,:ac:00.0,:ba:00.0,:cc:00.0"
stub() { env LD_LIBRARY_PATH="$TMP/stubs" TOPOTUNE_SCAN_DEVICE_PROBES=1 "$@"; }
cnt() { grep -Ec -- "$1" "$2"; }

# --- healthy HGX: NVML + CUDA fill the GPUs
stub FAKE_NVML_GPUS=$HGX "$TD" --sysfs-root "$TMP/hgx8" --scan-report -f native -o "$TMP/h.xml" 2>"$TMP/err"; RC=$?
expect_rc 0 "hgx8 with stub NVML/CUDA scans"
expect_grep "$TMP/err" '^scan: nvml +ok +seen=8' "NVML probe saw 8 GPUs"
expect_grep "$TMP/err" '^scan: cuda +ok +seen=8' "CUDA probe saw 8 GPUs"
[ "$(cnt '<gpu dev=' "$TMP/h.xml")" = 8 ] && ok "8 gpu elements" || not_ok "8 gpu elements ($(cnt '<gpu dev=' "$TMP/h.xml"))"
expect_grep "$TMP/h.xml" '<gpu dev="2" sm="90" rank="2" uuid="GPU-fake-2" name="NVIDIA H100 80GB HBM3" memory_mb="81559" cpu_affinity="0-7" cpu_affinity_source="sysfs" numa_affinity="0" numa_affinity_source="sysfs" cuda_dev="5" gdr="1" dmabuf="1">' \
  "GPU 2: NVML index, SM, UUID, memory, affinity from sysfs (numa_node 0 wins over NVML's 0-15), CUDA ordinal (reverse order), GDR"
[ "$(cnt '<nvlink target="0000:0[5-8]:00.0" count="[45]" tclass="0x068000" version="4" down="0"/>' "$TMP/h.xml")" = 32 ] \
  && ok "32 nvlink elements: 4 NVSwitches per GPU" || not_ok "nvlink elements: $(cnt '<nvlink ' "$TMP/h.xml")"
expect_grep "$TMP/h.xml" '<nvlink target="0000:06:00.0" count="5" tclass="0x068000"' "links 4-8 aggregated into count 5"
expect_grep "$TMP/h.xml" '<nvswitch busid="0000:05:00.0" visible="1" links="32"/>' "NVSwitch 05: 8 GPUs x 4 links, visible"
expect_grep "$TMP/h.xml" '<nvswitch busid="0000:06:00.0" visible="1" links="40"/>' "NVSwitch 06: 8 x 5 links"
[ "$(cnt '<p2p target=' "$TMP/h.xml")" = 56 ] && ok "P2P matrix: 8x7 pairs" || not_ok "p2p count $(cnt '<p2p ' "$TMP/h.xml")"
expect_grep "$TMP/h.xml" 'gdr="1" gdr_via="nvidia_peermem"' "NICs: GPUDirect via nvidia_peermem"
expect_grep "$TMP/h.xml" 'driver_version="999.99-fake"' "driver version recorded"
run "$TD" -i "$TMP/h.xml" -f matrix -q
expect_grep "$TMP/out" '^GPU0 +X +NV18 +NV18' "matrix: NV18 between GPUs"
run "$TD" -i "$TMP/h.xml" --check -q
expect_rc 0 "healthy HGX: --check exit 0"
stub FAKE_NVML_GPUS=$HGX "$TD" --sysfs-root "$TMP/hgx8" -f nccl -o "$TMP/h-nccl.xml" -q; RC=$?
expect_rc 0 "NCCL dialect with GPUs and NVLinks"
expect_grep "$TMP/h-nccl.xml" '<gpu dev="0" sm="90" rank="0" gdr="1">' "NCCL gpu element keeps only NCCL's attributes"
expect_no_grep "$TMP/h-nccl.xml" '<p2p|nvswitch|cuda_dev|cpu_affinity|numa_affinity|gpu_numa_id' "NCCL dialect drops p2p/nvswitch/cuda_dev/affinities"

# --- a link down and a GPU without P2P
stub FAKE_NVML_GPUS=$HGX FAKE_NVML_DOWN=2:17,2:16 FAKE_NVML_NOP2P=3 "$TD" --sysfs-root "$TMP/hgx8" -q -o "$TMP/d.xml"
expect_grep "$TMP/d.xml" '<nvlink target="0000:08:00.0" count="2" tclass="0x068000" version="4" down="2"/>' "two links down counted on their target"
run "$TD" -i "$TMP/d.xml" --check
expect_rc 2 "links down: --check exit 2"
expect_grep "$TMP/err" 'error: \[nvlink-down\] gpu 0000:3a:00.0: 2 NVLink\(s\) to 0000:08:00.0 down' "nvlink-down names GPU and switch"
expect_grep "$TMP/err" 'warning: \[nvlink-unequal\] gpu 0000:3a:00.0: 16 active' "nvlink-unequal names the short GPU"
[ "$(grep -c 'p2p-unavailable' "$TMP/err")" = 7 ] && ok "GPU 3 without P2P: 7 pairs reported once each" \
  || not_ok "p2p-unavailable count $(grep -c 'p2p-unavailable' "$TMP/err")"

# --- NVML fails: CUDA alone describes the GPUs, dev in PCI order, recorded
stub FAKE_NVML_GPUS=$HGX FAKE_NVML_FAIL=init "$TD" --sysfs-root "$TMP/hgx8" --scan-report -o "$TMP/n.xml" 2>"$TMP/err"
expect_grep "$TMP/err" '^scan: nvml +unavailable .*nvmlInit failed: Driver Not Loaded' "NVML init failure recorded"
expect_grep "$TMP/n.xml" '<gpu dev="0" rank="0" cuda_dev="7" sm="90" gdr="1"' "CUDA-only GPU: dev in PCI order, CUDA ordinal kept"
expect_grep "$TMP/n.xml" '<unknown attr="dev" reason="NVML did not run: dev is this GPU.s position in PCI bus order' "dev derivation recorded"
expect_no_grep "$TMP/n.xml" '<nvlink ' "no NVLink without NVML"

# --- no libraries at all: GPUs recorded as unknown, nothing invented
TOPOTUNE_SCAN_DEVICE_PROBES=1 LD_LIBRARY_PATH="$TMP/none" "$TD" --sysfs-root "$TMP/hgx8" --no-cuda -q -o "$TMP/x.xml"
expect_no_grep "$TMP/x.xml" '<gpu ' "no NVML/CUDA: no gpu element"
[ "$(cnt '<unknown attr="gpu"' "$TMP/x.xml")" = 8 ] && ok "8 GPUs recorded as unknown" || not_ok "unknown gpu count"

# --- the VM: one GPU on a flat bus, numa_node -1; NVML GPU outside the tree
stub FAKE_NVML_GPUS=:06:00.0,:77:00.0 "$TD" --sysfs-root "$TMP/vm" -q -o "$TMP/v.xml"
expect_grep "$TMP/v.xml" '<cpu numaid="-1"' "VM: GPU under cpu numaid -1"
expect_grep "$TMP/v.xml" '<pci busid="0000:77:00.0" class="0x03" vendor="0x10de" device="0x2330"' "GPU outside the PCI tree: NCCL's default class, ids from NVML"
expect_grep "$TMP/v.xml" 'reason="GPU not found in the PCI tree' "and it is recorded"
run "$TD" -i "$TMP/v.xml" -f matrix -q
expect_grep "$TMP/out" '^GPU0 +X ' "VM matrix builds"

# --- the VM's GPU in the tree (numa_node -1): the driver's affinity, recorded as NVML's
stub FAKE_NVML_GPUS=:00:06.0 "$TD" --sysfs-root "$TMP/vm" --scan-report -o "$TMP/va.xml" 2>"$TMP/err"
expect_grep "$TMP/va.xml" '<gpu dev="0" .*cpu_affinity="0-15" cpu_affinity_source="nvml" numa_affinity="0" numa_affinity_source="nvml"' \
  "VM: CPU/NUMA affinity from NVML, source recorded"
expect_no_grep "$TMP/va.xml" 'gpu_numa_id' "VM: no GPU NUMA id (nvmlDeviceGetNumaNodeId not supported)"
expect_grep "$TMP/err" '^scan: nvml .*CPU/NUMA affinity of 1 from NVML' "scan report: affinity from NVML"
run "$TD" -i "$TMP/va.xml" -f matrix -q
hdr=$(head -1 "$TMP/out" | tr -s ' ')
[ "$hdr" = " GPU0 NIC0 CPU Affinity NUMA Affinity GPU NUMA ID" ] && ok "VM matrix header: nvidia-smi's three affinity columns" \
  || not_ok "VM matrix header: $hdr"
[ "$(grep -E '^GPU0 ' "$TMP/out" | tr -s ' ')" = "GPU0 X PHB 0-15 0 N/A" ] && ok "VM matrix: CPU Affinity 0-15, NUMA Affinity 0, GPU NUMA ID N/A" \
  || not_ok "VM matrix GPU0 row: $(grep -E '^GPU0 ' "$TMP/out")"
expect_grep "$TMP/out" '^GPU0: CPU/NUMA affinity from the driver \(NVML\): sysfs numa_node is -1$' "VM matrix: NVML's values footnoted"
stub FAKE_NVML_GPUS=:00:06.0 FAKE_NVML_GPU_NUMA=2 "$TD" --sysfs-root "$TMP/vm" -q -o "$TMP/vn.xml"
expect_grep "$TMP/vn.xml" '<gpu dev="0" .*gpu_numa_id="2"' "GPU NUMA id recorded when NVML has one"
run "$TD" -i "$TMP/vn.xml" -f matrix -q
[ "$(grep -E '^GPU0 ' "$TMP/out" | tr -s ' ')" = "GPU0 X PHB 0-15 0 2" ] && ok "matrix: GPU NUMA ID column" \
  || not_ok "GPU NUMA ID row: $(grep -E '^GPU0 ' "$TMP/out")"
stub FAKE_NVML_GPUS=:00:06.0 FAKE_NVML_AFFINITY=none "$TD" --sysfs-root "$TMP/vm" -q -o "$TMP/vx.xml"
expect_grep "$TMP/vx.xml" '<unknown attr="cpu_affinity" reason="sysfs has no NUMA node/local_cpulist for the GPU and nvmlDeviceGetCpuAffinity failed"' \
  "no affinity from NVML either: recorded unknown"
run "$TD" -i "$TMP/vx.xml" -f matrix -q
[ "$(grep -E '^GPU0 ' "$TMP/out" | tr -s ' ')" = "GPU0 X PHB N/A N/A N/A" ] && ok "matrix: N/A without sysfs or NVML affinity" \
  || not_ok "no-affinity row: $(grep -E '^GPU0 ' "$TMP/out")"
expect_no_grep "$TMP/out" 'affinity from the driver' "no footnote without NVML values"
# sysfs numa_node set (hgx8): sysfs wins, no footnote
run "$TD" -i "$TMP/h.xml" -f matrix -q
[ "$(grep -E '^GPU7 ' "$TMP/out" | tr -s ' ' | awk '{print $(NF-2), $(NF-1), $NF}')" = "8-15 1 N/A" ] \
  && ok "hgx8: GPU7 affinity from sysfs (8-15, node 1), not NVML's 0-15" || not_ok "hgx8 GPU7 row: $(grep -E '^GPU7 ' "$TMP/out")"
expect_no_grep "$TMP/out" 'affinity from the driver' "hgx8: no NVML footnote"
# --- libibverbs stub: ports, speed x width, MTU, max_qp; --check on them
if [ -f /usr/include/infiniband/verbs.h ] && cc -shared -fPIC -O1 -o "$TMP/stubs/libibverbs.so.1" "$FIX/stubs/fake_ibverbs.c" 2>"$TMP/cc.err"; then
  stub FAKE_NVML_GPUS=$HGX FAKE_IBV_DEVS=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 FAKE_IBV_DOWN=mlx5_7 \
    FAKE_IBV_MTU1024=mlx5_6 "$TD" --sysfs-root "$TMP/hgx8" --scan-report -o "$TMP/ib.xml" 2>"$TMP/err"
  expect_grep "$TMP/err" '^scan: ibv +ok +seen=8 .*8 RDMA device\(s\), 8 port\(s\)' "ibverbs probe saw 8 ports"
  expect_grep "$TMP/ib.xml" '<net name="mlx5_0" dev="0" port="1" speed="400000" guid="0xa088c20300f1e000" link_layer="InfiniBand" state="ACTIVE" node_guid="0xa088c20300f1e000" driver="mlx5_core" ifname="ibp19s0" netdev_mtu="4092" mtu="4096" maxconn="131072" gdr="1"' \
    "mlx5_0: NDR x4 = 400000 Mb/s, active MTU 4096, max_qp as maxconn, bound driver named"
  expect_grep "$TMP/ib.xml" '<net name="mlx5_7" .*state="DOWN"' "ibverbs port state wins over sysfs"
  expect_no_grep "$TMP/ib.xml" '<unknown attr="(mtu|maxconn)"' "no MTU/maxconn unknown once ibverbs ran"
  run "$TD" -i "$TMP/ib.xml" --check
  expect_rc 2 "port down: --check exit 2"
  expect_grep "$TMP/err" 'error: \[ib-port-not-active\] net mlx5_7 port 1: RDMA port is DOWN' "down port named"
  expect_grep "$TMP/err" 'warning: \[mtu-small\] net mlx5_6 port 1: active MTU 1024 below 4096.*RoCE' "RoCE MTU 1024 flagged"
else
  skip "ibverbs stub" "no verbs headers or compiler"
fi
finish
