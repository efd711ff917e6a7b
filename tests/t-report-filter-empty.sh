#!/usr/bin/env bash
# A --cpu or --time filter that keeps no sample: report still names the event
# it analyses and exits 0 with an empty report, as perf report does.  It used
# to print "0 samples of samples" (the event was learnt only from the samples
# kept) and, with -e, fail with "no samples of 'cpu-clock' (no samples at
# all)" on a recording full of them.
. "$(dirname "$0")/lib.sh"
need_root; need_bpffs
need_perfmark
[ -x "$PROGS/prog-phases" ] || skip "no test program $PROGS/prog-phases"

F=$T/p.data
"$PERFMARK" record -e cpu-clock,page-faults -o "$F" -- "$PROGS/prog-phases" 3 \
	>/dev/null 2>"$T/rec.err" || die "record failed" -- "$T/rec.err"
"$PERFMARK" report -i "$F" >"$T/all" 2>"$T/err" || die "report failed" -- "$T/err"
grep -Eq '^# all samples, sorted by self: [1-9][0-9]* samples of cpu-clock ' "$T/all" ||
	die "the recording has no cpu-clock samples" -- "$T/all"
grep -Eq 'also sampled: page-faults \([1-9][0-9]* samples\)' "$T/all" ||
	die "the recording has no page-faults samples" -- "$T/all"
ok "recorded: cpu-clock and page-faults samples"

# no CPU 4095, and no sample in the first millisecond after boot
for f in "--cpu 4095" "--time 0,0.001"; do
	# shellcheck disable=SC2086
	"$PERFMARK" report -i "$F" $f >"$T/r" 2>"$T/err" || die "report $f failed" -- "$T/err"
	grep -q '^# all samples, sorted by self: 0 samples of cpu-clock ' "$T/r" ||
		die "report $f does not name cpu-clock" -- "$T/r"
	# shellcheck disable=SC2086
	"$PERFMARK" report -i "$F" -e page-faults $f >"$T/r" 2>"$T/err" ||
		die "report -e page-faults $f failed" -- "$T/err"
	grep -q '^# all samples, sorted by self: 0 samples of page-faults ' "$T/r" ||
		die "report -e page-faults $f does not name page-faults" -- "$T/r"
	# shellcheck disable=SC2086
	"$PERFMARK" report -i "$F" --json $f >"$T/r.json" 2>"$T/err" ||
		die "report --json $f failed" -- "$T/err"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (d["event"] == "cpu-clock" and d["samples"] == 0))' \
		"$T/r.json" || die "report --json $f: not 0 samples of cpu-clock" -- "$T/r.json"
	ok "report $f: 0 samples of cpu-clock (and of page-faults with -e), exit 0"
done

# an event the recording never had is still an error
"$PERFMARK" report -i "$F" -e instructions >"$T/r" 2>"$T/err" && die "report -e instructions succeeded"
grep -q "no samples of 'instructions' (sampled: cpu-clock, page-faults)" "$T/err" ||
	die "report -e instructions: not the error naming the events sampled" -- "$T/err"
ok "-e of an event not recorded: one error naming those sampled"
