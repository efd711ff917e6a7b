#!/usr/bin/env bash
# The floor of sampling, and where perfmark stands between it and perf
# (issue 24).  One fixed CPU loop (bench/loop.c), the same event and rate
# everywhere (cpu-clock, -F $BENCH_FREQ, every CPU for the BPF ones), in
# alternating rounds (the order rotates each round):
#   bare     the loop alone
#   empty    a BPF program that only returns (bench/floor.bpf.c, floor_empty)
#   stacks   one that counts user+kernel stacks in maps (floor_stacks: what
#            bpftrace's @[kstack, ustack] = count() and continuous profilers
#            do), writing nothing per sample
#   bt       bpftrace -e 'profile:hz:F { }': the same floor through the
#            tool the issue measured it with (when bpftrace is installed)
#   pm       perfmark record without -g
#   pm-g     perfmark record -g, every sample written to the file
#   perf-g   perf record -e cpu-clock -g
# Each run's figures come from the loop itself: its wall time, its own CPU
# time (the sampling interrupts and programs run in its context, so they
# are in it), and what its parent (the recorder; bench/floor for the BPF
# floors, which does nothing while the loop runs) spent while it ran: CPU
# time of all its threads, how often they were scheduled in (wakeups), and
# its minor page faults.
# Start-up and the final flush are outside that window.
#
# cost = (loop CPU + recorder CPU) / bare loop CPU - 1, paired per round,
# median over rounds: the CPU the machine spends on profiling the loop,
# wherever it spends it.  It is measured in CPU time because wall time
# on a machine other jobs load says more about them than about the tools.
# The goals (issue 24): perfmark -g <= 0.5 x perf -g's cost and <= 2 x the
# in-map stack counting's.  Wall-clock slowdowns are shown beside them.
#
# Where perfmark's time goes: the BPF programs' run time (the kernel's
# bpf_stats, held on by bench/floor for the whole run: ns a run over every
# CPU's samples, the filtered ones too), the recorder's CPU, wakeups and
# page faults while the loop runs, its file.
#
#   bash bench/bench-floor.sh [BUILD_DIR]
# Environment: BENCH_FLOOR_ROUNDS (9), BENCH_FLOOR_ITERS (20000000, ~0.8 s
# of CPU here), BENCH_FREQ (4000), BENCH_FLOOR_KINDS (all of the above;
# bt only where bpftrace is installed).
. "$(dirname "$0")/lib.sh"
bench_setup bench-floor "$@"
rounds=${BENCH_FLOOR_ROUNDS:-9}
iters=${BENCH_FLOOR_ITERS:-20000000}
kinds=${BENCH_FLOOR_KINDS:-bare empty $(command -v bpftrace >/dev/null && echo bt) stacks pm pm-g perf-g}
FLOOR=$build/bench/floor
[ -x "$FLOOR" ] || die "no $FLOOR (build first)"
export PERFMARK_NO_DAEMON=1   # the in-process recorder: its CPU is the loop's parent's

W=$(mktemp -d /tmp/perfmark-bench-floor.XXXXXX)
hold=
cleanup() {
	if [ -n "$hold" ]; then
		pkill -P "$hold" 2>/dev/null
		kill "$hold" 2>/dev/null
		wait "$hold" 2>/dev/null
	fi
	rm -rf "$W"
}
trap cleanup EXIT
build_loop
# BPF run-time statistics on for the whole run (held by an fd, not the sysctl)
"$FLOOR" none -- sleep 100000 2>/dev/null &
hold=$!

