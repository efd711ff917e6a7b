#!/usr/bin/env bash
# JIT code markers: prog-markers jit copies a small add loop into an anonymous
# executable page, calls perfmark_jit_code(addr, 12, "jitted_loop") and spins
# in it ~500 ms.  The recorder must write "ADDR SIZE jitted_loop" to
# /tmp/perf-PID.map, so that stock perf report names the JIT-ed code, and
# perfmark script must name it as well.  Then a process that names 20000
# ranges and exits at once: every line written or counted (issue 18 case 9).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers

F=$T/jit.data
"$PERFMARK" record -o "$F" -- "$P" jit 500 >"$T/prog.out" 2>"$T/rec.err"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc" -- "$T/rec.err" "$T/prog.out"
read -r _ pid _ addr _ size <<<"$(grep '^pid ' "$T/prog.out")"
[ -n "$pid" ] && [ -n "$addr" ] || die "prog-markers jit printed no pid/address" -- "$T/prog.out"
grep -q '^jit done' "$T/prog.out" || die "the JIT-ed code did not run" -- "$T/prog.out"
MAP=/tmp/perf-$pid.map
trap 'rm -f "$MAP"; cleanup' EXIT

# the marker itself
"$PERFMARK" script -i "$F" --json 2>/dev/null | grep -a '"type":4,' >"$T/jitmark"
[ "$(wc -l <"$T/jitmark")" -eq 1 ] || die "want one JIT code marker (type 4) in perfmark script" -- "$T/jitmark"
ok "JIT marker: $(cut -c1-160 "$T/jitmark")"

# the perf map line
[ -f "$MAP" ] || die "the recorder wrote no $MAP for the JIT code marker"
want=$(printf '%x %x jitted_loop' "$addr" "$size")
grep -qx "$want" "$MAP" || die "$MAP lacks the line '$want'" -- "$MAP"
ok "$MAP: $want"

# stock perf report names the code
report_self "$F" >"$T/self"
pct=$(pct_of "$T/self" jitted_loop)
fcmp "$pct >= 80" || die "perf report: jitted_loop has $pct% of the samples, want >= 80%" -- "$T/self"
ok "perf report: jitted_loop $pct%"
perf report -i "$F" --stdio --no-children --sort dso,sym 2>/dev/null | grep -a 'jitted_loop' | head -n 1 >"$T/dso"
grep -q "\[JIT\] tid $pid" "$T/dso" ||
	die "perf report does not put jitted_loop in the JIT dso of pid $pid ([JIT] tid $pid)" -- "$T/dso"
ok "perf report: jitted_loop in [JIT] tid $pid"

# and perfmark script too: the samples stock perf names jitted_loop (how many
# there are depends on the machine's load, not on the naming)
nperf=$(perf script -i "$F" -F event,ip,sym 2>/dev/null | grep -a 'cpu-clock\|cycles' | grep -c 'jitted_loop')
jit_named() {
	"$PERFMARK" script -i "$F" --json 2>/dev/null | grep -a '"event":"cpu-clock"\|"event":"cycles"' |
		grep -ac '"sym":"jitted_loop"'
}
n=$(jit_named)
[ "$nperf" -ge 10 ] || die "stock perf names only $nperf samples jitted_loop: the test proves nothing"
[ "$n" -eq "$nperf" ] || die "perfmark script names $n samples jitted_loop, stock perf $nperf"
ok "perfmark script: $n samples in jitted_loop, as stock perf"
# the marker alone names the code, as report has it: script read JIT markers
# before the sideband, so the workload's exec COMM dropped them and only
# $MAP named the code (issue 19)
rm -f "$MAP"
n2=$(jit_named)
[ "$n2" -eq "$n" ] ||
	die "perfmark script names $n2 samples jitted_loop from the marker alone, $n with $MAP"
ok "perfmark script names the JIT code from its marker alone ($n2 samples)"
# Issue 18 case 9: a process (as nobody) names 20000 code ranges and exits at
# once, long before the recorder's drain.  Before, 379 of its lines were
# written, silently: the writer looked its owner up in /proc per marker and
# found it gone.  Every line is written now, or counted (record -v) as not.
command -v setpriv >/dev/null || skip "setpriv missing"
# pids wrap (pid_max 32768 here): the pid may name another user's map left
# by an earlier process.  The recorder must refuse to write into it (that is
# t-hostile-jitmap's case); then this case is tried again with a new pid.
for try in 1 2 3 4 5; do
	"$PERFMARK" record -v -o "$T/many.data" -- setpriv --reuid=nobody --regid=65534 --clear-groups \
		"$P" jitmany 20000 >"$T/many.out" 2>"$T/many.err" || die "record exited $?" -- "$T/many.err"
	read -r _ mpid _ mbase <<<"$(grep '^pid ' "$T/many.out")"
	[ -n "$mpid" ] && [ -n "$mbase" ] || die "prog-markers jitmany printed no pid" -- "$T/many.out"
	MANY=/tmp/perf-$mpid.map
	owner=$(stat -c %u "$MANY" 2>/dev/null)
	[ -n "$owner" ] && [ "$owner" != "$(id -u nobody)" ] || break
	grep -q 'perf-PID.map: 0 lines written, 0 not .*, 20000 refused' "$T/many.err" ||
		die "$MANY belongs to uid $owner, yet the recorder did not refuse it" -- "$T/many.err"
	echo "  pid $mpid's map is uid $owner's, from an earlier process: refused, as it must be; again"
done
[ -z "$owner" ] || [ "$owner" = "$(id -u nobody)" ] || die "5 pids in a row named other users' maps"
trap 'rm -f "$MAP" "$MANY"; cleanup' EXIT
# its lines (the pid's map may hold an earlier process's too): "ADDR 10 jit_I"
for ((i = 0; i < 20000; i++)); do
	printf '%x 10 jit_%d\n' $((mbase + (i % 65536) * 16)) "$i"
done >"$T/many.want"
read -r written missed refused <<<"$(sed -n 's/.*perf-PID.map: \([0-9]*\) lines written, \([0-9]*\) not .*, \([0-9]*\) refused.*/\1 \2 \3/p' "$T/many.err")"
[ -n "$written" ] || die "record -v says nothing of the perf map lines" -- "$T/many.err"
have=0
[ -f "$MANY" ] && have=$(grep -xFf "$T/many.want" "$MANY" | sort -u | wc -l)
[ "$have" -eq "$written" ] || die "$MANY has $have of its lines, record -v says $written were written" -- "$T/many.err"
[ $((written + missed)) -eq 20000 ] && [ "$refused" -eq 0 ] ||
	die "20000 JIT markers: $written lines written, $missed counted missing, $refused refused" -- "$T/many.err"
if [ "$have" -gt 0 ]; then
	[ "$(stat -c %u "$MANY")" = "$(id -u nobody)" ] || die "$MANY is owned by $(stat -c %U "$MANY"), not nobody"
	[ "$(grep -xFf "$T/many.want" "$MANY" | wc -l)" -eq "$have" ] || die "$MANY has lines twice"
fi
ok "jitmany as nobody, exited at once: $written of 20000 lines written, $missed counted missing"
echo "t-markers-jit: all checks passed"
