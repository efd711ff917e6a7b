#!/usr/bin/env bash
# Recorder benchmarks: perfmark record against perf record, side by side.
#
#   bench/run.sh [BUILD_DIR]          (make bench runs ./bench/run.sh build)
#
# Environment: BENCH_ROUNDS (default 5), BENCH_ITERS (loop iterations,
# default 40000000, ~2 s), BENCH_FREQ (default 4000).
#
# 1. A fixed-work CPU loop (bench/loop.c) runs bare, under
#    `perf record -e cpu-clock -F 4000 -g` and under `perfmark record -F 4000 -g`,
#    alternating, BENCH_ROUNDS rounds each.  Reported, as medians:
#    - the loop's wall time (measured by the loop itself) and its slowdown
#      against the bare run; factor = time under tool / bare time;
#    - ratio = perfmark factor / perf factor (1.00 = as cheap as perf);
#    - the recorder's own CPU time: user+sys of the recorder and its children
#      (/usr/bin/time) minus the CPU time the loop reports for itself;
#    - the size of the file written.
# 2. Every bench/bench-*.sh found, run as `bash bench/bench-NAME.sh BUILD_DIR`
#    (start-up, in-process and through perfmarkd: bench-startup.sh).
. "$(dirname "$0")/lib.sh"
bench_setup bench "$@"

W=$(mktemp -d /tmp/perfmark-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
build_loop

# one_run KIND ROUND: appends "wall workcpu totalcpu size" to $W/KIND.res
one_run() {
	local kind=$1 r=$2
	local res=$W/loop.$kind.$r out=$W/out.$kind.data
	rm -f "$out"
	case $kind in
	bare) /usr/bin/time -f '%U %S' -o "$W/time" "$W/loop" "$iters" "$res";;
	perf) /usr/bin/time -f '%U %S' -o "$W/time" \
		perf record -q -e cpu-clock -F "$freq" -g -o "$out" -- "$W/loop" "$iters" "$res" \
		>/dev/null 2>"$W/err.$kind";;
	perfmark) /usr/bin/time -f '%U %S' -o "$W/time" \
		"$PERFMARK" record -F "$freq" -g -o "$out" -- "$W/loop" "$iters" "$res" \
		>/dev/null 2>"$W/err.$kind";;
	esac
	[ -s "$res" ] || { cat "$W/err.$kind" >&2 2>/dev/null; die "$kind run $r failed"; }
	local size=0
	[ -f "$out" ] && size=$(stat -c %s "$out")
	read -r wall wcpu _ <"$res"
	read -r u s < <(tail -n 1 "$W/time")
	echo "$wall $wcpu $(awk "BEGIN { print $u + $s }") $size" >>"$W/$kind.res"
}

echo "perfmark recorder benchmark: loop $iters iterations, -F $freq -g, $rounds rounds"
echo "  perf: $(perf version)   perfmark: $PERFMARK"
load=$(cut -d' ' -f1 /proc/loadavg)
echo "  load average $load on $(nproc) CPUs"
awk "BEGIN { exit !($load > 0.5) }" &&
	echo "  warning: the machine is busy; the loop's wall time will be noisy (compare the cpu columns)"
"$W/loop" 1000000 /dev/null   # warm the caches
for r in $(seq "$rounds"); do
	# rotate the order each round so drift hits every kind alike
	case $((r % 3)) in
	1) order="bare perf perfmark";;
	2) order="perf perfmark bare";;
	0) order="perfmark bare perf";;
	esac
	for k in $order; do one_run "$k" "$r"; done
	printf '  round %d/%d done\n' "$r" "$rounds"
done

bare_wall=$(col bare 1); bare_cpu=$(col bare 2)
echo
echo "medians of $rounds rounds; factor = loop time under the tool / bare loop time"
printf '%-9s %9s %9s %8s %9s %9s %8s %13s %9s\n' tool "wall s" slowdown factor "cpu s" slowdown factor "recorder cpu" "file MiB"
printf '%-9s %9.3f %9s %8.3f %9.3f %9s %8.3f %13s %9s\n' bare "$bare_wall" - 1 "$bare_cpu" - 1 - -
for k in perf perfmark; do
	w=$(col "$k" 1); c=$(col "$k" 2)
	eval "${k}_wf=$(calc "$w / $bare_wall")" "${k}_cf=$(calc "$c / $bare_cpu")"
	printf '%-9s %9.3f %8.1f%% %8.3f %9.3f %8.1f%% %8.3f %11.3f s %9.2f\n' "$k" \
		"$w" "$(calc "($w / $bare_wall - 1) * 100")" "$(calc "$w / $bare_wall")" \
		"$c" "$(calc "($c / $bare_cpu - 1) * 100")" "$(calc "$c / $bare_cpu")" \
		"$(rec_cpu "$k")" "$(calc "$(col "$k" 4) / 1048576")"
done
echo
printf 'perfmark factor / perf factor: wall %.3f, cpu %.3f   (1.000 = same cost as perf)\n' \
	"$(calc "$perfmark_wf / $perf_wf")" "$(calc "$perfmark_cf / $perf_cf")"

# --- further benchmarks (markers, ...) -------------------------------------------
for b in "$here"/bench-*.sh; do
	[ -f "$b" ] || continue
	echo
	echo "=== $(basename "$b")"
	bash "$b" "$build"
	rc=$?
	[ "$rc" -eq 0 ] || echo "bench: $(basename "$b") failed (rc $rc)"
done
