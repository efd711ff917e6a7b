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
# the event report picks is the first sample's: either, as the program's start goes
ev=$(sed -n 's/^# all samples, sorted by self: [1-9][0-9]* samples of \([a-z-]*\) .*/\1/p' "$T/all")
case $ev in cpu-clock) other=page-faults;; page-faults) other=cpu-clock;; *) other=;; esac
[ -n "$other" ] || die "report picked no event of the two recorded" -- "$T/all"
grep -Eq "also sampled: $other \([1-9][0-9]* samples\)" "$T/all" ||
	die "the recording has no $other samples" -- "$T/all"
ok "recorded: cpu-clock and page-faults samples (report shows $ev)"

# no CPU 4095, and no sample in the first millisecond after boot
for f in "--cpu 4095" "--time 0,0.001"; do
	# shellcheck disable=SC2086
	"$PERFMARK" report -i "$F" $f >"$T/r" 2>"$T/err" || die "report $f failed" -- "$T/err"
	grep -q "^# all samples, sorted by self: 0 samples of $ev " "$T/r" ||
		die "report $f does not name $ev" -- "$T/r"
	# shellcheck disable=SC2086
	"$PERFMARK" report -i "$F" -e "$other" $f >"$T/r" 2>"$T/err" ||
		die "report -e $other $f failed" -- "$T/err"
	grep -q "^# all samples, sorted by self: 0 samples of $other " "$T/r" ||
		die "report -e $other $f does not name $other" -- "$T/r"
	# shellcheck disable=SC2086
	"$PERFMARK" report -i "$F" --json $f >"$T/r.json" 2>"$T/err" ||
		die "report --json $f failed" -- "$T/err"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (d["event"] == sys.argv[2] and d["samples"] == 0))' \
		"$T/r.json" "$ev" || die "report --json $f: not 0 samples of $ev" -- "$T/r.json"
	ok "report $f: 0 samples of $ev (and of $other with -e), exit 0"
done

# an event the recording never had is still an error
"$PERFMARK" report -i "$F" -e instructions >"$T/r" 2>"$T/err" && die "report -e instructions succeeded"
grep -Eq "no samples of 'instructions' \(sampled: (cpu-clock, page-faults|page-faults, cpu-clock)\)" "$T/err" ||
	die "report -e instructions: not the error naming the events sampled" -- "$T/err"
ok "-e of an event not recorded: one error naming those sampled"

# ... and within a filter that keeps nothing, the error says why
"$PERFMARK" report -i "$F" -e instructions --cpu 4095 >"$T/r" 2>"$T/err" &&
	die "report -e instructions --cpu 4095 succeeded"
[ "$(wc -l <"$T/err")" -eq 1 ] &&
	grep -Eq "no samples of 'instructions' \(none within --cpu/--time: all [1-9][0-9]* outside\)" "$T/err" ||
	die "report -e instructions --cpu 4095: not one line saying the filter kept none" -- "$T/err"
ok "-e of an event not recorded, with a filter that keeps none: one line saying so"
