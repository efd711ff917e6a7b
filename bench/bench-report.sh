#!/usr/bin/env bash
# perfmark report against perf report --stdio on the same large recording
# (about BENCH_REPORT_MB MB, default 100): wall time and peak RSS of each,
# median of BENCH_ROUNDS runs, and their ratios (goal: <= 0.5 for both).
#
#   bash bench/bench-report.sh [BUILD_DIR]       (make bench runs it)
#
# The recording: bench/report-load.c (two threads, deep varied stacks, one
# marker range per loop) under `perfmark record -g -F 20000`, recorded
# until the file reaches the size asked for.  Both readers write to
# /dev/null; perf report runs with its default children mode and callchains,
# perfmark report with its default (self and total per command).
. "$(dirname "$0")/lib.sh"
bench_setup bench-report "$@"
mb=${BENCH_REPORT_MB:-100}

W=$(mktemp -d /tmp/perfmark-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
build_report_load
secs=$(load_secs "$mb") || exit 1
"$PERFMARK" record -g -F 20000 -o "$W/big.data" -- "$W/load" "$secs" >/dev/null 2>"$W/rec.err" ||
	{ cat "$W/rec.err" >&2; die "perfmark record failed"; }
size=$(stat -c %s "$W/big.data")
echo "perfmark report vs perf report: $(calc "$size / 1048576") MB recording ($secs s of bench/report-load -g -F 20000), $rounds rounds"
echo "  load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs"

# one_run KIND: appends "wall_s maxrss_kb" to $W/KIND.res
one_run() {
	case $1 in
	perf) /usr/bin/time -f '%e %M' -o "$W/time" perf report -i "$W/big.data" --stdio \
		>/dev/null 2>"$W/err.$1";;
	perfmark) /usr/bin/time -f '%e %M' -o "$W/time" "$PERFMARK" report -i "$W/big.data" \
		>/dev/null 2>"$W/err.$1";;
	esac || { cat "$W/err.$1" >&2; die "$1 report failed"; }
	tail -n 1 "$W/time" >>"$W/$1.res"
}
# page cache warm for both
cat "$W/big.data" >/dev/null
for r in $(seq "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then one_run perf; one_run perfmark; else one_run perfmark; one_run perf; fi
done
pt=$(cut -d' ' -f1 "$W/perf.res" | median); pm=$(cut -d' ' -f1 "$W/perfmark.res" | median)
pr=$(cut -d' ' -f2 "$W/perf.res" | median); mr=$(cut -d' ' -f2 "$W/perfmark.res" | median)
printf '  %-26s %10s %14s\n' "" "wall s" "peak RSS MB"
printf '  %-26s %10.2f %14.1f\n' "perf report --stdio" "$pt" "$(calc "$pr / 1024")"
printf '  %-26s %10.2f %14.1f\n' "perfmark report" "$pm" "$(calc "$mr / 1024")"
printf '  %-26s %10.2f %14.2f   (goal <= 0.50 each)\n' "ratio perfmark/perf" \
	"$(calc "$pm / $pt")" "$(calc "$mr / $pr")"
