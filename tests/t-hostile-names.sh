#!/usr/bin/env bash
# Issue 18: names and times a recording holds, as `perfmark report`,
# `flamegraph`, `export` and `script` write them.  tests/prog-crafted makes
# the files an attacker hands over; every check below failed before:
#   case 1   an event name holding </text><script>...: the script ran when
#            the SVG was opened in Chromium (file, -i - and zstd alike)
#   case 7   a control character or invalid UTF-8 in a name: the SVG was
#            not XML (xmllint: "PCDATA invalid Char")
#   case 6   invalid UTF-8 in report --json (and --by-marker --json)
#   case 11  terminal escapes in comm, range, counter and JIT names printed
#            raw by report, script, the collapsed export and error lines
#   case 8   late samples: timeDeltas of 18446744073709551615 in the chrome
#            export; a sample at time 0: an HTML timeline 2^64 ns long
#   case 12  a range and a counter named past the 4096-byte payload limit
#            (a real recording): dropped from report
# and the SVG shows its labels without JavaScript (xmllint, and Chromium
# with scripts disabled; the screenshots are kept with PM_KEEP=1).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/analysis-lib.sh"
need_root; need_bpffs
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
CRAFT=$PROGS/prog-crafted
[ -x "$CRAFT" ] || skip "no $CRAFT"
command -v chromium >/dev/null || die "chromium is not installed: make check installs it"
command -v xmllint >/dev/null || die "xmllint is not installed (libxml2-utils): make check installs it"
command -v python3 >/dev/null || skip "python3 missing"

XSS='</text><script>document.documentElement.setAttribute("data-pwned","1")</script><text>'
EVENT="$XSS"$'\x1b[5m'
COMM=$'\x1b]0;pwned\x07\xff'
RANGE=$'rng\x1b[31m\xff'
COUNTER=$'ctr\x01\xfe'
JIT=$'jit\x1b[2Jfn'
TEXT=$'txt\x9b\xc2\x9b\xe2\x80\xae'
"$CRAFT" names "$T/n.data" "$EVENT" "$COMM" "$RANGE" "$COUNTER" "$JIT" "$TEXT" >/dev/null ||
	die "prog-crafted names failed"
"$CRAFT" namesz "$T/nz.data" "$EVENT" "$COMM" "$RANGE" "$COUNTER" "$JIT" "$TEXT" >/dev/null ||
	die "prog-crafted namesz failed"

# ---- case 1 and 7: the SVG (file, stdin, zstd) and the HTML page -------------------
"$PERFMARK" flamegraph -i "$T/n.data" -o "$T/file.svg" 2>"$T/fg.err" || die "flamegraph failed" -- "$T/fg.err"
"$PERFMARK" flamegraph -i - -o "$T/stdin.svg" <"$T/n.data" 2>"$T/fg.err" || die "flamegraph -i - failed" -- "$T/fg.err"
"$PERFMARK" flamegraph -i "$T/nz.data" -o "$T/zstd.svg" 2>"$T/fg.err" || die "flamegraph on zstd failed" -- "$T/fg.err"
"$PERFMARK" flamegraph -i "$T/n.data" -o "$T/n.html" 2>"$T/fg.err" || die "flamegraph html failed" -- "$T/fg.err"
for f in file stdin zstd; do
	xmllint --noout "$T/$f.svg" 2>"$T/$f.xml.err" || die "[$f] the SVG is not XML" -- "$T/$f.xml.err"
	chromium_run --virtual-time-budget=2000 --dump-dom "file://$T/$f.svg" >"$T/$f.dom" 2>"$T/$f.log" ||
		die "[$f] chromium failed" -- "$T/$f.log"
	grep -q '&lt;/text&gt;&lt;script&gt;document' "$T/$f.dom" ||
		die "[$f] chromium did not render the SVG's header" -- "$T/$f.dom"
	grep -Eq '<svg[^>]*data-pwned' "$T/$f.dom" && die "[$f] the script in the event name ran" -- "$T/$f.dom"
	ok "[$f] SVG: well-formed XML, the event name's script shown as text, not run"
done
chromium_run --virtual-time-budget=3000 --dump-dom "file://$T/n.html" >"$T/html.dom" 2>"$T/html.log" ||
	die "chromium on the HTML failed" -- "$T/html.log"
grep -q 'id="app"' "$T/html.dom" && grep -q 'jit' "$T/html.dom" || die "the page did not render" -- "$T/html.dom"
grep -Eq '<html[^>]*data-pwned' "$T/html.dom" && die "the script in the event name ran in the HTML page"
ok "HTML page: rendered, the event name's script not run"

