# shellcheck shell=bash
# Helpers for the report / flamegraph / export tests (source after lib.sh):
#
#   record_phases [FRAMES]   record tests/prog-phases with call chains into
#                            $PH (= $T/ph.data); its own timings go to $T/ph.out
#                            ("range NAME count N total_ns T max_ns M
#                            total_in_ns TI max_in_ns MI" lines: from outside
#                            the marker calls and from inside them)
#   perf_self FILE           stock perf report's self % per symbol of the
#                            sampling event only: lines "PERCENT SYMBOL"
#   chromium_run ARGS...     headless Chromium as root, no network services

need_phases() {
	need_root; need_perf; need_bpffs
	[ "$PM_RECORDER" = perf ] && skip "marker ranges need perfmark record"
	[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
	[ -x "$PROGS/prog-phases" ] || skip "no test program $PROGS/prog-phases"
}

PH=$T/ph.data
record_phases() {
	"$PERFMARK" record -g -F 4000 -o "$PH" -- "$PROGS/prog-phases" "${1:-20}" \
		>"$T/ph.out" 2>"$T/ph.rec.err" || die "perfmark record prog-phases failed" -- "$T/ph.rec.err"
	grep -q '^range render count' "$T/ph.out" || die "prog-phases printed no timings" -- "$T/ph.out"
}

perf_self() {
	perf report -i "$1" --stdio --no-children --sort sym -g none 2>/dev/null | awk '
		/^# Samples: / { n++; next }
		n == 1 && /^ *[0-9.]+%/ { p = $1; sub("%", "", p); print p, $NF }'
}

chromium_run() {
	local ud
	ud=$(mktemp -d "$T/chromium.XXXXXX")
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$ud" "$@"
}
