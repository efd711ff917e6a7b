#!/usr/bin/env bash
# An always-on session on a quiet machine wakes perfmarkd about once a
# second, not ten times: its drain tick slows while each tick reads only a
# trickle (-a -F 10 reads 20 samples a second), and each wakeup of the
# daemon costs ~100 us of a VM's CPU however little it reads.  A live reader
# (session attach) brings the tick back to SESSION_DRAIN_MS; nothing read
# while the tick was slow is lost.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
daemon_start

wakeups() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$PMD_PID/status"; }
# wakeups_over SECONDS WHY: the daemon's wakeups while SECONDS pass
wakeups_over() {
	local w1 w2
	w1=$(wakeups)
	let_time_pass "$1" "$2"
	w2=$(wakeups)
	echo $((w2 - w1))
}

mkdir "$T/out"
pm session create quiet -a -F 10 --output "$T/out" >/dev/null 2>"$T/create.err" ||
	die "session create failed" -- "$T/create.err"
wait_until 60 session_at_least quiet samples 1 || die "the session records no samples" -- "$T/pmd.log"
let_time_pass 3 "the tick slows from 100 ms to 1 s over 2.5 s of quiet ticks"
quiet=$(wakeups_over 4 "the quiet daemon's wakeups are counted over 4 s")
echo "quiet: $quiet wakeups in 4 s"
# 4 at the slow tick; 40 at the fast one (before: every tick that read a record kept it fast)
[ "$quiet" -le 12 ] || die "perfmarkd woke $quiet times in 4 s for a -a -F 10 session (want about 4)"
ok "a -a -F 10 session: $quiet wakeups in 4 s"

# a live reader: rounds go out at the fast tick again
pm session attach quiet -o - >"$T/live.data" 2>"$T/attach.err" &
att=$!
_bg_pids+=("$att")
wait_until 30 test -s "$T/live.data" || die "session attach wrote nothing" -- "$T/attach.err"
live=$(wakeups_over 2 "the attached daemon's wakeups are counted over 2 s")
echo "attached: $live wakeups in 2 s"
[ "$live" -ge 8 ] || die "with a live reader perfmarkd woke only $live times in 2 s (want about 20)"
ok "a live reader attached: $live wakeups in 2 s"
kill "$att" 2>/dev/null
wait "$att" 2>/dev/null

# what came in while the tick was slow is all in the file
pm session stop quiet >/dev/null 2>"$T/stop.err" || die "session stop failed" -- "$T/stop.err"
n=$(session_field quiet samples)
got=0
for f in "$T"/out/quiet-*.perf.data; do
	[ -s "$f" ] || die "no file in $T/out"
	got=$((got + $(perf script -i "$f" -F event 2>/dev/null | grep -c 'cpu-clock\|cycles')))
done
[ "$got" -ge "$n" ] && [ "$got" -gt 0 ] ||
	die "the session counted $n samples, its files hold $got"
ok "the file holds every sample the session counted ($got of $n)"
pm session delete quiet >/dev/null 2>&1