# ---- the SVG's labels without JavaScript --------------------------------------------
LONG=long_function_name_$(printf 'x%.0s' $(seq 300))
"$CRAFT" names "$T/l.data" cpu-clock prog outer counter "$LONG" text >/dev/null || die "prog-crafted failed"
"$PERFMARK" flamegraph -i "$T/l.data" -o "$T/l.svg" 2>"$T/fg.err" || die "flamegraph failed" -- "$T/fg.err"
xmllint --noout "$T/l.svg" || die "the SVG is not XML"
labels=$(xmllint --xpath '//*[local-name()="g"]/*[local-name()="text"]/text()' "$T/l.svg" 2>/dev/null)
grep -qx 'prog' <<<"$labels" || die "no label 'prog' in the SVG's text nodes: $labels"
# (1200 - 6) px at 6.5 px a character: 183 characters, the last two ".."
grep -Eqx 'long_function_name_x{162}\.\.' <<<"$labels" ||
	die "the long name's label is not cut to its box with '..': $labels"
ok "SVG labels in the file itself, cut to fit: $(tr '\n' ' ' <<<"$labels" | cut -c1-60)..."
# drawn by Chromium with scripts off (tests/chromium-noscript.py): the labels
# are in its DOM, and pixels the same SVG without its label text lacks
sed -E 's|(<text x="[0-9.]+" y="[0-9]+">)[^<]*</text></g>|\1</text></g>|' "$T/l.svg" >"$T/l-bare.svg"
cmp -s "$T/l.svg" "$T/l-bare.svg" && die "could not strip the labels for the comparison"
for f in l l-bare; do
	timeout 120 python3 "$PERFMARK_SRC/tests/chromium-noscript.py" "file://$T/$f.svg" \
		"$T/$f.png" "$T/$f.dom" 1200 200 2>"$T/shot.log" || die "chromium without scripts failed" -- "$T/shot.log"
done
grep -Eq '<text[^>]*>long_function_name_x+\.\.</text>' "$T/l.dom" && grep -q '>prog</text>' "$T/l.dom" ||
	die "with scripts disabled, the labels are not in Chromium's DOM" -- "$T/l.dom"
cmp -s "$T/l.png" "$T/l-bare.png" && die "with scripts disabled, Chromium draws no labels"
ok "SVG labels drawn by Chromium with scripts disabled (screenshot: $T/l.png)"

# ---- case 6: strict UTF-8 JSON ------------------------------------------------------
for args in "report --json" "report --by-marker --json" "script --json" "export --format chrome"; do
	# shellcheck disable=SC2086
	"$PERFMARK" $args -i "$T/n.data" >"$T/j.out" 2>"$T/j.err" || die "$args failed" -- "$T/j.err"
	python3 - "$T/j.out" "$args" <<'PY' || die "$args: not strict UTF-8 JSON" -- "$T/j.out"
import json, sys
raw = open(sys.argv[1], "rb").read().decode("utf-8", "strict")
docs = [json.loads(l) for l in raw.splitlines()] if sys.argv[2] == "script --json" else [json.loads(raw)]
def strings(o):
    if isinstance(o, str):
        yield o
    elif isinstance(o, dict):
        for k, v in o.items():
            yield k
            yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)
text = "\n".join(strings(docs))
# the invalid bytes are U+FFFD, the rest of each name kept
want = {"report --json": ["\x1b]0;pwned\x07\ufffd", "jit\x1b[2Jfn"],
        "report --by-marker --json": ["rng\x1b[31m\ufffd", "ctr\x01\ufffd"],
        "script --json": ["rng\x1b[31m\ufffd", "ctr\x01\ufffd", "txt\ufffd\x9b\u202e"],
        "export --format chrome": ["\x1b]0;pwned\x07\ufffd", "rng\x1b[31m\ufffd", "ctr\x01\ufffd"]}
for w in want[sys.argv[2]]:
    assert w in text, (w, text[:2000])
PY
	ok "$args: strict UTF-8 JSON, invalid bytes as U+FFFD"
done

