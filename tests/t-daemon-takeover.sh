#!/usr/bin/env bash
# perfmarkd answers its clients while it takes a large kept state over after
# a kill -9 (issue 18 case 14: under systemd the daemon sent no WATCHDOG=1
# for 30 s while it took its rings over, and its restarts never said
# READY=1 within 90 s).  A session records K processes that write markers
# through their fast lanes; the daemon is killed while they write, they
# write on, and a new daemon takes the areas back a slice a turn of its loop.
# PERFMARK_TEST_HOLD holds that takeover after its first slice while
# $T/hold.big.adopt exists, so what the daemon does meanwhile is seen
# whatever the machine's speed: it has answered (daemon_launch), `session
# list` shows big starting, `session show --json` says the takeover is in
# progress and how far it got.  Once it is let go, every marker of every
# process is in the session's ring exactly once.  Counted by pid and tag.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"
export PERFMARK_TEST_HOLD=$T/hold
K=24
N=3000
# K writers, a marker every millisecond, then they stay (their areas live
# on, as the processes of a service do) until killed at the end
writers_start big 256M 200
daemon_kill9
# they write on while no daemon runs, to the end: their rings keep what came
# before they found the reader silent, the pinned BPF side the rest (for as
# long as the restart takes: t-daemon-takeover-slow.sh)
wait_until 300 writers_emitted || die "the writers did not end their markers while no daemon ran"

# takeover_field F: field F of show's "takeover" (empty when not answered)
takeover_field() {
	"$PERFMARK" session show big --json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["takeover"][sys.argv[1]])' "$1" 2>/dev/null
}
touch "$T/hold.big.adopt"
daemon_launch    # it answered `session list`: listening before the takeover
st=$(takeover_field state)
[ "$st" = "in progress" ] || die "show does not say the takeover is in progress: '$st'" -- "$T/pmd.log"
[ "$(takeover_field fastlane)" = "in progress" ] || die "show does not say the fast lane's takeover is in progress"
scanned=$(takeover_field processes_scanned)
kept=$(takeover_field kept_areas)
steps=$(takeover_field steps)
[ "${steps:-0}" -ge 1 ] || die "the takeover did not take its first slice: steps '$steps'"
timeout 60 "$PERFMARK" session list >"$T/list1" || die "list not answered during the takeover"
grep -q '^big .*starting' "$T/list1" || die "list does not show big starting during the takeover" -- "$T/list1"
# the loop turns on: a second show while still held answers too
[ "$(takeover_field state)" = "in progress" ] || die "the held takeover ended by itself"
ok "during the takeover (after $steps slice(s): $scanned processes scanned, $kept kept areas) list and show answered"
rm "$T/hold.big.adopt"
wait_until 120 session_is big state running || die "big did not start after its takeover" -- "$T/pmd.log"
[ "$(takeover_field state)" = done ] || die "the takeover is not done once big runs"
log_has "session 'big': fast lane taken back" || die "no takeover of the fast lane logged" -- "$T/pmd.log"

# everything each writer wrote is in the ring once, under its own pid
wait_until 120 writers_complete big || true
bad=$(writers_bad)
"$PERFMARK" session show big >"$T/show.txt" 2>&1
writers_kill
[ -z "$bad" ] || die "markers lost or repeated across the kill and the takeover (writer:unique/all of $N):$bad" -- "$T/show.txt" "$T/pmd.log"
late=$(session_field big late)
ok "after the takeover: all $K x $N markers once each (late: $late)"
