#!/usr/bin/env bash
# Start-up (issue 24): a recording loads only the BPF programs it needs, and
# perfmarkd keeps an anonymous recording's loaded, verified programs for the
# next one.  The programs a process holds are read from /proc/PID/fdinfo
# (prog_id of its program and link fds) and named by bpftool.
#  1. in-process `record -- CMD`, while CMD waits: on_sample is held (the
#     check sees programs at all), none of the gap sideband's (gap_*: only a
#     pinned collection runs them; the verifier took longer over them than
#     over all the others), no unwinder exec stamp (uw_prepare_exec) without
#     --call-graph ehframe, no tracepoint program (on_tracepoint) without a
#     tracepoint event; with --call-graph ehframe, uw_prepare_exec is held.
#     The marker sites of libperfmark (the one next to perfmark) are on one
#     uprobe_multi link to on_probe where the kernel has them (6.6): no
#     per-site program (on_register, on_trap, on_marker), each of which cost
#     a wait for grace periods per site as the recording ended; with
#     --no-markers no marker program at all.  Every link a recording held is
#     gone once it exited.  With --off-cpu: off_switch, off_waking and
#     off_sys_exit (a command's waits in a system call get their user stack
#     as they leave it).
#  2. a named session in perfmarkd (pinned: it may outlive the daemon) has
#     the gap programs; a system-wide --off-cpu one has no off_sys_exit
#     (it would run at every system call of the machine).
#  3. perfmarkd --linger 60: a second anonymous recording with the same
#     options runs on the very on_sample (its id) of the first, and record
#     -v counts the second one's markers by lane (fast + trap = its own N),
#     not the first one's too.
#  4. perfmarkd --linger 1: after a recording the daemon lets its programs
#     go (polled, with a deadline), and stops waking up.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
command -v bpftool >/dev/null || [ -x /usr/sbin/bpftool ] || skip "bpftool not installed"
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)
PF=$PROGS/prog-first
[ -x "$PF" ] || skip "no test program $PF"

