#!/usr/bin/env bash
# perfmarkd --http without --http-sessions exposes root's sessions only: the
# HTTP port has no users, so a member's session (of a process of theirs)
# must not show on /metrics nor answer /debug/pprof/profile, whoever asks.
# Its name gets the same 404 as a name that does not exist, and a pprof
# request without session= answers with root's one session, not theirs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/users-lib.sh"
. "$(dirname "$0")/http-lib.sh"
need_http
test_users pm23x
http_daemon
chmod 0666 "$PERFMARK_SOCKET"   # members reach it (daemon_start_shared)
U=$HTTP:$HTTP_PORT
P=$U/debug/pprof/profile

# root's session on a busy process of root's
PM_GO_FILE=$T/go "$PROGS/prog-latency" --cpu 120 >"$T/wl.out" 2>&1 &
wl=$!; _bg_pids+=("$wl")
wait_lines "$T/wl.out" || die "prog-latency did not start" -- "$T/wl.out"
pm session create ours -p "$wl" -F 499 --ring 8M || die "root's create failed" -- "$T/pmd.log"
touch "$T/go"

# the member's session on a process of theirs
setpriv --reuid="$MEMBER_UID" --regid=65534 --clear-groups sleep 120 &
mp=$!; _bg_pids+=("$mp")
wait_until 60 comm_is "$mp" sleep || die "the member's sleep did not start"
as_member "$PERFMARK" session create theirs -p "$mp" -F 99 --ring 1M ||
	die "the member cannot create a session of their own process" -- "$T/pmd.log"
pm session list | grep -q '^theirs ' || die "the member's session is not listed to root"

# /metrics: root's session, never the member's
has_ours() { curl -s "$U/metrics" >"$T/m.txt" && grep -q 'perfmark_samples_total{session="ours"}' "$T/m.txt"; }
wait_for 60 has_ours || die "/metrics lacks root's session" -- "$T/m.txt"
grep -q 'session="theirs"' "$T/m.txt" && die "/metrics shows a member's session by default" -- "$T/m.txt"
ok "/metrics: root's session shown, the member's not"

# pprof: the member's name is as unknown as a name that does not exist
code=$(http_code "$P?session=theirs&seconds=1" "$T/theirs.body")
[ "$code" = 404 ] || die "pprof of the member's session: HTTP $code, not 404" -- "$T/theirs.body"
http_code "$P?session=nosuch&seconds=1" "$T/nosuch.body" >/dev/null
cmp -s "$T/theirs.body" <(sed 's/nosuch/theirs/g' "$T/nosuch.body") ||
	die "the member's session and a missing one get different answers" -- "$T/theirs.body" "$T/nosuch.body"
ok "pprof of the member's session: 404, the same words as for a missing one"

# without session=: the one exposed session, root's
code=$(http_code "$P?seconds=1" "$T/one.pb.gz")
[ "$code" = 200 ] || die "pprof without session=: HTTP $code, not 200 (one session is exposed)" -- "$T/one.pb.gz"
gzip -t "$T/one.pb.gz" 2>/dev/null || die "pprof without session=: not a gzip'd profile"
code=$(http_code "$P?session=ours&seconds=1" "$T/ours.pb.gz")
[ "$code" = 200 ] || die "pprof of root's session: HTTP $code" -- "$T/ours.pb.gz"
ok "pprof without session= answers with root's one session"

# still so after the member makes a second one
as_member "$PERFMARK" session create theirs2 -p "$mp" -F 99 --ring 1M || die "second member create failed"
code=$(http_code "$P?seconds=1" "$T/one2.pb.gz")
[ "$code" = 200 ] || die "a member's second session changed what is exposed: HTTP $code" -- "$T/one2.pb.gz"
curl -s "$U/metrics" | grep -q 'session="theirs' && die "/metrics shows a member's session"
ok "a member's sessions never count among the exposed"
echo "t-http-exposure: all checks passed"