# one_run KIND: appends "wall cpu reccpu recruns recfaults size bpf_ns bpf_runs" to $W/KIND.res
one_run() {
	local k=$1 res=$W/res out=$W/out.data err=$W/err bpf="- -" size=0
	rm -f "$res" "$out"
	case $k in
	bare) "$W/loop" "$iters" "$res";;
	empty|stacks) "$FLOOR" "$k" -F "$freq" -- "$W/loop" "$iters" "$res" 2>"$err";;
	bt) bpftrace -e "profile:hz:$freq { }" -c "$W/loop $iters $res" >/dev/null 2>"$err";;
	pm) "$PERFMARK" record -v -F "$freq" -o "$out" -- "$W/loop" "$iters" "$res" >/dev/null 2>"$err";;
	pm-g) "$PERFMARK" record -v -F "$freq" -g -o "$out" -- "$W/loop" "$iters" "$res" >/dev/null 2>"$err";;
	perf-g) perf record -q -e cpu-clock -F "$freq" -g -o "$out" -- "$W/loop" "$iters" "$res" \
		>/dev/null 2>"$err";;
	*) die "no such kind: $k";;
	esac
	[ -s "$res" ] || { cat "$err" >&2; die "$k run failed"; }
	[ -f "$out" ] && size=$(stat -c %s "$out")
	case $k in
	empty|stacks) bpf=$(sed -n 's/.*runs \([0-9]*\) ns_per_run \([0-9.]*\).*/\2 \1/p' "$err");;
	pm|pm-g) bpf=$(sed -n 's/.*sampler: \([0-9]*\) runs, \([0-9.]*\) ns a run.*/\2 \1/p' "$err");;
	esac
	[ -n "$bpf" ] || bpf="- -"
	[ "$k" = bare ] && set -- "$(awk '{ print $1, $2, 0, 0, 0 }' "$res")" || set -- "$(cat "$res")"
	echo "$1 $size $bpf" >>"$W/$k.res"
}

echo "the floor of sampling: loop of $iters iterations, cpu-clock -F $freq, $rounds rounds of: $kinds"
echo "  perf: $(perf version)   perfmark: $PERFMARK"
echo "  load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
"$W/loop" 1000000 /dev/null   # warm the caches
set -f
for r in $(seq "$rounds"); do
	# shellcheck disable=SC2086  # kinds: words
	for k in $(rotated "$r" $kinds); do one_run "$k"; done
	printf '  round %d/%d done\n' "$r" "$rounds"
done
set +f
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# paired KIND EXPR: median over rounds of EXPR (awk, on the kind's columns
# w c rc rn pf and the same round's bare b_w b_c)
paired() {
	paste -d' ' "$W/$1.res" "$W/bare.res" | awk "{ w = \$1; c = \$2; rc = \$3; rn = \$4; pf = \$5;
		b_w = \$9; b_c = \$10; print $2 }" | median
}
colmed() { awk -v c="$2" '$c != "-" { print $c }' "$W/$1.res" | median | sed "s/^nan$/-/"; }

echo
echo "medians of $rounds rounds; cost = (loop CPU + recorder CPU) / bare loop CPU - 1, paired per round"
printf '%-7s %9s %9s %11s %11s %9s %9s %9s %10s %9s\n' kind "loop cpu" "loop +%" "rec cpu ms" \
	"rec wake/s" "cost %" "wall +%" "BPF ns" "BPF runs" "file KiB"
for k in $kinds; do
	lc=$(colmed "$k" 2)
	if [ "$k" = bare ]; then
		lp=- rcm=- rw=- cost=0 wp=-
	else
		lp=$(calc "$(paired "$k" 'c / b_c - 1') * 100")
		rcm=$(calc "$(colmed "$k" 3) * 1000")
		rw=$(paired "$k" 'rn / w')
		cost=$(calc "$(paired "$k" '(c + rc) / b_c - 1') * 100")
		wp=$(calc "$(paired "$k" 'w / b_w - 1') * 100")
	fi
	eval "cost_${k//-/_}=$cost wall_${k//-/_}=$([ "$wp" = - ] && echo 0 || echo "$wp")"
	printf '%-7s %9.3f %9s %11s %11s %9.2f %9s %9s %10s %9.0f\n' "$k" "$lc" \
		"$([ "$lp" = - ] && echo - || printf '%.2f' "$lp")" \
		"$([ "$rcm" = - ] && echo - || printf '%.1f' "$rcm")" \
		"$([ "$rw" = - ] && echo - || printf '%.1f' "$rw")" "$cost" \
		"$([ "$wp" = - ] && echo - || printf '%.2f' "$wp")" \
		"$(colmed "$k" 7)" "$(colmed "$k" 8)" "$(calc "$(colmed "$k" 6) / 1024")"
done

