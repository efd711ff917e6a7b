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
daemon_start
launcher_start
pm session create held -p "$LAUNCHER" -F 99 --ring 64M || die "create failed" -- "$T/pmd.log"
for i in $(seq "$K"); do
	launch "$T/w.$i" PROG_EMIT_EVERY=100 "$N" "w$i" 1 300
done
all_at() {
	local i
	for i in $(seq "$K"); do
		[ "$(grep -c '^at ' "$T/w.$i" 2>/dev/null)" -ge $(($1 / 100)) ] || return 1
	done
}
wait_until 300 all_at 300 || die "the writers did not get to 300 markers each"
touch "$T/hold.fastlane"
wait_until 60 test -e "$T/hold.fastlane.held" || die "no drain held with markers copied" -- "$T/pmd.log"
daemon_kill9
rm -f "$T/hold.fastlane"
all_emitted() {
	local i
	for i in $(seq "$K"); do grep -q '^emitted' "$T/w.$i" || return 1; done
}
wait_until 300 all_emitted || die "the writers did not end their markers while no daemon ran"
daemon_start
wait_until 120 session_is held state running || die "held did not run again" -- "$T/pmd.log"
count_all() {
	pm session snapshot held -o "$T/snap" 2>"$T/snap.err" || return 1
	marker_lines "$T/snap" >"$T/snap.txt"
	[ "$(grep -c ' seq=' "$T/snap.txt")" -ge $((K * N)) ]
}
wait_until 120 count_all || true
bad=
for i in $(seq "$K"); do
	all=$(grep -c "\"w$i seq=" "$T/snap.txt")
	uniq=$(grep -o "\"w$i seq=[0-9]*\"" "$T/snap.txt" | sort -u | wc -l)
	[ "$all" -eq "$N" ] && [ "$uniq" -eq "$N" ] || bad="$bad w$i:$uniq/$all"
done
for i in $(seq "$K"); do kill "$(awk '/^pid/ { print $2 }' "$T/w.$i")" 2>/dev/null; done
[ -z "$bad" ] || die "markers lost or repeated across a kill between copy and hand-on (writer:unique/all of $N):$bad" -- "$T/pmd.log"
ok "a kill -9 with markers copied and not handed on: all $K x $N markers once each"
