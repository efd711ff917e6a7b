#!/usr/bin/env bash
# perfmark stat -p PID and -a: a workload the test started itself (not
# stat's child), held on a gate until the counters are open, counted
# exactly (-p: its writes and no one else's) or at least (-a: every
# process's writes, the workload's among them); -a stops on SIGINT and
# still prints, and its per-CPU clocks show every CPU.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stat-lib.sh"
need_root
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
need_counts_workload
# a gated workload: WL_PID, its gate on fd 3 (a byte starts it)
start_workload() {
	rm -f "$T/gate"
	mkfifo "$T/gate"
	exec 3<>"$T/gate"
	"$W" "$@" - <&3 &
	WL_PID=$!
	_bg_pids+=("$WL_PID")
}
ncpu=$(nproc)

# --- -p: counts the process until it exits, its writes exactly -----------
start_workload 1000 2048 50 100 20
$PERFMARK stat -p "$WL_PID" -x, -o "$T/p.csv" -e task-clock,page-faults,syscalls:sys_enter_write &
pm=$!
_bg_pids+=("$pm")
wait_perf_fds "$pm" 3 || die "stat -p did not open its counters"
echo g >&3
wait "$pm" || die "stat -p failed" -- "$T/p.csv"
exec 3>&-
$PARSE csv "$T/p.csv" >"$T/p.json" || die "stat -p: output does not parse" -- "$T/p.csv"
[ "$(val "$T/p.json" syscalls:sys_enter_write)" = 1000.0 ] || die "stat -p: not exactly 1000 writes" -- "$T/p.csv"
fcmp "$(val "$T/p.json" page-faults) >= 2048" || die "stat -p: fewer faults than pages" -- "$T/p.csv"
ok "-p PID: $(tr '\n' ' ' <"$T/p.csv")"

# -p with CMD: CMD says for how long (the target never starts: no writes)
start_workload 1000 0 1 1 0
$PERFMARK stat -p "$WL_PID" -e syscalls:sys_enter_write -o "$T/pc.txt" -- sleep 0.2 ||
	die "stat -p PID -- sleep failed" -- "$T/pc.txt"
grep -q "Performance counter stats for process id '$WL_PID'" "$T/pc.txt" || die "-p header" -- "$T/pc.txt"
# it never ran: perf's "<not counted>" (running time 0), not 0
grep -qE '^ +<not counted> +syscalls:sys_enter_write' "$T/pc.txt" || die "-p: counted a process that never ran" -- "$T/pc.txt"
bg_kill "$WL_PID"
exec 3>&-
ok "-p PID -- CMD counts for CMD's run"

# --- -a: every CPU; stops on SIGINT and prints ------------------------------
$PERFMARK stat -a -x, -o "$T/a.csv" -e task-clock,syscalls:sys_enter_write &
pm=$!
_bg_pids+=("$pm")
wait_perf_fds "$pm" $((2 * ncpu)) || die "stat -a did not open a counter per CPU"
start_workload 1000 0 10 100 0
echo g >&3
wait "$WL_PID" || die "the workload failed"
exec 3>&-
kill -INT "$pm"
wait "$pm" || die "stat -a: status $? after SIGINT" -- "$T/a.csv"
$PARSE csv "$T/a.csv" >"$T/a.json" || die "stat -a: output does not parse" -- "$T/a.csv"
fcmp "$(val "$T/a.json" syscalls:sys_enter_write) >= 1000" || die "stat -a: missed the workload's writes" -- "$T/a.csv"
# per-CPU clocks run all the time: CPUs utilized is the number of CPUs
python3 - "$T/a.csv" "$ncpu" <<'PY' || die "stat -a: task-clock is not every CPU's" -- "$T/a.csv"
import csv, sys
rows = {r[2]: r for r in csv.reader(open(sys.argv[1])) if r}
util = float(rows["task-clock"][5])
assert abs(util - int(sys.argv[2])) < 0.1 * int(sys.argv[2]), util
PY
ok "-a: $(tr '\n' ' ' <"$T/a.csv")"

# -a -- CMD: for CMD's run, 'system wide'
$PERFMARK stat -a -e task-clock,context-switches -o "$T/ac.txt" -- "$W" 10 0 1 1 0 ||
	die "stat -a -- CMD failed" -- "$T/ac.txt"
grep -q "Performance counter stats for 'system wide'" "$T/ac.txt" || die "-a header" -- "$T/ac.txt"
ok "-a -- CMD"
