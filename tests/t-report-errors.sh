#!/usr/bin/env bash
# report, flamegraph and export on bad input: the same one-line errors as
# perfmark script, exit 1; --help for each; a recording without markers
# gives "no marker ranges" for --by-marker (not an empty table).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/analysis-lib.sh"
[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"

: >"$T/empty.data"
head -c 4096 /dev/urandom >"$T/garbage.data"
printf 'PERFILE2' >"$T/short.data"
for sub in "report" "report --by-marker" "flamegraph -o $T/x.html" "export --format collapsed -o $T/x.txt"; do
	for f in "$T/empty.data" "$T/garbage.data" "$T/short.data" "$T/missing.data"; do
		"$PERFMARK" script -i "$f" >/dev/null 2>"$T/script.err"
		# shellcheck disable=SC2086
		"$PERFMARK" $sub -i "$f" >"$T/out" 2>"$T/err"
		rc=$?
		[ "$rc" -eq 1 ] || die "$sub -i $f exited $rc, want 1" -- "$T/err"
		[ "$(wc -l <"$T/err")" -eq 1 ] || die "$sub -i $f: not one line on stderr" -- "$T/err"
		cmp -s "$T/err" "$T/script.err" || die "$sub -i $f: '$(cat "$T/err")' differs from script's '$(cat "$T/script.err")'"
	done
done
"$PERFMARK" report -i - <"$T/garbage.data" >/dev/null 2>"$T/err" && die "report -i - on garbage succeeded"
grep -qx 'perfmark: <stdin>: not a perf.data file (bad magic)' "$T/err" || die "stdin error" -- "$T/err"
ok "bad input: one line, exit 1, the same words as perfmark script"

for sub in report flamegraph export; do
	"$PERFMARK" "$sub" --help >"$T/help" 2>&1 || die "$sub --help failed" -- "$T/help"
	grep -q "^usage: perfmark $sub" "$T/help" || die "$sub --help" -- "$T/help"
	"$PERFMARK" "$sub" --bogus >/dev/null 2>"$T/err"
	[ $? -eq 1 ] && grep -qx "perfmark: unknown option '--bogus' (try 'perfmark $sub --help')" "$T/err" ||
		die "$sub --bogus" -- "$T/err"
done
"$PERFMARK" export -i "$T/empty.data" >/dev/null 2>"$T/err"
grep -qx 'perfmark: --format is required (chrome, pprof or collapsed)' "$T/err" || die "export without --format" -- "$T/err"
"$PERFMARK" export --format svg >/dev/null 2>"$T/err"
grep -qx "perfmark: unknown format 'svg' (chrome, pprof or collapsed)" "$T/err" || die "unknown format" -- "$T/err"
# a bad key fails before the input is opened (the file named does not exist)
"$PERFMARK" report -i "$T/none.data" --sort name >/dev/null 2>"$T/err"
[ $? -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	grep -qx "perfmark: bad --sort 'name': 'name' is not a key (self, total, or a list of comm, pid, tid, cpu, dso, sym; a tracepoint's fields with -e SUBSYS:NAME)" \
	"$T/err" || die "bad --sort" -- "$T/err"
"$PERFMARK" report -i "$T/none.data" -e sched:sched_switch --sort 'comm,,sym' >/dev/null 2>"$T/err"
[ $? -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	grep -qx "perfmark: bad --sort 'comm,,sym': '' is not a key (self, total, or a list of comm, pid, tid, cpu, dso, sym; a tracepoint's fields with -e SUBSYS:NAME)" \
	"$T/err" || die "bad --sort with -e" -- "$T/err"
ok "--help, unknown options and bad values"

# a recording with samples and no markers
need_root; need_perf; need_bpffs
need_perfmark
pm_record -o "$T/plain.data" -- "$PROGS/prog-spin" 0.3 >/dev/null 2>"$T/rec.err" || die "record failed" -- "$T/rec.err"
for args in "--by-marker" "--by-marker --json" "--range render"; do
	# shellcheck disable=SC2086
	"$PERFMARK" report -i "$T/plain.data" $args >"$T/out" 2>"$T/err"
	[ $? -eq 1 ] || die "report $args on a recording without markers did not fail" -- "$T/out"
	grep -qx "perfmark: $T/plain.data: no marker ranges in this recording.*" "$T/err" ||
		die "report $args: no 'no marker ranges' message" -- "$T/err"
	[ ! -s "$T/out" ] || die "report $args printed a table anyway" -- "$T/out"
done
"$PERFMARK" report -i "$T/plain.data" >"$T/out" 2>"$T/err" || die "plain report failed" -- "$T/err"
grep -q 'spin' "$T/out" || die "plain report lacks the workload's function" -- "$T/out"
ok "no markers: a clear 'no marker ranges' message"
