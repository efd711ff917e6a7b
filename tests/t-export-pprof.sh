#!/usr/bin/env bash
# export --format pprof read by Debian's go tool pprof: the same top
# functions and percentages as stock perf report (within 1 point), and
# -tagfocus range=NAME keeps the samples inside that range; the executable
# is the first mapping (pprof's "File:"), with its build id; -list shows
# the workload's real source lines (built with -g: its DWARF line table),
# where it printed the ELF file's bytes as source before (issue 22).  Also
# the folded stacks: one line per stack, counts adding up to the samples.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/analysis-lib.sh"
need_phases
command -v go >/dev/null || die "go (golang-go) is not installed: make check installs it"
command -v python3 >/dev/null || skip "python3 missing"
export GOCACHE=$T/gocache GOPATH=$T/gopath HOME=$T GOTOOLCHAIN=local GOFLAGS=-mod=mod

record_phases 20
"$PERFMARK" export -i "$PH" --format pprof -o "$T/ph.pb.gz" 2>"$T/ex.err" || die "export pprof failed" -- "$T/ex.err"
[ "$(head -c 2 "$T/ph.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || die "not gzip"

# -top: flat% per function (the default sample type is cpu/nanoseconds, as perf weighs by period)
go tool pprof -top -nodecount=100 "$T/ph.pb.gz" >"$T/top.txt" 2>"$T/top.err" || die "go tool pprof -top failed" -- "$T/top.err"
perf_self "$PH" >"$T/perf.self"
[ -s "$T/perf.self" ] || die "perf report printed nothing"
python3 - "$T/top.txt" "$T/perf.self" <<'PY' || die "pprof and perf report disagree" -- "$T/top.txt" "$T/perf.self"
import re, sys
pprof = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s*\S+\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+(.+)$", line)
    if m:
        pprof[m.group(2).strip()] = pprof.get(m.group(2).strip(), 0) + float(m.group(1))
perf = {}
for line in open(sys.argv[2]):
    p, s = line.split()
    perf[s] = perf.get(s, 0) + float(p)
top_perf = sorted(perf, key=perf.get, reverse=True)[:4]
top_pprof = sorted(pprof, key=pprof.get, reverse=True)[:4]
print("perf  top:", [(s, perf[s]) for s in top_perf])
print("pprof top:", [(s, pprof[s]) for s in top_pprof])
assert set(top_perf) == set(top_pprof), "different top functions"
for s in top_perf:
    assert abs(perf[s] - pprof[s]) <= 1.0, (s, perf[s], pprof[s])
PY
ok "go tool pprof -top: same top functions as perf report, within 1 point"

# -tagfocus: the samples inside render are render_scene's; inside frame, frame's three functions
go tool pprof -top -tagfocus range=render "$T/ph.pb.gz" >"$T/render.txt" 2>&1 || die "-tagfocus failed" -- "$T/render.txt"
go tool pprof -top -tagfocus range=frame "$T/ph.pb.gz" >"$T/frame.txt" 2>&1 || die "-tagfocus frame failed" -- "$T/frame.txt"
go tool pprof -tags "$T/ph.pb.gz" >"$T/tags.txt" 2>&1 || die "-tags failed" -- "$T/tags.txt"
python3 - "$T/render.txt" "$T/frame.txt" "$T/tags.txt" <<'PY' || die "-tagfocus range= is wrong" -- "$T/render.txt" "$T/frame.txt" "$T/tags.txt"
import re, sys
def flat(p):
    out = {}
    for line in open(p):
        m = re.match(r"\s*(\S+)\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+(.+)$", line)
        if m:
            out[m.group(3).strip()] = float(m.group(2))
    return out
r, f = flat(sys.argv[1]), flat(sys.argv[2])
shown = sum(r.values())
assert max(r, key=r.get) == "render_scene" and r["render_scene"] >= 0.9 * shown, r
assert "compress_block" not in r and "update_world" not in r, r
for fn in ("frame_overhead", "update_world", "render_scene"):
    assert fn in f, (fn, f)
assert "compress_block" not in f, f
tags = open(sys.argv[3]).read()
for name in ("render", "update", "frame", "io"):
    assert re.search(r"\b%s\b" % name, tags), name
PY
ok "-tagfocus range=render keeps render's samples; -tags lists every range"

# the main binary: the first mapping, with its build id, in -raw and -traces alike
bid=$(readelf -n "$PROGS/prog-phases" | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] || die "readelf shows no build id for prog-phases"
go tool pprof -raw "$T/ph.pb.gz" >"$T/raw.txt" 2>&1 || die "-raw failed" -- "$T/raw.txt"
first=$(awk '/^Mappings/ { m = 1; next } m && /^1: / { print; exit }' "$T/raw.txt")
grep -q "/prog-phases $bid " <<<"$first" || die "the first mapping is not prog-phases with its build id: $first" -- "$T/raw.txt"
go tool pprof -traces "$T/ph.pb.gz" >"$T/traces.txt" 2>&1 || die "-traces failed" -- "$T/traces.txt"
head -2 "$T/traces.txt" | tr '\n' ' ' | grep -q "^File: prog-phases Build ID: $bid" ||
	die "-traces does not name prog-phases as the binary" -- "$T/traces.txt"
# a library with no DWARF of its own gets lines from its debug file (libc6-dbg):
# its mapping says so, and its locations (start_thread's at least) have a file:line
libc_id=$(awk '/^Mappings/ { m = 1; next }
	m && /\/libc\.so\.6 [0-9a-f]+ \[FN\]\[FL\]\[LN\]\[IN\]/ { sub(/:.*/, ""); print; exit }' "$T/raw.txt")
[ -n "$libc_id" ] || die "libc's mapping has no source lines (libc6-dbg)" -- "$T/raw.txt"
grep -Eq "^ +[0-9]+: 0x[0-9a-f]+ M=$libc_id [^ ]+ [^ ]+\.[ch]:[1-9][0-9]* " "$T/raw.txt" ||
	die "no location in libc has a source file and line" -- "$T/raw.txt"
ok "first mapping: $first"

# -list: the source file's own lines, with the samples on render_scene's line
go tool pprof -list '^render_scene$' "$T/ph.pb.gz" >"$T/list.txt" 2>&1 || die "-list failed" -- "$T/list.txt"
src=$(realpath "$PERFMARK_SRC/tests/prog-phases.c")
python3 - "$T/list.txt" "$src" <<'PY' || die "-list does not show prog-phases.c's lines" -- "$T/list.txt"
import re, sys
out, src = open(sys.argv[1], encoding="utf-8", errors="replace").read(), sys.argv[2]
lines = open(src).read().split("\n")
assert "ELF" not in out and "\ufffd" not in out, "binary bytes shown as source"
m = re.search(r"ROUTINE =+ render_scene in (\S+)", out)
assert m and m.group(1) == src, ("routine's file", m and m.group(1), src)
want = next(i + 1 for i, l in enumerate(lines) if "void render_scene(void)" in l)
hot = None
for l in out.split("\n"):
    r = re.match(r"\s*(\S+)\s+(\S+)\s+(\d+):(.*)$", l)
    if not r:
        continue
    n = int(r.group(3))
    assert r.group(4) == lines[n - 1], ("line %d differs from the source" % n, r.group(4))
    if r.group(1) != "." and n == want:
        hot = r.group(1)
assert hot, "no samples on render_scene's line %d" % want
print("render_scene: %s on %s:%d" % (hot, src, want))
PY
ok "-list render_scene: the lines of $(basename "$src"), the samples on render_scene's"

# folded stacks
"$PERFMARK" export -i "$PH" --format collapsed >"$T/folded.txt" 2>"$T/ex.err" || die "collapsed failed" -- "$T/ex.err"
total=$("$PERFMARK" report -i "$PH" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
awk -v want="$total" '{ if (!match($0, / [0-9]+$/)) bad++; n += $NF } END { exit !(n == want && !bad) }' "$T/folded.txt" ||
	die "folded counts do not add up to $total samples" -- "$T/folded.txt"
grep -Eq '^pm-frames;.*main;render_scene [0-9]+$' "$T/folded.txt" || die "no render_scene stack" -- "$T/folded.txt"
grep -Eq '^pm-io;.*io_thread;compress_block [0-9]+$' "$T/folded.txt" || die "no compress_block stack" -- "$T/folded.txt"
ok "collapsed: comm;outer;...;leaf COUNT, counts add up"
