#!/usr/bin/env bash
# Several topology inputs (issue #33): --gpu-part for every host of several --input files or a
# merged file, display/management adapters that are not ranks, mixed GPU vendors refused, and
# cluster comparison of NICs known by PCI class only.
. "$(dirname "$0")/lib.sh"
TD="$BIN/topo-dump"
TT="$BIN/topo-tune"
I="$FIX/inputs"
busbw() { grep -Eo '"busbw":[[:space:]]*[0-9.]+' "$TMP/out" | head -1 | grep -Eo '[0-9.]+$'; }
above() { awk -v b="${1:-0}" -v m="$2" 'BEGIN{exit !(b > m)}'; }

# --- item 2: --gpu-part applies to every --input file and to a merged file
cp "$FIX/vendor-partial.xml" "$TMP/p1.xml"
cp "$FIX/vendor-partial.xml" "$TMP/p2.xml"
run "$TT" -i "$TMP/p1.xml" --gpu-part A100-SXM -C allreduce --min-size 1G --max-size 1G -f json
one=$(busbw)
run "$TT" -i "$TMP/p1.xml" "$TMP/p2.xml" --gpu-part A100-SXM -C allreduce --min-size 1G --max-size 1G -f json
expect_rc 0 "two partial files with --gpu-part: tuned"
two=$(busbw)
above "$two" 100 && ok "two partial files with --gpu-part A100-SXM: busbw $two GB/s > 100 (one file: $one)" \
  || not_ok "two partial files with --gpu-part A100-SXM: busbw ${two:-none} GB/s, wanted > 100"
expect_no_grep "$TMP/err" 'gpu-unknown|interconnect unknown' "two files: no gpu-unknown warning with --gpu-part"
expect_grep "$TMP/err" 'assumed: .*\[inferred-nvlink\].*A100-SXM' "two files: the assumptions from --gpu-part are printed"
run "$TD" --merge "$TMP/p1.xml" "$TMP/p2.xml" -o "$TMP/merged.xml"
expect_rc 0 "merge two partial files"
run "$TT" -i "$TMP/merged.xml" --gpu-part A100-SXM -C allreduce --min-size 1G --max-size 1G -f json
expect_rc 0 "merged partial file with --gpu-part: tuned"
m=$(busbw)
[ "${m:-x}" = "${two:-y}" ] && ok "merged file with --gpu-part: same busbw as two files ($m)" \
  || not_ok "merged file with --gpu-part: busbw ${m:-none}, two files ${two:-none}"
expect_no_grep "$TMP/err" 'gpu-unknown' "merged file: no gpu-unknown warning with --gpu-part"
run env TOPOTUNE_GPU_PART=A100-SXM "$TT" -i "$TMP/p1.xml" "$TMP/p2.xml" -C allreduce --min-size 1G --max-size 1G -f json
[ "$(busbw)" = "${two:-y}" ] && ok "TOPOTUNE_GPU_PART and --gpu-part agree for two files" \
  || not_ok "TOPOTUNE_GPU_PART gives $(busbw), --gpu-part ${two:-none}"
run "$TT" -i "$TMP/p1.xml" "$TMP/p2.xml" -C allreduce --min-size 1G --max-size 1G -f json
expect_grep "$TMP/err" 'gpu-unknown' "two partial files without a part: still warned"

finish
