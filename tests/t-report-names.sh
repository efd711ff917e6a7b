#!/usr/bin/env bash
# Every frame has an identity (issue 22): on Debian's xz recorded with
# --call-graph ehframe (its liblzma and xz itself are stripped), no frame
# prints as a bare [unknown] in report (text, --sort, -g), the collapsed
# export, the flame graph or script: an unsymbolized frame is FILE+0xOFFSET,
# and liblzma's addresses are perf report's: every row perf report
# --sort dso,sym gives liblzma (0x...) is liblzma.so.5...+0x... here with
# the same self %.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
command -v python3 >/dev/null || skip "python3 missing"
XZ=$(command -v xz) || skip "xz (xz-utils) not installed"
LZMA=$(ldd "$XZ" | awk '/liblzma/ { print $3 }')
[ -n "$LZMA" ] || skip "$XZ is not linked with liblzma"

head -c 3000000 /dev/urandom | base64 >"$T/in.txt"
F=$T/xz.data
"$PERFMARK" record --call-graph ehframe -F 2000 -o "$F" -- "$XZ" -6 -T1 -c "$T/in.txt" \
	>/dev/null 2>"$T/rec.err" || die "record xz failed" -- "$T/rec.err"

# no frame is a bare [unknown]: report's rows, graph, collapsed stacks, flame graph, script
"$PERFMARK" report -i "$F" >"$T/r.txt" 2>"$T/err" || die "report failed" -- "$T/err"
"$PERFMARK" report -i "$F" --sort dso,sym >"$T/rs.txt" 2>"$T/err" || die "report --sort failed" -- "$T/err"
"$PERFMARK" report -i "$F" -g caller,0 >"$T/rg.txt" 2>"$T/err" || die "report -g failed" -- "$T/err"
"$PERFMARK" export -i "$F" --format collapsed -o "$T/x.folded" 2>"$T/err" || die "export failed" -- "$T/err"
"$PERFMARK" flamegraph -i "$F" -o "$T/x.svg" 2>"$T/err" || die "flamegraph failed" -- "$T/err"
"$PERFMARK" flamegraph -i "$F" -o "$T/x.html" 2>"$T/err" || die "flamegraph html failed" -- "$T/err"
"$PERFMARK" script -i "$F" >"$T/s.txt" 2>"$T/err" || die "script failed" -- "$T/err"
"$PERFMARK" script -i "$F" --json >"$T/s.json" 2>"$T/err" || die "script --json failed" -- "$T/err"
grep -q 'lzma_code' "$T/r.txt" || die "report has no lzma_code" -- "$T/r.txt"
for f in r.txt rs.txt rg.txt; do
	! grep -Eq ' \[unknown\]$' "$T/$f" || die "report ($f) has a bare [unknown] frame" -- "$T/$f"
done
! tr ';' '\n' <"$T/x.folded" | sed 's/ [0-9]*$//' | grep -qx '\[unknown\]' ||
	die "the collapsed stacks have a bare [unknown] frame" -- "$T/x.folded"
! grep -q '<title>\[unknown\] (' "$T/x.svg" || die "the flame graph has a bare [unknown] frame"
python3 - "$T/x.html" <<'PY' || die "the HTML flame graph has a bare [unknown] frame"
import json, re, sys
html = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="pm-data" type="application/json">(.*?)</script>', html, re.S).group(1))
names = [d["names"][d["frames"][i]] for i in range(0, len(d["frames"]), 2)]
assert len(names) > 20 and "[unknown]" not in names, names[:20]
PY
! grep -Eq '^\s+[0-9a-f]+ \[unknown\] \(' "$T/s.txt" || die "script shows a bare [unknown] frame" -- "$T/s.txt"
python3 - "$T/s.json" <<'PY' || die "script --json has a bare [unknown] frame"
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "sym" in o:
        assert o["sym"] != "[unknown]" and "[unknown]" not in o["callchain"], o
PY
ok "no bare [unknown] frame in report (rows, --sort, -g), collapsed, flame graph (SVG, HTML) or script (text, JSON)"

