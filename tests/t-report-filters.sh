#!/usr/bin/env bash
# perf's filters and sort keys (issue 22) on a recording of two commands
# and three files of user code (prog-filter run as pmf-alpha and pmf-beta:
# the program, its own library, libc): for every key and every filter,
# perfmark report gives the numbers stock perf report gives with the same
# options on the same file, row by row, within 0.1 point (report_cmp.py);
# script, export and flamegraph keep the same samples as report; bad values
# are one error line.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_bpffs
need_perfmark
command -v python3 >/dev/null || skip "python3 missing"
[ -x "$PROGS/prog-filter" ] || skip "no test program $PROGS/prog-filter"

F=$T/f.data
"$PERFMARK" record -g -F 2000 -o "$F" -- sh -c \
	"'$PROGS/prog-filter' pmf-alpha 2 5 3 2 & '$PROGS/prog-filter' pmf-beta 2 2 3 5; wait" \
	>"$T/pids" 2>"$T/rec.err" || die "record failed" -- "$T/rec.err"
pid_a=$(awk '$2 == "pmf-alpha" { print $3 }' "$T/pids")
pid_b=$(awk '$2 == "pmf-beta" { print $3 }' "$T/pids")
[ -n "$pid_a" ] && [ -n "$pid_b" ] || die "the workload printed no pids" -- "$T/pids"

# the recording is what the checks need: two commands, three files of user code
perf report -i "$F" --stdio --no-children --sort comm,dso -g none 2>/dev/null >"$T/perf.cd"
for want in "pmf-alpha *prog-filter" "pmf-alpha *libprog-filter-lib.so" "pmf-alpha *libc.so.6" \
	    "pmf-beta *prog-filter" "pmf-beta *libprog-filter-lib.so" "pmf-beta *libc.so.6"; do
	grep -Eq "^ +[0-9.]+% +$want" "$T/perf.cd" || die "perf sees no samples of '$want'" -- "$T/perf.cd"
done
ok "recorded: pmf-alpha ($pid_a) and pmf-beta ($pid_b), each in prog-filter, its library and libc"

cmp() {
	python3 "$PERFMARK_SRC/tests/report_cmp.py" "$PERFMARK" "$F" "$@" >"$T/cmp.last" 2>&1 || {
		die "perfmark report and perf report disagree: ${*}" -- "$T/cmp.last"
	}
	tail -n 1 "$T/cmp.last"
}

# sort keys, with children (perf's default when there are stacks) and without
for keys in comm,dso,sym comm dso sym pid tid cpu comm,pid,cpu dso,sym; do
	cmp "$keys" children --
	cmp "$keys" self --
done
ok "--sort: comm, pid, tid, cpu, dso, sym and their lists give perf report's children and self"

# times: the middle of the recording in seconds as perf script prints them, and in percent
perf script -i "$F" -F time 2>/dev/null | tr -d ' :' | sort -n >"$T/times"
n=$(wc -l <"$T/times")
[ "$n" -gt 200 ] || die "perf script shows only $n samples" -- "$T/times"
t_start=$(sed -n "$((n * 3 / 10))p" "$T/times")
t_end=$(sed -n "$((n * 7 / 10))p" "$T/times")
cpu=$(perf script -i "$F" -F cpu --comms pmf-alpha 2>/dev/null | tr -d ' []' | sort | uniq -c |
	sort -rn | awk 'NR == 1 { print $2 + 0 }')

for f in "--comm pmf-alpha" "--comms pmf-beta,sh" \
	 "--cpu $cpu" "--time $t_start,$t_end" "--time $t_start," "--time 10%/3" "--time 25%-75%" \
	 "--percent-limit 2" "--comm pmf-beta --percentage relative" "--comm pmf-alpha --cpu $cpu"; do
	# shellcheck disable=SC2086
	cmp comm,dso,sym children -- $f
	# shellcheck disable=SC2086
	cmp comm,dso,sym self -- $f
done
# --pid and --tid sorted by thread too: perf keeps a filtered-out sample's period in
# an entry a kept one made first (or the other way), and both processes start as
# prog-filter (ld.so, execve) before they rename themselves, so without the thread
# in the key their first samples share rows in perf by the order they came in
for f in "--pid $pid_a" "--tid $pid_b"; do
	# shellcheck disable=SC2086
	cmp tid,comm,dso,sym children -- $f
	# shellcheck disable=SC2086
	cmp tid,comm,dso,sym self -- $f
done
# --dso and --sym keep the samples whose leaf frame is there: their own rows as perf's
# (perf's callers' rows depend on the order of samples, see report_cmp.py)
for f in "--dsos libprog-filter-lib.so" "--dso libc.so.6" "--symbols pmf_lib_work" "--symbols main_work,pmf_step"; do
	# shellcheck disable=SC2086
	cmp comm,dso,sym self -- $f
