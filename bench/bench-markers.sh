#!/usr/bin/env bash
# Marker benchmarks, measured inside the process by bench/markers-bench.c:
#
#   bash bench/bench-markers.sh [BUILD_DIR]     (bench/run.sh runs it after its table)
#
# (a) traced perf_printf("bench %ld", i) under `perfmark record` against
#     snprintf + write() of the same string to ftrace's trace_marker (in a
#     private tracefs instance, tracing on), alternating, in one process;
#     ns/call in thread CPU time (wall time beside it), medians of rounds;
#     ratio = perf_printf / trace_marker, paired per round (target <= 0.25,
#     goal 0.1).  Markers come in bursts of at most half a thread's fast-lane
#     ring with untimed pauses (so is trace_marker): the cost of a marker
#     the fast lane takes; what a thread sustains is (d).
# (w) a whole process (issue 24): one that starts and emits BENCH_WHOLE_N
#     perf_printf("bench %ld") at once, under `perfmark record`, against one
#     that starts and writes as many formatted lines to trace_marker (not
#     recorded); per-call ns of each process's whole CPU time (its start,
#     its library's set-up, the first markers' trap lane, full rings:
#     everything), paired per round, BENCH_WHOLE_ROUNDS rounds (goal <= 0.15);
#     beside it how many markers took the trap lane and why (record -v).
# (c) traced perfmark_emit of 64 bytes (target <= 0.15 x trace_marker) and of
#     4 KiB (target <= 0.5 x), same run.
# (a') the same run with PERFMARK_FASTLANE=0: every marker takes the trap
#     lane (a uprobe hit), as all did before the fast lane.
# (b) untraced perf_printf ns/call (target <= 3 ns), beside an empty call.
# (d) the highest rate one thread sustains with zero loss: 16-byte
#     perfmark_emit markers paced at stepped rates (then unpaced) for
#     BENCH_RATE_SECS each; "zero loss" = the summary reports 0 lost markers
#     and every emitted marker written (target >= 10 M markers/s); the
#     recorder's CPU per million markers (its user+sys from /usr/bin/time,
#     less the emitting threads' own CPU time).
# (e) the same from 4 threads at once (rates are totals).
# (f) what a trap-lane marker pays for a probe site the kernel never
#     optimises (issue 8 case 1): a uprobe (bpftrace, empty program) on a
#     five-byte nop (optimised into a trampoline call) against one on a
#     one-byte nop (int3, emulated), bench/probe-sites.c.
#
# Environment: BENCH_MARKER_N (calls per round, default 200000),
# BENCH_MARKER_ROUNDS (default 7), BENCH_RATE_SECS (default 1),
# BENCH_WHOLE_N (default 1000000), BENCH_WHOLE_ROUNDS (default 5),
# BENCH_RATES (default "1000000 2500000 5000000 7500000 10000000 12500000 15000000 0"),
# BENCH_RATES4 (default "2000000 5000000 10000000 15000000 20000000 0"; 0 = unpaced).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=$(cd "${1:-$src/build}" && pwd) || exit 1
PERFMARK=${PERFMARK:-$build/perfmark}
N=${BENCH_MARKER_N:-200000}
ROUNDS=${BENCH_MARKER_ROUNDS:-7}
WN=${BENCH_WHOLE_N:-1000000}
WROUNDS=${BENCH_WHOLE_ROUNDS:-5}
SECS=${BENCH_RATE_SECS:-1}
RATES=${BENCH_RATES:-"1000000 2500000 5000000 7500000 10000000 12500000 15000000 0"}
RATES4=${BENCH_RATES4:-"2000000 5000000 10000000 15000000 20000000 0"}
TYPE_RATE=65638   # BENCH_TYPE_RATE in markers-bench.c

die() { echo "bench-markers: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$PERFMARK" ] || die "no perfmark binary at $PERFMARK (build first)"
[ -e "$build/libperfmark.so.0" ] || die "no $build/libperfmark.so.0"
perf version >/dev/null 2>&1 || die "perf (linux-perf) not installed"
[ -x /usr/bin/time ] || die "/usr/bin/time missing (apt-get install time)"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null
TR=/sys/kernel/tracing
[ -d "$TR/instances" ] || mount -t tracefs tracefs "$TR" 2>/dev/null
[ -d "$TR/instances" ] || die "no tracefs at $TR"
export PERFMARK_NO_DAEMON=1   # the in-process recorder: no daemon's sessions mixed in

