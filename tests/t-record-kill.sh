#!/usr/bin/env bash
# A recorder killed with SIGKILL leaves a file stock perf still reads: the
# header's data size is kept current after every flush, so what was flushed
# before the kill is there.  Checked against the CPU time the workload got,
# not wall time: on a loaded machine (make check STRESS=1) a spinning
# process runs a fraction of the time, and a cpu-clock sampler sees only
# that fraction.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs

F=$T/kill.data
sig=KILL
# perf itself only finalises its header at exit: with PM_RECORDER=perf (a check
# of the assertions) stop it with SIGINT instead.
[ "$PM_RECORDER" = perf ] && sig=INT
pm_record_argv -g -o "$F" -- "$PROGS/prog-spin" 600
bg "${PMREC[@]}" >"$T/rec.out" 2>"$T/rec.err"
rec=$BG_PID
# the workload: the recorder's child (prog-spin), found by parent pid
spin_child() { child=$(pgrep -P "$rec" -x prog-spin | head -n 1); [ -n "$child" ]; }
wait_until 60 spin_child || die "no prog-spin child under recorder $rec" -- "$T/rec.err"
_bg_pids+=("$child")
# until it has spun 1.5 s of CPU time (2.5 s of wall time on an idle machine
# once counted as a recording of 10000 samples; with a hog per CPU it is 1/3)
wait_until 300 cpu_at_least "$child" 1500000000 || die "prog-spin got no 1.5 s of CPU in 300 s"
ran=$(cpu_ns "$child")
kill -"$sig" "$rec"
wait "$rec" 2>/dev/null
rc=$?
[ "$sig" = KILL ] && [ "$rc" -ne 137 ] && die "recorder was not killed by SIGKILL (rc $rc)"
kill -9 "$child" 2>/dev/null
[ -s "$F" ] || die "no file left by the killed recorder" -- "$T/rec.err"
ok "file of $(stat -c %s "$F") bytes after SIGKILL"

report_self "$F" >"$T/self"
p=$(pct_of "$T/self" spin_loop)
fcmp "$p >= 50" || die "perf report: spin_loop at $p% (want the bulk of samples)" -- "$T/self"
n=$(samples_flat "$F" | awk '$1 == "prog-spin" && $NF == "spin_loop"' | wc -l)
# 4000 Hz of the CPU time prog-spin got: what the last flushes before the
# kill had not written yet is lost with the recorder (a drain period, ~0.1 s
# of its time); the rest must be there.  At least half of what it ran:
want=$(awk -v ns="$ran" 'BEGIN { printf "%.0f", ns / 1e9 * 4000 / 2 }')
[ "$n" -ge "$want" ] ||
	die "only $n spin_loop samples survived the kill (prog-spin ran $((ran / 1000000)) ms of CPU: want >= $want)"
ok "perf report after SIGKILL: spin_loop $p%, $n samples for $((ran / 1000000)) ms of CPU (>= $want)"

# perfmark's own reader must accept the file too (no feature section yet)
if [ "$PM_RECORDER" != perf ]; then
	"$PERFMARK" script -i "$F" >"$T/script" 2>"$T/script.err"
	rc=$?
	[ "$rc" -eq 0 ] || die "perfmark script on the killed recorder's file exited $rc" -- "$T/script.err"
	m=$(grep -v "^$(printf '\t')" "$T/script" | grep -cw spin_loop)   # sample lines, not chain lines
	[ "$m" -eq "$n" ] || die "perfmark script shows $m spin_loop samples (perf: $n)" -- "$T/script" "$T/script.err"
	ok "perfmark script reads it: $m spin_loop samples"
fi
echo "t-record-kill: all checks passed"
