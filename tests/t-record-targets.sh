#!/usr/bin/env bash
# Targets: -p PID, -a, a multi-threaded CMD, a CMD that forks and execs, and
# processes outside the target that must not show up.  perfmark record exits
# with CMD's status.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs

# samples_flat lines: "COMM PID/TID IP SYM"; print "COMM PID TID SYM".
flat() { samples_flat "$1" | awk '{ split($2, a, "/"); print $1, a[1], a[2], $NF }'; }

# record_flat NAME ARGS...: pm_record -o $T/NAME.data ARGS (output in
# $T/NAME.out and .err), which must succeed; the samples in $T/NAME.flat
record_flat() {
	local name=$1 rc; shift
	pm_record -o "$T/$name.data" "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ "$rc" -eq 0 ] || die "record $* exited $rc" -- "$T/$name.err"
	flat "$T/$name.data" >"$T/$name.flat"
}

# record_cpu NAME NS KEY... -- ARGS: record ARGS in the background (as
# record_flat) while the targets run: once the file being written holds a
# sample of every KEY (PID, or PID/TID for a thread), each KEY's CPU time is
# read, the recording goes on until each has run NS more of it, and is
# stopped (SIGTERM).  Sets WANT[KEY] to what 4000 Hz of that CPU time gives,
# less a tenth: samples in proportion to the CPU time the targets got,
# whatever the machine's load (a --duration in wall time gave a loaded
# machine's spins a fraction of it).  With PM_RECORDER=perf, whose file is
# not readable before it ends, the wait is on the CPU time alone and WANT 1.
declare -A WANT
key_cpu() {   # PID or PID/TID
	if [[ $1 == */* ]]; then
		awk '{ print $1 }' "/proc/${1%/*}/task/${1#*/}/schedstat" 2>/dev/null || echo 0
	else
		cpu_ns "$1"
	fi
}
key_sampled() {   # FILE KEY: a sample of KEY in the file so far
	samples_flat "$1" | awk -v k="$2" '{ split($2, a, "/"); if (a[1] "/" a[2] == k || a[1] == k) { f = 1; exit } } END { exit !f }'
}
all_sampled() { local f=$1 k; shift; for k in "$@"; do key_sampled "$f" "$k" || return 1; done; }
all_ran() { local k; for k in "${!C0[@]}"; do [ "$(key_cpu "$k")" -ge $((C0[$k] + $1)) ] || return 1; done; }
record_cpu() {
	local name=$1 ns=$2 keys=() k rec rc
	declare -gA C0=()
	shift 2
	while [ "$1" != -- ]; do keys+=("$1"); shift; done
	shift
	pm_record_argv -o "$T/$name.data" "$@"
	"${PMREC[@]}" >"$T/$name.out" 2>"$T/$name.err" &
	rec=$!
	_bg_pids+=("$rec")
	if [ "$PM_RECORDER" != perf ]; then
		wait_until 120 all_sampled "$T/$name.data" "${keys[@]}" ||
			die "record $*: no sample of each of ${keys[*]} in 120 s" -- "$T/$name.err"
	fi
	for k in "${keys[@]}"; do C0[$k]=$(key_cpu "$k"); done
	wait_until 300 all_ran "$ns" || die "the targets did not run $ns ns of CPU in 300 s"
	for k in "${keys[@]}"; do
		WANT[$k]=$(awk -v ns="$(($(key_cpu "$k") - C0[$k]))" 'BEGIN { printf "%.0f", ns / 1e9 * 4000 * 0.9 }')
		[ "$PM_RECORDER" = perf ] && WANT[$k]=1
	done
	kill -TERM "$rec"
	wait "$rec"
	rc=$?
	[ "$rc" -eq 0 ] || { [ "$PM_RECORDER" = perf ] && [ "$rc" -eq 143 ]; } ||
		die "record $* exited $rc" -- "$T/$name.err"
	flat "$T/$name.data" >"$T/$name.flat"
}

# spins FLAT PID: spin_loop samples of prog-spin with that pid
spins() { awk -v p="$2" '$1 == "prog-spin" && $2 == p && $4 == "spin_loop"' "$1" | wc -l; }

# --- -p PID --------------------------------------------------------------------
bg "$PROGS/prog-spin" 600; target=$BG_PID
bg "$PROGS/prog-spin" 600; outsider=$BG_PID
wait_until 30 comm_is "$target" prog-spin && wait_until 30 comm_is "$outsider" prog-spin ||
	die "the prog-spins did not start"
record_cpu p 500000000 "$target" -- -g -p "$target"
n=$(spins "$T/p.flat" "$target")
[ "$n" -ge "${WANT[$target]}" ] ||
	die "-p $target: $n spin_loop samples of prog-spin/$target (want >= ${WANT[$target]}: 4000 Hz of its CPU time)" -- "$T/p.flat" "$T/p.err"
other=$(awk -v p="$target" '$2 != p' "$T/p.flat" | wc -l)
[ "$other" -eq 0 ] || die "-p $target: $other samples of other pids" -- "$T/p.flat"
ok "-p: $n samples, all of pid $target"

# --- -a ------------------------------------------------------------------------
# the two prog-spins are still running (until killed)
record_cpu a 500000000 "$target" "$outsider" -- -g -a
for p in "$target" "$outsider"; do
	n=$(spins "$T/a.flat" "$p")
	[ "$n" -ge "${WANT[$p]}" ] ||
		die "-a: $n spin_loop samples with comm prog-spin for pid $p (want >= ${WANT[$p]})" -- "$T/a.flat" "$T/a.err"
	ok "-a: $n samples for prog-spin/$p"
done

# --- -p PID,PID ------------------------------------------------------------------
record_cpu p2 300000000 "$target" "$outsider" -- -p "$target,$outsider"
for p in "$target" "$outsider"; do
	n=$(spins "$T/p2.flat" "$p")
	[ "$n" -ge "${WANT[$p]}" ] ||
		die "-p $target,$outsider: $n spin_loop samples for $p (want >= ${WANT[$p]})" -- "$T/p2.flat" "$T/p2.err"
done
other=$(awk -v a="$target" -v b="$outsider" '$2 != a && $2 != b' "$T/p2.flat" | wc -l)
[ "$other" -eq 0 ] || die "-p $target,$outsider: $other samples of other pids" -- "$T/p2.flat"
ok "-p PID,PID: both pids, nothing else"
bg_kill "$target" "$outsider"

# --- -p PID of a multi-threaded process: every thread ---------------------------
bg "$PROGS/prog-threads" 600 >"$T/threads.out"; mt=$BG_PID
wait_lines "$T/threads.out" 3 || die "prog-threads did not start" -- "$T/threads.out"
record_cpu pt 300000000 $(awk -v p="$mt" '{ print p "/" $2 }' "$T/threads.out") -- -g -p "$mt"
while read -r name tid fn; do
	n=$(awk -v p="$mt" -v t="$tid" -v f="$fn" -v c="$name" '$2 == p && $3 == t && $4 == f && $1 == c' "$T/pt.flat" | wc -l)
	[ "$n" -ge "${WANT[$mt/$tid]}" ] ||
		die "-p $mt: $n samples for thread $name/$tid in $fn (want >= ${WANT[$mt/$tid]})" -- "$T/pt.flat"
	ok "-p $mt: thread $name/$tid has $n samples in $fn"
done <"$T/threads.out"
bg_kill "$mt"

# --- multi-threaded CMD, with an outsider running ------------------------------
bg "$PROGS/prog-spin" 600; outsider=$BG_PID
record_flat t -g -- "$PROGS/prog-threads" 2
[ "$(wc -l <"$T/t.out")" -eq 3 ] || die "prog-threads did not print its three threads" -- "$T/t.out"
while read -r name tid fn; do
	total=$(awk -v t="$tid" '$3 == t' "$T/t.flat" | wc -l)
	mine=$(awk -v t="$tid" -v f="$fn" '$3 == t && $4 == f' "$T/t.flat" | wc -l)
	named=$(awk -v t="$tid" -v f="$fn" -v c="$name" '$3 == t && $4 == f && $1 == c' "$T/t.flat" | wc -l)
	elsewhere=$(awk -v t="$tid" -v f="$fn" '$3 != t && $4 == f' "$T/t.flat" | wc -l)
	[ "$mine" -ge 200 ] || die "thread $name/$tid: only $mine samples in $fn" -- "$T/t.flat"
	fcmp "$mine / $total >= 0.9" || die "thread $name/$tid: $mine of $total samples in $fn" -- "$T/t.flat"
	fcmp "$named / $mine >= 0.9" || die "thread $tid: $named of $mine $fn samples have comm $name" -- "$T/t.flat"
	[ "$elsewhere" -eq 0 ] || die "$elsewhere $fn samples attributed to a tid other than $tid" -- "$T/t.flat"
	ok "thread $name/$tid: $mine samples in $fn ($named named $name)"
done <"$T/t.out"
n=$(awk -v p="$outsider" '$2 == p' "$T/t.flat" | wc -l)
[ "$n" -eq 0 ] || die "-- CMD: $n samples of pid $outsider, which is not CMD" -- "$T/t.flat"
n=$(awk '$1 == "prog-spin"' "$T/t.flat" | wc -l)
[ "$n" -eq 0 ] || die "-- CMD: $n samples of some prog-spin, which is not CMD" -- "$T/t.flat"
ok "-- CMD: no samples of the outsider $outsider"
bg_kill "$outsider"
# CMD is held in the recorder's fork until its exec: the file has its COMM from
# then, and only the maps its exec makes (as perf writes them), none of the recorder's
if [ "$PM_RECORDER" = perfmark ]; then
	perf script -i "$T/t.data" --show-mmap-events -F comm,pid 2>/dev/null >"$T/t.side"
	n=$(grep -c 'PERF_RECORD_MMAP2.*/perfmark$' "$T/t.side")
	[ "$n" -eq 0 ] || die "-- CMD: $n maps of the recorder written for CMD before its exec" -- "$T/t.side"
	grep -q 'PERF_RECORD_MMAP2.*prog-threads$' "$T/t.side" ||
		die "-- CMD: no map of prog-threads in the file" -- "$T/t.side"
	ok "-- CMD: its own maps, none of the recorder it was forked from"
fi

# --- fork + exec ---------------------------------------------------------------
record_flat f -g -- "$PROGS/prog-forkexec" 2
parent=$(sed -n 's/^parent //p' "$T/f.out")
child=$(sed -n 's/^child //p' "$T/f.out")
[ -n "$parent" ] && [ -n "$child" ] || die "prog-forkexec did not print its pids" -- "$T/f.out"
n=$(awk '$4 == "spin_loop"' "$T/f.flat" | wc -l)
good=$(awk -v p="$child" '$4 == "spin_loop" && $2 == p && $1 == "prog-spin"' "$T/f.flat" | wc -l)
[ "$n" -ge 1000 ] || die "fork+exec: only $n spin_loop samples from the exec'd child" -- "$T/f.flat"
[ "$good" -eq "$n" ] || die "fork+exec: $good of $n spin_loop samples are prog-spin/$child" -- "$T/f.flat"
ok "fork+exec: $n spin_loop samples, all prog-spin/$child"
n=$(awk '$4 == "parent_work"' "$T/f.flat" | wc -l)
good=$(awk -v p="$parent" '$4 == "parent_work" && $2 == p && $1 == "prog-forkexec"' "$T/f.flat" | wc -l)
[ "$n" -ge 100 ] && [ "$good" -eq "$n" ] ||
	die "fork+exec: $good of $n parent_work samples are prog-forkexec/$parent (want >= 100, all)" -- "$T/f.flat"
ok "fork+exec: $n parent_work samples, all prog-forkexec/$parent"
n=$(awk '$4 == "child_before_exec"' "$T/f.flat" | wc -l)
good=$(awk -v p="$child" '$4 == "child_before_exec" && $2 == p && $1 == "prog-forkexec"' "$T/f.flat" | wc -l)
[ "$n" -ge 50 ] && [ "$good" -eq "$n" ] ||
	die "fork+exec: $good of $n child_before_exec samples are prog-forkexec/$child (want >= 50, all)" -- "$T/f.flat"
ok "fork+exec: $n child_before_exec samples, all prog-forkexec/$child"

# --- exit status -----------------------------------------------------------------
pm_record -o "$T/e.data" -- sh -c 'exit 3' >"$T/e.out" 2>"$T/e.err"
rc=$?
[ "$rc" -eq 3 ] || die "record -- sh -c 'exit 3' exited $rc, want 3" -- "$T/e.err"
ok "exit status of CMD passed through"
echo "t-record-targets: all checks passed"