done
cmp comm,dso,sym children --rows-of dso=libprog-filter-lib.so -- --dso libprog-filter-lib.so
cmp comm,sym children --rows-of sym=pmf_lib_work -- --symbols pmf_lib_work
ok "filters: --comm, --pid, --tid, --dso, --sym, --cpu, --time (seconds, percent), --percent-limit as perf report"

# the default view has the file of each function, and every row
"$PERFMARK" report -i "$F" --comm pmf-alpha >"$T/r.txt" 2>"$T/r.err" || die "report --comm failed" -- "$T/r.err"
grep -Eq '^ +[0-9.]+% +[0-9.]+% +[0-9]+ +libprog-filter-lib.so +pmf_lib_work$' "$T/r.txt" ||
	die "report: no pmf_lib_work row with its library" -- "$T/r.txt"
grep -q '^# hidden by --comm, --pid, --tid, --dso or --sym: [0-9]* samples' "$T/r.txt" ||
	die "report: nothing says what --comm hid" -- "$T/r.txt"
! grep -q '^pmf-beta:' "$T/r.txt" || die "report --comm pmf-alpha shows pmf-beta" -- "$T/r.txt"
rows=$("$PERFMARK" report -i "$F" --json | python3 -c '
import json, sys
print(sum(len(c["functions"]) for c in json.load(sys.stdin)["commands"]))')
shown=$("$PERFMARK" report -i "$F" | grep -cE '^ +[0-9.]+% +[0-9.]+% ')
[ "$rows" = "$shown" ] || die "report's text shows $shown rows of $rows" -- "$T/r.txt"
"$PERFMARK" report -i "$F" --max-rows 2 >"$T/m.txt" || die "--max-rows failed"
grep -Eq '^   \([0-9]+ more: --max-rows 2\)$' "$T/m.txt" || die "--max-rows cuts silently" -- "$T/m.txt"
ok "report: a Shared Object column, all $rows rows unless --max-rows, which says what it cut"

# the other commands keep the same samples: the one predicate in the reader
for f in "--comm pmf-alpha" "--pid $pid_b" "--cpu $cpu" "--time $t_start,$t_end" "--dso libprog-filter-lib.so"; do
	perf_f=${f/--dso /--dsos }
	# shellcheck disable=SC2086
	want=$(perf script -i "$F" $perf_f -F event 2>/dev/null | grep -c 'cpu-clock')
	# shellcheck disable=SC2086
	got_script=$("$PERFMARK" script -i "$F" $f | grep -c ' cpu-clock: ')
	# shellcheck disable=SC2086
	got_export=$("$PERFMARK" export -i "$F" --format collapsed $f | awk '{ s += $NF } END { print s + 0 }')
	# shellcheck disable=SC2086
	"$PERFMARK" flamegraph -i "$F" -o "$T/fg.svg" $f 2>"$T/fg.err" || die "flamegraph $f failed" -- "$T/fg.err"
	got_fg=$(grep -o 'flame graph: [0-9]* samples' "$T/fg.svg" | grep -o '[0-9]*')
	[ "$want" -gt 0 ] && [ "$got_script" = "$want" ] && [ "$got_export" = "$want" ] && [ "$got_fg" = "$want" ] ||
		die "$f: perf script $want samples, perfmark script $got_script, export $got_export, flamegraph $got_fg"
	echo "  $f: $want samples in perf script, perfmark script, export and flamegraph"
done
ok "script, export and flamegraph keep the samples perf script keeps"

# bad values: one line, exit 1
for bad in "--cpu 3-1" "--cpu x" "--time 5,4" "--time 10%/11" "--time abc" "--pid 12a" "--sort comm,bogus" \
	   "--percent-limit 120" "--max-rows -1" "-g sideways"; do
	# shellcheck disable=SC2086
	"$PERFMARK" report -i "$F" $bad >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q '^perfmark: ' "$T/err" ||
		die "report $bad: rc $rc, want 1 and one error line" -- "$T/err"
	echo "  $bad: $(cat "$T/err")"
done
"$PERFMARK" record -o - -- "$PROGS/prog-filter" pmf-pipe 0.1 1 1 1 2>/dev/null |
	"$PERFMARK" script -i - --time 10%/2 >"$T/out" 2>"$T/err"
[ "${PIPESTATUS[1]}" -eq 1 ] && grep -q "^perfmark: <stdin>: --time in percent needs" "$T/err" ||
	die "--time in percent on a pipe: not one error line" -- "$T/err"
ok "bad filter values and percentages on a pipe: one error line, exit 1"
echo "t-report-filters: all checks passed"
