#!/usr/bin/env bash
# A recording of two sampling events (record -e cpu-clock,task-clock):
# report, flamegraph and export analyse one at a time (-e NAME; by default the
# one whose sample comes first), with the sample counts stock perf report gives for each; the
# text names the other event; --json lists both; an event that was not
# sampled is one error line naming those that were, exit 1.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_bpffs
need_perfmark

"$PERFMARK" record -e cpu-clock,task-clock -F 1000 -o "$T/two.data" -- "$PROGS/prog-spin" 0.5 \
	>/dev/null 2>"$T/rec.err" || die "record -e cpu-clock,task-clock failed" -- "$T/rec.err"
perf report -i "$T/two.data" --stdio 2>/dev/null >"$T/perf.txt"
# "# Samples: 1K of event 'cpu-clock'" rounds; perf script counts exactly
perf script -i "$T/two.data" -F event 2>/dev/null | sed 's/^ *//; s/: *$//' | sort | uniq -c >"$T/perf.counts"
perf_n() { awk -v e="$1" '$2 == e { print $1 }' "$T/perf.counts"; }
pc=$(perf_n cpu-clock); pt=$(perf_n task-clock)
[ -n "$pc" ] && [ -n "$pt" ] && [ "$pc" -gt 100 ] && [ "$pt" -gt 100 ] ||
	die "perf does not see samples of both events" -- "$T/perf.counts"

# The default is the event whose sample comes first (lib/analyze/profile.h),
# and the events are listed in that order.  Which of the two comes first is
# the scheduler's: usually cpu-clock, but a loaded machine put a task-clock
# sample first (make check STRESS=1).  perf script prints in time order.
read -r first second <<<"$(perf script -i "$T/two.data" -F event 2>/dev/null | sed 's/^ *//; s/: *$//' |
	awk '($0 == "cpu-clock" || $0 == "task-clock") && !seen[$0]++' | tr '\n' ' ')"
[ -n "$second" ] || die "perf script does not show both events" -- "$T/perf.counts"
n_of() { if [ "$1" = cpu-clock ]; then echo "$pc"; else echo "$pt"; fi; }
"$PERFMARK" report -i "$T/two.data" >"$T/r.txt" 2>"$T/r.err" || die "report failed" -- "$T/r.err"
grep -q "^# all samples, sorted by self: $(n_of "$first") samples of $first " "$T/r.txt" ||
	die "report: want $(n_of "$first") samples of $first (the first sample's event; perf script's count)" -- "$T/r.txt"
grep -qx "# also sampled: $second ($(n_of "$second") samples); see them with -e NAME" "$T/r.txt" ||
	die "report does not name $second and its $(n_of "$second") samples" -- "$T/r.txt"
ok "report: $(n_of "$first") samples of $first (its sample came first) as perf has them; names $second ($(n_of "$second") samples)"

"$PERFMARK" report -i "$T/two.data" -e task-clock >"$T/rt.txt" 2>"$T/rt.err" ||
	die "report -e task-clock failed" -- "$T/rt.err"
grep -q "^# all samples, sorted by self: $pt samples of task-clock " "$T/rt.txt" ||
	die "report -e task-clock: want $pt samples" -- "$T/rt.txt"
grep -q "spin_loop" "$T/rt.txt" || die "report -e task-clock lacks the workload's function" -- "$T/rt.txt"
"$PERFMARK" report -i "$T/two.data" -e task-clock --json >"$T/rt.json" 2>"$T/rt.err" ||
	die "report -e task-clock --json failed" -- "$T/rt.err"
python3 - "$T/rt.json" "$pc" "$pt" <<'PY' || die "report --json: event and events wrong" -- "$T/rt.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["event"] == "task-clock", d["event"]
assert d["samples"] == int(sys.argv[3]), d["samples"]
ev = {e["name"]: e["samples"] for e in d["events"]}
assert ev == {"cpu-clock": int(sys.argv[2]), "task-clock": int(sys.argv[3])}, ev
PY
ok "report -e task-clock: its $pt samples, text and JSON (events lists both)"

# the same selection in export and flamegraph
"$PERFMARK" export -i "$T/two.data" -e task-clock --format collapsed -o "$T/t.folded" 2>"$T/x.err" ||
	die "export -e task-clock failed" -- "$T/x.err"
n=$(awk '{ s += $NF } END { print s + 0 }' "$T/t.folded")
[ "$n" -eq "$pt" ] || die "export -e task-clock: $n samples in the folded stacks, want $pt" -- "$T/t.folded"
"$PERFMARK" flamegraph -i "$T/two.data" -e task-clock -o "$T/t.svg" 2>"$T/x.err" ||
	die "flamegraph -e task-clock failed" -- "$T/x.err"
grep -q "$pt samples of task-clock" "$T/t.svg" || die "flamegraph -e task-clock: not $pt samples of task-clock" -- "$T/t.svg"
ok "export and flamegraph -e task-clock: $pt samples"

# an event that was not sampled
for sub in "report" "flamegraph -o $T/n.svg" "export --format collapsed -o $T/n.txt"; do
	# shellcheck disable=SC2086
	"$PERFMARK" $sub -i "$T/two.data" -e page-faults >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
		grep -qx "perfmark: $T/two.data: no samples of 'page-faults' (sampled: $first, $second)" "$T/err" ||
		die "$sub -e page-faults: rc $rc, want 1 and one line naming the events sampled" -- "$T/err"
done
ok "-e page-faults: $(cat "$T/err")"
echo "t-report-events: all checks passed"
