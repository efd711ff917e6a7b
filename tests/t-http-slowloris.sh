#!/usr/bin/env bash
# perfmarkd --http against slowloris: 140 connections that each send part
# of a request's headers, then one byte every second, are never idle, so
# libmicrohttpd's idle timeout never closes them; they held all 128 slots
# and every scraper was refused.  A connection now has HTTP_HEADERS_S (10 s)
# for its headers, and at the limit a new one cuts the oldest still
# sending: /metrics answers while they dribble, and the cuts are counted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/http-lib.sh"
need_http
http_daemon
U=$HTTP:$HTTP_PORT/metrics

cat >"$T/slow.py" <<'PY'
import socket, sys, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
conns = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    conns.append(s)
print("open", len(conns), flush=True)
end = time.time() + secs
while time.time() < end and conns:
    time.sleep(1)
    alive = []
    for s in conns:
        try:
            s.sendall(b"X")
            alive.append(s)
        except OSError:
            s.close()
    conns = alive
    print("alive", len(conns), flush=True)
PY
bg python3 "$T/slow.py" "$HTTP_PORT" 140 120 >"$T/slow.out" 2>&1
slow=$BG_PID
wait_for 60 grep -q '^open 140' "$T/slow.out" || die "the slow client did not open its connections" -- "$T/slow.out"
wait_for 30 grep -q '^alive' "$T/slow.out" || die "the slow client did not dribble" -- "$T/slow.out"

# a scraper gets in while they dribble
code=$(curl -s -o "$T/m1" -w '%{http_code}' --max-time 10 "$U")
[ "$code" = 200 ] || die "/metrics while 140 connections dribble headers: HTTP $code, not 200" -- "$T/slow.out"
cut=$(metric "$(cat "$T/m1")" perfmark_http_cut_total)
# (as many as were accepted beyond 128 by then: the rest wait in the backlog)
[ "${cut:-0}" -ge 1 ] || die "at the limit: no connection was cut to let the scraper in" -- "$T/m1"
ok "/metrics answers while 140 connections dribble their headers ($cut cut at the limit)"

# past HTTP_HEADERS_S, the next connection cuts every one still sending
let_time_pass 11 "the slow connections outlive HTTP_HEADERS_S"
code=$(curl -s -o "$T/m2" -w '%{http_code}' --max-time 10 "$U")
[ "$code" = 200 ] || die "/metrics after 11 s: HTTP $code" -- "$T/slow.out"
cut=$(metric "$(cat "$T/m2")" perfmark_http_cut_total)
# (a few beyond the limit are refused by libmicrohttpd itself while a cut one closes)
[ "${cut:-0}" -ge 120 ] || die "after 11 s only $cut of the 140 slow connections were cut" -- "$T/m2"
gone() { tail -n 1 "$T/slow.out" | grep -q '^alive 0$' || ! kill -0 "$slow" 2>/dev/null; }
wait_for 30 gone || die "the slow client still holds connections" -- "$T/slow.out"
ok "after ${cut} cuts the slow client holds no connection (10 s for headers)"

# the control socket never noticed
pm session list >/dev/null || die "session list failed" -- "$T/pmd.log"
kill -0 "$PMD_PID" || die "perfmarkd died" -- "$T/pmd.log"
ok "perfmarkd and its control socket unaffected"
