#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The perfmark demo, run by `make demo` after `make install`:
#   1. builds examples/markers-demo.c against the installed library, the way
#      an application would:  cc app.c $(pkg-config --cflags --libs perfmark)
#   2. records it:  perfmark record -g -o $DEMO_OUT -- markers-demo
#   3. shows the recording with stock perf (samples, perfmark:printf strings)
#      and with `perfmark script` (every marker decoded, around round 10).
# Exits non-zero when the recording lacks samples or markers.
#
# Environment: PREFIX (default /usr/local), DEMO_OUT (default
# /tmp/perfmark-demo.data, kept for you to explore), CC (default cc).
set -euo pipefail

PREFIX=${PREFIX:-/usr/local}
OUT=${DEMO_OUT:-/tmp/perfmark-demo.data}
CC=${CC:-cc}
here=$(cd "$(dirname "$0")" && pwd)
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
export PATH="$PREFIX/bin:$PREFIX/sbin:$PATH"
export PKG_CONFIG_PATH="$PREFIX/lib/$multiarch/pkgconfig:$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

die() { echo "demo: $*" >&2; exit 1; }
section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

work=$(mktemp -d /tmp/perfmark-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT

command -v perfmark >/dev/null || die "perfmark not found in $PREFIX/bin: run 'make install' first"
command -v perf >/dev/null || die "perf not found: apt-get install linux-perf"
pkg-config --exists perfmark || die "pkg-config cannot find perfmark.pc under $PREFIX"

section "build markers-demo against the installed libperfmark"
libdir=$(pkg-config --variable=libdir perfmark)
set -x
# shellcheck disable=SC2046  # pkg-config output is meant to be split
"$CC" -O2 -g -fno-omit-frame-pointer "$here/markers-demo.c" -o "$work/markers-demo" \
	$(pkg-config --cflags --libs perfmark) -Wl,-rpath,"$libdir"
{ set +x; } 2>/dev/null

section "record: perfmark record -g -o $OUT -- markers-demo"
perfmark record -g -o "$OUT" -- "$work/markers-demo"
ls -l "$OUT"

section "perf evlist"
perf evlist -i "$OUT"

perf script -i "$OUT" -G >"$work/perf-script.txt" 2>"$work/perf-script.err" || true
# one line per event: drop perf's hex dump of BPF output, keep its string
awk '/^[ \t]+BPF output:/ || /^[ \t]+[0-9a-f][0-9a-f][0-9a-f][0-9a-f]: / || /^$/ { next }
     { print }' "$work/perf-script.txt" >"$work/timeline.txt"
section "perf script: samples and markers on one timeline (around round 10)"
grep -m 1 -B 12 -A 12 'round 10:' "$work/timeline.txt" || head -n 25 "$work/timeline.txt"
section "perf script: the perf_printf strings"
grep 'BPF string:' "$work/timeline.txt" | head -n 12

section "perf report --sort sym (top 12)"
perf report -i "$OUT" --stdio --sort sym --no-children -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 12 || true

perfmark script -i "$OUT" >"$work/perfmark-script.txt"
section "perfmark script: every marker decoded, between the samples (round 10)"
grep -m 1 -B 12 -A 8 'round 10:' "$work/perfmark-script.txt" || head -n 25 "$work/perfmark-script.txt"
section "perfmark script --type 3 (counters, first 5)"
perfmark script -i "$OUT" --type 3 | head -n 5 || true
section "perfmark script --json, markers per type"
perfmark script -i "$OUT" --json | grep -o '"type":[0-9]*' | sort | uniq -c || true

# --- self-check: samples of the two work functions and markers of each kind
samples=$(grep -c -E 'parse_input|render_frame' "$work/perf-script.txt" || true)
printfs=$(grep -c 'perfmark:printf' "$work/perf-script.txt" || true)
uevents=$(grep -c 'perfmark:uevent' "$work/perf-script.txt" || true)
section "summary"
echo "samples in parse_input/render_frame: $samples"
echo "perfmark:printf markers:             $printfs"
echo "perfmark:uevent markers:             $uevents"
echo "recording kept in $OUT"
[ "$samples" -gt 0 ] || die "no samples of markers-demo's work functions"
[ "$printfs" -gt 0 ] || die "no perf_printf markers in the recording"
[ "$uevents" -gt 0 ] || die "no typed markers in the recording"
echo "demo: OK"
