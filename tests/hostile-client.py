#!/usr/bin/env python3
"""A hostile perfmarkd client for tests/t-hostile-*.sh (issue 8): raw
protocol frames (u32 length + JSON), descriptors passed with SCM_RIGHTS,
whatever the real client would never send.

  hostile-client.py SOCKET record-fd PATH MODE   record into PATH opened
      with MODE (path: O_PATH, ro: O_RDONLY|O_NONBLOCK); prints the reply
      of record-start as JSON
  hostile-client.py SOCKET snapshot-fd NAME PATH MODE
  hostile-client.py SOCKET attach-fd NAME PATH MODE
  hostile-client.py SOCKET hold N SECONDS   N connections held open, idle;
      prints how many the daemon accepted (they answer a ping; a refused one
      got its error and was closed), then, once the daemon has closed every
      accepted one or SECONDS passed, how many it closed
  hostile-client.py SOCKET send JSON   one request as it is; prints the reply
"""
import json, os, select, socket, struct, sys, time, array

def frame(obj):
    b = json.dumps(obj).encode()
    return struct.pack('<I', len(b)) + b

def conn(path, timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s

def send(s, obj, fd=None):
    data = frame(obj)
    if fd is None:
        s.sendall(data)
    else:
        s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [fd]))])

def reply(s):
    h = b''
    while len(h) < 4:
        c = s.recv(4 - len(h))
        if not c:
            return None
        h += c
    n = struct.unpack('<I', h)[0]
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None
        b += c
    return json.loads(b)

def open_mode(path, mode):
    if mode == 'path':
        return os.open(path, os.O_PATH)
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)

def main():
    sock, what = sys.argv[1], sys.argv[2]
    if what == 'record-fd':
        path, mode = sys.argv[3], sys.argv[4]
        s = conn(sock)
        send(s, {"v": 2, "cmd": "record", "opts": {"events": ["cpu-clock"], "freq": 99,
                                                   "target": "all"}})
        r = reply(s)
        if not r or not r.get("ok"):
            print(json.dumps(r)); return
        fd = open_mode(path, mode)
        send(s, {"v": 2, "cmd": "record-start", "pipe": True}, fd)
        print(json.dumps(reply(s)))
    elif what in ('snapshot-fd', 'attach-fd'):
        name, path, mode = sys.argv[3], sys.argv[4], sys.argv[5]
        s = conn(sock)
        fd = open_mode(path, mode)
        send(s, {"v": 2, "cmd": what[:-3], "name": name}, fd)
        print(json.dumps(reply(s)))
    elif what == 'send':
        s = conn(sock)
        send(s, json.loads(sys.argv[3]))
        print(json.dumps(reply(s)))
    elif what == 'hold':
        n, secs = int(sys.argv[3]), float(sys.argv[4])
        held, refused = [], 0
        for _ in range(n):
            try:
                held.append(conn(sock, 5))
            except OSError:
                refused += 1
        # an accepted connection answers a ping; a refused one was sent one
        # error frame and closed at once
        accepted = []
        for s in held:
            try:
                s.settimeout(30)
                send(s, {"v": 2, "cmd": "ping"})
                r = reply(s)
            except OSError:
                r = None
            if r and r.get("ok"):
                accepted.append(s)
            else:
                refused += 1
        print(f"accepted {len(accepted)} refused {refused}", flush=True)
        # until the daemon has closed them all (a last message says why), or secs
        end = time.time() + secs
        closed, why, pending = 0, '', list(accepted)
        while pending and time.time() < end:
            ready, _, _ = select.select(pending, [], [], end - time.time())
            for s in ready:
                try:
                    d = s.recv(65536)
                except OSError:
                    d = b''
                if d and not why:
                    why = d[4:].decode(errors='replace')
                if not d:
                    closed += 1
                    pending.remove(s)
        print(f"closed {closed} {why}", flush=True)

main()
