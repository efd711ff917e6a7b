#!/usr/bin/env bash
# Issue 8 case 3: a traced process cannot hang perfmarkd, nor make it write
# as root, through /tmp/perf-PID.map.  Before: a member's process that made
# its map a FIFO and called perfmark_jit_code() while an -a session ran left
# the daemon blocked in open(): every client timed out.  Here: a FIFO, a
# symlink to a root-only file, and (the control) a plain map, which is
# written, owned by the member.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
need_daemon
test_users pm8
build_suid helper && chmod u-s "$T/helper"
daemon_start_shared
maps=()
unblock_and_clean() {
	local m
	for m in "${maps[@]}"; do   # a daemon stuck in open() (the old bug) gets its reader
		[ -p "$m" ] && timeout 1 cat "$m" >/dev/null 2>&1
		rm -f "$m"
	done
	users_cleanup
}
trap unblock_and_clean EXIT
pm session create jsess -a -F 99 --ring 4M || die "create failed" -- "$T/pmd.log"

mkdir -m 0777 "$T/m"
as_member "$T/helper" jit fifo 600 >"$T/m/fifo.out" 2>&1 &
hpid=$!
_bg_pids+=("$hpid")
wait_until 60 file_has "$T/m/fifo.out" '^pid ' || die "the FIFO helper did not start" -- "$T/m/fifo.out"
jpid=$(sed -n 's/^pid //p' "$T/m/fifo.out")
map=/tmp/perf-$jpid.map
maps+=("$map")
# the daemon has handled JIT markers of the process (where it once opened
# the FIFO and blocked): a snapshot holds one; and it answers after that
jit_handled() {
	timeout 30 "$PERFMARK" session snapshot jsess -o "$T/jsnap" 2>"$T/list.err" ||
		die "CASE 3: perfmarkd stopped answering while a traced process's perf map is a FIFO" -- "$T/list.err"
	"$PERFMARK" script -i "$T/jsnap" --json 2>/dev/null | grep -q "\"pid\":$jpid,.*perfmark:uevent"
}
wait_until 120 jit_handled || die "no JIT marker of the helper reached the session"
for i in 1 2 3; do
	timeout 5 "$PERFMARK" session list >/dev/null 2>"$T/list.err" ||
		die "CASE 3: perfmarkd stopped answering while a traced process's perf map is a FIFO" -- "$T/list.err"
done
kill -0 "$hpid" 2>/dev/null || die "the FIFO helper failed" -- "$T/m/fifo.out"
bg_kill "$hpid"
# (that was the subshell of `as_member ... &`: the helper itself, which would spin on for its 600 s)
kill -KILL "$jpid" 2>/dev/null
wait_gone 30 "$jpid" || die "the FIFO helper $jpid outlived its kill"
[ -p "$map" ] || die "the FIFO at $map was replaced"
ok "daemon answered throughout; FIFO left alone"

echo "root-only" >"$T/rootfile" && chmod 0644 "$T/rootfile"
before=$(md5sum <"$T/rootfile")
as_member "$T/helper" jit "link:$T/rootfile" 1 >"$T/m/link.out" 2>&1 || die "link helper failed" -- "$T/m/link.out"
maps+=("/tmp/perf-$(sed -n 's/^pid //p' "$T/m/link.out").map")
[ "$(md5sum <"$T/rootfile")" = "$before" ] || die "perfmarkd wrote through a symlink into a root-owned file"
ok "symlinked map: the root-owned target is untouched"

as_member "$T/helper" jit none 1 >"$T/m/plain.out" 2>&1 || die "plain helper failed" -- "$T/m/plain.out"
map=/tmp/perf-$(sed -n 's/^pid //p' "$T/m/plain.out").map
maps+=("$map")
# the map is written when the daemon reads the marker: a snapshot has read them all
pm session snapshot jsess -o "$T/jsnap" || die "snapshot failed"
[ -f "$map" ] && grep -q pm8_jit_code "$map" || die "a member's plain JIT map was not written"
[ "$(stat -c %u "$map")" = "$MEMBER_UID" ] || die "the member's map is owned by $(stat -c %U "$map"), not the member"
ok "plain map written, owned by the member"
pm session delete jsess
