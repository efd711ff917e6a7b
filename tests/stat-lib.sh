# shellcheck shell=bash
# Helpers of the counting tests: t-stat.sh, t-stat-targets.sh,
# t-session-counters.sh (source after lib.sh).

# W, prog-counts (a workload whose counts are known), and the tracepoint its
# writes are counted by: a skip without them
need_counts_workload() {
	W=$PROGS/prog-counts
	[ -x "$W" ] || skip "no test program $W"
	[ -r /sys/kernel/tracing/events/syscalls/sys_enter_write/id ] ||
		mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	[ -r /sys/kernel/tracing/events/syscalls/sys_enter_write/id ] ||
		skip "no syscalls:sys_enter_write tracepoint (kernel without CONFIG_FTRACE_SYSCALLS)"
}

PARSE="python3 $PERFMARK_SRC/tests/stat_parse.py"
# A B PCT: within PCT % of each other
near() { fcmp "($1 - $2) <= $3 * $2 / 100 && ($2 - $1) <= $3 * $2 / 100"; }
# FILE EVENT: the value of EVENT in stat_parse.py's JSON
val() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]['value'])" "$1" "$2"; }
# perf events PID holds open
nr_perf_fds() { ls -l /proc/"$1"/fd 2>/dev/null | grep -c 'anon_inode:\[perf_event\]'; }
# wait until PID holds N perf event fds, 60 s at most
has_perf_fds() { kill -0 "$1" 2>/dev/null && [ "$(nr_perf_fds "$1")" -ge "$2" ]; }
wait_perf_fds() { wait_until 60 has_perf_fds "$1" "$2"; }