# verdict NAME A B GOAL: A / B against GOAL (<=)
verdict() {
	awk -v n="$1" -v a="$2" -v b="$3" -v g="$4" 'BEGIN {
		if (b <= 0.05) { printf "%-60s %7s   (goal <= %s)  n/a (%.2f %% is too small to divide by)\n", n, "-", g, b; exit }
		r = a / b; printf "%-60s %7.2f   (goal <= %s)  %s\n", n, r, g, (r <= g ? "PASS" : "FAIL") }'
}
has() { case " $kinds " in *" $1 "*) return 0;; esac; return 1; }
echo
if has pm-g && has perf-g; then
	verdict "perfmark -g cost / perf -g cost" "$cost_pm_g" "$cost_perf_g" 0.5
	has empty && verdict "  the same above the floor (each less the empty program's)" \
		"$(calc "$cost_pm_g - $cost_empty")" "$(calc "$cost_perf_g - $cost_empty")" 0.5
	verdict "  wall-clock slowdowns (for information: a loaded machine's)" "$wall_pm_g" "$wall_perf_g" 0.5
	# what any sampler at this event and rate costs at least, against perf
	has empty && printf '%-60s %7.2f   (no sampler on this timer costs less)\n' \
		"  the floor: an empty program's cost / perf -g cost" "$(calc "$cost_empty / $cost_perf_g")"
	has bt && printf '%-60s %7.2f\n' "  the same, bpftrace's empty profile probe / perf -g cost" \
		"$(calc "$cost_bt / $cost_perf_g")"
fi
if has pm-g && has stacks; then
	verdict "perfmark -g cost / in-map stack counting cost" "$cost_pm_g" "$cost_stacks" 2
	has empty && verdict "  the same above the floor (each less the empty program's)" \
		"$(calc "$cost_pm_g - $cost_empty")" "$(calc "$cost_stacks - $cost_empty")" 2
	verdict "  wall-clock slowdowns (for information: a loaded machine's)" "$wall_pm_g" "$wall_stacks" 2
fi

# where the time goes, per sample of the loop (loop CPU x rate samples)
if has pm-g && has empty && has bare; then
	ns=$(calc "$(colmed bare 2) * $freq")
	us() { calc "($1) / $ns * 1e6"; }
	echo
	echo "where the time goes, per sample of the loop (~$(printf '%.0f' "$ns") samples a run), medians:"
	printf '  %-62s %8.2f us\n' "the timer interrupt, an empty program on it (empty - bare)" \
		"$(us "$(colmed empty 2) - $(colmed bare 2)")"
	has bt && printf '  %-62s %8.2f us\n' "  the same through bpftrace's profile probe (bt - bare)" \
		"$(us "$(colmed bt 2) - $(colmed bare 2)")"
	printf '  %-62s %8.2f us\n' "perfmark -g in the loop's context beyond that (pm-g - empty)" \
		"$(us "$(colmed pm-g 2) - $(colmed empty 2)")"
	printf '  %-62s %8.3f us\n' "  its sampler's run, every CPU's samples averaged (bpf_stats)" \
		"$(calc "$(colmed pm-g 7) / 1000")"
	printf '  %-62s %8.2f us\n' "perfmark -g's recorder (drain, encode, write), elsewhere" \
		"$(us "$(colmed pm-g 3)")"
	printf '  %-62s %8.1f /s\n' "  its wakeups while the loop ran" "$(paired pm-g 'rn / w')"
	printf '  %-62s %8.3f\n' "  its minor page faults per sample" "$(calc "$(colmed pm-g 5) / $ns")"
	has perf-g && printf '  %-62s %8.3f\n' "  perf -g's recorder's, per sample" "$(calc "$(colmed perf-g 5) / $ns")"
	has perf-g && printf '  %-62s %8.2f us\n' "perf -g in the loop's context beyond the floor (perf-g - empty)" \
		"$(us "$(colmed perf-g 2) - $(colmed empty 2)")"
	has perf-g && printf '  %-62s %8.2f us\n' "perf -g's recorder" "$(us "$(colmed perf-g 3)")"
	has stacks && printf '  %-62s %8.2f us\n' "stack counting in maps beyond the floor (stacks - empty)" \
		"$(us "$(colmed stacks 2) - $(colmed empty 2)")"
fi
exit 0