# prog_names PID: the names of the BPF programs PID holds, one a line
prog_names() {
	local f id
	for f in /proc/"$1"/fdinfo/*; do
		sed -n 's/^prog_id:[[:space:]]*\([0-9]*\)$/\1/p' "$f" 2>/dev/null
	done | sort -un | while read -r id; do
		"$BPFTOOL" prog show id "$id" 2>/dev/null | sed -n 's/^[0-9]*: [a-z_]*  name \([A-Za-z0-9_]*\) .*/\1/p'
	done | sort -u
}
# prog_id PID NAME: the id of PID's program NAME (empty: none)
prog_id() {
	local f id
	for f in /proc/"$1"/fdinfo/*; do
		sed -n 's/^prog_id:[[:space:]]*\([0-9]*\)$/\1/p' "$f" 2>/dev/null
	done | sort -un | while read -r id; do
		"$BPFTOOL" prog show id "$id" 2>/dev/null | grep -q " name $2 " && echo "$id"
	done | head -n 1
}
# link_ids PID: "ID TYPE" of each BPF link PID holds
link_ids() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^link_type:/ { t = $2 } /^link_id:/ { i = $2 } END { if (i != "") print i, t }' "$f" 2>/dev/null
	done
}
# waiting N: a command that says it started ($T/startedN) and waits for $T/goN
waiting() { echo "touch '$T/started$1'; while [ ! -e '$T/go$1' ]; do sleep 0.05; done"; }
wait_file() {
	local i
	for i in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}

# --- 1. in-process: what a recording holds while its command runs ------------
# inproc N RECORD-OPTIONS...: the programs of `record OPTS -- CMD` in $T/progsN
inproc() {
	local n=$1 rec
	shift
	bg env PERFMARK_NO_DAEMON=1 "$PERFMARK" record "$@" -o "$T/in$n.data" -- sh -c "$(waiting "$n")" \
		2>"$T/in$n.err"
	rec=$BG_PID
	wait_file "$T/started$n" || die "record $* never started its command" -- "$T/in$n.err"
	prog_names "$rec" >"$T/progs$n"
	link_ids "$rec" >"$T/links$n"
	touch "$T/go$n"
	wait "$rec" || die "record $* exited $?" -- "$T/in$n.err"
	# its links went with it: none is left attached
	while read -r id type; do
		"$BPFTOOL" link show id "$id" >/dev/null 2>&1 &&
			die "record $* exited, its $type link $id is still there" -- "$T/links$n"
	done <"$T/links$n"
}
inproc 1 -F 99 -g
grep -qx on_sample "$T/progs1" || die "record -g: no on_sample among its programs (the check reads nothing?)" -- "$T/progs1"
for p in gap_exec gap_exit gap_fork gap_rename uw_prepare_exec on_tracepoint; do
	grep -qx "$p" "$T/progs1" && die "record -g loaded $p, which it does not run" -- "$T/progs1"
done
ok "record -F 99 -g holds $(tr '\n' ' ' <"$T/progs1")(no gap_*, uw_prepare_exec, on_tracepoint)"
[ -s "$T/links1" ] || die "record -g: no BPF links seen (the check reads nothing?)"
ok "record -g: its $(wc -l <"$T/links1") BPF links are gone once it exited"
kmaj=$(uname -r | cut -d. -f1) kmin=$(uname -r | cut -d. -f2)
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" -eq 6 ] && [ "${kmin%%[!0-9]*}" -ge 6 ]; }; then
	grep -qx on_probe "$T/progs1" || die "record -g: no on_probe for the marker sites" -- "$T/progs1"
	for p in on_register on_trap on_marker; do
		grep -qx "$p" "$T/progs1" && die "record -g loaded $p: a perf-event link per marker site" -- "$T/progs1"
	done
	[ "$(grep -c ' uprobe_multi$' "$T/links1")" -eq 1 ] ||
		die "record -g: not one uprobe_multi link for libperfmark's sites" -- "$T/links1"
	ok "record -g: libperfmark's marker sites on one uprobe_multi link (on_probe), no per-site programs"
fi
inproc 0 -F 99 --no-markers
for p in on_probe on_register on_trap on_marker; do
	grep -qx "$p" "$T/progs0" && die "record --no-markers loaded $p" -- "$T/progs0"
done
ok "record --no-markers holds no marker program"
inproc 2 -F 99 --call-graph ehframe
grep -qx gap_exec "$T/progs2" && die "record --call-graph ehframe loaded the gap sideband" -- "$T/progs2"
if "$BPFTOOL" btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "'btf_trace_sched_prepare_exec'"; then
	grep -qx uw_prepare_exec "$T/progs2" ||
		die "record --call-graph ehframe does not hold uw_prepare_exec" -- "$T/progs2"
	ok "record --call-graph ehframe holds uw_prepare_exec, and still no gap sideband"
fi
# off-CPU of a command: user stacks of waits in a system call taken as the thread leaves it
inproc 9 -F 99 -g --off-cpu
for p in off_switch off_waking off_sys_exit; do
	grep -qx "$p" "$T/progs9" || die "record --off-cpu -- CMD does not hold $p" -- "$T/progs9"
done
ok "record --off-cpu -- CMD holds off_switch, off_waking and off_sys_exit"

# --- 2. a named (pinned) session has the gap sideband --------------------------
daemon_start
pm session create pinned -a -F 99 || die "session create failed" -- "$T/pmd.log"
names=$(prog_names "$PMD_PID")
for p in gap_exec gap_exit gap_fork gap_rename; do
	grep -qx "$p" <<<"$names" || die "a pinned session has no $p" -- "$T/pmd.log"
done
pm session delete pinned || die "session delete failed" -- "$T/pmd.log"
ok "a named session in perfmarkd holds gap_exec, gap_exit, gap_fork, gap_rename"
# system-wide off-CPU takes user stacks at the switch: no program at every system call of the machine
pm session create offall -a -F 99 --off-cpu || die "session create --off-cpu failed" -- "$T/pmd.log"
names=$(prog_names "$PMD_PID")
grep -qx off_switch <<<"$names" || die "a system-wide --off-cpu session has no off_switch" -- "$T/pmd.log"
grep -qx off_sys_exit <<<"$names" && die "a system-wide --off-cpu session runs off_sys_exit at every system call"
pm session delete offall || die "session delete failed" -- "$T/pmd.log"
ok "a system-wide --off-cpu session holds off_switch, not off_sys_exit"
kill "$PMD_PID"
wait "$PMD_PID" 2>/dev/null
PMD_PID=

# --- 3. --linger: the next anonymous recording runs on the same programs ------
PMD_ARGS="--linger 60" daemon_start
N=2000
ids=()
for n in 3 4; do
	bg "$PERFMARK" record -v -o "$T/d$n.data" -- sh -c "$(waiting "$n"); exec '$PF' wait $N" \
		>"$T/d$n.out" 2>"$T/d$n.err"
	rec=$BG_PID
	wait_file "$T/started$n" || die "record through perfmarkd never started its command" -- "$T/d$n.err"
	ids+=("$(prog_id "$PMD_PID" on_sample)")
	touch "$T/go$n"
	wait "$rec" || die "record through perfmarkd exited $?" -- "$T/d$n.err" "$T/pmd.log"
	grep -q 'via perfmarkd' "$T/d$n.err" || die "the recording did not go through perfmarkd" -- "$T/d$n.err"
	# by lane: this recording's N, not the one before's as well (how many
	# take the trap lane before the daemon joins depends on the load)
	read -r fast trap <<<"$(sed -n 's/.*perfmark record: \([0-9]*\) markers through the fast lane, \([0-9]*\) through the trap lane.*/\1 \2/p' "$T/d$n.err")"
	[ -n "$fast" ] && [ $((fast + trap)) -eq $N ] ||
		die "recording $((n - 2)) through perfmarkd: record -v counts ${fast:-?} + ${trap:-?} markers by lane, not its own $N" \
			-- "$T/d$n.err"
done
[ -n "${ids[0]}" ] || die "perfmarkd held no on_sample while recording" -- "$T/pmd.log"
[ "${ids[0]}" = "${ids[1]}" ] ||
	die "the second recording loaded on_sample again (id ${ids[1]}, the first's ${ids[0]})" -- "$T/pmd.log"
ok "perfmarkd --linger 60: two recordings on one on_sample (id ${ids[0]}), each counting its own $N markers"
kill "$PMD_PID"
wait "$PMD_PID" 2>/dev/null
PMD_PID=

# --- 4. and lets them go after the linger time ---------------------------------
PMD_ARGS="--linger 1" daemon_start
pm record -o "$T/d5.data" -- true 2>"$T/d5.err" || die "record -- true through perfmarkd failed" -- "$T/d5.err"
let_go() { [ -z "$(prog_id "$PMD_PID" on_sample)" ]; }
wait_until 60 let_go || die "perfmarkd --linger 1 still holds on_sample 60 s after the recording"
# and its tick with them: idle again, no periodic wakeups (as t-daemon-idle)
w1=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$PMD_PID/status")
let_time_pass 3 "the idle daemon's wakeups are counted over 3 s"
w2=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$PMD_PID/status")
[ $((w2 - w1)) -le 1 ] || die "perfmarkd woke up $((w2 - w1)) times in 3 s after letting the programs go"
ok "perfmarkd --linger 1: the programs are let go after the recording, and the daemon is idle again"
echo "t-startup-programs: all checks passed"
