#!/usr/bin/env bash
# A ring session keeps everything it saw when perfmarkd dies: kill -9, a
# clean restart (SIGTERM, as systemctl restart does), and a daemon killed in
# the middle of writing a record into its ring (PERFMARK_TEST_TEAR_AT: the
# torn record is dropped at the next start, the rest kept).  The ring lives
# in a file (--ring-dir); the next snapshot holds what the old daemon had
# plus what the BPF ring held while no daemon ran; a kill in the middle of a
# burst loses only what it counts as lost.  Also: a second perfmarkd on the same state is refused and
# the first goes on undisturbed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"
daemon_start

pm session create r9 -a -F 99 --ring 64M || die "create failed" -- "$T/pmd.log"
ls "$T"/rings/r9.ring >/dev/null 2>&1 || die "no ring file under $T/rings" -- "$T/pmd.log"

count() {   # file pid tag
	marker_lines "$1" | grep -c "^$2 .*\"$3 seq="
}
# "SEQ TIME_NS" of each marker "TAG seq=SEQ" of pid in a perf.data, in file order
seq_times() {   # file pid tag
	"$PERFMARK" script -i "$1" --json 2>/dev/null | python3 -c '
import json, sys
pid, tag = int(sys.argv[1]), sys.argv[2] + " seq="
for line in sys.stdin:
    r = json.loads(line)
    if r.get("pid") == pid and r.get("text", "").startswith(tag):
        print(r["text"][len(tag):], r["time"])' "$2" "$3"
}
# across_kill9 UP DOWN OUT PROG-EMIT-ARGS...: prog-emit started, the daemon
# killed once it has emitted UP markers and started again once it has
# emitted DOWN (or is done): some markers before, some while no daemon
# runs, the rest after.  Once prog-emit is done, $pid is its pid (its
# output in OUT).
across_kill9() {
	local up=$1 down=$2 out=$3 bgp
	shift 3
	PROG_EMIT_EVERY=50 "$PROGS/prog-emit" "$@" >"$out" &
	bgp=$!
	wait_until 120 file_has "$out" "^(at $up|emitted)" || die "prog-emit did not get to $up markers"
	daemon_kill9
	wait_until 120 file_has "$out" "^(at $down|emitted)" || die "prog-emit did not get to $down markers"
	daemon_start
	wait "$bgp"
	pid=$(awk '/^pid/ { print $2 }' "$out")
}

# 1. kill -9 once the workload's markers sit in the ring: none is lost.
# (Not at once: without systemd, markers of the fast lane that no drain has
# read yet die with the daemon when the process has exited before the next
# one starts; under systemd its fd store keeps the ring: t-system-nspawn.)
p1=$("$PROGS/prog-emit" 2000 before | awk '/^pid/ { print $2 }')
# a snapshot has everything up to its moment: then they are in the ring
pm session snapshot r9 -o "$T/s0" || die "snapshot before kill -9 failed" -- "$T/pmd.log"
[ "$(count "$T/s0" "$p1" before)" -eq 2000 ] || die "before kill -9: $(count "$T/s0" "$p1" before) of 2000 in the ring"
daemon_kill9
p2=$("$PROGS/prog-emit" 500 down | awk '/^pid/ { print $2 }')     # while no daemon runs
daemon_start     # it has taken its ring over (daemon-lib.sh)
grep -q "ring taken over" "$T/pmd.log" || die "the restarted daemon did not take the ring over" -- "$T/pmd.log"
pm session snapshot r9 -o "$T/s1" || die "snapshot after kill -9 failed" -- "$T/pmd.log"
n1=$(count "$T/s1" "$p1" before); n2=$(count "$T/s1" "$p2" down)
[ "$n1" -eq 2000 ] || die "after kill -9: $n1 of 2000 markers emitted before it" -- "$T/pmd.log"
[ "$n2" -eq 500 ] || die "after kill -9: $n2 of 500 markers emitted while down" -- "$T/pmd.log"
n=$(perf script -i "$T/s1" -F comm,pid,event 2>/dev/null | grep -c "prog-emit *$p1 .*perfmark:printf")
[ "$n" -eq 2000 ] || die "after kill -9: only $n markers of pid $p1 named prog-emit"
ok "kill -9: 2000/2000 markers from before, 500/500 from while down"

