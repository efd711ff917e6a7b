#!/usr/bin/env bash
# With nothing tracing, markers are a semaphore load and a branch: the
# program prints no error, every call returns 0, and arguments are not even
# read (perf_printf("%s", (char *)8) must not crash).  How fast that is,
# bench/bench-markers.sh measures.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_prog_markers

# a session listening to this library would raise the semaphore
"$P" idle 1 >"$T/probe.out" 2>&1
grep -qx 'enabled 1 rc 0' "$T/probe.out" &&
	skip "a perfmark session is tracing $PERFMARK_BUILD/libperfmark.so right now"

"$P" idle 20000000 >"$T/idle.out" 2>"$T/idle.err"
rc=$?
[ "$rc" -eq 0 ] || die "prog-markers idle exited $rc" -- "$T/idle.out" "$T/idle.err"
[ ! -s "$T/idle.err" ] || die "prog-markers idle printed on stderr" -- "$T/idle.err"
grep -qx 'enabled 0 rc 0' "$T/idle.out" || die "untraced calls returned non-zero or perfmark_enabled() is true" -- "$T/idle.out"
grep -qx 'unread args rc 0' "$T/idle.out" || die "untraced calls with bad pointers did not return 0" -- "$T/idle.out"
pp=$(sed -n 's/^perf_printf_ns //p' "$T/idle.out")
pe=$(sed -n 's/^perfmark_emit_ns //p' "$T/idle.out")
# (what an untraced marker costs is bench/bench-markers.sh's to measure: a
# test's timing says as much about the machine's load as about the code)
ok "untraced: every call returned 0, no argument read (perf_printf $pp ns/call, perfmark_emit $pe ns/call here)"

# the full marker workload, untraced: same program, no errors, quick
t0=$(date +%s%N)
"$P" mix 20000 >"$T/mix.out" 2>"$T/mix.err"
rc=$?
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
[ "$rc" -eq 0 ] || die "prog-markers mix (untraced) exited $rc" -- "$T/mix.out" "$T/mix.err"
[ ! -s "$T/mix.err" ] || die "prog-markers mix (untraced) printed on stderr" -- "$T/mix.err"
grep -qx 'done' "$T/mix.out" || die "prog-markers mix (untraced) did not finish" -- "$T/mix.out"
grep -q '^emit size=.* rc=[^0]' "$T/mix.out" && die "an untraced perfmark_emit returned non-zero" -- "$T/mix.out"
grep -qx 'bad_rc 0' "$T/mix.out" || die "untraced marker calls returned errors" -- "$T/mix.out"
ok "untraced mix (2 threads x 20000, fork, exec): $ms ms, no error"
echo "t-markers-untraced: all checks passed"
