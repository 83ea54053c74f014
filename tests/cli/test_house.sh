#!/usr/bin/env bash
# The rules of the house the compiler does not check (scripts/dev/house-check.py, docs/contributing.md):
# prototypes in headers, no weak hooks, one public header per module, includes that follow the layering.
. "$(dirname "$0")/lib.sh"
if ! command -v python3 >/dev/null; then
  skip "house rules" "python3 not installed"; finish
fi
run python3 "$ROOT/scripts/dev/house-check.py" "$ROOT"
expect_rc 0 "the tree keeps the house rules"
expect_grep "$TMP/out" '0 breach' "... and says how many files it read"
# each rule can fail: a copy of the tree with one breach of each
cp -r "$ROOT/common" "$ROOT/xml" "$ROOT/topo" "$ROOT/tune" "$ROOT/exec" "$ROOT/bin" "$ROOT/plugin" "$TMP/"
mkdir -p "$TMP/tree" && mv "$TMP/common" "$TMP/xml" "$TMP/topo" "$TMP/tune" "$TMP/exec" "$TMP/bin" "$TMP/plugin" "$TMP/tree/"
printf 'int tune_private_helper(int x);\n' >> "$TMP/tree/tune/tune_table.c"
printf 'extern int topo_exec_hook(void) __attribute__((weak));\n' >> "$TMP/tree/bin/topo-exec.c"
printf '#include "tt_tune.h"\n' >> "$TMP/tree/topo/topo_paths.c"
printf '#include "exec_internal.h"\n' >> "$TMP/tree/tune/tune_env.c"
printf '/* second header */\n' > "$TMP/tree/topo/tt_topo_extra.h"
run python3 "$ROOT/scripts/dev/house-check.py" "$TMP/tree"
expect_rc 1 "a breach fails the check"
expect_grep "$TMP/out" 'tune/tune_table.c:[0-9]+: a prototype in a .c file' "a prototype in a .c file is named with file:line"
expect_grep "$TMP/out" 'bin/topo-exec.c: a weak-symbol hook' "a weak hook is named"
expect_grep "$TMP/out" 'topo/topo_paths.c: includes tt_tune.h of module tune' "topo including tune is named"
expect_grep "$TMP/out" 'tune/tune_env.c: includes exec_internal.h of module exec' "tune including exec is named"
expect_grep "$TMP/out" 'topo/tt_topo_extra.h: a second public header' "a second public header is named"
expect_grep "$TMP/out" '6 breach' "... each counted (the weak hook is also a prototype)"
finish
