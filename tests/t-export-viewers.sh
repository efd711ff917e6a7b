#!/usr/bin/env bash
# The chrome export opens in speedscope (npm's package, served from
# 127.0.0.1, in Debian's headless Chromium), and perfmark's flame graph page
# renders with no script error, the expected function names in its DOM and
# a working range selection.  Screenshots are kept in $T (PM_KEEP=1).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/analysis-lib.sh"
need_phases
command -v chromium >/dev/null || die "chromium is not installed: make check installs it"
command -v python3 >/dev/null || skip "python3 missing"
SPEEDSCOPE_DIR=${PM_NPM_CACHE:-/var/cache/perfmark-npm}/node_modules/speedscope/dist/release
if [ ! -f "$SPEEDSCOPE_DIR/index.html" ]; then
	npm install --no-audit --no-fund --prefix "${PM_NPM_CACHE:-/var/cache/perfmark-npm}" speedscope@1.25.0 \
		>"$T/npm.log" 2>&1 || die "npm install speedscope failed" -- "$T/npm.log"
fi

record_phases 10

# ---- chrome trace: valid JSON, what Perfetto and speedscope read -------------
"$PERFMARK" export -i "$PH" --format chrome -o "$T/ph.json" 2>"$T/ex.err" || die "export chrome failed" -- "$T/ex.err"
python3 - "$T/ph.json" <<'PY' || die "chrome trace is wrong" -- "$T/ph.json"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
assert sorted({e["name"] for e in x}) == ["frame", "io", "render", "update"], x[:3]
assert all(isinstance(e["ts"], float) and e["dur"] > 0 for e in x)
# ns kept as fractions: not every timestamp a whole microsecond
assert any(e["ts"] != int(e["ts"]) for e in x)
assert [e["args"]["frames"] for e in ev if e["ph"] == "C"] == list(range(10))
names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert {"pm-frames", "pm-io"} <= names, names
chunks = [e for e in ev if e["name"] == "ProfileChunk"]
fns = {n["callFrame"]["functionName"] for c in chunks for n in c["args"]["data"]["cpuProfile"]["nodes"]}
assert {"render_scene", "compress_block"} <= fns, fns
starts = {e["id"]: e["args"]["data"]["startTime"] for e in ev if e["name"] == "Profile"}
for c in chunks:
    d = c["args"]["data"]
    assert len(d["cpuProfile"]["samples"]) == len(d["timeDeltas"])
    # whole microseconds that add up to the last sample's time (within 1 µs)
    assert all(isinstance(t, int) and t >= 0 for t in d["timeDeltas"])
    assert isinstance(starts[c["id"]], int)
ranges_end = max(e["ts"] + e["dur"] for e in x)
last = max(starts[c["id"]] + sum(c["args"]["data"]["timeDeltas"]) for c in chunks)
assert abs(last - ranges_end) < 50000, (last, ranges_end)
PY
ok "chrome trace: slices, counters, thread names, sampled profiles"

mkdir -p "$T/www"
cp -r "$SPEEDSCOPE_DIR/." "$T/www/"
cp "$T/ph.json" "$T/www/ph.json"
port=$((20000 + $$ % 20000))
bg python3 -m http.server "$port" --bind 127.0.0.1 --directory "$T/www" 2>"$T/http.log"
wait_until 60 curl -fs -o /dev/null "http://127.0.0.1:$port/ph.json" || die "the http server did not start" -- "$T/http.log"
url="http://127.0.0.1:$port/index.html#profileURL=http://127.0.0.1:$port/ph.json"
chromium_run --window-size=1400,900 --virtual-time-budget=10000 --screenshot="$T/speedscope.png" "$url" \
	>/dev/null 2>"$T/ss.err" || die "chromium screenshot failed" -- "$T/ss.err"
chromium_run --virtual-time-budget=10000 --enable-logging=stderr --v=0 --dump-dom "$url" \
	>"$T/ss.dom" 2>"$T/ss.log" || die "chromium dump-dom failed" -- "$T/ss.log"
[ -s "$T/speedscope.png" ] || die "no speedscope screenshot"
grep -q 'ph.json' "$T/ss.dom" && grep -Eq 'pm-(frames|io)' "$T/ss.dom" ||
	die "speedscope did not show the profile (no thread name in its toolbar)" -- "$T/ss.dom"
grep -qi 'Something went wrong\|Unrecognized format' "$T/ss.dom" && die "speedscope could not import it" -- "$T/ss.dom"
grep -E 'Uncaught|CONSOLE.*[Ee]rror' "$T/ss.log" && die "script errors in speedscope" -- "$T/ss.log"
ok "speedscope opens the chrome export (screenshot $T/speedscope.png)"

# ---- flame graph page ---------------------------------------------------------
"$PERFMARK" flamegraph -i "$PH" -o "$T/fg.html" 2>"$T/fg.err" || die "flamegraph failed" -- "$T/fg.err"
grep -Eq '<script src=|<link ' "$T/fg.html" && die "the page loads files"
grep -Eo 'https?://[^"'"'"' ]*' "$T/fg.html" | grep -v '^http://www.w3.org/2000/svg$' &&
	die "the page names an address other than the SVG namespace"
