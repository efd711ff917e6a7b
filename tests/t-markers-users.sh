#!/usr/bin/env bash
# Two users' processes apart, through the fast lane: two members of group
# perfmark each run a system-wide ring session in perfmarkd, and each runs a
# marker loop (so does root).  Each member's snapshot holds every marker of
# their own process, written through the fast lane (the process saw its
# rings read), and not one marker of the other member's or of root's: the
# recorder reads every process's rings, but hands a session only what its
# owner may see.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/users-lib.sh"
need_daemon
test_users pm13
extra_members 1
ua=$MEMBER_UID ub=${EXTRA_UIDS[0]}   # two members
daemon_start_shared
mkdir -m 0777 "$T/u"

as_uid "$ua" "$PERFMARK" session create sa -a -F 99 --ring 16M || die "member a: create failed" -- "$T/pmd.log"
as_uid "$ub" "$PERFMARK" session create sb -a -F 99 --ring 16M || die "member b: create failed" -- "$T/pmd.log"
as_uid "$ua" "$PROGS/prog-children" loop 1.5 >"$T/u/a.out" &
pa=$!
as_uid "$ub" "$PROGS/prog-children" loop 1.5 >"$T/u/b.out" &
pb=$!
"$PROGS/prog-children" loop 1.5 >"$T/root.out" &
pr=$!
wait "$pa" "$pb" "$pr" || die "a marker loop failed"
for w in a b; do
	grep -q '^attached at ' "$T/u/$w.out" || die "member $w's process never had its rings read" -- "$T/u/$w.out"
done
# (a snapshot has everything up to its moment)
as_uid "$ua" "$PERFMARK" session snapshot sa -o "$T/u/sa.data" || die "member a: snapshot failed"
as_uid "$ub" "$PERFMARK" session snapshot sb -o "$T/u/sb.data" || die "member b: snapshot failed"
pid_a=$(sed -n 's/^pid //p' "$T/u/a.out") pid_b=$(sed -n 's/^pid //p' "$T/u/b.out")
pid_r=$(sed -n 's/^pid //p' "$T/root.out")
n_a=$(sed -n 's/^loop emitted \([0-9]*\) .*/\1/p' "$T/u/a.out")
n_b=$(sed -n 's/^loop emitted \([0-9]*\) .*/\1/p' "$T/u/b.out")
count() {   # file pid: markers of that process in the snapshot
	"$PERFMARK" script -i "$1" --json 2>/dev/null | grep '"event":"perfmark' | grep -c "\"pid\":$2,"
}
cp "$T/u/sa.data" "$T/sa.data"; cp "$T/u/sb.data" "$T/sb.data"
[ "$(count "$T/sa.data" "$pid_a")" -eq "$n_a" ] ||
	die "member a's session has $(count "$T/sa.data" "$pid_a") of their $n_a markers"
[ "$(count "$T/sb.data" "$pid_b")" -eq "$n_b" ] ||
	die "member b's session has $(count "$T/sb.data" "$pid_b") of their $n_b markers"
for x in "sa $pid_b" "sa $pid_r" "sb $pid_a" "sb $pid_r"; do
	set -- $x
	[ "$(count "$T/$1.data" "$2")" -eq 0 ] || die "session $1 holds markers of process $2, not its owner's"
done
ok "each member's session: all $n_a / $n_b markers of their own process (fast lane), none of the other member's or root's"
echo "t-markers-users: all checks passed"
