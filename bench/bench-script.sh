#!/usr/bin/env bash
# perfmark script against perf script on the same samples-heavy recording
# (issue 24): `perfmark record -a -g -F 4000 --no-markers` of the whole
# machine while bench/report-load runs (two threads, deep stacks), recorded
# once for as long as it takes to write about BENCH_SCRIPT_MB MB (default
# 80; a 1 s and a 3 s probe tell the rate).  Then `perf script -i F` and
# `perfmark script -i F`, both to /dev/null, alternately for BENCH_ROUNDS
# rounds (default 5): the median of the per-round ratios of wall time (the
# goal, <= 0.20) and of CPU time (user + sys).
#
#   bash bench/bench-script.sh [BUILD_DIR]       (make bench runs it)
. "$(dirname "$0")/lib.sh"
bench_setup bench-script "$@"
mb=${BENCH_SCRIPT_MB:-80}
goal=0.20

W=$(mktemp -d /tmp/perfmark-bench.XXXXXX)
loadpid=
cleanup() {
	[ -n "$loadpid" ] && kill "$loadpid" 2>/dev/null && wait "$loadpid" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
build_report_load

# record_all SECONDS OUT: the whole machine while the workload runs
record_all() {
	"$W/load" $(($1 + 3)) &
	loadpid=$!
	"$PERFMARK" record -a -g -F "$freq" --no-markers --duration "$1" -o "$2" \
		>/dev/null 2>"$W/rec.err" || { cat "$W/rec.err" >&2; die "perfmark record failed"; }
	kill "$loadpid" 2>/dev/null
	wait "$loadpid" 2>/dev/null
	loadpid=
}
# the rate from a 1 s and a 3 s run: the machine's maps, written at the start, cancel out
record_all 1 "$W/probe1.data"
record_all 3 "$W/probe3.data"
rate=$(calc "($(stat -c %s "$W/probe3.data") - $(stat -c %s "$W/probe1.data")) / 2")
secs=$(calc "int($mb * 1048576 / ($rate > 1 ? $rate : 1) + 0.5)")
[ "$secs" -lt 2 ] && secs=2
[ "$secs" -gt 120 ] && secs=120
record_all "$secs" "$W/big.data"
size=$(stat -c %s "$W/big.data")
samples=$(grep -o '([0-9]* samples' "$W/rec.err" | tr -dc 0-9)
echo "perfmark script vs perf script: $(calc "int($size / 1048576 + 0.5)") MB recording" \
	"(${samples:-?} samples; $secs s of perfmark record -a -g -F $freq --no-markers" \
	"with bench/report-load running), $rounds rounds"
echo "  load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs"

# one_run KIND: appends "wall_s cpu_s" to $W/KIND.res
one_run() {
	case $1 in
	perf) /usr/bin/time -f '%e %U %S' -o "$W/time" perf script -i "$W/big.data" \
		>/dev/null 2>"$W/err.$1";;
	perfmark) /usr/bin/time -f '%e %U %S' -o "$W/time" "$PERFMARK" script -i "$W/big.data" \
		>/dev/null 2>"$W/err.$1";;
	esac || { cat "$W/err.$1" >&2; die "$1 script failed"; }
	tail -n 1 "$W/time" | awk '{ print $1, $2 + $3 }' >>"$W/$1.res"
}
cat "$W/big.data" >/dev/null   # page cache warm for both
for r in $(seq "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then one_run perf; one_run perfmark; else one_run perfmark; one_run perf; fi
done
# per-round ratios, paired: drift in the machine's speed hits both of a round alike
paste -d' ' "$W/perfmark.res" "$W/perf.res" | awk '{ print $1 / $3 }' >"$W/ratio.wall"
paste -d' ' "$W/perfmark.res" "$W/perf.res" | awk '{ print $2 / $4 }' >"$W/ratio.cpu"
pw=$(cut -d' ' -f1 "$W/perf.res" | median); mw=$(cut -d' ' -f1 "$W/perfmark.res" | median)
pc=$(cut -d' ' -f2 "$W/perf.res" | median); mc=$(cut -d' ' -f2 "$W/perfmark.res" | median)
rw=$(median <"$W/ratio.wall"); rc=$(median <"$W/ratio.cpu")
printf '  %-26s %10s %10s\n' "" "wall s" "cpu s"
printf '  %-26s %10.2f %10.2f\n' "perf script" "$pw" "$pc"
printf '  %-26s %10.2f %10.2f\n' "perfmark script" "$mw" "$mc"
printf '  %-26s %10.3f %10.3f   (median of the rounds'"'"' ratios; goal wall <= %.2f: %s)\n' \
	"ratio perfmark/perf" "$rw" "$rc" "$goal" \
	"$(awk "BEGIN { print ($rw <= $goal) ? \"PASS\" : \"FAIL\" }")"
