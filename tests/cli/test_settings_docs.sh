#!/usr/bin/env bash
# The settings table (common/common_settings.c) and the documentation list the same TOPOTUNE_*
# variables; the library reads its environment only through the settings module (tt_setting);
# the test-only variables are read by the tests, never by the library or the tools.
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
grep -o '{"TOPOTUNE_[A-Z0-9_]*"' common/common_settings.c | tr -d '{"' | sort -u >"$TMP/table"
grep -rhoE 'TOPOTUNE_[A-Z0-9_]*[A-Z0-9]' docs/*.md | sort -u >"$TMP/docs"
if [ -s "$TMP/table" ]; then ok "settings table read ($(wc -l <"$TMP/table") rows)"; else not_ok "no rows in common/common_settings.c"; fi
missing=$(comm -23 "$TMP/table" "$TMP/docs" | tr '\n' ' ')
if [ -z "$missing" ]; then ok "every setting of the table is documented in docs/"; else not_ok "not in docs/: $missing"; fi
extra=$(comm -13 "$TMP/table" "$TMP/docs" | tr '\n' ' ')
if [ -z "$extra" ]; then ok "every TOPOTUNE_* variable of docs/ is a row of the table"; else not_ok "documented but not in the table: $extra"; fi
# code: the library and the tools use only variables of the table
grep -rhoE '"TOPOTUNE_[A-Z0-9_]*[A-Z0-9]"' common topo tune exec xml plugin bin --include=*.c --include=*.cu --include=*.h |
  tr -d '"' | sort -u >"$TMP/code"
unknown=$(comm -23 "$TMP/code" "$TMP/table" | tr '\n' ' ')
if [ -z "$unknown" ]; then ok "every TOPOTUNE_* name in the code is a row of the table"; else not_ok "in the code but not in the table: $unknown"; fi
# one reader of the environment
readers=$(grep -rlE '\bgetenv\(' common topo tune exec xml --include=*.c --include=*.cu --include=*.h | grep -v common/common_settings.c | tr '\n' ' ')
if [ -z "$readers" ]; then ok "the library reads its environment through tt_setting only"; else not_ok "getenv in: $readers"; fi
# test hooks: only in tests/
hooks=$(grep -rlE '"TOPOTUNE_(GPU_TEST_STALL_RANK|TEST_SLOWDOWN)"' common topo tune exec xml plugin bin --include=*.c --include=*.cu | grep -v common/common_settings.c | tr '\n' ' ')
if [ -z "$hooks" ]; then ok "test-only variables are read by the tests only"; else not_ok "test variables in: $hooks"; fi
finish
