#!/usr/bin/env bash
# JIT code markers: prog-markers jit copies a small add loop into an anonymous
# executable page, calls perfmark_jit_code(addr, 12, "jitted_loop") and spins
# in it ~500 ms.  The recorder must write "ADDR SIZE jitted_loop" to
# /tmp/perf-PID.map, so that stock perf report names the JIT-ed code, and
# perfmark script must name it as well.
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

# and perfmark script too
jit_named() {
	"$PERFMARK" script -i "$F" --json 2>/dev/null | grep -a '"event":"cpu-clock"\|"event":"cycles"' |
		grep -ac '"sym":"jitted_loop"'
}
n=$(jit_named)
# the marker alone names the code, as report has it: script read JIT markers
# before the sideband, so the workload's exec COMM dropped them and only
# $MAP named the code (issue 19)
rm -f "$MAP"
n2=$(jit_named)
[ "$n" -gt 0 ] && [ "$n2" -eq "$n" ] ||
	die "perfmark script names $n2 samples jitted_loop from the marker alone, $n with $MAP"
ok "perfmark script names the JIT code from its marker alone ($n2 samples)"
[ "$n" -ge 1000 ] || die "perfmark script names only $n samples jitted_loop (~2000 expected)"
ok "perfmark script: $n samples in jitted_loop"
echo "t-markers-jit: all checks passed"
