#!/usr/bin/env bash
# No blind gap: a process that starts and exits while perfmarkd is down
# (killed, or restarting) keeps its command name and, where its mappings
# were seen, its symbols.  While a pinned collection runs with no daemon,
# BPF writes exec/comm/fork/exit and the executable mappings walked at exec
# and exit into the pinned ring (bpf/sideband.bpf.c); the next daemon turns
# those older than its own sideband into COMM/FORK/EXIT/MMAP2 records.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"
daemon_start

pm session create gap -a -F 499 --ring 64M || die "create failed" -- "$T/pmd.log"
daemon_kill9

# while no daemon runs: a marker program and a CPU burner, both gone before it is back
pe=$("$PROGS/prog-emit" 300 gap | awk '/^pid/ { print $2 }')
"$PROGS/prog-spin" 1 &
ps=$!
wait "$ps"
[ -d "/proc/$pe" ] || [ -d "/proc/$ps" ] && die "a gap process is still running"

daemon_start
pm session snapshot gap -o "$T/snap" || die "snapshot failed" -- "$T/pmd.log"

n=$(marker_lines "$T/snap" | grep -c "^$pe .*\"gap seq=")
[ "$n" -eq 300 ] || die "$n of 300 markers of the gap process $pe" -- "$T/pmd.log"
n=$(perf script -i "$T/snap" -F comm,pid,event 2>/dev/null | grep -c "^ *prog-emit *$pe .*perfmark:printf")
[ "$n" -eq 300 ] || {
	perf script -i "$T/snap" -F comm,pid,event 2>/dev/null | grep " $pe " | head -3 >"$T/seen"
	die "the gap process's markers are not named prog-emit ($n of 300)" -- "$T/seen"
}
ok "a process that ran only while the daemon was down: 300 markers, named prog-emit"

perf script -i "$T/snap" -F comm,pid,ip,sym 2>/dev/null | awk -v p="$ps" '$2 == p' >"$T/spin.txt"
total=$(wc -l <"$T/spin.txt")
[ "$total" -ge 50 ] || die "only $total samples of the gap CPU burner $ps" -- "$T/pmd.log"
named=$(grep -c '^ *prog-spin ' "$T/spin.txt")
# (a sample between its fork and its exec carries the shell's name, rightly)
[ $((named * 10)) -ge $((total * 9)) ] || die "$((total - named)) of $total gap samples without the name prog-spin" -- "$T/spin.txt"
grep 'spin_loop' "$T/spin.txt" | grep -vq '^ *prog-spin ' && die "samples in spin_loop not named prog-spin" -- "$T/spin.txt"
insym=$(grep -c 'spin_loop' "$T/spin.txt")
[ $((insym * 10)) -ge $((total * 7)) ] ||
	die "only $insym of $total samples of the gap CPU burner resolved to spin_loop" -- "$T/spin.txt"
perf report -i "$T/snap" --stdio --sort comm,dso,sym 2>/dev/null | grep -q 'prog-spin *prog-spin *\[\.\] spin_loop' ||
	die "perf report does not show prog-spin's spin_loop"
ok "the gap CPU burner: $total samples named prog-spin, $insym in spin_loop (perf report agrees)"

# the same across a clean restart, and the gap records never double what the daemon saw itself
pm session create live -a -F 99 --ring 16M || die "create live failed"
pl=$("$PROGS/prog-emit" 50 live | awk '/^pid/ { print $2 }')
pm session snapshot live -o "$T/live" || die "snapshot live failed"
n=$(perf script -i "$T/live" --show-task-events 2>/dev/null | grep -c "PERF_RECORD_COMM exec: prog-emit:$pl/$pl")
[ "$n" -eq 1 ] || die "the exec of a process the daemon saw is reported $n times"
ok "processes the daemon saw itself: no doubled sideband"
