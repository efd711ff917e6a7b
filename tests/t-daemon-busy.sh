#!/usr/bin/env bash
# perfmarkd answers its clients while it takes a large ring over and while
# it writes a large ring's snapshot: both are jobs in threads of their own
# (daemon/jobs.c), and a request for the busy session waits for it (issue
# 18 case 14: a 512 MiB ring's snapshot kept every client waiting 12.8 s,
# and its takeover at start-up kept the daemon from listening at all).
# PERFMARK_TEST_HOLD holds a job of session NAME while $T/hold.NAME exists,
# so what the daemon does meanwhile is seen whatever the machine's speed:
# every request below must be answered while the job is held (a 60 s
# deadline turns a daemon that does not answer into a failure, not a hang).
# A snapshot held while its ring is lapped still holds what the ring held
# when it was asked for (before: what the writer evicted meanwhile was lost).
# The sessions record this test's processes only (LAUNCHER, daemon-lib.sh):
# a system-wide session's 4 MiB ring is lapped by any burst of markers of
# another process on a loaded machine.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"
export PERFMARK_TEST_HOLD=$T/hold
N=300000
daemon_start

launcher_start
pm session create big -p "$LAUNCHER" -F 99 --ring 256M || die "create big failed" -- "$T/pmd.log"
pm session create small -p "$LAUNCHER" -F 99 --ring 4M || die "create small failed" -- "$T/pmd.log"
count() {   # file pid tag
	marker_lines "$1" | grep -c "^$2 .*\"$3 seq="
}
emit pb "$N" big
# a clean stop: the running sessions stay pinned, everything read is in the ring
kill "$PMD_PID"; wait "$PMD_PID"; PMD_PID=
used=$(stat -c %s "$T/rings/big.ring")
[ "$used" -ge $((256 << 20)) ] || die "the ring file of big is only $used bytes"

# 1. the takeover of big's ring is held: the daemon answers meanwhile
touch "$T/hold.big"
daemon_launch    # it answered `session list`: not blocked by the takeover
[ "$(session_field big state)" = starting ] || die "big is not 'starting' while its ring is taken over: $(session_field big state)"
emit ps 200 small
timeout 60 "$PERFMARK" session snapshot small -o "$T/s1" ||
	die "snapshot of small not answered while big's ring was taken over" -- "$T/pmd.log"
[ "$(count "$T/s1" "$ps" small)" -eq 200 ] || die "small's snapshot lacks markers: $(count "$T/s1" "$ps" small) of 200"
timeout 60 "$PERFMARK" session list >"$T/list1" || die "list not answered during the takeover"
grep -q '^big .*starting' "$T/list1" || die "list does not show big starting" -- "$T/list1"
# big's own snapshot waits for its takeover
timeout 120 "$PERFMARK" session snapshot big -o "$T/b1" 2>"$T/b1.err" &
sb=$!
wait_until 60 session_at_least big requests_waiting 1 || die "big's snapshot does not wait" -- "$T/b1.err"
kill -0 "$sb" 2>/dev/null || die "the snapshot of big was answered before its ring was taken over" -- "$T/b1.err"
rm "$T/hold.big"
wait "$sb" || die "the snapshot of big failed after the takeover" -- "$T/b1.err" "$T/pmd.log"
n=$(count "$T/b1" "$pb" big)
[ "$n" -eq "$N" ] || die "after the takeover big holds $n of $N markers" -- "$T/pmd.log"
wait_until 60 session_is big state running || die "big did not start after its takeover"
log_has "session 'big': ring taken over" || die "no takeover logged" -- "$T/pmd.log"
ok "while big's ring was taken over: list, show and small's snapshot answered; big's snapshot waited and holds $n/$N"

# 2. big's snapshot is held in its job: the daemon answers meanwhile, and a
# delete of big waits for the snapshot to be out
touch "$T/hold.big"
timeout 120 "$PERFMARK" session snapshot big -o "$T/b2" 2>"$T/b2.err" &
sb=$!
wait_until 60 session_at_least big snapshots_running 1 || die "the snapshot of big is not under way" -- "$T/pmd.log"
emit ps2 200 small2
timeout 60 "$PERFMARK" session snapshot small -o "$T/s2" ||
	die "snapshot of small not answered while big's snapshot was written" -- "$T/pmd.log"
[ "$(count "$T/s2" "$ps2" small2)" -eq 200 ] || die "small's second snapshot lacks markers"
timeout 60 "$PERFMARK" session show small >/dev/null || die "show not answered during big's snapshot"
timeout 120 "$PERFMARK" session delete big 2>"$T/del.err" &
del=$!
wait_until 60 session_at_least big requests_waiting 1 || die "the delete of big does not wait" -- "$T/del.err"
kill -0 "$sb" 2>/dev/null || die "big's snapshot was answered while held" -- "$T/b2.err"
[ "$(session_field big state)" = running ] || die "big is gone while its snapshot is written"
rm "$T/hold.big"
wait "$sb" || die "the held snapshot of big failed" -- "$T/b2.err" "$T/pmd.log"
wait "$del" || die "delete of big failed after its snapshot" -- "$T/del.err"
n=$(count "$T/b2" "$pb" big)
[ "$n" -eq "$N" ] || die "the held snapshot holds $n of $N markers"
pm session show big >/dev/null 2>&1 && die "big still exists after delete"
ok "while big's snapshot was written: small's snapshot and show answered; delete waited for it"

# 3. a snapshot written while its ring turns over holds what the ring held
# when it was asked for: small's 4 MiB ring is lapped by a flood of markers
# while its snapshot is held; the frames the flood evicts are kept for the
# snapshot (lib/write/pring_view.c), none of the flood is in it
sink_evicted() {
	"$PERFMARK" session show small --json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["sink"]["evicted"])'
}
evicted_at_least() { local v; v=$(sink_evicted); [ -n "$v" ] && [ "$v" -ge "$1" ]; }
e0=$(sink_evicted)
[ -n "$e0" ] || die "session show small --json has no sink.evicted"
touch "$T/hold.small"
timeout 120 "$PERFMARK" session snapshot small -o "$T/s3" 2>"$T/s3.err" &
ss=$!
wait_until 60 session_at_least small snapshots_running 1 || die "the snapshot of small is not under way" -- "$T/pmd.log"
emit pf 300000 flood
# every frame the ring held at the request is evicted: 4 MiB of frames of 24 bytes at least
wait_until 120 evicted_at_least $((e0 + (4 << 20) / 24)) ||
	die "small's ring was not lapped: $(($(sink_evicted) - e0)) frames evicted" -- "$T/pmd.log"
rm "$T/hold.small"
wait "$ss" || die "the held snapshot of small failed" -- "$T/s3.err" "$T/pmd.log"
n=$(count "$T/s3" "$ps2" small2)
[ "$n" -eq 200 ] || die "the snapshot of the lapped ring holds $n of the 200 markers it held when asked" -- "$T/pmd.log"
n=$(count "$T/s3" "$pf" flood)
[ "$n" -eq 0 ] || die "the snapshot holds $n markers sent after it was asked for"
log_has "could not be kept" && die "records evicted were not kept for the snapshot" -- "$T/pmd.log"
ok "a snapshot of a ring lapped while it was written holds what the ring held when asked for"
