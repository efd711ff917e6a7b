#!/usr/bin/env bash
# perfmark script: text output names work_a/work_b; --json prints one object
# per line with the keys perfmark(1) documents, in time order, whose samples agree
# with what stock perf reads from the same file.  Run on a perfmark recording
# and on a file written by perf record itself.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
command -v python3 >/dev/null || skip "python3 missing"

pm_record -g -o "$T/pm.data" -- "$PROGS/prog-ratio" 1.5 >/dev/null 2>"$T/rec.err" ||
	die "perfmark record failed" -- "$T/rec.err"
perf record -q --no-buildid -e cpu-clock -F 4000 -g -o "$T/perf.data" -- "$PROGS/prog-ratio" 1.5 >/dev/null 2>&1 ||
	die "perf record failed"

check_file() {   # label file
	local label=$1 F=$2
	"$PERFMARK" script -i "$F" >"$T/$label.txt" 2>"$T/$label.err"
	local rc=$?
	[ "$rc" -eq 0 ] || die "[$label] perfmark script exited $rc" -- "$T/$label.err"
	[ ! -s "$T/$label.err" ] || die "[$label] perfmark script wrote to stderr" -- "$T/$label.err"
	grep -qw work_a "$T/$label.txt" && grep -qw work_b "$T/$label.txt" ||
		die "[$label] perfmark script does not name work_a and work_b" -- "$T/$label.txt"
	ok "[$label] text output names work_a and work_b"

	"$PERFMARK" script -i "$F" --json >"$T/$label.json" 2>"$T/$label.jerr"
	rc=$?
	[ "$rc" -eq 0 ] || die "[$label] perfmark script --json exited $rc" -- "$T/$label.jerr"

	# what stock perf sees: sample count, leaf symbol counts, first/last time
	perf script -i "$F" -G -F time,ip,sym 2>/dev/null |
		awk '{ t = $1; sub(":", "", t); n++; if (n == 1) first = t; last = t; c[$NF]++ }
		     END { printf "%d %s %s %d %d\n", n, first, last, c["work_a"], c["work_b"] }' >"$T/$label.ref"
	[ "$(wc -w <"$T/$label.ref")" -eq 5 ] && [ "$(cut -d' ' -f1 "$T/$label.ref")" -gt 0 ] ||
		die "[$label] stock perf script cannot read $F itself: $(perf script -i "$F" -G -F time,ip,sym 2>&1 >/dev/null | head -n 3 | tr '\n' ' ')"
	python3 - "$T/$label.json" "$T/$label.ref" "$label" <<'PY' || die "[$label] --json output is wrong" -- "$T/$label.json"
import json, sys
path, ref, label = sys.argv[1:4]
n_ref, first_ref, last_ref, a_ref, b_ref = open(ref).read().split()
n_ref, a_ref, b_ref = int(n_ref), int(a_ref), int(b_ref)
errors = []
def err(msg):
    errors.append(msg)
samples = []
last_t = -1
for i, line in enumerate(open(path), 1):
    try:
        o = json.loads(line)
    except ValueError as e:
        sys.exit(f"line {i}: not JSON ({e}): {line[:200]!r}")
    if not isinstance(o, dict):
        sys.exit(f"line {i}: not an object")
    for k, ty in (("time", int), ("pid", int), ("tid", int), ("cpu", int), ("event", str)):
        if not isinstance(o.get(k), ty) or isinstance(o.get(k), bool):
            sys.exit(f"line {i}: key {k!r} missing or not {ty.__name__}: {line[:200]!r}")
    if o["time"] < last_t:
        sys.exit(f"line {i}: time {o['time']} before previous {last_t}")
    last_t = o["time"]
    if o["event"].startswith("perfmark:"):
        continue
    for k, ty in (("ip", int), ("sym", str), ("callchain", list)):
        if not isinstance(o.get(k), ty):
            sys.exit(f"line {i}: sample key {k!r} missing or not {ty.__name__}: {line[:200]!r}")
    if not all(isinstance(s, str) for s in o["callchain"]):
        sys.exit(f"line {i}: callchain holds non-strings: {line[:200]!r}")
    samples.append(o)
n = len(samples)
events = {s["event"] for s in samples}
print(f"[{label}] {n} samples (perf: {n_ref}), events {sorted(events)}")
if n != n_ref:
    err(f"{n} samples, perf script shows {n_ref}")
if events - {"cpu-clock", "cycles"}:
    err(f"unexpected sample events {events}")
if n:
    # perf prints seconds with 6 decimals
    for what, ours, theirs in (("first", samples[0]["time"], first_ref), ("last", samples[-1]["time"], last_ref)):
        if abs(ours / 1e9 - float(theirs)) > 2e-6:
            err(f"{what} sample time {ours} ns, perf script says {theirs} s")
a = sum(s["sym"] == "work_a" for s in samples)
b = sum(s["sym"] == "work_b" for s in samples)
print(f"[{label}] work_a {a} (perf {a_ref}), work_b {b} (perf {b_ref})")
if not (a and b and 2.25 <= a / b <= 3.75):
    err(f"work_a:work_b = {a}:{b}, want 3:1 +-25%")
for name, ours, theirs in (("work_a", a, a_ref), ("work_b", b, b_ref)):
    if abs(ours - theirs) > max(5, 0.02 * theirs):
        err(f"{name}: {ours} samples, perf script counts {theirs}")
ab = [s for s in samples if s["sym"] in ("work_a", "work_b")]
withmain = sum("main" in s["callchain"] for s in ab)
print(f"[{label}] {withmain}/{len(ab)} work_a/work_b callchains contain main")
if not ab or withmain < 0.9 * len(ab):
    err(f"only {withmain} of {len(ab)} work_a/work_b callchains contain \"main\"")
for e in errors:
    print("error:", e)
sys.exit(1 if errors else 0)
PY
	ok "[$label] --json"
}

check_file perfmark "$T/pm.data"
check_file perf "$T/perf.data"
echo "t-script: all checks passed"
