#!/usr/bin/env bash
# perfmarkd persistence: kill -9 the daemon while a process emits markers;
# the pinned collection goes on; the restarted daemon lists the session
# again and its next snapshot holds the markers emitted while it was down.
# Pins of sessions that no longer exist are removed at start; SIGTERM leaves
# sessions pinned.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
daemon_start

pm session create keep1 -F 199 --ring 16M || die "create failed" -- "$T/pmd.log"
[ -f "$PMD_STATE/sessions/keep1.json" ] || die "no stored definition"
[ -d "$PMD_PINS/keep1" ] || die "nothing pinned under $PMD_PINS/keep1"

daemon_kill9
# an upgrade: the definition as perfmark 0.1 stored it (the events it resolved
# kept); the new daemon reads it, adopts the pins and stores the current form
resolved=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["resolved"]))' \
	"$PMD_STATE/sessions/keep1.json") || die "cannot read the stored definition"
cat >"$PMD_STATE/sessions/keep1.json" <<EOF
{ "name": "keep1", "events": [ ], "freq": 199, "callchain": false, "markers": true, "zstd": 0,
  "target": "all", "sink": "ring", "ring_size": 16777216, "owner": 0,
  "resolved": $resolved, "seq": 0, "stopped": false, "error": false }
EOF
"$DEMO" 0.5 >/dev/null 2>&1 &
demo=$!; wait $demo
# an orphan pin dir the new daemon must remove
mkdir -p "$PMD_PINS/ghost"
daemon_start
pm session list | grep -q '^keep1 .*running' || die "keep1 not restored" -- "$T/pmd.log"
grep -q "adopted" "$T/pmd.log" || die "the restarted daemon did not adopt the pins" -- "$T/pmd.log"
grep -q '"spec"' "$PMD_STATE/sessions/keep1.json" ||
	die "the old definition was not stored again in the current form" -- "$PMD_STATE/sessions/keep1.json"
pm session show keep1 | grep -q '(199 Hz)' || die "the old definition's rate was lost"
ok "a definition stored by perfmark 0.1 is read, adopted and stored anew"
[ -e "$PMD_PINS/ghost" ] && die "orphan pins not removed"
# a snapshot drains everything up to its moment: no wait before it
pm session snapshot keep1 -o "$T/snap" || die "snapshot failed"
n=$(marker_lines "$T/snap" | grep -c "^$demo ")
[ "$n" -ge 3 ] || die "snapshot after restart holds $n markers of pid $demo (emitted while down)" -- "$T/pmd.log"
ok "markers emitted while the daemon was down: $n"
# the uprobe is attached once: each marker appears once
d=$(marker_lines "$T/snap" | grep "^$demo " | sort | uniq -d | wc -l)
[ "$d" -eq 0 ] || die "duplicated markers after adoption (attached twice?)"

# SIGTERM: exits, leaves the session pinned; start again adopts
kill -TERM "$PMD_PID"; wait "$PMD_PID"; PMD_PID=
[ -d "$PMD_PINS/keep1" ] || die "SIGTERM removed the pins"
daemon_start
pm session list | grep -q '^keep1 .*running' || die "keep1 not restored after SIGTERM"
# stopped sessions stay stopped across restarts, without pins
pm session stop keep1
[ -e "$PMD_PINS/keep1" ] && die "stop left pins"
kill -TERM "$PMD_PID"; wait "$PMD_PID"; PMD_PID=
daemon_start
pm session list | grep -q '^keep1 .*stopped' || die "keep1 not stopped after restart"
[ -e "$PMD_PINS/keep1" ] && die "a stopped session got pins"
pm session delete keep1 || die "delete failed"
ok "restart, SIGTERM and stop persistence"
