#!/usr/bin/env bash
# make install PREFIX=... gives tools, libraries, headers and a pkg-config file a C program can build against;
# make uninstall removes them again.
. "$(dirname "$0")/lib.sh"
P="$TMP/prefix"
run make -C "$ROOT" -s BUILD="$BUILD" install PREFIX="$P"
expect_rc 0 "make install PREFIX=tmp"
for f in bin/topo-dump bin/topo-tune bin/topo-exec lib/libtopotune.a lib/libtopotune.so.0 lib/libtopotune.so \
         lib/libnccl-tuner-topotune.so include/topotune/tt_topo.h include/topotune/tt_xml.h \
         include/topotune/tt_common.h include/topotune/tt_tune.h include/topotune/tt_exec.h include/topotune/tt_exec_mpi.h lib/pkgconfig/topotune.pc; do
  [ -e "$P/$f" ] && ok "installed $f" || not_ok "missing $f"
done
# the nccl-tests names (links to topo-exec) and the man pages generated from docs/cli-*.md
for n in all_reduce_perf all_gather_perf reduce_scatter_perf broadcast_perf reduce_perf; do
  [ "$(readlink "$P/bin/$n")" = topo-exec ] && ok "installed $n -> topo-exec" || not_ok "bin/$n is not a link to topo-exec"
