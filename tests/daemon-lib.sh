# Helpers for tests/t-daemon-*.sh (source after lib.sh): a private perfmarkd
# with its own socket, state dir and pin dir, killed at exit.
PERFMARKD=${PERFMARKD:-$PERFMARK_BUILD/perfmarkd}
DEMO=$PERFMARK_BUILD/examples/markers-demo
export PERFMARK_SOCKET=$T/pmd.sock
# the daemon path: `perfmark record` talks to this test's own perfmarkd
export PERFMARK_NO_DAEMON=0
PMD_STATE=$T/state
PMD_PINS=/sys/fs/bpf/perfmark-test-$$
PMD_PID=

need_daemon() {
	need_root
	need_perf
	[ -x "$PERFMARKD" ] || skip "no perfmarkd at $PERFMARKD"
	[ -x "$DEMO" ] || skip "no markers-demo at $DEMO"
	need_bpffs
	mountpoint -q /sys/fs/bpf || skip "bpffs not mounted"
}

# daemon_start: a daemon that answers and has taken its sessions' rings
# over (daemon_launch: one that answers; its rings may still be taken over,
# their sessions "starting")
daemon_start() {
	daemon_launch
	wait_until 120 none_starting || die "sessions still starting after 120 s" -- "$T/pmd.log"
}

none_starting() {
	local out
	out=$(timeout 30 "$PERFMARK" session list 2>/dev/null) || return 1
	! grep -q ' starting' <<<"$out"
}

daemon_launch() {
	# shellcheck disable=SC2086  # PMD_ARGS: more options, split on spaces
	"$PERFMARKD" --foreground --socket "$PERFMARK_SOCKET" --state-dir "$PMD_STATE" ${PMD_ARGS:-} \
		--pin-dir "$PMD_PINS" >>"$T/pmd.log" 2>&1 &
	PMD_PID=$!
	_bg_pids+=("$PMD_PID")
	wait_until 60 daemon_answers || die "perfmarkd did not start" -- "$T/pmd.log"
}

# the daemon answers on the control socket (a session list)
daemon_answers() {
	[ -S "$PERFMARK_SOCKET" ] && timeout 10 "$PERFMARK" session list >/dev/null 2>&1
}

# session_field NAME FIELD: one field of `session show NAME --json` (empty
# when the daemon does not answer)
session_field() {
	"$PERFMARK" session show "$1" --json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2" 2>/dev/null
}

# session_is NAME FIELD VALUE: the field says VALUE (for wait_until)
session_is() { [ "$(session_field "$1" "$2")" = "$3" ]; }
# session_at_least NAME FIELD N: the field is a number >= N
session_at_least() { local v; v=$(session_field "$1" "$2"); [ -n "$v" ] && [ "$v" -ge "$3" ]; }

# log_has PATTERN: the daemon logged a line matching PATTERN (grep -E)
log_has() { grep -qE -- "$1" "$T/pmd.log"; }

# daemon_start, then the socket open to every user: the daemon decides who gets in
daemon_start_shared() {
	daemon_start
	chmod 0666 "$PERFMARK_SOCKET"
}

daemon_kill9() {
	kill -9 "$PMD_PID" 2>/dev/null
	wait "$PMD_PID" 2>/dev/null
	PMD_PID=
}

