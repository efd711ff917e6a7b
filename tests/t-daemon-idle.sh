#!/usr/bin/env bash
# perfmarkd idle and systemd behaviour: no sessions means no periodic
# wakeups and a small RSS; READY=1, WATCHDOG=1 (at half WATCHDOG_USEC) and
# STOPPING=1 go to $NOTIFY_SOCKET; socket activation uses fd 3.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
daemon_start
let_time_pass 0.5 "the start-up's last wakeups pass: what follows counts an idle daemon's"
w1=$(awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/$PMD_PID/status)
let_time_pass 3 "the idle daemon's wakeups are counted over 3 s"
w2=$(awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/$PMD_PID/status)
rss=$(awk '/^VmRSS/ { print $2 }' /proc/$PMD_PID/status)
echo "idle: $((w2 - w1)) wakeups in 3 s, RSS ${rss} kB"
[ $((w2 - w1)) -le 1 ] || die "idle daemon woke up $((w2 - w1)) times in 3 s"
[ "$rss" -lt 20480 ] || die "idle RSS ${rss} kB >= 20 MB"
kill -TERM "$PMD_PID"; wait "$PMD_PID"; PMD_PID=

# sd_notify and watchdog
PERFMARK="$PERFMARK" python3 - "$PERFMARKD" "$T" "$PMD_PINS" <<'PY' || die "sd_notify checks failed"
import os, socket, subprocess, sys, time
d, t, pins = sys.argv[1], sys.argv[2], sys.argv[3]
ns = t + "/notify.sock"
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(ns); s.settimeout(10)
env = dict(os.environ, NOTIFY_SOCKET=ns, WATCHDOG_USEC="400000")
p = subprocess.Popen([d, "--socket", t + "/n.sock", "--state-dir", t + "/nstate", "--pin-dir", pins],
                     env=env, stderr=subprocess.DEVNULL)
msgs = []
def until(word):
    while True:
        m = s.recv(4096).decode(); msgs.append(m)
        if word in m: return
until("READY=1")
t0 = time.time(); until("WATCHDOG=1"); until("WATCHDOG=1"); dt = time.time() - t0
assert dt < 1.0, dt
p.terminate(); until("STOPPING=1"); p.wait(10)
print("ok: notify messages:", sorted(set(m.split("\n")[0] for m in msgs)), "two pings in %.2f s" % dt)
# socket activation: the listening socket arrives as fd 3
ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); ls.bind(t + "/act.sock"); ls.listen(8)
os.set_inheritable(ls.fileno(), True)
pid = os.fork()
if pid == 0:
    os.dup2(ls.fileno(), 3)
    os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS="1")
    os.execv(d, [d, "--foreground", "--socket", t + "/unused.sock", "--state-dir", t + "/astate", "--pin-dir", pins])
ls.close()
try:
    r = subprocess.run([os.environ["PERFMARK"], "session", "list"], env=dict(os.environ, PERFMARK_SOCKET=t + "/act.sock"),
                       capture_output=True, timeout=10)
    assert r.returncode == 0 and b"NAME" in r.stdout, r
    assert not os.path.exists(t + "/unused.sock")
    print("ok: socket activation")
finally:
    os.kill(pid, 15); os.waitpid(pid, 0)
PY
ok "idle and systemd protocol"
