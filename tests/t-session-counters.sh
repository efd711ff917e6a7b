#!/usr/bin/env bash
# Sessions carry counters (issue 20): `session create -p PID --counters EVENTS`
# counts them as perfmark stat does, on the session's targets; `session show`
# gives totals and rates (text and --json).  Checked against perf stat -p on
# the very same run of prog-counts (exactly 1000 writes, at least N page
# faults and switches): within 2 %, the writes exactly.  Totals stay after
# stop; a member may not count system-wide (counters cannot be limited to
# their processes) but may count a process of theirs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/users-lib.sh"
. "$(dirname "$0")/stat-lib.sh"
need_daemon
need_perfmark
need_counts_workload
test_users pm20c
daemon_start_shared

EV=task-clock,context-switches,page-faults,syscalls:sys_enter_write
WRITES=1000 PAGES=16384 SLEEPS=500
# a counter of session show --json: FIELD of EVENT
cval() {
	python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
for c in s["counts"]["counters"]:
    if c["event"] == sys.argv[2]:
        print(c[sys.argv[3]])
' "$1" "$2" "$3"
}

# --- one run, counted by the session and by perf stat -p ------------------------
mkfifo "$T/gate"
exec 3<>"$T/gate"
"$W" $WRITES $PAGES $SLEEPS 20 150 - <&3 &
child=$!
_bg_pids+=("$child")
pm session create cnt -p "$child" --counters "$EV" >"$T/create.out" 2>&1 ||
	die "create --counters failed" -- "$T/create.out" "$T/pmd.log"
perf stat -x, -o "$T/perf.csv" -e "$EV" -p "$child" &
perf=$!
_bg_pids+=("$perf")
wait_perf_fds "$perf" 4 || die "perf stat -p did not attach"
echo g >&3
wait "$child" || die "the workload failed"
wait "$perf"
exec 3>&-
python3 "$PERFMARK_SRC/tests/stat_parse.py" csv "$T/perf.csv" >"$T/perf.json" || die "perf's CSV" -- "$T/perf.csv"
pm session show cnt --json >"$T/show.json" || die "show --json failed"
for e in task-clock context-switches page-faults syscalls:sys_enter_write; do
	p=$(val "$T/perf.json" $e) m=$(cval "$T/show.json" $e value)
	[ -n "$m" ] || die "show --json has no counter $e" -- "$T/show.json"
	near "$m" "$p" 2 || die "$e: session $m, perf $p: more than 2 % apart" -- "$T/show.json" "$T/perf.csv"
	fcmp "$(cval "$T/show.json" $e rate) > 0" || die "$e: no rate" -- "$T/show.json"
done
[ "$(cval "$T/show.json" syscalls:sys_enter_write raw)" = $WRITES ] || die "not exactly $WRITES writes" -- "$T/show.json"
fcmp "$(cval "$T/show.json" page-faults value) >= $PAGES" || die "fewer page faults than pages" -- "$T/show.json"
ok "session counters agree with perf stat -p: $(python3 -c '
import json,sys
print(", ".join("%s %.0f" % (c["event"], c["value"]) for c in json.load(open(sys.argv[1]))["counts"]["counters"]))' "$T/show.json")"

# text: one line per counter with its rate
pm session show cnt >"$T/show.txt" || die "show failed"
grep -q '^counted:  [0-9.]* s' "$T/show.txt" || die "no counted: line" -- "$T/show.txt"
grep -qE "^ +1,000 +syscalls:sys_enter_write +[0-9.]+/s$" "$T/show.txt" || die "no writes line" -- "$T/show.txt"
grep -qE "^ +[0-9]+\.[0-9]{2} msec task-clock +[0-9.]+ CPUs utilized$" "$T/show.txt" || die "no task-clock line" -- "$T/show.txt"
for e in context-switches page-faults; do
	grep -qE "^ +[0-9,]+ +$e +[0-9.]+/s$" "$T/show.txt" || die "no $e line" -- "$T/show.txt"
done
ok "show prints totals and rates"

# snapshots end with the counters as perf stat record writes them: stock perf
# script prints them (VAL ENA RUN per event), from a file and from a pipe
pm session snapshot cnt -o "$T/snap.data" || die "snapshot failed"
perf script -i "$T/snap.data" 2>/dev/null >"$T/snap.txt"
pm session snapshot cnt -o - 2>/dev/null | perf script -i - 2>/dev/null >"$T/snap-pipe.txt"
for f in "$T/snap.txt" "$T/snap-pipe.txt"; do
	grep -qE '^CPU +THREAD +VAL +ENA +RUN +TIME EVENT$' "$f" || die "perf script shows no counters" -- "$f"
	grep -qE "^ +-1 +-1 +$WRITES +[0-9]+ +[0-9]+ +[0-9]+ syscalls:sys_enter_write$" "$f" ||
		die "perf script does not show the $WRITES writes" -- "$f"
	grep -qE "^ +-1 +-1 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ page-faults$" "$f" || die "no page-faults row" -- "$f"
done
grep -q 'cpu-clock:' "$T/snap.txt" || die "the snapshot lost its samples" -- "$T/snap.txt"
perf report -i "$T/snap.data" --stdio 2>/dev/null | grep -q "of event 'cpu-clock'" || die "perf report of the snapshot"
ok "snapshots hold the counters: perf script prints them (file and pipe)"

# the totals stay once the session stops
pm session stop cnt || die "stop failed"
pm session show cnt --json >"$T/stopped.json"
[ "$(cval "$T/stopped.json" syscalls:sys_enter_write raw)" = $WRITES ] || die "writes lost at stop" -- "$T/stopped.json"
pm session delete cnt

# errors: an unknown event, a glob over the limit; one line, exit 1, no session
out=$(pm session create bad -a --counters bogus 2>&1) && die "unknown counter accepted"
[ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "^perfmark: --counters: unknown event 'bogus'" || die "bogus: $out"
out=$(pm session create bad -a --counters 'syscalls:sys_enter_*' 2>&1) && die "hundreds of counters accepted"
echo "$out" | grep -q '^perfmark: --counters: ' || die "too many: $out"
pm session list | grep -q '^bad ' && die "a refused create left a session"
ok "refused: unknown event, too many"

# --- who: a member counts a process of theirs, not the machine ---------------------
out=$(as_member "$PERFMARK" session create mall -a --counters task-clock 2>&1) && die "member counted system-wide"
echo "$out" | grep -q "^perfmark: --counters with -a is root's" || die "member -a: $out"
setpriv --reuid="$MEMBER_UID" --regid=65534 --clear-groups sleep 60 &   # $! is the sleep
mp=$!
_bg_pids+=("$mp")
# the member's once setpriv has changed users and exec'd sleep
wait_until 60 comm_is "$mp" sleep
[ "$(cat /proc/"$mp"/comm 2>/dev/null)" = sleep ] || die "the member's sleep did not start"
as_member "$PERFMARK" session create mine -p "$mp" --counters context-switches --ring 1M ||
	die "member cannot count a process of theirs" -- "$T/pmd.log"
out=$(as_member "$PERFMARK" session create root1 -p 1 --counters context-switches 2>&1) && die "member counted pid 1"
echo "$out" | grep -q 'not yours' || die "member pid 1: $out"
ok "member: own process counted; -a and pid 1 refused"
