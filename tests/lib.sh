# Shared helpers for the integration tests tests/t-*.sh.  Source it first:
#
#   . "$(dirname "$0")/lib.sh"
#
# A test exits 0 (pass), 77 (skip; the reason is the last line printed) or
# anything else (fail).  tests/run.sh exports PERFMARK_BUILD (the meson build
# dir) and PERFMARK_SRC (the repository); both default to this checkout.
#
# Environment knobs:
#   PM_RECORDER=perf   record with stock `perf record -e cpu-clock` instead of
#                      `perfmark record`: checks that the assertions themselves
#                      are right (everything but perfmark-only behaviour).
#   PM_KEEP=1          keep the temporary directory for inspection.
set -u

PERFMARK_SRC=${PERFMARK_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
PERFMARK_BUILD=${PERFMARK_BUILD:-$PERFMARK_SRC/build}
PERFMARK=${PERFMARK:-$PERFMARK_BUILD/perfmark}
PROGS=$PERFMARK_BUILD/tests
PM_RECORDER=${PM_RECORDER:-perfmark}
PERFPARSER=${PERFPARSER:-/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser}
# `perfmark record` in-process: a perfmarkd running on this machine must not
# be what a test tests.  The daemon-path tests (daemon-lib.sh) say otherwise.
export PERFMARK_NO_DAEMON=1

T=$(mktemp -d /tmp/perfmark-t.XXXXXX)
chmod 755 "$T"
_bg_pids=()

cleanup() {
	local p
	for p in "${_bg_pids[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	for p in "${_bg_pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	if [ -n "${PM_KEEP:-}" ]; then
		echo "kept $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT

# Print a failure and exit 1.  Optional file arguments after `--` are shown.
die() {
	local msg=$1; shift
	echo "FAIL: $msg"
	if [ "${1:-}" = -- ]; then
		shift
		local f
		for f in "$@"; do
			echo "---- $f (head)"
			head -n 40 "$f" 2>/dev/null
		done
	fi
	exit 1
}

skip() { echo "SKIP: $*"; exit 77; }
ok() { echo "ok: $*"; }

need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; }
need_perf() { perf version >/dev/null 2>&1 || skip "perf (linux-perf) not installed"; }
need_perfmark() {
	[ "$PM_RECORDER" = perf ] || [ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
	local p
	for p in prog-ratio prog-threads prog-forkexec prog-spin; do
		[ -x "$PROGS/$p" ] || skip "no test program $PROGS/$p"
	done
}
need_bpffs() {
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true
}
# sweep_dead_test_pins (pins-lib.sh): what dead tests' daemons left pinned
# ends before a test starts, whoever runs it (run.sh does too)
. "$(dirname "${BASH_SOURCE[0]}")/pins-lib.sh"
sweep_dead_test_pins

# Start a command in the background; its pid is in $BG_PID and it is killed
# at exit if still alive.
bg() {
	"$@" &
	BG_PID=$!
	_bg_pids+=("$BG_PID")
}

# Kill background processes we started (by pid) and reap them quietly.
bg_kill() {
	local p
	for p in "$@"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	return 0
}

# wait_until SECONDS CMD...: run CMD until it succeeds (return 0), every
# POLL_STEP s, or fail (return 1) once SECONDS have passed.  Tests wait on
# conditions this way, never on time alone: the deadline only bounds a
# failure, so make it generous (a loaded machine is slow, STRESS=1).
POLL_STEP=${POLL_STEP:-0.05}
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep "$POLL_STEP"
	done
}

# wait_gone SECONDS PID...: until none of the processes is alive
_all_gone() { local p; for p in "$@"; do kill -0 "$p" 2>/dev/null && return 1; done; return 0; }
wait_gone() { local t=$1; shift; wait_until "$t" _all_gone "$@"; }

# lines_at_least FILE N: FILE exists and holds N lines or more
lines_at_least() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }

# Wait until a file holds at least N lines (default 1), up to 30 s.
wait_lines() { wait_until 30 lines_at_least "$1" "${2:-1}"; }

# cpu_ns PID: nanoseconds the process's threads have run on a CPU so far
# (schedstat).  What a cpu-clock sampler sees of a process is in proportion
# to this, not to wall time: on a loaded machine the two part.
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { printf "%.0f\n", n }'   # (mawk's %d stops at 2^31)
}
# cpu_at_least PID NS: the process has run NS ns (for wait_until)
cpu_at_least() { [ "$(cpu_ns "$1")" -ge "$2" ]; }

