#!/usr/bin/env bash
# The cost of a tracepoint hit written to the file: a workload that sends
# itself N ignored signals (signal:signal_generate N times, each in its own
# context) runs bare, under `perf record -e signal:signal_generate` and under
# `perfmark record -e signal:signal_generate`, then both again with -g,
# rounds alternating.  Reported, as medians over the rounds:
#   - the workload's own CPU time (user + system: the hit's cost is paid in
#     the task that hits) and the cost of one hit, (time - bare) / N, in ns;
#   - the recorders' own CPU per hit (their CPU time minus the workload's);
#   - perfmark's cost per hit / perf's (goal <= 1.0);
#   - the hits each file holds (perf report --stats), so that a recorder that
#     drops hits cannot look cheap.
#
#   bash bench/bench-tracepoint.sh [BUILD_DIR]
#   (BENCH_TP_HITS: N, default 300000; BENCH_ROUNDS: rounds, default 5)
. "$(dirname "$0")/lib.sh"
bench_setup bench-tracepoint "$@"
hits=${BENCH_TP_HITS:-300000}
prog=$build/tests/prog-tpwork
[ -x "$prog" ] || die "no $prog (build first)"
[ -d /sys/kernel/tracing/events/signal/signal_generate ] || die "no signal:signal_generate tracepoint"
EV=signal:signal_generate

W=$(mktemp -d /tmp/perfmark-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT

# run KIND: appends "workload-cpu workload-cpu total-cpu hits" to $W/KIND.res
# (lib.sh's columns: rec_cpu is the third minus the second)
run() {
	local kind=$1 t=$W/time out=$W/out.data
	local timed=(bash -c 'TIMEFORMAT="%3U %3S"; { time "$@" >/dev/null; } 2>"$0"' "$t" "$prog" signals "$hits" 0)
	rm -f "$t" "$out"
	sync
	case $kind in
	bare) /usr/bin/time -f '%U %S' -o "$W/rtime" "${timed[@]}";;
	perf) /usr/bin/time -f '%U %S' -o "$W/rtime" perf record -q -e $EV -o "$out" -- "${timed[@]}";;
	perfmark) /usr/bin/time -f '%U %S' -o "$W/rtime" "$PERFMARK" record -e $EV -o "$out" -- "${timed[@]}";;
	perf-g) /usr/bin/time -f '%U %S' -o "$W/rtime" perf record -q -g -e $EV -o "$out" -- "${timed[@]}";;
	perfmark-g) /usr/bin/time -f '%U %S' -o "$W/rtime" "$PERFMARK" record -g -e $EV -o "$out" -- "${timed[@]}";;
	esac >/dev/null 2>>"$W/err"
	[ -s "$t" ] || { tail -5 "$W/err" >&2; die "$kind failed"; }
	local n=0
	[ -f "$out" ] && n=$(perf report -i "$out" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
	local wc
	wc=$(awk '{ print $1 + $2 }' "$t")
	echo "$wc $wc $(tail -n 1 "$W/rtime" | awk '{ print $1 + $2 }') ${n:-0}" >>"$W/$kind.res"
}

kinds="bare perf perfmark perf-g perfmark-g"
echo "tracepoint hits: $hits x $EV per run, $rounds rounds of $kinds"
echo "  perf: $(perf version)   perfmark: $PERFMARK"
echo "  load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs"
for r in $(seq "$rounds"); do
	# rotate the order each round so drift hits every kind alike
	set -- $kinds
	for _ in $(seq $((r % 5))); do set -- "$@" "$1"; shift; done
	for k in "$@"; do run "$k"; done
	printf '  round %d/%d done\n' "$r" "$rounds"
done

bare=$(col bare 1)
printf '\n%-11s %10s %12s %14s %12s\n' tool "cpu s" "ns per hit" "recorder ns" "hits kept"
printf '%-11s %10.3f %12s %14s %12s\n' bare "$bare" - - -
for k in perf perfmark perf-g perfmark-g; do
	c=$(col "$k" 1)
	per=$(calc "($c - $bare) / $hits * 1e9")
	eval "per_${k//-/_}=$per"
	printf '%-11s %10.3f %12.0f %14.0f %12s\n' "$k" "$c" "$per" \
		"$(calc "$(rec_cpu "$k") / $hits * 1e9")" "$(col "$k" 4)"
done
echo
printf 'perfmark ns per hit / perf ns per hit: %.2f without stacks, %.2f with -g   (goal <= 1.0)\n' \
	"$(calc "$per_perfmark / $per_perf")" "$(calc "$per_perfmark_g / $per_perf_g")"
