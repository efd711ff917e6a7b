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
# The runs start together and are then read by one coordinator: CPU
# readings before and after, file sizes right around one shared window in
# which the bench starts no process (an -a session writes the exec and
# mmaps of every bpftool and du that measures it as sideband).
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

# start NAME ARGS...: its own perfmarkd (pid in $W/pid.NAME) with the session bench-NAME -a -F 99 -g ARGS
# writing into $W/out.NAME
start() {
	local name=$1 d=$W/out.$1 sock=$W/$1.sock pmd i
	shift
	mkdir -p "$d"
	"$PERFMARKD" --foreground --socket "$sock" --state-dir "$W/state.$name" \
		--pin-dir "$PINS-$name" >>"$W/pmd.log" 2>&1 &
	pmd=$!
	echo "$pmd" >"$W/pid.$name"
	for i in $(seq 100); do
		[ -S "$sock" ] && PERFMARK_SOCKET=$sock "$PERFMARK" session list >/dev/null 2>&1 && break
		sleep 0.1
	done
	PERFMARK_SOCKET=$sock "$PERFMARK" session create "bench-$name" -a -F 99 -g "$@" -o "$d" \
		>>"$W/create.$name.log" 2>&1 || { cat "$W/create.$name.log" "$W/pmd.log" >&2; die "session create failed"; }
	touch "$W/ok.$name"
}

# the floor: bpftrace counting stacks in a map at the same rate
start_floor() {
	local i pid
	bpftrace -e 'profile:hz:99 { @[kstack, ustack, pid, tid] = count(); } END { clear(@); }' \
		>"$W/bpftrace.log" 2>&1 &
	pid=$!
	echo "$pid" >"$W/pid.floor"
	for i in $(seq 100); do
		[ -n "$(grep -l '^prog_id' /proc/"$pid"/fdinfo/* 2>/dev/null)" ] && touch "$W/ok.floor" && break
		sleep 0.1
	done
}

# read NAME: "time_ns bpf_ns runs perf_event_ns daemon_ns" of that run now
read_cpu() {
	local PMD p=0
	PMD=$(cat "$W/pid.$1")
	[ "$1" != floor ] && p=$(pmd_ns)
	echo "$(date +%s%N) $(bpf_ns) $p"
}