# an unsymbolized address as perf report names it ([.] 0x... in DSO): every such row of a
# file whose base name starts with $2 is $2...+0x... in perfmark report --sort dso,sym, with
# perf's self % (within 0.1 point); at least $3 of them
same_addrs() {
	perf report -i "$1" --stdio --no-children --sort dso,sym -g none 2>/dev/null >"$T/perf.txt"
	"$PERFMARK" report -i "$1" --sort dso,sym --no-children --json >"$T/rs.json" 2>"$T/err" ||
		die "report -i $1 --sort dso,sym --json failed" -- "$T/err"
	python3 - "$T/perf.txt" "$T/rs.json" "$2" "$3" <<'PY' ||
import json, re, sys
lib, least = sys.argv[3], int(sys.argv[4])
perf = {}
for line in open(sys.argv[1]):
    m = re.match(r"^\s+([\d.]+)%\s+(\S+)\s+\[\.\] 0x([0-9a-f]+)\s*$", line)
    if m and m.group(2).startswith(lib):
        perf[f"{m.group(2)}+0x{int(m.group(3), 16):x}"] = float(m.group(1))
mine = {r["sym"]: r["self_pct"] for r in json.load(open(sys.argv[2]))["rows"]
        if r["dso"].startswith(lib)}
assert len(perf) >= least, f"perf shows {len(perf)} unsymbolized {lib} addresses"
worst = 0
# a sample in a PLT stub: perf leaves the address bare, perfmark names the stub (NAME@plt)
plt = {n: v for n, v in mine.items() if n.endswith("@plt")}
for name, p in list(perf.items()):
    if name not in mine:
        stub = next((n for n, v in plt.items() if abs(v - p) <= 0.1), None)
        assert stub, f"perf's {name} is not a row here: {sorted(mine)[:10]}"
        del plt[stub], perf[name]
        continue
    worst = max(worst, abs(mine[name] - p))
    assert abs(mine[name] - p) <= 0.1, (name, mine[name], p)
top = max(perf, key=perf.get)
print(f"  {len(perf)} {lib} addresses as perf has them ({top} {perf[top]:.2f} %), at most {worst:.2f} points apart")
assert all(re.match(re.escape(lib) + r"[^+]*\+0x[0-9a-f]+$", n) or "@plt" in n or not n.startswith(lib)
           for n in mine), f"a {lib} frame not named {lib}...+0x..."
PY
		die "$2's addresses differ from perf report's" -- "$T/perf.txt" "$T/rs.json"
}

same_addrs "$F" liblzma.so.5 5
grep -Eq '^ +[0-9.]+% +[0-9.]+% +[0-9]+ +liblzma\.so\.5[0-9.]* +liblzma\.so\.5[0-9.]*\+0x[0-9a-f]+$' "$T/r.txt" ||
	die "report's text has no liblzma.so.5...+0x... row" -- "$T/r.txt"
grep -Eq ';liblzma\.so\.5[0-9.]*\+0x[0-9a-f]+[; ]' "$T/x.folded" || die "collapsed: no liblzma.so.5...+0x... frame"
grep -Eq '<title>liblzma\.so\.5[0-9.]*\+0x[0-9a-f]+ \(' "$T/x.svg" || die "flame graph: no liblzma.so.5...+0x... frame"
grep -Eq '^\s+[0-9a-f]+ liblzma\.so\.5[0-9.]*\+0x[0-9a-f]+ \(/' "$T/s.txt" || die "script: no liblzma.so.5...+0x... frame" -- "$T/s.txt"
ok "liblzma's addresses are liblzma.so.5...+0x... with perf report's self %, in every output"
# a stripped executable that is not position-independent: its code's virtual addresses
# (0x401000...) are not its file offsets, and perf names an address by the offset
[ -x "$PROGS/prog-spin-nopie" ] || die "no test program $PROGS/prog-spin-nopie"
"$PERFMARK" record -F 2000 -o "$T/np.data" -- "$PROGS/prog-spin-nopie" 0.5 \
	>/dev/null 2>"$T/rec.err" || die "record prog-spin-nopie failed" -- "$T/rec.err"
same_addrs "$T/np.data" prog-spin-nopie 1
ok "a non-PIE executable's addresses are its file offsets, as perf report's"
echo "t-report-names: all checks passed"
