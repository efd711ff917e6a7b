#!/usr/bin/env bash
# A recorder killed with SIGKILL leaves a file stock perf still reads: the
# header's data size is kept current after every flush.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs

F=$T/kill.data
sig=KILL
# perf itself only finalises its header at exit: with PM_RECORDER=perf (a check
# of the assertions) stop it with SIGINT instead.
[ "$PM_RECORDER" = perf ] && sig=INT
pm_record_argv -g -o "$F" -- "$PROGS/prog-spin" 10
bg "${PMREC[@]}" >"$T/rec.out" 2>"$T/rec.err"
rec=$BG_PID
sleep 2.5
# the workload: the recorder's child (prog-spin), found by parent pid
child=$(pgrep -P "$rec" -x prog-spin | head -n 1)
[ -n "$child" ] || die "no prog-spin child under recorder $rec" -- "$T/rec.err"
_bg_pids+=("$child")
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
# 2.5 s at 4000 Hz is ~10000 samples; whatever was flushed before the kill
# must be there: at least 1 s worth.
[ "$n" -ge 4000 ] || die "only $n spin_loop samples survived the kill (want >= 4000 = 1 s)"
ok "perf report after SIGKILL: spin_loop $p%, $n samples"

# perfmark's own reader must accept the file too (no feature section yet)
if [ "$PM_RECORDER" != perf ]; then
	"$PERFMARK" script -i "$F" >"$T/script" 2>"$T/script.err"
	rc=$?
	[ "$rc" -eq 0 ] || die "perfmark script on the killed recorder's file exited $rc" -- "$T/script.err"
	m=$(grep -v "^$(printf '\t')" "$T/script" | grep -cw spin_loop)   # sample lines, not chain lines
	[ "$m" -ge 4000 ] || die "perfmark script shows $m spin_loop samples (perf: $n)" -- "$T/script" "$T/script.err"
	ok "perfmark script reads it: $m spin_loop samples"
fi
echo "t-record-kill: all checks passed"