# pprof: profile.proto's strings are UTF-8; the comm and range names come out with U+FFFD
"$PERFMARK" export --format pprof -i "$T/n.data" -o "$T/n.pb.gz" 2>"$T/p.err" || die "export pprof failed" -- "$T/p.err"
python3 - "$T/n.pb.gz" <<'PY' || die "pprof's string table is not strict UTF-8" -- "$T/p.err"
import gzip, sys
b = gzip.open(sys.argv[1]).read()
def varint(i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i
i, strs = 0, []
while i < len(b):
    key, i = varint(i)
    f, wt = key >> 3, key & 7
    if wt == 0:
        _, i = varint(i)
    elif wt == 1:
        i += 8
    elif wt == 5:
        i += 4
    elif wt == 2:
        n, i = varint(i)
        if f == 6:                       # Profile.string_table
            strs.append(b[i:i + n].decode("utf-8"))   # strict: raises on invalid bytes
        i += n
    else:
        sys.exit(f"wire type {wt}")
for w in ["\x1b]0;pwned\x07\ufffd", "rng\x1b[31m\ufffd"]:
    if w not in strs:
        sys.exit(f"{w!r} not in the string table")
PY
ok "pprof: every string strict UTF-8, invalid bytes as U+FFFD"

# ---- case 11: terminals --------------------------------------------------------------
"$PERFMARK" report -e nosuch -i "$T/n.data" >/dev/null 2>"$T/err.out"
for args in "report" "report --by-marker" "script" "export --format collapsed" "err"; do
	if [ "$args" != err ]; then
		# shellcheck disable=SC2086
		"$PERFMARK" $args -i "$T/n.data" >"$T/t.out" 2>"$T/t.err" || die "$args failed" -- "$T/t.err"
	else
		cp "$T/err.out" "$T/t.out"
	fi
	python3 - "$T/t.out" "$args" <<'PY' || die "$args: raw control characters on the terminal" -- "$T/t.out"
import re, sys
raw = open(sys.argv[1], "rb").read()
text = raw.decode("utf-8", "strict")          # nothing that is not UTF-8 either
bad = re.findall(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]", text)
assert not bad, bad
want = {"report": [r"\x1b]0;pwned\x07\xff", r"jit\x1b[2Jfn"],
        "report --by-marker": [r"rng\x1b[31m\xff", r"ctr\x01\xfe"],
        "script": [r"\x1b]0;pwned\x07\xff", r'"rng\x1b[31m\xff"', r"ctr\x01\xfe=42",
                   r"jit\x1b[2Jfn", r'"txt\x9b\u009b\u202e"'],
        "export --format collapsed": [r"\x1b]0\x3bpwned\x07\xff;jit\x1b[2Jfn 3"],
        "err": [r"\x1b[5m"]}[sys.argv[2]]
for w in want:
    assert w in text, (w, text[:2000])
PY
	ok "$args: escapes shown as \\xNN, none sent to the terminal"
done

# ---- case 8: late samples and time 0 -------------------------------------------------
"$PROGS/prog-late" "$T/late.data" unordered >/dev/null || die "prog-late failed"
"$PERFMARK" export --format chrome -i "$T/late.data" -o "$T/late.json" 2>"$T/x.err" ||
	die "export chrome failed" -- "$T/x.err"
python3 - "$T/late.json" <<'PY' || die "chrome export of late samples is wrong" -- "$T/late.json"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
chunks = [e for e in ev if e["name"] == "ProfileChunk"]
starts = {e["id"]: e["args"]["data"]["startTime"] for e in ev if e["name"] == "Profile"}
assert len(chunks) == 1
d = chunks[0]["args"]["data"]
# the five samples at 1.0 1.5 2.0 3.0 4.0 s, in time order
assert d["timeDeltas"] == [0, 500000, 500000, 1000000, 1000000], d["timeDeltas"]
assert starts[chunks[0]["id"]] == 1000000
PY
ok "chrome export: a late sample in time order, no wrapped delta"
"$CRAFT" time0 "$T/t0.data" >/dev/null || die "prog-crafted time0 failed"
"$PERFMARK" flamegraph -i "$T/t0.data" -o "$T/t0.html" 2>"$T/x.err" || die "flamegraph failed" -- "$T/x.err"
python3 - "$T/t0.html" <<'PY' || die "HTML flame graph of a time-0 recording is wrong" -- "$T/t0.html"
import json, re, sys
html = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="pm-data" type="application/json">(.*?)</script>', html, re.S).group(1))
assert d["start"] == 0 and abs(d["end"] - 1000000.003) < 1e-6, d["end"]
times = d["samples"][0::3] + d["ranges"][2::6] + d["ranges"][3::6]
assert all(0 <= t <= d["end"] for t in times), times
assert d["samples"][0] == 0 and d["ranges"][2] == 0
PY
ok "HTML flame graph: a sample and a range at time 0 on a 1 s timeline"

# ---- case 12: names past the payload limit, recorded for real -------------------------
[ -x "$PROGS/prog-markers" ] || skip "no $PROGS/prog-markers"
"$PERFMARK" record -F 2000 -o "$T/long.data" -- "$PROGS/prog-markers" longname 5000 300 \
	>/dev/null 2>"$T/rec.err" || die "perfmark record failed" -- "$T/rec.err"
"$PERFMARK" report --by-marker --json -i "$T/long.data" >"$T/long.json" 2>"$T/x.err" ||
	die "report --by-marker on the long names failed" -- "$T/x.err"
python3 - "$T/long.json" <<'PY' || die "the long range or counter is missing" -- "$T/long.json"
import json, sys
d = json.load(open(sys.argv[1]))
# cut at the 4096-byte payload limit (a counter's first 8 bytes are its value)
r = [r for r in d["ranges"] if r["name"] == "long" + "x" * (4096 - 4)]
assert len(r) == 1 and r[0]["count"] == 1 and r[0]["open"] == 0 and r[0]["self_samples"] > 0, \
    [(len(r["name"]), r["count"], r["open"]) for r in d["ranges"]]
c = [c for c in d["counters"] if c["name"] == "long" + "x" * (4088 - 4)]
assert len(c) == 1 and c[0]["last"] == 7, [(len(c["name"]), c["last"]) for c in d["counters"]]
PY
"$PERFMARK" script -i "$T/long.data" >"$T/long.txt" 2>&1 || die "script failed" -- "$T/long.txt"
grep -Eq 'range end "longx{4092}" duration=' "$T/long.txt" || die "script does not pair the long range"
ok "a range and a counter named past 4096 bytes: kept, paired, counted"
