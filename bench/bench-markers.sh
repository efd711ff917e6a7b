#!/usr/bin/env bash
# Marker benchmarks, measured inside the process by bench/markers-bench.c:
#
#   bash bench/bench-markers.sh [BUILD_DIR]     (bench/run.sh runs it after its table)
#
# (a) traced perf_printf("bench %ld", i) under `perfmark record` against
#     snprintf + write() of the same string to ftrace's trace_marker (in a
#     private tracefs instance, tracing on), alternating, in one process;
#     ns/call per thread CPU time (wall time beside it), medians of rounds;
#     ratio = perf_printf / trace_marker (target <= 1.5).
# (b) untraced perf_printf ns/call (target <= 3 ns), beside an empty call.
# (c) traced perfmark_emit of 4 KiB (and of 64 bytes) ns/call, same run as (a).
# (d) the highest rate one thread sustains with zero loss in the file:
#     16-byte perfmark_emit markers paced at stepped rates (then unpaced) for
#     BENCH_RATE_SECS each; "zero loss" = the summary reports 0 lost markers
#     and `perf script` counts exactly the emitted number in the file
#     (target >= 1 M markers/s).  Then the unpaced run again with smaller
#     rings, to show where loss begins.
#
# Environment: BENCH_MARKER_N (calls per round, default 200000),
# BENCH_MARKER_ROUNDS (default 7), BENCH_RATE_SECS (default 3),
# BENCH_RATES (default "250000 500000 750000 1000000 1250000 1500000 2000000 0";
# 0 = unpaced).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=$(cd "${1:-$src/build}" && pwd) || exit 1
PERFMARK=${PERFMARK:-$build/perfmark}
N=${BENCH_MARKER_N:-200000}
ROUNDS=${BENCH_MARKER_ROUNDS:-7}
SECS=${BENCH_RATE_SECS:-3}
RATES=${BENCH_RATES:-"250000 500000 750000 1000000 1250000 1500000 2000000 0"}
TYPE_RATE=65638   # BENCH_TYPE_RATE in markers-bench.c

die() { echo "bench-markers: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$PERFMARK" ] || die "no perfmark binary at $PERFMARK (build first)"
[ -e "$build/libperfmark.so.0" ] || die "no $build/libperfmark.so.0"
perf version >/dev/null 2>&1 || die "perf (linux-perf) not installed"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null
TR=/sys/kernel/tracing
[ -d "$TR/instances" ] || mount -t tracefs tracefs "$TR" 2>/dev/null
[ -d "$TR/instances" ] || die "no tracefs at $TR"

