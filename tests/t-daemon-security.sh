#!/usr/bin/env bash
# perfmarkd access control and bad input: a user outside group perfmark is
# refused, a member sees only their own sessions, bad names are refused,
# garbage / truncated / oversized / unknown messages get an error and leave
# the other sessions alone; a member's raw request for tracepoints is
# refused unless perf_event_paranoid is -1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/users-lib.sh"
need_daemon
test_users pm10
daemon_start_shared

pm session create rootsess -F 99 || die "root create failed"

out=$(as_outsider "$PERFMARK" session list 2>&1) && die "outsider allowed: $out"
echo "$out" | grep -q '^perfmark: permission denied' || die "unclear refusal: $out"
ok "outsider refused: $out"

as_member "$PERFMARK" session create usersess -F 99 --ring 1M || die "member create failed" -- "$T/pmd.log"
out=$(as_member "$PERFMARK" session list)
echo "$out" | grep -q usersess || die "member does not see own session"
echo "$out" | grep -q rootsess && die "member sees root's session"
out=$(as_member "$PERFMARK" session show rootsess 2>&1) && die "member can show root's session"
echo "$out" | grep -q "no such session 'rootsess'" || die "unexpected: $out"
as_member "$PERFMARK" session stop rootsess 2>/dev/null && die "member stopped root's session"
as_member "$PERFMARK" session show usersess --json | grep -q "\"owner\":$MEMBER_UID" || die "owner not the member"
out=$(as_member "$PERFMARK" session create big --ring 512M 2>&1) && die "member got a 512M ring"
echo "$out" | grep -q 'too large' || die "unexpected: $out"
out=$(as_member "$PERFMARK" session create pid1 -p 1 2>&1) && die "member traced pid 1"
echo "$out" | grep -q 'not yours' || die "unexpected: $out"
# tracepoints describe other processes (the task switched in, a file
# name): a member records them only where perf_event_paranoid is -1, as
# perf; the daemon checks it on the raw request, whatever the client did
tpreq='{"v": 2, "cmd": "create", "name": "tpsess", "def": {"spec": {"events": ["sched:sched_switch"]}}}'
out=$(as_member /usr/bin/python3 "$PERFMARK_SRC/tests/hostile-client.py" "$PERFMARK_SOCKET" send "$tpreq" 2>&1)
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt -1 ]; then
	python3 -c 'import json, sys; r = json.loads(sys.argv[1]); sys.exit(r["ok"] or "needs root" not in r["error"])' "$out" ||
		die "member got a tracepoint session at perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid): $out"
	pm session show tpsess >/dev/null 2>&1 && die "perfmarkd made the member's tracepoint session"
else
	python3 -c 'import json, sys; sys.exit(not json.loads(sys.argv[1])["ok"])' "$out" ||
		die "member refused a tracepoint session at perf_event_paranoid -1: $out"
	pm session delete tpsess
fi
pm session list | grep -q usersess || die "root does not see the member's session"
ok "member limited to own sessions (and to tracepoints as perf_event_paranoid allows)"

# the member's session sees the member's processes only: markers of a
# process of theirs are in its snapshot, those of root's process are not
mkdir -m 0777 "$T/u2"
as_member "$DEMO" 0.2 >"$T/u2/demo-own.out" 2>&1 || die "markers-demo as the member failed"
"$DEMO" 0.2 >"$T/demo-root.out" 2>&1 || die "markers-demo as root failed"
own=$(sed -n 's/.*pid \([0-9]*\),.*/\1/p' "$T/u2/demo-own.out")
other=$(sed -n 's/.*pid \([0-9]*\),.*/\1/p' "$T/demo-root.out")
# (a snapshot has everything up to its moment)
as_member "$PERFMARK" session snapshot usersess -o "$T/u2/snap.data" || die "the member's snapshot failed"
# perf reads only files of its own user: look at a copy
cp "$T/u2/snap.data" "$T/snap.data"
n=$(marker_lines "$T/snap.data" | grep -c "^$own ")
[ "$n" -ge 3 ] || die "the member's snapshot lacks the markers of their own process $own ($n)"
perf script -i "$T/snap.data" --show-task-events 2>/dev/null | grep -qE "[ :]$other[ /]" &&
	die "the member's snapshot holds records of root's process $other"
ok "member's session: $n markers of their own process, nothing of root's"

out=$(pm session create ../x 2>&1) && die "../x accepted"
echo "$out" | grep -q "invalid session name" || die "unexpected: $out"
pm session create .hidden 2>/dev/null && die ".hidden accepted"
pm session create "$(printf 'a%.0s' $(seq 65))" 2>/dev/null && die "65-character name accepted"

# bad input straight on the socket
python3 - "$PERFMARK_SOCKET" <<'PY' || die "bad-input checks failed"
import socket, struct, json, sys
path = sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(5); s.connect(path); return s
def reply(s):
    h = b''
    while len(h) < 4:
        c = s.recv(4 - len(h))
        if not c: return None
        h += c
    n = struct.unpack('<I', h)[0]; b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: return None
        b += c
    return json.loads(b)
def frame(obj):
    b = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return struct.pack('<I', len(b)) + b
cases = [
    ("garbage", b"hello there, daemon\n"),
    ("oversized", struct.pack('<I', 10 << 20) + b'{}'),
    ("not json", frame(b'{"v":1,"cmd":')),
    ("unknown cmd", frame({"v":1, "cmd":"explode"})),
    ("bad version", frame({"v":99, "cmd":"list"})),
    ("bad name", frame({"v":1, "cmd":"show", "name":"../../etc"})),
    ("bad def", frame({"v":1, "cmd":"create", "name":"x", "def":{"freq":"fast"}})),
    ("array", frame(b'[1,2,3]')),
]
for name, data in cases:
    s = conn(); s.sendall(data); r = reply(s)
    if not r or r.get("ok") is not False or not r.get("error"):
        print("FAIL", name, r); sys.exit(1)
    print("ok:", name, "->", r["error"])
    s.close()
# truncated: half a frame, then hang up
s = conn(); s.sendall(struct.pack('<I', 100) + b'{"v":1'); s.close()
# a key the daemon does not know (a newer client's option) is refused, named, never dropped
for req, want in [
    ({"v":2, "cmd":"record", "opts":{"freq":99, "xyz":True}, "argv":[]},
     "perfmarkd does not know option 'xyz'"),
    ({"v":2, "cmd":"create", "name":"u", "def":{"spec":{"xyz":1}, "sink":{"type":"ring"}}},
     "bad session definition: perfmarkd does not know option 'xyz'"),
    ({"v":2, "cmd":"list", "xyz":1}, "perfmarkd does not know request key 'xyz' (in 'list')"),
]:
    s = conn(); s.sendall(frame(req)); r = reply(s)
    if not r or r.get("ok") is not False or r.get("error") != want:
        print("FAIL unknown key:", req, "->", r); sys.exit(1)
    print("ok: unknown key ->", r["error"])
    s.close()
# valid requests still work
s = conn(); s.sendall(frame({"v":1, "cmd":"list"})); r = reply(s)
assert r and r["ok"] and any(x["name"] == "rootsess" for x in r["sessions"]), r
print("ok: daemon still answers")
PY
pm session show rootsess | grep -q '^state: *running' || die "other session affected"
kill -0 "$PMD_PID" || die "daemon died"
pm session delete usersess
pm session delete rootsess
ok "bad input answered with errors, nothing else affected"
