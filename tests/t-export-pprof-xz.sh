#!/usr/bin/env bash
# pprof of a stripped library's code (issue 22): Debian's xz, recorded with
# --call-graph ehframe, spends its time in liblzma, whose own functions have
# no symbols.  Before, every such frame was one Function "[unknown]" whose
# file was the first one seen (liblzma's addresses showed as /usr/bin/xz),
# and pprof's "File:" named liblzma.so.5.4.1 (the first mapping was not the
# executable).  Now:
#   - the first mapping is /usr/bin/xz (-top's File: xz);
#   - `go tool pprof -top -addresses` names each liblzma address
#     liblzma.so.5.4.1+0xOFFSET (or an exported lzma_ symbol), never
#     [unknown] nor xz;
#   - those offsets and their flat % are perf report --sort dso,sym's own
#     rows (`[.] 0x...` in liblzma) within 0.5 point, for the top five.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/analysis-lib.sh"
need_root; need_perf; need_bpffs
[ "$PM_RECORDER" = perf ] && skip "--call-graph ehframe is perfmark's"
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
command -v go >/dev/null || die "go (golang-go) is not installed: make check installs it"
command -v xz >/dev/null || die "xz (xz-utils) is not installed: make check installs it"
command -v python3 >/dev/null || skip "python3 missing"
export GOCACHE=$T/gocache GOPATH=$T/gopath HOME=$T GOTOOLCHAIN=local GOFLAGS=-mod=mod

# a few seconds of compression (random text: no shortcut through it)
head -c 3000000 /dev/urandom | base64 >"$T/in.txt"
"$PERFMARK" record --call-graph ehframe -F 2000 -o "$T/xz.data" -- xz -6 -T1 -c "$T/in.txt" \
	>/dev/null 2>"$T/rec.err" || die "perfmark record xz failed" -- "$T/rec.err"
"$PERFMARK" export -i "$T/xz.data" --format pprof -o "$T/xz.pb.gz" 2>"$T/ex.err" ||
	die "export pprof failed" -- "$T/ex.err"
go tool pprof -raw "$T/xz.pb.gz" >"$T/raw.txt" 2>&1 || die "-raw failed" -- "$T/raw.txt"
go tool pprof -top -addresses -nodecount=200 "$T/xz.pb.gz" >"$T/top.txt" 2>&1 ||
	die "-top -addresses failed" -- "$T/top.txt"
perf report -i "$T/xz.data" --stdio --no-children --sort dso,sym -g none 2>/dev/null >"$T/perf.txt"
grep -q 'liblzma' "$T/perf.txt" || die "perf report shows no liblzma" -- "$T/perf.txt"

python3 - "$T/raw.txt" "$T/top.txt" "$T/perf.txt" <<'PY' || die "pprof does not name liblzma's addresses" -- "$T/top.txt" "$T/raw.txt" "$T/perf.txt"
import re, sys
raw, top, perf = (open(p).read() for p in sys.argv[1:4])
maps = re.findall(r"^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+)", raw.split("Mappings")[1], re.M)
assert maps[0][4] == "/usr/bin/xz", ("first mapping", maps[0])
assert re.search(r"^File: xz$", top, re.M), "-top's File: is not xz"
lz = [m for m in maps if re.search(r"/liblzma\.so\.[0-9.]+$", m[4])]
assert lz, "no liblzma mapping"
lo, hi, lib = int(lz[0][1], 16), int(lz[0][2], 16), lz[0][4].rsplit("/", 1)[1]
rows, mine = 0, {}
for line in top.split("\n"):
    m = re.match(r"\s*\S+\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+([0-9a-f]{8,16})\s+(\S+)", line)
    if not m:
        continue
    addr, name = int(m.group(2), 16), m.group(3)
    assert name != "[unknown]", line
    if lo <= addr < hi:
        rows += 1
        assert name.startswith(lib + "+0x") or name.startswith("lzma_"), ("liblzma address named", line)
        if name.startswith(lib + "+0x"):
            mine[int(name.split("+0x")[1], 16)] = mine.get(int(name.split("+0x")[1], 16), 0) + float(m.group(1))
assert rows >= 5, "only %d liblzma rows" % rows
theirs = {}
for line in perf.split("\n"):
    m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[\.\]\s+0x([0-9a-f]+)\s*$", line)
    if m and m.group(2) == lib:
        theirs[int(m.group(3), 16)] = float(m.group(1))
top5 = sorted(theirs, key=theirs.get, reverse=True)[:5]
assert top5, "perf report shows no liblzma address"
for off in top5:
    assert off in mine and abs(mine[off] - theirs[off]) <= 0.5, (hex(off), theirs[off], mine.get(off))
print("%d liblzma rows; perf's top five: %s" % (rows, ", ".join("%s+0x%x %.2f%%/%.2f%%" % (lib, o, theirs[o], mine[o]) for o in top5)))
PY
ok "xz: File: xz, liblzma addresses named $(grep -o 'liblzma[^ ]*+0x[0-9a-f]*' "$T/top.txt" | head -1) as perf report names them"
