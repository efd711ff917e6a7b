#!/usr/bin/env bash
# The same as t-daemon-kill-handed.sh for the trap lane: a recorder killed
# after handing a marker from the BPF ring on and before libbpf moved the
# ring's consumer position past it (it does so after each record) keeps it
# once.  The restarted daemon reads that record first again: it is flagged,
# and the session drops it, its ring having kept it before the kill.
# PERFMARK_FASTLANE=0: the writers' markers all take the trap lane.
# PERFMARK_TEST_HOLD holds the BPF ring's consume right after a marker was
# handed on while $T/hold.rbhanded exists (it says so with .held).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"
export PERFMARK_TEST_HOLD=$T/hold PERFMARK_FASTLANE=0
K=2
N=1000
writers_start trap 64M 100
held_kill_restart trap rbhanded
repeats=$(session_field trap repeats)
writers_kill
[ -z "$bad" ] || die "markers lost or repeated across a kill inside the BPF ring's consume (writer:unique/all of $N):$bad" -- "$T/show.txt" "$T/pmd.log"
[ "$repeats" = 1 ] || die "the restarted daemon did not drop exactly the one marker read again (repeats '$repeats')" -- "$T/show.txt"
grep -q '^lanes: .*trap' "$T/show.txt" || die "show does not say the markers took the trap lane" -- "$T/show.txt"
ok "a kill -9 inside the BPF ring's consume: all $K x $N markers once each (the one read again dropped)"
