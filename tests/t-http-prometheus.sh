#!/usr/bin/env bash
# perfmarkd --http scraped by a real Prometheus (Debian's prometheus, started
# here on a loopback port) for the ~30 s a workload runs: Prometheus's own
# histogram_quantile(0.99) of range "render" is within 10 % of the p99 the
# workload measured itself, the ranges it counted are the workload's, and
# the samples counter rose between scrapes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/http-lib.sh"
need_http
PROM=$(command -v prometheus || echo /usr/bin/prometheus)
[ -x "$PROM" ] || die "prometheus is not installed: make check installs it"
http_daemon

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PPORT=$(free_port)
cat >"$T/prom.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: perfmarkd
    static_configs:
      - targets: ['127.0.0.1:$HTTP_PORT']
YML
"$PROM" --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$PPORT" \
	--log.level=warn >"$T/prom.log" 2>&1 &
_bg_pids+=("$!")
ready() { curl -sf "$HTTP:$PPORT/-/ready" >/dev/null; }
wait_for 60 ready || die "prometheus did not get ready" -- "$T/prom.log"

# PromQL through the HTTP API: the first value of the result, "" when none
promql() {
	curl -s --max-time 10 "$HTTP:$PPORT/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}

PM_GO_FILE=$T/go "$PROGS/prog-latency" 30 >"$T/wl.out" 2>&1 &
wl=$!; _bg_pids+=("$wl")
wait_lines "$T/wl.out" || die "prog-latency did not start" -- "$T/wl.out"
pm session create lat -p "$wl" -F 499 --ring 16M || die "create failed" -- "$T/pmd.log"
touch "$T/go"   # its sessions are attached: the workload starts
sel='session="lat",range="render",comm="pm-latency"'
scraped() { [ -n "$(promql "perfmark_samples_total{session=\"lat\"}")" ]; }
wait_for 60 scraped || die "prometheus never scraped perfmarkd" -- "$T/prom.log" "$T/pmd.log"
wait "$wl" || die "prog-latency failed" -- "$T/wl.out"
read -r _ p99 _ n <<<"$(grep '^p99_ns' "$T/wl.out")"
[ -n "${n:-}" ] || die "prog-latency printed no p99" -- "$T/wl.out"

# everything the daemon counted has reached Prometheus
ours=$(metric "$(curl -s "$HTTP:$HTTP_PORT/metrics")" "perfmark_range_duration_seconds_count{$sel}")
[ -n "$ours" ] && [ "$ours" -ge $((n * 95 / 100)) ] || die "perfmarkd counted ${ours:-no} of $n renders" -- "$T/pmd.log"
# (perfmarkd may still be draining the last ones: both read again each time)
caught_up() {
	ours=$(metric "$(curl -s "$HTTP:$HTTP_PORT/metrics")" "perfmark_range_duration_seconds_count{$sel}")
	[ "$(promql "perfmark_range_duration_seconds_count{$sel}")" = "$ours" ]
}
wait_for 60 caught_up || { curl -s "$HTTP:$PPORT/api/v1/targets" >"$T/targets.json"; curl -s "$HTTP:$HTTP_PORT/metrics" >"$T/metrics.txt"; die "prometheus never saw $ours renders (it has $(promql "perfmark_range_duration_seconds_count{$sel}"))" -- "$T/prom.log" "$T/targets.json"; }

q99=$(promql "histogram_quantile(0.99, sum by (le) (perfmark_range_duration_seconds_bucket{$sel}))")
rise=$(promql "max_over_time(perfmark_samples_total{session=\"lat\"}[10m]) - min_over_time(perfmark_samples_total{session=\"lat\"}[10m])")
echo "workload: $n renders, p99 $p99 ns; prometheus: $ours renders, p99 ${q99:-none} s; samples rose by ${rise:-none}"
fcmp "${q99:-0} * 1e9 >= $p99 * 0.9 && ${q99:-0} * 1e9 <= $p99 * 1.1" ||
	die "histogram_quantile(0.99) ${q99:-none} s is not within 10 % of the workload's $p99 ns"
ok "Prometheus's histogram_quantile(0.99) of render within 10 % of the workload's own p99"
fcmp "${rise:-0} > 0" || die "perfmark_samples_total did not rise"
ok "perfmark_samples_total rose between scrapes (by $rise)"
pm session delete lat >/dev/null || die "delete failed"
