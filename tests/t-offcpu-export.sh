#!/usr/bin/env bash
# Off-CPU time in the exports: the chrome trace has each thread's blocked
# and runnable intervals as slices, and its sampled profile an "(idle)"
# sample where a thread left the CPU, so that a viewer which draws a sample
# until the next one draws no stack while it slept.  Checked twice: by
# speedscope's rule (1.25.0, import/chrome.ts: a node stays drawn until a
# sample of another node; "(root)" and "(idle)" are never drawn) in Python,
# and by speedscope itself, its import hooked to say where it draws a
# stack: none over the sleep ranges beyond their time on CPU.  pprof gets
# an off_cpu sample type in nanoseconds (go tool pprof reads it); the
# collapsed stacks and the flame graph of -e offcpu-time weigh the time off
# CPU.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/analysis-lib.sh"
need_root
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
[ -x "$PROGS/prog-offcpu" ] || skip "no test program $PROGS/prog-offcpu"
command -v python3 >/dev/null || skip "python3 missing"

"$PERFMARK" record --off-cpu --call-graph ehframe -o "$T/w.data" -- "$PROGS/prog-offcpu" 5 \
	>"$T/w.out" 2>"$T/w.err" || die "record --off-cpu failed" -- "$T/w.err"
main_tid=$(awk '/^tid/ { print $2 }' "$T/w.out")

# ---- chrome ------------------------------------------------------------------------
"$PERFMARK" export -i "$T/w.data" --format chrome -o "$T/w.json" 2>"$T/ex.err" ||
	die "export chrome failed" -- "$T/ex.err"
python3 - "$T/w.json" "$main_tid" <<'PY' || die "the chrome trace draws stacks over sleeps" -- "$T/ex.err"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
tid = int(sys.argv[2])
ranges = [e for e in ev if e["ph"] == "X" and e["cat"] == "range" and e["tid"] == tid]
sleeps = [(e["ts"], e["ts"] + e["dur"]) for e in ranges if e["name"] == "sleep"]
assert len(sleeps) == 5, sleeps
# the thread's states: slices within its ranges, blocked then runnable
off = [e for e in ev if e["ph"] == "X" and e["cat"] == "offcpu" and e["tid"] == tid]
assert any(e["name"] == "blocked (S)" and e["args"]["woken by"] == "an interrupt" and
           any(a <= e["ts"] and e["ts"] + e["dur"] <= b + 1 for a, b in sleeps) for e in off), off[:3]
for e in off:
    inside = [r for r in ranges if r["ts"] <= e["ts"] + 0.001 and e["ts"] + e["dur"] <= r["ts"] + r["dur"] + 0.001]
    outside = [r for r in ranges if r["ts"] + r["dur"] <= e["ts"] or e["ts"] + e["dur"] <= r["ts"]]
    assert len(inside) + len(outside) == len(ranges), ("an off-CPU slice straddles a range", e)
# the profile as speedscope draws it
prof = [e for e in ev if e["name"] == "ProfileChunk" and e["tid"] == tid][0]["args"]["data"]
start = [e for e in ev if e["name"] == "Profile" and e["tid"] == tid][0]["args"]["data"]["startTime"]
names = {n["id"]: n["callFrame"]["functionName"] for n in prof["cpuProfile"]["nodes"]}
idle = {i for i, n in names.items() if n in ("(idle)", "(root)")}
t, times = start, []
for d in prof["timeDeltas"]:
    t += d
    times.append(t)
samples = prof["cpuProfile"]["samples"]
assert any(s in idle for s in samples), "no (idle) sample"
drawn = []      # (from, to) during which a stack is drawn
i = 0
while i < len(samples):
    j = i + 1
    while j < len(samples) and samples[j] == samples[i]:
        j += 1
    if samples[i] not in idle:
        drawn.append((times[i], times[j] if j < len(times) else times[-1]))
    i = j
for a, b in sleeps:
    over = sum(max(0, min(b, y) - max(a, x)) for x, y in drawn)
    print(f"sleep range of {(b - a) / 1000:.2f} ms: a stack drawn over {over / 1000:.3f} ms of it")
    assert over <= max(0.10 * (b - a), 1000), ("a stack drawn while the thread slept", a, b, over)
