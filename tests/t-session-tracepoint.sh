#!/usr/bin/env bash
# A persistent tracepoint session: `session create errors -a -g -e
# signal:signal_generate --filter 'sig == 11' --ring 16M` keeps every
# SIGSEGV of the machine with its stack.  Another user's process (nobody)
# has 100 children crash one after the other: 50 while perfmarkd runs, then
# perfmarkd is killed with -9 and the other 50 crash while no daemon runs.
# The restarted daemon adopts the pinned collection; its snapshot holds the
# 100 crashes, once each, each with its stack down to the function that
# crashed, and nothing but SIGSEGVs.  A reader attached to the session gets
# the new crashes live, decoded by stock perf.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-tpwork" ] || skip "no $PROGS/prog-tpwork"
[ -d /sys/kernel/tracing/events/signal/signal_generate ] || skip "no signal:signal_generate tracepoint here"
command -v setpriv >/dev/null || skip "setpriv missing"
getent passwd nobody >/dev/null || skip "no user nobody"
PY=$PERFMARK_SRC/tests/tp_script.py
NOBODY=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
daemon_start

pm session create errors -a -g -e signal:signal_generate --filter 'sig == 11' --ring 16M ||
	die "session create failed" -- "$T/pmd.log"
pm session show errors >"$T/show.txt"
grep -qx 'filter:   signal:signal_generate: sig == 11' "$T/show.txt" || die "show: no filter" -- "$T/show.txt"
grep -q '^events:   signal:signal_generate (every hit, call graph fp)' "$T/show.txt" ||
	die "show: the events" -- "$T/show.txt"
grep -q '^markers:  0' "$T/show.txt" || die "show: a tracepoint session collects markers" -- "$T/show.txt"

# the session's crashes: "PID" per SIGSEGV hit of prog-tpwork's children, and their stacks
crashes() {
	perf script -i "$1" >"$1.txt" 2>/dev/null
	python3 "$PY" hits "$1.txt" signal:signal_generate >"$1.all"
	python3 "$PY" hits "$1.txt" signal:signal_generate prog-tpwork >"$1.hits"
	python3 "$PY" chains "$1.txt" signal:signal_generate >"$1.chains"
}

"${NOBODY[@]}" "$PROGS/prog-tpwork" crash 100 "$T/go" >"$T/crash.out" 2>&1 &
cpid=$!
_bg_pids+=("$cpid")
for i in $(seq 600); do grep -q '^half' "$T/crash.out" && break; sleep 0.1; done
grep -q '^half 50$' "$T/crash.out" || die "the first 50 children did not crash" -- "$T/crash.out"
daemon_kill9
touch "$T/go"                       # the other 50 crash while no daemon runs
wait "$cpid"
grep -q '^crashed 100$' "$T/crash.out" || die "the workload did not crash 100 children" -- "$T/crash.out"
daemon_start
grep -q "session 'errors': adopted the pinned collection" "$T/pmd.log" ||
	die "the restarted daemon did not adopt the pinned collection" -- "$T/pmd.log"
pm session snapshot errors -o "$T/s.data" || die "snapshot failed" -- "$T/pmd.log"
crashes "$T/s.data"
n=$(wc -l <"$T/s.data.hits")
pids=$(awk '{ print $1 }' "$T/s.data.hits" | sort -u | wc -l)
echo "snapshot: $n SIGSEGV hits of prog-tpwork, $pids processes"
[ "$n" -eq 100 ] && [ "$pids" -eq 100 ] || die "$n hits of $pids children, not 100 of 100" -- "$T/s.data.hits"
# each in the child itself, as the kernel saw it
awk '{ if ($2 != "sig=11" || $5 != "comm=prog-tpwork" || $6 != "pid=" $1) bad++ } END { exit bad > 0 }' \
	"$T/s.data.hits" || die "a hit with other fields" -- "$T/s.data.hits"
