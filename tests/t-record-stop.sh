#!/usr/bin/env bash
# perfmark record stops cleanly on SIGINT and SIGTERM (-a, -p, -- CMD): exit
# 0 (-- CMD: CMD's status), its summary printed, the file finished (perf
# reads the features written at the end).  Found while making the tests
# stop recorders on a signal (issue 19): the fast lane's pump thread started
# before the signals were blocked, so the kernel could hand it a SIGINT or
# SIGTERM, whose default action killed the recorder mid-file (exit 130/143).
# SIGINT is sent with its default action restored (a background job of a
# script inherits it ignored, which hid the bug).
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
[ "$PM_RECORDER" = perf ] && skip "perfmark record's own signal handling"

# signals_default CMD...: CMD with SIGINT and SIGTERM at their default action
signals_default() {
	exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL); signal.signal(signal.SIGTERM, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

bg "$PROGS/prog-spin" 600
spin=$BG_PID
wait_until 30 comm_is "$spin" prog-spin || die "prog-spin did not start"
for sig in INT TERM; do
	for target in "-a" "-p $spin" "-- $PROGS/prog-spin 600"; do
		name=$sig-$(echo "$target" | cut -c1-2 | tr -d ' -')
		F=$T/$name.data
		# shellcheck disable=SC2086  # target: options split on spaces
		signals_default "$PERFMARK" record -F 999 -o "$F" $target >"$T/$name.out" 2>"$T/$name.err" &
		rec=$!
		# stopped once it has written samples (its header is kept current)
		has_samples() { perf script -i "$F" 2>/dev/null | grep -q cpu-clock; }
		wait_until 120 has_samples || die "$name: no samples written" -- "$T/$name.err"
		# -- CMD: a terminal's ^C goes to the command too (the recorder does
		# not pass SIGINT on); SIGTERM the recorder passes on itself
		kids=
		[ "${target:0:2}" = -- ] && [ "$sig" = INT ] && kids=$(pgrep -P "$rec")
		kill -"$sig" "$rec" $kids
		wait "$rec"
		rc=$?
		want=0
		[ "${target:0:2}" = -- ] && want=$((128 + $(kill -l "$sig")))   # CMD's status: killed by it
		[ "$rc" -eq "$want" ] || die "record $target stopped by SIG$sig exited $rc, want $want" -- "$T/$name.err"
		grep -q '^\[ perfmark record: Wrote' "$T/$name.err" ||
			die "record $target stopped by SIG$sig printed no summary" -- "$T/$name.err"
		perf report -i "$F" --header-only 2>/dev/null | grep -q '^# cmdline' ||
			die "record $target stopped by SIG$sig: the file was not finished (no features)" -- "$T/$name.err"
		ok "record $target: SIG$sig stops it cleanly (exit $rc, summary, features)"
	done
done