PY
ok "chrome trace: off-CPU slices inside their ranges, no stack drawn over a sleep"

# ---- speedscope's own reading: where it draws a stack ---------------------------------
# speedscope 1.25.0 (the version make check installs) turns each thread's
# cpuProfile into its Profile in one function; a copy of its bundle, served
# here, hooks that function to write, per profile, the intervals over which
# it draws a stack (its own forEachCall, what the time-ordered flame chart
# draws) into the page, which Chromium dumps.  Then the same for the trace
# with its (idle) samples taken out: there speedscope must draw stacks over
# the sleeps, or this check could not fail.
SPEEDSCOPE_DIR=${PM_NPM_CACHE:-/var/cache/perfmark-npm}/node_modules/speedscope/dist/release
command -v chromium >/dev/null || die "chromium is not installed: make check installs it"
if [ ! -f "$SPEEDSCOPE_DIR/index.html" ]; then
	npm install --no-audit --no-fund --prefix "${PM_NPM_CACHE:-/var/cache/perfmark-npm}" speedscope@1.25.0 \
		>"$T/npm.log" 2>&1 || die "npm install speedscope failed" -- "$T/npm.log"
fi
mkdir -p "$T/www"
cp -r "$SPEEDSCOPE_DIR/." "$T/www/"
python3 - "$T/www" <<'PY' || die "speedscope's bundle is not 1.25.0's: cannot hook its cpuProfile import"
import glob, sys
js = glob.glob(sys.argv[1] + "/speedscope-*.js")
src = open(js[0]).read() if len(js) == 1 else ""
head = "function DA(t){let e=new Ie(t.endTime-t.startTime)"
if src.count(head) != 1 or ".forEachCall(" not in src:
    sys.exit(1)
hook = ("function DA(t){let p=pmDA(t);setTimeout(()=>pmDrawn(p,t.startTime));return p}"
        "function pmDrawn(p,s0){let d=0,a=0,out=[];"
        "p.forEachCall((n,v)=>{if(d++===0)a=v},(n,v)=>{if(--d===0)out.push([s0+a,s0+v])});"
        "let e=document.createElement('script');e.type='application/json';e.className='pm-drawn';"
        "e.textContent=JSON.stringify({name:p.getName(),drawn:out});document.head.appendChild(e)}"
        "function pmDA(t){let e=new Ie(t.endTime-t.startTime)")
open(js[0], "w").write(src.replace(head, hook))
PY
python3 - "$T/w.json" "$T/www/w.json" "$T/www/noidle.json" <<'PY' || die "cannot write the traces for speedscope"
import json, shutil, sys
shutil.copy(sys.argv[1], sys.argv[2])
doc = json.load(open(sys.argv[1]))
for e in doc["traceEvents"]:
    if e.get("name") != "ProfileChunk":
        continue
    d = e["args"]["data"]
    idle = {n["id"] for n in d["cpuProfile"]["nodes"] if n["callFrame"]["functionName"] == "(idle)"}
    s = d["cpuProfile"]["samples"]
    for i in range(1, len(s)):
        if s[i] in idle:
            s[i] = s[i - 1]
json.dump(doc, open(sys.argv[3], "w"))
PY
port=$((20000 + ($$ + 7) % 20000))
bg python3 -m http.server "$port" --bind 127.0.0.1 --directory "$T/www" 2>"$T/http.log"
for i in $(seq 100); do
	curl -fs "http://127.0.0.1:$port/w.json" >/dev/null 2>&1 && break
	sleep 0.1   # polled: the loop has a deadline
done
for f in w noidle; do
	url="http://127.0.0.1:$port/index.html#profileURL=http://127.0.0.1:$port/$f.json"
	chromium_run --virtual-time-budget=10000 --enable-logging=stderr --v=0 --dump-dom "$url" \
		>"$T/ss-$f.dom" 2>"$T/ss-$f.log" || die "chromium dump-dom failed" -- "$T/ss-$f.log"
	grep -qi 'Something went wrong\|Unrecognized format' "$T/ss-$f.dom" && die "speedscope could not import $f.json"
	grep -E 'Uncaught|CONSOLE.*[Ee]rror' "$T/ss-$f.log" && die "script errors in speedscope" -- "$T/ss-$f.log"