echo "bench-aggregate: perfmarkd session -a -F 99 -g into files, ${secs} s each, $ncpu CPUs," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
runs="agg plain"
start agg --aggregate 10 &
start plain &
if command -v bpftrace >/dev/null; then start_floor & runs="$runs floor"; fi
# (a wait can return early, on a signal a child's kill delivers: until none is left)
while [ -n "$(jobs -pr)" ]; do wait; done
for r in $runs; do [ -e "$W/ok.$r" ] || { cat "$W"/*.log >&2; die "the $r run did not start"; }; done
# The readings start no process inside the window the files are measured
# over: every exec and mmap is sideband that both -a sessions write, as
# they write the exec of a bpftool that reads the other daemon's
# programs, which made the file of an idle machine (bpftool, awk, sed,
# du ... of three runs measuring each other: ~1800 records in 30 s).
# So the CPU readings come first and last, the file sizes right around
# the window, once the readings' records have been drained to the files.
sleep 2      # start-up (loading, the first synthesized records) is not what an hour costs
for r in $runs; do read_cpu "$r" >"$W/cpu0.$r"; done
sleep 3      # the readings' own sideband reaches the files (a drain tick is at most 1 s)
s0a=$(dir_bytes "$W/out.agg") s0p=$(dir_bytes "$W/out.plain") t0=$(date +%s%N)
sleep "$secs"
t1=$(date +%s%N) s1a=$(dir_bytes "$W/out.agg") s1p=$(dir_bytes "$W/out.plain")
for r in $runs; do read_cpu "$r" >"$W/cpu1.$r"; done

# res NAME BYTES: "cpu% bytes_per_hour bpf_ns daemon_ns ns_per_run" of that run
res() {
	local a0 b0 r0 e0 p0 a1 b1 r1 e1 p1
	read -r a0 b0 r0 e0 p0 <"$W/cpu0.$1"
	read -r a1 b1 r1 e1 p1 <"$W/cpu1.$1"
	awk -v b=$((b1 - b0)) -v p=$((p1 - p0)) -v t=$((a1 - a0)) -v n="$ncpu" -v s="$2" \
		-v w=$((t1 - t0)) -v r=$((r1 - r0)) -v e=$((e1 - e0)) \
		'BEGIN { printf "%.4f %.0f %d %d %.0f\n", 100 * (b + p) / (t * n), s * 3600e9 / w, b, p,
			 (r > 0 ? e / r : 0) }'
}
res agg $((s1a - s0a)) >"$W/res.agg"
res plain $((s1p - s0p)) >"$W/res.plain"
[ -s "$W/pid.floor" ] && res floor 0 >"$W/res.floor"

# stop NAME: what its files hold (the sampling event's records, markers, sideband) in $W/recs.NAME
stop() {
	local name=$1 d=$W/out.$1 f recs=0 mk=0 side=0 n m x
	PERFMARK_SOCKET=$W/$name.sock "$PERFMARK" session stop "bench-$name" >/dev/null 2>&1
	for f in "$d"/*; do
		perf report -i "$f" --stats 2>/dev/null >"$W/stats.$name"
		read -r n m x < <(awk '/^cpu-clock stats:|^cycles stats:/ { e = 1; next } /^[^ ].* stats:/ { e = 0 }
			/^perfmark:uevent stats:/ { u = 1; next } /^[^ ].* stats:/ { u = 0 }
			e && /SAMPLE events:/ { s += $3 } u && /SAMPLE events:/ { m += $3 }
			/^ *(MMAP|MMAP2|COMM|FORK|EXIT) events:/ { x += $3 }
			END { print s + 0, m + 0, x + 0 }' "$W/stats.$name")
		recs=$((recs + n)) mk=$((mk + m)) side=$((side + x))
	done
	echo "$recs $mk $side" >"$W/recs.out.$name"
	PERFMARK_SOCKET=$W/$name.sock "$PERFMARK" session delete "bench-$name" >/dev/null 2>&1
	kill "$(cat "$W/pid.$name")"
	rm -f "$W/pid.$name"
}
stop agg
stop plain
if [ -s "$W/pid.floor" ]; then
	kill -INT "$(cat "$W/pid.floor")"
	for i in $(seq 50); do kill -0 "$(cat "$W/pid.floor")" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$(cat "$W/pid.floor")" 2>/dev/null
	rm -f "$W/pid.floor"
fi
wait
read -r acpu abytes abpf apmd arun <"$W/res.agg"
read -r pcpu pbytes pbpf ppmd prun <"$W/res.plain"
printf "  %-32s %9s %10s %10s %14s %10s\n" "" "CPU %" "BPF ms" "daemon ms" "bytes/hour" "ns/sample"
printf "  %-32s %9.4f %10.1f %10.1f %14.0f %10.0f\n" "-a -F 99 -g --aggregate 10" "$acpu" \
	"$(calc "$abpf / 1e6")" "$(calc "$apmd / 1e6")" "$abytes" "$arun"
printf "  %-32s %9.4f %10.1f %10.1f %14.0f %10.0f\n" "-a -F 99 -g" "$pcpu" \
	"$(calc "$pbpf / 1e6")" "$(calc "$ppmd / 1e6")" "$pbytes" "$prun"
if [ -s "$W/res.floor" ]; then
	read -r fcpu _ fbpf _ frun <"$W/res.floor"
	printf "  %-32s %9.4f %10.1f %10s %14s %10.0f\n" "floor: bpftrace stacks in a map" "$fcpu" \
		"$(calc "$fbpf / 1e6")" "-" "-" "$frun"
else
	echo "  (no bpftrace: the floor of counting stacks in a BPF map is not measured)"
fi
read -r arecs amk aside <"$W/recs.out.agg"
read -r precs pmk pside <"$W/recs.out.plain"
echo "  records in the files, with and without --aggregate: samples $arecs and $precs," \
	"markers $amk and $pmk, sideband $aside and $pside (most of it the processes found at the start)"
echo "  (a busy machine's markers and sideband (other jobs' processes) are written as they are:" \
	"they, not the samples, then make the file)"
verdict() { awk "BEGIN { exit !($1) }" && echo PASS || echo FAIL; }
echo "  aggregated session CPU: $acpu % of the machine (goal <= 0.02 %): $(verdict "$acpu <= 0.02")" \
	"${fcpu:+(the bpftrace floor: $fcpu %)}"
ratio=$(awk -v p="$pbytes" -v a="$abytes" 'BEGIN { printf "%.1f", (a > 0) ? p / a : 0 }')
echo "  file per hour: ${ratio}x smaller with --aggregate 10 (goal >= 10x): $(verdict "$ratio >= 10")"
