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
# a line of root's own after the requests: whatever reached the FIFO before
# it is in fifo.got first, and the reader ends at the last writer's close
timeout 30 sh -c "echo end-of-test >'$T/rootfifo'" || die "CASE 2: root's FIFO has no reader left" -- "$T/fifo.got"
wait_gone 30 "$reader" || die "CASE 2: something else holds root's FIFO open for writing"
[ "$(cat "$T/fifo.got")" = end-of-test ] ||
	die "CASE 2: $(($(stat -c %s "$T/fifo.got") - 12)) bytes reached root's FIFO" -- "$T/fifo.got"
ok "nothing reached root's FIFO"

# a member's own output is written through the descriptor passed, never
# opened again by the daemon (not even for direct I/O: dio.c): while the
# member records, the daemon holds that file open exactly once
mkdir "$T/mem" && chown "$MEMBER_UID" "$T/mem"
spin_arg=600.$$    # prog-spin's own argument: found by it below
as_member env PERFMARK_NO_DAEMON=0 "$PERFMARK" record -v -F 999 -o "$T/mem/out.data" -- "$PROGS/prog-spin" "$spin_arg" \
	>/dev/null 2>"$T/mem.err" &
rec=$!
_bg_pids+=("$rec")
daemon_opens() { find "/proc/$PMD_PID/fd" -lname "$T/mem/out.data" 2>/dev/null | wc -l; }
# counted once the daemon has written samples through what it holds
mem_spun() { perf script -f -i "$T/mem/out.data" 2>/dev/null | grep -q prog-spin; }   # -f: the member's file
wait_until 120 mem_spun || die "the member's recording holds no samples" -- "$T/mem.err"
opens=$(daemon_opens)
pkill -TERM -x -f "$PROGS/prog-spin $spin_arg"     # the command ends: so does the recording
wait "$rec"
[ $? -eq 143 ] || die "member record via the daemon failed (not its command's SIGTERM)" -- "$T/mem.err"
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
wait_until 60 session_at_least rsess samples 1 || die "rsess records nothing"
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