done
grep -q 'pm-offcpu' "$T/ss-w.dom" || die "speedscope did not show the profile" -- "$T/ss-w.dom"
python3 - "$T/w.json" "$main_tid" "$T/ss-w.dom" "$T/ss-noidle.dom" <<'PY' || die "speedscope draws a stack over a sleep"
import json, re, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
tid = int(sys.argv[2])
sleeps = [(e["ts"], e["ts"] + e["dur"]) for e in ev
          if e["ph"] == "X" and e["cat"] == "range" and e["tid"] == tid and e["name"] == "sleep"]
def drawn(dom):
    got = [json.loads(m) for m in re.findall(
        r'<script type="application/json" class="pm-drawn">(.*?)</script>', open(dom).read(), re.S)]
    main = [g for g in got if g["name"].endswith(" - pm-offcpu")]
    assert len(main) == 1, ("speedscope's profiles", [g["name"] for g in got])
    assert main[0]["drawn"], main[0]
    return [max(sum(max(0, min(b, y) - max(a, x)) for x, y in main[0]["drawn"]), 0) for a, b in sleeps]
ok, bad = drawn(sys.argv[3]), drawn(sys.argv[4])
for (a, b), o, n in zip(sleeps, ok, bad):
    print(f"speedscope, sleep range of {(b - a) / 1000:.2f} ms: a stack drawn over {o / 1000:.3f} ms"
          f" (without the (idle) samples: {n / 1000:.3f} ms)")
assert len(sleeps) == 5 and all(o <= max(0.10 * (b - a), 1000) for (a, b), o in zip(sleeps, ok)), ok
assert sum(bad) >= 0.5 * sum(b - a for a, b in sleeps), ("the check cannot fail", bad)
PY
ok "speedscope (its own import, hooked) draws no stack over the sleep ranges; without (idle) it would"

# ---- pprof: an off_cpu sample type in nanoseconds --------------------------------------
"$PERFMARK" export -i "$T/w.data" --format pprof -o "$T/w.pb.gz" 2>"$T/pp.err" || die "export pprof failed" -- "$T/pp.err"
if command -v go >/dev/null; then
	go tool pprof -raw "$T/w.pb.gz" >"$T/pp.raw" 2>"$T/pp.err" || die "go tool pprof cannot read it" -- "$T/pp.err"
	grep -Eq '^samples/count cpu/nanoseconds.* off_cpu/nanoseconds' "$T/pp.raw" || die "no off_cpu/nanoseconds sample type" -- "$T/pp.raw"
	go tool pprof -sample_index=off_cpu -top -nodecount=40 "$T/w.pb.gz" >"$T/pp.top" 2>"$T/pp.err" ||
		die "go tool pprof -sample_index=off_cpu failed" -- "$T/pp.err"
	grep -q 'anon_pipe_read\|pipe_read' "$T/pp.top" && grep -q 'hrtimer_nanosleep' "$T/pp.top" ||
		die "pprof's off_cpu has no pipe_read or hrtimer_nanosleep" -- "$T/pp.top"
	ok "pprof: off_cpu in nanoseconds, read by go tool pprof"
else
	echo "note: go missing (make check installs golang-go): pprof not read back"
fi

# ---- collapsed and flame graph of -e offcpu-time ----------------------------------------
"$PERFMARK" export -i "$T/w.data" -e offcpu-time --format collapsed -o "$T/w.folded" 2>"$T/c.err" ||
	die "export -e offcpu-time collapsed failed" -- "$T/c.err"
python3 - "$T/w.folded" "$T/w.out" <<'PY' || die "the off-CPU folded stacks are wrong" -- "$T/w.folded" "$T/w.out"
import re, sys
w = {}
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    w[stack] = w.get(stack, 0) + int(n)
pipe = sum(n for s, n in w.items() if "pipe_reader" in s and "pipe_read" in s.split(";")[-1])
# the truth: the pipe ranges' blocked time as the program measured it (about
# 20 ms a round idle, less when a loaded machine runs the writer late)
blocked = int(re.search(r"^range pipe .* blocked_ns (\d+)", open(sys.argv[2]).read(), re.M).group(1))
print(f"pipe_reader blocked in pipe_read: {pipe / 1e6:.1f} ms (the weights are ns), "
      f"the program measured {blocked / 1e6:.1f} ms")
