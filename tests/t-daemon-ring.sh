#!/usr/bin/env bash
# perfmarkd ring session: collects with no client, snapshots (file and pipe)
# hold the markers of a run made meanwhile, two live readers see the same
# markers, a stalled reader stalls nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
daemon_start

pm session create ring1 -F 499 --ring 32M || die "create failed" -- "$T/pmd.log"
pm session list | grep -q '^ring1 .*running' || die "ring1 not listed as running"

# no client attached: a markers run is collected anyway
"$DEMO" 0.3 >/dev/null 2>&1 &
demo=$!; wait $demo
pm session snapshot ring1 -o "$T/snap1" || die "snapshot failed"
n=$(marker_lines "$T/snap1" | grep -c "^$demo ")
[ "$n" -ge 3 ] || die "snapshot holds $n markers of markers-demo pid $demo" -- "$T/pmd.log"
perf script -i "$T/snap1" 2>/dev/null | grep "perfmark:printf" | grep -q "markers-demo *$demo[ /]" ||
	die "markers not attributed to markers-demo (sideband missing)"
perf report -i "$T/snap1" --stdio 2>/dev/null | grep -q 'cpu-clock\|cycles' || die "perf report shows no samples"
ok "snapshot (file mode) holds $n markers of pid $demo"

# pipe-mode snapshot
pm session snapshot ring1 -o - | marker_lines - >"$T/pipe.txt"
grep -q "^$demo " "$T/pipe.txt" || die "pipe snapshot lacks the markers" -- "$T/pipe.txt"
ok "snapshot (pipe mode) readable by perf script -i -"

# two live readers and one stalled reader
pm session attach ring1 -o - | marker_lines - >"$T/r1.txt" &
r1=$!
pm session attach ring1 -o - | marker_lines - >"$T/r2.txt" &
r2=$!
bg bash -c "'$PERFMARK' session attach ring1 -o - | sleep 60"
stalled=$BG_PID
wait_until 60 session_at_least ring1 readers 3 || die "the three readers are not attached" -- "$T/pmd.log"
"$DEMO" 0.3 >/dev/null 2>&1 &
demo2=$!; wait $demo2
s1=$(pm session show ring1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
# produce enough for the stalled reader's queue to overflow
"$PROGS/prog-spin" 2 >/dev/null 2>&1 || true
wait_until 60 session_at_least ring1 samples $((s1 + 1)) ||
	die "session stopped collecting with a stalled reader ($s1 -> $(session_field ring1 samples))"
s2=$(session_field ring1 samples)
pm session show ring1 >"$T/show.txt"
# end the readers: stopping the session ends their streams
pm session stop ring1 || die "stop failed"
wait_gone 60 $r1 $r2 || die "the readers' streams did not end with the session"
kill $r1 $r2 2>/dev/null
wait $r1 $r2 2>/dev/null
for f in "$T/r1.txt" "$T/r2.txt"; do
	grep -q "^$demo2 " "$f" || die "reader $f lacks markers of pid $demo2" -- "$f" "$T/pmd.log"
done
a=$(grep "^$demo2 " "$T/r1.txt" | md5sum)
b=$(grep "^$demo2 " "$T/r2.txt" | md5sum)
[ "$a" = "$b" ] || die "the two readers saw different markers"
ok "two readers saw the same markers of pid $demo2; samples went on with a stalled reader ($s1 -> $s2)"
cat "$T/show.txt"

# stopped: still listed, snapshot of what the ring held still works, start again
pm session list | grep -q '^ring1 .*stopped' || die "ring1 not stopped"
pm session start ring1 || die "start failed"
pm session list | grep -q '^ring1 .*running' || die "ring1 not running after start"
pm session delete ring1 || die "delete failed"
pm session list | grep -q ring1 && die "ring1 still listed after delete"
[ -e "$PMD_PINS/ring1" ] && die "pins left after delete"
[ -e "$PMD_STATE/sessions/ring1.json" ] && die "definition left after delete"
kill -0 "$PMD_PID" || die "daemon died"
ok "stop/start/delete"
