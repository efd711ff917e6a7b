#!/usr/bin/env bash
# The slowdown bounds of issue 12 over many short rounds, on Debian's python3
# (a loop of about 0.7 s): bare, under `perf record -g`, `perfmark record
# --call-graph ehframe`, `perf record --call-graph dwarf` and `perfmark
# record --call-graph dwarf`, in turn, all at -F $BENCH_FREQ on cpu-clock.
# bench-unwind's few rounds of eight kinds cannot tell two slowdowns of
# 5-10 % apart on a noisy machine (its python3 dwarf ratio has ranged from
# 0.8 to 2.8 from one run to the next); here each round's runs are next to
# each other, and the figures are medians over BENCH_SLOWDOWN_ROUNDS (40)
# rounds of the program's own CPU time:
#   overhead under each tool (time / bare time - 1), and the ratios the
#   issue bounds: ehframe's to perf -g's (<= 1.5), dwarf's to perf's
#   dwarf's (<= 1.1);
#   the ratio of the times under the two tools, round by round, with its
#   quartiles: how far apart the two are, whatever the noise.
#
#   bash bench/bench-slowdown.sh [BUILD_DIR]
. "$(dirname "$0")/lib.sh"
bench_setup bench-slowdown "$@"
[ -x /usr/bin/python3 ] || die "/usr/bin/python3 not installed"
n=${BENCH_SLOWDOWN_ROUNDS:-40}

W=$(mktemp -d /tmp/perfmark-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT

# run KIND: appends the loop's own CPU seconds (user + system) to $W/KIND
run() {
	local kind=$1 t=$W/time
	local loop=(bash -c 'TIMEFORMAT="%3U %3S"; { time "$@" >/dev/null; } 2>"$0"' "$t"
		    /usr/bin/python3 "$here/../tests/prog-pyloop.py")
	rm -f "$t" "$W/out.data"
	record_as "$kind" "$W/out.data" "${loop[@]}" >/dev/null 2>>"$W/err"
	[ -s "$t" ] || { tail -5 "$W/err" >&2; die "python3 under $kind failed"; }
	awk '{ print $1 + $2 }' "$t" >>"$W/$kind"
}

kinds="bare perf-g pm-ehframe perf-dwarf pm-dwarf"
echo "call-graph modes against perf: python3 loop, -F $freq, $n rounds of $kinds"
echo "  load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs"
for r in $(seq "$n"); do
	for k in $kinds; do run "$k"; done
done

# overhead KIND: median over rounds of its time / the round's bare time - 1
overhead() { paste "$W/$1" "$W/bare" | awk '{ print $1 / $2 - 1 }' | median; }
# compare PM PERF BOUND: the overhead ratio, and the time ratio round by round
compare() {
	local om op
	om=$(overhead "$1") op=$(overhead "$2")
	paste "$W/$1" "$W/$2" | awk '{ print $1 / $2 }' | sort -g >"$W/ratio"
	q() { awk -v p="$1" '{ v[NR] = $1 } END { i = int(p * (NR - 1)) + 1; print v[i] }' "$W/ratio"; }
	printf '%s against %s: overhead %.1f %% against %.1f %%\n' "$1" "$2" \
		"$(calc "$om * 100")" "$(calc "$op * 100")"
	awk -v m="$om" -v p="$op" -v b="$3" 'BEGIN {
		if (p <= 0.0005) r = "n/a (perf'"'"'s overhead too small to divide by)"
		else r = sprintf("%.2f", m / p)
		print "  overhead ratio: " r "   (goal <= " b ")" }'
	printf '  time under %s / under %s, round by round: median %.3f (quartiles %.3f..%.3f)\n' \
		"$1" "$2" "$(median <"$W/ratio")" "$(q 0.25)" "$(q 0.75)"
}
printf '  bare: %.3f s of CPU (median)\n' "$(median <"$W/bare")"
compare pm-ehframe perf-g 1.5
compare pm-dwarf perf-dwarf 1.1
