#!/usr/bin/env bash
# Whole stacks for programs a shell starts (issue 18 case 13): Debian's xz
# started through `sh -c 'xz ...'` and `bash -c 'xz ... & wait'`, 10 times
# each, recorded by `perfmark record --call-graph ehframe` and by a
# system-wide perfmarkd session (-a --call-graph ehframe): in every run at
# least 95 % of the samples xz takes in liblzma reach __libc_start_call_main
# (stock perf script shows the chains; only xz's pids count, found by its
# FORK from the shell the test started).
#
# A shell forks on one CPU and the child execs and maps its libraries on
# another: the sideband of the two CPUs is read one buffer after the other,
# and the unwinder once applied a FORK or COMM read late over the MMAP2s of
# the new image (and the BPF walk used the last image's mappings until the
# exec was read): most runs lost every liblzma stack.
#
# The daemon builds the tables of whatever the machine runs on the thread
# that drains the ring: a first build of a large ELF file (cc1: 0.5 s) can
# stall it long enough that the stacks of a process started meanwhile are
# neither walked nor copied (the ring has no room left for copies).  Other
# people's compilers on a shared machine can make a session run fail so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/unwind-lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
command -v xz >/dev/null || die "xz not installed (xz-utils)"
RUNS=${RUNS:-10}
xz_shells_init

mode=ehframe
[ "$PM_RECORDER" = perf ] && mode=dwarf     # ehframe is perfmark's own
for shape in "${shapes[@]}"; do
	shell_cmd "$shape"
	worst=
	for i in $(seq "$RUNS"); do
		F=$T/rec.data
		pm_record -F 2000 --call-graph "$mode" -o "$F" -- "${SHCMD[@]}" 2>"$T/rec.err" ||
			die "$shape run $i: record failed" -- "$T/rec.err"
		pid_chains_in "$F" xz "$LIB" "$MAIN" >"$T/runs"
		[ "$(wc -l <"$T/runs")" -eq 1 ] || die "$shape run $i: not one xz process" -- "$T/runs"
		read -r pid ppid m n <"$T/runs"
		check_run "record, $shape, run $i" "$pid" "$m" "$n"
		worst=$(awk -v w="${worst:-1}" -v m="$m" -v n="$n" 'BEGIN { print (m / n < w ? m / n : w) }')
	done
	ok "perfmark record --call-graph $mode -- $shape: $RUNS runs, the worst $(awk "BEGIN { printf \"%.1f\", 100 * $worst }") % of $LIB samples reach $MAIN"
done

[ "$PM_RECORDER" = perf ] && exit 0

# the same in a system-wide session, its snapshot filtered by the shells' children
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
daemon_start
pm session create shells -a -F 1000 --call-graph ehframe --no-markers --ring 256M ||
	die "create failed" -- "$T/pmd.log"
# past its first drain, which installs every process the machine runs (their
# tables built): until then the ring fills, and new processes' stacks are
# not copied for want of room
has_stacks() {
	pm session show shells --json >"$T/show.json" 2>/dev/null &&
		/usr/bin/python3 -c 'import json, sys
sys.exit(not json.load(open(sys.argv[1])).get("unwind", {}).get("stacks"))' "$T/show.json"
}
wait_until 60 has_stacks || die "the session unwound no stack in 60 s" -- "$T/show.json"
session_xz_runs shells
ok "session -a --call-graph ehframe: every one of $((2 * RUNS)) xz runs started by a shell has >= 95 % of its $LIB samples reaching $MAIN"
pm session delete shells >/dev/null 2>&1
