#!/usr/bin/env bash
# A burst of markers into rings far too small: the application's fast-lane
# ring (PERFMARK_RING_KIB=16) hands what it cannot take to the trap lane,
# whose BPF ring is tiny too (--ringbuf 16K).  The markers that could not be
# stored are counted ("N lost markers" in the summary), appear as
# PERF_RECORD_LOST_SAMPLES for the marker events in the file (perf report
# -D, "Total Lost Samples"), and received + lost == emitted: a full buffer
# drops and counts, nothing goes missing silently, nothing blocks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers

N=200000
F=$T/burst.data
PERFMARK_RING_KIB=16 "$PERFMARK" record --ringbuf 16K -o "$F" -- "$P" burst "$N" 200 >"$T/prog.out" 2>"$T/rec.err"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc" -- "$T/rec.err" "$T/prog.out"
grep -qx "burst emitted $N bad_rc 0 enabled 1" "$T/prog.out" || die "the burst did not run traced" -- "$T/prog.out"

summary=$(grep -a 'perfmark record: Wrote' "$T/rec.err")
[ -n "$summary" ] || die "no summary line" -- "$T/rec.err"
smark=$(sed -n 's/.* samples, \([0-9]*\) markers,.*/\1/p' <<<"$summary")
slost=$(sed -n 's/.* \([0-9]*\) lost markers.*/\1/p' <<<"$summary")
slosts=$(sed -n 's/.* \([0-9]*\) lost samples,.*/\1/p' <<<"$summary")
[ -n "$smark" ] && [ -n "$slost" ] || die "summary line lacks the marker counts: $summary"
[ "$slost" -gt 0 ] || die "a $N-marker burst into a 16 KiB ring lost nothing: the test proves nothing ($summary)"
ok "summary: $smark markers, $slost lost markers"

# received, by both readers
npm=$("$PERFMARK" script -i "$F" --json --type 65556 2>/dev/null | grep -ac '"event":"perfmark:uevent"')
nperf=$(perf script -i "$F" 2>/dev/null | grep -ac ' perfmark:uevent: ')
[ "$npm" -eq "$nperf" ] || die "perfmark script sees $npm burst markers, perf script $nperf"
[ "$npm" -eq "$smark" ] || die "the file holds $npm markers, the summary says $smark"
[ $((npm + slost)) -eq "$N" ] ||
	die "received $npm + lost $slost = $((npm + slost)), emitted $N: markers went missing silently"
ok "received $npm + lost $slost == emitted $N"

# LOST_SAMPLES records for the marker events' ids
perf report --header-only -I -i "$F" 2>/dev/null >"$T/header"
ids=$(sed -n 's/^# event : name = perfmark:\(printf\|uevent\), .*id = { \([0-9, ]*\) }.*/\2/p' "$T/header" | tr -d ' ' | tr ',\n' '  ')
[ -n "$ids" ] || die "cannot find the ids of the perfmark events in the header" -- "$T/header"
perf report -D -i "$F" 2>/dev/null | grep -a 'PERF_RECORD_LOST_SAMPLES' >"$T/lost"
flost=$(awk -v ids="$ids" '
	BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
	{ id = $0; sub(/.*id:/, "", id); sub(/:.*/, "", id)
	  v = $0; sub(/.*lost samples :/, "", v)
	  if (id in want) m += v; else o += v }
	END { print m + 0, o + 0 }' "$T/lost")
read -r flm flo <<<"$flost"
[ "$flm" -eq "$slost" ] ||
	die "LOST_SAMPLES for the marker events (ids $ids) add up to $flm, the summary says $slost lost markers" -- "$T/lost"
[ "$flo" -eq "${slosts:-0}" ] ||
	die "LOST_SAMPLES for the sampling event add up to $flo, the summary says ${slosts:-?} lost samples" -- "$T/lost"
total=$(perf report -i "$F" --stdio 2>/dev/null | sed -n 's/^# Total Lost Samples: \([0-9]*\)$/\1/p' | head -n 1)
[ "${total:-0}" -eq $((flm + flo)) ] ||
	die "perf report says Total Lost Samples: ${total:-none}, the LOST_SAMPLES records add up to $((flm + flo))"
ok "perf sees the loss: $(wc -l <"$T/lost") LOST_SAMPLES records, $flm for markers, Total Lost Samples: $total"

# perfmark script reports the same loss: one "LOST N samples" line a record
pml=$("$PERFMARK" script -i "$F" 2>/dev/null | awk '/^LOST [0-9]+ samples$/ { n += $2 } END { print n + 0 }')
[ "$pml" -eq $((flm + flo)) ] ||
	die "perfmark script's LOST lines add up to $pml, perf's LOST_SAMPLES to $((flm + flo))"
ok "perfmark script: LOST lines add up to $pml"
echo "t-markers-lost: all checks passed"
