#!/usr/bin/env bash
# A -p session keeps its target's descendants across a kill -9 of
# perfmarkd: those forked while the killed daemon ran (it saw their FORKs,
# the next one never does), those forked while no daemon ran (the pinned
# programs follow forks), one that ran and exited while no daemon ran, one
# of each that detached from its parent (a daemon given to init: no /proc
# chain up to the target), and those forked after the restart.  The target
# is a launcher (a shell, as a service manager): each writer is its
# grandchild (the launcher's subshell's child).  Every marker of every
# writer is in the next snapshot, once.  Before: the restarted daemon knew
# only the -p pid and looked one level up /proc, so every marker the older
# writers wrote after the kill was dropped as not the session's (about 200
# of 3000 kept each: those before the kill).  Counted by pid and tag.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"
K=3        # writers of each kind
N=3000     # markers each, a millisecond apart ("at S" every 100)
D=500      # markers of the writer that runs and exits while no daemon runs
daemon_start
launcher_start
pm session create kids -p "$LAUNCHER" -F 99 --ring 64M || die "create kids failed" -- "$T/pmd.log"
# a neighbour: another -p session on the same events (the same pinned
# programs and target set) whose target, a shell, runs a writer o as its
# child; after the restart neither session takes the other's processes
mkfifo "$T/nb.go"
# shellcheck disable=SC2016  # expanded by that shell; ": " keeps it from exec'ing the writer
bash -c 'read -r _; PROG_EMIT_EVERY=100 "$1" "$2" o 1 300 >"$3"; :' nb "$PROGS/prog-emit" "$N" "$T/o" <"$T/nb.go" &
NB=$!
_bg_pids+=("$NB")
exec 7>"$T/nb.go"
pm session create nb -p "$NB" -F 99 --ring 16M || die "create nb failed" -- "$T/pmd.log"
echo go >&7
exec 7>&-

# writer_pid OUT: the pid prog-emit printed (empty until it has)
writer_pid() { awk '/^pid/ { print $2 }' "$1" 2>/dev/null; }
# started AT NAME...: every writer NAME ($T/NAME its output) has written AT
# markers; their pids are then killed with the test (they stay until
# killed, as services do)
started() {
	local at=$1 w
	shift
	for w; do [ "$(grep -c '^at ' "$T/$w" 2>/dev/null)" -ge $((at / 100)) ] || return 1; done
	for w; do _bg_pids+=("$(writer_pid "$T/$w")"); done
}
ended() {
	local w
	for w; do grep -q '^emitted' "$T/$w" 2>/dev/null || return 1; done
}
group() { local i; for i in $(seq "$K"); do echo "$1$i"; done; }
A=$(group a); B=$(group b); C=$(group c)

# a: forked while the first daemon runs; e: one that detaches from its
# parent (a daemon: given to init, its chain up to the target broken)
for w in $A; do launch "$T/$w" PROG_EMIT_EVERY=100 "$N" "$w" 1 300; done
launch "$T/e" PROG_EMIT_DETACH=1 PROG_EMIT_EVERY=100 "$N" e 1 300
# shellcheck disable=SC2086  # A: the writers' names, split
wait_until 300 started 200 $A e o || die "the writers a, e and o did not get to 200 markers"
daemon_kill9
# b: forked while no daemon runs, f: one that detaches, d: one that ends
# (exits) before the restart
for w in $B; do launch "$T/$w" PROG_EMIT_EVERY=100 "$N" "$w" 1 300; done
launch "$T/f" PROG_EMIT_DETACH=1 PROG_EMIT_EVERY=100 "$N" f 1 300
launch "$T/d" "$D" d
# shellcheck disable=SC2086
wait_until 300 started 200 $B f || die "the writers b and f did not get to 200 markers while no daemon ran"
wait_until 300 ended d || die "the writer d did not end while no daemon ran"
daemon_start
# c: forked after the restart (the new daemon sees them fork)
for w in $C; do launch "$T/$w" PROG_EMIT_EVERY=100 "$N" "$w" 1 300; done
# shellcheck disable=SC2086
wait_until 300 started 100 $C || die "the writers c did not start"
# shellcheck disable=SC2086
wait_until 600 ended $A $B $C e f o || die "the writers did not end their markers"
ok "writers: $K and a detached one forked before the kill -9; $K, a detached one and one that exited while no daemon ran; $K after the restart"

# count W: writer W's markers "W seq=" by its pid in snap.txt: "unique/all"
count() {
	local pid
	pid=$(writer_pid "$T/$1")
	[ -n "$pid" ] || { echo "nopid/0"; return; }
	echo "$(grep "^$pid .*\"$1 seq=" "$T/snap.txt" | grep -o "\"$1 seq=[0-9]*\"" | sort -u | wc -l)/$(grep -c "^$pid .*\"$1 seq=" "$T/snap.txt")"
}
want() { [ "$1" = d ] && echo "$D/$D" || echo "$N/$N"; }
complete() {
	local w
	pm session snapshot kids -o "$T/snap" 2>"$T/snap.err" || return 1
	marker_lines "$T/snap" >"$T/snap.txt"
	for w in $A $B $C d e f; do [ "$(count "$w")" = "$(want "$w")" ] || return 1; done
}
# a snapshot holds everything up to its moment; polled only because the
# kept writers' last markers may sit in their rings until the next pass
wait_until 120 complete || true
bad=
for w in $A $B $C d e f; do
	n=$(count "$w")
	[ "$n" = "$(want "$w")" ] || bad="$bad $w:$n"
done
[ -z "$bad" ] || die "markers of the -p target's descendants lost or repeated across the kill -9 (writer:unique/all of $N, d of $D):$bad" -- "$T/pmd.log"
ok "every marker of every descendant once: $((K + 1)) x $N forked before the kill, $((K + 1)) x $N and $D while down, $K x $N after"

# the neighbour's writer is the neighbour's only, and none of ours is its
n=$(count o)
[ "$n" = "0/0" ] || die "the neighbour session's writer o is in kids after the restart: $n"
pm session snapshot nb -o "$T/snap" 2>"$T/snap.err" || die "snapshot of nb failed" -- "$T/snap.err"
marker_lines "$T/snap" >"$T/snap.txt"
n=$(count o)
[ "$n" = "$N/$N" ] || die "the neighbour session lost markers of its own writer across the restart: $n of $N"
for w in $A e; do
	n=$(count "$w")
	[ "$n" = "0/0" ] || die "the writer $w of kids is in the neighbour session nb: $n"
done
ok "a neighbour -p session on the same pinned programs: its writer its own ($N/$N), none of kids' in it"

# the writers go, and the launcher's subshells have said so (else their
# .done files race the removal of $T at exit)
for w in $A $B $C e f o; do kill "$(writer_pid "$T/$w")" 2>/dev/null; done
all_done() { local w; for w in $A $B $C d e f; do [ -e "$T/$w.done" ] || return 1; done; }
wait_until 60 all_done || die "the launcher's subshells did not end"
