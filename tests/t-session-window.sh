#!/usr/bin/env bash
# The reorder window's memory cap (issue 18 case 4): with the cap at its
# least (PERFMARK_REORDER_MAX_MB=4), a burst of 60000 2 KiB markers far
# exceeds it between two drains.  The window writes its oldest half early
# instead of growing: counted in the record -v summary ("written early"),
# nothing dropped for it (received + lost == emitted), and stock perf reads
# every marker of the file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers

N=60000
F=$T/win.data
PERFMARK_REORDER_MAX_MB=4 "$PERFMARK" record -v -o "$F" -- "$P" burst "$N" 2048 >"$T/prog.out" 2>"$T/rec.err" ||
	die "record exited $?" -- "$T/rec.err" "$T/prog.out"
grep -qx "burst emitted $N bad_rc 0 enabled 1" "$T/prog.out" || die "the burst did not run traced" -- "$T/prog.out"
early=$(sed -n 's/.*reorder window: \([0-9]*\) records written early.*/\1/p' "$T/rec.err")
[ -n "$early" ] || die "record -v says nothing of the reorder window" -- "$T/rec.err"
[ "$early" -gt 0 ] || die "a burst of $((N * 2 / 1024)) MB went through a 4 MB window without writing early" -- "$T/rec.err"
ok "the window at its cap wrote $early records early (counted)"

summary=$(grep -a 'perfmark record: Wrote' "$T/rec.err")
smark=$(sed -n 's/.* samples, \([0-9]*\) markers,.*/\1/p' <<<"$summary")
slost=$(sed -n 's/.* \([0-9]*\) lost markers.*/\1/p' <<<"$summary")
npm=$("$PERFMARK" script -i "$F" --json --type 65556 2>/dev/null | grep -ac '"event":"perfmark:uevent"')
nperf=$(perf script -i "$F" 2>/dev/null | grep -ac ' perfmark:uevent: ')
[ "$npm" -eq "$nperf" ] || die "perfmark script sees $npm burst markers, perf script $nperf"
[ "$npm" -eq "$smark" ] || die "the file holds $npm markers, the summary says $smark"
[ $((npm + slost)) -eq "$N" ] || die "received $npm + lost $slost != emitted $N: the window dropped some"
ok "received $npm + lost $slost == emitted $N; stock perf reads all $nperf"
echo "t-session-window: all checks passed"