awk '$1 != "sig=11" { bad++ } END { exit bad > 0 }' <(cut -d' ' -f2- "$T/s.data.all") ||
	die "the filter let other signals through" -- "$T/s.data.all"
# each with its stack: the kernel's fault path and the function that crashed
[ "$(grep -c 'crash_here' "$T/s.data.chains")" -eq 100 ] ||
	die "$(grep -c 'crash_here' "$T/s.data.chains") of 100 stacks reach crash_here" -- "$T/s.data.chains"
[ "$(grep -c 'force_sig_fault' "$T/s.data.txt")" -ge 100 ] ||
	die "kernel stacks without the fault path" -- "$T/s.data.txt"
ok "100 of 100 SIGSEGVs of nobody's children, 50 while perfmarkd was down, each with its stack"

# a reader attached gets new crashes live
pm session attach errors -o "$T/att.data" 2>"$T/att.err" &
apid=$!
_bg_pids+=("$apid")
"${NOBODY[@]}" "$PROGS/prog-tpwork" crash 5 >"$T/crash2.out" 2>&1 || die "5 more crashes" -- "$T/crash2.out"
# every crash once: the 100 the session held when the reader attached, the 5 new ones
npids() { awk '{ print $1 }' "$1" | sort -u | wc -l; }
att_has_all() { crashes "$T/att.data"; [ "$(npids "$T/att.data.hits")" -ge 105 ]; }
wait_until 60 att_has_all || true    # the counts below say what is missing
kill -TERM "$apid"; wait "$apid" 2>/dev/null
crashes "$T/att.data"
n=$(npids "$T/att.data.hits")
[ "$n" -eq 105 ] || die "attached: $n crashed processes, not the 100 held and 5 new" -- "$T/att.data.hits" "$T/att.err"
[ "$(wc -l <"$T/att.data.hits")" -eq 105 ] ||
	die "attached: $(wc -l <"$T/att.data.hits") hits for 105 crashes" -- "$T/att.data.hits"
ok "attached: the 100 held and the 5 new crashes, decoded by stock perf"
pm session delete errors || die "delete failed"

# what a client sends is checked again by perfmarkd: filters it cannot
# evaluate, for events that are not there, on events that are not tracepoints
req() {   # NAME SPEC-JSON: a raw create request; its reply on stdout
	python3 "$PERFMARK_SRC/tests/hostile-client.py" "$PERFMARK_SOCKET" send \
		"{\"v\": 2, \"cmd\": \"create\", \"name\": \"$1\", \"def\": {\"spec\": $2}}"
}
i=0
while IFS= read -r line; do
	spec=${line% ;; *} want=${line##* ;; }
	i=$((i + 1))
	req "bad$i" "$spec" >"$T/req$i.json"
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(r["ok"] or sys.argv[2] not in r["error"])' \
		"$T/req$i.json" "$want" || die "perfmarkd took $spec" -- "$T/req$i.json"
	pm session show "bad$i" >/dev/null 2>&1 && die "perfmarkd made session bad$i of $spec"
	echo "perfmarkd refused $spec: $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["error"])' "$T/req$i.json")"
done <<'EOF2'
{"events": ["signal:signal_generate"], "filters": {"signal:signal_generate": "sig == 11 ||"}} ;; bad filter
{"events": ["signal:signal_generate"], "filters": {"signal:signal_generate": "nosuch == 1"}} ;; no field
{"events": ["signal:signal_generate"], "filters": {"sched:sched_switch": "prev_pid == 1"}} ;; not among the events
{"events": ["cpu-clock"], "filters": {"cpu-clock": "sig == 1"}} ;; applies to tracepoints
{"events": ["signal:signal_generate"], "filters": {"signal:signal_generate": 11}} ;; must be a string
{"events": ["signal:no_such_tp"]} ;; unknown event
EOF2
ok "perfmarkd refuses what its clients should not have sent, in one line each"
