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
daemon_start
launcher_start
# -p the launcher: its children (the writers are its subshells' children)
# stay its targets after the restart (t-daemon-takeover-children.sh)
pm session create big -p "$LAUNCHER" -F 99 --ring 256M || die "create big failed" -- "$T/pmd.log"

# K writers, a marker every millisecond ("at S" every 100), then they stay
# (their areas live on, as the processes of a service do) until killed below
for i in $(seq "$K"); do
	launch "$T/w.$i" PROG_EMIT_EVERY=100 "$N" "w$i" 1 300
done
all_at() {   # every writer has written at least $1 markers
	local i
	for i in $(seq "$K"); do
		[ "$(grep -c '^at ' "$T/w.$i" 2>/dev/null)" -ge $(($1 / 100)) ] || return 1
	done
}
wait_until 300 all_at 200 || die "the writers did not get to 200 markers each"
daemon_kill9
# they write on while no daemon runs, to the end: their rings keep what came
# before they found the reader silent, the pinned BPF side the rest (for as
# long as the restart takes: t-daemon-takeover-slow.sh)
emitted() { grep -q '^emitted' "$T/w.$1"; }
all_emitted() {
	local i
	for i in $(seq "$K"); do emitted "$i" || return 1; done
}
wait_until 300 all_emitted || die "the writers did not end their markers while no daemon ran"

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

# everything each writer wrote is in the ring once
count_all() {
	pm session snapshot big -o "$T/snap" 2>"$T/snap.err" || return 1
	marker_lines "$T/snap" >"$T/snap.txt"
	[ "$(grep -c ' seq=' "$T/snap.txt")" -ge $((K * N)) ]
}
wait_until 120 count_all || true
bad=
for i in $(seq "$K"); do
	pid=$(awk '/^pid/ { print $2 }' "$T/w.$i")
	all=$(grep -c "\"w$i seq=" "$T/snap.txt")
	mine=$(grep -c "^$pid .*\"w$i seq=" "$T/snap.txt")
	[ "$mine" -eq "$all" ] || echo "note: w$i: $((all - mine)) markers not attributed to pid $pid"
	uniq=$(grep -o "\"w$i seq=[0-9]*\"" "$T/snap.txt" | sort -u | wc -l)
	[ "$all" -eq "$N" ] && [ "$uniq" -eq "$N" ] || bad="$bad w$i:$uniq/$all"
done
for i in $(seq "$K"); do kill "$(awk '/^pid/ { print $2 }' "$T/w.$i")" 2>/dev/null; done
[ -z "$bad" ] || die "markers lost or repeated across the kill and the takeover (writer:unique/all of $N):$bad" -- "$T/pmd.log"
late=$(session_field big late)
ok "after the takeover: all $K x $N markers once each (late: $late)"
