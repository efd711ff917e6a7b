#!/usr/bin/env bash
# --call-graph dwarf against perf's, on Debian's python3 (a loop of about
# 0.7 s), with many short rounds: bare, under `perf record --call-graph
# dwarf` and under `perfmark record --call-graph dwarf`, in turn, all at
# -F $BENCH_FREQ on cpu-clock.  bench-unwind's few rounds cannot tell two
# slowdowns of 5-10 % apart on a noisy machine (its python3 ratio has
# ranged from 0.8 to 2.8 from one run to the next); here each round's three
# runs are next to each other, and the figures are medians over
# BENCH_DWARF_ROUNDS (40) rounds of the program's own CPU time:
#   overhead under each tool (time / bare time - 1), and their ratio
#   (issue 12: perfmark's within 1.1x of perf's);
#   the ratio of the times under the two tools, round by round, with its
#   quartiles: how far apart the two are, whatever the noise.
#
#   bash bench/bench-dwarf.sh [BUILD_DIR]
. "$(dirname "$0")/lib.sh"
bench_setup bench-dwarf "$@"
[ -x /usr/bin/python3 ] || die "/usr/bin/python3 not installed"
n=${BENCH_DWARF_ROUNDS:-40}

W=$(mktemp -d /tmp/perfmark-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT

# run KIND: appends the loop's own CPU seconds (user + system) to $W/KIND
run() {
	local kind=$1 t=$W/time
	local loop=(bash -c 'TIMEFORMAT="%3U %3S"; { time "$@" >/dev/null; } 2>"$0"' "$t"
		    /usr/bin/python3 "$here/../tests/prog-pyloop.py")
	rm -f "$t" "$W/out.data"
	sync    # the last file's writeback stays out of this run
	case $kind in
	bare) "${loop[@]}";;
	perf) perf record -q -e cpu-clock -F "$freq" --call-graph dwarf -o "$W/out.data" -- "${loop[@]}";;
	pm) "$PERFMARK" record -F "$freq" --call-graph dwarf -o "$W/out.data" -- "${loop[@]}";;
	esac >/dev/null 2>>"$W/err"
	[ -s "$t" ] || { tail -5 "$W/err" >&2; die "python3 under $kind failed"; }
	awk '{ print $1 + $2 }' "$t" >>"$W/$kind"
}

echo "dwarf against perf's dwarf: python3 loop, -F $freq, $n rounds of bare, perf, perfmark"
echo "  load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs"
for r in $(seq "$n"); do
	for k in bare perf pm; do run "$k"; done
done

b=$(median <"$W/bare")
ob=$(paste "$W/perf" "$W/bare" | awk '{ print $1 / $2 - 1 }' | median)
om=$(paste "$W/pm" "$W/bare" | awk '{ print $1 / $2 - 1 }' | median)
paste "$W/pm" "$W/perf" | awk '{ print $1 / $2 }' | sort -g >"$W/ratio"
q() { awk -v p="$1" '{ v[NR] = $1 } END { i = int(p * (NR - 1)) + 1; print v[i] }' "$W/ratio"; }
printf '  bare: %.3f s of CPU (median)\n' "$b"
printf '  overhead, median of rounds: perf %.1f %%, perfmark %.1f %%\n' \
	"$(calc "$ob * 100")" "$(calc "$om * 100")"
awk -v m="$om" -v p="$ob" 'BEGIN { if (p <= 0.0005) r = "n/a (perf'"'"'s overhead too small to divide by)"
	else r = sprintf("%.2f", m / p); print "  perfmark overhead / perf overhead: " r "   (goal <= 1.1)" }' 
printf '  time under perfmark / under perf, round by round: median %.3f (quartiles %.3f..%.3f)\n' \
	"$(median <"$W/ratio")" "$(q 0.25)" "$(q 0.75)"