# comm_is PID NAME: the process runs NAME (it has exec'd it)
comm_is() { [ "$(cat /proc/"$1"/comm 2>/dev/null)" = "$2" ]; }

# mono_ns: CLOCK_MONOTONIC now, in ns (the clock of perfmark's records)
mono_ns() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }

# file_has FILE PATTERN: FILE exists and a line matches PATTERN (grep -E)
file_has() { [ -f "$1" ] && grep -qE -- "$2" "$1"; }

# let_time_pass SECONDS WHY: when time itself is what a test looks at (an
# idle daemon's wakeups over a period, a rotation by age), not a wait for
# something to happen.  WHY says which.
let_time_pass() { sleep "$1"; }

# Is the cycles hardware event available here?  (No PMU in most VMs.)
have_hw_cycles() {
	! perf stat -e cycles -x, true 2>&1 | grep -qi 'not supported\|not counted\|<not'
}

# pm_record ARGS... : record with the recorder under test.  ARGS are perfmark
# record options; with PM_RECORDER=perf they are translated for `perf record`
# (`--duration N` becomes `timeout -s INT N perf record`, cpu-clock is forced, -F defaults to
# 4000 as perfmark's does).  pm_record_argv only sets the array PMREC to the
# command line (for starting the recorder in the background with `bg`).
pm_record_argv() {
	if [ "$PM_RECORDER" = perf ]; then
		local args=() dur= seen_F= a
		while [ $# -gt 0 ]; do
			a=$1; shift
			case $a in
			--duration) dur=$1; shift;;
			--duration=*) dur=${a#--duration=};;
			-F|-c) seen_F=1; args+=("$a" "$1"); shift;;
			--no-markers) ;;
			--) break;;
			*) args+=("$a");;
			esac
		done
		[ -z "$seen_F" ] && args+=(-F 4000)
		if [ -n "$dur" ]; then
			PMREC=(timeout --preserve-status -s INT "$dur" perf record -q -e cpu-clock "${args[@]}")
		else
			PMREC=(perf record -q -e cpu-clock "${args[@]}" -- "$@")
		fi
	else
		PMREC=("$PERFMARK" record "$@")
	fi
}

pm_record() {
	pm_record_argv "$@"
	"${PMREC[@]}"
	local rc=$?
	# perf stopped by timeout's SIGINT exits 130: that is its normal end here
	[ "$PM_RECORDER" = perf ] && [ "${PMREC[0]}" = timeout ] && [ "$rc" -eq 130 ] && rc=0
	return "$rc"
}

# Flat samples, one line each: "COMM PID/TID IP SYM" (leaf frame only).
samples_flat() {
	perf script -i "$1" -G -F comm,pid,tid,ip,sym 2>/dev/null
}

# perf report self-overhead per symbol: lines "PERCENT SYMBOL".
report_self() {
	perf report -i "$1" --stdio --no-children --sort sym -g none 2>/dev/null |
		awk '/^ *[0-9.]+%/ { p = $1; sub("%", "", p); print p, $NF }'
}

# Percentage of symbol $2 in report_self output file $1 (0 when absent).
pct_of() {
	awk -v s="$2" '$2 == s { print $1; f = 1 } END { if (!f) print 0 }' "$1" | head -n 1
}

# Floating-point test: fcmp "EXPR" (awk syntax), true when EXPR holds.
fcmp() { awk "BEGIN { exit !($1) }"; }
