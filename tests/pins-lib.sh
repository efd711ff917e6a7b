# Sourced by tests/lib.sh and tests/run.sh.

# sweep_dead_test_pins: the pins a test's perfmarkd left when the test died
# (run.sh's timeout, a kill -9: no cleanup trap ran) end.  They hold its
# collections with their uprobes attached, each on one of libperfmark's
# three register sites: every later recording would wait for a reader that
# never comes, or find every site taken ("every register site is taken by
# other recorders").  Only /sys/fs/bpf/perfmark-test-PID (daemon-lib.sh's
# PMD_PINS) whose test PID has gone, and which no perfmarkd holds (its
# flock on the directory, daemon/instance.c): never a live test's pins,
# never a user's.  Removed with the lock held, so no daemon starts on them
# meanwhile.
sweep_dead_test_pins() {
	local d pid
	[ "$(id -u)" -eq 0 ] || return 0
	for d in /sys/fs/bpf/perfmark-test-*; do
		[ -d "$d" ] && [ ! -L "$d" ] || continue
		pid=${d#/sys/fs/bpf/perfmark-test-}
		[[ $pid =~ ^[1-9][0-9]*$ ]] || continue
		[ -e "/proc/$pid" ] && continue
		flock -n "$d" rm -rf -- "$d" 2>/dev/null && ! [ -e "$d" ] &&
			echo "swept the pins of dead test $pid ($d)" >&2
	done
	return 0
}
