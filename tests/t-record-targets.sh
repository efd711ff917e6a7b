#!/usr/bin/env bash
# Targets: -p PID, -a, a multi-threaded CMD, a CMD that forks and execs, and
# processes outside the target that must not show up.  perfmark record exits
# with CMD's status.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs

# samples_flat lines: "COMM PID/TID IP SYM"; print "COMM PID TID SYM".
flat() { samples_flat "$1" | awk '{ split($2, a, "/"); print $1, a[1], a[2], $NF }'; }

# --- -p PID --------------------------------------------------------------------
bg "$PROGS/prog-spin" 8; target=$BG_PID
bg "$PROGS/prog-spin" 8; outsider=$BG_PID
sleep 0.3
pm_record -g -p "$target" --duration 2 -o "$T/p.data" >"$T/p.out" 2>"$T/p.err"
rc=$?
[ "$rc" -eq 0 ] || die "record -p exited $rc" -- "$T/p.err"
flat "$T/p.data" >"$T/p.flat"
n=$(awk -v p="$target" '$1 == "prog-spin" && $2 == p && $4 == "spin_loop"' "$T/p.flat" | wc -l)
[ "$n" -ge 1000 ] || die "-p $target: $n spin_loop samples of prog-spin/$target in 2 s (want >= 1000)" -- "$T/p.flat" "$T/p.err"
other=$(awk -v p="$target" '$2 != p' "$T/p.flat" | wc -l)
[ "$other" -eq 0 ] || die "-p $target: $other samples of other pids" -- "$T/p.flat"
ok "-p: $n samples, all of pid $target"

# --- -a ------------------------------------------------------------------------
# the two prog-spins are still running (8 s)
pm_record -g -a --duration 2 -o "$T/a.data" >"$T/a.out" 2>"$T/a.err"
rc=$?
[ "$rc" -eq 0 ] || die "record -a exited $rc" -- "$T/a.err"
flat "$T/a.data" >"$T/a.flat"
for p in "$target" "$outsider"; do
	n=$(awk -v p="$p" '$1 == "prog-spin" && $2 == p && $4 == "spin_loop"' "$T/a.flat" | wc -l)
	[ "$n" -ge 500 ] || die "-a: $n spin_loop samples with comm prog-spin for pid $p (want >= 500)" -- "$T/a.flat" "$T/a.err"
	ok "-a: $n samples for prog-spin/$p"
done

# --- -p PID,PID ------------------------------------------------------------------
pm_record -p "$target,$outsider" --duration 1 -o "$T/p2.data" >/dev/null 2>"$T/p2.err"
rc=$?
[ "$rc" -eq 0 ] || die "record -p $target,$outsider exited $rc" -- "$T/p2.err"
flat "$T/p2.data" >"$T/p2.flat"
for p in "$target" "$outsider"; do
	n=$(awk -v p="$p" '$1 == "prog-spin" && $2 == p && $4 == "spin_loop"' "$T/p2.flat" | wc -l)
	[ "$n" -ge 300 ] || die "-p $target,$outsider: $n spin_loop samples for $p (want >= 300)" -- "$T/p2.flat" "$T/p2.err"
done
other=$(awk -v a="$target" -v b="$outsider" '$2 != a && $2 != b' "$T/p2.flat" | wc -l)
[ "$other" -eq 0 ] || die "-p $target,$outsider: $other samples of other pids" -- "$T/p2.flat"
ok "-p PID,PID: both pids, nothing else"
bg_kill "$target" "$outsider"

# --- -p PID of a multi-threaded process: every thread ---------------------------
bg "$PROGS/prog-threads" 4 >"$T/pt.out"; mt=$BG_PID
wait_lines "$T/pt.out" 3 || die "prog-threads did not start" -- "$T/pt.out"
sleep 0.2
pm_record -g -p "$mt" --duration 1.5 -o "$T/pt.data" >/dev/null 2>"$T/pt.err"
rc=$?
[ "$rc" -eq 0 ] || die "record -p $mt (threads) exited $rc" -- "$T/pt.err"
flat "$T/pt.data" >"$T/pt.flat"
while read -r name tid fn; do
	n=$(awk -v p="$mt" -v t="$tid" -v f="$fn" -v c="$name" '$2 == p && $3 == t && $4 == f && $1 == c' "$T/pt.flat" | wc -l)
	[ "$n" -ge 300 ] || die "-p $mt: $n samples for thread $name/$tid in $fn (want >= 300)" -- "$T/pt.flat"
	ok "-p $mt: thread $name/$tid has $n samples in $fn"
done <"$T/pt.out"
bg_kill "$mt"

# --- multi-threaded CMD, with an outsider running ------------------------------
bg "$PROGS/prog-spin" 5; outsider=$BG_PID
pm_record -g -o "$T/t.data" -- "$PROGS/prog-threads" 2 >"$T/t.out" 2>"$T/t.err"
rc=$?
[ "$rc" -eq 0 ] || die "record -- prog-threads exited $rc" -- "$T/t.err"
[ "$(wc -l <"$T/t.out")" -eq 3 ] || die "prog-threads did not print its three threads" -- "$T/t.out"
flat "$T/t.data" >"$T/t.flat"
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

# --- fork + exec ---------------------------------------------------------------
pm_record -g -o "$T/f.data" -- "$PROGS/prog-forkexec" 2 >"$T/f.out" 2>"$T/f.err"
rc=$?
[ "$rc" -eq 0 ] || die "record -- prog-forkexec exited $rc" -- "$T/f.err"
parent=$(sed -n 's/^parent //p' "$T/f.out")
child=$(sed -n 's/^child //p' "$T/f.out")
[ -n "$parent" ] && [ -n "$child" ] || die "prog-forkexec did not print its pids" -- "$T/f.out"
flat "$T/f.data" >"$T/f.flat"
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
