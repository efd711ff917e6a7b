#!/usr/bin/env bash
# Issue 8 case 4: a group member's session records neither the setuid-root
# programs the member starts (before: their markers, a root-only file's
# content among them, and their kernel stacks), nor a process that made
# itself non-dumpable, nor kernel addresses where perf_event_paranoid and
# kptr_restrict hide them from that member.  Root's session, on the same
# run, sees all of it (so the helper really emitted what the member missed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
need_daemon
test_users pm8
build_suid suid-helper
cp "$T/suid-helper" "$T/plain-helper" && chmod 0755 "$T/plain-helper"   # cp drops setuid
secret="pm8-secret-$$-$RANDOM"
echo "$secret" >"$T/secret" && chmod 0600 "$T/secret"
as_member cat "$T/secret" 2>/dev/null && die "the member can read the secret directly: bad set-up"
daemon_start_shared

pm session create rsess -a -g -F 499 --ring 16M || die "root create failed" -- "$T/pmd.log"
as_member "$PERFMARK" session create msess -a -g -F 499 --ring 16M ||
	die "member create failed" -- "$T/pmd.log"
mkdir -m 0777 "$T/m"
as_member "$T/suid-helper" secret "$T/secret" 1.5 >"$T/m/suid.out" || die "setuid helper failed"
as_member "$T/plain-helper" text "pm8-own-$$" 1.5 >"$T/m/own.out" || die "member's helper failed"
as_member "$T/plain-helper" nodump "pm8-nodump-$$" 1.5 >"$T/m/nodump.out" || die "nodump helper failed"
suid_pid=$(sed -n 's/^pid //p' "$T/m/suid.out")
# (a snapshot has everything up to its moment)
pm session snapshot rsess -o "$T/root.data" || die "root snapshot failed"
as_member "$PERFMARK" session snapshot msess -o "$T/m/member.data" || die "member snapshot failed"
cp "$T/m/member.data" "$T/member.data"   # perf reads only its own user's files

perf script -i "$T/root.data" -F comm,pid,ip,sym --show-task-events --show-mmap-events \
	>"$T/root.txt" 2>/dev/null
perf script -i "$T/member.data" -F comm,pid,ip,sym --show-task-events --show-mmap-events \
	>"$T/member.txt" 2>/dev/null
markers() { perf script -i "$1" 2>/dev/null | grep -c "$2"; }

# root's session: the control
[ "$(markers "$T/root.data" "$secret")" -gt 0 ] ||
	die "root's session has no marker of the setuid helper: the test saw nothing to hide"
grep -q 'suid-helper' "$T/root.txt" || die "root's session has no record of the setuid process"
[ "$(markers "$T/root.data" "pm8-nodump-$$")" -gt 0 ] || die "root's session lacks the nodump markers"
grep -qE '(^|[^0-9a-f])ffff[89a-f][0-9a-f]{11}' "$T/root.txt" ||
	die "root's session has no kernel address at all: the control failed" -- "$T/root.txt"
ok "root's session: the secret marker, the non-dumpable process and kernel frames"

# the member's session
n=$(markers "$T/member.data" "pm8-own-$$")
[ "$n" -gt 0 ] || die "the member's session lacks the member's own markers"
[ "$(markers "$T/member.data" "$secret")" -eq 0 ] ||
	die "CASE 4: the member's session recorded the setuid-root helper's secret"
[ "$(markers "$T/member.data" "pm8-nodump-$$")" -eq 0 ] ||
	die "the member's session recorded a non-dumpable process"
# after its setuid exec (comm suid-helper) nothing of that process: no
# sample, no sideband.  (Before the exec it is setpriv, the member's own; the
# non-dumpable one is the member's until its prctl, so only its markers,
# all emitted after, are checked.)
grep -q 'suid-helper' "$T/member.txt" &&
	die "the member's session holds records of the setuid process $suid_pid" -- "$T/member.txt"
ok "member's session: $n own markers, nothing of the setuid or non-dumpable process"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid) kptr=$(cat /proc/sys/kernel/kptr_restrict)
if [ "$paranoid" -le 1 ] && [ "$kptr" -eq 0 ]; then
	ok "perf_event_paranoid=$paranoid kptr_restrict=$kptr: members may see kernel addresses here"
else
	grep -qE '(^|[^0-9a-f])ffff[89a-f][0-9a-f]{11}' "$T/member.txt" &&
		die "the member got kernel addresses (perf_event_paranoid=$paranoid kptr_restrict=$kptr)" \
			-- "$T/member.txt"
	grep -q 'kernel.kallsyms' "$T/member.txt" &&
		die "the member got the kernel map (perf_event_paranoid=$paranoid kptr_restrict=$kptr)"
	ok "no kernel address reaches the member (perf_event_paranoid=$paranoid kptr_restrict=$kptr)"
fi
pm session delete rsess
pm session delete msess
