#!/usr/bin/env bash
# The flame graph's first screen (issue 22): its height followed the deepest
# stack drawn, so one 127-frame sample among 300 shallow ones put the root
# (drawn at the bottom) 2000 px down, and the first screen at 1400x900 was
# blank.  Now both forms draw what fits a screen, the root's row included:
#   - headless Chromium's 1400x900 screenshot of the HTML page (scripts on)
#     and of the SVG (scripts on and off) has the root's band (the command
#     frame's grey, nearly the graph's width) and a frame row above it; so
#     has the page's and the script-less SVG's of a file whose only sample
#     is the 127-frame one;
#   - the deep stack stays reachable: zoomed on fn_100 (#zoom=, as a click
#     does) the page and the SVG draw fn_126; the SVG holds every frame;
#   - the SVG is XML (xmllint) and its labels are text without scripts;
#   - `-o x.png` is an error (one perfmark: line, exit 1), not HTML named .png.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/analysis-lib.sh"
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
CRAFT=$PROGS/prog-crafted
[ -x "$CRAFT" ] || skip "no $CRAFT"
need_root
command -v chromium >/dev/null || die "chromium is not installed: make check installs it"
command -v xmllint >/dev/null || die "xmllint is not installed (libxml2-utils): make check installs it"
command -v python3 >/dev/null || skip "python3 missing"

"$CRAFT" deep "$T/deep.data" 127 >/dev/null || die "prog-crafted deep failed"
"$PERFMARK" flamegraph -i "$T/deep.data" -o "$T/deep.html" 2>"$T/fg.err" || die "flamegraph failed" -- "$T/fg.err"
"$PERFMARK" flamegraph -i "$T/deep.data" -o "$T/deep.svg" 2>"$T/fg.err" || die "flamegraph -o .svg failed" -- "$T/fg.err"
"$CRAFT" deep "$T/one.data" 127 0 >/dev/null || die "prog-crafted deep (one sample) failed"
"$PERFMARK" flamegraph -i "$T/one.data" -o "$T/one.html" 2>"$T/fg.err" || die "flamegraph failed" -- "$T/fg.err"
"$PERFMARK" flamegraph -i "$T/one.data" -o "$T/one.svg" 2>"$T/fg.err" || die "flamegraph -o .svg failed" -- "$T/fg.err"

# ---- the SVG: XML, names as text, every frame in the file ---------------------------
xmllint --noout "$T/deep.svg" 2>"$T/xml.err" || die "the SVG is not XML" -- "$T/xml.err"
labels=$(xmllint --xpath '//*[local-name()="g"]/*[local-name()="text"]/text()' "$T/deep.svg" 2>/dev/null)
for fn in deep fn_0 fn_1; do
	grep -qx "$fn" <<<"$labels" || die "no label $fn in the SVG's text" -- "$T/deep.svg"
done
# the deep stack's frames are too narrow for a label: their names are in their titles
titles=$(xmllint --xpath '//*[local-name()="g"]/*[local-name()="title"]/text()' "$T/deep.svg" 2>/dev/null)
for fn in fn_40 fn_100 fn_126; do
	grep -q "^$fn (1 samples" <<<"$titles" || die "no frame $fn in the SVG" -- "$T/deep.svg"
done
ok "SVG: XML, labels as text, every frame of the deep stack in the file"

# ---- screenshots: the root's band on the first screen --------------------------------
chromium_run --window-size=1400,900 --virtual-time-budget=3000 --screenshot="$T/html.png" \
	"file://$T/deep.html" >/dev/null 2>"$T/shot.err" || die "chromium screenshot failed" -- "$T/shot.err"
chromium_run --window-size=1400,900 --virtual-time-budget=3000 --screenshot="$T/svg.png" \
	"file://$T/deep.svg" >/dev/null 2>"$T/shot.err" || die "chromium screenshot failed" -- "$T/shot.err"
timeout 120 python3 "$PERFMARK_SRC/tests/chromium-noscript.py" "file://$T/deep.svg" \
	"$T/svg-noscript.png" "$T/svg-noscript.dom" 1400 900 2>"$T/shot.log" ||
	die "chromium without scripts failed" -- "$T/shot.log"
chromium_run --window-size=1400,900 --virtual-time-budget=3000 --screenshot="$T/one-html.png" \
	"file://$T/one.html" >/dev/null 2>"$T/shot.err" || die "chromium screenshot failed" -- "$T/shot.err"
timeout 120 python3 "$PERFMARK_SRC/tests/chromium-noscript.py" "file://$T/one.svg" \
	"$T/one-svg-noscript.png" "$T/one-svg-noscript.dom" 1400 900 2>"$T/shot.log" ||
	die "chromium without scripts failed" -- "$T/shot.log"
for png in html svg svg-noscript one-html one-svg-noscript; do
	python3 - "$T/$png.png" <<'PY' || die "[$png] the root is not on the first 1400x900 screen (PM_KEEP=1 keeps $T/$png.png)"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6) and not interlace, (depth, ctype, interlace)
bpp = 3 if ctype == 2 else 4
raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
def count(row, ok):
    return sum(1 for x in range(w) if ok(row[x * bpp], row[x * bpp + 1], row[x * bpp + 2]))
