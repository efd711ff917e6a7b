#!/usr/bin/env bash
# The always-on session (issue 24, "Aggregated always-on sessions"): two
# perfmarkd record `-a -F 99 -g` into files for BENCH_AGG_SECONDS (60), one
# with --aggregate 10 and one without, at the same time (so that whatever
# else runs on the machine is seen by both alike).  Reported:
#   - the CPU it cost: the BPF programs perfmarkd holds (run_time_ns from
#     `bpftool prog show` with kernel.bpf_stats_enabled=1; the programs are
#     found from the prog_id of perfmarkd's fds) plus perfmarkd's own
#     CPU time (/proc/PID/task/*/schedstat, ns), as a percentage of the machine
#     (all CPUs over the wall time).  Goal with --aggregate: <= 0.02 %.
#   - the bytes its files grew by, per hour.  Goal: >= 10x fewer with
#     --aggregate than without.
# Beside them, when bpftrace is installed, the floor the goal is measured
# against: bpftrace counting whole stacks in a BPF map at the same rate
# (`profile:hz:99 { @[kstack, ustack, pid, tid] = count(); }`), its BPF time
# over the same window, and each sampler's cost per run (run_time_ns /
# run_cnt).  On an idle machine nearly every sample is the idle task's, and
# the kernel stack walk of a CPU woken from halt dominates (cold caches).
# Meant for an idle machine: with -a every process is sampled, so a busy one
# (other jobs) costs more and writes more in both runs; the load average is
# printed beside the figures.
#
#   bash bench/bench-aggregate.sh [BUILD_DIR]
#   (BENCH_AGG_SECONDS: each run's length, default 60)
. "$(dirname "$0")/lib.sh"
bench_setup bench-aggregate "$@"
secs=${BENCH_AGG_SECONDS:-60}
PERFMARKD=$build/perfmarkd
[ -x "$PERFMARKD" ] || die "no perfmarkd at $PERFMARKD (build first)"
command -v bpftool >/dev/null || [ -x /usr/sbin/bpftool ] || die "bpftool missing"
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)

