#!/usr/bin/env bash
# perfmarkd under a systemd that does not read its notify socket (issue 18
# case 14; found under make check STRESS=1: perfmarkd killed by systemd's
# watchdog while 300 processes had their fast-lane rings stored).  The
# notify socket is a datagram socket that holds 10 messages here
# (net.unix.max_dgram_qlen); a blocking send then waits for systemd, the
# loop with it.  Here a listener that does not read: perfmarkd goes on
# answering and reading 40 processes' markers, queues what systemd has no
# room for (FDSTORE with its fd, in order) and delivers it once systemd
# reads.  And when a turn of the loop does take half the watchdog's period,
# the daemon says where its thread is stuck before the watchdog kills it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"

# the "systemd": binds $T/notify, reads nothing until $T/read exists, then
# logs each message on one line (its fds counted) into $T/notify.log
python3 - "$T" <<'PY' &
import array, os, socket, sys, time
t = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(t + "/notify")
open(t + "/notify.bound", "w").close()
while not os.path.exists(t + "/read"):
    time.sleep(0.05)
s.settimeout(0.2)
with open(t + "/notify.log", "w") as log:
    while not os.path.exists(t + "/stop"):
        try:
            msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(16 * 4))
        except socket.timeout:
            continue
        fds = array.array("i")
        for lvl, typ, data in anc:
            if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        for fd in fds:
            os.close(fd)
        log.write("%d %s\n" % (len(fds), msg.decode(errors="replace").replace("\n", " ")))
        log.flush()
PY
_bg_pids+=("$!")
wait_until 30 test -e "$T/notify.bound" || die "the notify listener did not start"

# a watchdog of 0.4 s: pings every 0.2 s, and a turn over 0.2 s is reported
export PERFMARK_TEST_HOLD=$T/hold
NOTIFY_SOCKET=$T/notify WATCHDOG_USEC=400000 daemon_start
launcher_start
pm session create n1 -p "$LAUNCHER" --ring 64M || die "create n1 failed" -- "$T/pmd.log"
wait_until 60 log_has 'systemd is not reading its notify socket' ||
	die "the daemon never found the notify socket full (pings every 0.2 s)" -- "$T/pmd.log"

# 40 processes, each a fast-lane ring to store: 200 markers 1 ms apart, then they stay
K=40
for i in $(seq "$K"); do
	launch "$T/w.$i" PROG_EMIT_EVERY=50 200 "w$i" 1 120
done
all_done() {
	local i
	for i in $(seq "$K"); do grep -q '^at 200$' "$T/w.$i" 2>/dev/null || return 1; done
}
wait_until 300 all_done || die "the writers did not all write their 200 markers"
daemon_answers || die "perfmarkd does not answer while systemd reads nothing" -- "$T/pmd.log"
wait_until 120 session_at_least n1 markers $((K * 200)) ||
	die "the session read $(session_field n1 markers) of the $((K * 200)) markers while systemd read nothing" -- "$T/pmd.log"
ok "systemd reading nothing: perfmarkd answers and read all $((K * 200)) markers"

# systemd reads again: everything queued arrives, READY=1 first, a ring with each FDSTORE
touch "$T/read"
stored() { local n; n=$(grep -c '^1 FDSTORE=1 FDNAME=pmfl-' "$T/notify.log" 2>/dev/null); [ "${n:-0}" -ge "$K" ]; }
wait_until 60 stored || die "systemd got $(grep -c FDSTORE=1 "$T/notify.log") rings to store, want $K" -- "$T/notify.log" "$T/pmd.log"
head -n 1 "$T/notify.log" | grep -q '^0 READY=1' || die "the first message is not READY=1" -- "$T/notify.log"
wait_until 30 log_has 'systemd reads its notify socket again' || die "the daemon did not say it caught up" -- "$T/pmd.log"
grep -q '^0 WATCHDOG=1' "$T/notify.log" || die "no watchdog ping after the queue" -- "$T/notify.log"
ok "once systemd reads: READY=1 first, $(grep -c '^1 FDSTORE=1' "$T/notify.log") rings stored with their fds, pings again ($(grep 'reads its notify socket again' "$T/pmd.log" | tail -n 1 | sed 's/^perfmarkd: //'))"

# a turn of the loop held (tests only): the daemon says where its thread waits
touch "$T/hold.loop"
# held in a system call: it says which, and that it waited for no CPU (a starved
# loop says how long it waited for one)
wait_until 60 log_has 'a turn of the loop has taken [0-9]+ ms so far: in system call [0-9]+.*; of the last [0-9]+ ms it ran [0-9]+ ms and waited for a CPU [0-9]+ ms' ||
	die "a held turn was not reported, with its CPU and wait times" -- "$T/pmd.log"
rm -f "$T/hold.loop"
wait_until 30 daemon_answers || die "the daemon does not answer once the turn goes on" -- "$T/pmd.log"
ok "$(grep -m 1 'a turn of the loop has taken' "$T/pmd.log" | sed 's/^perfmarkd: //')"
touch "$T/stop"
for i in $(seq "$K"); do kill "$(awk '/^pid/ { print $2 }' "$T/w.$i")" 2>/dev/null; done
gone() { local i; for i in $(seq "$K"); do [ -e "$T/w.$i.done" ] || return 1; done; }
wait_until 60 gone || die "the writers did not end"
pm session delete n1 || die "delete failed"
echo "t-daemon-notify: all checks passed"
