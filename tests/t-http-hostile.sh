#!/usr/bin/env bash
# perfmarkd --http against bad requests and hostile range names: unknown
# session, a session root did not expose, seconds=0 and 10^9, other methods
# and paths get 4xx; 100 concurrent requests beyond the in-flight cap get 503
# while the request holding it still runs (at once, not queued), and the
# control socket answers meanwhile; a session without a ring gives the next
# N seconds; 100 000 distinct range names from one process stop at the cap
# of 1000 label sets with the overflow counted, and the names that need
# escaping come out as the exposition format wants (promtool parses it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/http-lib.sh"
need_http
http_daemon --http-sessions shown,files,names

PM_GO_FILE=$T/go "$PROGS/prog-latency" --cpu 120 >"$T/cpu.out" 2>&1 &
cpu=$!; _bg_pids+=("$cpu")
PM_GO_FILE=$T/go "$PROGS/prog-latency" --names 100000 >"$T/names.out" 2>&1 &
names=$!; _bg_pids+=("$names")
wait_lines "$T/cpu.out" && wait_lines "$T/names.out" || die "prog-latency did not start"
mkdir -p "$T/out"
pm session create shown -p "$cpu" -F 499 --ring 16M || die "create shown failed" -- "$T/pmd.log"
pm session create hidden -p "$cpu" -F 499 --ring 8M || die "create hidden failed" -- "$T/pmd.log"
pm session create files -p "$cpu" -F 499 -o "$T/out" || die "create files failed" -- "$T/pmd.log"
pm session create names -p "$names" -F 99 --ring 64M || die "create names failed" -- "$T/pmd.log"
touch "$T/go"   # its sessions are attached: the workload starts
U=$HTTP:$HTTP_PORT
P=$U/debug/pprof/profile

# --- bad requests: 4xx, each with one line saying why ---------------------
expect() {
	local want=$1 url=$2 got
	got=$(http_code "$url" "$T/body")
	[ "$got" = "$want" ] || die "$url: HTTP $got, not $want" -- "$T/body"
}
expect 404 "$P?session=nope&seconds=1"
expect 404 "$P?session=hidden&seconds=1"
expect 404 "$P?session=$(printf 'x%.0s' $(seq 70))&seconds=1"
expect 400 "$P?session=shown&seconds=0"
expect 400 "$P?session=shown&seconds=1000000000"
expect 400 "$P?session=shown&seconds=-1"
expect 400 "$P?session=shown&seconds=1e3"
expect 400 "$P?seconds=1"          # three exposed sessions: which one?
expect 404 "$U/debug/pprof/heap"
expect 404 "$U/"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data x "$U/metrics")
[ "$code" = 405 ] || [ "$code" = 400 ] || die "POST /metrics: HTTP $code"
curl -s "$U/metrics" >"$T/m1.txt"
grep -q 'session="hidden"' "$T/m1.txt" && die "/metrics shows a session not exposed"
grep -q 'perfmark_samples_total{session="shown"}' "$T/m1.txt" || die "/metrics lacks session shown" -- "$T/m1.txt"
ok "unknown, hidden, over-long session; seconds 0, 10^9, -1, 1e3; other paths and methods: 4xx"

# --- the in-flight cap: one pprof request holds it (the next 20 s of a
#     session without a ring), 100 more at once get 503 -------------------
curl -s -o "$T/hold.pb.gz" -w '%{http_code}' --max-time 120 "$P?session=files&seconds=20" >"$T/hold.code" &
hold=$!; _bg_pids+=("$hold")
held() { [ "$(metric "$(curl -s "$U/metrics")" 'perfmark_http_in_flight{path="/debug/pprof/profile"}')" = 1 ]; }
wait_for 30 held || die "the holding request never got in flight"
for i in $(seq 100); do
	curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 "$P?session=shown&seconds=1" >"$T/flood.$i" &
done
for i in $(seq 100); do
	curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 "$U/metrics" >"$T/mflood.$i" &
done
pm session list >"$T/list.txt" || die "the control socket did not answer during the flood"
wait_flood() { [ "$(cat "$T"/flood.* "$T"/mflood.* 2>/dev/null | grep -c .)" -ge 200 ]; }
wait_for 60 wait_flood || die "the flood's requests did not all return"
kill -0 "$hold" 2>/dev/null || die "the holding request ended first: cannot tell refused from queued"
[ "$(cat "$T"/flood.* | grep -c '^503$')" = 100 ] || die "pprof flood: not all 503" -- $(ls "$T"/flood.* | head -3)
bad=$(cat "$T"/mflood.* | grep -vc '^\(200\|503\)$')
[ "$bad" = 0 ] || die "/metrics flood: $bad answers neither 200 nor 503"
grep -q '^shown ' "$T/list.txt" || die "session list during the flood lacks shown" -- "$T/list.txt"
ok "100 pprof requests beyond the cap: 503 while the holder runs; /metrics flood 200/503; control socket answers"