daemon_cleanup() {
	[ -n "$PMD_PID" ] && kill "$PMD_PID" 2>/dev/null && wait "$PMD_PID" 2>/dev/null
	local d
	for d in "$PMD_PINS"/*; do
		[ -d "$d" ] && rm -f "$d"/* && rmdir "$d"
	done
	rmdir "$PMD_PINS" 2>/dev/null
	cleanup
}
trap daemon_cleanup EXIT

pm() { "$PERFMARK" "$@"; }

# A session that records this test's processes only: -p "$LAUNCHER", whose
# new children are targets too (also while no daemon runs: the pinned
# programs follow forks).  A system-wide session's ring on a loaded machine
# fills with other processes' markers (another test's burst, CI's
# neighbours): ours lapped out of it, its takeover walking millions of
# foreign records.  launcher_start starts it; launch OUT [VAR=VALUE...] ARGS...
# runs prog-emit ARGS as its child (stdin: $LAUNCH_IN, else /dev/null),
# stdout in OUT and OUT.done created once it has exited; emit VAR ARGS...
# runs one to its end and sets VAR to its pid.
LAUNCHER=
launcher_start() {
	mkfifo "$T/launch"
	bash -c 'while read -r out ins envs args; do
		# shellcheck disable=SC2086  # envs, args: split as words (no blanks inside)
		(env ${envs//,/ } "$1" $args <"$ins" >"$out"; touch "$out.done") &
	done' launcher "$PROGS/prog-emit" <"$T/launch" &
	LAUNCHER=$!
	_bg_pids+=("$LAUNCHER")
	exec 9>"$T/launch"
}
launch() {
	local out=$1 envs=
	shift
	while [[ ${1:-} == *=* ]]; do envs+=${envs:+,}$1; shift; done
	rm -f "$out" "$out.done"
	echo "$out ${LAUNCH_IN:-/dev/null} ${envs:-X=} $*" >&9
}
_emit_n=0
emit() {
	local var=$1 out
	shift
	_emit_n=$((_emit_n + 1))
	out=$T/emit.$_emit_n
	launch "$out" "$@"
	wait_until 600 test -e "$out.done" || die "prog-emit $* did not end"
	printf -v "$var" %s "$(awk '/^pid/ { print $2 }' "$out")"
	[ -n "${!var}" ] || die "prog-emit $* said no pid" -- "$out"
}

# register_sites LIB: the register sites of libperfmark file LIB that
# recorders hold, one bit each (their USDT semaphores, which the kernel
# raises in this python as it maps LIB)
register_sites() {
	python3 -c '
import ctypes, sys
l = ctypes.CDLL(sys.argv[1])
print(sum(1 << k for k in range(3) if ctypes.c_uint16.in_dll(l, "perfmark_register%d_semaphore" % k).value))' "$1"
}

# markers in a perf.data: count of "BPF string" lines, optionally matching $2
markers_in() {
	perf script -i "$1" 2>/dev/null | grep 'BPF string' | grep -c -- "${2:-.}"
}

# Writers for the kill and takeover tests: K processes the launcher starts
# (launcher_start), writer I writing N markers "wI seq=S" one a millisecond
# ("at S" every 100) and then staying, their areas alive as a service's are,
# until writers_kill.  K and N are the test's.
writers_launch() {
	local i
	for i in $(seq "$K"); do launch "$T/w.$i" PROG_EMIT_EVERY=100 "$N" "w$i" 1 300; done
}
# writers_start NAME RING S: a daemon, session NAME (ring RING) recording
# the launcher's children (-p: they stay its targets across a restart,
# t-daemon-takeover-children.sh), and the writers, each at S markers at least
writers_start() {
	daemon_start
	launcher_start
	pm session create "$1" -p "$LAUNCHER" -F 99 --ring "$2" || die "create $1 failed" -- "$T/pmd.log"
	writers_launch
	wait_until 300 writers_at "$3" || die "the writers did not get to $3 markers each"
}
writer_pid() { awk '/^pid/ { print $2 }' "$T/w.$1" 2>/dev/null; }
writer_at() { grep '^at ' "$T/w.$1" 2>/dev/null | tail -1 | awk '{ print $2 }'; }
# writers_at S: every writer has written at least S markers
writers_at() {
	local i
	for i in $(seq "$K"); do [ "$(writer_at "$i")" -ge "$1" ] 2>/dev/null || return 1; done
}
writers_emitted() {
	local i
	for i in $(seq "$K"); do grep -q '^emitted' "$T/w.$i" 2>/dev/null || return 1; done
}
writers_done() {
	local i
	for i in $(seq "$K"); do [ -e "$T/w.$i.done" ] || return 1; done
}
# the writers go, and the launcher's subshells say so (else their .done
# files race the removal of $T at exit)
writers_kill() {
	local i
	for i in $(seq "$K"); do kill "$(writer_pid "$i")" 2>/dev/null; done
	wait_until 60 writers_done || die "the launcher's subshells did not end"
}
# writer_count I: "unique/all" of writer I's markers in $T/snap.txt, under its pid
writer_count() {
	local pid
	pid=$(writer_pid "$1")
	echo "$(grep "^$pid .*\"w$1 seq=" "$T/snap.txt" | grep -o "\"w$1 seq=[0-9]*\"" | sort -u | wc -l)/$(grep -c "^$pid .*\"w$1 seq=" "$T/snap.txt")"
}
# writers_complete SESSION: a snapshot of SESSION ($T/snap, its markers in
# $T/snap.txt) holds every writer's N markers once each
writers_complete() {
	local i
	pm session snapshot "$1" -o "$T/snap" 2>"$T/snap.err" || return 1
	marker_lines "$T/snap" >"$T/snap.txt"
	for i in $(seq "$K"); do [ "$(writer_count "$i")" = "$N/$N" ] || return 1; done
}
# writers_bad: " wI:unique/all" for each writer without its N markers once each
writers_bad() {
	local i n
	for i in $(seq "$K"); do
		n=$(writer_count "$i")
		[ "$n" = "$N/$N" ] || printf ' w%s:%s' "$i" "$n"
	done
}
# held_kill_restart NAME WHAT: with the writers going, the daemon held at
# $T/hold.WHAT (PERFMARK_TEST_HOLD, it says so with .held) is killed -9
# there; the writers end with no daemon, a new one starts, and once NAME
# runs again and holds every marker (or 120 s went by): $bad (writers_bad)
# and $T/show.txt (session show)
held_kill_restart() {
	touch "$T/hold.$2"
	wait_until 60 test -e "$T/hold.$2.held" || die "the daemon was not held at $2" -- "$T/pmd.log"
	daemon_kill9
	rm -f "$T/hold.$2"
	wait_until 300 writers_emitted || die "the writers did not end their markers while no daemon ran"
	daemon_start
	wait_until 120 session_is "$1" state running || die "$1 did not run again" -- "$T/pmd.log"
	wait_until 120 writers_complete "$1" || true
	bad=$(writers_bad)
	"$PERFMARK" session show "$1" >"$T/show.txt" 2>&1
}

# "PID BPF string: ..." for each string marker in a perf.data (or - for stdin)
marker_lines() {
	perf script -i "$1" 2>/dev/null |
		awk '/perfmark:printf/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+(\/[0-9]+)?$/) { p = $i; sub(/\/.*/, "", p); break } }
		     /BPF string/ { sub(/^ */, ""); print p, $0 }'
}

# snapshot_holds FILE COMM [PID]: what a recording holds of a process, for a
# failure to tell a lost sample from a lost mapping: its COMM/MMAP/FORK
# records, how many samples it has, its first three (PID: that process only)
snapshot_holds() {
	local f=$1 comm=$2 pid=${3:-} who
	who=${pid:+ $pid/}
	echo "its records:"
	perf script -i "$f" --show-mmap-events --show-task-events 2>/dev/null |
		grep -a "PERF_RECORD" | grep -a -- "${who:-$comm}" | head -8
	perf script -i "$f" -F comm,pid,time,ip,sym,dso 2>/dev/null |
		awk -v c="$comm" -v p="$pid" '
			/^[^\t]/ { split($0, h, " "); mine = h[1] == c && (p == "" || h[2] == p)
				    if (mine && ++n <= 3) first = first "\n" $0; next }
			mine && n <= 3 && NF { first = first "\n" $0 }
			END { print "its samples: " n + 0; print "its first samples:" first }'
}