done
if command -v python3 >/dev/null; then
  for t in topo-dump topo-tune topo-exec; do
    m="$P/share/man/man1/$t.1"
    [ -s "$m" ] && grep -q "^\.TH \"${t^^}\" \"1\"" "$m" && grep -q '^\.SH NAME' "$m" && ok "man page $t.1 installed" \
      || not_ok "man page $t.1 missing or without .TH/NAME"
    # NAME is one plain whatis line; Markdown's backticks never reach the text (code blocks keep theirs)
    nl=$(sed -n '/^\.SH NAME/{n;p;q}' "$m")
    [ ${#nl} -le 110 ] && [[ "$nl" != *'\f'* ]] && ok "$t.1: NAME is one short plain line ($nl)" \
      || not_ok "$t.1: NAME line of ${#nl} characters: $nl"
    stray=$(awk '/^\.nf/{c=1} /^\.fi/{c=0} !c && /`/' "$m" | head -2)
    [ -z "$stray" ] && ok "$t.1: no Markdown backticks outside code blocks" || not_ok "$t.1: backticks left: $stray"
  done
  if command -v man >/dev/null; then
    MANWIDTH=100 man -l "$P/share/man/man1/topo-exec.1" 2>/dev/null | grep -q -- '--op-name' \
      && ok "man -l topo-exec.1 renders its options" || not_ok "man -l topo-exec.1 does not render"
  fi
  [ "$(readlink "$P/share/man/man1/all_reduce_perf.1")" = topo-exec.1 ] && ok "all_reduce_perf.1 -> topo-exec.1" || not_ok "no all_reduce_perf.1"
else
  skip "man pages" "no python3 to generate them"
fi
run "$P/bin/all_reduce_perf" --version
expect_grep "$TMP/out" '^all_reduce_perf \(topotune\) ' "the installed all_reduce_perf is topo-exec"
cat > "$TMP/consumer.c" <<'C'
#include <topotune/tt_topo.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    tt_xml_doc *d;
    tt_topo *t;
    if (argc < 2 || tt_xml_read_file(argv[1], NULL, &d) || tt_topo_from_xml(d, NULL, &t)) {
        fprintf(stderr, "%s\n", tt_error_message());
        return 2;
    }
    printf("%d GPUs\n", t->ntype[TT_NODE_GPU]);
    tt_topo_free(t);
    tt_xml_doc_free(d);
    return 0;
}
C
# Consumers build with pkg-config and run with LD_LIBRARY_PATH unset: under a PREFIX whose lib/ is not on the
# loader's path, the .pc's Libs carry -Wl,-rpath to it (docs/install.md)
if ! command -v pkg-config >/dev/null 2>&1 || ! command -v cc >/dev/null 2>&1; then
  skip "a C program builds and runs against the installed library" "no pkg-config or no cc here"
else
  export PKG_CONFIG_PATH="$P/lib/pkgconfig"
  flags=$(pkg-config --cflags --libs topotune 2>"$TMP/pc.err")
  [ -n "$flags" ] && ok "pkg-config topotune: $flags" || not_ok "pkg-config topotune ($(cat "$TMP/pc.err"))"
  run cc "$TMP/consumer.c" $flags -o "$TMP/consumer"
  expect_rc 0 "a C program builds against the installed headers and libtopotune.so (pkg-config --cflags --libs)"
  run env -u LD_LIBRARY_PATH "$TMP/consumer" "$FIX/hgx-h100-8gpu.xml"
  expect_rc 0 "it runs with LD_LIBRARY_PATH unset (PREFIX=$P)"
  expect_grep "$TMP/out" '^8 GPUs$' "and reads the 8-GPU example through the installed library"
  # pkg-config --static: every private library (ours and those of libxml2, libcjson, hwloc) must link;
  # hwloc's .pc asks for -ludev, which make deps provides (libudev-dev)
  sflags=$(pkg-config --static --cflags --libs topotune 2>"$TMP/pc.err")
  [ -n "$sflags" ] && ok "pkg-config --static topotune: $sflags" || not_ok "pkg-config --static topotune ($(cat "$TMP/pc.err"))"
  run cc "$TMP/consumer.c" $sflags -o "$TMP/consumer-s"
  expect_rc 0 "a C program links with pkg-config --static --cflags --libs topotune"
  # and with libtopotune.a itself (GNU ld's -l:libtopotune.a in place of -ltopotune, as docs/install.md says)
  san=""  # a SANITIZE=1 build's archive holds instrumented objects: the program links the sanitizers too
  if command -v nm >/dev/null && nm "$P/lib/libtopotune.a" 2>/dev/null | grep -q '__asan_'; then
    san="-fsanitize=address,undefined"
  fi
  run cc $san "$TMP/consumer.c" ${sflags/-ltopotune/-l:libtopotune.a} -o "$TMP/consumer-a"
  expect_rc 0 "a C program links libtopotune.a statically (pkg-config --static, -l:libtopotune.a)"
  run env -u LD_LIBRARY_PATH "$TMP/consumer-a" "$FIX/hgx-h100-8gpu.xml"
  expect_rc 0 "the statically linked program runs"; expect_grep "$TMP/out" '^8 GPUs$' "and reads the 8-GPU example"
  if ! command -v readelf >/dev/null 2>&1; then
    skip "the static consumer needs no libtopotune.so" "no readelf here"
  elif [ -x "$TMP/consumer-a" ]; then
    readelf -d "$TMP/consumer-a" 2>/dev/null | grep -q 'NEEDED.*libtopotune' \
      && not_ok "the static consumer still needs libtopotune.so" || ok "the static consumer needs no libtopotune.so"
    readelf -d "$TMP/consumer" 2>/dev/null | grep -Eq "(RUNPATH|RPATH).*\\[$P/lib\\]" \
      && ok "the shared consumer carries a RUNPATH to $P/lib (from the .pc's Libs)" || not_ok "the shared consumer has no RUNPATH to $P/lib"
  else
    skip "the static consumer needs no libtopotune.so" "no readelf here"
  fi
  [ "$(pkg-config --variable=rpath topotune)" = "-Wl,-rpath,$P/lib" ] && ok "topotune.pc: rpath=-Wl,-rpath,\${libdir} under PREFIX=tmp" \
    || not_ok "topotune.pc: rpath under PREFIX=tmp is '$(pkg-config --variable=rpath topotune)'"
  unset PKG_CONFIG_PATH
  # where the loader looks by itself (PREFIX=/usr, staged with DESTDIR) the .pc sets no rpath
  run make -C "$ROOT" -s BUILD="$BUILD" install PREFIX=/usr DESTDIR="$TMP/stage"
  expect_rc 0 "make install PREFIX=/usr DESTDIR=tmp"
  pc="$TMP/stage/usr/lib/pkgconfig/topotune.pc"
  [ -f "$pc" ] && grep -qx 'rpath=' "$pc" && grep -q '^prefix=/usr$' "$pc" \
    && ok "topotune.pc under PREFIX=/usr: prefix=/usr, empty rpath" || not_ok "topotune.pc under PREFIX=/usr: $(grep -E '^(prefix|rpath)=' "$pc" 2>&1 | tr '\n' ' ')"
fi
# the installed tools run under this PREFIX with LD_LIBRARY_PATH unset (they link libtopotune.a)
for t in topo-dump topo-tune topo-exec all_reduce_perf; do
  run env -u LD_LIBRARY_PATH "$P/bin/$t" --version
  expect_rc 0 "installed $t runs with LD_LIBRARY_PATH unset"
done
run env -u LD_LIBRARY_PATH "$P/bin/topo-dump" --input "$FIX/hgx-h100-8gpu.xml" --format json
expect_rc 0 "installed topo-dump reads a topology with LD_LIBRARY_PATH unset"
# the shared library exports the public API and nothing else (hidden internals, docs/architecture.md)
exported=$(nm -D --defined-only "$P/lib/libtopotune.so.0" | awk '{print $3}' | sort)
declared=$(sed -n 's/.*[^A-Za-z0-9_]\(tt_[a-z0-9_]*\)[[:space:]]*(.*/\1/p; s/^\(tt_[a-z0-9_]*\)[[:space:]]*(.*/\1/p' \
           "$P"/include/topotune/tt_*.h | sort -u)
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
[ -z "$extra" ] && ok "libtopotune.so exports only functions the installed headers declare" \
  || not_ok "exported but not in a public header: $(echo $extra | head -c 300)"
n=$(echo "$exported" | grep -c '^tt_')
[ "$n" -ge 150 ] && ok "libtopotune.so exports the public API ($n tt_ functions)" || not_ok "only $n tt_ functions exported"
for f in tt_topo_from_xml tt_tune_table_load tt_comm_init_threads tt_xml_read_file; do
  grep -qx "$f" <<<"$exported" && ok "exported: $f" || not_ok "not exported: $f"
done
run make -C "$ROOT" -s BUILD="$BUILD" uninstall PREFIX="$P"
[ "$(find "$P" -type f -o -type l | wc -l)" -eq 0 ] && ok "make uninstall removes every installed file and link" || not_ok "left after uninstall: $(find "$P" -type f -o -type l)"
finish
