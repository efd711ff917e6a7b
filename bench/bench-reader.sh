#!/usr/bin/env bash
# perf.data reader throughput: `perfmark script` against `perf script` on
# the same recordings, MB/s of file read (and their ratio), median of
# BENCH_ROUNDS runs.  Both write to /dev/null.
#
#   bash bench/bench-reader.sh [BUILD_DIR]       (make bench runs it)
#
# Recordings (bench/report-load.c -g -F 20000, about BENCH_READER_MB MB,
# default 40): file mode, zstd (-z), pipe mode.  perfmark script is timed
# as text and --json.  BENCH_OLD_PERFMARK=/path/to/perfmark adds a column
# for another build (what a change costs: before/after on one machine, in
# one run).
. "$(dirname "$0")/lib.sh"
bench_setup bench-reader "$@"
mb=${BENCH_READER_MB:-40}
old=${BENCH_OLD_PERFMARK:-}

W=$(mktemp -d /tmp/perfmark-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
build_report_load
secs=$(load_secs "$mb") || exit 1
"$PERFMARK" record -g -F 20000 -o "$W/file.data" -- "$W/load" "$secs" >/dev/null 2>"$W/rec.err" &&
	"$PERFMARK" record -g -F 20000 -z -o "$W/zstd.data" -- "$W/load" "$secs" >/dev/null 2>>"$W/rec.err" &&
	"$PERFMARK" record -g -F 20000 -o - -- "$W/load" "$secs" >"$W/pipe.data" 2>>"$W/rec.err" ||
	{ cat "$W/rec.err" >&2; die "perfmark record failed"; }
echo "reader throughput: MB of perf.data per second of wall time, median of $rounds rounds"
echo "  recordings: $secs s of bench/report-load -g -F 20000; load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs"
cat "$W"/*.data >/dev/null   # page cache warm

# secs_of CMD...: wall seconds of one run (output to /dev/null)
secs_of() {
	/usr/bin/time -f '%e' -o "$W/time" "$@" >/dev/null 2>"$W/err" || { cat "$W/err" >&2; die "$* failed"; }
	tail -n 1 "$W/time"
}

tools=("perf script" "perfmark script" "perfmark --json")
[ -n "$old" ] && tools+=("old perfmark" "old --json")
printf '  %-10s %8s' file MB
for t in "${tools[@]}"; do printf ' %16s' "$t"; done
printf ' %18s\n' "perfmark/perf"
for f in file zstd pipe; do
	F=$W/$f.data
	size=$(calc "$(stat -c %s "$F") / 1048576")
	: >"$W/r.perf"; : >"$W/r.pm"; : >"$W/r.pmj"; : >"$W/r.old"; : >"$W/r.oldj"
	for r in $(seq "$rounds"); do
		secs_of perf script -i "$F" >>"$W/r.perf"
		secs_of "$PERFMARK" script -i "$F" >>"$W/r.pm"
		secs_of "$PERFMARK" script --json -i "$F" >>"$W/r.pmj"
		if [ -n "$old" ]; then
			secs_of "$old" script -i "$F" >>"$W/r.old"
			secs_of "$old" script --json -i "$F" >>"$W/r.oldj"
		fi
	done
	printf '  %-10s %8.1f' "$f" "$size"
	for k in perf pm pmj $([ -n "$old" ] && echo old oldj); do
		printf ' %11.1f MB/s' "$(calc "$size / ($(median <"$W/r.$k") + 0.0001)")"
	done
	printf ' %18.2f\n' "$(calc "$(median <"$W/r.perf") / ($(median <"$W/r.pm") + 0.0001)")"
done
