#!/usr/bin/env bash
# Issue 8 case 5: a member cannot lock anyone out, and root always gets in.
# Before: 64 idle connections of one member made root's `session list` and
# `perfmark record` fail, one member could take all 64 sessions, and two
# 256 MiB rings of one member took the daemon to 642 MB.  Here, with real
# users (a member, eight more, an outsider):
#   - per user: 8 connections, 8 sessions, 256 MiB of rings;
#   - all members together: 64 connections and 64 sessions (the caps issue 9
#     found untested), root still connecting, listing, recording, creating;
#   - outsiders refused at once, holding no slot;
#   - idle connections closed after --idle-timeout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
need_daemon
need_python
test_users pm8
extra_members 8
PMD_ARGS="--idle-timeout 0" daemon_start_shared

root_gets_in() {   # what root must still be able to do
	pm session list >/dev/null 2>"$T/root.err" || die "root's session list failed: $1" -- "$T/root.err"
	pm record -a -F 99 --duration 0.3 -o "$T/root.data" >/dev/null 2>"$T/root.err" ||
		die "root's perfmark record failed: $1" -- "$T/root.err"
}

# --- connections ------------------------------------------------------------------
holders=()
hold() {   # UID N -> starts a holder of N idle connections; its output in $T/hold.UID
	# exec: the pid is the holder's own, so killing it closes its sockets
	setpriv --reuid="$1" --regid=65534 --groups="$PM_GID" \
		/usr/bin/python3 "$PERFMARK_SRC/tests/hostile-client.py" "$PERFMARK_SOCKET" hold "$2" 600 \
		>"$T/hold.$1" 2>&1 &
	holders+=($!)
	_bg_pids+=($!)
	wait_lines "$T/hold.$1" 1 || die "holder of uid $1 did not report"
}
hold "$MEMBER_UID" 12
grep -q '^accepted 8 refused 4' "$T/hold.$MEMBER_UID" ||
	die "one member: want 8 of 12 connections accepted: $(head -n 1 "$T/hold.$MEMBER_UID")"
out=$(as_member "$PERFMARK" session list 2>&1) && die "the member's 9th connection was accepted"
echo "$out" | grep -q "too many connections of uid $MEMBER_UID (limit 8 per user)" || die "unclear: $out"
root_gets_in "one member holds 8 connections"
ok "per user: 8 connections, the 9th refused ($out); root gets in"

for u in "${EXTRA_UIDS[@]:0:7}"; do
	hold "$u" 8
	grep -q '^accepted 8 refused 0' "$T/hold.$u" || die "member $u: $(head -n 1 "$T/hold.$u")"
done
u9=${EXTRA_UIDS[7]}
out=$(as_uid "$u9" "$PERFMARK" session list 2>&1) && die "a 65th member connection was accepted"
echo "$out" | grep -q "too many connections (limit 64)" || die "unclear: $out"
o2=$(as_outsider "$PERFMARK" session list 2>&1) && die "an outsider got in"
echo "$o2" | grep -q "permission denied" || die "unclear refusal of an outsider: $o2"
root_gets_in "members hold 64 connections"
ok "all members: 64 connections, the 65th refused ($out); outsiders refused; root gets in"
bg_kill "${holders[@]}"
holders=()
member_gets_in() { as_member "$PERFMARK" session list >/dev/null 2>&1; }
# the daemon sees the holders' connections close
wait_until 60 member_gets_in || die "a member is still refused after the holders went"

# --- sessions and memory -------------------------------------------------------------
create() { as_uid "$1" "$PERFMARK" session create "$2" -F 99 --ring "${3:-1M}"; }
for i in $(seq 8); do
	create "$MEMBER_UID" "m$i" 2>"$T/c.err" || die "member session $i refused" -- "$T/c.err"
done
out=$(create "$MEMBER_UID" m9 2>&1) && die "a member's 9th session was accepted"
echo "$out" | grep -q "too many sessions of uid $MEMBER_UID (limit 8 per user)" || die "unclear: $out"
ok "per user: 8 sessions, the 9th refused ($out)"
for u in "${EXTRA_UIDS[@]:0:7}"; do
	for i in $(seq 8); do
		create "$u" "u${u}s$i" 2>"$T/c.err" || die "session $i of uid $u refused" -- "$T/c.err"
	done
done
out=$(create "$u9" late 2>&1) && die "a 65th member session was accepted"
echo "$out" | grep -q "too many sessions (limit 64)" || die "unclear: $out"
pm session create rootsess -F 99 --ring 1M || die "root cannot create a session when members hold 64"
root_gets_in "members hold 64 sessions"
ok "all members: 64 sessions, the 65th refused ($out); root creates"
pm session delete rootsess
for i in $(seq 8); do as_member "$PERFMARK" session delete "m$i"; done

create "$MEMBER_UID" big 256M 2>"$T/c.err" || die "a 256 MiB ring refused" -- "$T/c.err"
out=$(create "$MEMBER_UID" big2 256M 2>&1) && die "a second 256 MiB ring of one member was accepted"
echo "$out" | grep -q "ring memory of uid $MEMBER_UID would reach 512 MiB (limit 256 MiB per user" ||
	die "unclear: $out"
ok "per user: 256 MiB of rings ($out)"
create "$MEMBER_UID" small 1M 2>/dev/null && die "a member at 256 MiB got another ring"
as_member "$PERFMARK" session delete big

# --- idle connections ---------------------------------------------------------------
kill "$PMD_PID" && wait "$PMD_PID" 2>/dev/null
PMD_ARGS="--idle-timeout 2" daemon_start_shared
as_member $HC "$PERFMARK_SOCKET" hold 5 8 >"$T/idle" 2>&1 || die "idle holder failed" -- "$T/idle"
grep -q '^accepted 5 refused 0' "$T/idle" && grep -q '^closed 5' "$T/idle" ||
	die "idle connections not closed after --idle-timeout 2" -- "$T/idle"
ok "idle connections closed: $(tr '\n' ' ' <"$T/idle")"