W=$(mktemp -d /tmp/perfmark-bench-markers.XXXXXX)
INST=$TR/instances/perfmark-bench-$$
cleanup() {
	[ -d "$INST" ] && rmdir "$INST" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

# The library next to the perfmark binary is one the recorder probes:
# link against it and load it at run time (rpath).
cc -O2 -Wall -Wextra -Wno-unused-parameter -I"$src/include" -o "$W/markers-bench" \
	"$here/markers-bench.c" -L"$build" -lperfmark -lpthread -Wl,-rpath,"$build" ||
	die "cannot build bench/markers-bench.c"
cc -O2 -Wall -Wextra -o "$W/probe-sites" "$here/probe-sites.c" || die "cannot build bench/probe-sites.c"
MB=$W/markers-bench

# a private ftrace instance: its own buffer and tracing_on, nobody else's trace touched
mkdir "$INST" || die "cannot create the ftrace instance $INST"
echo 1 >"$INST/tracing_on"
[ "$(cat "$INST/tracing_on")" = 1 ] || die "tracing_on is not 1 in $INST"

val() { sed -n "s/^$1 //p" "$2" | tail -n 1; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
summary_field() {   # what file: "markers" or "lost markers" from record's summary line
	grep -a 'perfmark record: Wrote' "$2" | tail -n 1 |
		sed -n "s/.*[ (]\([0-9][0-9]*\) $1[,)].*/\1/p"
}

echo "marker benchmark: $N calls x $ROUNDS rounds; rate steps of $SECS s; $(nproc) CPUs"
echo "  load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- (a) + (c): traced, side by side with trace_marker -----------------------------
# side TAG [ENV...]: one side-by-side run, its output in $W/side.TAG.out
side() {
	local tag=$1 want got lost
	shift
	env "$@" "$PERFMARK" record -o "$W/side.data" -- "$MB" side "$N" "$ROUNDS" "$INST/trace_marker" \
		>"$W/side.$tag.out" 2>"$W/side.$tag.err" ||
		{ cat "$W/side.$tag.err" "$W/side.$tag.out" >&2; die "side run ($tag) failed"; }
	[ "$(val enabled "$W/side.$tag.out")" = 1 ] || die "markers were not traced in the side run"
	[ "$(val errors "$W/side.$tag.out")" = 0 ] || die "errors in the side run"
	want=$(( $(val emitted_printf "$W/side.$tag.out") + $(val emitted_emit64 "$W/side.$tag.out") +
		 $(val emitted_emit4k "$W/side.$tag.out") ))
	got=$(summary_field markers "$W/side.$tag.err")
	lost=$(summary_field "lost markers" "$W/side.$tag.err")
	[ "$got" = "$want" ] && echo "all $want markers written" >"$W/side.$tag.check" ||
		echo "$got of $want markers written ($lost lost)" >"$W/side.$tag.check"
	rm -f "$W/side.data"
}
side fast
side trap PERFMARK_FASTLANE=0
S=$W/side.fast.out T0=$W/side.trap.out

# --- (w): whole processes, side by side with trace_marker ----------------------------
: >"$W/whole.res"
for r in $(seq "$WROUNDS"); do
	for k in $( [ $((r % 2)) = 1 ] && echo "pm tm" || echo "tm pm"); do
		if [ "$k" = pm ]; then
			"$PERFMARK" record -v -o "$W/whole.data" -- "$MB" whole "$WN" \
				>"$W/whole.pm.out" 2>"$W/whole.pm.err" ||
				{ cat "$W/whole.pm.err" >&2; die "whole run under perfmark record failed"; }
			[ "$(val enabled "$W/whole.pm.out")" = 1 ] || die "markers were not traced in the whole run"
			pm=$(val whole_ns "$W/whole.pm.out")
			sed -n 's/.*perfmark record: [0-9]* markers through the fast lane, \([0-9]*\) through the trap lane.*/\1/p' \
				"$W/whole.pm.err" >>"$W/whole.trap"
			grep -o 'through the trap lane.*' "$W/whole.pm.err" | sed 's/ ]$//' >"$W/whole.why"
			rm -f "$W/whole.data"
		else
			"$MB" whole "$WN" "$INST/trace_marker" >"$W/whole.tm.out" 2>&1 || die "whole trace_marker run failed"
			tm=$(val whole_ns "$W/whole.tm.out")
		fi
	done
	echo "$pm $tm" >>"$W/whole.res"
done
med() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "nan"; exit }
	print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
wpm=$(awk '{ print $1 }' "$W/whole.res" | med)
wtm=$(awk '{ print $2 }' "$W/whole.res" | med)
wratio=$(awk '{ print $1 / $2 }' "$W/whole.res" | med)
wtrap=$(med <"$W/whole.trap")

# --- (b): untraced ----------------------------------------------------------------
"$MB" untraced 50000000 "$ROUNDS" >"$W/untraced.out" 2>&1 || die "untraced run failed"
[ "$(val enabled "$W/untraced.out")" = 0 ] ||
	echo "  warning: a session traces $build/libperfmark.so: the untraced figures are not untraced"
up=$(val untraced_printf_ns "$W/untraced.out"); upm=$(val untraced_printf_min_ns "$W/untraced.out")
ue=$(val untraced_emit_ns "$W/untraced.out"); uem=$(val untraced_emit_min_ns "$W/untraced.out")
uc=$(val empty_call_ns "$W/untraced.out"); ucm=$(val empty_call_min_ns "$W/untraced.out")

# --- (d) + (e): sustained rate ---------------------------------------------------------
# one_rate RATE THREADS: prints "requested achieved emitted written lost cpushare rec_cpu_per_M"
one_rate() {
	local r=$1 th=$2 em ach lost nw cs tcpu u s rc
	rm -f "$W/rate.data"
	/usr/bin/time -f '%U %S' -o "$W/rate.time" \
		"$PERFMARK" record -o "$W/rate.data" -- "$MB" rate "$r" "$SECS" "$th" \
		>"$W/rate.out" 2>"$W/rate.err" || { cat "$W/rate.err" >&2; echo "$r 0 0 0 -1 0 -"; return; }
	em=$(val emitted "$W/rate.out"); ach=$(val achieved_rate "$W/rate.out")
	cs=$(val cpu_share "$W/rate.out"); tcpu=$(val thread_cpu_s "$W/rate.out")
	lost=$(summary_field "lost markers" "$W/rate.err")
	nw=$(( $(summary_field markers "$W/rate.err") - 1 ))   # less the start marker
	read -r u s < <(tail -n 1 "$W/rate.time")
	rc=$(awk -v u="$u" -v s="$s" -v t="$tcpu" -v n="$nw" 'BEGIN { printf "%.3f", (n > 0 ? (u + s - t) / (n / 1e6) : 0) }')
	rm -f "$W/rate.data"
	echo "$r $ach $em $nw ${lost:--1} $cs $rc"
}

# rate_table THREADS RATES: the table, sets best (highest zero-loss rate) and best_cpu
rate_table() {
	local th=$1 r req ach em nw lost cs rc verdict
	best=0 best_cpu=-
	printf '  %12s %12s %12s %12s %10s %6s %14s  %s\n' requested/s achieved/s emitted written lost \
		"cpu" "rec cpu s/M" verdict
	for r in $2; do
		read -r req ach em nw lost cs rc <<<"$(one_rate "$r" "$th")"
		if [ "$lost" = 0 ] && [ "$nw" -eq "$em" ]; then
			verdict="zero loss"
			if awk "BEGIN { exit !($ach > $best) }"; then best=$ach best_cpu=$rc; fi
		else
			verdict="LOSS ($((em - nw)) missing)"
		fi
		[ "$r" = 0 ] && req=unpaced
		printf '  %12s %12s %12s %12s %10s %6s %14s  %s\n' "$req" "$ach" "$em" "$nw" "$lost" "$cs" "$rc" "$verdict"
	done
}
echo
echo "(d) one thread, 16-byte perfmark_emit, $SECS s per step"
echo "  (cpu: the emitting thread's CPU time / wall time; rec cpu: the recorder's CPU seconds per million markers)"
rate_table 1 "$RATES"
best1=$best best1_cpu=$best_cpu
echo
echo "(e) four threads at once, rates are totals"
rate_table 4 "$RATES4"
best4=$best best4_cpu=$best_cpu

# --- (f): the trap lane's probe site ---------------------------------------------------
nop5=- nop1=-
if command -v bpftrace >/dev/null; then
	ps=$W/probe-sites
	bpftrace -e "uprobe:$ps:site_nop5, uprobe:$ps:site_nop1 { @[probe] = count(); } interval:s:30 { exit(); }" \
		>"$W/bt.out" 2>&1 &
	bt=$!
	for i in $(seq 100); do grep -q Attaching "$W/bt.out" && break; sleep 0.1; done
	sleep 1
	for i in 1 2 3; do "$ps" nop5 300000; "$ps" nop1 300000; done >"$W/sites.out"
	kill "$bt" 2>/dev/null; wait "$bt" 2>/dev/null
	nop5=$(sed -n 's/^nop5_ns //p' "$W/sites.out" | sort -g | sed -n 2p)
	nop1=$(sed -n 's/^nop1_ns //p' "$W/sites.out" | sort -g | sed -n 2p)
fi

# --- table -------------------------------------------------------------------------
pass() { awk "BEGIN { exit !($1) }" && echo PASS || echo FAIL; }
echo
echo "marker costs, ns/call in thread CPU time: median of $ROUNDS rounds, best round, [median wall time]"
row() { printf '%-46s %9s %9s %10s %11s %8s\n' "$@"; }
row measure median best "[wall]" target verdict
ft=$(val ftrace_ns "$S")
row "(a) perf_printf traced (fast lane)" "$(val printf_ns "$S")" "$(val printf_min_ns "$S")" "[$(val printf_wall_ns "$S")]" - -
row "(a) snprintf + write(trace_marker)" "$ft" "$(val ftrace_min_ns "$S")" "[$(val ftrace_wall_ns "$S")]" - -
rp=$(val ratio_paired "$S")
row "(a) ratio perf_printf / trace_marker, paired" "$rp" - - "<= 0.25" "$(pass "$rp <= 0.25")"
row "(a) same, against the goal" "$rp" - - "<= 0.1" "$(pass "$rp <= 0.1")"
r64=$(val ratio64_paired "$S"); r4k=$(val ratio4k_paired "$S")
row "(w) whole process: perf_printf under record" "$wpm" - - - -
row "(w) whole process: write(trace_marker)" "$wtm" - - - -
row "(w) ratio whole processes, paired" "$wratio" - - "<= 0.15" "$(pass "$wratio <= 0.15")"
row "(w) trap-lane markers of the $WN (median)" "$wtrap" - - - -
row "(c) perfmark_emit 64 B traced" "$(val emit64_ns "$S")" "$(val emit64_min_ns "$S")" "[$(val emit64_wall_ns "$S")]" - -
row "(c) ratio emit 64 B / trace_marker, paired" "$r64" - - "<= 0.15" "$(pass "$r64 <= 0.15")"
row "(c) perfmark_emit 4 KiB traced" "$(val emit4k_ns "$S")" "$(val emit4k_min_ns "$S")" "[$(val emit4k_wall_ns "$S")]" - -
row "(c) ratio emit 4 KiB / trace_marker, paired" "$r4k" - - "<= 0.5" "$(pass "$r4k <= 0.5")"
row "(a') perf_printf, trap lane only" "$(val printf_ns "$T0")" "$(val printf_min_ns "$T0")" "[$(val printf_wall_ns "$T0")]" - -
row "(a') ratio to trace_marker, paired" "$(val ratio_paired "$T0")" - - - -
row "(a') perfmark_emit 64 B, trap lane only" "$(val emit64_ns "$T0")" "$(val emit64_min_ns "$T0")" "[$(val emit64_wall_ns "$T0")]" - -
row "(a') perfmark_emit 4 KiB, trap lane only" "$(val emit4k_ns "$T0")" "$(val emit4k_min_ns "$T0")" "[$(val emit4k_wall_ns "$T0")]" - -
row "(b) perf_printf untraced" "$up" "$upm" - "<= 3" "$(pass "$up <= 3")"
row "(b) perfmark_emit untraced" "$ue" "$uem" - - -
row "(b) empty out-of-line call (for scale)" "$uc" "$ucm" - - -
row "(d) max zero-loss rate, one thread, /s" "$best1" - - ">= 10000000" "$(pass "$best1 >= 10000000")"
row "(d) recorder CPU s per million markers" "$best1_cpu" - - - -
row "(e) max zero-loss rate, 4 threads, /s" "$best4" - - ">= 10000000" "$(pass "$best4 >= 10000000")"
row "(e) recorder CPU s per million markers" "$best4_cpu" - - - -
row "(f) uprobe hit, five-byte nop site (old)" "$nop5" - - - -
row "(f) uprobe hit, one-byte nop site (now)" "$nop1" - - - -
echo "(a)/(c) check: $(cat "$W/side.fast.check"); trap lane run: $(cat "$W/side.trap.check")"
echo "(w) the last whole run's markers: $(cat "$W/whole.why" 2>/dev/null)"
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
