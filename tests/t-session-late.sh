#!/usr/bin/env bash
# A record that arrives after the reorder window passed its time keeps its
# time.  What stock perf 6.1 makes of it, in a file written by perfmark's
# reorder window and writer (tests/prog-late.c): perf sorts each round and
# at a FINISHED_ROUND flushes only what is older than the previous round's
# maximum, so a record one round late is still printed in time order; one
# older than what perf flushed already is reported as an out of order event
# and printed late.  The window counts both kinds (session show: late).
. "$(dirname "$0")/lib.sh"
need_perf
[ -x "$PROGS/prog-late" ] || skip "no $PROGS/prog-late"

"$PROGS/prog-late" "$T/late.data" >"$T/late.txt" || die "prog-late failed"
grep -qx 'late=1 late_unordered=0' "$T/late.txt" || die "window counts: $(cat "$T/late.txt")"
perf script -i "$T/late.data" -F time >"$T/times" 2>"$T/err" || die "perf script failed" -- "$T/err"
tr -d ' :' <"$T/times" >"$T/t"
[ "$(paste -sd' ' "$T/t")" = "1.000000 2.000000 2.500000 3.000000 4.000000" ] ||
	die "perf did not print the late record in time order" -- "$T/t"
grep -qi 'out of order' "$T/err" && die "perf saw an out of order event" -- "$T/err"
ok "a record one round late: counted late, printed by perf in time order"

"$PROGS/prog-late" "$T/unordered.data" unordered >"$T/late.txt" || die "prog-late failed"
grep -qx 'late=1 late_unordered=1' "$T/late.txt" || die "window counts: $(cat "$T/late.txt")"
perf script -i "$T/unordered.data" -F time >"$T/times" 2>"$T/err" || die "perf script failed"
tr -d ' :' <"$T/times" >"$T/t"
grep -q '1 out of order events' "$T/err" || die "perf did not report the out of order event" -- "$T/err"
[ "$(paste -sd' ' "$T/t")" = "1.000000 2.000000 1.500000 3.000000 4.000000" ] ||
	die "unexpected order from perf" -- "$T/t"
perf report -i "$T/unordered.data" --stdio 2>/dev/null | grep -q '^# Samples: 5 ' ||
	die "perf report does not count all 5 samples"
ok "a record older than perf's flushed horizon: counted late_unordered; perf warns, delivers it late, counts it"