W=$(mktemp -d /tmp/perfmark-bench.XXXXXX)
PINS=/sys/fs/bpf/perfmark-bench-$$
stats0=$(sysctl -n kernel.bpf_stats_enabled)
finish() {
	local p d
	for p in "$W"/pid.*; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
	wait
	for d in "$PINS"-*/*; do [ -d "$d" ] && rm -f "$d"/* && rmdir "$d"; done
	rmdir "$PINS"-* 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$stats0"
	rm -rf "$W"
}
trap finish EXIT
sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"
export PERFMARK_NO_DAEMON=0
clk=$(getconf CLK_TCK) ncpu=$(nproc)

# the run time (ns) of every BPF program process $PMD holds; the runs and run time of its perf_event ones
bpf_ns() {
	local ids
	ids=$(cat /proc/"$PMD"/fdinfo/* 2>/dev/null | sed -n 's/^prog_id:[[:space:]]*\([0-9]*\)/\1/p' | sort -u)
	local id t=0 r=0 e=0 n c
	for id in $ids; do
		read -r n c < <("$BPFTOOL" prog show id "$id" 2>/dev/null |
			sed -n 's/^[0-9]*: perf_event .*run_time_ns \([0-9]*\) run_cnt \([0-9]*\).*/\1 \2/p
				s/^[0-9]*: [a-z_]* .*run_time_ns \([0-9]*\).*/\1 0/p' | head -n 1)
		t=$((t + ${n:-0})) r=$((r + ${c:-0}))
		[ "${c:-0}" -gt 0 ] && e=$((e + n))
	done
	echo "$t $r $e"
}
# perfmarkd's user + system time, ns
# (schedstat: ns, every thread; /proc/PID/stat's ticks are 10 ms, all an idle daemon spends in 30 s)
pmd_ns() {
	local t n=0 x
	for t in /proc/"$PMD"/task/*/schedstat; do
		read -r x _ <"$t" 2>/dev/null && n=$((n + x))
	done
	if [ "$n" -eq 0 ]; then
		awk -v hz="$clk" '{ sub(/^.*\) /, ""); printf "%.0f\n", ($12 + $13) * 1e9 / hz }' /proc/"$PMD"/stat
	else
		echo "$n"
	fi
}
dir_bytes() { du -sb --apparent-size "$1" 2>/dev/null | cut -f1; }

# one NAME ARGS...: its own perfmarkd; writes "cpu% bytes_per_hour bpf_ns pmd_ns" to $W/res.NAME
one() {
	local name=$1 d=$W/out.$1 PMD
	shift
	mkdir -p "$d"
	export PERFMARK_SOCKET=$W/$name.sock
	"$PERFMARKD" --foreground --socket "$PERFMARK_SOCKET" --state-dir "$W/state.$name" \
		--pin-dir "$PINS-$name" >>"$W/pmd.log" 2>&1 &
	PMD=$!
	echo "$PMD" >"$W/pid.$name"
	local i
	for i in $(seq 100); do
		[ -S "$PERFMARK_SOCKET" ] && "$PERFMARK" session list >/dev/null 2>&1 && break
		sleep 0.1
	done
	"$PERFMARK" session create "bench-$name" -a -F 99 -g "$@" -o "$d" >>"$W/create.$name.log" 2>&1 ||
		{ cat "$W/create.$name.log" "$W/pmd.log" >&2; die "session create failed"; }
	# start-up (loading, the first synthesized records) is not what an hour costs
	sleep 2
	local b0 p0 s0 t0 b1 p1 s1 t1 r0 r1 e0 e1
	read -r b0 r0 e0 < <(bpf_ns)
	p0=$(pmd_ns) s0=$(dir_bytes "$d") t0=$(date +%s%N)
	sleep "$secs"
	read -r b1 r1 e1 < <(bpf_ns)
	p1=$(pmd_ns) s1=$(dir_bytes "$d") t1=$(date +%s%N)
	"$PERFMARK" session stop "bench-$name" >/dev/null 2>&1
	# what the files hold: the sampling event's records, markers, sideband
	local f recs=0 mk=0 side=0 n m x
	for f in "$d"/*; do
		perf report -i "$f" --stats 2>/dev/null >"$W/stats.$name"
		read -r n m x < <(awk '/^cpu-clock stats:|^cycles stats:/ { e = 1; next } /^[^ ].* stats:/ { e = 0 }
			/^perfmark:uevent stats:/ { u = 1; next } /^[^ ].* stats:/ { u = 0 }
			e && /SAMPLE events:/ { s += $3 } u && /SAMPLE events:/ { m += $3 }
			/^ *(MMAP|MMAP2|COMM|FORK|EXIT) events:/ { x += $3 }
			END { print s + 0, m + 0, x + 0 }' "$W/stats.$name")
		recs=$((recs + n)) mk=$((mk + m)) side=$((side + x))
	done
	echo "$recs $mk $side" >"$W/recs.$(basename "$d")"
	"$PERFMARK" session delete "bench-$name" >/dev/null 2>&1
	kill "$PMD"; wait "$PMD" 2>/dev/null
	rm -f "$W/pid.$name"
	awk -v b=$((b1 - b0)) -v p=$((p1 - p0)) -v s=$((s1 - s0)) -v t=$((t1 - t0)) -v n="$ncpu" \
		-v r=$((r1 - r0)) -v e=$((e1 - e0)) \
		'BEGIN { printf "%.4f %.0f %d %d %.0f\n", 100 * (b + p) / (t * n), s * 3600e9 / t, b, p,
			 (r > 0 ? e / r : 0) }' >"$W/res.$name"
}

# the floor: bpftrace counting stacks in a map, its BPF time over a window as long
floor_run() {
	local PMD b0 b1 r0 r1 e0 e1 t0 t1 i
	bpftrace -e 'profile:hz:99 { @[kstack, ustack, pid, tid] = count(); } END { clear(@); }' \
		>"$W/bpftrace.log" 2>&1 &
	PMD=$!
	echo "$PMD" >"$W/pid.bpftrace"
	for i in $(seq 100); do
		[ -n "$(grep -l '^prog_id' /proc/"$PMD"/fdinfo/* 2>/dev/null)" ] && break
		sleep 0.1
	done
	sleep 2
	read -r b0 r0 e0 < <(bpf_ns)
	t0=$(date +%s%N)
	sleep "$secs"
	read -r b1 r1 e1 < <(bpf_ns)
	t1=$(date +%s%N)
	kill -INT "$PMD"
	for i in $(seq 50); do kill -0 "$PMD" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$PMD" 2>/dev/null
	wait "$PMD" 2>/dev/null
	rm -f "$W/pid.bpftrace"
	awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v n="$ncpu" -v r=$((r1 - r0)) \
		'BEGIN { printf "%.4f %d %.0f\n", 100 * b / (t * n), b, (r > 0 ? b / r : 0) }' >"$W/res.floor"
}

echo "bench-aggregate: perfmarkd session -a -F 99 -g into files, ${secs} s each, $ncpu CPUs," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
one agg --aggregate 10 &
one plain &
command -v bpftrace >/dev/null && floor_run &
# (a wait can return early, on a signal a child's kill delivers: until none is left)
while [ -n "$(jobs -pr)" ]; do wait; done
[ -s "$W/res.agg" ] && [ -s "$W/res.plain" ] || { cat "$W"/*.log >&2; die "a run failed"; }
read -r acpu abytes abpf apmd arun <"$W/res.agg"
read -r pcpu pbytes pbpf ppmd prun <"$W/res.plain"
printf "  %-32s %9s %10s %10s %14s %10s\n" "" "CPU %" "BPF ms" "daemon ms" "bytes/hour" "ns/sample"
printf "  %-32s %9.4f %10.1f %10.1f %14.0f %10.0f\n" "-a -F 99 -g --aggregate 10" "$acpu" \
	"$(calc "$abpf / 1e6")" "$(calc "$apmd / 1e6")" "$abytes" "$arun"
printf "  %-32s %9.4f %10.1f %10.1f %14.0f %10.0f\n" "-a -F 99 -g" "$pcpu" \
	"$(calc "$pbpf / 1e6")" "$(calc "$ppmd / 1e6")" "$pbytes" "$prun"
if [ -s "$W/res.floor" ]; then
	read -r fcpu fbpf frun <"$W/res.floor"
	printf "  %-32s %9.4f %10.1f %10s %14s %10.0f\n" "floor: bpftrace stacks in a map" "$fcpu" \
		"$(calc "$fbpf / 1e6")" "-" "-" "$frun"
else
	echo "  (no bpftrace: the floor of counting stacks in a BPF map is not measured)"
fi
read -r arecs amk aside <"$W/recs.out.agg"
read -r precs pmk pside <"$W/recs.out.plain"
echo "  records in the files, with and without --aggregate: samples $arecs and $precs," \
	"markers $amk and $pmk, sideband $aside and $pside"
echo "  (a busy machine's markers and sideband (other jobs' processes) are written as they are:" \
	"they, not the samples, then make the file)"
verdict() { awk "BEGIN { exit !($1) }" && echo PASS || echo FAIL; }
echo "  aggregated session CPU: $acpu % of the machine (goal <= 0.02 %): $(verdict "$acpu <= 0.02")" \
	"${fcpu:+(the bpftrace floor: $fcpu %)}"
ratio=$(awk -v p="$pbytes" -v a="$abytes" 'BEGIN { printf "%.1f", (a > 0) ? p / a : 0 }')
echo "  file per hour: ${ratio}x smaller with --aggregate 10 (goal >= 10x): $(verdict "$ratio >= 10")"