# 1b. a process that runs across kill -9 and the restart keeps every marker
# (what the old daemon drained is in the ring, the rest waits in the
# process's fast-lane ring or the pinned BPF ring for the next daemon)
across_kill9 500 750 "$T/across.txt" 1500 across 2
pa=$pid
pm session snapshot r9 -o "$T/s1b" || die "snapshot failed"
n=$(count "$T/s1b" "$pa" across)
[ "$n" -eq 1500 ] || die "a process running across kill -9 and a restart: $n of 1500 markers" -- "$T/pmd.log"
ok "a process running across kill -9 and the restart: 1500/1500 markers"

# 1c. a process that writes through the fast lane when the daemon is killed
# and exits before the next one starts: once it sees the daemon's reader
# silent (100 ms of its clock), its markers take the trap lane, whose
# pinned BPF ring the next daemon drains.  Lost: what it wrote in the fast
# lane since the dead daemon's last journalling (before, everything it
# wrote after the kill, left in its ring when it exited).  However loaded
# the machine, that is one run of markers around the kill: those kept
# before it were stamped before the daemon died, those after it later
# than the kill began, and nothing is lost elsewhere.
# Another recorder reads the process too and lives on through the kill (an
# in-process perfmark record -p here; on a loaded CI machine, another
# daemon's system-wide session): one silent reader is enough for the trap
# lane (before, the live one's heartbeat kept the process writing into its
# ring, read by the live recorder only: every marker after the kill was
# lost to the session), and the live recorder loses none of them.
LIB=$PERFMARK_BUILD/libperfmark.so.0
mkfifo "$T/gone.go"
PROG_EMIT_GO=1 PROG_EMIT_EVERY=50 "$PROGS/prog-emit" 1000 gone 2 <"$T/gone.go" >"$T/gone.txt" &
pg=$!
exec 7>"$T/gone.go"
wait_until 60 file_has "$T/gone.txt" '^pid' || die "prog-emit did not start"
pg=$(awk '/^pid/ { print $2 }' "$T/gone.txt")
s0=$(register_sites "$LIB")
po=
if [ "$s0" -ne 7 ]; then     # else every site is taken: no second reader
	PERFMARK_NO_DAEMON=1 "$PERFMARK" record -v -p "$pg" -o "$T/other.data" 2>"$T/other.err" &
	po=$!
	_bg_pids+=("$po")
	new_site() { [ $(($(register_sites "$LIB") & ~s0)) -ne 0 ]; }
	wait_until 60 new_site || die "the second recorder took no register site ($s0 before)" -- "$T/other.err"
fi
echo go >&7
exec 7>&-
wait_until 120 file_has "$T/gone.txt" '^at 300' || die "prog-emit did not get to 300 markers"
t0=$(mono_ns)
daemon_kill9
t1=$(mono_ns)
wait "$pg"
if [ -n "$po" ]; then
	kill -INT "$po"
	wait "$po" || die "the second recorder exited $?" -- "$T/other.err"
	n=$("$PERFMARK" script -i "$T/other.data" --json 2>/dev/null | grep -c "\"pid\":$pg,.*\"text\":\"gone seq=")
	[ "$n" -eq 1000 ] || die "the recorder that lived on has $n of the 1000 markers" -- "$T/other.err"
fi
daemon_start
pm session snapshot r9 -o "$T/s1c" || die "snapshot failed"
seq_times "$T/s1c" "$pg" gone >"$T/gone.seq"
n=$(wc -l <"$T/gone.seq")
last=$(tail -n 1 "$T/gone.seq" | cut -d' ' -f1)
[ "$last" = 999 ] || die "a process that exited while no daemon ran: its last marker is ${last:-missing}, not 999 ($n of 1000)"
cut -d' ' -f1 "$T/gone.seq" | sort -n -c 2>/dev/null || die "its markers are out of order"
# the runs of missing markers, "FROM TO BEFORE_NS AFTER_NS" each
awk 'NR > 1 && $1 != prev + 1 { print prev + 1, $1 - 1, pt, $2 } { prev = $1; pt = $2 }
     NR == 1 && $1 != 0 { print 0, $1 - 1, 0, $2 }' "$T/gone.seq" >"$T/gaps"
