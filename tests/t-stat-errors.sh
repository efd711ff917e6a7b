#!/usr/bin/env bash
# perfmark stat's (and the shared -e syntax's) bad input: one line starting
# "perfmark: " on stderr, exit status 1, nothing else printed, and the
# command never run.  Also record -e with a tracepoint, until it is recorded.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

fails=0
# expect_error NAME TEXT CMD...: status 1, exactly one stderr line, holding TEXT
expect_error() {
	local name=$1 text=$2; shift 2
	local err=$T/err.$name rc
	rm -f "$T/ran"
	timeout -k 5 30 "$@" >"$T/out.$name" 2>"$err" </dev/null
	rc=$?
	if [ "$rc" -ne 1 ]; then
		echo "FAIL [$name]: exit status $rc, want 1: $*"; fails=$((fails + 1))
	elif [ "$(wc -l <"$err")" -ne 1 ] || ! grep -q '^perfmark: ' "$err"; then
		echo "FAIL [$name]: want one 'perfmark: ' line on stderr: $*"; fails=$((fails + 1))
	elif ! grep -qF -- "$text" "$err"; then
		echo "FAIL [$name]: '$(cat "$err")' does not say '$text'"; fails=$((fails + 1))
	elif [ -s "$T/out.$name" ] || [ -e "$T/ran" ]; then
		echo "FAIL [$name]: printed on stdout or ran the command"; fails=$((fails + 1))
	else
		echo "ok [$name]: $(cat "$err")"
		return 0
	fi
	sed 's/^/    stderr| /' "$err" | head -n 5
}

S="$PERFMARK stat"
RUN=(-- touch "$T/ran")
expect_error unknown       "unknown event 'nope'"             $S -e nope "${RUN[@]}"
expect_error glob-none     "no tracepoint matches 'sched:nope_*'" $S -e 'task-clock,sched:nope_*' "${RUN[@]}"
expect_error tp-unknown    "unknown tracepoint 'nosuch:thing'" $S -e nosuch:thing "${RUN[@]}"
expect_error too-many      "tracepoints: more than the 1024 events one list takes" $S -e '*:*' "${RUN[@]}"
expect_error tp-modifier   "modifiers are not taken on tracepoints" $S -e sched:sched_switch:u "${RUN[@]}"
expect_error tp-name       "bad tracepoint name"              $S -e 'sched:sched.switch' "${RUN[@]}"
expect_error modifier      "unknown modifier 'q'"             $S -e task-clock:q "${RUN[@]}"
expect_error empty         "empty event name"                 $S -e task-clock,,page-faults "${RUN[@]}"
if [ ! -e /sys/bus/event_source/devices/cpu/type ]; then
	expect_error raw-nopmu "raw event 'r003c' needs the CPU's PMU, which this machine lacks" \
		$S -e r003c "${RUN[@]}"
	expect_error pmu-nopmu "needs the CPU's PMU, which this machine lacks" \
		$S -e cpu/event=0x3c,umask=0x00/ "${RUN[@]}"
fi
expect_error pmu-unknown   "unknown PMU 'nopmu'"              $S -e nopmu/event=1/ "${RUN[@]}"
expect_error no-target     "give a command to count"          $S -e task-clock
expect_error both-formats  "give -x SEP or --json, not both"                  $S -x, --json -e task-clock "${RUN[@]}"
expect_error interval      "bad interval '5'"                 $S -I 5 -e task-clock "${RUN[@]}"
expect_error sep           "bad field separator"              $S -x '' -e task-clock "${RUN[@]}"
expect_error bad-pid       "bad pid 'x'"                      $S -p x -e task-clock
expect_error gone-pid      "no process 2147483647"            $S -p 2147483647 -e task-clock
expect_error no-cmd        "cannot run '$T/nope'"             $S -e task-clock -- "$T/nope"
expect_error output        "cannot write $T/no/dir"           $S -o "$T/no/dir" -e task-clock "${RUN[@]}"
expect_error rec-tp        "unknown tracepoint 'sched:no_such_event'" \
	$PERFMARK record -e sched:no_such_event -o "$T/r.data" -- true
expect_error rec-count     "context-switches cannot be sampled" \
	$PERFMARK record -e context-switches -o "$T/r.data" -- true

# tracefs neither mounted nor mountable (a mount namespace where /sys/kernel
# is an empty tmpfs): one line that says so
if unshare -m true 2>/dev/null; then
	expect_error no-tracefs "tracepoints need tracefs" unshare -m sh -c \
		'mount -t tmpfs none /sys/kernel && exec "$@"' sh $S -e sched:sched_switch "${RUN[@]}"
	# not mounted, and root: mounted as perf does, and counted
	unshare -m sh -c 'umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null
		! mountpoint -q /sys/kernel/tracing && exec "$@"' sh \
		$S -x, -e sched:sched_process_exec -o "$T/mounted.csv" -- true ||
		{ echo "FAIL [mount]: stat with tracefs unmounted"; fails=$((fails + 1)); }
	grep -q '^1,,sched:sched_process_exec,' "$T/mounted.csv" 2>/dev/null ||
		{ echo "FAIL [mount]: no exec counted"; cat "$T/mounted.csv"; fails=$((fails + 1)); }
fi
[ "$fails" -eq 0 ] || die "$fails error case(s) wrong"
ok "every bad input is one line"
