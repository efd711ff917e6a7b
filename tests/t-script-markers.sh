#!/usr/bin/env bash
# perfmark script on markers: text decoding (printf, ranges with durations,
# counters, application types as hex), --json fields, --type filtering, pipe
# input, and the one-line errors for files that are not readable perf data.
. "$(dirname "$0")/lib.sh"
need_root; need_perfmark; need_bpffs
command -v python3 >/dev/null || skip "python3 missing"
DEMO=$PERFMARK_BUILD/examples/markers-demo
[ -x "$DEMO" ] || skip "no $DEMO"

"$PERFMARK" record -g -o "$T/m.data" -- "$DEMO" 0.5 >/dev/null 2>"$T/rec.err" ||
	die "perfmark record failed" -- "$T/rec.err"

# ---- text --------------------------------------------------------------------
"$PERFMARK" script -i "$T/m.data" >"$T/m.txt" 2>"$T/m.err" || die "script failed" -- "$T/m.err"
[ ! -s "$T/m.err" ] || die "script wrote to stderr" -- "$T/m.err"
grep -q 'perfmark:printf: "markers-demo start' "$T/m.txt" || die "no printf marker" -- "$T/m.txt"
grep -Eq 'perfmark:uevent type=2 size=[0-9]+: range end "parse" duration=[0-9.]+s \([0-9]+ ns\)' "$T/m.txt" ||
	die "no range end with a duration" -- "$T/m.txt"
grep -Eq 'perfmark:uevent type=3 size=[0-9]+: counter rounds=[0-9]+' "$T/m.txt" ||
	die "no counter" -- "$T/m.txt"
grep -Eq 'perfmark:uevent type=65537 size=16: [0-9a-f]{32}$' "$T/m.txt" ||
	die "application type not shown as hex" -- "$T/m.txt"
grep -Eq 'cpu-clock|cycles' "$T/m.txt" || die "no samples in the text output" -- "$T/m.txt"
ok "text output decodes every marker kind"

# ---- pipe input gives the same ------------------------------------------------
"$PERFMARK" script -i - <"$T/m.data" >"$T/m.pipe.txt" 2>"$T/m.pipe.err" ||
	die "script -i - failed" -- "$T/m.pipe.err"
# (kernel lines aside: BPF programs come and go in kallsyms between the runs)
cmp -s <(grep -v '[[:space:]]ffffffff' "$T/m.txt") <(grep -v '[[:space:]]ffffffff' "$T/m.pipe.txt") ||
	die "script -i - differs from script -i FILE"
ok "-i - reads stdin"

# ---- json ----------------------------------------------------------------------
"$PERFMARK" script -i "$T/m.data" --json >"$T/m.json" 2>"$T/m.jerr" || die "--json failed" -- "$T/m.jerr"
"$PERFMARK" script -i "$T/m.data" --json --type 3 >"$T/m3.json" 2>>"$T/m.jerr" || die "--type 3 failed" -- "$T/m.jerr"
"$PERFMARK" script -i "$T/m.data" --json --type 0 >"$T/m0.json" 2>>"$T/m.jerr" || die "--type 0 failed" -- "$T/m.jerr"
python3 - "$T/m.json" "$T/m3.json" "$T/m0.json" <<'PY' || die "--json output is wrong" -- "$T/m.json"
import json, sys
def load(p):
    out = []
    for i, line in enumerate(open(p, encoding="utf-8"), 1):
        o = json.loads(line)
        for k in ("time", "pid", "tid", "cpu"):
            assert isinstance(o[k], int) and not isinstance(o[k], bool), (p, i, k)
        assert isinstance(o["event"], str)
        out.append(o)
    return out
allr, t3, t0 = (load(p) for p in sys.argv[1:4])
times = [o["time"] for o in allr]
assert times == sorted(times), "not in time order"
marks = [o for o in allr if o["event"].startswith("perfmark:")]
samples = [o for o in allr if not o["event"].startswith("perfmark:")]
assert samples, "no samples"
for o in marks:
    for k, ty in (("type", int), ("size", int), ("truncated", bool), ("fault", bool)):
        assert isinstance(o[k], ty), (k, o)
    assert ("text" in o) != ("data" in o), o
    if o["event"] == "perfmark:printf":
        assert o["type"] == 0 and o["size"] == len(o["text"].encode()) + 1, o
printfs = [o for o in marks if o["event"] == "perfmark:printf"]
assert any(o["text"].startswith("markers-demo start") for o in printfs), "start string"
# ranges: every end matches the latest begin of its name on its thread
open_ = {}
ends = 0
for o in marks:
    if o["type"] == 1:
        open_.setdefault((o["tid"], o["name"]), []).append(o["time"])
    elif o["type"] == 2:
        b = open_[(o["tid"], o["name"])].pop()
        assert o["duration_ns"] == o["time"] - b, o
        ends += 1
assert ends > 0, "no range ends"
counters = [o for o in marks if o["type"] == 3]
assert counters and [o["value"] for o in counters] == list(range(len(counters))), "counter values"
assert all(o["name"] == "rounds" for o in counters)
# --type keeps exactly the markers of that type
assert t3 == counters, "--type 3 differs from the counters of the full output"
assert t0 and all(o["type"] == 0 for o in t0), "--type 0"
assert len(t0) == sum(1 for o in marks if o["type"] == 0)
print(f"{len(samples)} samples, {len(marks)} markers, {ends} ranges, {len(counters)} counters")
PY
ok "--json fields, ranges, counters, --type"

# ---- errors ------------------------------------------------------------------------
check_err() {   # label file expected-substring
	local label=$1 f=$2 want=$3 rc
	"$PERFMARK" script -i "$f" >"$T/e.out" 2>"$T/e.err"
	rc=$?
	[ "$rc" -eq 1 ] || die "[$label] exit status $rc, want 1" -- "$T/e.err"
	[ "$(wc -l <"$T/e.err")" -eq 1 ] || die "[$label] want one line on stderr" -- "$T/e.err"
	grep -q "^perfmark: $f: .*$want" "$T/e.err" || die "[$label] message" -- "$T/e.err"
	ok "[$label] $(cat "$T/e.err")"
}
: >"$T/empty.data"
check_err empty "$T/empty.data" "empty"
check_err missing "$T/missing.data" "No such file"
head -c 4096 "$PERFMARK" >"$T/elf.data"
check_err not-perf "$T/elf.data" "not a perf.data file"
head -c 3000 "$T/m.data" >"$T/cut.data"
"$PERFMARK" script -i "$T/cut.data" >/dev/null 2>"$T/cut.err"
[ $? -eq 1 ] && grep -q "^perfmark: $T/cut.data: " "$T/cut.err" || die "truncated file" -- "$T/cut.err"
ok "[truncated] $(cat "$T/cut.err")"
"$PERFMARK" script --type x >/dev/null 2>"$T/e.err" && die "--type x accepted"
grep -q "^perfmark: " "$T/e.err" || die "--type x message" -- "$T/e.err"
echo "t-script-markers: all checks passed"
