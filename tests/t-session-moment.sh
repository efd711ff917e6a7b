#!/usr/bin/env bash
# Up to the moment: a snapshot taken right after a workload ended holds all
# of its markers (the BPF ring is read and the reorder window flushed up to
# the request's own time), so does the first part of an attached reader's
# stream, and a ring session stopped at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"
daemon_start

pm session create mom -a -F 99 --ring 64M || die "create failed" -- "$T/pmd.log"

# the workload ends, the snapshot request follows at once
pid=$("$PROGS/prog-emit" 2000 moment | awk '/^pid/ { print $2 }')
pm session snapshot mom -o "$T/snap" || die "snapshot failed" -- "$T/pmd.log"
n=$(marker_lines "$T/snap" | grep -c "^$pid .*\"moment seq=")
[ "$n" -eq 2000 ] || die "the immediate snapshot holds $n of 2000 markers of pid $pid" -- "$T/pmd.log"
n=$(perf script -i "$T/snap" -F comm,pid,event 2>/dev/null | grep -c "prog-emit *$pid .*perfmark:printf")
[ "$n" -eq 2000 ] || die "$n markers of pid $pid named prog-emit (sideband missing)"
ok "immediate snapshot: 2000 of 2000 markers of pid $pid, named"
# records the window had passed keep their time; session show counts them
pm session show mom | grep -Eq '^late: +[0-9]+ \([0-9]+ older than what perf had already sorted\)' ||
	die "session show does not count late records"
pm session show mom --json | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(not (isinstance(d["late"], int) and d["late_unordered"] <= d["late"]))' ||
	die "session show --json: no late count"

# a reader attached right after a workload: its first bytes hold the workload
pid=$("$PROGS/prog-emit" 2000 attach | awk '/^pid/ { print $2 }')
pm session attach mom -o - >"$T/stream" &
att=$!
_bg_pids+=("$att")
# stream_has PID TAG N: the stream so far holds N markers "TAG seq=" of PID
stream_has() { [ "$(marker_lines "$T/stream" | grep -c "^$1 .*\"$2 seq=")" -eq "$3" ]; }
wait_until 60 stream_has "$pid" attach 2000
n=$(marker_lines "$T/stream" | grep -c "^$pid .*\"attach seq=")
[ "$n" -eq 2000 ] || die "the attached stream holds $n of 2000 markers emitted just before" -- "$T/pmd.log"
# and goes on live
pid2=$("$PROGS/prog-emit" 100 live | awk '/^pid/ { print $2 }')
wait_until 60 stream_has "$pid2" live 100
[ "$(marker_lines "$T/stream" | grep -c "^$pid2 ")" -eq 100 ] || die "the live part lacks markers of pid $pid2"
ok "attach: the stream starts with the 2000 markers emitted before, then goes on live"

# stopped at once: everything before the stop is in the ring
pid=$("$PROGS/prog-emit" 2000 stop | awk '/^pid/ { print $2 }')
pm session stop mom || die "stop failed"
wait "$att" 2>/dev/null
pm session snapshot mom -o "$T/stopped" || die "snapshot of the stopped session failed"
n=$(marker_lines "$T/stopped" | grep -c "^$pid .*\"stop seq=")
[ "$n" -eq 2000 ] || die "stopped at once: $n of 2000 markers of pid $pid"
ok "stop at once: 2000 of 2000 markers"