[ "$(wc -l <"$T/gaps")" -le 1 ] || die "markers lost in more than one place" -- "$T/gaps"
if [ -s "$T/gaps" ]; then
	read -r from to before after <"$T/gaps"
	[ "$before" -lt "$t1" ] || die "markers $from-$to lost, but the one before them was stamped after the kill"
	[ "$after" -gt "$t0" ] || die "markers $from-$to lost, but the one after them was stamped before the kill"
	ok "a process that exited while no daemon ran: $n of 1000 markers, $from-$to lost at the kill, the last one kept"
else
	ok "a process that exited while no daemon ran: all 1000 markers"
fi

# 2. a clean restart (SIGTERM then start), as systemctl restart does
p3=$("$PROGS/prog-emit" 1000 restart | awk '/^pid/ { print $2 }')
kill "$PMD_PID"; wait "$PMD_PID"; PMD_PID=
daemon_start
pm session snapshot r9 -o "$T/s2" || die "snapshot after restart failed"
for x in "$p1 before 2000" "$p2 down 500" "$p3 restart 1000"; do
	set -- $x
	n=$(count "$T/s2" "$1" "$2")
	[ "$n" -eq "$3" ] || die "after a restart: $n of $3 '$2' markers" -- "$T/pmd.log"
done
ok "restart: all 3500 markers of the three runs"

# 3. killed while writing a record into its ring: the torn record is found
# at the next start and dropped, everything before it kept
kill "$PMD_PID"; wait "$PMD_PID"; PMD_PID=
PERFMARK_TEST_TEAR_AT=300 daemon_start
p4=$("$PROGS/prog-emit" 1000 torn | awk '/^pid/ { print $2 }')
wait_gone 60 "$PMD_PID" || die "the daemon did not die inside its 300th ring record"
wait "$PMD_PID"; PMD_PID=
daemon_start
grep -q "dropped a record torn" "$T/pmd.log" || die "the torn record was not reported" -- "$T/pmd.log"
pm session snapshot r9 -o "$T/s3" || die "snapshot after a torn record failed" -- "$T/pmd.log"
for x in "$p1 before 2000" "$p2 down 500" "$p3 restart 1000"; do
	set -- $x
	n=$(count "$T/s3" "$1" "$2")
	[ "$n" -eq "$3" ] || die "after a torn record: $n of $3 '$2' markers" -- "$T/pmd.log"
done
marker_lines "$T/s3" | grep "^$p4 " | sed 's/.*seq=\([0-9]*\).*/\1/' >"$T/seqs"
[ -s "$T/seqs" ] || die "none of the markers read before the crash are there"
sort -n -c "$T/seqs" 2>/dev/null || die "markers out of order after recovery"
[ "$(sort -u "$T/seqs" | wc -l)" -eq "$(wc -l <"$T/seqs")" ] || die "duplicated markers after recovery"
perf report -i "$T/s3" --stdio 2>/dev/null | grep -q '^# Samples' || die "perf report reads nothing"
pm session show r9 | grep -q '^sink: .*1 torn by a crash' || die "session show does not count the torn record"
ok "torn record: reported and dropped; all 3500 older markers and $(wc -l <"$T/seqs") of the crash run's kept, once each, in order"

# 4. a second daemon on the same state is refused; the first is undisturbed
"$PERFMARKD" --foreground --socket "$T/other.sock" --state-dir "$PMD_STATE" --pin-dir "$PMD_PINS" \
	>"$T/second.log" 2>&1 && die "a second perfmarkd on the same state started"
grep -q "another perfmarkd (pid $PMD_PID) is running" "$T/second.log" ||
	die "the second perfmarkd did not say why" -- "$T/second.log"