assert blocked > 0 and pipe >= 0.5 * blocked, (pipe, blocked)
PY
"$PERFMARK" flamegraph -i "$T/w.data" -e offcpu-time -o "$T/off.svg" 2>"$T/fg.err" ||
	die "flamegraph -e offcpu-time failed" -- "$T/fg.err"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$T/off.svg" || die "SVG is not well-formed XML"
grep -q '<title>pipe_reader (' "$T/off.svg" && grep -q '<title>lock_waiter (' "$T/off.svg" ||
	die "the off-CPU flame graph lacks pipe_reader or lock_waiter" -- "$T/fg.err"
ok "export -e offcpu-time collapsed, flamegraph -e offcpu-time: weighed by time off CPU"

# ---- the flame graph page: thread states under the ranges --------------------------------
"$PERFMARK" flamegraph -i "$T/w.data" -o "$T/fg.html" 2>"$T/fg.err" || die "flamegraph failed" -- "$T/fg.err"
python3 - "$T/fg.html" "$main_tid" <<'PY' || die "the page's off-CPU states are wrong" -- "$T/fg.err"
import json, re, sys
html = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="pm-data" type="application/json">(.*?)</script>', html, re.S).group(1))
th = next(i for i, t in enumerate(d["threads"]) if t["tid"] == int(sys.argv[2]))
st = [d["states"][i:i + 5] for i in range(0, len(d["states"]), 5)]
r = [d["ranges"][i:i + 6] for i in range(0, len(d["ranges"]), 6)]
sleeps = [(x[2], x[3]) for x in r if x[0] == th and d["names"][x[1]] == "sleep"]
for a, b in sleeps:   # nanosleep 10 ms: blocked that long, off the CPU nearly all the range
    blocked = sum(min(b, s[2]) - max(a, s[1]) for s in st if s[0] == th and s[1] < b and s[2] > a)
    off = sum(min(b, s[3]) - max(a, s[1]) for s in st if s[0] == th and s[1] < b and s[3] > a)
    assert blocked >= 9500 and off >= 0.8 * (b - a) - 100, ("sleep range not drawn off", a, b, blocked, off)
assert any(chr(s[4]) == "R" and s[3] > s[2] for s in st if s[0] == th), "no runnable state (crowd)"
assert d["weights"] is None
PY
if command -v chromium >/dev/null; then
	chromium_run --window-size=1400,700 --virtual-time-budget=3000 --enable-logging=stderr --v=0 \
		--dump-dom "file://$T/fg.html" >"$T/fg.dom" 2>"$T/fg.log" || die "chromium failed" -- "$T/fg.log"
	grep -E 'Uncaught|:CONSOLE' "$T/fg.log" && die "script errors in the flame graph page" -- "$T/fg.log"
	grep -q 'data-state="blocked"><title>blocked (S): ' "$T/fg.dom" && grep -q 'data-state="runnable"' "$T/fg.dom" ||
		die "no blocked or runnable state drawn in the timeline" -- "$T/fg.dom"
	"$PERFMARK" flamegraph -i "$T/w.data" -e offcpu-time -o "$T/off.html" 2>"$T/fg.err" ||
		die "flamegraph -e offcpu-time (HTML) failed" -- "$T/fg.err"
	chromium_run --window-size=1400,700 --virtual-time-budget=3000 --enable-logging=stderr --v=0 \
		--dump-dom "file://$T/off.html" >"$T/off.dom" 2>"$T/off.log" || die "chromium failed" -- "$T/off.log"
	grep -E 'Uncaught|:CONSOLE' "$T/off.log" && die "script errors in the off-CPU page" -- "$T/off.log"
	grep -Eq '<title>pipe_reader: [0-9.]+ (ms|s|µs) off CPU</title>' "$T/off.dom" ||
		die "the off-CPU page does not weigh by time" -- "$T/off.dom"
	ok "flame graph page: each thread's running, blocked and runnable states under its ranges; -e offcpu-time by time"
fi
