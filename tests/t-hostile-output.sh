#!/usr/bin/env bash
# Issue 8 case 7: a failed `perfmark record` removes only what it created.
# Before: `perfmark record -o /dev/full` (ENOSPC on the header) unlinked the
# device node, and any existing device, FIFO or file named by -o went the
# same way on any failure.  Here on a real copy of /dev/full (mknod c 1 7), a
# real FIFO whose reader hangs up at once, and a failure after the output
# was created (which must still be cleaned up).
. "$(dirname "$0")/lib.sh"
need_root; need_bpffs
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"

one_error() {   # stderr-file: exactly one "perfmark: " line
	[ "$(wc -l <"$1")" -eq 1 ] && grep -q '^perfmark: ' "$1"
}

mknod "$T/full" c 1 7 || skip "cannot mknod a copy of /dev/full"
"$PERFMARK" record -o "$T/full" -- true >/dev/null 2>"$T/full.err" </dev/null
rc=$?
[ "$rc" -eq 1 ] || die "record -o full: exit $rc, want 1" -- "$T/full.err"
one_error "$T/full.err" || die "record -o full: not one 'perfmark:' line" -- "$T/full.err"
[ -c "$T/full" ] && [ "$(stat -c %t,%T "$T/full")" = 1,7 ] ||
	die "record -o full removed or replaced the device node: $(ls -l "$T/full" 2>&1)"
ok "device kept: $(cat "$T/full.err")"

mkfifo "$T/fifo"
( exec 3<"$T/fifo"; exec 3<&- ) &   # a reader that opens and hangs up at once
"$PERFMARK" record -o "$T/fifo" -- sleep 0.3 >/dev/null 2>"$T/fifo.err" </dev/null
rc=$?
wait
[ "$rc" -eq 1 ] || die "record -o fifo with a vanished reader: exit $rc, want 1" -- "$T/fifo.err"
[ -p "$T/fifo" ] || die "record -o fifo removed the FIFO"
ok "FIFO kept: $(head -n 1 "$T/fifo.err")"

# created by this run, then the command fails: removed (nothing half-written)
"$PERFMARK" record -o "$T/new.data" -- /no/such/cmd >/dev/null 2>"$T/new.err" </dev/null
[ $? -eq 1 ] && [ ! -e "$T/new.data" ] || die "a failed run left its own output behind" -- "$T/new.err"
ok "a failed run removes the file it created"
