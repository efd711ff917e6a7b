#!/usr/bin/env bash
# The slowdown bounds of issue 12 over many short rounds, on Debian's python3
# (a loop of about 0.7 s) and xz (-6 -T1 on 2.7 MB of base64, about 0.75 s):
# bare, under `perf record -g`, `perfmark record
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
#   (BENCH_SLOWDOWN_PROGS="python3 xz": the programs, in this order)
. "$(dirname "$0")/lib.sh"
bench_setup bench-slowdown "$@"
progs=${BENCH_SLOWDOWN_PROGS:-python3 xz}
n=${BENCH_SLOWDOWN_ROUNDS:-40}
for p in $progs; do
	case $p in
	python3) [ -x /usr/bin/python3 ] || die "/usr/bin/python3 not installed";;
	xz) command -v xz >/dev/null || die "xz not installed";;
	*) die "no such program: $p (python3 or xz)";;
	esac
done

W=$(mktemp -d /tmp/perfmark-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
head -c 2000000 /dev/urandom | base64 >"$W/in.txt"

# run PROG KIND: appends the program's own CPU seconds (user + system) to $W/PROG.KIND
run() {
	local prog=$1 kind=$2 t=$W/time
	local timed=(bash -c 'TIMEFORMAT="%3U %3S"; { time "$@" >/dev/null; } 2>"$0"' "$t")
	case $prog in
	python3) timed+=(/usr/bin/python3 "$here/../tests/prog-pyloop.py");;
	xz) timed+=(xz -6 -T1 -c "$W/in.txt");;
	esac
	rm -f "$t" "$W/out.data"
	record_as "$kind" "$W/out.data" "${timed[@]}" >/dev/null 2>>"$W/err"
	[ -s "$t" ] || { tail -5 "$W/err" >&2; die "$prog under $kind failed"; }
	awk '{ print $1 + $2 }' "$t" >>"$W/$prog.$kind"
}

kinds="bare perf-g pm-ehframe perf-dwarf pm-dwarf"
for prog in $progs; do
	echo "call-graph modes against perf: $prog, -F $freq, $n rounds of $kinds"
	echo "  load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs"
	for r in $(seq "$n"); do
		for k in $kinds; do run "$prog" "$k"; done
	done
done

# overhead PROG KIND: median over rounds of its time / the round's bare time - 1
overhead() { paste "$W/$1.$2" "$W/$1.bare" | awk '{ print $1 / $2 - 1 }' | median; }
# compare PROG PM PERF BOUND: the overhead ratio, and the time ratio round by round
compare() {
	local om op
	om=$(overhead "$1" "$2") op=$(overhead "$1" "$3")
	paste "$W/$1.$2" "$W/$1.$3" | awk '{ print $1 / $2 }' | sort -g >"$W/ratio"
	q() { awk -v p="$1" '{ v[NR] = $1 } END { i = int(p * (NR - 1)) + 1; print v[i] }' "$W/ratio"; }
	printf '  %s against %s: overhead %.1f %% against %.1f %%\n' "$2" "$3" \
		"$(calc "$om * 100")" "$(calc "$op * 100")"
	awk -v m="$om" -v p="$op" -v b="$4" 'BEGIN {
		if (p <= 0.0005) r = "n/a (perf'"'"'s overhead too small to divide by)"
		else r = sprintf("%.2f", m / p)
		print "    overhead ratio: " r "   (goal <= " b ")" }'
	printf '    time under %s / under %s, round by round: median %.3f (quartiles %.3f..%.3f)\n' \
		"$2" "$3" "$(median <"$W/ratio")" "$(q 0.25)" "$(q 0.75)"
}
for prog in $progs; do
	printf '%s: bare %.3f s of CPU (median)\n' "$prog" "$(median <"$W/$prog.bare")"
	compare "$prog" pm-ehframe perf-g 1.5
	compare "$prog" pm-dwarf perf-dwarf 1.1
done
