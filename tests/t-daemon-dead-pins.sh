#!/usr/bin/env bash
# A test whose perfmarkd dies with it (run.sh's timeout, kill -9: no
# cleanup trap runs) leaves its pins, /sys/fs/bpf/perfmark-test-PID, with
# their uprobes attached: each collection holds one of libperfmark's three
# register sites for ever, a reader that never joins a process's area, so
# no later recording gets the fast lane (three of them: "every register site
# is taken by other recorders").  The harness sweeps them
# (sweep_dead_test_pins, pins-lib.sh: run.sh, and lib.sh as a test starts):
# those of a test whose PID has gone and that no perfmarkd holds, never
# those of a live test or a live daemon.
#  1. a daemon on the pins of a dead pid holds a site of a private copy of
#     libperfmark (no other test's recorder holds its sites); the sweep
#     leaves its pins while that daemon lives (its lock);
#  2. killed -9: its site stays taken and a recording of a process gets no
#     marker through the fast lane (the harm); swept: the pins are gone, the
#     site is free, and the next recording's markers take the fast lane;
#  3. the pins of a live test (this one's), its daemon killed -9, are kept
#     and adopted by the next daemon.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
PF=$PROGS/prog-first
[ -x "$PF" ] || skip "no test program $PF"
command -v flock >/dev/null || skip "no flock (util-linux)"
N=2000
# the copy of libperfmark the processes of this test map (LD_LIBRARY_PATH beats RUNPATH)
LIBD=$T/lib
mkdir -p "$LIBD"
cp -L "$PERFMARK_BUILD/libperfmark.so.0" "$LIBD/" || die "cannot copy libperfmark"
export LD_LIBRARY_PATH=$LIBD
sites() { register_sites "$LIBD/libperfmark.so.0"; }

# a pid that has gone (its number is not taken again while the test runs: pids wrap slowly)
dead=$(bash -c 'echo $$')
wait_gone 10 "$dead" || die "pid $dead did not go"
DPINS=/sys/fs/bpf/perfmark-test-$dead
[ -e "$DPINS" ] && die "$DPINS exists already"
dpid=
dead_cleanup() {
	[ -n "$dpid" ] && kill -9 "$dpid" 2>/dev/null
	rm -rf -- "$DPINS"
	daemon_cleanup
}
trap dead_cleanup EXIT

# record -v of prog-first wait N in-process, its recorder on the copy from its start
# (PERFMARK_LIB: not only once the process maps it): "FAST TRAP" in $T/$1.lanes
record_first() {
	PERFMARK_NO_DAEMON=1 PERFMARK_LIB=$LIBD/libperfmark.so.0 "$PERFMARK" record -v -o "$T/$1.data" -- "$PF" wait $N \
		>"$T/$1.out" 2>"$T/$1.err" || die "record exited $?" -- "$T/$1.err"
	sed -n 's/.*perfmark record: \([0-9]*\) markers through the fast lane, \([0-9]*\) through the trap lane.*/\1 \2/p' \
		"$T/$1.err" >"$T/$1.lanes"
	[ -s "$T/$1.lanes" ] || die "record -v does not count the markers by lane" -- "$T/$1.err"
	read -r fast trap <"$T/$1.lanes"
	[ $((fast + trap)) -eq $N ] || die "the lanes count $fast + $trap, prog-first emitted $N" -- "$T/$1.err"
}

# --- 1. the daemon of a dead test holds a site ---------------------------------
# a process that maps the copy: the sessions' target, waiting on a fifo nobody writes
mkfifo "$T/hold"
exec 8<>"$T/hold"
PROG_EMIT_GO=1 "$PROGS/prog-emit" 1 hold <"$T/hold" >/dev/null &
target=$!
_bg_pids+=("$target")
before=$(sites)
"$PERFMARKD" --foreground --socket "$T/d.sock" --state-dir "$T/dstate" --ring-dir "$T/drings" \
	--pin-dir "$DPINS" >"$T/d.log" 2>&1 &
dpid=$!
dsock_answers() { PERFMARK_SOCKET=$T/d.sock timeout 10 "$PERFMARK" session list >/dev/null 2>&1; }
wait_until 60 dsock_answers || die "the dead test's perfmarkd did not start" -- "$T/d.log"
PERFMARK_SOCKET=$T/d.sock "$PERFMARK" session create d -p "$target" -F 99 --ring 1M ||
	die "create d failed" -- "$T/d.log"
[ -d "$DPINS/d" ] || die "no pins under $DPINS" -- "$T/d.log"
held=$(($(sites) & ~before))
[ "$held" -ne 0 ] || die "the daemon holds no register site of $LIBD/libperfmark.so.0 ($before before, $(sites) now)" -- "$T/d.log"
sweep_dead_test_pins 2>"$T/sweep1.err"
[ -d "$DPINS/d" ] || die "the sweep removed the pins of a live perfmarkd" -- "$T/sweep1.err"
ok "the pins of a dead pid that a live perfmarkd holds are kept (it holds site mask $held)"

# --- 2. killed -9: its pins hold the site until swept -----------------------------
kill -9 "$dpid"
wait "$dpid" 2>/dev/null
dpid=
[ $(($(sites) & held)) -eq "$held" ] || die "the dead daemon's site was let go without a sweep"
record_first stale
[ "$fast" -eq 0 ] || die "with a stale site holder, $fast markers took the fast lane" -- "$T/stale.err" "$T/stale.out"
sweep_dead_test_pins 2>"$T/sweep2.err"
[ -e "$DPINS" ] && die "the pins of the dead test are still there after the sweep" -- "$T/sweep2.err"
grep -q "swept the pins of dead test $dead" "$T/sweep2.err" || die "the sweep did not say what it removed" -- "$T/sweep2.err"
site_free() { [ $(($(sites) & held)) -eq 0 ]; }
wait_until 30 site_free || die "after the sweep, register site mask $held is still taken ($(sites))"
record_first swept
[ "$fast" -gt 0 ] || die "after the sweep, no marker took the fast lane ($trap trap)" -- "$T/swept.err" "$T/swept.out"
grep -q "every register site is taken" "$T/swept.err" && die "after the sweep, every register site is taken" -- "$T/swept.err"
ok "a dead test's pins held a site: 0 of $N markers through the fast lane; swept: $fast fast, $trap trap"

# --- 3. a live test's pins stay, even with its daemon dead --------------------
daemon_start
pm session create live -p "$target" -F 99 --ring 1M || die "create live failed" -- "$T/pmd.log"
daemon_kill9
sweep_dead_test_pins 2>"$T/sweep3.err"
[ -d "$PMD_PINS/live" ] || die "the sweep removed the pins of a live test ($PMD_PINS)" -- "$T/sweep3.err"
daemon_start
log_has "session 'live': adopted the pinned collection" || die "the next daemon did not adopt them" -- "$T/pmd.log"
ok "a live test's pins are kept and adopted by its next daemon"
