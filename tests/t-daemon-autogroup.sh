#!/usr/bin/env bash
# perfmarkd raises its scheduling group (the autogroup of its session) to
# nice -10 only when the session is its own: under systemd, or once
# daemonized.  Started in the foreground from a shell, it shares the
# shell's session, and raising that raised every process of it: under
# make check STRESS=1 the first test daemon put the harness's CPU hogs
# and every later test at nice -10, and they kept a container's init
# (nice 0) off the CPU for minutes (t-system-nspawn failed).
# The test runs in a session of its own, so in an autogroup of its own: a
# process that no setsid() ever moved (CI's, started by PID 1) is in the
# root group, whose weight cannot be set (EINVAL) and is not shown.
if [ -z "${PM_AUTOGROUP_SETSID:-}" ] && command -v setsid >/dev/null; then
	PM_AUTOGROUP_SETSID=1 exec setsid -w "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -w "/proc/$$/autogroup" ] || skip "no autogroups in this kernel (/proc/PID/autogroup)"
trap 'echo 0 >"/proc/$$/autogroup" 2>/dev/null; daemon_cleanup' EXIT

nice_of() { sed -n 's/.* nice \(-\{0,1\}[0-9]*\)$/\1/p' "/proc/$1/autogroup"; }
echo 0 >"/proc/$$/autogroup" || die "cannot set this test's autogroup to nice 0"

# in the foreground, in this shell's session: the loop thread at -10, the session left alone
daemon_start
loop_nice=$(awk '{ print $19 }' "/proc/$PMD_PID/stat")
[ "$loop_nice" = -10 ] || die "the daemon's loop thread is at nice $loop_nice, want -10" -- "$T/pmd.log"
[ "$(nice_of "$PMD_PID")" = 0 ] && [ "$(nice_of $$)" = 0 ] ||
	die "a foreground perfmarkd raised its caller's session: $(cat "/proc/$$/autogroup")"
ok "in the caller's session: its loop at nice -10, the session's group left at 0"
kill -TERM "$PMD_PID"
wait_gone 60 "$PMD_PID" || die "perfmarkd did not exit on SIGTERM" -- "$T/pmd.log"

# in a session of its own (setsid, as systemd starts it): its group at -10, ours still 0
setsid "$PERFMARKD" --foreground --socket "$PERFMARK_SOCKET" --state-dir "$PMD_STATE" \
	--pin-dir "$PMD_PINS" >>"$T/pmd.log" 2>&1 </dev/null &
_bg_pids+=("$!")
wait_until 60 daemon_answers || die "perfmarkd did not start" -- "$T/pmd.log"
PMD_PID=$(pgrep -f -n -- "--socket $PERFMARK_SOCKET")
[ -n "$PMD_PID" ] || die "no perfmarkd process found"
[ "$(nice_of "$PMD_PID")" = -10 ] || die "perfmarkd in its own session: its group is '$(cat "/proc/$PMD_PID/autogroup")', want nice -10"
[ "$(nice_of $$)" = 0 ] || die "perfmarkd in another session raised this one: $(cat "/proc/$$/autogroup")"
ok "in a session of its own: that session's group at nice -10, the caller's still 0"