chromium_run --window-size=1400,700 --virtual-time-budget=3000 --screenshot="$T/fg.png" "file://$T/fg.html" \
	>/dev/null 2>"$T/fg.shot.err" || die "chromium screenshot failed" -- "$T/fg.shot.err"
chromium_run --window-size=1400,700 --virtual-time-budget=3000 --enable-logging=stderr --v=0 --dump-dom "file://$T/fg.html" \
	>"$T/fg.dom" 2>"$T/fg.log" || die "chromium dump-dom failed" -- "$T/fg.log"
grep -E 'Uncaught|:CONSOLE' "$T/fg.log" && die "script errors in the flame graph page" -- "$T/fg.log"
for fn in render_scene update_world frame_overhead compress_block; do
	grep -q "<title>$fn: [0-9]* samples</title>" "$T/fg.dom" || die "$fn not drawn in the flame graph" -- "$T/fg.dom"
done
grep -q 'data-range=' "$T/fg.dom" || die "no range bars in the timeline" -- "$T/fg.dom"
ok "flame graph page renders with no script error, function names drawn"

# a range selected (#range=N, as a click does): only that range's thread and functions
n=$(python3 - "$T/fg.html" <<'PY'
import json, re, sys
html = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="pm-data" type="application/json">(.*?)</script>', html, re.S).group(1))
r = d["ranges"]
print(next(i for i in range(len(r) // 6) if d["names"][r[6 * i + 1]] == "io"))
PY
)
chromium_run --window-size=1400,700 --virtual-time-budget=3000 --enable-logging=stderr --v=0 --dump-dom "file://$T/fg.html#range=$n&search=compress_" \
	>"$T/fgr.dom" 2>"$T/fgr.log" || die "chromium dump-dom failed" -- "$T/fgr.log"
grep -E 'Uncaught|:CONSOLE' "$T/fgr.log" && die "script errors after selecting a range" -- "$T/fgr.log"
grep -q 'range io on pm-io' "$T/fgr.dom" || die "the selected range is not named" -- "$T/fgr.dom"
grep -q '<title>compress_block: [0-9]* samples</title>' "$T/fgr.dom" || die "io's flame graph lacks compress_block" -- "$T/fgr.dom"
grep -q '<title>render_scene: ' "$T/fgr.dom" && die "io's flame graph shows the other thread's render_scene"
grep -q 'class="frame hit"' "$T/fgr.dom" || die "the search marked no frame" -- "$T/fgr.dom"
grep -Eq 'matched: (9[0-9]|100)\.[0-9]{2}%' "$T/fgr.dom" || die "compress_block is not >= 90 % of io's samples" -- "$T/fgr.dom"
ok "selecting a range shows its own flame graph; search marks and sums matches"

# zoomed on update_world (#zoom=, as a click on its frame does): its stack stays, its siblings go
chromium_run --window-size=1400,700 --virtual-time-budget=3000 --enable-logging=stderr --v=0 \
	--dump-dom "file://$T/fg.html#zoom=update_world" >"$T/fgz.dom" 2>"$T/fgz.log" || die "chromium failed" -- "$T/fgz.log"
grep -E 'Uncaught|:CONSOLE' "$T/fgz.log" && die "script errors after zooming" -- "$T/fgz.log"
grep -q '<title>update_world: ' "$T/fgz.dom" && grep -q '<title>main: ' "$T/fgz.dom" ||
	die "zoomed view lacks update_world or its caller" -- "$T/fgz.dom"
grep -q '<title>render_scene: ' "$T/fgz.dom" && die "zoomed view still shows a sibling (render_scene)"
ok "zooming on a frame keeps its stack and drops its siblings"

"$PERFMARK" flamegraph -i "$PH" --range render -o "$T/fg.svg" 2>"$T/fg.err" || die "flamegraph svg failed" -- "$T/fg.err"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$T/fg.svg" || die "SVG is not well-formed XML"
grep -q '<title>render_scene (' "$T/fg.svg" || die "SVG lacks render_scene" -- "$T/fg.svg"
grep -q '<title>compress_block (' "$T/fg.svg" && die "--range render SVG shows io's function"
# perfmark writes the labels, cut to their boxes (t-hostile-names.sh: read
# without scripts); the SVG's own script recuts them when zooming
grep -q '<text x="[0-9.]*" y="[0-9]*">render_scene</text>' "$T/fg.svg" ||
	die "the SVG file itself does not label render_scene" -- "$T/fg.svg"
chromium_run --window-size=1300,500 --virtual-time-budget=2000 --enable-logging=stderr --v=0 \
	--dump-dom "file://$T/fg.svg" >"$T/svg.dom" 2>"$T/svg.log" || die "chromium on the SVG failed" -- "$T/svg.log"
grep -E 'Uncaught|:CONSOLE' "$T/svg.log" && die "script errors in the SVG" -- "$T/svg.log"
grep -q '<text[^>]*>render_scene</text>' "$T/svg.dom" || die "the SVG's script did not label the frames" -- "$T/svg.dom"
ok "SVG flame graph of one range, its script runs"
