#!/usr/bin/env bash
# Whole stacks in a system-wide ehframe session while other people's
# programs keep the recorder building tables (issue 18 case 13, under load):
# the session part of t-unwind-shell.sh (Debian's xz started through
# `sh -c` and `bash -c '& wait'`, 10 times each; >= 95 % of the samples
# each xz takes in liblzma reach __libc_start_call_main) while
#   - a loop runs fresh copies of gcc's cc1, each under a build-id of its
#     own (a new table of about half a second to build, every round), and
#     short programs (python3, gcc --version): foreign_load in unwind-lib.sh;
#   - a CPU hog spins on every CPU.
#
# The daemon once built every table on the thread that reads the ring: a
# drain spent seconds on others' programs while the ring's room for stack
# copies ran out, and xz's samples got frame pointers (broken chains).
# Tables are built by worker threads now, the ones sampled processes need
# first, and the copies waiting for a table are walked once it is there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/unwind-lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
[ "$PM_RECORDER" = perf ] && skip "a perfmarkd session: nothing of stock perf's to compare"
command -v xz >/dev/null || die "xz not installed (xz-utils)"
command -v gcc >/dev/null || die "gcc not installed"
RUNS=${RUNS:-10}
xz_shells_init

# unwind.FIELD of session ${2:-load}'s figures
show_field() {
	pm session show "${2:-load}" --json >"$T/show.json" 2>/dev/null &&
		/usr/bin/python3 -c 'import json, sys
print(json.load(open(sys.argv[1])).get("unwind", {}).get(sys.argv[2], 0))' "$T/show.json" "$1"
}

# until session $1 is building a table (the load keeps giving it new ones)
building() { [ "$(show_field builds_pending "$1")" -gt 0 ] 2>/dev/null; }
wait_building() {
	wait_until 60 building "$1" || die "session $1 built nothing in 60 s" -- "$T/show.json"
}

# the daemon has said nothing of a sanitizer's (an ASan build: PERFMARK_BUILD=build-asan)
no_sanitizer_report() {
	! grep -E "AddressSanitizer|LeakSanitizer|runtime error" "$T/pmd.log" ||
		die "$1: a sanitizer's report" -- "$T/pmd.log"
}

# SIGTERM (sessions stay pinned): perfmarkd exits 0, with no sanitizer's report; $1 says when
daemon_term_clean() {
	local rc
	kill -TERM "$PMD_PID"
	wait "$PMD_PID"
	rc=$?
	PMD_PID=
	[ "$rc" -eq 0 ] || die "perfmarkd exited $rc on SIGTERM: $1" -- "$T/pmd.log"
	no_sanitizer_report "$1"
}

. "$(dirname "$0")/daemon-lib.sh"
need_daemon
daemon_start
# the hogs and the load fill a flight recorder fast: a snapshot after each shape
pm session create load -a -F 1000 --call-graph ehframe --no-markers --ring 256M ||
	die "create failed" -- "$T/pmd.log"
has_stacks() { [ "$(show_field stacks)" -gt 0 ] 2>/dev/null; }
wait_until 60 has_stacks || die "the session unwound no stack in 60 s" -- "$T/show.json"

mkdir "$T/load"
cpu_hogs
bg foreign_load "$T/load"
# the load is on: its first copies of cc1 have been built
built0=$(show_field built)
load_built() { [ -s "$T/load/rounds" ] && [ "$(show_field built)" -ge $((built0 + 2)) ]; }
wait_until 120 load_built || die "the foreign load built no table in 120 s" -- "$T/show.json"
rounds0=$(wc -l <"$T/load/rounds")

session_xz_runs load
rounds=$(($(wc -l <"$T/load/rounds") - rounds0))
[ "$rounds" -ge 2 ] || die "the foreign load ran $rounds rounds while xz ran"
ok "session -a --call-graph ehframe with $rounds rounds of foreign load (new cc1 tables) and a CPU hog per CPU: every one of $((2 * RUNS)) xz runs has >= 95 % of its $LIB samples reaching $MAIN"

# Stopped while a table is being built: the last ehframe session goes (its
# builders are stopped and joined), the daemon goes on; then a daemon
# restart (SIGTERM keeps sessions pinned) while another is building.
wait_building load
pm session delete load || die "delete while building failed" -- "$T/pmd.log"
pm session list >/dev/null || die "the daemon is gone after a delete while building" -- "$T/pmd.log"
pm session create big -a -F 1000 --call-graph ehframe --no-markers --ring 16M ||
	die "create big failed" -- "$T/pmd.log"
wait_building big
daemon_term_clean "SIGTERM while building"
daemon_start
pm session show big >/dev/null || die "big not restored" -- "$T/pmd.log"
wait_building big
pm session delete big || die "delete big failed" -- "$T/pmd.log"
daemon_term_clean "a session deleted while building"
ok "sessions deleted and a daemon restarted while tables were being built: clean"
