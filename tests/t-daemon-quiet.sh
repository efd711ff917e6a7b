#!/usr/bin/env bash
# An always-on session on a quiet machine wakes perfmarkd about once in four
# seconds, not ten times a second: its drain tick slows while each tick reads
# only a trickle (-a -F 10 reads 20 samples a second), and each wakeup of the
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
let_time_pass 7 "the tick slows from 100 ms to 4 s over 6.3 s of quiet ticks"
quiet=$(wakeups_over 16 "the quiet daemon's wakeups are counted over 16 s")
echo "quiet: $quiet wakeups in 16 s"
# 4 at the slow tick, and 6 more for each burst of another program's records
# (the tick back at 100 ms, then slowing again); 16 at the old 1 s tick; 160
# at the fast one (before: every tick that read a record kept it fast)
[ "$quiet" -le 10 ] || die "perfmarkd woke $quiet times in 16 s for a -a -F 10 session (want about 4)"
ok "a -a -F 10 session: $quiet wakeups in 16 s"

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

# a session whose files rotate every second keeps the quiet tick at a second
# (so does --aggregate 1): at 4 s its files would be 4 s long
mkdir "$T/rot"
pm session create rot -a -F 10 --output "$T/rot" --rotate 1s >/dev/null 2>"$T/create.err" ||
	die "session create --rotate 1s failed" -- "$T/create.err"
wait_until 60 session_at_least rot samples 1 || die "the rotating session records no samples" -- "$T/pmd.log"
let_time_pass 3 "the tick slows from 100 ms to its 1 s cap"
f0=$(find "$T/rot" -name 'rot-*.perf.data' | wc -l)
rot=$(wakeups_over 8 "the rotating session's wakeups are counted over 8 s")
f1=$(find "$T/rot" -name 'rot-*.perf.data' | wc -l)
echo "--rotate 1s: $rot wakeups and $((f1 - f0)) new files in 8 s"
# 8 at the 1 s cap; 2 at the 4 s tick.  Files: 8 (4 before the next one's
# time started where the last one ended: each held two rounds of the 1 s tick)
[ "$rot" -ge 5 ] || die "with --rotate 1s perfmarkd woke only $rot times in 8 s (want about 8)"
[ $((f1 - f0)) -ge 6 ] || die "--rotate 1s made $((f1 - f0)) files in 8 s (want about 8)"
ok "--rotate 1s caps the quiet tick at a second: $rot wakeups, $((f1 - f0)) files in 8 s"
pm session delete rot >/dev/null 2>&1