W=$(mktemp -d /tmp/perfmark-bench-markers.XXXXXX)
INST=$TR/instances/perfmark-bench-$$
cleanup() {
	[ -d "$INST" ] && rmdir "$INST" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

# The library next to the perfmark binary is the one the recorder probes:
# link against it and load it at run time (rpath).
cc -O2 -Wall -Wextra -Wno-unused-parameter -I"$src/include" -o "$W/markers-bench" \
	"$here/markers-bench.c" -L"$build" -lperfmark -Wl,-rpath,"$build" ||
	die "cannot build bench/markers-bench.c"
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
"$PERFMARK" record -o "$W/side.data" -- "$MB" side "$N" "$ROUNDS" "$INST/trace_marker" \
	>"$W/side.out" 2>"$W/side.err" || { cat "$W/side.err" "$W/side.out" >&2; die "side run failed"; }
[ "$(val enabled "$W/side.out")" = 1 ] || die "markers were not traced in the side run"
[ "$(val errors "$W/side.out")" = 0 ] || die "errors in the side run"
rp=$(val ratio_paired "$W/side.out")
ppm=$(val printf_min_ns "$W/side.out"); ftm=$(val ftrace_min_ns "$W/side.out")
e4km=$(val emit4k_min_ns "$W/side.out"); e64m=$(val emit64_min_ns "$W/side.out")
pp=$(val printf_ns "$W/side.out"); ppw=$(val printf_wall_ns "$W/side.out")
ft=$(val ftrace_ns "$W/side.out"); ftw=$(val ftrace_wall_ns "$W/side.out")
e64=$(val emit64_ns "$W/side.out"); e64w=$(val emit64_wall_ns "$W/side.out")
e4k=$(val emit4k_ns "$W/side.out"); e4kw=$(val emit4k_wall_ns "$W/side.out")
want=$(( $(val emitted_printf "$W/side.out") + $(val emitted_emit64 "$W/side.out") + $(val emitted_emit4k "$W/side.out") ))
side_lost=$(summary_field "lost markers" "$W/side.err")
side_file=$(perf script -i "$W/side.data" -F event 2>/dev/null | grep -ac 'perfmark:')
[ "$side_file" -eq "$want" ] && side_check="all $want markers in the file" ||
	side_check="file holds $side_file of $want markers (lost: $side_lost)"
rm -f "$W/side.data"

# --- (b): untraced ----------------------------------------------------------------
"$MB" untraced 50000000 "$ROUNDS" >"$W/untraced.out" 2>&1 || die "untraced run failed"
[ "$(val enabled "$W/untraced.out")" = 0 ] ||
	echo "  warning: a session traces $build/libperfmark.so: the untraced figures are not untraced"
up=$(val untraced_printf_ns "$W/untraced.out"); upm=$(val untraced_printf_min_ns "$W/untraced.out")
ue=$(val untraced_emit_ns "$W/untraced.out"); uem=$(val untraced_emit_min_ns "$W/untraced.out")
uc=$(val empty_call_ns "$W/untraced.out"); ucm=$(val empty_call_min_ns "$W/untraced.out")

# --- (d): sustained rate from one thread ----------------------------------------------
# one_rate RATE [RINGBUF]: prints "requested achieved emitted infile lost cpushare"
one_rate() {
	local r=$1 rb=${2:-} opt=() em ach lost nf cs
	[ -n "$rb" ] && opt=(--ringbuf "$rb")
	rm -f "$W/rate.data"
	"$PERFMARK" record "${opt[@]}" -o "$W/rate.data" -- "$MB" rate "$r" "$SECS" \
		>"$W/rate.out" 2>"$W/rate.err" || { cat "$W/rate.err" >&2; echo "$r 0 0 0 -1 0"; return; }
	em=$(val emitted "$W/rate.out"); ach=$(val achieved_rate "$W/rate.out")
	cs=$(val cpu_share "$W/rate.out")
	lost=$(summary_field "lost markers" "$W/rate.err")
	nf=$(perf script -i "$W/rate.data" -F event 2>/dev/null | grep -ac 'perfmark:uevent')
	rm -f "$W/rate.data"
	echo "$r $ach $em $nf ${lost:--1} $cs"
}

echo
echo "(d) one thread, 16-byte perfmark_emit, $SECS s per step, default ring"
echo "  (cpu share: the emitting thread's CPU time / wall time; < 1 when other work preempts it)"
printf '  %12s %12s %12s %12s %10s %6s  %s\n' requested/s achieved/s emitted "in file" lost "cpu" verdict
best=0 first_loss=
for r in $RATES; do
	read -r req ach em nf lost cs <<<"$(one_rate "$r")"
	if [ "$lost" = 0 ] && [ "$nf" -eq "$em" ]; then
		verdict="zero loss"
		awk "BEGIN { exit !($ach > $best) }" && best=$ach
	else
		verdict="LOSS ($((em - nf)) missing)"
		[ -z "$first_loss" ] && first_loss="$req/s requested ($ach/s achieved)"
	fi
	[ "$r" = 0 ] && req=unpaced
	printf '  %12s %12s %12s %12s %10s %6s  %s\n' "$req" "$ach" "$em" "$nf" "$lost" "$cs" "$verdict"
	[ "$r" = 0 ] && unpaced=$ach && unpaced_cpu_rate=$(val cpu_rate "$W/rate.out")
done
echo "  unpaced, smaller rings (where the drain falls behind):"
for rb in 1M 256K 64K; do
	read -r req ach em nf lost cs <<<"$(one_rate 0 "$rb")"
	printf '  %12s %12s %12s %12s %10s %6s  %s\n' "ring $rb" "$ach" "$em" "$nf" "$lost" "$cs" \
		"$(awk -v l="$lost" -v e="$em" 'BEGIN { printf "%.1f%% lost", e ? 100 * l / e : 0 }')"
done

# --- table -------------------------------------------------------------------------
ratio=$(calc "%.2f" "$pp / $ft")
ratio_w=$(calc "%.2f" "$ppw / $ftw")
pass() { awk "BEGIN { exit !($1) }" && echo ok || echo MISSED; }
echo
echo "marker costs, ns/call in thread CPU time: median of $ROUNDS rounds, best round, [median wall time]"
row() { printf '%-44s %9s %9s %10s %11s %8s\n' "$@"; }
row measure median best "[wall]" target verdict
row "(a) perf_printf traced" "$pp" "$ppm" "[$ppw]" - -
row "(a) snprintf + write(trace_marker)" "$ft" "$ftm" "[$ftw]" - -
row "(a) ratio perf_printf / trace_marker" "$ratio" "$(calc "%.2f" "$ppm / $ftm")" "[$ratio_w]" "<= 1.5" "$(pass "$ratio <= 1.5")"
row "(a) same, paired per round (median)" "$rp" - - "<= 1.5" "$(pass "$rp <= 1.5")"
row "(b) perf_printf untraced" "$up" "$upm" - "<= 3" "$(pass "$up <= 3")"
row "(b) perfmark_emit untraced" "$ue" "$uem" - - -
row "(b) empty out-of-line call (for scale)" "$uc" "$ucm" - - -
row "(c) perfmark_emit 4 KiB traced" "$e4k" "$e4km" "[$e4kw]" - -
row "(c) perfmark_emit 64 B traced" "$e64" "$e64m" "[$e64w]" - -
row "(d) max zero-loss rate, one thread, /s" "$best" - - ">= 1000000" "$(pass "$best >= 1000000")"
echo "(a)/(c) check: $side_check"
if [ -n "$first_loss" ]; then
	echo "(d) loss begins at $first_loss with the default 16 MiB ring"
else
	echo "(d) no loss at any step with the default 16 MiB ring: the producer is the limit"
	echo "    (unpaced ${unpaced:-?}/s wall; ${unpaced_cpu_rate:-?} markers per second of the thread's CPU time)"
fi
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
