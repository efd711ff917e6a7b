#!/usr/bin/env bash
# A restart of perfmarkd slower than libperfmark's old 5 s rule loses no
# marker.  Writers emit through their fast lanes while the daemon is killed
# (kill -9) and while the next one's takeover of their areas is held
# (PERFMARK_TEST_HOLD: $T/hold.slow.adopt, after its first slice) for more
# than 5 s: each writer finds its reader silent, sends its markers to the
# trap lane (the pinned BPF ring), and keeps in its ring what it wrote
# before it noticed, for the reader that comes back with the same token
# (libperfmark had a rule that let a reader silent for 5 s go at a full
# ring, and write over what it had not read: gone, this guards it).  Once
# the takeover is let go, every marker of every writer is in the session's
# ring once.  Counted by pid and tag.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"
export PERFMARK_TEST_HOLD=$T/hold
K=3
N=30000    # a millisecond apart (30 s at least): they write on through the whole hold
writers_start slow 64M 500
for i in $(seq "$K"); do _bg_pids+=("$(writer_pid "$i")"); done

takeover_field() {
	"$PERFMARK" session show slow --json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["takeover"][sys.argv[1]])' "$1" 2>/dev/null
}
touch "$T/hold.slow.adopt"
daemon_kill9
for i in $(seq "$K"); do before[i]=$(writer_at "$i"); done
daemon_launch
[ "$(takeover_field fastlane)" = "in progress" ] || die "the fast lane's takeover is not held" -- "$T/pmd.log"
let_time_pass 6 "the readers silent longer than libperfmark's old 5 s rule: a slow restart"
[ "$(takeover_field fastlane)" = "in progress" ] || die "the held takeover ended by itself"
for i in $(seq "$K"); do
	[ "$(writer_at "$i")" -gt "${before[i]}" ] || die "writer $i did not write while the restart was held (at $(writer_at "$i"))"
	grep -q '^emitted' "$T/w.$i" && die "writer $i ended during the hold (the restart took more than 20 s): make N larger"
done
ok "the writers wrote on through a restart held 6 s"
rm "$T/hold.slow.adopt"
wait_until 120 session_is slow state running || die "slow did not start after its takeover" -- "$T/pmd.log"
wait_until 600 writers_emitted || die "the writers did not end their markers"

wait_until 120 writers_complete slow || true
bad=$(writers_bad)
"$PERFMARK" session show slow >"$T/show.txt" 2>&1
writers_kill
[ -z "$bad" ] || die "markers lost or repeated across a restart held 6 s (writer:unique/all of $N):$bad" -- "$T/show.txt" "$T/pmd.log"
ok "a restart held 6 s: all $K x $N markers once each"
