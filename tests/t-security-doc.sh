#!/usr/bin/env bash
# SECURITY.md stays true to the tree: every test file it names exists
# (tests/t-*.sh, unit tests/test-*.c, fuzz targets tests/fuzz/fuzz-*.c),
# every row of its table of input surfaces (one line, four cells) names a
# test that plays the attacker, the surfaces of issue 18 are all there, and
# every bound it names by its constant (`NAME` = value) is a name the code
# defines.
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

# the table: one row per line, four cells, the last naming a test file
awk '/^## Input surfaces/ { on = 1; next } /^## / { on = 0 } on && /^\| / && !/^\| surface/ && !/^\|---/' "$DOC" >"$T/rows"
python3 - "$T/rows" <<'PY' || die "SECURITY.md's table of input surfaces is not whole" -- "$T/rows"
import re, sys
rows = open(sys.argv[1]).read().splitlines()
# the surfaces that must stay listed (issue 18): a word of each row's first cell
need = ["control socket", "client descriptors", "recordings read by", "names they hold",
        "paths they name", "fast-lane rings", "libperfmark", "CFI", "/proc", "fd store",
        "ring files", "session store", "perf-PID.map", "tracepoint filters",
        "tracepoint formats", "event specs", "exports"]
bad = 0
firsts = []
for r in rows:
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", r)[1:-1]]   # \| inside a cell is text
    if len(cells) != 4:
        print(f"not 4 cells ({len(cells)}): {r[:80]}"); bad = 1; continue
    firsts.append(cells[0])
    if not re.search(r"tests/[A-Za-z0-9_./-]+\.(sh|c)", cells[3]):
        print(f"no hostile test named: {cells[0]}"); bad = 1
for n in need:
    if not any(n in f for f in firsts):
        print(f"surface missing: {n}"); bad = 1
print(f"{len(rows)} rows")
sys.exit(bad)
PY
ok "each of the $(wc -l <"$T/rows") input surfaces names the test that plays its attacker"

# every constant named with its value is defined in the code (or the unit)
grep -oE '`[A-Z][A-Z0-9_]+`( / `[A-Z][A-Z0-9_]+`)? = ' "$DOC" | grep -oE '[A-Z][A-Z0-9_]+' | sort -u >"$T/consts"
[ -s "$T/consts" ] || die "SECURITY.md names no bound"
while read -r c; do
	grep -rqE "(#define|^)[[:space:]]*$c\\b|\\b$c=" "$PERFMARK_SRC"/lib "$PERFMARK_SRC"/daemon \
		"$PERFMARK_SRC"/include "$PERFMARK_SRC"/bpf "$PERFMARK_SRC"/systemd 2>/dev/null ||
		die "SECURITY.md names the bound $c, which the code does not define"
done <"$T/consts"
ok "the $(wc -l <"$T/consts") bounds SECURITY.md names by constant are defined"
