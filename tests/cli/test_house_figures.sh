#!/usr/bin/env bash
# The figures docs/architecture.md quotes (lines per module, bin/'s longest function, public headers,
# exports, getenv/setenv use) are measured from the tree by scripts/dev/house-figures.py: the document
# must say what the tree is, and a drifted figure must fail with the line named.
. "$(dirname "$0")/lib.sh"
if ! command -v python3 >/dev/null; then
  skip "house figures" "python3 not installed"; finish
fi
HF="$ROOT/scripts/dev/house-figures.py"
run env BUILD="$BUILD" python3 "$HF" --check "$ROOT/docs/architecture.md" "$ROOT"
expect_rc 0 "docs/architecture.md's house figures are the tree's ($(tail -n 3 "$TMP/out" | tr '\n' ' ' | head -c 300))"
run env BUILD="$BUILD" python3 "$HF" "$ROOT"
expect_rc 0 "the figures print"
expect_grep "$TMP/out" '^\| `bin/`: files, lines \| [0-9]+, [0-9,]+ \|$' "... with bin/'s files and lines"
expect_grep "$TMP/out" '^\| longest function in `bin/` \| `[A-Za-z_0-9]+` \(bin/[^)]+\), [0-9]+ lines \|$' "... and its longest function"
# a drifted figure fails, naming the line
sed 's/^| `bin\/`: files, lines | [0-9]*, /| `bin\/`: files, lines | 999, /' "$ROOT/docs/architecture.md" > "$TMP/arch.md"
run env BUILD="$BUILD" python3 "$HF" --check "$TMP/arch.md" "$ROOT"
expect_rc 1 "a drifted figure fails the check"
expect_grep "$TMP/out" 'house figures line [0-9]+ says \| `bin/`: files, lines \| 999' "... naming the line and what it says"
# a bigger bin/ function is measured: a copy of the tree with a 601-line function in bin/
mkdir -p "$TMP/tree" && cp -r "$ROOT/common" "$ROOT/xml" "$ROOT/topo" "$ROOT/tune" "$ROOT/exec" "$ROOT/plugin" "$ROOT/bin" "$TMP/tree/"
{ printf 'int tt_house_figures_probe(int x)\n{\n'; for i in $(seq 1 597); do printf '    x += %d;\n' "$i"; done; printf '    return x;\n}\n'; } > "$TMP/tree/bin/cli_zz_probe.c"
run env BUILD="$BUILD" python3 "$HF" "$TMP/tree"
expect_grep "$TMP/out" '^\| longest function in `bin/` \| `tt_house_figures_probe` \(bin/cli_zz_probe.c\), 601 lines \|$' "a 601-line function is found and measured"
printf 'x\n<!-- house-figures: begin -->\nold\n<!-- house-figures: end -->\n' > "$TMP/doc.md"
run env BUILD="$BUILD" python3 "$HF" --write "$TMP/doc.md" "$ROOT"
run env BUILD="$BUILD" python3 "$HF" --check "$TMP/doc.md" "$ROOT"
expect_rc 0 "--write then --check agree"
finish