[ "$(wc -l <"$T/second.log")" -eq 1 ] || die "more than one line from the refused daemon" -- "$T/second.log"
"$PERFMARKD" --foreground --socket "$PERFMARK_SOCKET" --state-dir "$T/state2" --pin-dir "$PMD_PINS" \
	>"$T/third.log" 2>&1 && die "a second perfmarkd on the same pins started"
grep -q "another perfmarkd.* is running with pin directory $PMD_PINS" "$T/third.log" || die "no reason given" -- "$T/third.log"
p5=$("$PROGS/prog-emit" 100 after | awk '/^pid/ { print $2 }')
pm session snapshot r9 -o "$T/s4" || die "the first daemon stopped answering"
[ "$(count "$T/s4" "$p5" after)" -eq 100 ] || die "the first daemon stopped collecting"
[ -e "$PMD_PINS/r9" ] || die "the pins of the first daemon are gone"
ok "a second perfmarkd is refused in one line; the first goes on"

# stop, restart, still there; delete removes the ring file
pm session stop r9
kill "$PMD_PID"; wait "$PMD_PID"; PMD_PID=
daemon_start
pm session snapshot r9 -o "$T/s5" || die "snapshot of a stopped session after a restart failed"
[ "$(count "$T/s5" "$p5" after)" -eq 100 ] || die "a stopped ring lost its content over a restart"
pm session delete r9
[ -e "$T/rings/r9.ring" ] && die "delete left the ring file"
ok "a stopped ring survives a restart; delete removes it"

# 5. kill -9 in the middle of a burst (back to back, faster than the daemon
# journals): what the fast lane's pump had copied into the dead daemon's
# memory is gone, but counted: every marker of the burst is in the next
# snapshot or in its lost count (at most a few hundred counted twice: those
# journalled in the last moment before the kill).  The kill lands inside
# the burst whatever the machine's speed: the burst goes on until told to
# stop (SIGUSR1), which comes after the kill.  The burst is its session's
# only target (-p): no other process's markers push its own out of the ring.
mkfifo "$T/go"
PROG_EMIT_GO=1 PROG_EMIT_EVERY=10000 "$PROGS/prog-emit" 3000000 burst 0 600 <"$T/go" >"$T/burst.txt" &
bp=$!
_bg_pids+=("$bp")
exec 7>"$T/go"
wait_until 60 file_has "$T/burst.txt" '^pid' || die "prog-emit did not start"
pm session create burst -p "$bp" -F 99 --ring 512M || die "create burst failed" -- "$T/pmd.log"
echo go >&7
exec 7>&-
wait_until 120 file_has "$T/burst.txt" '^at 100000$' || die "the burst did not get to 100000 markers"
daemon_kill9
kill -USR1 "$bp"
wait_until 120 file_has "$T/burst.txt" '^emitted' || die "the burst did not stop when told"
emitted=$(awk '/^emitted/ { print $2 }' "$T/burst.txt")
[ "$emitted" -lt 3000000 ] || die "the burst was over before the kill: its 3000000 markers all emitted before SIGUSR1"
daemon_start      # the burst's process is still there: the new daemon joins its rings
pm session snapshot burst -o "$T/sb" || die "snapshot of burst failed" -- "$T/pmd.log"
kept=$("$PERFMARK" script -i "$T/sb" --json 2>/dev/null | grep -c "\"pid\":$bp,.*\"text\":\"burst seq=")
lost=$(session_field burst lost)
[ -n "$lost" ] || die "session show burst --json answered nothing" -- "$T/pmd.log"
bg_kill "$bp"
[ $((kept + lost)) -ge "$emitted" ] ||
	die "kill -9 in a burst: $kept markers kept and $lost counted lost, $((emitted - kept - lost)) of $emitted gone without a count" -- "$T/pmd.log"
[ $((kept + lost)) -le $((emitted + 1000)) ] || die "kill -9 in a burst: $kept kept + $lost counted lost is more than the $emitted emitted"
ok "kill -9 in a burst of $emitted markers: $kept kept, $lost counted lost, none gone without a count"
pm session delete burst || die "delete burst failed"
