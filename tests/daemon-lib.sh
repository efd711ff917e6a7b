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

daemon_start() {
	# shellcheck disable=SC2086  # PMD_ARGS: more options, split on spaces
	"$PERFMARKD" --foreground --socket "$PERFMARK_SOCKET" --state-dir "$PMD_STATE" ${PMD_ARGS:-} \
		--pin-dir "$PMD_PINS" >>"$T/pmd.log" 2>&1 &
	PMD_PID=$!
	_bg_pids+=("$PMD_PID")
	local i
	for i in $(seq 100); do
		[ -S "$PERFMARK_SOCKET" ] && "$PERFMARK" session list >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	die "perfmarkd did not start" -- "$T/pmd.log"
}

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

# markers in a perf.data: count of "BPF string" lines, optionally matching $2
markers_in() {
	perf script -i "$1" 2>/dev/null | grep 'BPF string' | grep -c -- "${2:-.}"
}

# "PID BPF string: ..." for each string marker in a perf.data (or - for stdin)
marker_lines() {
	perf script -i "$1" 2>/dev/null |
		awk '/perfmark:printf/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+(\/[0-9]+)?$/) { p = $i; sub(/\/.*/, "", p); break } }
		     /BPF string/ { sub(/^ */, ""); print p, $0 }'
}
