#!/usr/bin/env bash
# A recorder killed between copying markers out of a process's fast-lane
# ring and handing them on loses none of them: the tail it publishes in the
# ring is what it has handed on (journaled to the session's sink), not what
# it has copied, so perfmarkd restarted reads them again from the ring.
# Before, each such kill -9 lost what the last drain had copied (about
# 40 ms of every process's markers in t-daemon-takeover, about 1 run in 8).
# PERFMARK_TEST_HOLD holds a drain that has copied markers and not handed
# them on while $T/hold.fastlane exists (it says so with hold.fastlane.held):
# the kill lands there whatever the machine's speed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"
export PERFMARK_TEST_HOLD=$T/hold
K=4
N=2000
writers_start held 64M 300
held_kill_restart held fastlane
writers_kill
[ -z "$bad" ] || die "markers lost or repeated across a kill between copy and hand-on (writer:unique/all of $N):$bad" -- "$T/show.txt" "$T/pmd.log"
ok "a kill -9 with markers copied and not handed on: all $K x $N markers once each"
