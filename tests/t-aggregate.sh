#!/usr/bin/env bash
# record --aggregate SECONDS (issue 24): samples counted per (pid, tid, stack)
# in BPF and written once per interval with their periods summed.  The same
# 3:1 workload recorded with and without it: work_a's share of work_a+work_b,
# weighted by period, agrees within 2 points in perf script and in perf
# report; fewer sample records are written (one per stack); every marker of a
# process running beside it is there; record -v says what was aggregated.
# A session with --aggregate survives a kill -9 of perfmarkd like any
# session.  In a system-wide one the idle task is not sampled (exclude_idle)
# but written from /proc/stat once an interval, at do_idle: across the
# restart, the idle task's share in perf report is the machine's idle time
# over the session (within 5 points), and the workload's CPU time (its
# periods summed) is what a plain system-wide session found (within 10 %).
# (The plain session is no measure of idle time here: this VM's cpu-clock
# does not fire on an idle CPU 1.)
# Bad values: one error line, exit 1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
need_perfmark
export PERFMARK_NO_DAEMON=1    # record in-process here; the session part uses the daemon

# --- bad values -------------------------------------------------------------------
for bad in 0 -1 3601 99999999999999999999 1x '' ; do
	"$PERFMARK" record --aggregate "$bad" -o "$T/bad.data" -- true >"$T/bad.out" 2>"$T/bad.err"
	rc=$?
	[ "$rc" -eq 1 ] || die "--aggregate '$bad' exited $rc, want 1" -- "$T/bad.err"
	[ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q '^perfmark: .*aggregat' "$T/bad.err" ||
		die "--aggregate '$bad': want one 'perfmark: ...' line" -- "$T/bad.err"
done
for cg in dwarf ehframe dwarf,4096; do
	"$PERFMARK" record --aggregate 5 --call-graph $cg -o "$T/bad.data" -- true >"$T/bad.out" 2>"$T/bad.err"
	rc=$?
	[ "$rc" -eq 1 ] || die "--aggregate with --call-graph $cg exited $rc, want 1" -- "$T/bad.err"
	[ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q '^perfmark: --aggregate counts frame-pointer stacks only' "$T/bad.err" ||
		die "--aggregate with $cg: want one clear line" -- "$T/bad.err"
done
[ -e "$T/bad.data" ] && die "a refused record wrote $T/bad.data"
ok "bad --aggregate values and dwarf/ehframe refused with one line"

# --- the same workload, with and without --aggregate --------------------------------
# prog-ratio spins 3:1 in work_a/work_b; prog-markers beside it emits a marker every 5 ms
work() {
	cat >"$T/work.sh" <<W
"$PROGS/prog-ratio" 3 >/dev/null &
"$PROGS/prog-markers" loop 1.5 agg >"\$1" &
wait
W
}
work
pm_record -g -o "$T/plain.data" -- sh "$T/work.sh" "$T/plain.loop" >/dev/null 2>"$T/plain.err" ||
	die "record without --aggregate failed" -- "$T/plain.err"
pm_record -g --aggregate 1 -v -o "$T/agg.data" -- sh "$T/work.sh" "$T/agg.loop" >/dev/null 2>"$T/agg.err" ||
	die "record --aggregate 1 failed" -- "$T/agg.err"

# work_a's share of work_a + work_b, each sample weighted by its period
share_script() {
	perf script -i "$1" -G -F period,ip,sym 2>/dev/null |
		awk '$3 == "work_a" { a += $1 } $3 == "work_b" { b += $1 }
		     END { if (a + b > 0) printf "%.2f %d\n", 100 * a / (a + b), NR; else print "0 0" }'
}
read -r sp np < <(share_script "$T/plain.data")
read -r sa na < <(share_script "$T/agg.data")
fcmp "$sp > 60 && $sp < 90" || die "unaggregated work_a share $sp%, want ~75" -- "$T/plain.err"
fcmp "$sa - $sp <= 2 && $sp - $sa <= 2" ||
	die "period-weighted work_a share: aggregated $sa%, unaggregated $sp%: more than 2 points apart" -- "$T/agg.err"
ok "perf script, period-weighted work_a share: aggregated $sa% vs $sp% ($na vs $np sample records)"
[ "$na" -gt 0 ] && [ "$na" -lt "$np" ] || die "aggregated run wrote $na sample records, unaggregated $np: not fewer"

report_self "$T/plain.data" >"$T/plain.self"
report_self "$T/agg.data" >"$T/agg.self"
rshare() { awk -v a="$(pct_of "$1" work_a)" -v b="$(pct_of "$1" work_b)" 'BEGIN { if (a + b > 0) printf "%.2f", 100 * a / (a + b); else print 0 }'; }
rp=$(rshare "$T/plain.self") ra=$(rshare "$T/agg.self")
fcmp "$ra - $rp <= 2 && $rp - $ra <= 2" ||
	die "perf report work_a share: aggregated $ra%, unaggregated $rp%" -- "$T/agg.self" "$T/plain.self"
ok "perf report work_a share: aggregated $ra% vs $rp%"
# the periods still sum to the time spent: perf report's event count near the unaggregated one
ev() { perf report -i "$1" --stdio 2>/dev/null | sed -n 's/^# Event count (approx.): \([0-9]*\).*/\1/p' | head -n 1; }
ep=$(ev "$T/plain.data") ea=$(ev "$T/agg.data")
fcmp "$ea > 0.7 * $ep && $ea < 1.3 * $ep" || die "event count: aggregated $ea, unaggregated $ep"
ok "event count (summed periods): $ea vs $ep"
# call chains are kept: work_a's reaches main
perf report -i "$T/agg.data" --stdio --no-children -g caller --sort sym 2>/dev/null >"$T/caller"
grep -A4 '\] work_a$' "$T/caller" | grep -qw main || die "aggregated work_a's chain lacks main" -- "$T/caller"
ok "aggregated call chains reach main"

# --- markers: all of them -------------------------------------------------------------
emitted=$(sed -n 's/^loop agg emitted \([0-9]*\) .*/\1/p' "$T/agg.loop")
[ "${emitted:-0}" -gt 0 ] || die "prog-markers emitted nothing" -- "$T/agg.loop"
got=$(markers_in "$T/agg.data" 'loop tag=agg')
distinct=$(perf script -i "$T/agg.data" 2>/dev/null | grep -o 'loop tag=agg n=[0-9]*' | sort -u | wc -l)
[ "$got" -eq "$emitted" ] && [ "$distinct" -eq "$emitted" ] ||
	die "markers: $got in the file ($distinct distinct), $emitted emitted" -- "$T/agg.err"
ok "all $emitted markers present beside aggregated samples"

# --- record -v says what was aggregated --------------------------------------------------
line=$(grep '^\[ perfmark record: aggregated every 1 s: ' "$T/agg.err")
[ -n "$line" ] || die "record -v has no aggregation line" -- "$T/agg.err"
st=$(sed -n 's/.* \([0-9]*\) aggregated samples written (one per distinct stack) for \([0-9]*\) samples, \([0-9]*\) samples lost.*/\1 \2 \3/p' <<<"$line")
read -r stacks samples lost <<<"$st"
[ "${stacks:-0}" -gt 0 ] && [ "${samples:-0}" -ge "$stacks" ] || die "aggregation figures: '$line'"
# a recording of a command counts no idle time: the machine's idle task is not its target
grep -q ' 0 ms idle' <<<"$line" || die "a recording of a command counted the machine's idle time: '$line'"
ok "record -v: $line"

# --- a process that floods the maps: what does not fit is written as it is, nothing lost ------
# prog-stacks walks 2^14 stacks in turn for 6 s of CPU: more than one interval's stack map
# (8192 buckets, kernel and user stacks) and counts (16384) hold
pm_record -g -F 10000 --aggregate 60 -v -o "$T/flood.data" -- "$PROGS/prog-stacks" 6 >/dev/null 2>"$T/flood.err" ||
	die "record --aggregate of prog-stacks failed" -- "$T/flood.err"
line=$(grep '^\[ perfmark record: aggregated every 60 s: ' "$T/flood.err")
st=$(sed -n 's/.* \([0-9]*\) aggregated samples written (one per distinct stack) for \([0-9]*\) samples, \([0-9]*\) samples lost, \([0-9]*\) written as they were.*/\1 \2 \3 \4/p' <<<"$line")
read -r stacks samples lost spilled <<<"$st"
[ -n "$stacks" ] && [ "$stacks" -le 16384 ] || die "flood: '$stacks' stacks written in one interval, at most 16384 fit" -- "$T/flood.err"
[ "$((samples + spilled))" -gt 8192 ] ||
	die "flood: only $((samples + spilled)) samples in 6 s of CPU: too few to fill the map (perf_event_max_sample_rate?)"
[ "$spilled" -gt 0 ] || die "flood: $samples samples over $stacks stacks and none spilled" -- "$T/flood.err"
[ "$lost" -eq 0 ] || die "flood: $lost samples lost: what does not fit goes to the ring" -- "$T/flood.err"
nrec=$(perf report -i "$T/flood.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
[ "${nrec:-0}" -ge "$((stacks + spilled))" ] ||
	die "flood: the file has ${nrec:-0} samples, want the $stacks aggregated + $spilled spilled" -- "$T/flood.err"
# the spilled ones keep their stacks: nearly all of work's period reaches main
full=$(perf script -i "$T/flood.data" -F period,ip,sym 2>/dev/null |
	awk 'BEGIN { RS = "" } / step/ { t += $1; if (/ main/) m += $1 } END { if (t > 0) printf "%.1f", 100 * m / t; else print 0 }')
fcmp "$full > 97" || die "flood: only $full% of the stacks through step reach main" -- "$T/flood.err"
ok "a flood of stacks: $stacks kept in the interval, $spilled written as they were, none lost; $full% reach main"

# --- a session with --aggregate, across a kill -9 of the daemon --------------------------
export PERFMARK_NO_DAEMON=0
daemon_start
# the machine's idle and total time (/proc/stat ticks: idle + iowait, all) over the aggregated
# session's life: it reads the kernel's idle time when it is created, so from here to the snapshot
stat_idle() { awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i; print $5 + $6, t }' /proc/stat; }
pm session create agg1 -g -F 499 --aggregate 1 --ring 16M >"$T/create.out" 2>&1 ||
	die "session create --aggregate failed" -- "$T/create.out" "$T/pmd.log"
read -r idle0 total0 < <(stat_idle)
pm session show agg1 --json | python3 -c 'import json,sys; assert json.load(sys.stdin)["spec"]["aggregate"] == 1' ||
	die "the session's spec lacks aggregate 1"
pm session create plain1 -g -F 499 --ring 64M >"$T/create.out" 2>&1 ||
	die "session create plain1 failed" -- "$T/create.out" "$T/pmd.log"
daemon_kill9
"$PROGS/prog-ratio" 1 >/dev/null &
r=$!; _bg_pids+=("$r")
daemon_start
pm session list | grep -q '^agg1 .*running' || die "agg1 not restored" -- "$T/pmd.log"
wait "$r"
pm session snapshot agg1 -o "$T/snap" || die "snapshot failed" -- "$T/pmd.log"
read -r idle1 total1 < <(stat_idle)
pm session snapshot plain1 -o "$T/snap.plain" || die "snapshot of plain1 failed" -- "$T/pmd.log"
n=$(perf script -i "$T/snap" -G -F pid,ip,sym 2>/dev/null | awk -v p="$r" '$1 == p && ($3 == "work_a" || $3 == "work_b")' | wc -l)
[ "$n" -gt 0 ] || die "snapshot after the restart has no aggregated work_a/work_b samples of $r" -- "$T/pmd.log"
pm session show agg1 >"$T/show.txt"
grep -q '^aggregate: every 1 s: [0-9]* intervals, [1-9][0-9]* aggregated samples written' "$T/show.txt" ||
	die "session show lacks the aggregation figures" -- "$T/show.txt"
ok "session --aggregate survives kill -9: $n records of $r; $(grep '^aggregate:' "$T/show.txt")"

# the idle task: at do_idle only (never sampled), its share the machine's idle time
comm_pct() {
	perf report -i "$1" --stdio --no-children --sort comm -g none 2>/dev/null |
		awk -v c="$2" '/^ *[0-9.]+%/ && $2 == c { p = $1; sub("%", "", p); s += p } END { printf "%.2f", s }'
}
samples_flat "$T/snap" | awk '$2 == "0/0" && $4 != "do_idle"' >"$T/idle.bad"
[ ! -s "$T/idle.bad" ] || die "the aggregated system-wide session sampled the idle task" -- "$T/idle.bad"
ia=$(comm_pct "$T/snap" swapper) ip=$(comm_pct "$T/snap.plain" swapper)
is=$(awk -v i=$((idle1 - idle0)) -v t=$((total1 - total0)) 'BEGIN { printf "%.2f", t ? 100 * i / t : 0 }')
fcmp "$ia - $is <= 5 && $is - $ia <= 5" ||
	die "the aggregated session's idle task has $ia% of the time, the machine was idle $is% of it" -- "$T/pmd.log"
# prog-ratio's CPU time, in ms: its periods summed
cpu_ms() { perf script -i "$1" -F pid,period 2>/dev/null | awk -v p="$2" '$1 == p { s += $2 } END { printf "%.0f", s / 1e6 }'; }
wa=$(cpu_ms "$T/snap" "$r") wp=$(cpu_ms "$T/snap.plain" "$r")
fcmp "$wp > 0" || die "the plain session has no samples of prog-ratio ($r)" -- "$T/pmd.log"
fcmp "$wa <= 1.1 * $wp && $wp <= 1.1 * $wa" ||
	die "prog-ratio's CPU time: $wa ms aggregated, $wp ms plain" -- "$T/pmd.log"
ok "system-wide, across the restart: idle $ia% (/proc/stat: $is%; sampled: $ip%), prog-ratio $wa ms vs $wp ms"
pm session stop plain1 && pm session delete plain1 || die "stop/delete of plain1 failed"
pm session stop agg1 && pm session delete agg1 || die "stop/delete failed"
echo "t-aggregate: all checks passed"
