#!/usr/bin/env bash
# SECURITY.md stays true to the tree: every test file it names exists
# (tests/t-*.sh, unit tests/test-*.c, fuzz targets tests/fuzz/fuzz-*.c),
# every row of its table of input surfaces names a test that plays the
# attacker or says the row is "(being fixed)", and every bound it names by
# its constant (`NAME` = value) is a name the code defines.
. "$(dirname "$0")/lib.sh"
DOC=$PERFMARK_SRC/SECURITY.md
[ -f "$DOC" ] || die "no SECURITY.md at the repository root"

# every file named
grep -oE 'tests/[A-Za-z0-9_./-]+\.(sh|c)' "$DOC" | sort -u >"$T/named"
[ -s "$T/named" ] || die "SECURITY.md names no test"
while read -r f; do
	[ -f "$PERFMARK_SRC/$f" ] || die "SECURITY.md names $f, which does not exist"
done <"$T/named"
ok "the $(wc -l <"$T/named") test files SECURITY.md names exist"

# every surface row: a test, or being fixed
awk '/^## Input surfaces/ { on = 1; next } /^## / { on = 0 } on && /^\| / && !/^\| surface/ && !/^\|---/' "$DOC" >"$T/rows"
[ "$(wc -l <"$T/rows")" -ge 12 ] || die "SECURITY.md's table has $(wc -l <"$T/rows") rows, want the 12 surfaces" -- "$T/rows"
while IFS= read -r row; do
	last=$(awk -F' \\| ' '{ print $NF }' <<<"$row")
	surface=$(awk -F' \\| ' '{ sub(/^\| /, "", $1); print $1 }' <<<"$row")
	grep -qE 'tests/|\(being fixed\)' <<<"$last" || die "row '$surface' names no test and is not being fixed"
done <"$T/rows"
ok "each of the $(wc -l <"$T/rows") input surfaces names its hostile test or says it is being fixed"

# every constant named with its value is defined in the code (or the unit)
grep -oE '`[A-Z][A-Z0-9_]+`( / `[A-Z][A-Z0-9_]+`)? = ' "$DOC" | grep -oE '[A-Z][A-Z0-9_]+' | sort -u >"$T/consts"
[ -s "$T/consts" ] || die "SECURITY.md names no bound"
while read -r c; do
	grep -rqE "(#define|^)[[:space:]]*$c\\b|\\b$c=" "$PERFMARK_SRC"/lib "$PERFMARK_SRC"/daemon \
		"$PERFMARK_SRC"/include "$PERFMARK_SRC"/systemd 2>/dev/null ||
		die "SECURITY.md names the bound $c, which the code does not define"
done <"$T/consts"
ok "the $(wc -l <"$T/consts") bounds SECURITY.md names by constant are defined"
