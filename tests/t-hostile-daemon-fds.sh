#!/usr/bin/env bash
# Issue 8 case 2 and case 8's session items: perfmarkd writes only where the
# client itself could, and a failed snapshot or attach leaves the output as
# it was.
#   case 2: a member passes an O_PATH, then an O_RDONLY, descriptor of a
#     root-only FIFO (a root reader waiting on it) to record, snapshot and
#     attach: each is refused, and nothing reaches the FIFO (before, the
#     daemon reopened /proc/self/fd/N for writing, as root).
#   case 8: snapshot/attach of an unknown session or with the daemon down
#     leave an existing -o file untouched (truncated before); `snapshot -o -`
#     leaves stdout blocking (non-blocking before); attach onto a full
#     filesystem exits 1 with the error (0 and a cut file before); a file
#     session adopted after a restart still rotates.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
need_daemon
need_python
test_users pm8
daemon_start_shared

# --- case 2 -----------------------------------------------------------------
mkfifo -m 0644 "$T/rootfifo"                  # root's: others may read, not write
cat "$T/rootfifo" >"$T/fifo.got" &            # root's reader, waiting for a writer
reader=$!
_bg_pids+=("$reader")
as_member "$PERFMARK" session create msess -F 99 --ring 1M || die "member create failed" -- "$T/pmd.log"
for mode in path ro; do
	for what in record snapshot attach; do
		if [ "$what" = record ]; then
			out=$(as_member $HC "$PERFMARK_SOCKET" record-fd "$T/rootfifo" "$mode" 2>&1)
		else
			out=$(as_member $HC "$PERFMARK_SOCKET" "$what-fd" msess "$T/rootfifo" "$mode" 2>&1)
		fi
		echo "$out" | grep -q '"ok": false' && echo "$out" | grep -q 'not open for writing: permission denied' ||
			die "CASE 2: $what with an $mode descriptor of a root-only FIFO: $out"
	done
	ok "$mode descriptor of a root-only FIFO: record, snapshot and attach refused"
done
sleep 0.5
[ ! -s "$T/fifo.got" ] || die "CASE 2: $(stat -c %s "$T/fifo.got") bytes reached root's FIFO"
bg_kill "$reader"
ok "nothing reached root's FIFO"

# a member's own output is written through the descriptor passed, never
# opened again by the daemon (not even for direct I/O: dio.c): while the
# member records, the daemon holds that file open exactly once
mkdir "$T/mem" && chown "$MEMBER_UID" "$T/mem"
as_member env PERFMARK_NO_DAEMON=0 "$PERFMARK" record -v -F 999 -o "$T/mem/out.data" -- "$PROGS/prog-spin" 3 \
	>/dev/null 2>"$T/mem.err" &
rec=$!
_bg_pids+=("$rec")
opens=0
for i in $(seq 25); do
	sleep 0.1
	opens=$(find "/proc/$PMD_PID/fd" -lname "$T/mem/out.data" 2>/dev/null | wc -l)
	[ "$opens" -gt 0 ] && sleep 1 && opens=$(find "/proc/$PMD_PID/fd" -lname "$T/mem/out.data" | wc -l) && break
done
wait "$rec" || die "member record via the daemon failed" -- "$T/mem.err"
grep -q 'via perfmarkd' "$T/mem.err" || die "the member's record did not go through the daemon" -- "$T/mem.err"
as_member perf script -i "$T/mem/out.data" >"$T/mem.script" 2>&1
grep -q prog-spin "$T/mem.script" || die "the member's file is not readable by perf" -- "$T/mem.script" "$T/mem.err"
[ "$opens" -eq 1 ] || die "the daemon held the member's output open $opens times (want once: the descriptor passed)"
ok "a member's output: written only through the descriptor passed, never reopened"

# --- case 8: a failed snapshot or attach leaves -o alone -----------------------
echo "precious" >"$T/keep.data"
sum=$(md5sum <"$T/keep.data")
for what in snapshot attach; do
	pm session "$what" nosuch -o "$T/keep.data" 2>"$T/err" && die "$what of an unknown session succeeded"
	grep -q "^perfmark: no such session 'nosuch'" "$T/err" || die "$what: unexpected error" -- "$T/err"
	PERFMARK_SOCKET=$T/nodaemon.sock pm session "$what" msess -o "$T/keep.data" 2>"$T/err" &&
		die "$what with no daemon succeeded"
	[ "$(md5sum <"$T/keep.data")" = "$sum" ] || die "CASE 8: a failed $what changed the -o file"
	ls -a "$T" | grep -q '\.keep\.data\.perfmark-' && die "$what left its temporary behind"
done
ok "failed snapshot/attach (unknown session, daemon down): the -o file is untouched"

# snapshot -o - into a pipe leaves the shared stdout blocking
pm session create rsess -F 499 --ring 4M || die "create failed"
sleep 0.5
( pm session snapshot rsess -o - &&
  python3 -c 'import fcntl, os, sys; print(fcntl.fcntl(1, fcntl.F_GETFL) & os.O_NONBLOCK, file=sys.stderr)'
) 2>"$T/flag" | cat >"$T/snap.pipe"
[ "$(tail -n 1 "$T/flag")" = 0 ] || die "CASE 8: snapshot -o - left stdout non-blocking" -- "$T/flag"
perf script -i "$T/snap.pipe" 2>/dev/null | grep -q . || die "the piped snapshot is not readable by perf"
ok "snapshot -o -: readable stream, stdout left blocking"

# attach onto a filesystem that fills while it streams: exit 1 with the reason
mkdir "$T/small"
mount -t tmpfs -o size=512k tmpfs "$T/small" || skip "cannot mount a tmpfs"
trap 'umount "$T/small" 2>/dev/null; users_cleanup' EXIT
pm session create asess -F 10000 -g --ring 16M || die "create failed"
"$PROGS/prog-spin" 10 >/dev/null &
spin=$!
_bg_pids+=("$spin")
timeout 20 "$PERFMARK" session attach asess -o "$T/small/att.data" 2>"$T/att.err"
rc=$?
bg_kill "$spin"
[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/att.err")" -eq 1 ] &&
	grep -q '^perfmark: attach output: No space left on device' "$T/att.err" ||
	die "CASE 8: attach onto a full filesystem: rc $rc" -- "$T/att.err"
[ "$(stat -c %s "$T/small/att.data")" -gt 65536 ] || die "the attach failed before streaming anything"
pm session delete asess
ok "attach onto a full filesystem: $(cat "$T/att.err")"
umount "$T/small"

# a file session adopted after a restart still rotates
mkdir -m 0755 "$T/files"
pm session create fsess -F 4000 -g --output "$T/files" --rotate 64K || die "file session create failed"
daemon_kill9
daemon_start
grep -q "session 'fsess': adopted" "$T/pmd.log" || die "the file session was not adopted" -- "$T/pmd.log"
"$PROGS/prog-spin" 2 >/dev/null
pm session stop fsess
n=$(ls "$T/files" | grep -c '^fsess')
[ "$n" -ge 3 ] || die "CASE 8: an adopted file session wrote $n file(s) where --rotate 64K makes several" \
	-- "$T/pmd.log"
ok "adopted file session: $n rotated files"
pm session delete fsess
pm session delete rsess
as_member "$PERFMARK" session delete msess