grey = lambda r, g, b: abs(r - 180) <= 3 and abs(g - 180) <= 3 and abs(b - 190) <= 3
warm = lambda r, g, b: r >= 195 and 80 <= g <= 235 and b <= 90     # user frames' colours
root = [y for y in range(h) if count(rows[y], grey) >= 0.6 * w]
assert root, "no row of the root's grey across the screen (%dx%d)" % (w, h)
above = [y for y in range(max(0, root[0] - 20), root[0]) if count(rows[y], warm) >= 0.6 * w]
assert above, "no frame row above the root at y=%d" % root[0]
print("%s: root band at y=%d..%d of %d, a frame row at y=%d" % (sys.argv[1].rsplit("/", 1)[1], root[0], root[-1], h, above[-1]))
PY
done
ok "the first 1400x900 screen shows the root and the frames above it: HTML, SVG, SVG without scripts; one sample alone too"
# the document Chromium drew with scripts off holds the names as text
for fn in deep fn_0 fn_1; do
	grep -q "<text [^>]*>$fn</text>" "$T/svg-noscript.dom" ||
		die "no label $fn in the SVG as Chromium drew it without scripts" -- "$T/svg-noscript.dom"
done
ok "without scripts: the labels deep, fn_0, fn_1 are in the drawn SVG"

# ---- the deep stack stays reachable ---------------------------------------------------
chromium_run --window-size=1400,900 --virtual-time-budget=3000 --enable-logging=stderr --v=0 \
	--dump-dom "file://$T/deep.html" >"$T/top.dom" 2>"$T/top.log" || die "chromium failed" -- "$T/top.log"
grep -E 'Uncaught|:CONSOLE' "$T/top.log" && die "script errors in the page" -- "$T/top.log"
grep -q '<title>fn_126: ' "$T/top.dom" && die "the whole 128 levels drawn at once" -- "$T/top.dom"
grep -q 'class="frame more"' "$T/top.dom" || die "no frame marked as having deeper ones" -- "$T/top.dom"
chromium_run --window-size=1400,900 --virtual-time-budget=3000 --enable-logging=stderr --v=0 \
	--dump-dom "file://$T/deep.html#zoom=fn_100" >"$T/zoom.dom" 2>"$T/zoom.log" || die "chromium failed" -- "$T/zoom.log"
grep -E 'Uncaught|:CONSOLE' "$T/zoom.log" && die "script errors after zooming" -- "$T/zoom.log"
grep -q '<title>fn_126: 1 samples</title>' "$T/zoom.dom" && grep -q '<title>fn_100: 1 samples' "$T/zoom.dom" ||
	die "zoomed on fn_100, the deepest frame fn_126 is not drawn" -- "$T/zoom.dom"
grep -q 'frames below, from deep' "$T/zoom.dom" || die "no bar for the frames below the zoomed view" -- "$T/zoom.dom"
chromium_run --window-size=1400,900 --virtual-time-budget=3000 --enable-logging=stderr --v=0 \
	--dump-dom "file://$T/deep.svg#zoom=fn_100" >"$T/svgzoom.dom" 2>"$T/svgzoom.log" || die "chromium failed" -- "$T/svgzoom.log"
grep -E 'Uncaught|:CONSOLE' "$T/svgzoom.log" && die "script errors in the SVG after zooming" -- "$T/svgzoom.log"
python3 - "$T/svgzoom.dom" <<'PY' || die "zoomed on fn_100, the SVG does not show fn_126" -- "$T/svgzoom.dom"
import re, sys
dom = open(sys.argv[1]).read()
g = {m.group(2): (m.group(1), int(m.group(3))) for m in
     re.finditer(r'<g class="([^"]*)"><title>([^ <]+) \(.*?</title><rect [^>]*?y="(-?[0-9.]+)"', dom)}
h = int(re.search(r'<svg[^>]* height="(\d+)"', dom).group(1))
for fn in ("fn_100", "fn_126"):
    cls, y = g[fn]
    assert "deep" not in cls and "out" not in cls and 40 <= y < h, (fn, cls, y, h)
assert "out" in g["fn_1"][0] or g["fn_1"][1] >= 40, g["fn_1"]
print("SVG zoomed: fn_100 at y=%d, fn_126 at y=%d of %d" % (g["fn_100"][1], g["fn_126"][1], h))
PY
ok "zoomed on fn_100, the page and the SVG draw its stack down to fn_126"

# ---- -o with an extension that is neither .svg nor .html ------------------------------
"$PERFMARK" flamegraph -i "$T/deep.data" -o "$T/x.png" >"$T/png.out" 2>"$T/png.err"
rc=$?
[ "$rc" = 1 ] || die "-o x.png exited $rc, not 1" -- "$T/png.err"
[ "$(wc -l <"$T/png.err")" = 1 ] && grep -q "^perfmark: $T/x.png: unknown output type" "$T/png.err" ||
	die "-o x.png: not one perfmark: line" -- "$T/png.err"
[ -e "$T/x.png" ] && die "-o x.png wrote a file"
[ -s "$T/png.out" ] && die "-o x.png wrote to stdout"
"$PERFMARK" flamegraph -i "$T/deep.data" -o "$T/x.HTM" 2>"$T/htm.err" && grep -q '<html' "$T/x.HTM" ||
	die "-o x.HTM is not the page" -- "$T/htm.err"
ok "-o x.png: $(cat "$T/png.err")"
