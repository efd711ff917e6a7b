#!/usr/bin/env bash
# A recorder killed after handing markers on (journaled to the session's
# ring) and before publishing its ring's tail past them keeps each of them
# once.  The tail moves a batch of records at a time (a lock each), so the
# restarted daemon reads up to a batch of what its ring already holds again:
# it flags them, and the session drops those its ring kept before the kill
# (session show: repeats).  Before, each such kill -9 repeated what the batch
# had handed on (t-daemon-takeover: 1 run in about 30 with repeats).
# PERFMARK_TEST_HOLD holds a drain that has handed a sixteenth of a batch on
# and not published it while $T/hold.handed exists (it says so with
# hold.handed.held): the kill lands there whatever the machine's speed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"
export PERFMARK_TEST_HOLD=$T/hold
K=4
N=2000
writers_start handed 64M 300
held_kill_restart handed handed
repeats=$(session_field handed repeats)
writers_kill
[ -z "$bad" ] || die "markers lost or repeated across a kill between hand-on and publication (writer:unique/all of $N):$bad" -- "$T/show.txt" "$T/pmd.log"
[ "${repeats:-0}" -ge 1 ] || die "the restarted daemon read no marker again (repeats '$repeats'): the kill did not land after a hand-on" -- "$T/show.txt"
grep -q "^repeats:  $repeats markers read again" "$T/show.txt" || die "show does not say how many repeats it dropped" -- "$T/show.txt"
ok "a kill -9 with markers handed on and not published: all $K x $N markers once each ($repeats read again, dropped)"