wait "$hold"
[ "$(cat "$T/hold.code")" = 200 ] || die "the session without a ring: HTTP $(cat "$T/hold.code")" -- "$T/hold.pb.gz"
[ "$(head -c 2 "$T/hold.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || die "not gzip"
if command -v go >/dev/null; then
	export GOCACHE=$T/gocache HOME=$T GOTOOLCHAIN=local
	go tool pprof -top "$T/hold.pb.gz" 2>&1 | grep -q render_scene || die "the next 20 s lack render_scene"
fi
ok "a session without a ring: the next 20 s, then its profile"

# --- 100 000 range names from one process ----------------------------------
wait "$names" 2>/dev/null
grep -q done "$T/names.out" || die "prog-latency --names failed" -- "$T/names.out"
# every marker written or counted lost, and every range counted: in a label
# set, as overflow, or as unpaired (an end that came before its begin, by the
# other lane, and waited past the four a thread keeps).  The last ones may
# still be on their way from the fast lane: read again until then.
settled() {
	curl -s "$U/metrics" >"$T/m2.txt"
	m=$(metric "$(cat "$T/m2.txt")" 'perfmark_markers_total{session="names"}')
	lost=$(metric "$(cat "$T/m2.txt")" 'perfmark_lost_total{session="names"}')
	sets=$(metric "$(cat "$T/m2.txt")" 'perfmark_range_label_sets{session="names"}')
	over=$(metric "$(cat "$T/m2.txt")" 'perfmark_range_overflow_total{session="names"}')
	unp=$(metric "$(cat "$T/m2.txt")" 'perfmark_range_unpaired_total{session="names"}')
	pairs=$(((m - 1) / 2))   # one marker is the counter
	[ $((m + lost)) -ge 200009 ] && [ $((over + unp)) -ge $((pairs - 999 - lost)) ]
}
wait_for 60 settled ||
	die "the ranges of --names never all arrived, or overflow $over + unpaired $unp does not count them" -- "$T/m2.txt"
[ "$unp" -le $((pairs / 100)) ] || die "$unp of $pairs ranges unpaired" -- "$T/m2.txt"
series=$(grep '^perfmark_range_duration_seconds_count{session="names"' "$T/m2.txt" | wc -l)
bytes=$(wc -c <"$T/m2.txt")
echo "ranges $pairs, lost markers $lost, label sets $sets, overflow $over, unpaired $unp, count series $series, /metrics $bytes bytes"
[ "$sets" = 1000 ] && [ "$series" = 999 ] || die "label sets not capped at 1000 ($sets, $series series)"
[ "$pairs" -ge 50000 ] || die "only $pairs of the 100 004 ranges arrived" -- "$T/pmd.log"
[ "$bytes" -lt 2000000 ] || die "/metrics is $bytes bytes"
[ "$(metric "$(cat "$T/m2.txt")" 'perfmark_counter_value{session="names",counter="names",comm="pm-latency"}')" = 100000 ] ||
	die "the counter marker's last value is not in /metrics" -- "$T/m2.txt"
ok "100 000 range names: 1000 label sets (a counter's among them), $over ranges counted as overflow, $unp unpaired, $bytes bytes"

# the hostile names, escaped; the whole text parses
grep -qF 'range="quo\"te"' "$T/m2.txt" && grep -qF 'range="back\\slash"' "$T/m2.txt" &&
	grep -qF 'range="new\nline"' "$T/m2.txt" && grep -qF $'range="bad\xef\xbf\xbd\xef\xbf\xbd utf8"' "$T/m2.txt" ||
	die "hostile range names not escaped as the format requires" -- "$T/m2.txt"
if command -v promtool >/dev/null; then
	promtool check metrics <"$T/m2.txt" >"$T/promtool.txt" 2>&1
	grep -qi 'error\|parse' "$T/promtool.txt" && die "promtool cannot parse /metrics" -- "$T/promtool.txt"
fi
ok "quote, backslash, newline and invalid UTF-8 in range names escaped; promtool parses /metrics"
for s in shown hidden files names; do pm session delete "$s" >/dev/null; done
