# shellcheck shell=bash
# Helpers for tests/t-http-*.sh (source after lib.sh and daemon-lib.sh):
#
#   http_daemon [ARGS...]   a private perfmarkd with --http 127.0.0.1:0 and
#                           ARGS; its port (from its log) in $HTTP_PORT
#   http_code URL [OUT]     the HTTP status of a GET (body to OUT)
#   metric TEXT NAME        the value of the first line of NAME{...} in TEXT
#   show_field S FIELD      a field of `session show S --json`
#   wait_for DEADLINE_S CMD...   run CMD every 0.2 s until it succeeds

need_http() {
	need_daemon
	command -v curl >/dev/null || die "curl is not installed: make check installs it"
	command -v python3 >/dev/null || skip "python3 missing"
	[ -x "$PROGS/prog-latency" ] || skip "no test program $PROGS/prog-latency"
}

http_daemon() {
	PMD_ARGS="--http 127.0.0.1:0 $*" daemon_start
	local i
	for i in $(seq 100); do
		HTTP_PORT=$(sed -n 's/.*http: serving .* port \([0-9]*\) .*/\1/p' "$T/pmd.log" | tail -n 1)
		[ -n "$HTTP_PORT" ] && return 0
		sleep 0.1   # polled: the loop has a deadline
	done
	die "perfmarkd --http did not say its port" -- "$T/pmd.log"
}

HTTP=http://127.0.0.1
http_code() {
	curl -s -o "${2:-/dev/null}" -w '%{http_code}' --max-time 60 "$1"
}

metric() {
	printf '%s\n' "$1" | awk -v n="$2" 'index($0, n "{") == 1 || index($0, n " ") == 1 { print $NF; exit }'
}

show_field() {
	"$PERFMARK" session show "$1" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}

wait_for() {
	local deadline=$(( $(date +%s) + $1 )); shift
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 0.2   # polled: the loop has a deadline
	done
}
